"""``goldpan demo``."""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand
from tui.cli.commands.common import DEMO_PATH


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--path", default=str(DEMO_PATH), help="where the demo workspace is")
    s.add_argument(
        "--force",
        action="store_true",
        help="rebuild it, replacing PATH only when it is a goldpan workspace (anything else "
        "is refused and left as it is)",
    )
    s.add_argument("--no-open", action="store_true", help="print the scores instead of opening")
    s.add_argument("--annotator", help="your name on labels (default: $GOLDPAN_ANNOTATOR or login)")


COMMAND = CliCommand(
    "demo",
    "build the demo workspace and open it",
    "Build the demo workspace from the bundled Korean corpus (once), pool it, and open it in "
    "the terminal UI. It opens as soon as the word-level retrievers are pooled; the app pools "
    "bm25-kiwi (loading Kiwi, in a helper process: the screen never waits for it), e5 "
    "(multilingual-e5-small vectors), hybrid (RRF of e5 and bm25-word+bigram) and hybrid+id "
    "in a worker behind, the header showing how far, and the live scores take them in when "
    "done. With --no-open everything is pooled first and the scores printed.",
    run="app:cmd_demo",
    options=_options,
    workspace=False,
)
