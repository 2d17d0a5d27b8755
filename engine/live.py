"""Live scores: per-question metric rows kept in memory, updated one question at a time.

The review screen must follow every label the moment it is made. Re-running retrievers
is never needed (rankings are cached) and re-scoring every question is wasteful: a label
changes one question's gold, so :meth:`LiveScores.update` recomputes that question's row
for every retriever (one :func:`~engine.metrics.judge` call for all of them) and the means
are re-averaged. The work of one label change is that one question's row: each column's
sum over the scored questions is kept exactly (as an integer count of 2**-1074, the
smallest float step), so a changed row is taken out and put back in without re-adding the
other questions, and the mean is the correctly rounded sum divided by the count, which is
:func:`engine.metrics.mean`'s ``math.fsum`` result bit for bit. The means therefore equal
:func:`engine.scoring.score_workspace` exactly.

A question a retriever has not ranked follows :mod:`engine.ranked`: while a retriever
that will rank it has not, it is scored by none (its row is in no sum); a retriever that
cannot rank now holds nothing out, and has no means (None) while it lacks a scored
question. When a retriever ranks its first question, or is found unable to rank
(:meth:`LiveScores.set_cannot_rank`), the rows of its unranked questions leave or join
the sums, one by one, as a label's row does.

Nothing is scored until a score is asked for: the questions, labeling and adjudicating
screens read only the gold, the counts and the rankings, so a session that never shows a
score never loads numpy (a tenth of a second of every app start) nor spends a label's
time on metric rows. The first score asked for scores every question at once, with the
gold and rankings as they are then, which gives the same rows and sums as scoring at the
start and updating after each label (the sums are exact).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.gold import Gold, Status, count_golds, is_scored
from engine.pooling import pooled_docs
from engine.ranked import holding

if TYPE_CHECKING:  # numpy loads with the first score asked for (see LiveScores)
    import numpy as np
    import numpy.typing as npt

    from engine.metrics import FloatArray, IntArray
    from engine.scoring import Latency

    BoolArray = npt.NDArray[np.bool_]

_SCALE = 1074
"""Every finite float is an integer multiple of 2**-1074."""


def _exact(value: float) -> int:
    """``value`` as an integer count of 2**-1074 (exact)."""
    num, den = value.as_integer_ratio()
    return num << (_SCALE - den.bit_length() + 1)


def _exact_mean(total: int, n: int) -> float:
    """``math.fsum`` of the values whose exact sum is ``total``, divided by ``n``."""
    if n == 0:
        return 0.0
    return (total / (1 << _SCALE)) / n  # int / int is correctly rounded, as fsum is


@dataclass(frozen=True)
class QuestionRow:
    """One question's line in the per-question grid."""

    question_id: str
    status: Status
    ranks: dict[str, int]
    """retriever -> rank of the first gold document (0 = not retrieved)."""
    top1: dict[str, str | None]
    """retriever -> the document it ranked first."""
    not_ranked: frozenset[str] = frozenset()
    """The retrievers that have not ranked it yet (:mod:`engine.ranked`): their ranks mean
    nothing. While one of them will rank it, the question is scored by none."""


class LiveScores:
    """Every retriever's per-question metrics over one workspace's cached rankings."""

    def __init__(
        self,
        question_ids: Sequence[str],
        golds: Mapping[str, Gold],
        rankings: Mapping[str, Mapping[str, Sequence[str]]],
        *,
        tags: Mapping[str, Sequence[str]] | None = None,
        latency: Mapping[str, Latency] | Callable[[], Mapping[str, Latency]] | None = None,
        metrics: Sequence[str] | None = None,
        not_ranked: Mapping[str, Collection[str]] | None = None,
        cannot_rank: Collection[str] = (),
    ) -> None:
        """Take the gold and rankings; the scores are computed when first asked for.

        Args:
            question_ids: every question of the workspace.
            golds: resolved gold by question id.
            rankings: retriever -> question id -> cached ranking (doc ids).
            tags: question id -> tags, for tag filters.
            latency: retriever -> its latency (one question alone, and throughput), or a
                function giving it on first use.
            metrics: metric names (default: those of ``goldpan score``).
            not_ranked: retriever -> the questions it has not ranked
                (:func:`engine.ranked.not_ranked`; default: none). A question one
                retriever that will rank it has not ranked is scored by none of them.
            cannot_rank: retrievers known not to rank now (not trusted here, failed):
                they hold no question out (:func:`engine.ranked.holding`).
        """
        self.question_ids = sorted(question_ids)
        self._row = {q: i for i, q in enumerate(self.question_ids)}
        self._metrics = list(metrics) if metrics else None
        self.retrievers = list(rankings)
        self.rankings = {r: dict(rankings[r]) for r in self.retrievers}
        self.tags = {q: tuple((tags or {}).get(q, ())) for q in self.question_ids}
        self._latency = latency
        self.golds: dict[str, Gold] = {}
        for q in self.question_ids:
            self.golds[q] = golds.get(q) or Gold(q, Status.UNLABELED)
        self.not_ranked: dict[str, frozenset[str]] = {}
        """Question id -> the retrievers that have not ranked it (only such questions)."""
        self._unranked: dict[str, set[str]] = {}
        """Retriever -> the questions it has not ranked (:attr:`not_ranked` turned)."""
        for r, qids in (not_ranked or {}).items():
            for q in qids:
                if q in self._row:
                    self.not_ranked[q] = self.not_ranked.get(q, frozenset()) | {r}
                    self._unranked.setdefault(r, set()).add(q)
        self._with_rankings = {r for r in self.retrievers if self.rankings[r]}
        """The retrievers with a cached ranking of some question (made for any inputs)."""
        self.cannot_rank = frozenset(cannot_rank)
        """Retrievers known not to rank now (:meth:`set_cannot_rank`)."""
        self.holding = self._holding()
        """The retrievers that will rank their unranked questions: those questions are
        scored by none until they do (:func:`engine.ranked.holding`)."""
        self._scored_once = False
        self._pools: dict[int, dict[str, frozenset[str]]] = {}
        """Depth -> question id -> its pool (dropped for a question ranked again)."""

    @property
    def metrics(self) -> list[str]:
        """The metric names scored (default: those of ``goldpan score``)."""
        if self._metrics is None:
            from engine.scoring import metric_names

            self._metrics = metric_names()
        return self._metrics

    @property
    def latency(self) -> dict[str, Latency]:
        """Retriever -> its latency (read on first use)."""
        if callable(self._latency):
            self._latency = dict(self._latency())
        elif not isinstance(self._latency, dict):
            self._latency = dict(self._latency or {})
        return self._latency

    @latency.setter
    def latency(self, value: Mapping[str, Latency] | Callable[[], Mapping[str, Latency]]) -> None:
        """New latencies, or a function giving them on next use (rankings were timed)."""
        self._latency = value if callable(value) else dict(value)

    def _score(self) -> None:
        """Score every question once, for every retriever (on the first score asked for)."""
        if self._scored_once:
            return
        import numpy as np

        from engine.metrics import parse_metric

        self._parsed = [parse_metric(m) for m in self.metrics]
        n = len(self.question_ids)
        self._scored = np.zeros(n, dtype=bool)
        self._values = {r: np.zeros((n, len(self.metrics))) for r in self.retrievers}
        self._first = {r: np.zeros(n, dtype=np.int64) for r in self.retrievers}
        self._scored[:] = [self._is_scored(q) for q in self.question_ids]
        gold_list = [self.golds[q].qrels for q in self.question_ids]
        for r in self.retrievers:
            ranks = [list(self.rankings[r].get(q, ())) for q in self.question_ids]
            self._fill(r, slice(None), ranks, gold_list)
        self._sums: dict[str, list[int]] = {}
        for r in self.retrievers:
            scored = self._values[r][self._scored]
            self._sums[r] = [
                sum(_exact(v) for v in scored[:, k].tolist()) for k in range(len(self.metrics))
            ]
        self._scored_once = True

    def _is_scored(self, question_id: str) -> bool:
        """:func:`engine.gold.is_scored`: gold, and no retriever that will rank it has not."""
        waiting = self.not_ranked.get(question_id)
        return is_scored(self.golds[question_id], not (waiting and waiting & self.holding))

    def _holding(self) -> frozenset[str]:
        return frozenset(holding(self._unranked, self._with_rankings, self.cannot_rank))

    def _hold_again(self) -> None:
        """Which retrievers hold their questions out may have changed: move those rows.

        A retriever ranked its first question, or is known not to rank now: each of its
        unranked questions whose scoring flips leaves or joins every retriever's sums.
        """
        before, self.holding = self.holding, self._holding()
        if before == self.holding or not self._scored_once:
            return
        moved = {q for r in before ^ self.holding for q in self._unranked.get(r, ())}
        for q in moved:
            i = self._row[q]
            now = self._is_scored(q)
            if now != bool(self._scored[i]):
                self._take_out(i, self.retrievers)
                self._scored[i] = now
                self._put_back(i, self.retrievers)

    def set_cannot_rank(self, names: Collection[str]) -> None:
        """The retrievers known not to rank now: they hold no question out any more."""
        self.cannot_rank = frozenset(names)
        self._hold_again()

    def _take_out(self, i: int, retrievers: Sequence[str]) -> None:
        """Remove row ``i`` from the column sums (before it changes)."""
        if self._scored[i]:
            for r in retrievers:
                sums = self._sums[r]
                for k, v in enumerate(self._values[r][i].tolist()):
                    sums[k] -= _exact(v)

    def _put_back(self, i: int, retrievers: Sequence[str]) -> None:
        """Add row ``i`` to the column sums (after it changed)."""
        if self._scored[i]:
            for r in retrievers:
                sums = self._sums[r]
                for k, v in enumerate(self._values[r][i].tolist()):
                    sums[k] += _exact(v)

    def _fill(
        self,
        retriever: str,
        rows: slice | int,
        ranks: list[list[str]],
        gold: Sequence[Mapping[str, int]],
    ) -> None:
        import numpy as np

        from engine.metrics import first_relevant_rank, judge
        from engine.metrics import per_question as metric_values

        j = judge(ranks, gold)
        cols = [metric_values(j, m) for m in self._parsed]
        values: FloatArray = np.column_stack(cols) if cols else np.zeros((len(ranks), 0))
        first: IntArray = first_relevant_rank(j)
        if isinstance(rows, int):
            self._values[retriever][rows] = values[0]
            self._first[retriever][rows] = first[0]
        else:
            self._values[retriever][rows] = values
            self._first[retriever][rows] = first

    def update(self, gold: Gold) -> None:
        """A question's gold changed: recompute its row for every retriever."""
        i = self._row.get(gold.question_id)
        if i is None:
            raise KeyError(f"unknown question {gold.question_id!r}")
        if not self._scored_once:  # scored with the rest when a score is first asked for
            self.golds[gold.question_id] = gold
            return
        self._take_out(i, self.retrievers)
        self.golds[gold.question_id] = gold
        self._scored[i] = self._is_scored(gold.question_id)
        if self.retrievers:
            rankings = [list(self.rankings[r].get(gold.question_id, ())) for r in self.retrievers]
            self._fill_all(i, rankings, gold)
        self._put_back(i, self.retrievers)

    def _fill_all(self, i: int, rankings: list[list[str]], gold: Gold) -> None:
        """Row ``i`` of every retriever at once (one judge call for all of them)."""
        import numpy as np

        from engine.metrics import first_relevant_rank, judge
        from engine.metrics import per_question as metric_values

        j = judge(rankings, [gold.qrels] * len(rankings))
        cols = [metric_values(j, m) for m in self._parsed]
        values: FloatArray = np.column_stack(cols) if cols else np.zeros((len(rankings), 0))
        first: IntArray = first_relevant_rank(j)
        for n, r in enumerate(self.retrievers):
            self._values[r][i] = values[n]
            self._first[r][i] = first[n]

    def pools(self, k: int) -> dict[str, frozenset[str]]:
        """Each question's pool at depth ``k``: the union of every retriever's top ``k``.

        Made once per question and kept until the question is ranked again: handing out
        the next question ranks the judging queue, and gathering 8 retrievers' top 10 for
        1,000 questions each time took most of its 70 ms.
        """
        pools = self._pools.setdefault(k, {})
        if len(pools) != len(self.question_ids):
            for q in self.question_ids:
                if q not in pools:
                    pools[q] = pooled_docs(self.rankings, q, k)
        return pools

    def set_ranking(
        self,
        retriever: str,
        question_id: str,
        ranking: Sequence[str] | None,
        ranked: bool = True,
    ) -> None:
        """A question was (re)pooled: take its new ranking and rescore its row.

        ``ranking``: None when the retriever has no cached ranking of it. ``ranked``:
        whether the ranking is one of the question's inputs now (:mod:`engine.ranked`); a
        question a retriever that will rank it has not ranked is scored by none, so its
        row leaves (or joins) every retriever's sums.
        """
        if ranking is None:
            self.rankings[retriever].pop(question_id, None)
        else:
            self.rankings[retriever][question_id] = list(ranking)
            self._with_rankings.add(retriever)
        for pools in self._pools.values():
            pools.pop(question_id, None)
        i = self._row[question_id]
        by = self.not_ranked.get(question_id, frozenset()) - {retriever}
        unranked = self._unranked.setdefault(retriever, set())
        if ranked:
            unranked.discard(question_id)
        else:
            by |= {retriever}
            unranked.add(question_id)
        if by:
            self.not_ranked[question_id] = by
        else:
            self.not_ranked.pop(question_id, None)
        if self._scored_once:
            self._take_out(i, self.retrievers)
            self._scored[i] = self._is_scored(question_id)
            self._fill(retriever, i, [list(ranking or ())], [self.golds[question_id].qrels])
            self._put_back(i, self.retrievers)
        self._hold_again()

    def _mask(self, tag: str | None) -> BoolArray:
        import numpy as np

        self._score()
        if tag is None:
            return self._scored
        has = np.array([tag in self.tags[q] for q in self.question_ids], dtype=bool)
        out: BoolArray = self._scored & has
        return out

    def _lacking(self, retriever: str, mask: BoolArray) -> Iterator[str]:
        """The questions of ``mask`` ``retriever`` has not ranked and cannot rank now."""
        if retriever in self.holding:
            return  # it will: they are scored by none meanwhile
        row = self._row
        yield from (q for q in self._unranked.get(retriever, ()) if mask[row[q]])

    def lacks(self, retriever: str, tag: str | None = None) -> int:
        """How many scored questions (with ``tag``) ``retriever`` cannot rank now and lacks.

        While there is any, it has no means (None in :meth:`means`).
        """
        return sum(1 for _ in self._lacking(retriever, self._mask(tag)))

    def means(self, tag: str | None = None) -> dict[str, dict[str, float] | None]:
        """Each retriever's mean of each metric over the scored questions (with ``tag``).

        None for a retriever that :meth:`lacks` some of them.
        """
        from engine.metrics import mean

        mask = self._mask(tag)
        out: dict[str, dict[str, float] | None] = {}
        n = int(self._scored.sum())
        for r in self.retrievers:
            if any(self._lacking(r, mask)):
                out[r] = None
            elif tag is None:  # the kept exact sums: no question is added again
                out[r] = {m: _exact_mean(self._sums[r][k], n) for k, m in enumerate(self.metrics)}
            else:
                v = self._values[r][mask]
                out[r] = {m: mean(v[:, k]) for k, m in enumerate(self.metrics)}
        return out

    def values(
        self, retriever: str, metric: str, tag: str | None = None
    ) -> tuple[list[str], FloatArray]:
        """Per-question values of one metric over the scored questions (with ``tag``).

        NaN on a question the retriever :meth:`lacks`.
        """
        mask = self._mask(tag)
        k = self.metrics.index(metric)
        ids = [q for q, keep in zip(self.question_ids, mask.tolist(), strict=True) if keep]
        values = self._values[retriever][mask, k].copy()
        lacking = set(self._lacking(retriever, mask))
        if lacking:
            values[[i for i, q in enumerate(ids) if q in lacking]] = float("nan")
        return ids, values

    def means_for(self, question_ids: Sequence[str]) -> dict[str, dict[str, float] | None]:
        """Means over a subset of questions (only the scored ones among them count).

        None for a retriever that :meth:`lacks` some of them.
        """
        import numpy as np

        from engine.metrics import mean

        self._score()
        wanted = set(question_ids)
        mask = self._scored & np.array([q in wanted for q in self.question_ids], dtype=bool)
        return {
            r: None
            if any(self._lacking(r, mask))
            else {m: mean(self._values[r][mask][:, k]) for k, m in enumerate(self.metrics)}
            for r in self.retrievers
        }

    def held(self) -> set[str]:
        """The questions a retriever that will rank them has not ranked yet.

        Scored by no retriever until then, counted as ``not_ranked`` (their candidates are
        still to come).
        """
        return {q for r in self.holding for q in self._unranked.get(r, ())}

    def counts(self, tag: str | None = None) -> dict[str, int]:
        """How many questions (with ``tag``) fall in each :data:`engine.gold.COUNT_KEYS`."""
        return count_golds(
            (self.golds[q] for q in self.question_ids if tag is None or tag in self.tags[q]),
            self.held(),
        )

    def unranked(self) -> list[str]:
        """Every question some retriever has not ranked yet (any status), in id order."""
        return sorted(self.not_ranked)

    def rows(self, tag: str | None = None) -> list[QuestionRow]:
        """Scored questions, hardest first: most retrievers missing, then worst ranks.

        Then the questions with gold that are not scored because a retriever that will
        rank them has not yet, in id order (:attr:`QuestionRow.not_ranked` says which
        retrievers of a row have not ranked it; their cells are no miss).
        """
        import numpy as np

        mask = self._mask(tag)
        held = self.held()
        waiting = np.array(  # with gold: scored once ranked
            [q in held and is_scored(self.golds[q]) for q in self.question_ids],
            dtype=bool,
        )
        if tag is not None:
            waiting &= np.array([tag in self.tags[q] for q in self.question_ids], dtype=bool)
        out: list[QuestionRow] = []
        later: list[QuestionRow] = []
        for i in (mask | waiting).nonzero()[0].tolist():
            q = self.question_ids[i]
            ranks = {r: int(self._first[r][i]) for r in self.retrievers}
            top1: dict[str, str | None] = {}
            for r in self.retrievers:
                ranking = self.rankings[r].get(q)
                top1[r] = ranking[0] if ranking else None
            row = QuestionRow(
                q, self.golds[q].status, ranks, top1, self.not_ranked.get(q, frozenset())
            )
            (out if mask[i] else later).append(row)

        def hardness(row: QuestionRow) -> tuple[int, float, str]:
            ranks = [v for r, v in row.ranks.items() if r not in row.not_ranked]
            missed = sum(1 for v in ranks if v == 0)
            rr = sum(1.0 / v for v in ranks if v > 0)
            return (-missed, rr, row.question_id)

        out.sort(key=hardness)
        return out + later

    def all_tags(self) -> list[str]:
        """Every tag used by some question, sorted."""
        return sorted({t for ts in self.tags.values() for t in ts})
