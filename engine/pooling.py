"""Pooling: the union of every retriever's top documents.

The annotator judges one candidate list per question: the top ``depth`` documents of each
retriever's cached ranking, merged. Provenance (which retriever ranked a document, and
where) is kept for the review screen, but never shown to the annotator (TREC pooling
practice: judges should not know which system found a document or how high). :func:`pool`
sorts the candidates by a hash of (question id, doc id), stable and unrelated to any
ranking: the ``hash`` judging order; the Label screen shows them in the workspace's
judging order (:mod:`engine.judging.order`), which puts likely gold first and stays blind.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import count, repeat
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt

DEFAULT_POOL_DEPTH = 10
"""How many of each retriever's top documents are pooled for judging."""

DEFAULT_DEPTH = 100
"""How deep each retriever's ranking is cached (re-exported by :mod:`engine.retrieve`;
here so that the CLI's options can show it without importing the retrievers)."""


@dataclass(frozen=True)
class Candidate:
    """A pooled document and where each retriever ranked it."""

    doc_id: str
    ranks: Mapping[str, int] = field(default_factory=dict)
    """retriever name -> 1-based rank (only retrievers that found it in their top k)."""
    added_by_search: bool = False
    """Not in any retriever's top k: the annotator found it with corpus search."""
    found_by_feedback: bool = False
    """Proposed beyond the pool by relevance feedback (never shown: judged blind)."""


def blind_key(question_id: str, doc_id: str) -> str:
    """The blinded sort key of a candidate: a hash, stable and rank-free."""
    return hashlib.sha256(f"{question_id}\0{doc_id}".encode()).hexdigest()


def pooled_docs(
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    question_id: str,
    k: int = DEFAULT_POOL_DEPTH,
) -> frozenset[str]:
    """A question's pool: the union of every retriever's top ``k`` for it."""
    pooled: set[str] = set()
    for per_question in rankings.values():
        pooled.update(per_question.get(question_id, ())[:k])
    return frozenset(pooled)


def pool(
    question_id: str,
    rankings: Mapping[str, Sequence[str]],
    depth: int = DEFAULT_POOL_DEPTH,
    extra: Sequence[str] = (),
) -> list[Candidate]:
    """Pool the top ``depth`` of each ranking (retriever name -> doc ids in rank order).

    ``extra`` adds documents the annotator judged outside the pool (found by corpus
    search), so that every judged document stays visible. The result is in blinded order.
    """
    ranks: dict[str, dict[str, int]] = {}
    for name, ranking in rankings.items():
        for rank, doc in enumerate(ranking[:depth], start=1):
            ranks.setdefault(doc, {})[name] = rank
    out = [Candidate(doc, r) for doc, r in ranks.items()]
    out.extend(Candidate(doc, {}, True) for doc in dict.fromkeys(extra) if doc not in ranks)
    out.sort(key=lambda c: blind_key(question_id, c.doc_id))
    return out


class TopDocs(Mapping[str, tuple[str, ...]]):
    """Each question's top doc ids, as a pool just ranked them: question id -> doc ids.

    A batched retriever's tops are kept as it ranked them, positions in the corpus's ids
    end to end (:meth:`add_ranked`): no string per entry is made unless a question's top
    is read, and :func:`only_found` reads the positions themselves. Others add one
    question's top at a time (:meth:`add`).
    """

    def __init__(self) -> None:
        """No question yet."""
        self._parts: list[tuple[list[str], Sequence[str], Any, Any]] = []
        self._where: dict[str, tuple[int, int]] = {}  # question -> (part, row)
        self._one: dict[str, tuple[str, ...]] = {}

    def add_ranked(
        self,
        question_ids: Sequence[str],
        doc_ids: Sequence[str],
        cols: npt.NDArray[Any],
        ends: npt.NDArray[Any],
    ) -> None:
        """Questions' tops as positions: question i's are ``doc_ids[cols[ends[i-1]:ends[i]]]``.

        Raises:
            ValueError: a question has a top here already (a pool ranks each once).
        """
        ids = list(question_ids)
        if (
            len(set(ids)) != len(ids)
            or not self._where.keys().isdisjoint(ids)
            or not self._one.keys().isdisjoint(ids)
        ):
            raise ValueError("a question's top was added twice")
        part = len(self._parts)
        self._where.update(zip(ids, zip(repeat(part), range(len(ids))), strict=False))
        self._parts.append((ids, doc_ids, cols, ends))

    def add(self, question_id: str, doc_ids: Sequence[str]) -> None:
        """One question's top.

        Raises:
            ValueError: the question has a top here already (a pool ranks each once).
        """
        if question_id in self:
            raise ValueError(f"{question_id}'s top was added twice")
        self._one[question_id] = tuple(doc_ids)

    def __getitem__(self, question_id: str) -> tuple[str, ...]:
        """The question's top doc ids, in rank order."""
        found = self._one.get(question_id)
        if found is not None:
            return found
        part, row = self._where[question_id]
        _, doc_ids, cols, ends = self._parts[part]
        start = int(ends[row - 1]) if row else 0
        return tuple(doc_ids[c] for c in cols[start : int(ends[row])].tolist())

    def __contains__(self, question_id: object) -> bool:
        """Whether the question has a top here."""
        return question_id in self._where or question_id in self._one

    def covers(self, question_ids: Sequence[str]) -> bool:
        """Whether every one of ``question_ids`` has a top here."""
        missing = set(question_ids) - self._where.keys()
        return not missing or missing <= self._one.keys()

    def __iter__(self) -> Iterator[str]:
        """The question ids."""
        yield from self._where
        yield from self._one

    def __len__(self) -> int:
        """How many questions have a top here."""
        return len(self._where) + len(self._one)

    def ranked_parts(self) -> list[tuple[list[str], Sequence[str], Any, Any]]:
        """The tops kept as positions: (question ids, corpus ids, positions, ends) each."""
        return self._parts

    def single(self) -> dict[str, tuple[str, ...]]:
        """The tops added one question at a time."""
        return self._one


def only_found(
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    question_ids: Sequence[str],
    depth: int = DEFAULT_POOL_DEPTH,
) -> dict[str, list[tuple[str, str]]]:
    """Per retriever, the (question id, doc id) pairs only it put in its top ``depth``.

    ``rankings`` is retriever name -> question id -> doc ids in rank order (a question a
    retriever has no ranking of counts as an empty one). The same pairs as the candidates
    of each question's :func:`pool` ranked by that retriever alone, each retriever's sorted
    (by question id, then doc id). A :class:`TopDocs` is read as the positions it keeps
    (no doc id string per entry).
    """
    import numpy as np  # only the pool's report gets here, never a labeling screen

    from engine.arrays import spans

    names = list(rankings)
    out: dict[str, list[tuple[str, str]]] = {name: [] for name in names}
    n_r = len(names)
    index_of = {q: i for i, q in enumerate(question_ids)}
    # every doc id a code (unique, not dense: where the counter stood when first seen)
    code_of: dict[str, int] = {}
    counter = count()
    remapped: dict[int, Any] = {}  # id(corpus ids) -> their codes: BM25's share one list
    codes: list[Any] = []
    questions: list[Any] = []
    retrievers: list[Any] = []
    for r, name in enumerate(names):
        by_q = rankings[name]
        q_parts: list[Any] = []
        c_parts: list[Any] = []
        loose: Mapping[str, Sequence[str]] = by_q
        if isinstance(by_q, TopDocs):
            loose = by_q.single()
            for qids, doc_ids, cols, ends in by_q.ranked_parts():
                mine = np.fromiter(map(index_of.get, qids, repeat(-1)), np.int64, len(qids))
                at = np.flatnonzero(mine >= 0)  # only the questions asked about
                if not at.size:
                    continue
                remap = remapped.get(id(doc_ids))
                if remap is None:
                    remap = np.fromiter(map(code_of.setdefault, doc_ids, counter), dtype=np.int64)
                    remapped[id(doc_ids)] = remap
                starts = np.where(at > 0, ends[np.maximum(at - 1, 0)], 0)
                sizes = np.minimum(ends[at] - starts, depth)
                c_parts.append(remap[cols[spans(starts, sizes)]])
                q_parts.append(np.repeat(mine[at], sizes))
        docs: list[str] = []
        sizes_loose: list[int] = []
        at_q: list[int] = []
        for qid in question_ids if loose else ():
            top = loose.get(qid, ())[:depth]  # none: an empty top, which adds nothing
            if top:
                docs.extend(top)
                sizes_loose.append(len(top))
                at_q.append(index_of[qid])
        if docs:
            c_parts.append(np.fromiter(map(code_of.setdefault, docs, counter), np.int64, len(docs)))
            q_parts.append(np.repeat(np.array(at_q, dtype=np.int64), sizes_loose))
        if c_parts:
            codes.append(np.concatenate(c_parts))
            questions.append(np.concatenate(q_parts))
            retrievers.append(np.full(codes[-1].size, r, dtype=np.int64))
    if not codes or not sum(c.size for c in codes):
        return out
    code = np.concatenate(codes)
    question = np.concatenate(questions)
    retriever = np.concatenate(retrievers)
    span = next(counter)  # above every code
    # sorted by (question, document, retriever), each in flat order (stable): a run of
    # equal keys is one retriever's repeats of one document in one top, its first the
    # place that counts; a pair (question, document) whose run holds one key, one finder
    key = (question * span + code) * n_r + retriever
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    new_key = np.ones(ordered.size, dtype=bool)
    new_key[1:] = ordered[1:] != ordered[:-1]
    pair = ordered // n_r
    new_pair = np.ones(ordered.size, dtype=bool)
    new_pair[1:] = pair[1:] != pair[:-1]
    run = np.cumsum(new_pair) - 1
    finders = np.bincount(run, weights=new_key)
    alone = order[new_key & (finders[run] == 1)]
    # sorted by retriever, then question id and doc id as strings: each part is ranked
    # once (the questions, the distinct documents), the pairs by those ranks
    q_rank = np.empty(len(question_ids), dtype=np.int64)
    q_rank[sorted(range(len(question_ids)), key=question_ids.__getitem__)] = np.arange(
        len(question_ids)
    )
    by_name = sorted(code_of.items())
    d_rank = np.zeros(span, dtype=np.int64)
    d_rank[np.fromiter((c for _, c in by_name), np.int64, len(by_name))] = np.arange(len(by_name))
    doc_rank = d_rank[code[alone]]
    sorted_pairs = np.lexsort((doc_rank, q_rank[question[alone]], retriever[alone]))
    alone, doc_rank = alone[sorted_pairs], doc_rank[sorted_pairs]
    names_sorted = [d for d, _ in by_name]
    qs = list(map(question_ids.__getitem__, question[alone].tolist()))
    ds = list(map(names_sorted.__getitem__, doc_rank.tolist()))
    bounds = np.searchsorted(retriever[alone], np.arange(n_r + 1)).tolist()
    for r, name in enumerate(names):
        a, b = bounds[r], bounds[r + 1]
        out[name] = list(zip(qs[a:b], ds[a:b], strict=True))
    return out
