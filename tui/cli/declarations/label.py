"""``goldpan label``."""

from __future__ import annotations

import argparse

from engine.grades import GRADE_RANGE, MAX_GRADE, NOT_RELEVANT
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument("question", metavar="QID", help="the question's id")
    s.add_argument("doc", metavar="DOC", help="the document's id")
    s.add_argument("grade", type=int, metavar="GRADE", help=GRADE_RANGE)
    s.add_argument("--annotator", help="default: $GOLDPAN_ANNOTATOR or your login")


COMMAND = CliCommand(
    "label",
    f"grade a document for a question ({GRADE_RANGE}), as the judge keys do",
    f"Grade a document for a question: {GRADE_RANGE} ({NOT_RELEVANT} not relevant, "
    f"{MAX_GRADE} the perfect answer), as the judge screen's keys do; committed at once, "
    "safe while others label the same workspace.",
    run="team:cmd_label",
    options=_options,
)
