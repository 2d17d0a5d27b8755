"""``goldpan fidelity``."""

from __future__ import annotations

import argparse

from tui.cli import values
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    from engine.analysis.fidelity import DEFAULT_K

    s.add_argument("a", metavar="A", help="a retriever (say, goldpan's BM25)")
    s.add_argument("b", metavar="B", help="the retriever A is compared with (the engine)")
    s.add_argument(
        "--k", type=values.ranks, default=DEFAULT_K, help=f"top k compared (default {DEFAULT_K})"
    )
    s.add_argument("--tag", help="only questions with this tag")
    s.add_argument("--refresh", action="store_true", help="rank A and B again even when cached")


COMMAND = CliCommand(
    "fidelity",
    "how alike two retrievers rank: top-1 agreement, rank correlation, ties",
    "How alike retrievers A and B rank the same questions (does goldpan's BM25 predict the "
    "engine's ranking?): the share of questions whose top 1 agrees (also counting a tie at "
    "the top as agreement), the mean Kendall tau-b and Spearman rho per question over the "
    "union of both top-k lists (a document outside one's top k ranked below it, tied with "
    "the others left out; tied scores tied), and the share of each one's top-k rows in tied "
    "score groups, with a warning when that is most of them. --json prints "
    '{"top1_agreement", "kendall_tau_b", "spearman_rho", "tie_share", "warnings", '
    '"per_question", ...}.',
    run="fidelity:cmd_fidelity",
    options=_options,
    json=True,
    see="[fidelity](retrievers.md#does-goldpans-ranking-predict-the-engines-goldpan-fidelity)",
)
