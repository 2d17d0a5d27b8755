"""``goldpan open``."""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--annotator", help="your name on labels (default: $GOLDPAN_ANNOTATOR or login)")
    s.add_argument(
        "--read-only",
        action="store_true",
        help="review only: nothing can be changed (automatic when the file or its folder "
        "is not writable)",
    )


COMMAND = CliCommand(
    "open",
    "open a workspace in the terminal UI",
    "Open a workspace in the terminal UI.",
    run="app:cmd_open",
    options=_options,
)
