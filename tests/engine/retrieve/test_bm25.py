import math

import numpy as np
import pytest
import rank_bm25

from engine.errors import BadInput, UnknownName
from engine.retrieve import BM25Retriever, bm25_spec, build_retriever
from engine.retrieve.bm25 import BM25Index, BM25Params, id_ranks, top_k
from engine.tokenize import bigram_tokens
from engine.types import Doc, RetrieverSpec

CORPUS = [
    ["a", "b", "c"],
    ["a", "a", "d"],
    ["b", "e", "e", "e", "f"],
    ["g"],
]


def test_lucene_hand_computed():
    # N = 4, avgdl = 12 / 4 = 3; query "a b" (distinct terms once)
    ix = BM25Index(CORPUS, BM25Params())
    idf_a = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))  # n(a) = 2
    idf_b = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))  # n(b) = 2

    def w(idf: float, tf: int, dl: int) -> float:
        return idf * tf / (tf + 1.5 * (1 - 0.75 + 0.75 * dl / 3))

    expected = [
        w(idf_a, 1, 3) + w(idf_b, 1, 3),
        w(idf_a, 2, 3),
        w(idf_b, 1, 5),
        0.0,
    ]
    assert ix.scores(["a", "b", "a"]) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("variant", "cls"),
    [("okapi", rank_bm25.BM25Okapi), ("bm25l", rank_bm25.BM25L), ("bm25plus", rank_bm25.BM25Plus)],
)
def test_rank_bm25_variants_agree(variant, cls):
    docs = [
        bigram_tokens(t)
        for t in [
            "감쇠 보정은 CT 영상으로 감쇠 계수를 구한다",
            "금속 인공물이 감쇠 보정을 망친다 금속 보정",
            "팬텀 점검 절차 TD-2024-0137",
            "공지",
            "감쇠 감쇠 감쇠 보정 보정 팬텀",
        ]
    ]
    ours = BM25Index(docs, BM25Params(variant=variant))
    ref = cls(docs)
    for q in ["감쇠 보정은", "금속 금속 팬텀", "0137", "없는 단어", "공지 공지 감쇠"]:
        toks = bigram_tokens(q)
        np.testing.assert_allclose(ours.scores(toks), ref.get_scores(toks), rtol=0, atol=1e-12)


def test_okapi_epsilon_floor_on_a_tiny_corpus_goes_negative_like_rank_bm25():
    # `a` is in every document: idf < 0, floored to epsilon * mean idf, itself negative
    docs = [["a", "b"], ["a", "c"], ["a"]]
    ours = BM25Index(docs, BM25Params(variant="okapi")).scores(["a"])
    ref = rank_bm25.BM25Okapi(docs).get_scores(["a"])
    np.testing.assert_allclose(ours, ref, atol=1e-12)
    assert (ours < 0).all()


def test_ranking_ties_break_by_doc_id_descending_and_zero_scores_are_dropped():
    scores = np.array([1.0, 2.0, 1.0, 0.0, 1.0, -1.0])
    ids = ["d1", "d2", "d3", "d4", "d10", "d6"]
    order = top_k(scores, id_ranks(ids), 10)
    # d2 first; then the 1.0 tie in descending id order: d3 > d10 > d1 (code points)
    assert [ids[i] for i in order] == ["d2", "d3", "d10", "d1"]


def test_ties_at_the_depth_cut_are_resolved_by_id_not_position():
    scores = np.array([1.0] * 6)
    ids = ["f", "a", "e", "b", "d", "c"]
    order = top_k(scores, id_ranks(ids), 3)
    assert [ids[i] for i in order] == ["f", "e", "d"]


def test_retriever_indexes_the_chosen_fields():
    docs = [Doc("x", "scanner", "감쇠"), Doc("y", "other", "scanner scanner")]
    text_only = BM25Retriever(bm25_spec("t", "word"))
    text_only.prepare(docs, {})
    assert text_only.search("scanner", 10)[0] == ["y"]
    both = BM25Retriever(bm25_spec("tt", "word", fields=("title", "text")))
    both.prepare(docs, {})
    assert set(both.search("scanner", 10)[0]) == {"x", "y"}


def test_registry_errors_name_every_choice():
    with pytest.raises(BadInput, match="known kinds: bm25"):
        build_retriever(RetrieverSpec("x", "splade", {}))
    with pytest.raises(UnknownName, match="lucene, lucene-quantized, okapi, bm25l, bm25plus"):
        bm25_spec("x", "word", variant="bm25f")
    with pytest.raises(UnknownName, match="bigram, kiwi, word, word\\+bigram"):
        bm25_spec("x", "whitespace")


def test_scores_equal_but_for_float_noise_tie_and_break_by_id():
    from engine.retrieve.bm25 import canonical_scores

    # 3.2492562503242204 and 3.24925625032422 are one ulp apart: the same score summed in
    # a different term order (found on KorQuAD)
    noisy = np.array([3.2492562503242204, 3.24925625032422, 0.0, 1e-7 * (1 + 2**-50)])
    exact = canonical_scores(noisy)
    assert exact[0] == exact[1]
    assert abs(exact[0] - noisy[0]) < 1e-11
    assert exact[2] == 0.0 and exact[3] == pytest.approx(1e-7, rel=1e-12)
    order = top_k(exact, id_ranks(["a#2", "b#81", "c", "d"]), 10)
    assert order.tolist() == [1, 0, 3]
