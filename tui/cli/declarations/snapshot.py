"""``goldpan snapshot [save|list|show|remove|export]``.

One command whose first word may name the action (``save`` when it does not), parsed by
``tui.cli.commands.snapshots.cmd_snapshot``: ``goldpan snapshot WS NAME`` stays the short
form of the most common action.
"""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand

SNAPSHOT_ACTIONS = ("save", "list", "show", "remove", "export")

SNAPSHOT_HELP = """\
forms:
  goldpan snapshot WS NAME             store the scores now as NAME (same as save)
  goldpan snapshot save WS NAME        the same, explicitly
  goldpan snapshot list WS             the stored snapshots
  goldpan snapshot show WS NAME        a snapshot's means per retriever
  goldpan snapshot remove WS NAME      delete a snapshot
  goldpan snapshot export WS NAME --out FILE [--force]
                                       write it as JSON (keep it in git for CI;
                                       `goldpan score WS --against FILE` reads it);
                                       --force replaces an existing FILE
"""


def _options(s: argparse.ArgumentParser) -> None:
    s.add_argument("words", nargs="+", metavar="WORD", help="[ACTION] WS [NAME], see below")
    s.add_argument("--out", metavar="FILE", help="export: the JSON file to write")
    s.add_argument("--force", action="store_true", help="export: replace an existing FILE")
    s.add_argument("--replace", action="store_true", help="save: overwrite a snapshot of that name")
    s.add_argument("--retriever", action="append", metavar="NAME", help="repeatable; default all")
    s.add_argument("--no-pool", action="store_true", help="do not refresh stale rankings")
    s.add_argument("--json", action="store_true", help="list/show as JSON")


COMMAND = CliCommand(
    "snapshot",
    "store the scores now, to diff against later (save, list, show, remove, export)",
    "Store, for every retriever, each scored question's first-gold rank and metric values "
    "with the gold they were computed on; list, show, remove or export them. `export --out "
    "FILE` writes the snapshot as one JSON document, which `score --against FILE` reads "
    "(keep it in the repository for a CI gate).",
    run="snapshots:cmd_snapshot",
    options=_options,
    workspace=False,
    usage=f"goldpan snapshot [{'|'.join(SNAPSHOT_ACTIONS)}] WS [NAME] [options]",
    epilog=SNAPSHOT_HELP,
    see="[Use goldpan in CI](ci.md)",
)
