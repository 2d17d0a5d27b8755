"""A tokenized corpus's term counts, and how an index store keeps them.

:class:`TermRows` is a terms x documents matrix kept row by row (the posting lists);
:class:`TermCounts` holds a corpus's counts, made from tokens, from token counts, mapped
from another tokenizer's or joined from several, and written to and read from a stored
record (:meth:`TermCounts.to_record`, :meth:`TermCounts.from_record`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, count, repeat
from typing import Any, cast

import numpy as np

from engine.arrays import spans
from engine.retrieve.bm25.variants import DocIndices, FloatArray, IntArray
from engine.types import sha256_text


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


def counts_key(tokenizer: str, fields: Sequence[str]) -> str:
    """Where a corpus's term counts by ``tokenizer`` over ``fields`` are stored."""
    return sha256_text("bm25-counts", tokenizer, *fields)
