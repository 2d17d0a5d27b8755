"""Pooling: the union of every retriever's top documents, in a blinded order.

The annotator judges one candidate list per question: the top ``depth`` documents of each
retriever's cached ranking, merged. Provenance (which retriever ranked a document, and
where) is kept for the review screen, but the order shown to the annotator reveals
neither: candidates are sorted by a hash of (question id, doc id), which is stable across
sessions and unrelated to any retriever's ranking (TREC pooling practice: judges should
not know which system found a document or how high).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import count

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


def only_found_by(candidates: Sequence[Candidate], retriever: str) -> list[str]:
    """Doc ids that only ``retriever`` put in its top k (what it adds to the pool)."""
    return [c.doc_id for c in candidates if set(c.ranks) == {retriever}]


def only_found(
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    question_ids: Sequence[str],
    depth: int = DEFAULT_POOL_DEPTH,
) -> dict[str, list[tuple[str, str]]]:
    """Per retriever, the (question id, doc id) pairs only it put in its top ``depth``.

    ``rankings`` is retriever name -> question id -> doc ids in rank order (a question a
    retriever has no ranking of counts as an empty one). The same pairs as
    :func:`only_found_by` over each question's :func:`pool`, without the blinded order.
    """
    import numpy as np  # only the pool's report gets here, never a labeling screen

    names = list(rankings)
    out: dict[str, list[tuple[str, str]]] = {name: [] for name in names}
    # every retriever's top of every question, flat: retriever-major, then question, rank
    docs: list[str] = []
    sizes: list[int] = []
    for name in names:
        by_q = rankings[name]
        for qid in question_ids:
            top = by_q.get(qid, ())[:depth]
            docs.extend(top)
            sizes.append(len(top))
    if not docs:
        return out
    n_q, n_r = len(question_ids), len(names)
    code_of: dict[str, int] = {}  # a document's code: where it first appears in docs
    code = np.fromiter(map(code_of.setdefault, docs, count()), dtype=np.int64, count=len(docs))
    group = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)  # retriever * n_q + question
    retriever, question = np.divmod(group, n_q)
    # sorted by (question, document, retriever), each in flat order (stable): a run of
    # equal keys is one retriever's repeats of one document in one top, its first the
    # place that counts; a pair (question, document) whose run holds one key, one finder
    key = (question * len(docs) + code) * n_r + retriever
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    new_key = np.ones(ordered.size, dtype=bool)
    new_key[1:] = ordered[1:] != ordered[:-1]
    pair = ordered // n_r
    new_pair = np.ones(ordered.size, dtype=bool)
    new_pair[1:] = pair[1:] != pair[:-1]
    run = np.cumsum(new_pair) - 1
    finders = np.bincount(run, weights=new_key)
    alone = np.sort(order[new_key & (finders[run] == 1)])  # flat order: retriever, question, rank
    lists = [out[name] for name in names]
    for at, r, q in zip(
        alone.tolist(), retriever[alone].tolist(), question[alone].tolist(), strict=True
    ):
        lists[r].append((question_ids[q], docs[at]))
    return out
