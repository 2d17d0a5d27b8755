"""``goldpan score --no-pool`` on questions no retriever has ranked yet: said, never misses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engine.demo import build_demo
from engine.retrieve.runner import refresh_runs
from engine.scoring import metric_names, score_workspace
from engine.workspace import Workspace
from tests.conftest import ROOT, run_cli, write_jsonl

FAST = ["bm25-word", "bm25-bigram"]
METRICS = metric_names()


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


def pooled_fast(path: Path) -> None:
    """The tiny workspace with only :data:`FAST`, both pooled."""
    with Workspace.open(path) as ws:
        refresh_runs(ws, FAST)
        for spec in ws.retrievers():
            if spec.name not in FAST:
                ws.remove_retriever(spec.name)


def test_score_no_pool_says_not_ranked_yet_and_its_means_leave_them_out(tiny_ws, tmp_path):
    pooled_fast(tiny_ws)
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
        means, old = (
            {k: v for k, v in board["retrievers"][name].items() if k in METRICS}
            for board in (now, was)
        )
        assert means == old  # the means leave them out: no miss pulls them down
        assert (now["retrievers"][name]["not_ranked"], was["retrievers"][name]["not_ranked"]) == (
            2,
            0,
        )
    table = goldpan("score", tiny_ws, "--no-pool")
    assert table.returncode == 0, table.stderr
    assert "3 scored · 2 not ranked yet ·" in " ".join(table.stdout.split())
    said = " ".join(table.stderr.split())
    assert "not ranked yet" in said and "bm25-word 2, bm25-bigram 2" in said
    assert "Traceback" not in table.stderr
    pooled = goldpan("score", tiny_ws, "--json")  # without --no-pool: ranked, then scored
    assert json.loads(pooled.stdout)["questions"]["scored"] == 5


BM25 = ["bm25-word", "bm25-bigram", "bm25-word+bigram", "bm25-kiwi"]
"""The demo's retrievers."""


def test_a_command_never_trusted_leaves_every_other_row_scored_on_every_question(
    tmp_path, capsys, kiwi
):
    """The lead's case: the demo, a command added and never trusted here, `goldpan score`.

    The command never runs, so it holds no question out: the four BM25 rows keep their
    real means over every scored question, and its own row says it is not ranked.
    """
    path = tmp_path / "d.db"
    with build_demo(path, models=False) as ws:  # the four BM25 retrievers
        before = score_workspace(ws)
    assert list(before.retrievers) == BM25 and before.counts["not_ranked"] == 0
    code, _, err = run_cli(
        capsys,
        "retriever",
        "add",
        path,
        "mine",
        "--kind",
        "command",
        "--command",
        "python3 -c pass",
    )
    assert code == 0, err
    shown = goldpan("score", path, "--json")
    assert shown.returncode == 0, shown.stderr
    board = json.loads(shown.stdout)
    assert board["questions"] == before.counts  # 35 scored, none held out
    for name in BM25:
        means = {m: board["retrievers"][name][m] for m in METRICS}
        assert means == before.retrievers[name].means  # the same floats, not 0.000
        assert board["retrievers"][name]["not_ranked"] == 0
    scored = before.counts["scored"]
    mine = board["retrievers"]["mine"]
    assert [mine[m] for m in METRICS] == [None] * len(METRICS)  # no means: null, never 0
    assert mine["not_ranked"] == scored
    warned = [w["retriever"] for w in board["warnings"]]
    assert "bm25-word" in warned and "mine" not in warned  # no top 10 of it is unjudged
    said = " ".join(shown.stderr.split())
    assert "skipped retriever mine" in said and "Traceback" not in said
    table = goldpan("score", path)
    assert table.returncode == 0, table.stderr
    scores, holes = table.stdout.split("incomplete judgments")

    def rows(text: str) -> dict[str, str]:
        return {line.split()[1]: line for line in text.splitlines() if line.startswith("│")}

    for name in BM25:
        assert f"{before.retrievers[name].means['mrr']:.3f}" in rows(scores)[name]
        judged = f"{before.retrievers[name].means['judged@10']:.3f}"
        assert judged in rows(holes)[name]
    cells = [c.strip() for c in rows(scores)["mine"].split("│")[2:-1]]
    assert cells == ["-"] * 11  # 8 metrics, 3 speeds
    assert [c.strip() for c in rows(holes)["mine"].split("│")[2:-1]] == ["-"] * 4
    flat = " ".join(table.stdout.split())
    assert f"{scored} scored · 5 no answer" in flat and "not ranked yet" not in flat
    said = " ".join(table.stderr.split())
    assert f"mine {scored} of {scored}" in said
    warning = said.split("warning: ")[1].split("no means (-)")[0]
    word = before.retrievers["bm25-word"].means
    assert word is not None and "Judged@10 under 80%" in warning
    assert f"bm25-word {word['judged@10']:.0%}" in warning  # the others are warned about
    assert "mine" not in warning  # no top 10 of it to be unjudged: it has no scores


def test_a_floor_on_a_retriever_that_has_not_ranked_is_refused(tiny_ws, capsys):
    """Added and never pooled, scored with --no-pool: a floor on it compares nothing."""
    pooled_fast(tiny_ws)
    code, _, err = run_cli(capsys, "retriever", "add", tiny_ws, "bm25-new", "--kind", "bm25")
    assert code == 0, err
    code, out, err = run_cli(capsys, "score", tiny_ws, "--no-pool", "--fail-under", "mrr=0.1")
    assert code == 2, (out, err)
    flat = " ".join(err.split())
    assert (
        "bm25-new has not ranked 3 of the scored questions: a floor on it compares nothing" in flat
    )
    assert "Traceback" not in err
    code, out, err = run_cli(  # a floor on the others alone is a gate like any
        capsys, "score", tiny_ws, "--no-pool", "--fail-under", "bm25-word:mrr=0.1"
    )
    assert code == 0, (out, err)
    code, _, err = run_cli(capsys, "compare", tiny_ws, "bm25-word", "bm25-new", "--samples", "20")
    assert code == 0, err  # compare pools it first: ranked now, compared
    code, out, err = run_cli(capsys, "score", tiny_ws, "--no-pool", "--fail-under", "mrr=0.1")
    assert code in (0, 1) and "has not ranked" not in err


def test_the_gate_on_the_demo_with_a_command_never_trusted(tmp_path, capsys, kiwi):
    """The lead's case through the gate: a floor on a BM25 row reads its real mean; a floor
    on every retriever covers the command, which did not run, and is refused (exit 2)."""
    path = tmp_path / "d.db"
    with build_demo(path) as ws:
        word = score_workspace(ws).retrievers["bm25-word"].means
    assert word is not None
    add = ["retriever", "add", path, "mine", "--kind", "command", "--command", "python3 -c pass"]
    code, _, err = run_cli(capsys, *add)
    assert code == 0, err
    junit = tmp_path / "gate.xml"
    floor = f"bm25-word:mrr={word['mrr']}"  # met exactly: the mean over all 35, not 0.000
    gated = goldpan("score", path, "--fail-under", floor, "--json", "--junit-xml", junit)
    assert gated.returncode == 0, gated.stderr
    gate = json.loads(gated.stdout)["gate"]
    assert gate["passed"] and not gate["refusals"] and not gate["failures"]
    assert gate["compared"]["bm25-word"] == len(score_workspace_ids(path))
    assert "mine" not in gate["compared"] and not any("mine" in w for w in gate["warnings"])
    assert "mine::" not in junit.read_text(encoding="utf-8")  # it did not run: no case of it
    missed = goldpan("score", path, "--fail-under", f"bm25-word:mrr={word['mrr'] + 1e-6}")
    assert missed.returncode == 1, missed.stderr  # the real mean, compared: just missed
    every = goldpan("score", path, "--fail-under", "mrr=0.1")
    assert every.returncode == 2, every.stderr  # covers mine, which did not run: refused
    said = " ".join(every.stderr.split())
    assert "the gate covers mine, which did not run here" in said and "Traceback" not in said


def score_workspace_ids(path: Path) -> list[str]:
    """The questions a score of the workspace's ranked retrievers is over."""
    with Workspace.open(path, readonly=True) as ws:
        return score_workspace(ws, retrievers=BM25).question_ids
