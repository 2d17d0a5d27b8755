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
    app = GoldpanApp(path, annotator=annotator_name(annotator), readonly=readonly, backup=backup)
    app.run()
    if app.crash is not None:  # reported by main: exit 2 or 3, never a traceback
        raise app.crash


def cmd_open(args: argparse.Namespace) -> None:
    """Open a workspace in the TUI."""
    _run_app(Path(args.workspace), args.annotator, readonly=args.read_only)


def cmd_demo(args: argparse.Namespace) -> None:
    """Build the demo workspace if needed, then open it (or print its scores)."""
    from engine.demo import build_demo
    from engine.retrieve import DEFAULT_DEPTH
    from engine.scoring import DEFAULT_KS, metric_names, score_workspace
    from tui.cli.commands.scores import score_table

    path = Path(args.path)
    if args.force or not path.exists():
        with progress_bar(True) as progress:
            build_demo(path, force=args.force, progress=progress).close()
        err.print(literal(f"built the demo workspace at {path}"))
    with open_workspace(str(path)) as ws:
        pool_stale(ws, None, DEFAULT_DEPTH, quiet=False)
        if args.no_open:
            board = score_workspace(ws)
    if args.no_open:
        out.print(score_table(board, metric_names(DEFAULT_KS), None))
    else:
        _run_app(path, args.annotator)
