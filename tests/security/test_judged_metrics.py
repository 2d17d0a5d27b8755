"""Hostile cases of the hole-aware scores: Judged@k, bpref, judged: metrics, the gate's warning.

A model judge's grades in a received workspace, a workspace nobody judged, cutoffs past
the ranking and past int64, a threshold that is not a share, judged-only variants that do
not exist, and a run of documents nobody judged: each gives a clear answer (exit 2 for bad
input, never a traceback), and nothing unjudged is ever counted as judged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.types import Label, ModelJudge, ModelLabel
from engine.workspace import Workspace
from tests.conftest import run_cli as run


@pytest.fixture
def judged_ws(tiny_ws: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """tiny_ws pooled with bm25-word, every document it ranks for q1-q3 judged by mina."""
    assert run(capsys, "pool", tiny_ws, "--retriever", "bm25-word", "--quiet")[0] == 0
    ws = Workspace.open(tiny_ws)
    try:
        for spec in ws.retrievers():  # only the one ranked: no question waits for the others
            if spec.name != "bm25-word":
                ws.remove_retriever(spec.name)
        have = {(lab.question_id, lab.doc_id) for lab in ws.labels()}
        runs = ws.runs("bm25-word")
        zeros = [
            Label(q, d, "mina", 0)
            for q in ("q1", "q2", "q3")
            if q in runs
            for d in runs[q].doc_ids
            if (q, d) not in have
        ]
        ws.write_labels(zeros)
    finally:
        ws.close()
    return tiny_ws


def _score(capsys: pytest.CaptureFixture[str], ws: Path, *argv: object) -> dict:
    code, out, err = run(capsys, "score", ws, "--json", "--no-pool", "--quiet", *argv)
    assert code == 0, err
    return json.loads(out)


def _unjudged_run(path: Path) -> Path:
    # q1: d3, d4 unjudged, then d1 (2); q2: d1, d3, d4 unjudged, then d2 (1); q3: d1, d2, d3
    lines = ["q1 Q0 d3 1 3 new", "q1 Q0 d4 2 2 new", "q1 Q0 d1 3 1 new"]
    lines += ["q2 Q0 d1 1 4 new", "q2 Q0 d3 2 3 new", "q2 Q0 d4 3 2 new", "q2 Q0 d2 4 1 new"]
    lines += ["q3 Q0 d1 1 3 new", "q3 Q0 d2 2 2 new", "q3 Q0 d3 3 1 new"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_run_of_unjudged_documents_is_unknown_not_worse(judged_ws, tmp_path, capsys):
    run_file = _unjudged_run(tmp_path / "new.run")
    data = _score(capsys, judged_ws, "--run", f"{run_file}=new", "--retriever", "bm25-word")
    new = data["retrievers"]["new"]
    # judged among the ranked: q1 1 of 3, q2 1 of 4, q3 1 of 3 (mina judged only d3 for q3)
    assert new["judged@10"] == pytest.approx((1 / 3 + 1 / 4 + 1 / 3) / 3)
    assert data["retrievers"]["bm25-word"]["judged@10"] == 1.0
    (warning,) = data["warnings"]
    assert warning["warning"] == "unjudged" and warning["retriever"] == "new"
    assert warning["scores"] == "unknown" and warning["questions"] == 3
    assert warning["judged@10"] == new["judged@10"] and warning["min_judged"] == 0.8
    # the judged-only scores leave the unjudged documents out: the gold ranks first there
    assert new["judged:mrr"] == 1.0 and new["mrr"] < 1.0
    assert (
        _score(capsys, judged_ws, "--run", f"{run_file}=new", "--min-judged", "0")["warnings"] == []
    )


def test_the_warning_is_on_stderr_not_in_the_exit_code(judged_ws, tmp_path, capsys):
    run_file = _unjudged_run(tmp_path / "new.run")
    argv = ["score", judged_ws, "--no-pool", "--quiet", "--run", f"{run_file}=new"]
    code, out, err = run(capsys, *argv, "--fail-under", "hit@10=0.5")
    assert code == 0  # a warning is not a failed floor
    assert "warning: Judged@10 under 80% on the 3 compared question(s): new 31%" in err
    assert "unknown, not worse" in err and "incomplete judgments" in out


def test_a_model_judges_grades_are_never_judgments(judged_ws, tmp_path, capsys):
    # a received workspace whose model judge graded every pair: still unjudged for Judged@k
    before = _score(capsys, judged_ws, "--run", f"{_unjudged_run(tmp_path / 'r')}=new")
    ws = Workspace.open(judged_ws)
    try:
        judge = ModelJudge("model:all", "command", "true", {})
        every = [
            ModelLabel(q, d, judge.annotator, 3) for q in ("q1", "q2", "q3") for d in ws.doc_ids()
        ]
        ws.write_model_judgment(judge, every, {"q1", "q2", "q3"})
    finally:
        ws.close()
    after = _score(capsys, judged_ws, "--run", f"{tmp_path / 'r'}=new")
    assert after["retrievers"] == before["retrievers"]
    assert after["warnings"] == before["warnings"] != []


def test_a_workspace_nobody_judged_warns_of_nothing_and_gates_nothing(tmp_path, capsys):
    ws = tmp_path / "empty.db"
    assert run(capsys, "new", ws)[0] == 0
    data = _score(capsys, ws)
    assert data["questions"]["scored"] == 0 and data["warnings"] == []
    code, _, err = run(capsys, "score", ws, "--no-pool", "--fail-under", "judged@10=0.5")
    assert code == 2 and "Traceback" not in err  # a floor over no question is refused


def test_a_cutoff_past_the_ranking_divides_by_the_ranking(judged_ws, capsys):
    data = _score(capsys, judged_ws, "--metric", "judged@1000", "--metric", "judged:ndcg@1000")
    word = data["retrievers"]["bm25-word"]
    assert word["judged@1000"] == 1.0 == word["judged@10"]
    assert word["judged:ndcg@1000"] == pytest.approx(word["judged:ndcg@10"])


def test_a_cutoff_past_int64_is_not_a_crash(judged_ws, capsys):
    huge = "judged@" + "9" * 30
    data = _score(capsys, judged_ws, "--metric", huge, "--metric", "judged:mrr@" + "9" * 30)
    assert data["retrievers"]["bm25-word"][huge] == 1.0


@pytest.mark.parametrize("command", ["score", "sweep"])
def test_a_cutoff_of_thousands_of_digits_is_bad_input(judged_ws, capsys, command):
    # int() refuses 4,300 digits with a ValueError: a bug's type, exit 3, were it reached
    extra = ["--retriever", "bm25-word"] if command == "sweep" else ["--no-pool"]
    code, out, err = run(capsys, command, judged_ws, *extra, "--metric", "hit@" + "9" * 5000)
    assert code == 2 and out == "" and "Traceback" not in err
    assert "k has at most 100 digits, not 5,000" in err


@pytest.mark.parametrize("share", ["nan", "inf", "-0.1", "1.5", "lots"])
def test_a_threshold_that_is_not_a_share_is_bad_input(judged_ws, capsys, share):
    code, out, err = run(capsys, "score", judged_ws, "--no-pool", "--min-judged", share)
    assert code == 2 and out == "" and "--min-judged" in err and "Traceback" not in err


@pytest.mark.parametrize("metric", ["judged:bpref", "judged:judged@10", "bpref@10", "judged"])
def test_a_judged_metric_that_does_not_exist_is_refused_naming_the_known(judged_ws, capsys, metric):
    code, out, err = run(capsys, "score", judged_ws, "--no-pool", "--metric", metric)
    assert code == 2 and out == ""
    assert "judged@k" in err and "judged:M" in err and "Traceback" not in err


def test_against_a_snapshot_warns_on_the_compared_questions_only(judged_ws, tmp_path, capsys):
    assert run(capsys, "snapshot", "save", judged_ws, "base")[0] == 0
    run_file = _unjudged_run(tmp_path / "new.run")
    argv = ["score", judged_ws, "--no-pool", "--quiet", "--against", "base", "--json"]
    code, out, err = run(capsys, *argv, "--run", f"{run_file}=bm25-word")
    assert code == 0, err
    (warning,) = json.loads(out)["warnings"]
    assert (warning["retriever"], warning["questions"]) == ("bm25-word", 3)
    assert warning["judged@10"] == pytest.approx((1 / 3 + 1 / 4 + 1 / 3) / 3)
    code, _, err = run(capsys, *argv[:-1], "--run", f"{run_file}=bm25-word")
    assert code == 0 and "warning: Judged@10 under 80%" in err


def test_against_a_snapshot_of_other_questions_warns_of_nothing(judged_ws, tmp_path, capsys):
    # a snapshot that shares no scored question: nothing was compared, so nothing is warned
    assert run(capsys, "snapshot", "save", judged_ws, "base")[0] == 0
    path = tmp_path / "base.json"
    assert run(capsys, "snapshot", "export", judged_ws, "base", "--out", path)[0] == 0
    snap = json.loads(path.read_text(encoding="utf-8"))
    snap["golds"] = {"elsewhere": {"d1": 1}}
    for body in snap["retrievers"].values():
        body["questions"] = {}
    path.write_text(json.dumps(snap), encoding="utf-8")
    run_file = _unjudged_run(tmp_path / "new.run")
    code, out, err = run(
        capsys, "score", judged_ws, "--no-pool", "--against", path, "--json",
        "--run", f"{run_file}=bm25-word",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["warnings"] == []


def test_compare_says_how_judged_each_side_is(judged_ws, tmp_path, capsys):
    code, out, err = run(
        capsys, "compare", judged_ws, "bm25-word", "bm25-word", "--json", "--samples", "20",
        "--metric", "judged:ndcg@10",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["judged@10"] == {"bm25-word": 1.0} and data["warnings"] == []
    assert data["metric"] == "judged:ndcg@10"


def test_the_ci_summary_carries_the_warning(judged_ws, tmp_path, capsys):
    run_file = _unjudged_run(tmp_path / "new.run")
    argv = ["score", judged_ws, "--no-pool", "--quiet", "--run", f"{run_file}=new"]
    code, out, _ = run(capsys, *argv, "--markdown", "-")
    assert code == 0 and "Warning: Judged@10 under 80% on the 3 compared" in out
    assert run(capsys, "snapshot", "save", judged_ws, "base")[0] == 0
    summary = tmp_path / "summary.md"
    argv = [*argv[:-1], f"{run_file}=bm25-word", "--against", "base", "--markdown", summary]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    assert "Warning: Judged@10 under 80%" in summary.read_text(encoding="utf-8")


def test_the_gates_verdict_carries_the_warning(judged_ws, tmp_path, capsys):
    # engine.ci.gate's verdict (the one every front end presents) holds the warning too
    run_file = _unjudged_run(tmp_path / "new.run")
    argv = ["score", judged_ws, "--no-pool", "--quiet", "--run", f"{run_file}=new", "--json"]
    code, out, err = run(capsys, *argv, "--fail-under", "hit@10=0.1")
    assert code == 0, err
    (said,) = json.loads(out)["gate"]["warnings"]
    assert said.startswith("Judged@10 under 80% on the 3 compared question(s): new 31%")
    assert err.count("Judged@10 under 80%") == 1  # said once on stderr, by the verdict
