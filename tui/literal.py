"""Corpus and question text as data, never markup.

Documents and questions may contain ``[bold]``, ``[/]``, ``[link=...]``, ``$variable`` or
ANSI escape sequences. Everything user-provided is turned into a :class:`rich.text.Text`
here, with control characters replaced by their visible Unicode pictures (ESC shows as
``␛``; a C1 control such as U+009B, which some terminals obey as CSI, as ``�``), so
nothing in a corpus can style, link or move the cursor. Neither rich nor Textual does
this by itself: both drop only BEL, BS, VT, FF and CR and pass ESC to the terminal.

:func:`visible` (its home is :mod:`engine.visible`, which the CI reports use too) is the
one sanitizer of text shown on a terminal: every Text built here uses it, the app's
notices go through it (``GoldpanApp.notify``), the CLI prints through :func:`literal`,
and ``--json`` output escapes the same characters (:func:`json_escaped`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from rich.text import Text

from engine.visible import CONTROL as _CONTROL
from engine.visible import visible as visible


def json_escaped(text: str) -> str:
    r"""JSON text with the characters :func:`visible` pictures written as ``\uXXXX``.

    ``json.dumps`` leaves DEL, C1 and format characters raw, and a terminal obeys U+009B
    as CSI. They can only be inside strings, so the escaped JSON means the same.
    """
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def literal(s: str, style: str = "") -> Text:
    """A Text that shows ``s`` exactly as written."""
    return Text(visible(s), style=style, no_wrap=False)


def one_line(s: str, width: int = 0) -> Text:
    """``s`` on one line (newlines as spaces), cut to ``width`` characters when given."""
    flat = " ".join(visible(s).split())
    if width and len(flat) > width:
        flat = flat[: max(1, width - 1)] + "…"
    return Text(flat)


def highlighted(s: str, terms: Iterable[str], style: str = "bold reverse") -> Text:
    """``s`` literally, with every occurrence of ``terms`` (case-insensitive) styled."""
    text = literal(s)
    words = sorted({t for t in terms if t.strip()}, key=len, reverse=True)
    if words:
        pattern = "|".join(re.escape(w) for w in words)
        text.highlight_regex(re.compile(pattern, re.IGNORECASE), style=style)
    return text


def command_shown(command: str) -> str:
    r"""A command line as people must read it before trusting it.

    Anything but printable ASCII (controls, invisible and bidi characters, look-alike
    letters) is ``\u``-escaped, so that what is shown is what runs.
    """
    if command.isascii() and command.isprintable():
        return command
    return json.dumps(command)
