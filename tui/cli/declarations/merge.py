"""``goldpan merge``."""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument("out", metavar="OUT", help="the merged workspace (created when missing)")
    s.add_argument("inputs", nargs="+", metavar="IN", help="the workspaces to bring in")


COMMAND = CliCommand(
    "merge",
    "merge separately labeled workspaces (same corpus)",
    "Bring workspaces labeled separately together: every IN must hold the same corpus (the "
    "first differing document is named); questions are matched by id (text conflicts are "
    "reported), labels keep their "
    "annotators. Merging the same input twice changes nothing.",
    run="team:cmd_merge",
    options=_options,
    workspace=False,
)
