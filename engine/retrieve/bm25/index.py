"""The BM25 scoring kernel: an index's weights, and ranking batches of questions.

Every variant precomputes the weight of each (term, document) pair once, so scoring a
query is a sum of a few sparse rows (posting lists), and a batch of questions is ranked
with one gather-and-sum of their terms' rows (:func:`score_block`) and a partial sort per
question, in chunks of questions so that the dense score block stays small; the chunks
are ranked side by side on :data:`RANK_THREADS` threads.

Ranking order is trec_eval's (:mod:`engine.retrieve.order`): score descending, then
document id descending by code point; documents with a score <= 0 are not ranked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np

from engine.arrays import spans
from engine.retrieve.bm25.counts import TermCounts, TermRows
from engine.retrieve.bm25.variants import (
    BM25Params,
    DocIndices,
    FloatArray,
    IntArray,
    get_variant,
    lucene_lengths,
)
from engine.retrieve.order import Ranked, top_k_flat


@dataclass(frozen=True)
class QueryTerms:
    """Questions x terms, each question's terms in first-seen order.

    Question ``i``'s term ids and multiplicities are ``terms`` and ``mult`` at
    ``indptr[i]:indptr[i + 1]``.
    """

    indptr: IntArray
    terms: IntArray
    mult: FloatArray

    def rows(self, start: int, stop: int) -> QueryTerms:
        """Questions ``start`` up to ``stop`` (excluded; past the end: to the end)."""
        ptr = self.indptr[start : stop + 1]
        a, b = int(ptr[0]), int(ptr[-1])
        return QueryTerms(ptr - a, self.terms[a:b], self.mult[a:b])


EXPANDED_AT_ONCE = 1 << 16
"""Weights :func:`score_block` gathers at once: a few questions' worth, so that its
temporary arrays (half a megabyte each) stay small enough for the processor's cache (with
a whole chunk's at once, pooling KorQuAD took more CPU time than with scipy's product)."""


def score_block(q: QueryTerms, weights: TermRows) -> FloatArray:
    """Questions x documents: every document's score for each question.

    A score is the sum of the question's terms' weights, added in the question's
    first-seen term order, each onto the sum so far starting from 0 (``np.add.at`` adds
    in the order given): the numbers and the order of :meth:`BM25Index.scores`, so each
    score equals it bit for bit. Questions are gathered a few at a time
    (:data:`EXPANDED_AT_ONCE` weights, or one question) and added straight into the
    block: no per-piece sums to allocate and copy (a ``bincount`` per piece made
    half-megabyte-to-4-megabyte arrays, fresh memory each, a fifth more CPU time).
    """
    n, n_docs = q.indptr.size - 1, weights.shape[1]
    starts = weights.indptr[q.terms]
    sizes = weights.indptr[q.terms + 1] - starts
    gathered = np.concatenate(([0], np.cumsum(sizes)))[q.indptr]  # weights before each question
    ones = bool(np.all(q.mult == 1.0))  # each distinct term once (w * 1.0 is w)
    block = np.zeros((n, n_docs))
    cells_of = block.reshape(-1)  # a view: what is added to it is in the block
    i = 0
    while i < n:
        j = int(np.searchsorted(gathered, gathered[i] + EXPANDED_AT_ONCE, side="right")) - 1
        j = min(n, max(j, i + 1))
        a, b = int(q.indptr[i]), int(q.indptr[j])
        size = sizes[a:b]
        at = spans(starts[a:b], size)
        owner = np.repeat(np.arange(i, j, dtype=np.int64) * n_docs, np.diff(q.indptr[i : j + 1]))
        cells = np.repeat(owner, size) + weights.indices[at]
        values = weights.data[at] if ones else weights.data[at] * np.repeat(q.mult[a:b], size)
        np.add.at(cells_of, cells, values)
        i = j
    return block


RANK_CELLS = 1 << 20
"""Scores one thread holds at once while ranking (questions x documents), about 8 MB."""

RANK_THREADS = max(
    1,
    min(
        4,
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1),
    ),
)
"""Threads that rank chunks of a batch side by side (at most 4, at most the CPUs this
process may use); a batch under :data:`RANK_CELLS` scores is ranked on the caller's thread."""


class BM25Index:
    """A BM25 index over pre-tokenized documents."""

    def __init__(
        self,
        doc_tokens: Sequence[Sequence[str] | Mapping[str, int]] | None,
        params: BM25Params,
        *,
        counts: TermCounts | None = None,
    ) -> None:
        """Build the weight matrix.

        Args:
            doc_tokens: per document, in the order of the doc ids used to read the
                results: its tokens, or its token counts (keys in order of first
                occurrence, :func:`engine.tokenize.token_counts`), which hold one entry
                per distinct term instead of one per token (or None with ``counts``).
            params: the variant and its parameters.
            counts: the corpus's term counts, when already made (a stored index).
        """
        self.variant = get_variant(params.variant)
        self.params = params
        if counts is None:
            counts = TermCounts.of(doc_tokens or [])
        self.vocab = counts.vocab
        self.doc_len = counts.doc_len
        n_docs = counts.n_docs
        self.n_docs = n_docs
        # rank_bm25 divides the token count by the number of documents.
        self.avgdl = float(counts.doc_len.sum()) / n_docs if n_docs else 0.0
        tf_matrix = counts.tf
        self._tf = tf_matrix
        df = np.diff(tf_matrix.indptr).astype(np.float64)
        self.idf = self.variant.idf(df, n_docs, params)
        avgdl = self.avgdl if self.avgdl > 0 else 1.0
        self._lengths_over_avgdl = (
            (lucene_lengths(self.doc_len) if self.variant.quantized_lengths else self.doc_len),
            avgdl,
        )
        self._weights: TermRows | None = None

    def _weigh(self, term_of: IntArray, tf: FloatArray, docs: DocIndices) -> FloatArray:
        """The weights of the entries (term, tf, document): one formula, element by element.

        Each weight depends on its own entry only, so weighing some rows gives exactly the
        numbers the whole matrix holds for them (the same operations on the same values).
        """
        lengths, avgdl = self._lengths_over_avgdl
        b = self.params.b
        norm = 1 - b + b * lengths[docs] / avgdl
        weights = self.variant.weight(tf, norm, self.idf[term_of], self.params)
        return np.asarray(weights, dtype=np.float64)

    @property
    def weights(self) -> TermRows:
        """Terms x documents: every entry's weight (made on first use, then kept)."""
        if self._weights is None:
            tf = self._tf
            self._weights = tf.with_data(self._weigh(tf.entry_rows(), tf.data, tf.indices))
        return self._weights

    def _rows(self, ids: IntArray) -> tuple[IntArray, DocIndices, FloatArray]:
        """The weight rows of terms ``ids``: (row pointers, documents, weights).

        Read from :attr:`weights` once that is made; before, only these rows are weighed
        (a few questions touch a small part of a large corpus's entries).
        """
        whole = self._weights  # read once: another thread may make it meanwhile
        source = whole if whole is not None else self._tf
        indptr, indices, data = source.indptr, source.indices, source.data
        starts, ends = indptr[ids], indptr[ids + 1]
        sizes = ends - starts
        ptr = np.zeros(ids.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=ptr[1:])
        at = spans(starts, sizes)
        docs = indices[at]
        if whole is not None:
            return ptr, docs, data[at]
        term_of = np.repeat(ids, sizes)
        return ptr, docs, self._weigh(term_of, data[at], docs)

    def query_terms(self, tokens: Sequence[str]) -> tuple[IntArray, FloatArray]:
        """Term ids of the query in the vocabulary (first-seen order), with multiplicity.

        The multiplicity is 1 for a variant that counts each distinct term once.
        """
        counts: dict[int, int] = {}
        vocab = self.vocab
        for t in tokens:
            tid = vocab.get(t)
            if tid is not None:
                counts[tid] = counts.get(tid, 0) + 1
        ids = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        if self.variant.repeats:
            mult = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        else:
            mult = np.ones(len(counts), dtype=np.float64)
        return ids, mult

    def _bonus(self, ids: IntArray, mult: FloatArray) -> float:
        return float(np.dot(self.idf[ids], mult)) * self.params.resolved_delta()

    def scores(self, tokens: Sequence[str]) -> FloatArray:
        """The score of every document for a tokenized query.

        Each document's term weights are added in the query's first-seen term order,
        the order :meth:`rank_flat`'s :func:`score_block` adds them in too.
        """
        ids, mult = self.query_terms(tokens)
        if ids.size == 0:
            return np.zeros(self.n_docs)
        ptr, indices, data = self._rows(ids)
        if ids.size == 1:
            out = np.zeros(self.n_docs)
            out[indices] = data * mult[0]
        else:
            vals = np.concatenate(
                [data[ptr[i] : ptr[i + 1]] * m for i, m in enumerate(mult.tolist())]
            )
            out = np.bincount(indices, weights=vals, minlength=self.n_docs).astype(np.float64)
        if self.variant.query_bonus:
            out = out + self._bonus(ids, mult)
        return out

    def query_matrix(self, queries: Sequence[Sequence[str]]) -> QueryTerms:
        """Questions x terms: each question's term multiplicities, in first-seen order.

        The same terms and multiplicities as :meth:`query_terms`, for all questions at
        once, left in first-seen order (not sorted): :func:`score_block` then adds each
        document's weights in the order :meth:`scores` does, bit for bit.
        """
        n = len(queries)
        n_terms = self._tf.shape[0]
        lengths = np.fromiter(map(len, queries), dtype=np.int64, count=n)
        flat = np.fromiter(
            map(self.vocab.get, chain.from_iterable(queries), repeat(-1)),
            dtype=np.int64,
            count=int(lengths.sum()),
        )
        owner = np.repeat(np.arange(n, dtype=np.int64), lengths)
        known = flat >= 0
        key = owner[known] * max(1, n_terms) + flat[known]
        uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
        order = np.argsort(first, kind="stable")  # question by question, first-seen order
        uniq = uniq[order]
        rows, terms = np.divmod(uniq, max(1, n_terms))
        mult = counts[order].astype(np.float64) if self.variant.repeats else np.ones(uniq.size)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        return QueryTerms(indptr, terms, mult)

    def _operands(self, q: QueryTerms) -> tuple[QueryTerms, TermRows]:
        """What is scored: ``q`` and :attr:`weights`, or only the rows ``q`` uses.

        While the whole matrix is not made yet and the questions touch under a quarter of
        its entries (a few new questions on a large corpus), only their terms' rows are
        weighed, and ``q``'s terms renumbered to them in the same order, so the scores
        add the same numbers in the same order as with the whole matrix.
        """
        if self._weights is None and q.terms.size:
            # with counts: without, np.unique imports numpy.ma (20-50 ms) to test for a mask
            ids = np.unique(q.terms, return_counts=True)[0]
            indptr = self._tf.indptr
            if int((indptr[ids + 1] - indptr[ids]).sum()) * 4 < self._tf.nnz:
                ptr, docs, data = self._rows(ids)
                rows = TermRows(ptr, docs, data, (ids.size, self.n_docs))
                return QueryTerms(q.indptr, np.searchsorted(ids, q.terms), q.mult), rows
        return q, self.weights

    def rank_flat(
        self,
        queries: Sequence[Sequence[str]],
        id_rank: IntArray,
        depth: int,
    ) -> Ranked:
        """The ``depth`` best documents of each tokenized query, end to end (:data:`Ranked`).

        The questions' terms are found here, then ranked by :meth:`rank_terms`.
        """
        n = len(queries)
        q_all = self.query_matrix(queries)
        bonus = None
        if self.variant.query_bonus:
            ptr = q_all.indptr
            bonus = np.array(
                [
                    self._bonus(q_all.terms[ptr[i] : ptr[i + 1]], q_all.mult[ptr[i] : ptr[i + 1]])
                    for i in range(n)
                ]
            )
        return self.rank_terms(q_all, bonus, id_rank, depth)

    def rank_terms(
        self, q_all: QueryTerms, bonus: FloatArray | None, id_rank: IntArray, depth: int
    ) -> Ranked:
        """The rankings of :meth:`query_matrix`'s questions (``bonus``: BM25+'s, per question).

        The weights are made here (:meth:`_operands`), then :func:`rank_rows` ranks.
        """
        q_all, weights = self._operands(q_all)
        return rank_rows(q_all, weights, bonus, id_rank, depth)

    @property
    def counts(self) -> TermCounts:
        """The term counts this index weighs (without its vocabulary when made without one)."""
        return TermCounts(self.vocab, self._tf, self.doc_len)


def rank_rows(
    q_all: QueryTerms,
    weights: TermRows,
    bonus: FloatArray | None,
    id_rank: IntArray,
    depth: int,
) -> Ranked:
    """The ``depth`` best documents of each question of ``q_all``, end to end.

    One :func:`score_block` per chunk of questions (sized so that a chunk's dense score
    block holds about :data:`RANK_CELLS` numbers), ``bonus`` (BM25+'s, per question)
    added to its row; the scores are those of :meth:`BM25Index.scores`, rounded by
    :func:`canonical_scores`, and score-0 documents are not ranked.
    """
    n, n_docs = q_all.indptr.size - 1, weights.shape[1]
    threads = min(RANK_THREADS, -(-n * max(1, n_docs) // RANK_CELLS))
    chunk = max(1, min(RANK_CELLS // max(1, n_docs), -(-n // max(1, threads))))
    starts = range(0, n, chunk)

    def rank_chunk(i: int) -> Ranked:
        q = q_all.rows(starts[i], starts[i] + chunk)
        block = score_block(q, weights)
        if bonus is not None:
            block += bonus[starts[i] : starts[i] + chunk, None]
        return top_k_flat(block, id_rank, depth)

    if threads > 1 and len(starts) > 1:
        # numpy's gathers, sums, partition and sorts run without the GIL
        with ThreadPoolExecutor(threads, thread_name_prefix="bm25-rank") as pool:
            parts = list(pool.map(rank_chunk, range(len(starts))))
    else:
        parts = [rank_chunk(i) for i in range(len(starts))]
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64)
    offsets = np.cumsum([0] + [p[2][-1] if p[2].size else 0 for p in parts[:-1]])
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] + off for p, off in zip(parts, offsets.tolist(), strict=True)]),
    )
