"""``goldpan noanswer``."""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--retriever",
        metavar="NAME",
        help="whose top-1 scores (default: the first retriever, as `goldpan retriever list` lists "
        "them; the Review screen's A starts there too)",
    )


COMMAND = CliCommand(
    "noanswer",
    "calibrate a top-1 score threshold for no-answer",
    "Top-1 scores of answerable vs no-answer questions: a table of thresholds (answerable "
    "wrongly rejected, no-answer caught), the best by balanced accuracy, and a warning when "
    "no threshold works. A threshold is named only with at least 5 no-answer and 5 "
    "answerable questions; below that it says how many more are needed, and --json has "
    '"established": false, "best": null and "needs": {"no_answer", "answerable"} each '
    '{"have", "least", "more"}.',
    see="[Evidence before thresholds](numbers.md#evidence-before-thresholds)",
    run="scores:cmd_noanswer",
    options=_options,
    json=True,
)
