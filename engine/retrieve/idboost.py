"""Id-aware re-ranking: documents whose number the question names go first.

A user who types ``0137`` means ``TD-2024-0137``, but a tokenizer that keeps the number
whole never matches the fragment (the seed's doc-number failure). This kind reads a base
retriever's ranking and puts first every document of the corpus whose number *ends with*
a number-like fragment of the question, by groups: ``0137``, ``2024-0137`` and
``td-2024-0137`` all name ``TD-2024-0137``; ``2024`` alone names no document (it is a
year far more often than a number's tail).

A document's numbers are its ``number`` field (a string or a list) and the number-like
tokens of its id or title that have two groups or more (``TD-2024-0137``; a bare ``2024``
in a title is a year). A number-like token is a run of letters and digits joined by
``-``, ``_``, ``.`` or ``/`` with at least one group of three or more digits.

With ``latest`` on, a question that asks for the current version (현재, 최신, 현행, 지금,
최근, current, latest, newest) and names no number gets, for each document series in its
ranking, that series' latest version (highest ``version``, then ``date``) moved up to the
place of the series' first document. The latest version is chosen among the series'
documents that have a ``version`` field: a series without versions has no "current one".

Scores: the output is a reordering, so its scores are rank positions (``n - i`` for the
i-th of n documents), strictly decreasing: trec_eval re-sorts an exported run into the
same order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from engine.retrieve.base import PrepareEnv, Ranking, one_base
from engine.retrieve.params import OF, Param, default_of
from engine.types import Doc, Question, RetrieverSpec

NUMBER = re.compile(r"[0-9a-z]+(?:[-_./][0-9a-z]+)*", re.IGNORECASE)
GROUP_SPLIT = re.compile(r"[-_./]")
DIGITS = re.compile(r"[0-9]{3,}")
CURRENT_WORDS = ("현재", "최신", "현행", "지금", "최근", "current", "latest", "newest")


def number_groups(text: str) -> list[tuple[str, ...]]:
    """The number-like tokens of ``text``, each as lowercase groups."""
    out = []
    for m in NUMBER.finditer(text):
        token = m.group(0).lower()
        groups = tuple(g for g in GROUP_SPLIT.split(token) if g)
        if any(DIGITS.search(g) for g in groups):
            out.append(groups)
    return out


def _version_key(value: Any) -> tuple[Any, ...]:
    """Natural order of version strings: R2 < R10, v1.9 < v1.10."""
    parts = re.findall(r"\d+|[^\d]+", str(value).lower())
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


class IdBoostRetriever:
    """A base retriever's ranking with the documents the question names first."""

    PARAMS: tuple[Param, ...] = (
        OF,
        Param("latest", bool, False, "prefer a series' latest version"),
    )
    """The parameters of the ``idboost`` kind."""

    bases: tuple[str, ...]
    base_depth: int | None = None
    batch_size = 1

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate ``of`` (one base) and ``latest``."""
        self.spec = spec
        self.bases = one_base(spec.params, "idboost")
        self.latest = bool(spec.params.get("latest", default_of(self.PARAMS, "latest")))
        self._suffixes: dict[tuple[str, ...], set[str]] = {}
        self._series: dict[str, str] = {}
        self._latest_of: dict[str, str] = {}

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Index every suffix of every document number, and each series' latest document."""
        suffixes: dict[tuple[str, ...], set[str]] = {}
        for d in docs:
            raw = d.fields.get("number")
            numbers = [str(n) for n in raw] if isinstance(raw, list) else [str(raw or "")]
            groups = [g for text in numbers for g in number_groups(text)]
            groups += [g for text in (d.id, d.title) for g in number_groups(text) if len(g) > 1]
            for g in groups:
                for i in range(len(g)):
                    if any(DIGITS.search(x) for x in g[i:]):
                        suffixes.setdefault(g[i:], set()).add(d.id)
        self._suffixes = suffixes
        best: dict[str, tuple[tuple[Any, ...], str, str]] = {}
        self._series = {}
        for d in docs:
            series = d.fields.get("series")
            if not series:
                continue
            self._series[d.id] = str(series)
            if not d.fields.get("version"):
                continue
            key = (_version_key(d.fields.get("version", "")), str(d.fields.get("date", "")), d.id)
            if str(series) not in best or key > best[str(series)]:
                best[str(series)] = key
        self._latest_of = {s: k[2] for s, k in best.items()}

    def named(self, text: str) -> set[str]:
        """Documents whose number ends with a number-like fragment of ``text``."""
        out: set[str] = set()
        for groups in number_groups(text):
            out |= self._suffixes.get(groups, set())
        return out

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Re-rank each question's base ranking."""
        name = self.bases[0]
        return [
            self.rerank(q.text, b.get(name, ([], [])), depth)
            for q, b in zip(questions, base, strict=True)
        ]

    def rerank(self, text: str, ranking: Ranking, depth: int) -> Ranking:
        """One question: named documents first (in base order, then doc id descending)."""
        ids = list(ranking[0])
        named = self.named(text)
        if named:
            pos = {d: i for i, d in enumerate(ids)}
            first = sorted(named, key=lambda d: (pos.get(d, len(ids)), _desc(d)))
            ids = first + [d for d in ids if d not in named]
        elif self.latest and any(w in text.lower() for w in CURRENT_WORDS):
            ids = self._latest_first(ids)
        ids = ids[:depth]
        n = len(ids)
        return ids, [float(n - i) for i in range(n)]

    def _latest_first(self, ids: list[str]) -> list[str]:
        out: list[str] = []
        placed: set[str] = set()
        for d in ids:
            series = self._series.get(d)
            if series is not None and series not in placed:
                placed.add(series)
                latest = self._latest_of.get(series)
                if latest is not None and latest not in out:
                    out.append(latest)
            if d not in out:
                out.append(d)
        return out


def _desc(doc_id: str) -> tuple[int, ...]:
    """A key that sorts doc ids in descending code-point order."""
    return tuple(-ord(c) for c in doc_id) + (1,)
