"""engine.retrieve.order: the dict form and the array forms give trec_eval's one order."""

from __future__ import annotations

import numpy as np

from engine.retrieve.order import (
    canonical_scores,
    id_ranks,
    spans,
    top_k,
    top_k_flat,
    trec_order,
)


def test_dict_and_array_forms_agree_on_ties_and_cut() -> None:
    ids = ["d3", "d1", "d10", "d2", "d0"]  # not in id order
    raw = np.array([0.5, 2.0, 0.5, 0.0, 0.5 + 1e-15])  # d0's sum differs in the last bits
    scores = canonical_scores(raw)
    by_dict = trec_order({d: float(s) for d, s in zip(ids, scores, strict=True) if s > 0}, 3)
    # score descending, ties by doc id descending by code point: d3 > d10 > d0
    assert by_dict[0] == ["d1", "d3", "d10"]
    rank = id_ranks(ids)
    assert [ids[i] for i in top_k(scores, rank, 3)] == by_dict[0]
    cols, vals, ends = top_k_flat(raw[None, :], rank, 3)
    assert [ids[i] for i in cols] == by_dict[0] and ends.tolist() == [3]
    assert vals.tolist() == by_dict[1]


def test_spans_are_the_slices_joined_whatever_their_sizes_and_dtype():
    rng = np.random.default_rng(7)
    for dtype in (np.int32, np.int64):
        starts = rng.integers(0, 1000, 50).astype(dtype)
        sizes = rng.integers(0, 6, 50).astype(dtype)  # empty spans among them
        expected = np.concatenate([np.arange(a, a + n) for a, n in zip(starts, sizes, strict=True)])
        assert spans(starts, sizes).tolist() == expected.tolist()
    assert spans(np.zeros(0, np.int64), np.zeros(0, np.int64)).tolist() == []
