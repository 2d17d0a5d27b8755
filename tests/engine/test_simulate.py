"""engine.simulate: the replay's figures on hand-made setups, and tau against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from engine.errors import BadInput
from engine.judging.order import PoolView
from engine.judging.stopping import StopRule
from engine.simulate import Question, Setup, kendall_tau_b, replay, simulate


def setup_of(rows: dict[str, tuple[dict[str, list[str]], dict[str, int]]], depth: int = 4) -> Setup:
    """Questions from {qid: ({retriever: ranking}, truth)}."""
    questions = []
    rankings: dict[str, dict[str, list[str]]] = {}
    for qid, (runs, truth) in rows.items():
        for name, ranking in runs.items():
            rankings.setdefault(name, {})[qid] = ranking
        relevant = sum(1 for g in truth.values() if g >= 1)
        questions.append(Question(PoolView(qid, runs, depth), truth, relevant))
    return Setup("ann", depth, questions, rankings, sorted(rankings))


# q1: a finds the gold d1 first, b never; q2: b first; d9 relevant but never pooled
ROWS = {
    "q1": ({"a": ["d1", "d2", "d3", "d4"], "b": ["d5", "d6", "d7", "d1"]}, {"d1": 2, "d9": 1}),
    "q2": ({"a": ["d6", "d7", "d8", "d2"], "b": ["d2", "d3", "d6", "d7"]}, {"d2": 1, "d3": 1}),
}


def test_figures_of_the_perfect_order_and_the_gap_closed_formula():
    report = simulate(setup_of(ROWS), ("fused",), seeds=20, samples=200)
    by = {p.name: p for p in report.policies}
    perfect, random, fused = by["perfect"], by["random"], by["fused"]
    assert perfect.first == [1, 1]  # every pooled relevant document first
    assert perfect.last == [1, 2]
    # fused, q1: d1 (a 1, b 4) first. q2: d6 1/61 + 1/63 > d2 1/64 + 1/61 > d7 1/62 + 1/64
    # > d3 1/62 > d8 1/63, so the relevant d2 and d3 come 2nd and 4th
    assert (fused.first, fused.last) == ([1, 2], [1, 4])
    expected = (random.first_mean - fused.first_mean) / (random.first_mean - perfect.first_mean)
    assert fused.gap_first == pytest.approx(expected)
    # found at 10: every pooled relevant (3 of the 4 relevant: d9 is never pooled)
    assert fused.found_at[10] == pytest.approx(3 / 4)
    assert len(random.first) == 20 * 2  # each seed's questions


def test_a_stop_saves_judgments_and_counts_what_it_left():
    rows = {
        "q1": ({"a": [f"d{i}" for i in range(1, 9)]}, {"d1": 1}),  # the gold first
    }
    report = simulate(setup_of(rows, depth=8), ("fused",), StopRule(after=2, below=0), samples=50)
    fused = next(p for p in report.policies if p.name == "fused")
    assert (fused.judged, fused.pooled) == (3, 8)  # d1, then two not relevant: stop
    data = fused.to_json()
    assert data["saved"] == pytest.approx(5 / 8) and data["pooled_relevant_found"] == 1.0


def test_feedback_beyond_the_pool_starts_at_the_first_relevant_document():
    rows = {"q1": ({"a": ["d3", "d1", "d2", "d4"]}, {"d1": 1, "d7": 1, "d8": 1})}
    asked = []

    def propose(qid, grades, leave, k):
        asked.append(dict(grades))
        return [d for d in ("d7", "d8", "d5", "d6") if d not in leave][:k]

    traces = replay(setup_of(rows), "fused", None, beyond=6, propose=propose, batch=2)
    # fused of one ranking: its order; d1 at 2 is the first relevant: feedback from there
    assert traces[0].judged == ["d3", "d1", "d7", "d8", "d5", "d6"]
    assert asked[0] == {"d3": 0, "d1": 1}
    assert traces[0].rounds == [(2, 2), (2, 0)]


def test_tau_b_equals_scipys_on_rows_with_ties():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=(50, 5)).astype(float)
    y = rng.integers(0, 4, size=(50, 5)).astype(float)
    ours = kendall_tau_b(x, y)
    for i in range(50):
        theirs = kendalltau(x[i], y[i]).statistic
        if np.isnan(theirs):
            assert np.isnan(ours[i])
        else:
            assert ours[i] == pytest.approx(theirs, abs=1e-12)


def test_the_real_pairs_are_the_verdicts_and_too_few_differing_is_none():
    # 30 questions, gold g: a ranks it 1st everywhere, b 2nd everywhere, c as b except
    # 1st on 4 questions. a-b and a-c differ on 30 and 26 questions, b-c on only 4:
    # no test on 4 reaches p < 0.05 (engine.verdict), so that pair is never "real"
    rows = {}
    for i in range(30):
        a, b = ["g", "x", "y"], ["x", "g", "y"]
        c = a if i < 4 else b
        rows[f"q{i:02}"] = ({"a": a, "b": b, "c": c}, {"g": 1})
    report = simulate(setup_of(rows, depth=3), ("fused",), seeds=1, samples=200)
    assert report.real_pairs["mrr"] == [("a", "b"), ("a", "c")]
    assert report.to_json()["real_pairs"]["ndcg@10"] == [["a", "b"], ["a", "c"]]


def test_too_few_resamples_for_a_verdict_are_refused():
    with pytest.raises(BadInput, match="resamples cannot give a p-value below 0.05"):
        simulate(setup_of(ROWS), ("fused",), seeds=1, samples=10)


def test_an_unknown_order_or_no_seed_is_refused():
    with pytest.raises(BadInput, match="unknown judging order"):
        simulate(setup_of(ROWS), ("best",), samples=10)
    with pytest.raises(BadInput, match="seeds"):
        simulate(setup_of(ROWS), ("fused",), seeds=0, samples=10)
