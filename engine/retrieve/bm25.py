"""BM25 over a sparse term-by-document weight matrix.

Every variant precomputes the weight of each (term, document) pair once, so scoring a
query is a sum of a few sparse rows (``numpy.bincount``) and ranking is a partial sort.

Notation: ``N`` documents, ``n(t)`` documents containing term ``t``, ``tf`` the count of
``t`` in document ``d``, ``dl`` the length of ``d`` in tokens, ``avgdl`` the mean ``dl``,
``norm = 1 - b + b * dl / avgdl``.

* ``lucene`` (goldpan's default; Lucene >= 8 ``BM25Similarity`` with exact document
  lengths, the "Lucene (accurate)" variant of Kamphuis et al., ECIR 2020):
  ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, ``w = idf * tf / (tf + k1 * norm)``;
  each distinct query term counts once.
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

Ranking convention (trec_eval's): score descending, then document id descending by code
point; documents with a score <= 0 are not ranked.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import sparse

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class BM25Params:
    """Parameters of one BM25 variant."""

    variant: str = "lucene"
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25
    """Okapi only: the idf floor is ``epsilon * mean idf``."""
    delta: float | None = None
    """BM25L / BM25+ lower bound; rank_bm25's defaults (0.5 and 1.0) when None."""

    def resolved_delta(self) -> float:
        """``delta`` with rank_bm25's per-variant default filled in."""
        if self.delta is not None:
            return self.delta
        return 0.5 if self.variant == "bm25l" else 1.0


VARIANTS: dict[str, str] = {
    "lucene": "ln(1 + (N-n+0.5)/(n+0.5)) idf, tf/(tf + k1*norm), distinct query terms",
    "okapi": "rank_bm25 BM25Okapi (epsilon idf floor)",
    "bm25l": "rank_bm25 BM25L",
    "bm25plus": "rank_bm25 BM25Plus",
}
"""The BM25 variant registry: name -> one-line description."""


def check_variant(variant: str) -> None:
    """Raise ValueError naming every known variant when ``variant`` is unknown."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown BM25 variant {variant!r}; known variants: {', '.join(VARIANTS)}")


def id_ranks(doc_ids: Sequence[str]) -> IntArray:
    """Position of each id in code-point order (the tie-break key of trec_eval)."""
    order = sorted(range(len(doc_ids)), key=doc_ids.__getitem__)
    ranks = np.empty(len(doc_ids), dtype=np.int64)
    ranks[order] = np.arange(len(doc_ids), dtype=np.int64)
    return ranks


TIE_DIGITS = 12
"""Significant digits kept in ranked scores (see :func:`canonical_scores`)."""


def canonical_scores(scores: FloatArray) -> FloatArray:
    """Scores rounded to 12 significant digits, so that equal scores tie exactly.

    Two documents with the same length and the same (tf, df) statistics have the same
    score in exact arithmetic, but a float sum taken in a different term order can differ
    in the last bit; trec_eval would then order them by that noise instead of by doc id.
    Rounding far below any meaningful difference (1e-12 relative) makes such ties exact,
    both in goldpan's ranking and in an exported run that trec_eval re-sorts.
    """
    out = scores.copy()
    nz = np.flatnonzero(out)
    if nz.size:
        vals = out[nz]
        exp = np.floor(np.log10(np.abs(vals)))
        scale = 10.0 ** (TIE_DIGITS - 1 - exp)
        out[nz] = np.round(vals * scale) / scale
    return out


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


class BM25Index:
    """A BM25 index over pre-tokenized documents."""

    def __init__(
        self, doc_tokens: Sequence[Sequence[str] | Mapping[str, int]], params: BM25Params
    ) -> None:
        """Build the weight matrix.

        Args:
            doc_tokens: per document, in the order of the doc ids used to read the
                results: its tokens, or its token counts (keys in order of first
                occurrence, :func:`engine.tokenize.token_counts`), which hold one entry
                per distinct term instead of one per token.
            params: the variant and its parameters.
        """
        check_variant(params.variant)
        self.params = params
        n_docs = len(doc_tokens)
        self.n_docs = n_docs
        counted = [d if isinstance(d, Mapping) else Counter(d) for d in doc_tokens]
        vocab: dict[str, int] = {}
        setdefault = vocab.setdefault
        term_ids = [setdefault(t, len(vocab)) for c in counted for t in c]
        pairs = np.fromiter((len(c) for c in counted), dtype=np.int64, count=n_docs)
        data = np.fromiter((n for c in counted for n in c.values()), np.float64, int(pairs.sum()))
        cols = np.repeat(np.arange(n_docs, dtype=np.int64), pairs)
        lengths = np.bincount(cols, weights=data, minlength=n_docs)
        self.vocab = vocab
        self.doc_len = lengths.astype(np.float64)
        n_terms = len(vocab)
        total = float(lengths.sum())
        # rank_bm25 divides the token count by the number of documents.
        self.avgdl = total / n_docs if n_docs else 0.0
        rows = np.asarray(term_ids, dtype=np.int64)
        tf_matrix = sparse.csr_matrix((data, (rows, cols)), shape=(n_terms, n_docs))
        tf_matrix.sum_duplicates()
        tf_matrix.sort_indices()
        df = np.diff(tf_matrix.indptr).astype(np.float64)
        self.idf = self._idf(df, n_docs)
        self.weights = self._weights(tf_matrix)

    def _idf(self, df: FloatArray, n: int) -> FloatArray:
        variant = self.params.variant
        if variant == "lucene":
            return np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        if variant == "okapi":
            # Written as rank_bm25 writes it (math.log per term) so values are bit-equal.
            idf = np.array([math.log(n - f + 0.5) - math.log(f + 0.5) for f in df])
            if idf.size:
                average = float(sum(idf.tolist())) / idf.size
                idf[idf < 0] = self.params.epsilon * average
            return idf
        if variant == "bm25l":
            return np.array([math.log(n + 1) - math.log(f + 0.5) for f in df])
        return np.array([math.log((n + 1) / f) for f in df])  # bm25plus

    def _weights(self, tf_matrix: sparse.csr_matrix) -> sparse.csr_matrix:
        p = self.params
        k1, b = p.k1, p.b
        tf = tf_matrix.data
        term_of = np.repeat(np.arange(tf_matrix.shape[0]), np.diff(tf_matrix.indptr))
        idf = self.idf[term_of]
        dl = self.doc_len[tf_matrix.indices]
        avgdl = self.avgdl if self.avgdl > 0 else 1.0
        norm = 1 - b + b * dl / avgdl
        if p.variant == "lucene":
            w = idf * (tf / (tf + k1 * norm))
        elif p.variant == "okapi":
            w = idf * (tf * (k1 + 1) / (tf + k1 * norm))
        elif p.variant == "bm25l":
            delta = p.resolved_delta()
            ctd = tf / norm
            w = idf * tf * (k1 + 1) * (ctd + delta) / (k1 + ctd + delta)
        else:  # bm25plus: the delta part is added per query, to every document
            w = idf * ((tf * (k1 + 1)) / (k1 * norm + tf))
        out = tf_matrix.copy()
        out.data = np.asarray(w, dtype=np.float64)
        return out

    def query_terms(self, tokens: Sequence[str]) -> tuple[IntArray, FloatArray]:
        """Term ids of the query that are in the vocabulary, with their multiplicity."""
        counts: dict[int, int] = {}
        vocab = self.vocab
        for t in tokens:
            tid = vocab.get(t)
            if tid is not None:
                counts[tid] = counts.get(tid, 0) + 1
        ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        if self.params.variant == "lucene":
            mult = np.ones(len(counts), dtype=np.float64)
        else:
            mult = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        return ids, mult

    def scores(self, tokens: Sequence[str]) -> FloatArray:
        """The score of every document for a tokenized query."""
        ids, mult = self.query_terms(tokens)
        w = self.weights
        indptr, indices, data = w.indptr, w.indices, w.data
        if ids.size == 0:
            return np.zeros(self.n_docs)
        starts, ends = indptr[ids], indptr[ids + 1]
        if ids.size == 1:
            s, e = int(starts[0]), int(ends[0])
            out = np.zeros(self.n_docs)
            out[indices[s:e]] = data[s:e] * mult[0]
        else:
            sl = [slice(int(s), int(e)) for s, e in zip(starts, ends, strict=True)]
            idx = np.concatenate([indices[x] for x in sl])
            vals = np.concatenate([data[x] * m for x, m in zip(sl, mult, strict=True)])
            out = np.bincount(idx, weights=vals, minlength=self.n_docs).astype(np.float64)
        if self.params.variant == "bm25plus":
            out = out + float(np.dot(self.idf[ids], mult)) * self.params.resolved_delta()
        return out
