"""docs/seed-studies.md, followed as a newcomer would: every command on the page, in order.

The demo's posts stand in for a team's own (a copy of ``engine/samples/demo/docs`` under
``posts/``, with the demo's questions, labels and verdicts as the files the page imports).
Each ``$ goldpan ...`` line runs as a real process in that folder; the page's one
interactive step (``goldpan open``) is the imports that follow it. The demo's shipped e5
vectors of these posts are stored after ``import docs`` (the same model's vectors, keyed by
text, as a first pool would store them), so that the test does not spend a minute encoding
48 posts; the questions are encoded by the real model.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from engine.demo import demo_data, seed_e5_vectors
from engine.workspace import Workspace
from tests.conftest import ROOT

PAGE = ROOT / "docs" / "seed-studies.md"
INTERACTIVE = {"open"}


def page_commands() -> list[list[str]]:
    """Every ``$ goldpan ...`` line of the page's console blocks, in order."""
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```console\n(.*?)```", text, flags=re.S)
    lines = [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ")]
    return [shlex.split(line) for line in lines]


def test_every_command_is_goldpan_and_the_page_has_both_studies():
    commands = page_commands()
    assert commands and all(c[0] == "goldpan" for c in commands)
    names = [c[1] for c in commands]
    for needed in ("new", "import", "pool", "score", "compare", "sweep", "failures", "noanswer"):
        assert needed in names, needed
    kinds = [c[c.index("--kind") + 1] for c in commands if "--kind" in c]
    assert kinds == ["e5", "rrf", "idboost"]


def test_the_seed_studies_page_runs_from_goldpan_new_to_both_tables(tmp_path: Path):
    demo = demo_data()
    shutil.copytree(demo / "docs", tmp_path / "posts")
    for name in ("questions.jsonl", "labels.csv", "verdicts.csv"):
        shutil.copy(demo / name, tmp_path / name)
    outputs: dict[str, str] = {}
    for argv in page_commands():
        if argv[1] in INTERACTIVE:
            continue
        done = subprocess.run(
            [sys.executable, "-m", "tui", *argv[1:]],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
        outputs[" ".join(argv[1:])] = done.stdout
        if argv[1:3] == ["import", "docs"]:
            with Workspace.open(tmp_path / "posts.db") as ws:
                assert seed_e5_vectors(ws) == 48  # every post's text is the demo's

    # study 1: the compare names how many questions differ and gives a verdict per metric
    compare = outputs["compare posts.db bm25-bigram bm25-word --metric mrr,hit@1"]
    assert re.search(r"mrr: .*\d+ questions differ", compare)
    assert "hit@1:" in compare
    failures = outputs["failures posts.db --retriever bm25-word"]
    assert "neighbour in series" in failures and "overview" in failures

    # study 2: the seed's table, every row with its means and its latency
    done = subprocess.run(
        [sys.executable, "-m", "tui", "score", "posts.db", "--tag", "hard", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["retrievers"]
    for name in ("bm25-word", "bm25-bigram", "vector", "hybrid", "hybrid+id"):
        assert 0 < rows[name]["mrr"] <= 1, name
        assert rows[name]["ms_p50"] is not None and rows[name]["ms_p50"] > 0, name
    noanswer = outputs["noanswer posts.db --retriever hybrid"]
    assert "best threshold" in noanswer  # 5 no-answer and 35 answerable: established
