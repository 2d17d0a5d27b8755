"""The log of ``goldpan serve``: one terminal line per record, never a token.

The server's terminal gets one line per event (who connected and left, each refused
request with its status), never a traceback (an unexpected error's goes to a crash log)
and never a token: every line is redacted (:func:`redact`) on its way out, whichever
library wrote it, because request lines and aiohttp's parse errors quote the URL. The
server (:mod:`tui.serve.server`) installs :class:`OneLineFormatter`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from tui.literal import visible

_TOKEN_IN_URL = re.compile(r"(token=|/ws/)[^\s&/?#'\"\\]+")


def redact(text: str, tokens: Iterable[str] = ()) -> str:
    """``text`` with every token as ``…``.

    The known tokens wherever they stand, and whatever follows ``token=`` or ``/ws/`` (a
    mistyped token is still most of someone's).
    """
    for token in tokens:
        if token:
            text = text.replace(token, "…")
    return _TOKEN_IN_URL.sub(r"\1…", text)


def reason_line(exc: BaseException) -> str:
    """What went wrong, on one line.

    For a request aiohttp could not parse, without the request bytes its message quotes.
    """
    from aiohttp.http_exceptions import HttpProcessingError

    if not isinstance(exc, HttpProcessingError):
        return f"{type(exc).__name__}: {exc}"
    kept = []
    for line in exc.message.splitlines():
        line = line.strip()
        if line.startswith(("b'", 'b"', "^")):
            break
        if line:
            kept.append(line.rstrip(":"))
    return f"{exc.code} {': '.join(kept)}"


class OneLineFormatter(logging.Formatter):
    """Every log record as one terminal line.

    Tokens redacted, control characters shown, no traceback (an unexpected exception's
    traceback goes to a crash log, which the line names).
    """

    def __init__(
        self,
        tokens: Callable[[], Iterable[str]],
        crash_log: Callable[[BaseException], Path | None],
    ) -> None:
        """``tokens``: the live tokens to redact; ``crash_log`` writes a traceback."""
        super().__init__()
        self.tokens = tokens
        self.crash_log = crash_log

    def format(self, record: logging.LogRecord) -> str:
        """The record's message, one line."""
        from aiohttp.http_exceptions import HttpProcessingError

        text = record.getMessage()
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):  # aiohttp's "Error handling request from IP"
            remote = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            text = f"goldpan: refused a malformed request from {remote} ({reason_line(exc)})"
        elif exc is not None:
            where = self.crash_log(exc)
            text = f"goldpan: {text}: {reason_line(exc)}"
            text += f" (the traceback is in {where})" if where else ""
        return visible(" ".join(redact(text, self.tokens()).split()))
