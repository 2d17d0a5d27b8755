"""``goldpan verdict``."""

from __future__ import annotations

import argparse

from engine.types import VERDICTS
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument("question", metavar="QID", help="the question's id")
    s.add_argument("verdict", choices=VERDICTS)
    s.add_argument("--note", default="", help="why, in a few words")
    s.add_argument("--annotator", help="default: $GOLDPAN_ANNOTATOR or your login")


COMMAND = CliCommand(
    "verdict",
    "answerable, no_answer, ambiguous or skip for a question",
    "Answerable, no_answer, ambiguous or skip for a question, as the judge screen's keys "
    "do; committed at once, safe while others label the same workspace.",
    run="team:cmd_verdict",
    options=_options,
)
