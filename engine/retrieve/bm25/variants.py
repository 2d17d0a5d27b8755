"""The BM25 formulas: each variant's idf and term weight, and their parameters.

Each variant is one row of :data:`VARIANTS` (its idf, its term weight, how query terms
count), written elementwise over the (term, document) pairs of an index.

Notation: ``N`` documents, ``n(t)`` documents containing term ``t``, ``tf`` the count of
``t`` in document ``d``, ``dl`` the length of ``d`` in tokens, ``avgdl`` the mean ``dl``,
``norm = 1 - b + b * dl / avgdl``.

* ``lucene`` (goldpan's default; Lucene >= 8 ``BM25Similarity`` with exact document
  lengths, the "Lucene (accurate)" variant of Kamphuis et al., ECIR 2020):
  ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, ``w = idf * tf / (tf + k1 * norm)``;
  each distinct query term counts once.
* ``lucene-quantized``: ``lucene`` with each document's length as Lucene stores it, in
  one byte (``SmallFloat.intToByte4`` at index time, ``byte4ToInt`` when scoring; exact
  up to 40 tokens, then 4 significant bits: 100 tokens are read as 96), ``avgdl`` exact
  (``sumTotalTermFreq / docCount``), the "Lucene (default)" variant of Kamphuis et al.
  Documents whose lengths share a byte are scored as equally long, so this is the ranking
  (and the ties) an OpenSearch or Elasticsearch index gives for one field analysed into
  the same tokens; Lucene's float32 arithmetic is not copied (float64 here), so scores
  within float32 rounding of each other may still be ordered differently there.
* ``okapi`` (rank_bm25 ``BM25Okapi``): ``idf = ln(N - n + 0.5) - ln(n + 0.5)``; a term
  with a negative idf (in more than half the documents) gets ``epsilon * mean idf`` over
  all terms instead (which can itself be negative on a tiny corpus);
  ``w = idf * tf * (k1 + 1) / (tf + k1 * norm)``; every query occurrence counts.
* ``bm25l`` (rank_bm25 ``BM25L``, Lv & Zhai 2011 as rank_bm25 writes it):
  ``idf = ln(N + 1) - ln(n + 0.5)``, ``c = tf / norm``,
  ``w = idf * tf * (k1 + 1) * (c + delta) / (k1 + c + delta)``; every occurrence counts.
* ``bm25plus`` (rank_bm25 ``BM25Plus``, Lv & Zhai 2011): ``idf = ln((N + 1) / n)``,
  ``w = idf * (delta + tf * (k1 + 1) / (k1 * norm + tf))``. The ``delta`` term is paid
  to every document for every query term in the vocabulary, also documents without the
  term, so every document gets a positive score; every occurrence counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.errors import UnknownName

MAX_BM25_PARAM = 1000
"""The largest k1, delta (and |epsilon|) a bm25 retriever takes: Lucene's default k1 is
1.2 and a sweep's grid stays under 3; ``1e308`` overflowed the term weights to inf and
NaN, which were ranked and stored."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
DocIndices = npt.NDArray[np.signedinteger[Any]]
"""Document numbers (int32 in an index's rows, int64 where computed)."""


@dataclass(frozen=True)
class BM25Params:
    """Parameters of one BM25 variant."""

    variant: str = "lucene"
    k1: float = 1.5
    b: float = 0.75
    epsilon: float | None = None
    """Okapi only: the idf floor is ``epsilon * mean idf`` (the variant's default when None)."""
    delta: float | None = None
    """BM25L / BM25+ lower bound (the variant's default, rank_bm25's, when None)."""

    def resolved_delta(self) -> float:
        """``delta`` with the variant's default filled in."""
        if self.delta is not None:
            return self.delta
        return get_variant(self.variant).default_delta

    def resolved_epsilon(self) -> float:
        """``epsilon`` with the variant's default filled in."""
        if self.epsilon is not None:
            return self.epsilon
        return get_variant(self.variant).default_epsilon


# -- the variants ---------------------------------------------------------------------------
# idf(df, N, params) and weight(tf, norm, idf, params), elementwise over the (term, doc)
# pairs; each written as its reference writes it, so that values are bit-equal.


def _lucene_idf(df: FloatArray, n: int, p: BM25Params) -> FloatArray:
    out: FloatArray = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    return out


LUCENE_MAX_INT4 = 231
"""``SmallFloat.longToInt4(Integer.MAX_VALUE)``."""
LUCENE_FREE_VALUES = 255 - LUCENE_MAX_INT4
"""Lengths below this (24) are stored exactly, as themselves."""


def _long_to_int4(i: int) -> int:
    """Lucene's ``SmallFloat.longToInt4``: 4 significant bits, order preserved."""
    bits = i.bit_length()
    if bits < 4:
        return i  # subnormal
    shift = bits - 4
    return ((i >> shift) & 0x07) | ((shift + 1) << 3)  # the top bit is implicit


def _int4_to_long(i: int) -> int:
    """Lucene's ``SmallFloat.int4ToLong``."""
    bits, shift = i & 0x07, (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


def lucene_length_byte(length: int) -> int:
    """The byte Lucene stores for a field of ``length`` tokens (``SmallFloat.intToByte4``)."""
    if length < LUCENE_FREE_VALUES:
        return length
    return LUCENE_FREE_VALUES + _long_to_int4(length - LUCENE_FREE_VALUES)


def lucene_length(length: int) -> int:
    """The length Lucene scores a field of ``length`` tokens with.

    ``byte4ToInt`` of its stored byte: never more than ``length``.
    """
    b = lucene_length_byte(length)
    if b < LUCENE_FREE_VALUES:
        return b
    return LUCENE_FREE_VALUES + _int4_to_long(b - LUCENE_FREE_VALUES)


LUCENE_LENGTHS = np.array([lucene_length(i) for i in range(1 << 12)], dtype=np.float64)
"""The decoded length of every length below 4096 (longer ones are computed one by one)."""


def lucene_lengths(doc_len: FloatArray) -> FloatArray:
    """Each document length as Lucene decodes its one-byte norm."""
    lengths = doc_len.astype(np.int64)
    out = LUCENE_LENGTHS[np.minimum(lengths, LUCENE_LENGTHS.size - 1)]
    long = lengths >= LUCENE_LENGTHS.size
    if long.any():
        out[long] = [float(lucene_length(int(x))) for x in lengths[long].tolist()]
    return out


def _okapi_idf(df: FloatArray, n: int, p: BM25Params) -> FloatArray:
    # rank_bm25 takes math.log per term; a negative idf becomes epsilon * mean idf
    idf = np.array([math.log(n - f + 0.5) - math.log(f + 0.5) for f in df.tolist()])
    if idf.size:
        average = float(sum(idf.tolist())) / idf.size
        idf[idf < 0] = p.resolved_epsilon() * average
    return idf


def _bm25l_idf(df: FloatArray, n: int, p: BM25Params) -> FloatArray:
    return np.array([math.log(n + 1) - math.log(f + 0.5) for f in df.tolist()])


def _bm25plus_idf(df: FloatArray, n: int, p: BM25Params) -> FloatArray:
    return np.array([math.log((n + 1) / f) for f in df.tolist()])


def _lucene_weight(tf: FloatArray, norm: FloatArray, idf: FloatArray, p: BM25Params) -> FloatArray:
    out: FloatArray = idf * (tf / (tf + p.k1 * norm))
    return out


def _okapi_weight(tf: FloatArray, norm: FloatArray, idf: FloatArray, p: BM25Params) -> FloatArray:
    out: FloatArray = idf * (tf * (p.k1 + 1) / (tf + p.k1 * norm))
    return out


def _bm25l_weight(tf: FloatArray, norm: FloatArray, idf: FloatArray, p: BM25Params) -> FloatArray:
    delta = p.resolved_delta()
    ctd = tf / norm
    out: FloatArray = idf * tf * (p.k1 + 1) * (ctd + delta) / (p.k1 + ctd + delta)
    return out


def _bm25plus_weight(
    tf: FloatArray, norm: FloatArray, idf: FloatArray, p: BM25Params
) -> FloatArray:
    # the delta part is paid per query term to every document (Variant.query_bonus)
    out: FloatArray = idf * ((tf * (p.k1 + 1)) / (p.k1 * norm + tf))
    return out


@dataclass(frozen=True)
class Variant:
    """One BM25 variant: its formulas and how a query's terms count."""

    name: str
    description: str
    idf: Callable[[FloatArray, int, BM25Params], FloatArray]
    weight: Callable[[FloatArray, FloatArray, FloatArray, BM25Params], FloatArray]
    repeats: bool
    """Every query occurrence of a term counts (else each distinct term once)."""
    query_bonus: bool = False
    """BM25+: every document gets ``delta * idf`` per query term in the vocabulary."""
    quantized_lengths: bool = False
    """Document lengths as Lucene's one-byte norms decode them (:func:`lucene_length`)."""
    default_delta: float = 1.0
    default_epsilon: float = 0.25

    def __str__(self) -> str:
        return self.description


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "lucene",
            "ln(1 + (N-n+0.5)/(n+0.5)) idf, tf/(tf + k1*norm), distinct query terms",
            _lucene_idf,
            _lucene_weight,
            repeats=False,
        ),
        Variant(
            "lucene-quantized",
            "lucene with document lengths in Lucene's one-byte norms (as OpenSearch and "
            "Elasticsearch score)",
            _lucene_idf,
            _lucene_weight,
            repeats=False,
            quantized_lengths=True,
        ),
        Variant(
            "okapi", "rank_bm25 BM25Okapi (epsilon idf floor)", _okapi_idf, _okapi_weight, True
        ),
        Variant("bm25l", "rank_bm25 BM25L", _bm25l_idf, _bm25l_weight, True, default_delta=0.5),
        Variant(
            "bm25plus",
            "rank_bm25 BM25Plus",
            _bm25plus_idf,
            _bm25plus_weight,
            True,
            query_bonus=True,
            default_delta=1.0,
        ),
    )
}
"""The BM25 variant registry: name -> :class:`Variant`."""


def get_variant(name: str) -> Variant:
    """The variant registered as ``name``.

    Raises:
        UnknownName: naming every known variant.
    """
    try:
        return VARIANTS[name]
    except KeyError:
        known = ", ".join(VARIANTS)
        raise UnknownName(f"unknown BM25 variant {name!r}; known variants: {known}") from None
