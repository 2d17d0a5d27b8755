"""The review screen's "since snapshot" view: metric changes and moved grid cells.

Kept apart from the review screen so that it can be moved with the panels: the screen
asks :class:`Baseline` for the snapshot's numbers and decorates its own cells with
:func:`metric_cell` and :func:`marked_rank`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from engine.ranks import is_worse
from engine.workspace import Workspace, WorkspaceError

WORSE = "on #5f1f1f"
BETTER = "on #1f4f2f"
EPS = 5e-4  # changes smaller than the shown precision are no change


@dataclass
class Baseline:
    """A stored snapshot, read once: its name, per-question values and ranks."""

    name: str
    data: Mapping[str, Any]
    ranks: dict[str, dict[str, int]]
    _means: dict[str | None, dict[str, dict[str, float]]] = field(default_factory=dict)

    @classmethod
    def load(cls, ws: Workspace, name: str) -> Baseline | None:
        """The snapshot ``name`` of the workspace (None when it is gone)."""
        from engine.score_snapshots import check_snapshot, snapshot_ranks  # numpy: not at start

        try:
            data = ws.snapshot(name)
            if data is None:
                return None
            check_snapshot(data, f"snapshot {name!r}")
        except (ValueError, WorkspaceError):  # a damaged row: show no comparison
            return None
        return cls(name, data, snapshot_ranks(data))

    def means(
        self, question_ids: Sequence[str] | None, key: str | None = None
    ) -> dict[str, dict[str, float]]:
        """Per retriever and metric, the mean over the snapshot's questions among these.

        The snapshot never changes: the means are kept per ``key`` (the tag filter), so
        a label change on the review screen does not re-average thousands of values.
        """
        if key not in self._means:
            from engine.score_snapshots import snapshot_means

            self._means[key] = snapshot_means(self.data, question_ids)
        return self._means[key]

    def rank(self, retriever: str, question_id: str) -> int | None:
        """The first-gold rank then (None: not in the snapshot)."""
        return self.ranks.get(retriever, {}).get(question_id)


def snapshot_choices(ws: Workspace) -> list[str]:
    """Names of the stored snapshots, newest first (the first is the default)."""
    return [name for name, _ in reversed(ws.snapshots())]


def delta_text(diff: float) -> str:
    """A change as `` +.012`` / `` -1.00`` (five characters after the space)."""
    text = f"{diff:+.3f}".replace("0.", ".", 1)
    return " " + (text if len(text) <= 5 else f"{diff:+.2f}")


def metric_cell(value: float, then: float | None, style: str = "") -> Text:
    """A metric value, with its change since the snapshot when there is one."""
    cell = Text(f"{value:.3f}", style=style, justify="right")
    if then is None:
        return cell
    diff = value - then
    if abs(diff) < EPS:
        cell.append("     ", style="dim")
    else:
        cell.append(delta_text(diff), style="green" if diff > 0 else "red")
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
