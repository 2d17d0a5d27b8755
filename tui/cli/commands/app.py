"""Commands that open the terminal UI: open and demo.

The only CLI module that reaches Textual (an import contract says so), and only when one
of these commands runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tui.cli.commands.common import (
    annotator_name,
    err,
    open_workspace,
    out,
    pool_stale,
    progress_bar,
)
from tui.literal import literal


def _run_app(path: Path, annotator: str | None, *, readonly: bool = False) -> None:
    from tui.app import GoldpanApp

    # a clear error (exit 2) before the screen is taken over; an upgrade happens here
    with open_workspace(str(path), readonly=readonly) as ws:
        backup = ws.backup_path
    app = GoldpanApp(
        path,
        annotator=annotator_name(annotator),
        readonly=readonly,
        backup=backup,
        freeze_heap=True,  # this process is this one app
    )
    app.run()
    if app.crash is not None:  # reported by main: exit 2 or 3, never a traceback
        raise app.crash


def cmd_open(args: argparse.Namespace) -> None:
    """Open a workspace in the TUI."""
    _run_app(Path(args.workspace), args.annotator, readonly=args.read_only)


def cmd_demo(args: argparse.Namespace) -> None:
    """Build the demo workspace if needed, then open it (or print its scores)."""
    path = Path(args.path)
    if args.force or not path.exists():
        from engine.demo import build_demo  # the retrievers: not needed to reopen it

        # opening, the app pools the Kiwi and e5 retrievers in a worker once it shows
        with progress_bar(True) as progress:
            build_demo(path, force=args.force, progress=progress, slow=args.no_open).close()
        err.print(literal(f"built the demo workspace at {path}"))
    if not args.no_open:  # what is not ranked yet is ranked by the app, after its first paint
        _run_app(path, args.annotator)
        return
    from engine.pooling import DEFAULT_DEPTH
    from engine.scoring import DEFAULT_KS, metric_names, score_workspace
    from tui.cli.commands.scores import score_table

    with open_workspace(str(path)) as ws:
        report = pool_stale(ws, None, DEFAULT_DEPTH, quiet=False)
        board = score_workspace(ws, cannot_rank=report.cannot_rank() if report else ())
    out.print(score_table(board, metric_names(DEFAULT_KS), None))
