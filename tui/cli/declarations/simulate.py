"""``goldpan simulate``."""

from __future__ import annotations

import argparse

from tui.cli import values
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    from engine.judging.order import ORDERS
    from engine.pooling import DEFAULT_POOL_DEPTH
    from engine.simulate import DEFAULT_SEEDS

    s.add_argument(
        "--assessor",
        required=True,
        metavar="NAME",
        help="whose labels play the assessor (a document NAME did not judge is not relevant)",
    )
    s.add_argument(
        "--order",
        action="append",
        choices=ORDERS,
        help="an order to replay (repeatable; default: all of them)",
    )
    s.add_argument(
        "--stop",
        nargs="?",
        const="workspace",
        metavar="AFTER[,BELOW]",
        help="replay with a stopping rule: after AFTER not relevant in a row, or fewer than "
        "BELOW relevant estimated left (alone: the workspace's rule; default: no stop)",
    )
    s.add_argument(
        "--beyond-pool",
        type=values.ranks,
        metavar="BUDGET",
        help="also replay feedback beyond the pool up to BUDGET judgments per question, "
        "beside a deeper pool of the same cost",
    )
    s.add_argument(
        "--depth",
        type=values.ranks,
        default=DEFAULT_POOL_DEPTH,
        help=f"pool depth per retriever (default {DEFAULT_POOL_DEPTH})",
    )
    s.add_argument(
        "--seeds",
        type=values.whole(1, 10_000),
        default=DEFAULT_SEEDS,
        help=f"random orders averaged (default {DEFAULT_SEEDS})",
    )
    s.add_argument(
        "--samples",
        type=values.samples,
        default=10_000,
        help="bootstrap resamples and sign flips (default 10000; at least 20, the fewest a "
        "verdict at 0.05 can be given with)",
    )


COMMAND = CliCommand(
    "simulate",
    "replay judging with one annotator's labels: what an order, a stop or feedback saves",
    "Replays judging the questions NAME judged, with NAME's labels as the assessor, as the "
    "Label screen would have run it (questions in id order, each order learning from the "
    "ones before), for each judging order (and a random order, the mean of --seeds, and a "
    "perfect one): judgments to the first relevant document, until every pooled relevant "
    "one is found, and the gap each order closes between random and perfect; with --stop "
    "the share of the pool judged and of its relevant documents found; the share of all "
    "of NAME's relevant documents found within 10, 20 and 50 judgments per question; "
    "Kendall's tau of the retrievers' order by MRR and nDCG@10 against NAME's full "
    "judgments with a bootstrap interval, and the pairs whose difference the verdict calls "
    "real (as compare does, at 0.05) that change order. --json: the names are documented in "
    "[How complete is the gold?](complete-gold.md).",
    run="judging:cmd_simulate",
    options=_options,
    json=True,
)
