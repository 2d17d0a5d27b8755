"""engine.retrieve.order: the dict form and the array forms give trec_eval's one order."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from engine.arrays import spans
from engine.retrieve.order import (
    POWERS_OF_TEN,
    ROUNDING_MARGIN,
    TIE_DIGITS,
    canonical_scores,
    cut_floors,
    id_ranks,
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
        for longest in (6, 60, 3000):  # short spans and long ones
            starts = rng.integers(0, 1000, 50).astype(dtype)
            sizes = rng.integers(0, longest, 50).astype(dtype)
            sizes[[0, 7, -1]] = 0  # empty spans among them, first and last too
            expected = np.concatenate(
                [np.arange(a, a + n) for a, n in zip(starts, sizes, strict=True)]
            )
            got = spans(starts, sizes)
            assert got.dtype == np.int64 and got.tolist() == expected.tolist()
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


def _formula(values: np.ndarray) -> np.ndarray:
    """canonical_scores written out score by score: the formula the array code must keep."""
    out = []
    for v in values.tolist():
        if v == 0 or not np.isfinite(v):
            out.append(v)
            continue
        exp = np.floor(np.log10(np.abs(np.float64(v))))
        if not exp > -297:
            out.append(v)
            continue
        scale = float(Fraction(10) ** int(TIE_DIGITS - 1 - exp))  # the nearest double
        out.append(float(np.round(np.float64(v) * scale) / scale))
    return np.array(out)


def test_canonical_scores_are_the_formula_score_by_score_at_every_scale():
    rng = np.random.default_rng(5)
    decades = rng.integers(-300, 308, 4000).astype(np.float64)
    values = rng.uniform(1, 10, 4000) * 10.0**decades * rng.choice([-1.0, 1.0], 4000)
    # next to each power of ten, where log10 rounds across the decade
    powers = 10.0 ** np.arange(-296, 308, dtype=np.float64)
    near = np.concatenate([powers, np.nextafter(powers, 0), np.nextafter(powers, np.inf)])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e-297, 1e-296, 1e-290])
    for block in (values, near, np.concatenate([values[:50], special])):
        with np.errstate(all="ignore"):
            got, want = canonical_scores(block), _formula(block)
        assert np.array_equal(got, want, equal_nan=True)
        # the positive finite ones alone: every score rounded at once (no positions)
        positive = np.abs(block[np.isfinite(block) & (np.abs(block) >= 1e-290)])
        assert np.array_equal(canonical_scores(positive), _formula(positive))
    table = POWERS_OF_TEN[np.arange(-297, 309) + 297]
    assert [float(x) for x in table] == [float(Fraction(10) ** k) for k in range(-297, 309)]


def test_the_rounding_scales_are_the_same_on_every_machine():
    """numpy's power of an array is 1 ulp off for some k on some processors (AVX-512:
    ``10.0 ** np.arange(-5, -4)`` is 9.999999999999999e-06) and the C library's pow for
    10^23: the table holds the correctly rounded 10^k, so a score rounds alike anywhere."""
    at = {k: float(POWERS_OF_TEN[k + 297]) for k in (-17, -5, 0, 11, 22, 23, 210)}
    assert at == {k: float(Fraction(10) ** k) for k in at}
    assert at[-5] == 1e-05 and at[23] == 1e23 and at[11] == 100_000_000_000.0
    v = 3.0000000000049e16  # scaled by 1e-05: 300000000000.49 rounds to 300000000000
    assert canonical_scores(np.array([v]))[0] == round(v * 1e-05) / 1e-05


def _ranked_rows(block: np.ndarray, rank: np.ndarray, depth: int) -> list[list[int]]:
    cols, vals, ends = top_k_flat(block, rank, depth)
    rows, start = [], 0
    for row, end in zip(block, ends.tolist(), strict=True):
        want = top_k(canonical_scores(row), rank, depth)
        assert vals[start:end].tolist() == canonical_scores(row)[want].tolist()
        rows.append(cols[start:end].tolist())
        assert rows[-1] == want.tolist(), (row, depth)
        start = end
    return rows


def test_top_k_flat_is_top_k_row_by_row_on_its_fast_path_and_the_general_one(monkeypatch):
    import engine.retrieve.order as order

    general = []
    real = order._top_k_general

    def spy(*args):
        general.append(args[2])
        return real(*args)

    monkeypatch.setattr(order, "_top_k_general", spy)
    rng = np.random.default_rng(3)
    n_docs = 300
    in_order = np.arange(n_docs, dtype=np.int64)
    shuffled = rng.permutation(n_docs).astype(np.int64)
    # pairs of scores one unit of the 12th digit apart (the closest distinct canonical
    # scores), and pairs equal once rounded but apart in the last bits
    base = canonical_scores(rng.uniform(1, 30, (20, n_docs // 2)))
    unit = 10.0 ** (np.floor(np.log10(base)) - (TIE_DIGITS - 1))
    grid = canonical_scores(np.concatenate([base, base + unit], axis=1))
    pairs = np.concatenate([base, base * (1 + 2e-16)], axis=1)
    assert (np.diff(np.sort(grid), axis=1) > 0).all() and not np.array_equal(base, pairs[:, 150:])
    ties = np.round(rng.uniform(0, 4, (20, n_docs)), 1)  # many exact ties, long at the cut
    sparse = np.where(rng.random((20, n_docs)) < 0.1, rng.uniform(0, 9, (20, n_docs)), 0.0)
    noisy = np.repeat(rng.uniform(1, 2, (20, 1)), n_docs, axis=1) * (
        1 + rng.integers(-2, 3, (20, n_docs)) * 1e-15  # equal once rounded, apart in the bits
    )
    for block in (grid, pairs, ties, sparse, noisy, rng.uniform(0, 30, (20, n_docs))):
        for depth in (1, 10, 100, 250, 299, 300, 400):
            general.clear()
            _ranked_rows(block, in_order, depth)
            _ranked_rows(block, shuffled, depth)
            assert general  # documents out of id order: the general path
    general.clear()
    for depth in (1, 10, 100, 250):  # one key per score and position
        _ranked_rows(grid, in_order, depth)
        _ranked_rows(pairs, in_order, depth)
        _ranked_rows(sparse, in_order, depth)
    assert general == []
    wide = np.zeros((3, 5000))
    wide[:, :2100] = 1.0  # 2,100 candidates: more position bits than the keys spare
    _ranked_rows(wide, np.arange(5000, dtype=np.int64), 1100)
    assert general == [1100]
