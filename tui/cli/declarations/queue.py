"""``goldpan queue``."""

from __future__ import annotations

import argparse

from tui.cli import values
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    from engine.judging.feedback import BATCH
    from engine.judging.queue import DEFAULT_K
    from engine.names import MODEL_PREFIX

    s.add_argument(
        "--k",
        type=values.ranks,
        default=DEFAULT_K,
        help=f"pool depth per retriever (default {DEFAULT_K})",
    )
    s.add_argument(
        "--model",
        metavar=f"{MODEL_PREFIX}NAME",
        help="also where that model judge and the people disagree most, and what it "
        "graded relevant that nobody judged",
    )
    s.add_argument(
        "--beyond-pool",
        nargs="?",
        const=BATCH,
        type=values.ranks,
        metavar="N",
        help=f"propose N documents (default {BATCH}) by relevance feedback for each question "
        "with a relevant document, and add them to its candidates",
    )


COMMAND = CliCommand(
    "queue",
    "what to judge next; coverage@k of each retriever",
    "The judging queue (questions whose pooled top-k documents are least judged first, "
    "then disputes, then stopped questions: their candidates left not judged on purpose) "
    'and coverage@k per retriever. --json prints {"k", "coverage": {NAME: '
    'share}, "queue": [{"question", "status", "unjudged", "stopped", "reason"}]}; with '
    '--model also "model", "disagree" and "holes": [{"question", "status", "docs", '
    '"distance"}]; with --beyond-pool also "beyond_pool": {"method", "proposed", '
    '"questions": [{"question", "docs", "relevant_left"}]}. See [How complete is the '
    "gold?](complete-gold.md).",
    run="team:cmd_queue",
    options=_options,
    json=True,
)
