"""engine.retrieve.order: the dict form and the array forms give trec_eval's one order."""

from __future__ import annotations

import numpy as np

from engine.retrieve.order import (
    ROUNDING_MARGIN,
    canonical_scores,
    cut_floors,
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


def _scores_across_magnitudes(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Scores from subnormal to beyond float32's range, many a float32 rounding apart."""
    scale = 10.0 ** rng.choice([-320.0, -310.0, -40.0, -38.0, 0.0, 5.0, 38.0, 39.0, 300.0])
    base = rng.choice([1.0, 1.5, 2.0, 3.25], size=shape)
    near = 1 + rng.integers(-3, 4, size=shape) * 1e-9  # below float32's resolution (6e-8)
    block = scale * base * near
    block[rng.random(shape) < 0.4] = 0.0
    block[rng.random(shape) < 0.05] = -scale
    return block


def test_cut_floors_keep_every_document_of_the_top_from_subnormal_to_beyond_float32():
    rng = np.random.default_rng(11)
    names = [f"d{i:02d}" for i in range(60)]
    rank = id_ranks(names)
    useful = 0
    for _ in range(200):
        block = _scores_across_magnitudes(rng, (6, 60))
        for depth in (1, 3, 10, 25):
            floors = cut_floors(block, depth)
            assert np.all(floors > 0)
            got = top_k_flat(block, rank, depth)
            start = 0
            for row, floor, end in zip(block, floors, got[2].tolist(), strict=True):
                want = top_k(canonical_scores(row), rank, depth)
                assert np.all(row[want] >= floor), (row, depth, floor)
                assert got[0][start:end].tolist() == want.tolist(), (row, depth)
                assert got[1][start:end].tolist() == canonical_scores(row)[want].tolist()
                start = end
                positive = np.sort(row[row > 0])[::-1]
                if positive.size > depth and 1e-37 < positive[depth - 1] < 1e38:
                    # a normal float32 cut: the floor sits just under it, not at zero
                    assert floor >= positive[depth - 1] * (1 - 1e-6) * (1 - ROUNDING_MARGIN)
                    useful += 1
    assert useful > 100  # the magnitudes float32 holds were among those tried


def test_canonical_scores_of_the_smallest_and_infinite_scores_are_those_scores():
    raw = np.array([5e-324, -1e-310, 1e-297, 2.5e-296, np.inf, -np.inf, 0.0, 1.23456789012345])
    with np.errstate(all="raise"):  # no overflow, no invalid value along the way
        canon = canonical_scores(raw)
    assert canon[:3].tolist() == raw[:3].tolist()  # kept: their scale would overflow
    assert canon[3] == 2.5e-296  # rounded to 12 digits, which it already is
    assert canon[4:7].tolist() == [np.inf, -np.inf, 0.0]
    assert canon[7] == 1.23456789012
    assert not np.isnan(canon).any()
