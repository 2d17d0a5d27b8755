"""``goldpan score --no-pool`` on questions no retriever has ranked yet: said, never misses."""

from __future__ import annotations

import json
import subprocess
import sys

from engine.retrieve.runner import refresh_runs
from engine.workspace import Workspace
from tests.conftest import ROOT, write_jsonl

FAST = ["bm25-word", "bm25-bigram"]


def goldpan(*argv: object) -> subprocess.CompletedProcess[str]:
    """The goldpan command, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "tui", *map(str, argv)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


def test_score_no_pool_says_not_ranked_yet_and_its_means_leave_them_out(tiny_ws, tmp_path):
    with Workspace.open(tiny_ws) as ws:
        refresh_runs(ws, FAST)
        for spec in ws.retrievers():
            if spec.name not in FAST:
                ws.remove_retriever(spec.name)
    before = goldpan("score", tiny_ws, "--no-pool", "--json")
    assert before.returncode == 0, before.stderr
    new = [  # two questions with gold, imported by another process, never pooled
        {"id": "n1", "text": "금속 보정 방법", "gold": ["d1:2"]},
        {"id": "n2", "text": "팬텀 점검", "gold": ["d3:1"]},
    ]
    done = goldpan("import", "questions", tiny_ws, write_jsonl(tmp_path / "new.jsonl", new))
    assert done.returncode == 0, done.stderr
    after = goldpan("score", tiny_ws, "--no-pool", "--json")
    assert after.returncode == 0, after.stderr
    was, now = json.loads(before.stdout), json.loads(after.stdout)
    assert now["questions"]["not_ranked"] == 2
    assert now["questions"]["scored"] == was["questions"]["scored"] == 3
    for name in FAST:
        means = {k: v for k, v in now["retrievers"][name].items() if not k.startswith("ms_")}
        old = {k: v for k, v in was["retrievers"][name].items() if not k.startswith("ms_")}
        assert means == old  # the means leave them out: no miss pulls them down
    table = goldpan("score", tiny_ws, "--no-pool")
    assert table.returncode == 0, table.stderr
    assert "3 scored · 2 not ranked yet ·" in " ".join(table.stdout.split())
    said = " ".join(table.stderr.split())
    assert "not ranked yet" in said and "bm25-word 2, bm25-bigram 2" in said
    assert "Traceback" not in table.stderr
    pooled = goldpan("score", tiny_ws, "--json")  # without --no-pool: ranked, then scored
    assert json.loads(pooled.stdout)["questions"]["scored"] == 5
