"""``goldpan power``."""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    from engine.metrics import DEFAULT_METRIC, METRIC_FAMILIES

    s.add_argument("a", metavar="A", help="a retriever")
    s.add_argument("b", metavar="B", help="the retriever A is told apart from")
    s.add_argument("--metric", default=DEFAULT_METRIC, help=", ".join(METRIC_FAMILIES))
    s.add_argument("--tag", help="only questions with this tag")


COMMAND = CliCommand(
    "power",
    "how many questions are enough: detectable difference and questions needed",
    "How many questions are enough to tell retrievers A and B apart on one metric: the "
    "smallest difference the current questions can detect (80% power, two-sided 5%) and the"
    " questions needed to confirm the observed difference, never fewer than it takes to"
    " have the 6 questions where they differ that a test at 5% needs. Where the two score"
    " alike on every question (or one is ahead by the same amount on every one) the"
    ' differences do not vary and neither is given. --json prints {"a", "b",'
    ' "metric", "n", "diff", "sd", "mde", "n_needed", "discordant", "least_discordant"}'
    " (mde and n_needed null where not given). Refused (exit 2) when A or B has not ranked"
    " some scored question and cannot rank it now.",
    run="power:cmd_power",
    options=_options,
    json=True,
)
