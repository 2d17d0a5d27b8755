"""Judged@k, bpref and the judged-only metrics against trec_eval, pytrec_eval and ir_measures.

Hand-computed cases carry the per-rank judgments in a comment; the random cases are
checked question by question against pytrec_eval (trec_eval's own code: ``bpref``, and
``judged_docs_only_flag`` for ``trec_eval -J``) and ir_measures (``Judged@k``), to 1e-9.
"""

import math

import numpy as np
import pytest

from engine.errors import UnknownName
from engine.metrics import evaluate, judge, metric_label, parse_metric, per_question
from tests.engine.test_metrics import _random_case  # graded qrels, unjudged ranks, ties

CONDENSABLE = ["hit@1", "hit@5", "mrr", "recall@5", "recall@10", "p@5", "ndcg@3", "ndcg@10"]
TREC_NAMES = {
    "hit@1": "success_1",
    "hit@5": "success_5",
    "mrr": "recip_rank",
    "recall@5": "recall_5",
    "recall@10": "recall_10",
    "p@5": "P_5",
    "ndcg@3": "ndcg_cut_3",
    "ndcg@10": "ndcg_cut_10",
}


def test_bpref_of_trec_eval_bpref_bug_note():
    # trec_eval's `bpref_bug` note (version 8.0): five judged documents retrieved, the
    # first not relevant and the next four relevant; 3 judged non-relevant and 2 relevant
    # documents not retrieved. R = 6, N = 4: 4 * (1 - 1/4) + 2 * 0 over 6 = 0.5
    qrels = {"q": {"n1": 0, "r1": 1, "r2": 1, "r3": 1, "r4": 1, "n2": 0, "n3": 0, "n4": 0}}
    qrels["q"].update({"r5": 1, "r6": 1})
    run = {"q": {"n1": 5.0, "r1": 4.0, "r2": 3.0, "r3": 2.0, "r4": 1.0}}
    assert evaluate(qrels, run, ["bpref"])["q"]["bpref"] == 0.5


def test_bpref_skips_unjudged_and_caps_at_r():
    # ranks: u (unjudged), n1 (0), r1 (2), u2, n2 (0), n3 (0), r2 (1); R = 2, N = 3
    # r1: 1 non-relevant above, 1 - 1/min(3, 2) = 0.5; r2: 3 above, capped at R: 1 - 2/2 = 0
    qrels = {"q": {"n1": 0, "r1": 2, "n2": 0, "n3": 0, "r2": 1}}
    order = ["u", "n1", "r1", "u2", "n2", "n3", "r2"]
    run = {"q": {d: float(len(order) - i) for i, d in enumerate(order)}}
    assert evaluate(qrels, run, ["bpref"])["q"]["bpref"] == pytest.approx(0.25, abs=1e-15)


def test_bpref_without_judged_non_relevant_is_the_share_of_relevant_retrieved():
    # N = 0: every relevant retrieved document scores 1 (nothing judged ranks above it)
    qrels = {"q": {"a": 1, "b": 3, "c": 2}}
    run = {"q": {"x": 3.0, "a": 2.0, "y": 1.0, "b": 0.5}}
    assert evaluate(qrels, run, ["bpref"])["q"]["bpref"] == pytest.approx(2 / 3)


def test_judged_at_k_counts_the_top_min_k_n():
    # ranks: a (judged 0), x (unjudged), b (judged 2); a ranking of 3 under k = 10
    qrels = {"q": {"a": 0, "b": 2, "z": 1}, "empty": {"a": 1}}
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.0}, "empty": {}}
    got = evaluate(qrels, run, ["judged@1", "judged@2", "judged@10", "judged@1000"])
    assert got["q"] == {"judged@1": 1.0, "judged@2": 0.5, "judged@10": 2 / 3, "judged@1000": 2 / 3}
    assert set(got["empty"].values()) == {0.0}  # nothing ranked: 0, as ir_measures' default


def test_judged_only_condenses_the_ranking_before_the_cutoff():
    # ranks: x, y (unjudged), a (0), b (3), z (unjudged), c (1)
    # condensed: a (0), b (3), c (1)
    qrels = {"q": {"a": 0, "b": 3, "c": 1}}
    order = ["x", "y", "a", "b", "z", "c"]
    run = {"q": {d: float(len(order) - i) for i, d in enumerate(order)}}
    got = evaluate(qrels, run, ["mrr", "judged:mrr", "hit@2", "judged:hit@2", "judged:ndcg@2"])
    q = got["q"]
    assert q["mrr"] == 0.25 and q["judged:mrr"] == 0.5
    assert q["hit@2"] == 0.0 and q["judged:hit@2"] == 1.0
    ideal = 3 + 1 / math.log2(3)
    assert q["judged:ndcg@2"] == pytest.approx((3 / math.log2(3)) / ideal)


def test_no_judged_document_in_the_top_k():
    # ranks: x, y, z unjudged, then a (1) at rank 4
    qrels = {"q": {"a": 1, "n": 0}}
    run = {"q": {"x": 4.0, "y": 3.0, "z": 2.0, "a": 1.0}}
    got = evaluate(qrels, run, ["judged@3", "hit@3", "judged:hit@3", "judged:mrr", "bpref"])
    assert got["q"] == {
        "judged@3": 0.0,
        "hit@3": 0.0,
        "judged:hit@3": 1.0,  # the first judged document is relevant
        "judged:mrr": 1.0,
        "bpref": 1.0,
    }


def test_ties_follow_doc_id_descending_in_every_judged_metric():
    # d2 and d9 tie at 1.0: trec_eval ranks d9 (unjudged) before d2 (relevant)
    qrels = {"q": {"d2": 1, "d1": 0}}
    run = {"q": {"d1": 2.0, "d2": 1.0, "d9": 1.0}}
    got = evaluate(qrels, run, ["judged@2", "mrr", "judged:mrr", "bpref"])["q"]
    assert got["judged@2"] == 0.5  # d1, d9
    assert got["mrr"] == pytest.approx(1 / 3)
    assert got["judged:mrr"] == 0.5  # d1, d2
    assert got["bpref"] == 0.0  # 1 - min(1, 1) / min(1, 1)


@pytest.mark.parametrize(
    ("name", "canonical", "label"),
    [
        ("judged@10", "judged@10", "Judged@10"),
        ("Judged@5", "judged@5", "Judged@5"),
        ("bpref", "bpref", "bpref"),
        ("judged:nDCG@10", "judged:ndcg@10", "judged:nDCG@10"),
        ("judged:mrr", "judged:mrr", "judged:MRR"),
        ("judged:success@3", "judged:hit@3", "judged:Hit@3"),
    ],
)
def test_names_and_labels(name, canonical, label):
    assert parse_metric(name).name == canonical
    assert metric_label(name) == label


@pytest.mark.parametrize(
    "bad", ["judged", "bpref@10", "judged:judged@10", "judged:bpref", "judged:", "judged:map"]
)
def test_unknown_judged_metrics_are_refused_naming_the_families(bad):
    with pytest.raises(UnknownName, match="judged:M"):
        parse_metric(bad)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bpref_and_judged_only_agree_with_pytrec_eval(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _random_case(seed)
    ours = evaluate(qrels, run, ["bpref", *(f"judged:{m}" for m in CONDENSABLE)])
    plain = pytrec_eval.RelevanceEvaluator(qrels, {"bpref"}).evaluate(run)
    condensed = pytrec_eval.RelevanceEvaluator(
        qrels, set(TREC_NAMES.values()), judged_docs_only_flag=True
    ).evaluate(run)
    compared = 0
    for qid in plain:
        assert ours[qid]["bpref"] == pytest.approx(plain[qid]["bpref"], abs=1e-9), qid
        for name, trec in TREC_NAMES.items():
            got, want = ours[qid][f"judged:{name}"], condensed[qid][trec]
            assert got == pytest.approx(want, abs=1e-9), (qid, name)
            compared += 1
    assert compared >= 150 * len(TREC_NAMES)
    assert any(plain[q]["bpref"] not in (0.0, 1.0) for q in plain)


def test_judged_mrr_at_k_is_recip_rank_of_the_condensed_ranking_cut_at_k():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _random_case(3)
    ours = evaluate(qrels, run, ["judged:mrr@3"])
    for qid, scores in run.items():
        ranked = sorted(scores.items(), key=lambda x: (x[1], x[0]), reverse=True)
        kept = [d for d, _ in ranked if d in qrels[qid]][:3]  # condensed, then cut at 3
        if not kept:
            assert ours[qid]["judged:mrr@3"] == 0.0
            continue
        cut = {d: float(len(kept) - i) for i, d in enumerate(kept)}
        ref = pytrec_eval.RelevanceEvaluator({qid: qrels[qid]}, {"recip_rank"}).evaluate({qid: cut})
        assert ours[qid]["judged:mrr@3"] == pytest.approx(ref[qid]["recip_rank"], abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_judged_at_k_agrees_with_ir_measures(seed):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _random_case(seed)
    # ir_measures breaks score ties by doc id ascending, trec_eval descending: give it
    # tie-free scores in goldpan's (trec_eval's) order
    ranked = {
        q: [d for d, _ in sorted(s.items(), key=lambda x: (x[1], x[0]), reverse=True)]
        for q, s in run.items()
    }
    tie_free = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in ranked.items()}
    measures = [ir_measures.Judged @ 1, ir_measures.Judged @ 5, ir_measures.Judged @ 10]
    nonempty = {q: r for q, r in tie_free.items() if r}  # ir_measures divides by 0 on []
    ref = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc(measures, qrels, nonempty)
    }
    ours = evaluate(qrels, run, ["judged@1", "judged@5", "judged@10"])
    for q in nonempty:
        for k in (1, 5, 10):
            assert ours[q][f"judged@{k}"] == pytest.approx(ref[(q, f"Judged@{k}")], abs=1e-12)
    # a question without a ranking: ir_measures' aggregate counts it as 0, so does goldpan
    agg = ir_measures.calc_aggregate([ir_measures.Judged @ 10], qrels, nonempty)
    mean = np.mean([ours[q]["judged@10"] for q in qrels])
    assert mean == pytest.approx(agg[ir_measures.Judged @ 10], abs=1e-12)
    assert len(nonempty) < len(qrels)


def test_judged_only_equals_plain_when_every_ranked_document_is_judged():
    qrels, run = _random_case(4)
    full = {q: {**{d: 0 for d in run[q]}, **g} for q, g in qrels.items()}
    rankings = [
        [d for d, _ in sorted(run[q].items(), key=lambda x: (x[1], x[0]), reverse=True)]
        for q in sorted(full)
    ]
    j = judge(rankings, [full[q] for q in sorted(full)])
    for m in CONDENSABLE:
        assert (per_question(j, f"judged:{m}") == per_question(j, m)).all(), m
    assert (per_question(j, "judged@10")[[bool(r) for r in rankings]] == 1.0).all()


def test_a_grade_0_moves_the_live_hole_metrics_as_goldpan_score_does(tiny_ws):
    # The review's live scores read every judgment: grading 0 one unjudged document of a
    # retriever's top 10 raises its Judged@10 (and changes bpref) at once, to the bit of
    # goldpan score on the same labels.
    from engine.retrieve.runner import refresh_runs
    from engine.scoring import metric_names, score_workspace
    from engine.session.labeling import LabelingSession
    from engine.workspace import Workspace

    ws = Workspace.open(tiny_ws)
    refresh_runs(ws, ["bm25-word"])
    for spec in ws.retrievers():  # only the one ranked: no question waits for the others
        if spec.name != "bm25-word":
            ws.remove_retriever(spec.name)
    session = LabelingSession(ws, "mina")
    try:
        live = session.live
        before = live.means()["bm25-word"]
        ranking = live.rankings["bm25-word"]
        qid, unjudged = next(
            (q, d)
            for q in live.values("bm25-word", "mrr")[0]
            for d in ranking[q][:10]
            if d not in session.gold(q).judged
        )
        session.set_grade(qid, unjudged, 0)
        after = live.means()["bm25-word"]
        scored = live.counts()["scored"]
        shown = min(10, len(ranking[qid]))
        assert after["judged@10"] == pytest.approx(before["judged@10"] + 1 / shown / scored)
        board = score_workspace(session.ws, metrics=metric_names(), retrievers=["bm25-word"])
        assert board.retrievers["bm25-word"].means == after
    finally:
        session.ws.close()


def test_the_worked_example_of_docs_judged_metrics():
    # docs/judged-metrics.md: x, y unjudged, a (0), b (3), z unjudged, c (1)
    qrels = {"q": {"a": 0, "b": 3, "c": 1}}
    order = ["x", "y", "a", "b", "z", "c"]
    run = {"q": {d: float(len(order) - i) for i, d in enumerate(order)}}
    names = ["mrr", "judged:mrr", "judged@10", "ndcg@2", "judged:ndcg@2", "bpref"]
    got = evaluate(qrels, run, names)["q"]
    assert got == pytest.approx(
        {
            "mrr": 0.25,
            "judged:mrr": 0.5,
            "judged@10": 0.5,
            "ndcg@2": 0.0,
            "judged:ndcg@2": (3 / math.log2(3)) / (3 + 1 / math.log2(3)),
            "bpref": 0.0,
        }
    )
    assert round(got["judged:ndcg@2"], 3) == 0.521
