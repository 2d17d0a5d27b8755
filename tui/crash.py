"""What the app says about an exception that a worker or an action did not expect.

The CLI's policy (:func:`tui.cli.main`), for the app: a
:class:`~engine.errors.GoldpanError` is the user's to act on and its message is the
notice; anything else is a bug, so its traceback goes to a crash log (the same file
``goldpan`` writes, no document text, no token) and the notice says where.
"""

from __future__ import annotations

import sys

from engine.errors import GoldpanError


def failure_notice(exc: BaseException) -> str:
    """The one-line notice for ``exc`` (after "Pooling failed: " or the like)."""
    if isinstance(exc, GoldpanError):
        return str(exc)
    from tui.cli.commands.common import write_crash_log

    log = write_crash_log(exc, sys.argv[1:])
    where = f"the full traceback is in {log}" if log else "no log file could be written"
    return (
        f"internal error ({type(exc).__name__}: {exc}); this is a bug in goldpan, not in "
        f"your data: {where}"
    )
