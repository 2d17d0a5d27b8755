"""goldpan judging, simulate and queue --beyond-pool, and stops counted by score, queue, info."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.session.labeling import LabelingSession
from engine.types import Doc, Label, Question
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import run_cli as run

DOCS = [Doc(f"d{i}", f"doc {i}", f"alpha {'beta ' * i} gamma{i % 3}") for i in range(1, 13)]
QUESTIONS = [Question(f"q{i}", f"alpha beta gamma{i % 3}") for i in range(1, 7)]


@pytest.fixture
def judged(tmp_path: Path, capsys) -> Path:
    """Six questions pooled by two BM25 retrievers; mina graded documents d1 to d8 of each."""
    path = tmp_path / "judged.db"
    ws = new_workspace(path)
    ws.write_docs(DOCS)
    ws.write_questions(QUESTIONS)
    ws.close()
    assert (
        run(capsys, "pool", path, "--retriever", "bm25-word", "--retriever", "bm25-bigram")[0] == 0
    )
    with Workspace.open(path) as ws:
        labels = []
        for q in QUESTIONS:
            for d in DOCS[:8]:
                relevant = d.text.endswith(q.text[-6:]) and int(d.id[1:]) % 2 == 0
                labels.append(Label(q.id, d.id, "mina", 1 if relevant else 0))
        ws.write_labels(labels)
    return path


def test_judging_shows_and_sets_the_order_and_the_rule(judged, capsys):
    code, out, _ = run(capsys, "judging", judged, "--json")
    assert code == 0
    assert json.loads(out) == {
        "order": "maxmean",
        "stop_after": 5,
        "stop_below": 0.5,
        "rule": "after 5 not relevant in a row or when fewer than 0.5 relevant are estimated "
        "left (once a relevant document is found)",
    }
    code, out, _ = run(capsys, "judging", judged, "--order", "fused", "--stop-after", "0")
    assert code == 0 and "order fused" in out and "when fewer than 0.5" in out
    assert json.loads(run(capsys, "judging", judged, "--json")[1])["order"] == "fused"


@pytest.mark.parametrize(
    "args",
    [["--order", "best"], ["--stop-after", "-1"], ["--stop-below", "nan"], ["--stop-below", "inf"]],
)
def test_judging_refuses_a_setting_no_one_can_mean(judged, capsys, args):
    code, _, err = run(capsys, "judging", judged, *args)
    assert code == 2 and err


def test_simulate_prints_every_policy_under_its_stable_names(judged, capsys):
    code, out, _ = run(
        capsys, "simulate", judged, "--assessor", "mina", "--stop", "2,0",
        "--beyond-pool", "10", "--seeds", "3", "--samples", "100", "--json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert set(data) == {
        "assessor", "depth", "questions", "questions_with_pooled_relevant", "retrievers",
        "pool", "unique_relevant", "real_pairs", "stop", "feedback", "random_seeds",
        "policies", "seconds",
    }  # fmt: skip
    assert set(data["real_pairs"]) == {"mrr", "ndcg@10"}
    names = [p["name"] for p in data["policies"]]
    assert names == ["random", "perfect", "maxmean", "fused", "mtf", "hash", "deeper-pool",
                     "beyond-pool"]  # fmt: skip
    policy = data["policies"][2]
    assert set(policy) == {
        "name", "order", "stop", "beyond_pool", "first_relevant", "all_found", "judged_share",
        "saved", "pooled_relevant_found", "found_at", "tau", "real_pairs_swapped",
        "relevant_left",
    }  # fmt: skip
    assert set(policy["first_relevant"]) == {"mean", "median", "gap_closed"}
    assert set(policy["all_found"]) == {"judgments", "share", "gap_closed"}
    assert set(policy["found_at"]) == {"10", "20", "50"}
    assert set(policy["tau"]["mrr"]) == {"tau", "low", "high"}
    assert data["stop"] == {"after": 2, "below": 0.0} and data["questions"] == 6
    code, out, _ = run(capsys, "simulate", judged, "--assessor", "mina", "--order", "fused",
                       "--seeds", "2", "--samples", "50")  # fmt: skip
    assert code == 0 and "gap closed" in out and "fused" in out


@pytest.mark.parametrize(
    "args, said",
    [
        (["--assessor", "nobody"], "judged nothing"),
        (["--assessor", "mina", "--stop", "x"], "--stop"),
        (["--assessor", "mina", "--stop", "5,nan"], "--stop"),
        (["--assessor", "mina", "--stop", "1,2,3"], "--stop"),
        (["--assessor", "mina", "--beyond-pool", "0"], "beyond-pool"),
        (["--assessor", "mina", "--seeds", "0"], "seeds"),
    ],
)
def test_simulate_refuses_bad_input_with_exit_2(judged, capsys, args, said):
    code, _, err = run(capsys, "simulate", judged, *args)
    assert code == 2 and said in err


def test_queue_beyond_pool_adds_proposals_and_a_stop_is_counted_everywhere(judged, capsys):
    with Workspace.open(judged) as ws:
        session = LabelingSession(ws, "mina")
        session.stop("q1", "2 not relevant in a row")
        ws.write_labels([Label("q2", "d1", "mina", 1)])
    code, out, _ = run(capsys, "queue", judged, "--beyond-pool", "2", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["beyond_pool"]["method"].startswith("rocchio (bigram tokens")
    proposed = {q["question"]: q["docs"] for q in data["beyond_pool"]["questions"]}
    assert all(len(d) <= 2 for d in proposed.values()) and "q2" in proposed
    with Workspace.open(judged, readonly=True) as ws:
        stored = {(p.question_id, p.doc_id) for p in ws.proposals()}
    assert stored == {(q, d) for q, docs in proposed.items() for d in docs}
    info = json.loads(run(capsys, "info", judged, "--json")[1])
    score = json.loads(run(capsys, "score", judged, "--json")[1])
    queue = json.loads(run(capsys, "queue", judged, "--json")[1])["queue"]
    assert info["stopped"]["questions"] == score["questions"]["stopped"] == 1
    left = info["stopped"]["candidates"]
    assert left == score["questions"]["not_judged_stopped"]
    # q1's candidates nobody judged: its pooled documents past d8, and its proposals
    with Workspace.open(judged, readonly=True) as ws:
        pooled = {d for run_ in ws.all_runs().values() for d in run_["q1"][:10]}
    assert left == len((pooled - {f"d{i}" for i in range(1, 9)}) | set(proposed.get("q1", [])))
    assert left > 0
    stopped = [i for i in queue if i["reason"] == "stopped"]
    assert stopped == [
        {"question": "q1", "status": stopped[0]["status"], "unjudged": 0, "stopped": left,
         "reason": "stopped"}
    ]  # fmt: skip
    assert all(i["question"] != "q1" for i in queue if i["reason"] == "unjudged")
