"""BM25 over a sparse term-by-document weight matrix, and the ``bm25`` retriever kind.

Every variant precomputes the weight of each (term, document) pair once, so scoring a
query is a sum of a few sparse rows (posting lists), and a batch of questions is ranked
with one gather-and-sum of their terms' rows (:func:`score_block`) and a partial sort per
question, in chunks of questions so that the dense score block stays small. Each variant
is one row of :data:`VARIANTS` (its idf, its term weight, how query terms count).

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

Ranking order is trec_eval's (:mod:`engine.retrieve.order`): score descending, then
document id descending by code point; documents with a score <= 0 are not ranked.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import accumulate, chain, count, repeat
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from engine.arrays import spans
from engine.errors import UnknownName
from engine.retrieve import rank_helper
from engine.retrieve.base import PrepareEnv, Ranking, check_fields, doc_text
from engine.retrieve.order import (
    Ranked,
    canonical_scores,
    id_ranks,
    per_row,
    top_k,
    top_k_flat,
)
from engine.retrieve.params import LIST, Param, resolve
from engine.retrieve.rank_helper import RankHelper
from engine.tokenize import (
    COMPOSED,
    TOKENIZERS,
    WORD_MAPS,
    Tokenizer,
    get_tokenizer,
    token_counts,
)
from engine.types import Doc, Question, RankedBatch, RetrieverSpec, sha256_text

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


def check_variant(variant: str) -> None:
    """Raise ValueError naming every known variant when ``variant`` is unknown."""
    get_variant(variant)


# -- the index --------------------------------------------------------------------------------


def stable_order(values: IntArray, bound: int) -> IntArray:
    """The stable sorting order of whole numbers in ``[0, bound)``.

    numpy sorts 16-bit integers stably by radix, in time linear in their number, and
    other integers by comparisons, several times slower: so the numbers are sorted 16 bits
    at a time from the lowest (least significant digit first, each pass stable), one pass
    for every 16 bits ``bound`` needs.
    """
    order: IntArray = np.argsort(values.astype(np.uint16), kind="stable")  # the low 16 bits
    shift = 16
    while (bound - 1) >> shift > 0:
        digit = (values[order] >> shift).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order


def numbered(terms: Iterable[str], total: int) -> tuple[dict[str, int], IntArray]:
    """The vocabulary of ``total`` terms, numbered in first-seen order, and each one's number.

    One pass in C: each term is looked up once (``dict.setdefault`` with a counter), so a
    term's first place is its key's value; numpy renumbers those places 0, 1, 2, ... (a
    dict built number by number in Python took as long as the pass itself).
    """
    seen: dict[str, int] = {}
    places = np.fromiter(map(seen.setdefault, terms, count()), dtype=np.int64, count=total)
    firsts = places == np.arange(total, dtype=np.int64)  # where each term is first seen
    number = np.cumsum(firsts, dtype=np.int64) - 1
    return dict(zip(seen, range(len(seen)), strict=True)), number[places]


@dataclass(frozen=True)
class TermRows:
    """A terms x documents matrix kept row by row: the index's posting lists.

    Row ``t`` holds the documents ``indices[indptr[t]:indptr[t + 1]]`` (ascending, each
    once) and their values ``data`` at the same positions: what ``scipy.sparse.csr_matrix``
    keeps, in three numpy arrays. An inverted index needs no more than these, and
    importing scipy.sparse takes 0.15-0.2 s (it loads numpy's testing and f2py modules),
    a tenth of a whole ``goldpan pool`` of KorQuAD.
    """

    indptr: IntArray
    """Row ``t`` is ``indptr[t]`` up to ``indptr[t + 1]`` (int64, one more than rows)."""
    indices: DocIndices
    data: FloatArray
    shape: tuple[int, int]

    @property
    def nnz(self) -> int:
        """Entries kept."""
        return int(self.data.size)

    @classmethod
    def from_entries(
        cls, rows: IntArray, cols: IntArray, data: FloatArray, shape: tuple[int, int]
    ) -> TermRows:
        """The matrix of entries (row, column, value) in any order, repeated ones summed.

        The sums are exact for the whole numbers (term counts) this is built from.
        """
        n_rows, n_cols = shape
        if bool(np.all(cols[1:] >= cols[:-1])):  # document by document, as counted
            order = stable_order(rows, n_rows)
        else:
            order = stable_order(cols, n_cols)
            order = order[stable_order(rows[order], n_rows)]  # by row, then column
        row, col, value = rows[order], cols[order], data[order]
        del order
        repeated = (row[1:] == row[:-1]) & (col[1:] == col[:-1])  # the same pair again
        if repeated.any():
            starts = np.flatnonzero(np.concatenate(([True], ~repeated)))
            row, col, value = row[starts], col[starts], np.add.reduceat(value, starts)
        del repeated
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(row, minlength=n_rows), out=indptr[1:])
        return cls(indptr, col.astype(np.int32), np.asarray(value, dtype=np.float64), shape)

    def with_data(self, data: FloatArray) -> TermRows:
        """The same entries holding ``data`` instead."""
        return TermRows(self.indptr, self.indices, data, self.shape)

    def entry_rows(self) -> IntArray:
        """The row of each entry, in entry order."""
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))

    def column_sums(self) -> FloatArray:
        """Each column's sum (a document's length, for counts)."""
        return np.bincount(self.indices, weights=self.data, minlength=self.shape[1]).astype(
            np.float64
        )


@dataclass
class TermCounts:
    """A tokenized corpus's statistics: what every BM25 variant's index is built from."""

    vocab: dict[str, int]
    """term -> row of :attr:`tf`, in row order (0, 1, 2, ...)."""
    tf: TermRows
    """term x document counts (float64, documents ascending in each row, no zeros)."""
    doc_len: FloatArray
    """tokens per document."""

    @classmethod
    def from_tokens(cls, doc_tokens: Sequence[Sequence[str]]) -> TermCounts:
        """Count the terms of each document (documents are the columns, in order)."""
        n_docs = len(doc_tokens)
        lengths = np.fromiter(map(len, doc_tokens), dtype=np.int64, count=n_docs)
        total = int(lengths.sum())
        vocab, rows = numbered(chain.from_iterable(doc_tokens), total)
        cols = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        tf = TermRows.from_entries(rows, cols, np.ones(total), (len(vocab), n_docs))
        return cls(vocab, tf, lengths.astype(np.float64))

    @classmethod
    def from_counts(cls, doc_counts: Sequence[Mapping[str, int]]) -> TermCounts:
        """The same from each document's token counts (keys in first-occurrence order).

        Equal to :meth:`from_tokens` on the tokens counted, with one entry per distinct
        term of a document instead of one per token: the memory stays a small multiple
        of the largest document (:func:`engine.tokenize.token_counts`).
        """
        n_docs = len(doc_counts)
        pairs = np.fromiter(map(len, doc_counts), dtype=np.int64, count=n_docs)
        total = int(pairs.sum())
        vocab, rows = numbered(chain.from_iterable(doc_counts), total)
        data = np.fromiter(
            chain.from_iterable(c.values() for c in doc_counts), dtype=np.float64, count=total
        )
        cols = np.repeat(np.arange(n_docs, dtype=np.int64), pairs)
        lengths = np.bincount(cols, weights=data, minlength=n_docs)
        tf = TermRows.from_entries(rows, cols, data, (len(vocab), n_docs))
        return cls(vocab, tf, lengths.astype(np.float64))

    def terms(self) -> list[str]:
        """The terms by row."""
        return list(self.vocab)  # every constructor numbers the terms in insertion order

    def mapped(self, expand: Callable[[Sequence[str]], tuple[list[str], list[int]]]) -> TermCounts:
        """The counts of a tokenizer that maps each of these terms on its own.

        ``expand(terms)`` gives the new tokens of each term, end to end, and how many each
        term gives (:data:`engine.tokenize.WORD_MAPS`). Each distinct term is expanded once,
        and each (old term, document, count) entry becomes one entry per new token the
        term gives, summed per (new term, document): exact, as counts are whole numbers.
        The new terms are numbered in first-seen order, as :meth:`from_tokens` numbers
        them: a term's first document is that of the first old term (in first-seen order)
        that gives it.
        """
        old = self.terms()
        flat, sizes = expand(old)
        vocab, new_term = numbered(flat, len(flat))
        size = np.asarray(sizes, dtype=np.int64)
        first = np.cumsum(size) - size  # where each old term's new tokens start in flat
        term = self.tf.entry_rows()
        gives = size[term]
        rows = new_term[spans(first[term], gives)]
        cols = np.repeat(self.tf.indices.astype(np.int64), gives)
        data = np.repeat(self.tf.data, gives)
        tf = TermRows.from_entries(rows, cols, data, (len(vocab), self.n_docs))
        return TermCounts(vocab, tf, tf.column_sums())

    @classmethod
    def joined(cls, parts: Sequence[TermCounts]) -> TermCounts:
        """The counts of each document's tokens of every part, one list after the other.

        What :meth:`from_tokens` gives for the joined token lists, up to the terms'
        numbers: the first part's terms keep theirs, and each later part's terms that no
        earlier part has are numbered on after them, in that part's order. A score never
        depends on the numbers (a question's terms are added in its own first-seen order,
        whatever their numbers), and renumbering the union as :meth:`from_tokens` does
        took a third of the join's time.
        """
        if len(parts) == 1:
            return parts[0]
        n_docs = parts[0].n_docs
        # every part's terms numbered in one union: the first part's as they are, each
        # later part's looked up (its new terms numbered on); a part's terms are distinct
        union = dict(parts[0].vocab)
        where = [np.arange(len(union), dtype=np.int64)]
        for part in parts[1:]:
            terms = part.terms()
            at = np.fromiter(map(union.get, terms, repeat(-1)), dtype=np.int64, count=len(terms))
            new = np.flatnonzero(at < 0)
            at[new] = np.arange(len(union), len(union) + new.size, dtype=np.int64)
            union.update(zip(map(terms.__getitem__, new.tolist()), at[new].tolist(), strict=True))
            where.append(at)
        rows, cols, data = [], [], []
        for part, at in zip(parts, where, strict=True):
            rows.append(at[part.tf.entry_rows()])
            cols.append(part.tf.indices.astype(np.int64))
            data.append(part.tf.data)
        tf = TermRows.from_entries(
            np.concatenate(rows), np.concatenate(cols), np.concatenate(data), (len(union), n_docs)
        )
        return cls(union, tf, np.sum([p.doc_len for p in parts], axis=0, dtype=np.float64))

    @classmethod
    def of(cls, docs: Sequence[Sequence[str] | Mapping[str, int]]) -> TermCounts:
        """From token lists or from token counts, whichever ``docs`` holds."""
        if any(isinstance(d, Mapping) for d in docs):
            return cls.from_counts([d if isinstance(d, Mapping) else Counter(d) for d in docs])
        return cls.from_tokens(cast("Sequence[Sequence[str]]", docs))

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return int(self.doc_len.size)

    def to_record(self, doc_ids: Sequence[str]) -> dict[str, Any]:
        """The counts as an index store keeps them (see ``Workspace.term_counts``)."""
        terms = self.terms()
        tf = self.tf
        return {
            "n_docs": self.n_docs,
            "n_terms": len(terms),
            "doc_ids": list(doc_ids),
            "terms": terms,
            "indptr": tf.indptr.astype("<i8").tobytes(),
            "indices": tf.indices.astype("<i4").tobytes(),
            "tf": tf.data.astype("<i4").tobytes(),
            "doc_len": self.doc_len.astype("<i8").tobytes(),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> tuple[list[str], TermCounts] | None:
        """(doc ids, counts) from a stored record, or None when it does not hold together.

        A stored index is a cache inside an untrusted file: every length, bound and order
        is checked, and a record that fails is ignored (the corpus is indexed again).
        """
        try:
            n_docs, n_terms = int(record["n_docs"]), int(record["n_terms"])
            doc_ids, terms = record["doc_ids"], record["terms"]
            indptr = np.frombuffer(record["indptr"], dtype="<i8").astype(np.int64)
            indices = np.frombuffer(record["indices"], dtype="<i4").astype(np.int32)
            tf = np.frombuffer(record["tf"], dtype="<i4").astype(np.float64)
            doc_len = np.frombuffer(record["doc_len"], dtype="<i8").astype(np.float64)
        except (KeyError, TypeError, ValueError):
            return None
        ok = (
            isinstance(doc_ids, list)
            and isinstance(terms, list)
            and len(doc_ids) == n_docs == doc_len.size
            and len(terms) == n_terms
            and all(isinstance(d, str) for d in doc_ids)
            and all(isinstance(t, str) for t in terms)
            and indptr.size == n_terms + 1
            and indices.size == tf.size
            and (indptr.size == 0 or (indptr[0] == 0 and indptr[-1] == tf.size))
            and bool(np.all(np.diff(indptr) >= 0))
            and (indices.size == 0 or (indices.min() >= 0 and indices.max() < n_docs))
            and bool(np.all(tf >= 1))
            and bool(np.all(doc_len >= 0))
        )
        if not ok:
            return None
        vocab = {t: i for i, t in enumerate(terms)}
        if len(vocab) != n_terms:
            return None
        # within a row, doc indices strictly increase (sorted, no duplicates), as counted
        step_ok = indices[1:] > indices[:-1]
        step_ok[indptr[1:-1][(indptr[1:-1] > 0) & (indptr[1:-1] < tf.size)] - 1] = True
        if not bool(np.all(step_ok)):
            return None
        return list(doc_ids), cls(vocab, TermRows(indptr, indices, tf, (n_terms, n_docs)), doc_len)


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
        the order :meth:`rank_many`'s :func:`score_block` adds them in too.
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

    def rank_many(
        self, queries: Sequence[Sequence[str]], id_rank: IntArray, depth: int
    ) -> list[tuple[IntArray, FloatArray]]:
        """The ``depth`` best documents of each tokenized query, in trec_eval order."""
        return per_row(self.rank_flat(queries, id_rank, depth))

    def rank_flat(
        self,
        queries: Sequence[Sequence[str]],
        id_rank: IntArray,
        depth: int,
        helper: RankHelper | None = None,
    ) -> Ranked:
        """:meth:`rank_many`'s rankings end to end (see :data:`Ranked`).

        The questions' terms are found here, then ranked by :meth:`rank_terms`: in this
        process, or, for a batch of at least
        :data:`~engine.retrieve.rank_helper.HELPER_CELLS` scores, by ``helper`` (the same
        method on the same arrays in a process of its own; here again when it fails).
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
        if helper is not None and n * self.n_docs >= rank_helper.HELPER_CELLS:
            ranked = helper.rank(self, q_all, bonus, id_rank, depth)
            if ranked is not None:
                return ranked
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


def get_tokenizer_factory(name: str) -> object:
    """The tokenizer factory registered as ``name`` (the tokenizer is not built).

    Raises:
        UnknownName: naming every registered tokenizer.
    """
    if name not in TOKENIZERS:
        get_tokenizer(name)  # raises with the list of known names
    return TOKENIZERS[name]


# -- the retriever kind -------------------------------------------------------------------


class BM25Retriever:
    """BM25 (any variant) over one tokenizer's tokens of the chosen document fields."""

    PARAMS: tuple[Param, ...] = (
        Param(
            "tokenizer",
            str,
            "word",
            "how text becomes terms",
            choices=tuple(sorted(TOKENIZERS)),
            lookup=get_tokenizer_factory,
        ),
        Param(
            "variant",
            str,
            "lucene",
            "the BM25 formula",
            choices=tuple(VARIANTS),
            lookup=get_variant,
        ),
        Param(
            "k1",
            float,
            1.5,
            "term frequency saturation",
            check=lambda v: math.isfinite(v) and 0 <= v <= MAX_BM25_PARAM,
            must=f"from 0 to {MAX_BM25_PARAM:,}",
        ),
        Param(
            "b",
            float,
            0.75,
            "document length normalization",
            check=lambda v: 0 <= v <= 1,
            must="between 0 and 1",
        ),
        Param(
            "epsilon",
            float,
            None,
            "okapi: the idf floor is epsilon x mean idf (default 0.25)",
            check=lambda v: math.isfinite(v) and -MAX_BM25_PARAM <= v <= MAX_BM25_PARAM,
            must=f"from -{MAX_BM25_PARAM:,} to {MAX_BM25_PARAM:,}",
        ),
        Param(
            "delta",
            float,
            None,
            "bm25l and bm25plus: the lower bound (default 0.5 and 1)",
            check=lambda v: math.isfinite(v) and 0 <= v <= MAX_BM25_PARAM,
            must=f"from 0 to {MAX_BM25_PARAM:,}",
        ),
        Param(
            "fields",
            LIST,
            ("text",),
            "document fields read: text, title or title,text",
            lookup=check_fields,
            metavar="FIELDS",
        ),
    )
    """The parameters of the ``bm25`` kind."""

    bases: tuple[str, ...] = ()
    base_depth: int | None = None

    @property
    def batch_size(self) -> int:
        """Questions per :meth:`rank_batch`, a progress report after each.

        Enough for every ranking thread to have a few chunks of :data:`RANK_CELLS` scores.
        """
        n_docs = max(1, len(self._doc_ids))
        return max(256, min(8192, 4 * RANK_THREADS * RANK_CELLS // n_docs))

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the parameters; nothing is indexed yet."""
        self.spec = spec
        p = resolve(self.PARAMS, spec.params, "bm25")
        self.tokenizer_name = str(p["tokenizer"])
        self.fields = tuple(p["fields"])
        self.params = BM25Params(
            variant=p["variant"], k1=p["k1"], b=p["b"], epsilon=p["epsilon"], delta=p["delta"]
        )
        self._tokenizer: Tokenizer | None = None
        self._cache: dict[Any, Any] = {}
        self._index: BM25Index | None = None
        self._doc_ids: Sequence[str] = []
        self._id_rank: IntArray = np.zeros(0, dtype=np.int64)

    @property
    def counts_key(self) -> str:
        """What the term counts depend on besides the corpus: tokenizer and fields."""
        return counts_key(self.tokenizer_name, self.fields)

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Count terms (shared through ``cache``, and kept in the index store) and weigh them.

        With a store in ``env`` whose term counts match the corpus, the documents are not
        read at all; otherwise they are tokenized, and the counts are stored for next time.
        """
        env = env or PrepareEnv()
        self._tokenizer = get_tokenizer(self.tokenizer_name)
        self._cache = cache
        key = ("counts", self.tokenizer_name, self.fields)
        entry = cache.get(key)
        if entry is None:
            entry = self._load_counts(env, self.tokenizer_name)
        if entry is None:
            entry = self._counted(self.tokenizer_name, docs, cache, env)
            store = env.index_store
            if store is not None and env.corpus_hash is not None and not store.readonly:
                record = entry[1].to_record(entry[0])
                store.write_term_counts(self.counts_key, env.corpus_hash, record)
        cache[key] = entry
        doc_ids, counts = entry
        ranks_key = ("id_ranks", len(doc_ids), doc_ids[0] if doc_ids else "")
        if ranks_key not in cache:
            cache[ranks_key] = id_ranks(doc_ids)
        self._id_rank = cache[ranks_key]
        self._doc_ids = doc_ids
        self._index = BM25Index(None, self.params, counts=counts)
        # ready to rank: a tokenizer's model loads here, not in the first question's time
        # (counts read from the store did not need it; a question ranked alone is timed)
        self._tokenizer.ready()

    def _counted(
        self, name: str, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv
    ) -> tuple[Sequence[str], TermCounts]:
        """(doc ids, term counts) of tokenizer ``name`` over the corpus, shared through ``cache``.

        Documents are counted, not kept as token lists: one entry per distinct term keeps
        the memory a small multiple of the largest document
        (:func:`engine.tokenize.token_counts`). Only ``word`` (and Kiwi) read the
        documents: ``bigram`` maps each distinct word of the ``word`` counts
        (:meth:`TermCounts.mapped`), and ``word+bigram`` joins its parts' counts
        (:meth:`TermCounts.joined`), each part taken from this run or the store when it
        is there already.
        """
        key = ("counts", name, self.fields)
        entry: tuple[Sequence[str], TermCounts] | None = cache.get(key)
        if entry is None and name != self.tokenizer_name:
            entry = self._load_counts(env, name)
        if entry is None:
            parts = COMPOSED.get(name)
            if parts:
                each = [self._counted(part, docs, cache, env) for part in parts]
                entry = (each[0][0], TermCounts.joined([counts for _, counts in each]))
            elif name in WORD_MAPS:
                ids, words = self._counted("word", docs, cache, env)
                entry = (ids, words.mapped(WORD_MAPS[name]))
            else:
                texts = [doc_text(d, self.fields) for d in docs]
                counts = TermCounts.from_counts(token_counts(get_tokenizer(name), texts))
                entry = ([d.id for d in docs], counts)
            cache[key] = entry
        return entry

    def _question_tokens(self, name: str, texts: Sequence[str]) -> list[list[str]]:
        """Each question's tokens by tokenizer ``name``, remembered for this run."""
        memo: dict[str, list[str]] = self._cache.setdefault(("question tokens", name), {})
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing:
            parts = COMPOSED.get(name)
            if parts:
                lists = [self._question_tokens(part, missing) for part in parts]
                made = [list(chain.from_iterable(each)) for each in zip(*lists, strict=True)]
            elif name in WORD_MAPS:
                words = self._question_tokens("word", missing)
                flat, sizes = WORD_MAPS[name](list(chain.from_iterable(words)))
                ends = [0, *accumulate(sizes)]  # where each word's tokens end in flat
                made, at = [], 0
                for question in words:
                    made.append(flat[ends[at] : ends[at + len(question)]])
                    at += len(question)
            else:
                made = get_tokenizer(name).tokenize_many(missing)
            memo.update(zip(missing, made, strict=True))
        return [memo[t] for t in texts]

    def _load_counts(self, env: PrepareEnv, name: str) -> tuple[Sequence[str], TermCounts] | None:
        store = env.index_store
        if store is None or env.corpus_hash is None:
            return None
        record = store.term_counts(counts_key(name, self.fields), env.corpus_hash)
        return None if record is None else TermCounts.from_record(record)

    def _ready(self) -> tuple[BM25Index, Tokenizer]:
        if self._index is None or self._tokenizer is None:
            raise RuntimeError("prepare() must be called before ranking")
        return self._index, self._tokenizer

    def term_counts(self) -> tuple[Sequence[str], TermCounts]:
        """(doc ids, term counts) of the prepared corpus (what relevance feedback reads)."""
        self._ready()
        entry: tuple[Sequence[str], TermCounts] = self._cache[
            ("counts", self.tokenizer_name, self.fields)
        ]
        return entry

    def question_terms(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text's terms, as a question's are made."""
        self._ready()
        return self._question_tokens(self.tokenizer_name, texts)

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Rank the corpus for each question (the batch scored at once)."""
        return self.rank_batch(questions, depth).rankings()

    def rank_batch(
        self, questions: Sequence[Question], depth: int, helper: RankHelper | None = None
    ) -> RankedBatch:
        """:meth:`rank`'s rankings as arrays, for the runner to store as they are.

        A large batch is ranked by ``helper`` when one is given (:meth:`BM25Index.rank_flat`).
        """
        index, _ = self._ready()
        tokens = self._question_tokens(self.tokenizer_name, [q.text for q in questions])
        cols, vals, ends = index.rank_flat(tokens, self._id_rank, depth, helper)
        return RankedBatch(self._doc_ids, cols, vals, ends)

    def search(self, text: str, depth: int) -> Ranking:
        """Rank the corpus for one question."""
        index, tokenizer = self._ready()
        scores = canonical_scores(index.scores(tokenizer(text)))
        best = top_k(scores, self._id_rank, depth)
        ids = self._doc_ids
        return [ids[i] for i in best.tolist()], scores[best].tolist()


def counts_key(tokenizer: str, fields: Sequence[str]) -> str:
    """Where a corpus's term counts by ``tokenizer`` over ``fields`` are stored."""
    return sha256_text("bm25-counts", tokenizer, *fields)
