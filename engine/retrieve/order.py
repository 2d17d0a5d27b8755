"""Ranking order, trec_eval's everywhere: score descending, then doc id descending.

Every retriever kind ranks this way, so an exported run that trec_eval re-sorts keeps
goldpan's order and its ties: documents with equal scores go in doc id descending order
by code point, never by position or by the last bit of a float sum.

* :func:`trec_order`: a doc -> score map's best documents (the kinds that score a few
  documents at a time: command, http, OpenSearch, PostgreSQL, fusion, an imported run).
* :func:`canonical_scores`: scores rounded to :data:`TIE_DIGITS` significant digits, so
  that scores equal in exact arithmetic tie exactly.
* :func:`id_ranks`, :func:`top_k`: one question's best documents over a whole corpus's
  score array (BM25, dense); :func:`top_k_flat` does it for a block
  of questions at once (BM25's batches), rounding only the candidates near each cut.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def trec_order(scores: Mapping[str, float], depth: int) -> tuple[list[str], list[float]]:
    """The ``depth`` best documents of a doc -> score map, in trec_eval order."""
    by_id = sorted(scores.items(), key=lambda p: p[0], reverse=True)
    by_id.sort(key=lambda p: -p[1])  # stable: equal scores keep doc id descending
    best = by_id[:depth]
    return [d for d, _ in best], [float(s) for _, s in best]


def id_ranks(doc_ids: Sequence[str]) -> IntArray:
    """Position of each id in code-point order (the tie-break key of trec_eval)."""
    ids = list(doc_ids)
    if ids == sorted(ids):  # the workspace hands documents over in id order
        return np.arange(len(ids), dtype=np.int64)
    order = sorted(range(len(doc_ids)), key=doc_ids.__getitem__)
    ranks = np.empty(len(doc_ids), dtype=np.int64)
    ranks[order] = np.arange(len(doc_ids), dtype=np.int64)
    return ranks


TIE_DIGITS = 12
"""Significant digits kept in ranked scores (see :func:`canonical_scores`)."""


POWERS_FROM = -297
POWERS_OF_TEN = np.array([float(f"1e{k}") for k in range(POWERS_FROM, 309)])
"""The double nearest to ``10 ** k`` for every scale :func:`canonical_scores` multiplies
by (k from -297 to 308): looked up, not raised to (a power per score took a fifth of a
pool's rounding). Parsed from decimal, which rounds correctly, so that the scores round
the same on every machine: numpy's power of an array is 1 ulp off for 30 of these k on
a processor with AVX-512 (``1e-05`` among them) and exact on others, and the C
library's ``pow`` misses ``1e23``."""

ROUNDED_FROM = 1e-290
"""Scores at least this large (and finite) are all rounded by :func:`canonical_scores`
(its limit is 1e-296; the margin keeps the test away from it)."""


def canonical_scores(scores: FloatArray) -> FloatArray:
    """Scores rounded to 12 significant digits, so that equal scores tie exactly.

    Two documents with the same length and the same (tf, df) statistics have the same
    score in exact arithmetic, but a float sum taken in a different term order can differ
    in the last bit; trec_eval would then order them by that noise instead of by doc id.
    Rounding far below any meaningful difference (1e-12 relative) makes such ties exact,
    both in goldpan's ranking and in an exported run that trec_eval re-sorts. Works on an
    array of any shape, element by element. Scores under 1e-296 (whose scale would
    overflow; a subnormal one has fewer digits than are kept) and infinite ones stay
    as they are.
    """
    out = scores.copy()
    flat = out.reshape(-1)  # a view: written in place below
    if not flat.size:
        return out
    magnitude = np.abs(flat)
    if _all_rounded(magnitude):  # a ranking's: no positions to pick out and put back
        flat[:] = _rounded(flat, magnitude)
        return out
    nz = np.nonzero(flat)[0]
    vals = flat[nz]
    with np.errstate(divide="ignore"):
        exp = np.floor(np.log10(np.abs(vals)))
    ok = (exp > -297) & np.isfinite(exp)
    flat[nz[ok]] = _round(vals[ok], exp[ok])
    return out


def _all_rounded(magnitude: FloatArray) -> bool:
    """Whether :func:`canonical_scores` rounds every one of these (absolute) scores."""
    return float(magnitude.min()) >= ROUNDED_FROM and float(magnitude.max()) < np.inf


def _rounded(vals: FloatArray, magnitude: FloatArray) -> FloatArray:
    """``vals`` rounded, every one of them (:func:`_all_rounded` of ``magnitude``)."""
    return _round(vals, np.floor(np.log10(magnitude)))


def _round(vals: FloatArray, exp: FloatArray) -> FloatArray:
    """``vals`` rounded to :data:`TIE_DIGITS` digits, ``exp`` their decimal exponents."""
    scale = POWERS_OF_TEN[(TIE_DIGITS - 1 - POWERS_FROM) - exp.astype(np.int64)]
    rounded: FloatArray = np.round(vals * scale) / scale
    return rounded


def top_k(
    scores: FloatArray, id_rank: IntArray, depth: int, *, positive_only: bool = True
) -> IntArray:
    """Indices of the ``depth`` best scores, in trec_eval order.

    Sorted by score descending, then by document id descending; scores <= 0 are dropped
    unless ``positive_only`` is off (cosines rank every document). Ties at the cut are
    resolved by the id order too, never by position.
    """
    cand = np.flatnonzero(scores > 0) if positive_only else np.arange(scores.size)
    if cand.size > depth:
        sub = scores[cand]
        kth = np.partition(sub, sub.size - depth)[sub.size - depth]
        cand = cand[sub >= kth]
    order = np.lexsort((-id_rank[cand], -scores[cand]))
    return cand[order[:depth]]


ROUNDING_MARGIN = 1e-11
"""Relative distance within which :func:`canonical_scores` may make two scores equal
(it moves a score by at most half a unit of the 12th significant digit, 5e-12 relative)."""


Ranked = tuple[IntArray, FloatArray, IntArray]
"""Rankings of several questions end to end: doc indices, scores, and each question's end
offset (question i is ``[ends[i-1]:ends[i]]``)."""


SINGLE_SLACK = 2.0**-22
"""Relative distance within which a score's nearest float32 may lie from it (2^-24 for a
normal float32, rounded to nearest), with room to spare."""


def cut_floors(raw: FloatArray, depth: int) -> FloatArray:
    """Per row of a score block, a floor no score of the row's top ``depth`` is below.

    Every floor is positive (at least the least positive float64, a subnormal one), so
    documents scored <= 0 are never above it. A row with at most ``depth`` positive
    scores keeps them all. In the others the ``depth``-th best score is found in a
    float32 copy, half the memory to move and faster to partition: rounding to the
    nearest float32 never reorders scores, so that copy's ``depth``-th best is the true one
    rounded, within :data:`SINGLE_SLACK`. The floor lies that much and
    :data:`ROUNDING_MARGIN` below it, so every score that rounding to
    :data:`TIE_DIGITS` digits could tie with the cut is above it. A cut too small or
    too large for a normal float32 keeps every positive score of its row.

    Every row is partitioned, without first counting its positive scores: in a row with
    at most ``depth`` of them the ``depth``-th best is at most its least positive one, so
    the floor still keeps them all (and nothing else, being positive).
    """
    n_rows, n_docs = raw.shape
    tiny = np.nextafter(0.0, 1.0)  # the least positive score: "> 0" as ">= tiny"
    if not 0 < depth < n_docs:  # no cut: every positive score is in the top
        return np.full(n_rows, tiny)
    with np.errstate(over="ignore"):  # beyond float32: -inf, kept whole below
        neg = np.negative(raw, dtype=np.float32)
    # the depth-th best: a partition of the negated scores at depth - 1, several times
    # faster than one at n_docs - depth when most scores are 0 (a selection whose pivot
    # falls in a long run of equal values crawls)
    neg.partition(depth - 1, axis=1)
    kth = -neg[:, depth - 1].astype(np.float64)
    del neg
    normal = (kth >= np.finfo(np.float32).tiny) & (kth <= np.finfo(np.float32).max)
    slack = (1 - SINGLE_SLACK) * (1 - ROUNDING_MARGIN)
    return np.where(normal, kth * slack, tiny)


TIE_BITS_MAX = 11
"""Position bits :func:`top_k_flat` may put in a sort key's low bits: 2^11 = 2048 is under
the 4,503 units (float64 ulps) that two distinct canonical scores lie apart at least
(1e-12 relative: 2^52 x 1e-12)."""


def top_k_flat(raw: FloatArray, id_rank: IntArray, depth: int) -> Ranked:
    """Each row's ``depth`` best documents by canonical score, in trec_eval order.

    The same result as :func:`canonical_scores` then :func:`top_k` on every row of the
    raw score block, without rounding every score: rounding never reorders scores (it is
    monotone), so a document can only reach a row's top ``depth`` if its raw score is
    within :data:`ROUNDING_MARGIN` of the row's ``depth``-th best raw score (at or
    above :func:`cut_floors`). Only those candidates are rounded and sorted (score
    descending, then doc id descending), all rows at once. Documents with a score <= 0
    are not ranked.
    """
    n_rows, n_docs = raw.shape
    if depth <= 0:
        flat = np.zeros(0, np.int64)
    else:
        flat = np.flatnonzero(raw >= cut_floors(raw, depth)[:, None])
    rows = flat // max(n_docs, 1)
    counts = np.bincount(rows, minlength=n_rows)
    width = int(counts.max(initial=0))
    bits = max(1, (width - 1).bit_length())
    if not flat.size or width > 2 * depth or bits > TIE_BITS_MAX or not _in_id_order(id_rank):
        return _top_k_general(raw, id_rank, depth, flat, rows, counts)
    cand_scores = np.ravel(raw)[flat]  # all positive: their own magnitudes
    if not _all_rounded(cand_scores):  # unrounded scores may lie an ulp apart
        return _top_k_general(raw, id_rank, depth, flat, rows, counts)
    vals = _rounded(cand_scores, cand_scores)  # canonical_scores of them, bit for bit
    cols = flat - rows * n_docs
    keep_n = np.minimum(counts, depth)
    firsts = np.cumsum(counts) - counts
    pos = np.arange(flat.size) - firsts[rows]  # in the row: ascending doc id
    # One int64 key per candidate, sorted per row: the score's bits (in the order of the
    # scores, being positive floats) with their low ``bits`` bits replaced by the
    # position. Distinct canonical scores lie over 2^TIE_BITS_MAX units apart, so the keys
    # order by score, then by position; negated, ascending is score descending, ties in
    # doc id descending order. An integer sort of the keys (no index sort, no stable
    # sort) is a third of the time of a stable argsort of the scores.
    key = ((vals.view(np.int64) >> bits) << bits) | pos
    block = np.full((n_rows, width), np.iinfo(np.int64).max)  # after every key
    block.reshape(-1)[rows * width + pos] = -key
    block.sort(axis=1)
    low = (1 << bits) - 1
    if int(keep_n.min()) == depth:  # every row has its whole top: the first columns
        picked = ((-block[:, :depth]) & low) + firsts[:, None]
    else:
        picked = ((-block[np.arange(width)[None, :] < keep_n[:, None]]) & low) + np.repeat(
            firsts, keep_n
        )
    picked = picked.reshape(-1)
    return cols[picked], vals[picked], np.cumsum(keep_n)


def _in_id_order(id_rank: IntArray) -> bool:
    """Whether the documents are in id order (as the workspace hands them over)."""
    return bool(id_rank.size) and id_rank[0] == 0 and bool(np.all(np.diff(id_rank) == 1))


def _top_k_general(
    raw: FloatArray,
    id_rank: IntArray,
    depth: int,
    flat: IntArray,
    rows: IntArray,
    counts: IntArray,
) -> Ranked:
    """:func:`top_k_flat` for any block, from its candidates.

    ``flat`` holds their flat positions, ``rows`` their rows and ``counts`` how many each
    row has. Documents may be in any order, a cut may fall in a long tie, scores may be
    unrounded (tiny): each row's candidates are sorted by a stable argsort.
    """
    n_rows, n_docs = raw.shape
    cols = flat - rows * n_docs
    vals = canonical_scores(np.ravel(raw)[flat])
    keep_n = np.minimum(counts, max(depth, 0))
    ends = np.cumsum(keep_n)
    if rows.size == 0:
        return cols, vals, ends
    # Sort each row's candidates in a padded block (rows x most candidates): a sort per
    # short row instead of one sort of every candidate. A row whose cut falls in a long
    # tie (many more candidates than depth) is sorted on its own instead.
    wide = counts > 2 * max(depth, 1)
    starts = np.cumsum(counts) - counts
    pos = np.arange(rows.size) - starts[rows]
    narrow = ~wide[rows]
    width = int(counts[~wide].max(initial=0))
    block_vals = np.full((n_rows, max(width, 1)), -np.inf)
    block_cols = np.zeros((n_rows, max(width, 1)), dtype=cols.dtype)
    block_vals[rows[narrow], pos[narrow]] = vals[narrow]
    block_cols[rows[narrow], pos[narrow]] = cols[narrow]
    if _in_id_order(id_rank):
        # documents in id order (as the workspace hands them over): a row's candidates
        # are in ascending id order, so a stable sort of the reversed row by score gives
        # ties in descending id order, one sort key instead of two
        last = block_vals.shape[1] - 1
        order = last - np.argsort(-block_vals[:, ::-1], axis=1, kind="stable")
    else:
        order = np.lexsort((-id_rank[block_cols], -block_vals), axis=-1)
    block_vals = np.take_along_axis(block_vals, order, axis=1)
    block_cols = np.take_along_axis(block_cols, order, axis=1)
    take = np.arange(block_vals.shape[1])[None, :] < keep_n[:, None]
    take[wide] = False
    if not wide.any():
        return block_cols[take], block_vals[take], ends
    out_cols: list[IntArray] = []
    out_vals: list[FloatArray] = []
    for i in range(n_rows):
        if wide[i]:
            mine = slice(int(starts[i]), int(starts[i] + counts[i]))
            sub = np.lexsort((-id_rank[cols[mine]], -vals[mine]))[:depth]
            out_cols.append(cols[mine][sub])
            out_vals.append(vals[mine][sub])
        else:
            out_cols.append(block_cols[i][take[i]])
            out_vals.append(block_vals[i][take[i]])
    return np.concatenate(out_cols), np.concatenate(out_vals), ends
