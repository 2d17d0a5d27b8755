"""The review screen's "since snapshot" view: metric changes and moved grid cells.

Kept apart from the review screen so that it can be moved with the panels: the screen
asks :class:`Baseline` what is compared with the snapshot (the questions scored both then
and now, the engine's rule) and its numbers then, and decorates its own cells with
:func:`metric_cell` and :func:`marked_rank` (a worse rank is :func:`engine.ranks.is_worse`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.message import Message

from engine.ranks import is_worse
from engine.workspace import WorkspaceError

if TYPE_CHECKING:  # numpy loads when the screen first compares, not at start
    from engine.metrics import FloatArray
    from engine.session.reads import SessionReads
    from engine.verdict import Verdict

Verdicts = dict[tuple[str, str], "Verdict"]
"""(retriever, metric) -> whether its change since the snapshot is real."""

WORSE = "on #5f1f1f"
BETTER = "on #1f4f2f"
EPS = 5e-4  # changes smaller than the shown precision are no change


@dataclass
class Baseline:
    """A stored snapshot, read once: its name, per-question values and ranks."""

    name: str
    data: Mapping[str, Any]
    ranks: dict[str, dict[str, int]]
    _values: dict[str, tuple[dict[str, int], FloatArray]] = field(default_factory=dict)
    _since: dict[str, Since] = field(default_factory=dict)
    """Per retriever, the last comparison made (kept while the questions compared are the
    same: a label change rarely changes which questions are scored)."""

    @classmethod
    def load(cls, ws: SessionReads, name: str) -> Baseline | None:
        """The snapshot ``name`` of the workspace (None when it is gone)."""
        from engine.ci.snapshots import check_snapshot, snapshot_ranks  # numpy: not at start

        try:
            data = ws.snapshot(name)
            if data is None:
                return None
            check_snapshot(data, f"snapshot {name!r}")
        except WorkspaceError:  # a damaged row (its JSON, or its shape): show no comparison
            return None
        return cls(name, data, snapshot_ranks(data))

    def since(self, retriever: str, now_ids: Sequence[str]) -> Since | None:
        """What is compared for ``retriever`` among ``now_ids``, and its means then.

        The questions compared are those scored both in the snapshot and now
        (:func:`engine.ci.snapshots.paired_questions`, the rule every comparison with a
        snapshot follows); the means are each metric's over them in the snapshot.
        None when nothing is compared (then no change is shown: a change from a mean over
        no question would be measured from 0). The snapshot never changes: its values
        are read into arrays once per retriever, so a label change on the review screen
        does not re-read thousands of values, and each comparison is kept while the
        questions compared stay the same.
        """
        from engine.ci.snapshots import paired_questions, snapshot_values
        from engine.metrics import mean

        compared = tuple(paired_questions(self.data, retriever, now_ids))
        if not compared:
            return None
        last = self._since.get(retriever)
        if last is not None and last.compared == compared:
            return last
        if retriever not in self._values:
            qids, values = snapshot_values(self.data, retriever)
            self._values[retriever] = ({q: i for i, q in enumerate(qids)}, values)
        row_of, values = self._values[retriever]
        rows = values[[row_of[q] for q in compared]]
        metrics = self.data["metrics"]
        since = Since(compared, {m: mean(rows[:, k]) for k, m in enumerate(metrics)})
        self._since[retriever] = since
        return since

    def rank(self, retriever: str, question_id: str) -> int | None:
        """The first-gold rank then (None: not in the snapshot)."""
        return self.ranks.get(retriever, {}).get(question_id)


@dataclass(frozen=True)
class Since:
    """One retriever's comparison with the snapshot: the questions compared, means then."""

    compared: tuple[str, ...]
    then: dict[str, float]


def judge_changes(
    data: Mapping[str, Any], now: Mapping[str, tuple[Sequence[str], Mapping[str, FloatArray]]]
) -> Verdicts:
    """The verdict of each retriever's and metric's change since the snapshot ``data``.

    ``now``: per retriever, the scored question ids and each metric's values in their
    order. The verdicts are ``score --against``'s: the same questions compared
    (:func:`engine.ci.snapshots.paired_questions`, in id order as there), resamples
    and rule (:func:`engine.ci.snapshots.metric_changes`). Slow on many questions: a
    worker's job.
    """
    from engine.ci.snapshots import metric_changes, paired_matrices, paired_questions

    out: Verdicts = {}
    for r, (ids, values) in now.items():
        body = data["retrievers"].get(r)
        metrics = [m for m in values if m in data["metrics"]]
        if body is None or not metrics:
            continue
        pairs = paired_questions(data, r, sorted(ids))
        row = {q: i for i, q in enumerate(ids)}
        now_vals, then_vals = paired_matrices(body["questions"], pairs, row, values, metrics)
        changes = metric_changes(metrics, now_vals, then_vals)
        out.update({(r, m): c.verdict for m, c in changes.items()})
    return out


@dataclass
class ChangesJudged(Message):
    """The verdicts of the changes since a snapshot, for the request ``key``."""

    key: Hashable
    verdicts: Verdicts


def snapshot_choices(ws: SessionReads) -> list[str]:
    """Names of the stored snapshots, newest first (the first is the default)."""
    return [name for name, _ in reversed(ws.snapshots())]


def delta_text(diff: float) -> str:
    """A change as `` +.012`` / `` -1.00`` (five characters after the space)."""
    text = f"{diff:+.3f}".replace("0.", ".", 1)
    return " " + (text if len(text) <= 5 else f"{diff:+.2f}")


def metric_cell(
    value: float, diff: float | None, style: str = "", verdict: Verdict | None = None
) -> Text:
    """A metric value, with its change since the snapshot (over the questions compared).

    The change is green or red only when ``verdict`` calls it real; dim otherwise (and
    while the verdict is not known yet).
    """
    if diff is None:
        return Text(f"{value:.3f}", style=style, justify="right")
    cell = Text(justify="right")
    cell.append(f"{value:.3f}", style=style)  # the best value's style, not its change's
    if abs(diff) < EPS:
        cell.append("     ", style="dim")
    else:
        real = verdict is not None and verdict.real
        cell.append(delta_text(diff), style=("green" if diff > 0 else "red") if real else "dim")
    return cell


def marked_rank(cell: Text, now: int, then: int | None) -> Text:
    """A grid cell with a background when the rank got worse or better since then."""
    if then is None or then == now:
        return cell
    worse = is_worse(then, now)
    marked = cell.copy()
    marked.stylize(WORSE if worse else BETTER)
    marked.append("▼" if worse else "▲", style="red" if worse else "green")
    return marked


def since_text(name: str | None, count: int) -> Text:
    """The 'since' part of the counts line."""
    if name is None:
        if count == 0:  # nothing to compare with: the line stays as it always was
            return Text()
        return Text("   since: no snapshot  s cycles", style="dim")
    return Text.assemble(
        ("   since snapshot: ", "dim"),
        (name.replace("\n", " "), "bold"),
        ("  ▼ worse ▲ better, s cycles", "dim"),
    )
