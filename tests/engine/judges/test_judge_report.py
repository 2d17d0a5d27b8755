"""A model judge's report card: kappa against scikit-learn, tau against hand values and scipy,
the holes filled by the judge, circular judges, and a whole card from a real command judge.

The command judge is the deterministic fake of test_model_judge.py (a real program run
through the protocol, its grades read from a map file the test writes).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.judges.calibration import Item, held_out_grades
from engine.judges.report import (
    agreement,
    circular_retrievers,
    kappa_of_counts,
    kendall_tau,
    rank_under_judge,
    report_card,
)
from engine.team.agreement import cohen_kappa
from engine.types import Label, ModelJudge, ModelLabel, RetrieverSpec
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.engine.judges.test_model_judge import FAKE


def _counts(judge: list[int], people: list[int]) -> list[np.ndarray]:
    cells = [0, 0, 0, 0]
    for j, p in zip(judge, people, strict=True):
        cells[(0 if p else 1) if j else (2 if p else 3)] += 1
    return [np.array([float(c)]) for c in cells]


@pytest.mark.parametrize("seed", range(5))
def test_kappa_of_counts_equals_cohen_kappa_and_scikit_learn(seed):
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = random.Random(seed)
    n = rng.randint(5, 300)
    judge = [int(rng.random() < 0.3) for _ in range(n)]
    people = [j if rng.random() < 0.7 else 1 - j for j in judge]
    got = float(kappa_of_counts(*_counts(judge, people))[0])
    assert got == pytest.approx(cohen_kappa(judge, people), abs=1e-12)
    if len(set(judge)) > 1 or len(set(people)) > 1:
        assert got == pytest.approx(sklearn.cohen_kappa_score(judge, people), abs=1e-12)


def test_kappa_of_counts_degenerate_tables():
    # every item in one category for both: 1, as cohen_kappa; nothing at all: undefined
    assert float(kappa_of_counts(*_counts([0, 0, 0], [0, 0, 0]))[0]) == 1.0
    assert np.isnan(kappa_of_counts(*_counts([], []))[0])


def test_kappa_interval_is_a_bootstrap_over_questions():
    # Redo the bootstrap by hand: the same seeded draws of questions (one chunk of
    # bootstrap_means), each resample's items pooled and scored by scikit-learn.
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = random.Random(7)
    pairs = []
    for q in range(30):
        for _ in range(rng.randint(2, 9)):
            j = int(rng.random() < 0.4)
            pairs.append((f"q{q:02d}", j * rng.randint(1, 3), (j if rng.random() < 0.8 else 1 - j)))
    samples = 200
    fig = agreement(pairs, held_out=False, samples=samples, seed=3)
    questions = sorted({q for q, _, _ in pairs})
    draws = np.random.default_rng(3).integers(0, len(questions), size=(samples, len(questions)))
    kappas = []
    for row in draws:
        items = [p for i in row for p in pairs if p[0] == questions[i]]
        judge = [int(j >= 1) for _, j, _ in items]
        people = [int(p >= 1) for _, _, p in items]
        kappas.append(sklearn.cohen_kappa_score(judge, people))
    lo, hi = np.percentile(kappas, [2.5, 97.5])
    assert fig.ci95 == pytest.approx((lo, hi), abs=1e-9)
    assert fig.ci95[0] < fig.kappa < fig.ci95[1]
    judge = [int(j >= 1) for _, j, _ in pairs]
    people = [int(p >= 1) for _, _, p in pairs]
    assert fig.kappa == pytest.approx(sklearn.cohen_kappa_score(judge, people), abs=1e-12)
    assert fig.people_relevant == pytest.approx(sum(people) / len(people))
    assert fig.judge_relevant == pytest.approx(sum(judge) / len(judge))
    assert (fig.items, fig.questions) == (len(pairs), 30)


def test_kendall_tau_b_by_hand_and_against_scipy():
    # 4 retrievers, one adjacent swap: (6 - 2 * 1) / 6
    assert kendall_tau([4, 3, 2, 1], [4, 3, 1, 2]) == pytest.approx(2 / 3)
    # a tie in one scoring: tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)) = 2 / sqrt(3 * 2)
    assert kendall_tau([1, 2, 3], [1, 1, 2]) == pytest.approx(2 / 6**0.5)
    assert kendall_tau([1, 2], [3, 3]) is None  # every retriever scored alike: undefined
    assert kendall_tau([1.0], [2.0]) is None


def _toy():
    """Two questions; A ranks people's gold first, B ranks documents nobody judged."""
    people = [{"g1": 2, "n1": 0}, {"g2": 1, "n2": 0}]
    rankings = {
        "A": [["g1", "n1", "h1"], ["n2", "g2", "h2"]],
        "B": [["h1", "g1", "n1"], ["h2", "n2", "g2"]],
        "C": [["n1", "h1", "g1"], ["n2", "h2", "g2"]],
    }
    return people, rankings


def test_a_judge_that_grades_as_people_do_keeps_the_ranking():
    people, rankings = _toy()
    (r,) = rank_under_judge(rankings, people, people, metrics=["mrr"], repeats=4)
    assert [k.share for k in r.kept] == [0.0, 0.1, 0.25, 0.5, 1.0]
    assert all(t == 1.0 for k in r.kept for t in k.taus)
    assert [len(k.taus) for k in r.kept] == [1, 4, 4, 4, 1]
    assert r.people == r.judge_alone


def test_a_judge_that_fills_holes_moves_the_retriever_that_found_them():
    # the judge calls the holes h1, h2 relevant (grade 3): filling them lifts B above A
    people, rankings = _toy()
    graded = [{"g1": 2, "n1": 0, "h1": 3}, {"g2": 1, "n2": 0, "h2": 3}]
    (r,) = rank_under_judge(rankings, people, graded, metrics=["mrr"], keep=[1.0, 0.0])
    # reciprocal ranks under people: A (1 + 1/2) / 2, B (1/2 + 1/3) / 2, C 1/3
    assert r.people == pytest.approx({"A": 0.75, "B": 5 / 12, "C": 1 / 3})
    # the holes filled: B finds a relevant document first everywhere, C at rank 2
    assert r.judge_alone == pytest.approx({"A": 0.75, "B": 1.0, "C": 0.5})
    full = next(k for k in r.kept if k.share == 1.0)
    assert full.taus == (pytest.approx(1 / 3),)  # one swap of three: (2 - 1) / 3


def test_kept_judgments_are_drawn_per_seed_and_repeat():
    people, rankings = _toy()
    graded = [{"g1": 0, "n1": 3, "h1": 3}, {"g2": 0, "n2": 3, "h2": 3}]
    once = rank_under_judge(rankings, people, graded, metrics=["ndcg@10"], seed=1)
    again = rank_under_judge(rankings, people, graded, metrics=["ndcg@10"], seed=1)
    other = rank_under_judge(rankings, people, graded, metrics=["ndcg@10"], seed=2)
    assert once == again
    half = [k for r in (once, other) for k in r[0].kept if k.share == 0.5]
    assert len(set(half[0].taus)) > 1 or half[0].taus != half[1].taus


def test_circular_retrievers_through_bases_and_model_names(tmp_path):
    model = tmp_path / "models" / "all-MiniLM-L6-v2"
    model.mkdir(parents=True)
    specs = [
        RetrieverSpec("dense-a", "dense", {"model": str(model)}),
        RetrieverSpec("hybrid", "rrf", {"of": ["bm25-word", "dense-a"]}),
        RetrieverSpec("bm25-word", "bm25", {}),
        RetrieverSpec("dense-hub", "dense", {"model": "sentence-transformers/all-MiniLM-L6-v2"}),
        RetrieverSpec("pg", "postgres", {"embed_model": "intfloat/e5-small"}),
        RetrieverSpec("mine", "command", {"command": "python judge.py"}),
    ]
    dense = ModelJudge("model:minilm", "dense", str(model), {})
    assert circular_retrievers(dense, specs) == {
        "dense-a": "dense-a",
        "hybrid": "dense-a",
        "dense-hub": "dense-hub",  # the same model by name
    }
    e5 = ModelJudge("model:e5", "cross-encoder", "/elsewhere/e5-small", {})
    assert circular_retrievers(e5, specs) == {"pg": "pg"}
    cmd = ModelJudge("model:command", "command", "python judge.py", {})
    assert circular_retrievers(cmd, specs) == {"mine": "mine"}
    other = ModelJudge("model:x", "dense", "/m/bge-small", {})
    assert circular_retrievers(other, specs) == {}


# -- a whole card -------------------------------------------------------------------------


def judged_workspace(path: Path, tmp_path: Path) -> Path:
    """The workspace at ``path`` (tiny_ws) pooled by bm25-word and bm25-bigram, more labels,
    judged by the fake (through the engine, as ``goldpan pool`` and ``judge`` do)."""
    from engine.judges.run import make_judge, run_judge
    from engine.retrieve.runner import refresh_runs
    from tests.conftest import TINY_DOCS, TINY_QUESTIONS

    ws = Workspace.open(path)
    ws.write_labels([Label("q2", "d4", "mina", 0), Label("q3", "d1", "jun", 0)])
    refresh_runs(ws, ["bm25-word", "bm25-bigram"])
    ws.close()
    fake = tmp_path / "fake_judge.py"
    fake.write_text(FAKE, encoding="utf-8")
    grades = tmp_path / "grades.json"
    # the judge agrees with people but on q2's d4, and calls every other document 1
    grades.write_text(
        json.dumps(
            {f"{q.id} {d.id}": 1 for q in TINY_QUESTIONS for d in TINY_DOCS}
            | {"q1 d1": 2, "q1 d2": 0, "q2 d2": 1, "q2 d4": 2, "q3 d3": 3, "q3 d1": 0}
        ),
        encoding="utf-8",
    )
    cmd = f"{sys.executable} {fake} {grades}"
    with Workspace.open(path) as ws:
        run_judge(ws, make_judge("command", cmd, "model:fake"))
    return path


@pytest.fixture
def judged(tiny_ws, tmp_path):
    return judged_workspace(tiny_ws, tmp_path)


def test_a_command_judges_card(judged):
    ws = Workspace.open(judged, readonly=True)
    try:
        card = report_card(ws, repeats=3, samples=200)
        stored = {(m.question_id, m.doc_id): m.grade for m in ws.model_labels("model:fake")}
        people = [lab for lab in ws.labels() if (lab.question_id, lab.doc_id) in stored]
    finally:
        ws.close()
    k = card.kappa
    assert not k.held_out and k.items == len(people) == 6
    judge = [int(stored[(lab.question_id, lab.doc_id)] >= 1) for lab in people]
    theirs = [int(lab.grade >= 1) for lab in people]
    assert k.kappa == pytest.approx(cohen_kappa(judge, theirs), abs=1e-12)
    assert k.people_relevant == pytest.approx(3 / 6) and k.judge_relevant == pytest.approx(4 / 6)
    # a deterministic command asked twice answers the same
    c = card.consistency
    assert c.asked and c.pairs == len(stored) and c.same == 1.0 and c.kappa == 1.0
    assert "reverse order" in c.how
    assert [r.metric for r in card.rankings] == ["ndcg@10", "mrr"]
    assert set(card.rankings[0].people) == {"bm25-word", "bm25-bigram"}
    assert card.scored == 3 and card.circular == ()
    assert any("150-200" in w for w in card.warnings)  # 6 grades are far too few
    data = card.to_json()
    assert set(data) == {
        "annotator", "kind", "model", "kappa", "self_consistency", "scored_questions",
        "ranking", "circular", "warnings",
    }  # fmt: skip
    assert set(data["ranking"][0]["kept"][1]) == {
        "kept", "repeats", "tau_mean", "tau_min", "tau_max", "taus"
    }  # fmt: skip
    json.dumps(data, allow_nan=False)  # plain JSON: no NaN anywhere


def test_a_score_judges_kappa_is_of_held_out_grades(tmp_path):
    # a dense judge's grades were calibrated on these very people's grades: the card
    # grades each question by thresholds fitted on the other folds
    from engine.types import Question
    from tests.conftest import TINY_DOCS

    path = tmp_path / "ws.db"
    ws = new_workspace(path)
    rng = random.Random(5)
    docs = [*TINY_DOCS]
    ws.write_docs(docs)
    questions = [Question(f"q{i:02d}", f"question {i}", ()) for i in range(20)]
    ws.write_questions(questions)
    labels, model = [], []
    for q in questions:
        for d in docs:
            score = rng.random()
            grade = int(score + rng.gauss(0, 0.25) > 0.6) * rng.randint(1, 3)
            labels.append(Label(q.id, d.id, "mina", grade))
            model.append(ModelLabel(q.id, d.id, "model:dense", int(score > 0.6), score))
    ws.write_labels(labels)
    judge = ModelJudge("model:dense", "dense", "/m/x", {"calibration": {"fitted": True}})
    ws.write_model_judgment(judge, model, {q.id for q in questions})
    try:
        card = report_card(ws, samples=100, repeats=1, consistency_pairs=0)
    finally:
        ws.close()
    items = [
        Item(lab.question_id, m.score, lab.grade)
        for lab, m in zip(
            sorted(labels, key=lambda x: (x.question_id, x.doc_id)), model, strict=True
        )
    ]
    held = held_out_grades(items)
    assert card.kappa.held_out
    want = cohen_kappa([int(g >= 1) for g in held], [int(i.grade >= 1) for i in items])
    assert card.kappa.kappa == pytest.approx(want, abs=1e-12)
    assert card.consistency.asked is False and "same score" in card.consistency.reason
