"""A served tab's websocket messages, as goldpan reads them: each checked, junk ignored.

textual-serve's browser page speaks a small protocol on its websocket (keys, the terminal's
size, pings, focus); whoever holds an annotator's link can send anything on it instead.
:func:`relay` passes each message that is one of the protocol's to the tab's app, and
ignores any other with a log line: a junk message never ends a session.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

TERMINAL_WIDTHS = range(1, 2001)
TERMINAL_HEIGHTS = range(1, 1001)
"""The terminal sizes a tab may ask for (the websocket's ``?width=&height=``, a
``resize``), in cells."""

log = logging.getLogger("goldpan.serve")


class NotAMessage(Exception):
    """A tab's websocket message that is not one of textual-serve's; the text says why."""


LOGGED_JUNK = 3
"""How many messages a tab sends that goldpan does not take are logged, one line each."""


def browser_message(text: str) -> tuple[str, Any]:
    """A tab's websocket message (textual-serve's protocol) as ``(kind, data)``, checked.

    ``["stdin", TEXT]``, ``["resize", {"width": W, "height": H}]`` (whole numbers within
    :data:`TERMINAL_WIDTHS` and :data:`TERMINAL_HEIGHTS`, as the websocket's own query),
    ``["ping", DATA]``, ``["blur"]`` and ``["focus"]``.

    Raises:
        NotAMessage: anything else (not JSON, an unknown kind, a resize to 10**9 columns
            or to ``"wide"``), saying why.
    """
    try:
        envelope = json.loads(text)
    except (ValueError, RecursionError):  # the browser's text, which JSON refuses
        raise NotAMessage("a message that is not JSON") from None
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        raise NotAMessage("a message that is not [kind, data]")
    kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
    if kind == "stdin":
        if not isinstance(data, str) or re.search("[\ud800-\udfff]", data):
            raise NotAMessage("keys that are not text")
        return kind, data
    if kind == "resize":
        size = data if isinstance(data, dict) else {}
        width, height = size.get("width"), size.get("height")
        if not all(type(n) is int for n in (width, height)) or not (
            width in TERMINAL_WIDTHS and height in TERMINAL_HEIGHTS
        ):
            raise NotAMessage(
                f"a resize to {_shown(width)} by {_shown(height)} cells (up to "
                f"{TERMINAL_WIDTHS[-1]} by {TERMINAL_HEIGHTS[-1]} are taken)"
            )
        return kind, (width, height)
    if kind in ("ping", "blur", "focus"):
        return kind, data
    raise NotAMessage(f"a message of unknown kind {_shown(kind)}")


def _shown(value: Any) -> str:
    """A value from a message, for a log line: short, as data."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


async def relay(websocket: Any, service: Any, who: str) -> None:
    """Pass each message of a tab's websocket to its app, until the websocket closes.

    Every message is checked first (:func:`browser_message`): one goldpan does not take
    (a junk resize) is ignored, with a log line for the first :data:`LOGGED_JUNK` of them,
    and the session goes on; it never ends a session as a bug.
    """
    from aiohttp import WSMsgType

    ignored = 0
    async for message in websocket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            kind, data = browser_message(message.data)
        except NotAMessage as exc:
            ignored += 1
            if ignored <= LOGGED_JUNK:
                log.warning("goldpan: %s's tab sent %s; ignored", who, exc)
            continue
        if kind == "stdin":
            await service.send_bytes(data.encode("utf-8"))
        elif kind == "resize":
            await service.set_terminal_size(*data)
        elif kind == "ping":
            await websocket.send_json(["pong", data])
        elif kind == "blur":
            await service.blur()
        else:
            await service.focus()
