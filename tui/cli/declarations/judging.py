"""``goldpan judging``."""

from __future__ import annotations

import argparse

from tui.cli import values
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    from engine.judging.order import DEFAULT_ORDER, ORDERS
    from engine.judging.stopping import DEFAULT_STOP_AFTER, DEFAULT_STOP_BELOW
    from engine.workspace.rows import MAX_STOP_AFTER

    s.add_argument(
        "--order",
        choices=ORDERS,
        help=f"the order the Label screen shows candidates in (default: {DEFAULT_ORDER})",
    )
    s.add_argument(
        "--stop-after",
        type=values.whole(0, MAX_STOP_AFTER),
        metavar="N",
        help="offer to stop a question after N not relevant judgments in a row, once it has "
        f"a relevant one; 0: never (default {DEFAULT_STOP_AFTER})",
    )
    s.add_argument(
        "--stop-below",
        type=values.finite(0),
        metavar="X",
        help="offer to stop a question when fewer than X relevant documents are estimated "
        f"left among its candidates not judged; 0: never (default {DEFAULT_STOP_BELOW:g})",
    )


COMMAND = CliCommand(
    "judging",
    "the Label screen's candidate order and stopping rule",
    "Show the workspace's judging settings, or change them: the order the Label screen "
    "shows each question's candidates in (maxmean, fused, mtf or hash; never a retriever "
    "name, rank or score) and when it offers to stop a question. Every annotator of the "
    "workspace judges under the same settings; `goldpan simulate` measures what each "
    'choice costs and finds. --json prints {"order", "stop_after", "stop_below", '
    '"rule"}. See [How complete is the gold?](complete-gold.md).',
    run="judging:cmd_judging",
    options=_options,
    json=True,
)
