"""Corpus and question text as data, never markup.

Documents and questions may contain ``[bold]``, ``[/]``, ``[link=...]``, ``$variable`` or
ANSI escape sequences. Everything user-provided is turned into a :class:`rich.text.Text`
here, with control characters replaced by their visible Unicode pictures (ESC shows as
``␛``; a C1 control such as U+009B, which some terminals obey as CSI, as ``�``), so
nothing in a corpus can style, link or move the cursor. Neither rich nor Textual does
this by itself: both drop only BEL, BS, VT, FF and CR and pass ESC to the terminal.

:func:`visible` is the one sanitizer of text shown on a terminal: every Text built here
uses it, the app's notices go through it (``GoldpanApp.notify``), the CLI prints through
:func:`literal`, and ``--json`` output escapes the same characters (:func:`json_escaped`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from rich.text import Text

# Invisible format characters (Unicode category Cf) that hide or reorder text: zero-width
# spaces and joiners, bidirectional marks, embeddings, overrides and isolates (the
# "Trojan Source" characters), word joiners and invisible operators, the BOM / zero-width
# no-break space, the soft hyphen, the Arabic letter mark and the Mongolian vowel
# separator. Two ids that differ only by one of these would look the same.
_FORMAT = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_FORMAT}]")


def _picture(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if code <= 0x9F:
        return "\ufffd"  # C1 controls have no pictures
    return f"\u27e8U+{code:04X}\u27e9"  # a format character: ⟨U+200B⟩


def visible(s: str) -> str:
    """Control characters (but newline and tab) as Unicode control pictures.

    Invisible format characters (zero-width, bidi overrides, BOM) show as their code
    point between angle brackets, ``⟨U+202E⟩``, so they can neither hide nor reorder text.
    """
    return _CONTROL.sub(_picture, s)


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
