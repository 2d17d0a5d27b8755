"""``goldpan check``: a report on a workspace file's soundness (read-only)."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.check import check_workspace
from tui.cli.commands.common import Unusable, err, out, print_json
from tui.literal import literal

VERDICTS = {
    "damaged": "is damaged; goldpan will not write into it. Restore it from a copy (a "
    "teammate's, or a backup goldpan wrote before an upgrade), or recover its rows with "
    "`sqlite3 FILE .recover`",
    "not a workspace": "is not a goldpan workspace, so there is nothing to restore (goldpan "
    "wrote nothing there); give the path of a workspace, or create one with `goldpan new`",
    "newer": "was written by a newer goldpan; upgrade goldpan to check it",
}
"""The last line ``check`` says of a workspace that is not sound, by its verdict."""


def cmd_check(args: argparse.Namespace) -> None:
    """Integrity, foreign keys, schema and every row; exit 2 when anything is wrong."""
    report = check_workspace(Path(args.workspace))
    if args.json:
        print_json(report.to_json())
    else:
        passes = (
            ("file and schema", report.file),
            ("SQLite integrity_check", report.integrity),
            ("foreign keys", report.foreign_keys),
            ("rows", report.rows),
        )
        for title, problems in passes:
            if report.file and title != "file and schema":
                break  # not goldpan's, or unreadable: nothing else was looked at
            mark = "ok" if not problems else f"{len(problems)} problem(s)"
            out.print(literal(f"{title}: {mark}"))
            for p in problems:
                out.print(literal(f"  {p}"))
        if report.rows_not_listed:
            out.print(literal(f"  ... and {report.rows_not_listed} more row problems"))
    if not report.ok:
        if not args.json:
            err.print(literal(f"goldpan: {args.workspace} {VERDICTS[report.verdict]}"))
        raise Unusable
    if not args.json:
        out.print(literal(f"{args.workspace}: no problems found"))
