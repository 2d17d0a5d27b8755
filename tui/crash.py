"""The crash policy, in one place: what goldpan says about an exception it did not expect.

A :class:`~engine.errors.GoldpanError` is the user's to act on: its message is the whole
notice. Anything else is a bug: its traceback goes to a crash log (no document text, no
token), and the one line shown says it is a bug and where the log is.

Its callers: the CLI's exit codes (:func:`tui.cli.main`: exit 3 with :func:`bug_notice`),
``goldpan open``'s app (:mod:`tui.cli.commands.app`) and a served tab (:mod:`tui.serve.served_app`)
ending on an unhandled exception, the app's notices for a worker or an action
(:func:`failure_notice`, :func:`action_not_saved`), the serve preloader
(:mod:`tui.serve.preload`) and the server's log (:mod:`tui.serve.server`, via
:func:`write_crash_log`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.errors import GoldpanError


def state_dir() -> Path:
    """Where goldpan keeps logs: ``$XDG_STATE_HOME/goldpan`` or ``~/.local/state/goldpan``."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "goldpan"


def write_crash_log(exc: BaseException, argv: Sequence[str]) -> Path | None:
    """Write ``exc``'s full traceback to a new log file; its path (None if none could be made)."""
    import datetime as dt
    import tempfile
    import traceback

    from engine import __version__

    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    text = (
        f"goldpan {__version__}, Python {sys.version.split()[0]}, {sys.platform}\n"
        f"command: goldpan {' '.join(argv)}\n\n" + "".join(traceback.format_exception(exc))
    )
    for folder in (state_dir(), Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"goldpan-crash-{stamp}-{os.getpid()}.log"
            with path.open("x", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text)
            return path
        except OSError:
            continue
    return None


def bug_notice(exc: BaseException, argv: Sequence[str]) -> str:
    """A bug, in one line: what it was, that it is goldpan's, where its traceback went.

    Writes the crash log (``argv``: the command it names).
    """
    log = write_crash_log(exc, argv)
    where = f"the full traceback is in {log}" if log else "no log file could be written"
    return (
        f"internal error ({type(exc).__name__}: {exc}); this is a bug in goldpan, not in "
        f"your data: {where}"
    )


def failure_notice(exc: BaseException) -> str:
    """The one-line notice for ``exc`` (after "Pooling failed: " or the like)."""
    if isinstance(exc, GoldpanError):
        return str(exc)
    return bug_notice(exc, sys.argv[1:])


def action_not_saved(action: str, exc: GoldpanError) -> str:
    """The notice for an action whose change was rolled back (``action``: its name).

    A :class:`~engine.errors.GoldpanError` from an action (the workspace locked by another
    program for longer than goldpan waits, a full disk, a damaged row) comes from a write
    that was rolled back: the app says so and goes on. Any other exception ends the app:
    a bug, reported by ``goldpan open`` (exit 3, the traceback in a crash log).
    """
    grading = action.split("(")[0].rsplit(".", 1)[-1] in {"grade", "toggle_relevant"}
    return f"{'The label' if grading else 'The change'} was not saved: {exc}"
