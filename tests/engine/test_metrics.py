import math
import random

import numpy as np
import pytest

from engine.errors import UnknownName
from engine.metrics import evaluate, first_relevant_rank, judge, mean, parse_metric

METRICS = ["hit@1", "hit@3", "mrr", "mrr@2", "recall@2", "recall@5", "p@5", "ndcg@3", "ndcg@10"]


def test_hand_computed_values():
    # ranking d1 d2 d3 d4; grades by rank: 0, 2, 0, 1; gold also has d9 (grade 3, not retrieved)
    qrels = {"q": {"d2": 2, "d4": 1, "d9": 3, "d1": 0}}
    run = {"q": {"d1": 4.0, "d2": 3.0, "d3": 2.0, "d4": 1.0}}
    got = evaluate(qrels, run, METRICS)["q"]
    assert got["hit@1"] == 0.0
    assert got["hit@3"] == 1.0
    assert got["mrr"] == 0.5
    assert got["mrr@2"] == 0.5
    assert got["recall@2"] == pytest.approx(1 / 3)  # 1 of 3 relevant (d2, d4, d9)
    assert got["recall@5"] == pytest.approx(2 / 3)
    assert got["p@5"] == pytest.approx(2 / 5)  # divides by k even with 4 ranked
    dcg3 = 2 / math.log2(3)
    idcg3 = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert got["ndcg@3"] == pytest.approx(dcg3 / idcg3)
    dcg10 = 2 / math.log2(3) + 1 / math.log2(5)
    assert got["ndcg@10"] == pytest.approx(dcg10 / idcg3)


def test_tie_fixture_follows_trec_eval_doc_id_descending():
    # a fixture run through trec_eval 9.0.8 once; its values written down here
    qrels = {
        "q1": {"d1": 1, "d2": 0, "d3": 2},
        "q4": {"d8": 3, "d9": 1, "d10": 2},
    }
    run = {
        "q1": {"d2": 5.0, "d1": 4.0, "d4": 4.0, "d3": 1.0},
        "q4": {"d9": 0.5, "dA": 0.5, "d10": 0.5},
    }
    got = evaluate(qrels, run, ["mrr", "ndcg@3"])
    assert got["q1"]["mrr"] == pytest.approx(1 / 3)  # order d2, d4, d1, d3
    assert got["q4"]["mrr"] == 0.5  # order dA, d9, d10
    assert round(got["q1"]["ndcg@3"], 4) == 0.1900
    assert round(got["q4"]["ndcg@3"], 4) == 0.3425


def test_missing_ranking_scores_zero_and_counts():
    got = evaluate({"a": {"d": 1}, "b": {"d": 1}}, {"a": {"d": 1.0}}, ["hit@1", "mrr"])
    assert got["b"] == {"hit@1": 0.0, "mrr": 0.0}
    assert mean(np.array([got[q]["mrr"] for q in sorted(got)])) == 0.5


def test_first_relevant_rank():
    j = judge([["x", "y", "z"], ["x"], []], [{"z": 1}, {"q": 2}, {"x": 1}])
    assert first_relevant_rank(j).tolist() == [3, 0, 0]


@pytest.mark.parametrize("bad", ["hit", "recall", "map", "ndcg@0", "hit@-1", "p@x"])
def test_unknown_metrics_are_named(bad):
    with pytest.raises(UnknownName, match="known metrics"):
        parse_metric(bad)


def _random_case(seed: int):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(60)]
    qrels, run = {}, {}
    for q in range(200):
        qid = f"q{q}"
        judged = rng.sample(docs, rng.randint(1, 12))
        qrels[qid] = {d: rng.choice([0, 0, 1, 2, 3]) for d in judged}
        ranked = rng.sample(docs, rng.randint(0, 40))
        # scores on a coarse grid so that ties are frequent
        run[qid] = {d: float(rng.randint(1, 8)) / 4 for d in ranked}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_pytrec_eval_per_question(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _random_case(seed)
    measures = {
        "success_1",
        "success_5",
        "recip_rank",
        "recall_5",
        "recall_10",
        "P_5",
        "ndcg_cut_10",
        "ndcg_cut_5",
    }
    ref = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    ours = evaluate(
        qrels, run, ["hit@1", "hit@5", "mrr", "recall@5", "recall@10", "p@5", "ndcg@10", "ndcg@5"]
    )
    names = {
        "success_1": "hit@1",
        "success_5": "hit@5",
        "recip_rank": "mrr",
        "recall_5": "recall@5",
        "recall_10": "recall@10",
        "P_5": "p@5",
        "ndcg_cut_10": "ndcg@10",
        "ndcg_cut_5": "ndcg@5",
    }
    compared = 0
    for qid, values in ref.items():
        for measure, name in names.items():
            assert ours[qid][name] == pytest.approx(values[measure], abs=1e-9), (qid, measure)
            compared += 1
    # questions pytrec_eval leaves out (empty ranking) score 0 here, as with trec_eval -c
    for qid in set(qrels) - set(ref):
        assert not run[qid]
        assert all(v == 0.0 for v in ours[qid].values())
    assert compared >= 150 * len(names)
