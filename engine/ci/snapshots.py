"""Snapshots of the scores, and what changed since one: the test set as a unit-test suite.

A snapshot stores, for every retriever, each scored question's first-gold rank, the
document it ranked first and every metric value, together with the label state those
numbers were computed on (the gold of each scored question) and each retriever's
configuration. :func:`diff_against` then compares the scores now with a snapshot:

* per retriever and metric, the mean now and then and their difference, with a paired
  bootstrap 95% interval, a randomization p-value and the verdict of
  :mod:`engine.verdict` (:func:`metric_changes`, the same seeded resamples and sign flips
  for every retriever and metric), all over the questions scored both now and then
  (:func:`paired_questions`; a question not ranked yet is not scored now, see
  :mod:`engine.ranked`): a paired comparison needs the same questions; ``only_now``,
  ``only_then`` and ``not_ranked`` list the others;
* the questions whose first-gold rank got worse (``regressed``) or better (``improved``),
  with both ranks and the document that now ranks first; a rank of 0 means no gold in the
  cached ranking (worse than any rank, :mod:`engine.ranks`).

Whether that passes a gate is :mod:`engine.ci.gate`'s to say (the tolerance, what must have
been compared).

Each moved question says **why** (``cause``): ``retriever`` when its gold is unchanged
(the ranking moved), ``labels`` when the gold changed and the current ranking scored
against the old gold gives the old rank (only the labels moved), ``both`` otherwise.

The document format (the ``snapshots.data`` column and ``snapshot export`` files)::

    {"goldpan_snapshot": 1, "name", "created", "metrics": [...],
     "golds": {question: {doc: grade}},
     "retrievers": {R: {"kind", "params", "hash",
                        "questions": {question: {"rank", "top", "values": {metric: v}}},
                        "not_ranked": [question, ...]}}}

A retriever's ``questions`` are the scored questions it had ranked; ``not_ranked`` (only
when there are some) names the scored questions it had not (it could not rank them then:
:mod:`engine.ranked`), which have no values, never zeros.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.analysis.compare import DEFAULT_SAMPLES, paired_tests
from engine.ci.holes import DEFAULT_MIN_JUDGED, HoleWarning, check_min_judged, hole_warnings
from engine.ci.snapshot_files import (
    FORMAT,
    MAX_RANK,
    SnapshotError,
    check_snapshot,
    load_snapshot_file,
)
from engine.metrics import FloatArray, first_gold_rank, mean
from engine.ranked import left_out
from engine.ranks import worse_by
from engine.scoring import metric_names, score_workspace
from engine.types import CachedRun
from engine.verdict import LEVEL, Verdict, check_level
from engine.workspace import Workspace, now

__all__ = [
    "FORMAT",
    "MAX_RANK",
    "SnapshotError",
    "check_snapshot",
    "diff_against",
    "load_snapshot_file",
    "resolve_snapshot",
    "save_snapshot",
    "take_snapshot",
]


def take_snapshot(
    ws: Workspace,
    name: str,
    *,
    retrievers: Sequence[str] | None = None,
    given: Mapping[str, Mapping[str, CachedRun]] | None = None,
    cannot_rank: Collection[str] = (),
) -> dict[str, Any]:
    """The snapshot document of the workspace's scores now (from the cached rankings).

    ``given``: rankings not in the workspace, as :func:`~engine.scoring.score_workspace`
    takes them (the Python API's search function). ``cannot_rank``: retrievers known not
    to rank now (:func:`~engine.scoring.scored_set`).
    """
    names = metric_names()
    board = score_workspace(
        ws, metrics=names, retrievers=retrievers, given=given, cannot_rank=cannot_rank
    )
    qids = board.question_ids
    out: dict[str, Any] = {
        "goldpan_snapshot": FORMAT,
        "name": name,
        "created": now(),
        "metrics": names,
        "golds": {q: dict(board.golds[q].gold) for q in qids},
        "retrievers": {},
    }
    for r, rs in board.retrievers.items():
        spec = None if given and r in given else ws.retriever(r)
        runs = dict(given[r]) if given and r in given else ws.runs(r, qids)
        questions = {}
        lacks = set(rs.lacks)
        for i, q in enumerate(qids):
            if q in lacks:  # no value: recorded as not ranked, never as zeros
                continue
            ranking = runs[q].doc_ids if q in runs else ()
            questions[q] = {
                "rank": int(rs.first_gold_rank[i]),
                "top": ranking[0] if ranking else None,
                "values": {m: float(rs.per_question[m][i]) for m in names},
            }
        out["retrievers"][r] = {
            "kind": spec.kind if spec else "",
            "params": dict(spec.params) if spec else {},
            "hash": spec.hash if spec else "",
            "questions": questions,
            **({"not_ranked": list(rs.lacks)} if rs.lacks else {}),
        }
    return out


def check_name(name: str) -> str:
    """``name`` when usable as a snapshot name: printable, no spaces."""
    if not name or any(ch.isspace() or not ch.isprintable() for ch in name):
        raise SnapshotError(f"snapshot name {name!r}: use printable text without spaces")
    return name


def save_snapshot(
    ws: Workspace,
    name: str,
    *,
    replace: bool = False,
    retrievers: Sequence[str] | None = None,
    cannot_rank: Collection[str] = (),
) -> dict[str, Any]:
    """Take a snapshot and store it in the workspace under ``name``."""
    name = check_name(name)
    data = take_snapshot(ws, name, retrievers=retrievers, cannot_rank=cannot_rank)
    ws.save_snapshot(name, data["created"], data, replace=replace)
    return data


def resolve_snapshot(ws: Workspace, against: str) -> dict[str, Any]:
    """The snapshot named ``against`` in the workspace, else the snapshot file at that path."""
    data = ws.snapshot(against)
    if data is not None:
        return check_snapshot(data, f"snapshot {against!r}")
    path = Path(against)
    if path.is_file():
        return load_snapshot_file(path)
    known = ", ".join(n for n, _ in ws.snapshots()) or "none yet (goldpan snapshot WS NAME)"
    raise SnapshotError(
        f"{against!r} is neither a snapshot of {ws.path} nor a snapshot file; snapshots: {known}"
    )


@dataclass(frozen=True)
class MetricChange:
    """One metric of one retriever, now and then, over the questions scored in both."""

    now: float
    then: float
    diff: float
    ci95: tuple[float, float]
    p_value: float
    verdict: Verdict
    """Whether now differs from then for real (A is now, B then)."""

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape of one metric's change."""
        return {
            "now": self.now,
            "then": self.then,
            "diff": self.diff,
            "ci95": list(self.ci95),
            "p_value": self.p_value,
            "verdict": self.verdict.to_json("now", "then"),
        }


@dataclass(frozen=True)
class Moved:
    """A question whose first-gold rank changed (0 = no gold in the ranking)."""

    question: str
    rank_then: int
    rank_now: int
    winner: str | None
    """The document the retriever ranks first now."""
    cause: str
    """``retriever``, ``labels`` or ``both``."""

    def worse_by(self) -> float:
        """How many ranks worse now (:func:`engine.ranks.worse_by`: a lost gold is inf)."""
        return worse_by(self.rank_then, self.rank_now)


@dataclass
class RetrieverDiff:
    """What changed for one retriever since the snapshot."""

    metrics: dict[str, MetricChange]
    regressed: list[Moved]
    improved: list[Moved]
    changed_config: bool
    """The retriever's kind or parameters differ from the snapshot's."""
    compared: list[str]
    """The questions compared (:func:`paired_questions`), in code-point order."""
    only_now: list[str]
    only_then: list[str]
    not_ranked: list[str] = field(default_factory=list)
    """Questions scored then that the score now leaves out as not ranked yet (a retriever
    scored will rank them, :mod:`engine.ranked`): not compared."""
    not_ranked_now: list[str] = field(default_factory=list)
    """Questions scored now that this retriever has not ranked and cannot rank now (never
    ranked here, not trusted, failed: :mod:`engine.ranked`): not compared, never zeros."""
    ranks_now: dict[str, int] = field(default_factory=dict)
    """Every question scored now -> its first-gold rank now (0: no gold ranked; -1: one
    of :attr:`not_ranked_now`)."""

    @property
    def paired(self) -> int:
        """How many questions were compared."""
        return len(self.compared)


@dataclass
class SnapshotDiff:
    """Everything ``goldpan score --against`` reports."""

    against: str
    created: str
    retrievers: dict[str, RetrieverDiff] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    """Retrievers of the snapshot that are not in the workspace any more."""
    labels_changed: list[str] = field(default_factory=list)
    """Questions scored both then and now whose gold differs."""
    snapshot_retrievers: list[str] = field(default_factory=list)
    """Every retriever the snapshot holds."""
    scored_now: list[str] = field(default_factory=list)
    """Every retriever scored now (those of :attr:`retrievers` and the ones the snapshot
    lacks)."""
    warnings: list[HoleWarning] = field(default_factory=list)
    """Retrievers whose top 10 is too little judged on the compared questions."""

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape."""

        def moved(m: Moved) -> dict[str, Any]:
            return {
                "question": m.question,
                "rank_then": m.rank_then,
                "rank_now": m.rank_now,
                "winner": m.winner,
                "cause": m.cause,
            }

        return {
            "against": self.against,
            "created": self.created,
            "labels_changed": self.labels_changed,
            "missing": self.missing,
            "warnings": [w.to_json() for w in self.warnings],
            "retrievers": {
                r: {
                    "metrics": {m: c.to_json() for m, c in d.metrics.items()},
                    "regressed": [moved(m) for m in d.regressed],
                    "improved": [moved(m) for m in d.improved],
                    "changed_config": d.changed_config,
                    "questions": {
                        "paired": d.paired,
                        "only_now": d.only_now,
                        "only_then": d.only_then,
                        "not_ranked": d.not_ranked,
                        "not_ranked_now": d.not_ranked_now,
                    },
                }
                for r, d in self.retrievers.items()
            },
        }


def _cause(
    gold_then: Mapping[str, int], gold_now: Mapping[str, int], ranking: Sequence[str], then: int
) -> str:
    if dict(gold_then) == dict(gold_now):
        return "retriever"
    return "labels" if first_gold_rank(ranking, gold_then) == then else "both"


def paired_matrices(
    then: Mapping[str, Any],
    pairs: Sequence[str],
    row_now: Mapping[str, int],
    per_question: Mapping[str, FloatArray],
    metrics: Sequence[str],
) -> tuple[FloatArray, FloatArray]:
    """The values now and in the snapshot of the ``pairs``, each questions x metrics.

    ``then`` is one retriever's ``questions`` in the snapshot; ``per_question`` its values
    now, per metric, at the rows ``row_now`` gives each question.
    """
    shape = (len(pairs), len(metrics))
    idx = [row_now[q] for q in pairs]
    now = np.array([per_question[m][idx] for m in metrics], dtype=np.float64).T.reshape(shape)
    past = np.array(
        [[float(then[q]["values"][m]) for m in metrics] for q in pairs], dtype=np.float64
    ).reshape(shape)
    return now, past


def metric_changes(
    metrics: Sequence[str],
    now: FloatArray,
    then: FloatArray,
    *,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
) -> dict[str, MetricChange]:
    """Each metric's change over the paired questions (rows; one column per metric).

    The means, the interval, the p-value and the verdict of ``score --against``
    (:func:`diff_against`) and of Review's changes since a snapshot all come from here;
    pass the questions in the order :func:`paired_questions` gives them, so that the
    resamples are the same whoever asks.
    """
    check_level(LEVEL, samples)
    tests = paired_tests(now, then, samples=samples, seed=seed)
    return {
        m: MetricChange(
            mean(now[:, k]),
            mean(then[:, k]),
            mean(now[:, k] - then[:, k]),
            tests.interval(k),
            float(tests.p_values[k]),
            tests.verdict(k),
        )
        for k, m in enumerate(metrics)
    }


def diff_against(
    ws: Workspace,
    snap: Mapping[str, Any],
    *,
    retrievers: Sequence[str] | None = None,
    tag: str | None = None,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    given: Mapping[str, Mapping[str, CachedRun]] | None = None,
    cannot_rank: Collection[str] = (),
    min_judged: float = DEFAULT_MIN_JUDGED,
) -> SnapshotDiff:
    """Compare the scores now (cached rankings, current labels) with a snapshot.

    ``given``: rankings not in the workspace, as :func:`~engine.scoring.score_workspace`
    takes them (only they, and the workspace's ``retrievers``, are compared).
    ``cannot_rank``: retrievers known not to rank now (:func:`~engine.scoring.scored_set`):
    a scored question one of them has not ranked is not compared for it
    (:attr:`RetrieverDiff.not_ranked_now`), never a zero.
    ``min_judged``: the :func:`~engine.ci.holes.hole_warnings` threshold on the questions
    each retriever is compared on.
    """
    min_judged = check_min_judged(min_judged)
    metrics = [m for m in snap["metrics"] if m in set(metric_names())] or metric_names()
    board = score_workspace(
        ws, metrics=metrics, retrievers=retrievers, tag=tag, given=given, cannot_rank=cannot_rank
    )
    golds_then: Mapping[str, Mapping[str, int]] = snap["golds"]
    now_ids = board.question_ids
    tagged = set(now_ids) if tag is None else {q.id for q in ws.questions() if tag in q.tags}
    then_ids = sorted(q for q in golds_then if tag is None or q in tagged)
    common = sorted(set(now_ids) & set(then_ids))
    out = SnapshotDiff(str(snap.get("name", "")), str(snap.get("created", "")))
    out.labels_changed = [q for q in common if dict(golds_then[q]) != dict(board.golds[q].gold)]
    wanted = set(retrievers or ()) | set(given or ()) if retrievers or given else None
    out.missing = sorted(
        r
        for r in snap["retrievers"]
        if r not in board.retrievers and (wanted is None or r in wanted)
    )
    # left out of every retriever's means now: not ranked yet (engine.ranked), with gold
    left = left_out({r: rs.not_ranked for r, rs in board.retrievers.items()}, board.holding)
    out.snapshot_retrievers = list(snap["retrievers"])
    out.scored_now = list(board.retrievers)
    row_now = {q: i for i, q in enumerate(now_ids)}
    compared: dict[str, list[str]] = {}
    for r, rs in board.retrievers.items():
        then = snap["retrievers"].get(r)
        if then is None:
            continue
        tq: Mapping[str, Any] = then["questions"]
        lacks = set(rs.lacks)  # scored now, but not for it: it cannot rank them now
        pairs = [q for q in paired_questions(snap, r, common) if q not in lacks]
        runs = dict(given[r]) if given and r in given else ws.runs(r, pairs)
        compared[r] = pairs
        now_vals, then_vals = paired_matrices(tq, pairs, row_now, rs.per_question, metrics)
        changes = metric_changes(metrics, now_vals, then_vals, samples=samples, seed=seed)
        regressed: list[Moved] = []
        improved: list[Moved] = []
        for q in pairs:
            rank_now = int(rs.first_gold_rank[row_now[q]])
            rank_then = int(tq[q]["rank"])
            if rank_now == rank_then:
                continue
            ranking = runs[q].doc_ids if q in runs else ()
            moved = Moved(
                q,
                rank_then,
                rank_now,
                ranking[0] if ranking else None,
                _cause(golds_then[q], board.golds[q].gold, ranking, rank_then),
            )
            (regressed if moved.worse_by() > 0 else improved).append(moved)
        regressed.sort(key=lambda m: (-m.worse_by(), m.question))
        improved.sort(key=lambda m: (m.worse_by(), m.question))
        spec = None if given and r in given else ws.retriever(r)
        out.retrievers[r] = RetrieverDiff(
            metrics=changes,
            regressed=regressed,
            improved=improved,
            changed_config=spec is not None and spec.hash != then.get("hash"),
            compared=pairs,
            only_now=[
                q for q in now_ids if (q not in tq or q not in golds_then) and q not in lacks
            ],
            only_then=[q for q in then_ids if q in tq and q not in row_now and q not in left],
            not_ranked=[q for q in then_ids if q in tq and q in left],
            not_ranked_now=list(rs.lacks),
            ranks_now={q: int(rs.first_gold_rank[i]) for i, q in enumerate(now_ids)},
        )
    out.warnings = hole_warnings(board, compared, min_judged=min_judged)
    return out


def paired_questions(snap: Mapping[str, Any], retriever: str, now_ids: Sequence[str]) -> list[str]:
    """Of ``now_ids`` (the questions scored now), those ``retriever`` scored in ``snap``.

    The one rule of what a comparison with a snapshot pairs: a question scored both then
    and now, so that then and now are means over the same questions (``now_ids``' order
    kept). Callers: :func:`diff_against` (which also leaves out what is not ranked now),
    and the review screen's since-snapshot cells (``tui.widgets.snapshot_diff``).
    """
    body = snap["retrievers"].get(retriever)
    if body is None:
        return []
    then: Mapping[str, Any] = body["questions"]
    golds: Mapping[str, Any] = snap["golds"]
    return [q for q in now_ids if q in then and q in golds]


def snapshot_values(snap: Mapping[str, Any], retriever: str) -> tuple[list[str], FloatArray]:
    """``retriever``'s questions in the snapshot, and their values (question x metric).

    The columns are ``snap["metrics"]``, in order.
    """
    qs: Mapping[str, Any] = snap["retrievers"][retriever]["questions"]
    metrics = snap["metrics"]
    values = np.array(
        [[float(row["values"][m]) for m in metrics] for row in qs.values()], dtype=np.float64
    ).reshape(len(qs), len(metrics))
    return list(qs), values


def snapshot_means(
    snap: Mapping[str, Any], question_ids: Sequence[str] | None = None
) -> dict[str, dict[str, float]]:
    """Per retriever and metric, the mean over the snapshot's questions (or ``question_ids``).

    A retriever with none of those questions has no mean and is left out: a mean over no
    question would read 0, and a change since the snapshot would be measured from it. So
    is one that had not ranked some of them (``not_ranked``): its mean would be over
    other questions than the rest's.
    """
    out: dict[str, dict[str, float]] = {}
    wanted = None if question_ids is None else set(question_ids)
    for r, body in snap["retrievers"].items():
        qids, values = snapshot_values(snap, r)
        rows = [i for i, q in enumerate(qids) if wanted is None or q in wanted]
        lacked = [q for q in body.get("not_ranked", ()) if wanted is None or q in wanted]
        if rows and not lacked:
            out[r] = {m: mean(values[rows, k]) for k, m in enumerate(snap["metrics"])}
    return out


def snapshot_ranks(snap: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Per retriever and question, the first-gold rank in the snapshot."""
    return {
        r: {q: int(row["rank"]) for q, row in body["questions"].items()}
        for r, body in snap["retrievers"].items()
    }
