"""A workspace's judging settings: the candidate order and the stopping rule.

Chosen per workspace (``goldpan judging WS --order O --stop-after N --stop-below X``) and
kept in its ``meta`` table, so every annotator of the workspace, in the terminal or the
browser, judges in the same order under the same rule. Unset, the defaults hold:
:data:`~engine.judging.order.DEFAULT_ORDER` and :class:`~engine.judging.stopping.StopRule`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.errors import BadInput
from engine.judging.order import DEFAULT_ORDER, ORDERS
from engine.judging.stopping import StopRule
from engine.workspace.rows import judging_setting

if TYPE_CHECKING:
    from engine.workspace import Workspace


@dataclass(frozen=True)
class JudgingSettings:
    """How a workspace's candidates are ordered and when a stop is offered."""

    order: str = DEFAULT_ORDER
    rule: StopRule = field(default_factory=StopRule)

    @classmethod
    def of(cls, stored: Mapping[str, str]) -> JudgingSettings:
        """From the stored settings (already checked by the workspace's reader)."""
        default = StopRule()
        return cls(
            stored.get("judging_order", DEFAULT_ORDER),
            StopRule(
                int(stored.get("stop_after", default.after)),
                float(stored.get("stop_below", default.below)),
            ),
        )

    def describe(self) -> str:
        """One line: the order and the rule."""
        return f"order {self.order}; a stop is offered {self.rule.describe()}"


def workspace_judging(ws: Workspace) -> JudgingSettings:
    """The workspace's judging settings (defaults where none is stored)."""
    return JudgingSettings.of(ws.judging_settings())


def set_judging(
    ws: Workspace,
    *,
    order: str | None = None,
    stop_after: int | None = None,
    stop_below: float | None = None,
    by: str,
) -> JudgingSettings:
    """Change some of the workspace's judging settings; returns them all as they are now.

    Raises:
        BadInput: an unknown order, or a rule no one can mean (see :class:`StopRule`).
    """
    values: dict[str, str] = {}
    if order is not None:
        if order not in ORDERS:
            raise BadInput(f"unknown judging order {order!r}; known: {', '.join(ORDERS)}")
        values["judging_order"] = order
    if stop_after is not None:
        values["stop_after"] = str(stop_after)
    if stop_below is not None:
        values["stop_below"] = repr(float(stop_below))
    for key, value in values.items():
        why = judging_setting(key, value)
        if why is not None:
            raise BadInput(why)
    if values:
        ws.set_judging_settings(values, by)
    return workspace_judging(ws)
