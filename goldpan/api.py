"""The Python API (see :mod:`goldpan`): evaluate, open, compare_to."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.ci.gate import GateRefused, Verdict, floor_verdict, regression_verdict
from engine.ci.holes import HoleWarning, hole_warnings
from engine.ci.snapshots import (
    MetricChange,
    Moved,
    SnapshotDiff,
    check_snapshot,
    diff_against,
    load_snapshot_file,
    take_snapshot,
)
from engine.errors import BadInput
from engine.retrieve import DEFAULT_DEPTH
from engine.retrieve.checked import checked_ranking
from engine.scoring import Scoreboard, metric_names, score_workspace
from engine.types import CachedRun
from engine.workspace import Workspace

Search = Callable[[str], Iterable[Any]]
"""``search(text)``: doc ids best first, or ``(doc_id, score)`` pairs."""


class TestSet:
    """A workspace opened read-only for evaluation (a context manager)."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, path: str | Path) -> None:
        """Open ``path`` read-only."""
        self.path = Path(path)
        self.workspace = Workspace.open(self.path, readonly=True)

    def close(self) -> None:
        """Close the workspace."""
        self.workspace.close()

    def __enter__(self) -> TestSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open(path: str | Path) -> TestSet:
    """Open a test set (a goldpan workspace file) read-only."""
    return TestSet(path)


def _ranking(found: Iterable[Any], known: set[str], question: str, depth: int) -> CachedRun:
    """What ``search(question)`` returned, as a ranking.

    ``(doc_id, score)`` pairs, or doc ids best first (scored by their order), held to the
    rule of every outside answer (:func:`~engine.retrieve.checked.checked_ranking`).
    """
    items = list(found)
    if items and all(isinstance(x, tuple | list) and len(x) == 2 for x in items):
        hits = [(f"item {i}", str(d), s) for i, (d, s) in enumerate(items)]
    else:
        hits = [(f"item {i}", str(d), float(len(items) - i)) for i, d in enumerate(items)]
    ids, values = checked_ranking(
        hits, depth, known, lambda what: BadInput(f"search({question!r}): {what}")
    )
    return CachedRun("", "", tuple(ids), tuple(values), 0.0, "", depth)


@dataclass
class Comparison:
    """What changed since a snapshot, for the evaluated search, and the gate's verdict."""

    diff: SnapshotDiff
    name: str
    """The snapshot's retriever it was compared with."""
    verdict: Verdict
    """The gate's verdict (:func:`engine.ci.gate.regression_verdict`); never refused here:
    :meth:`Evaluation.compare_to` raises instead."""
    texts: dict[str, str] = field(default_factory=dict)

    @property
    def regressed(self) -> list[Moved]:
        """The questions whose first-gold rank got worse (rank 0: gold not found)."""
        failed = {q.question for q in self.verdict.failed_questions().get(self.name, [])}
        return [m for m in self.diff.retrievers[self.name].regressed if m.question in failed]

    @property
    def improved(self) -> list[Moved]:
        """The questions whose first-gold rank got better."""
        return list(self.diff.retrievers[self.name].improved)

    @property
    def compared(self) -> list[str]:
        """The questions compared: scored both in the snapshot and now."""
        return self.verdict.compared().get(self.name, [])

    @property
    def warnings(self) -> list[HoleWarning]:
        """The gate's warning when the search's top 10 is little judged (:mod:`engine.ci.holes`)."""
        return [w for w in self.diff.warnings if w.retriever == self.name]

    @property
    def changes(self) -> dict[str, MetricChange]:
        """Each metric then and now over the questions compared, and the verdict on it.

        ``changes["mrr"].verdict.real``: whether the change is real (:mod:`engine.verdict`).
        """
        return dict(self.diff.retrievers[self.name].metrics)

    def report(self) -> str:
        """One line per regressed question: ranks, what ranks first now, the question."""
        return "\n".join(
            f"{m.question}: rank {m.rank_then or '-'} -> {m.rank_now or '-'}, ranked first "
            f"now: {m.winner or '-'}; {self.texts.get(m.question, '')}"
            for m in self.regressed
        )


@dataclass
class Evaluation:
    """A search function's scores on a test set: the scoreboard ``goldpan score`` prints."""

    board: Scoreboard
    name: str
    path: Path
    rankings: dict[str, CachedRun]
    """Question id -> the search's ranking."""
    texts: dict[str, str]

    @property
    def means(self) -> dict[str, float]:
        """Each metric's mean over the scored questions.

        Raises:
            GateRefused: no question of the test set is scored: a mean over none would
                read 0, and a floor asserted on it would be of nothing.
        """
        verdict = self.verdict()
        if verdict.refusals:
            raise GateRefused(verdict)
        means = self.board.retrievers[self.name].means
        assert means is not None  # the search was asked every question: none is unranked
        return dict(means)

    @property
    def warnings(self) -> list[HoleWarning]:
        """The gate's warning when the search's top 10 is little judged (:mod:`engine.ci.holes`).

        Under 0.8 Judged@10 on the scored questions, its lower scores are unknown, not worse.
        """
        return hole_warnings(self.board)

    def first_gold_rank(self) -> dict[str, int]:
        """Per scored question, the rank of its first gold document (0: not found)."""
        ranks = self.board.retrievers[self.name].first_gold_rank
        return {q: int(ranks[i]) for i, q in enumerate(self.board.question_ids)}

    def verdict(
        self,
        snapshot: str | Path | Mapping[str, Any] | None = None,
        *,
        retriever: str | None = None,
        k: int = 10,
    ) -> Verdict:
        """The gate's verdict: against ``snapshot`` (no question worse), else a gold in the top k.

        Never raises for a refusal: the verdict holds it (the pytest plugin presents it).
        """
        if snapshot is None:
            return floor_verdict(self.board, [], k=k)
        return self._against(snapshot, retriever or self.name)[1]

    def _against(
        self, snapshot: str | Path | Mapping[str, Any], name: str
    ) -> tuple[SnapshotDiff, Verdict]:
        snap = (
            check_snapshot(dict(snapshot), "the snapshot given")
            if isinstance(snapshot, Mapping)
            else load_snapshot_file(Path(snapshot))
        )
        with TestSet(self.path) as ts:
            diff = diff_against(ts.workspace, snap, given={name: self.rankings})
        return diff, regression_verdict(diff, named=[name], workspace=str(self.path))

    def compare_to(
        self, snapshot: str | Path | Mapping[str, Any], *, retriever: str | None = None
    ) -> Comparison:
        """Compare with a snapshot (a file from ``snapshot export`` or ``save_snapshot``).

        The search is compared with the snapshot's retriever ``retriever`` (default: the
        evaluation's name).

        Raises:
            GateRefused: nothing could be compared (the snapshot has no retriever of that
                name, or no question is scored both in it and now: another test set, the
                labels gone), so ``assert not worse.regressed`` can never pass on nothing.
            SnapshotError: the snapshot cannot be read or is not a goldpan snapshot.
        """
        name = retriever or self.name
        diff, verdict = self._against(snapshot, name)
        if verdict.refusals:
            raise GateRefused(verdict)
        return Comparison(diff, name, verdict, self.texts)

    def save_snapshot(self, path: str | Path, name: str = "accepted") -> Path:
        """Write these scores as a snapshot file for :meth:`compare_to` and ``--against``."""
        from engine.formats.outfiles import write_atomic

        with TestSet(self.path) as ts:
            data = take_snapshot(ts.workspace, name, given={self.name: self.rankings})
        text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        return write_atomic(Path(path), text, force=True, protect=[self.path])


def evaluate(
    search: Search,
    workspace: str | Path | TestSet,
    *,
    k: int | Sequence[int] = (1, 3, 5, 10),
    name: str = "search",
    depth: int = DEFAULT_DEPTH,
) -> Evaluation:
    """Run ``search`` on every question of the test set and score it.

    Args:
        search: ``search(text)`` -> doc ids best first, or ``(doc_id, score)`` pairs.
        workspace: the test set's path, or one opened with :func:`open`.
        k: the cutoffs of Hit@k and Recall@k.
        name: the retriever name the scores are kept under (and compared by).
        depth: how many of the search's documents are kept per question.

    Raises:
        BadInput: the search returned a document the test set does not have, or one twice.
    """
    ts = workspace if isinstance(workspace, TestSet) else TestSet(workspace)
    try:
        ws = ts.workspace
        known = set(ws.doc_ids())
        rankings: dict[str, CachedRun] = {}
        texts: dict[str, str] = {}
        for q in ws.questions():
            texts[q.id] = q.text
            t0 = time.perf_counter()
            found = search(q.text)
            ms = (time.perf_counter() - t0) * 1000.0
            r = _ranking(found, known, q.text, depth)
            rankings[q.id] = CachedRun(name, q.id, r.doc_ids, r.scores, ms, "", depth)
        ks = [k] if isinstance(k, int) else list(k)
        board = score_workspace(ws, metrics=metric_names(sorted(set(ks))), given={name: rankings})
        return Evaluation(board, name, ts.path, rankings, texts)
    finally:
        if ts is not workspace:
            ts.close()
