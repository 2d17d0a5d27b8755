"""``goldpan compare``."""

from __future__ import annotations

import argparse

from tui.cli import values
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    from engine.compare import DEFAULT_SAMPLES
    from engine.holes import DEFAULT_MIN_JUDGED
    from engine.metrics import DEFAULT_METRIC, METRIC_FAMILIES

    s.add_argument("a", metavar="A", help="a retriever")
    s.add_argument("b", metavar="B", help="the retriever A is compared with")
    s.add_argument("--metric", default=DEFAULT_METRIC, help=", ".join(METRIC_FAMILIES))
    s.add_argument(
        "--samples", type=values.samples, default=DEFAULT_SAMPLES, help="bootstrap resamples"
    )
    s.add_argument("--seed", type=values.seed, default=0, help="the resamples' seed")
    s.add_argument("--tag", help="only questions with this tag")
    s.add_argument(
        "--min-judged",
        type=values.finite(0, 1),
        default=DEFAULT_MIN_JUDGED,
        metavar="SHARE",
        help=f"warn when A's or B's Judged@10 is below SHARE (default {DEFAULT_MIN_JUDGED:g})",
    )
    s.add_argument("--refresh", action="store_true", help="rank A and B again even when cached")


COMMAND = CliCommand(
    "compare",
    "paired comparison of two retrievers (bootstrap, p-value)",
    "Per-question win / tie / loss of A against B, both means, the difference with a paired "
    "bootstrap 95% interval (the same seeded resamples for every retriever and metric) and "
    "a paired randomization p-value; and each one's Judged@10, the share of its top 10 a "
    "person judged, with a warning under --min-judged (its lower scores are unknown, not "
    'worse). --json adds {"judged@10": {A, B}, "warnings": [...]} as score --json has them.',
    run="scores:cmd_compare",
    options=_options,
    json=True,
)
