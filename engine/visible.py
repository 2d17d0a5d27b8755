"""Text from a corpus or a question made visible: the one sanitizer of shown text.

Documents and questions are data, and may hold ESC, BEL, CSI and OSC sequences (colours,
screen erases, OSC 52 clipboard writes), C1 controls (U+009B, which some terminals obey
as CSI) and invisible format characters (zero-width spaces, bidi overrides: the "Trojan
Source" characters). :func:`visible` writes each as something that shows: a control
character as its Unicode control picture (ESC as ``␛``), a C1 control as ``�``, a format
character as its code point between angle brackets, ``⟨U+202E⟩``. Nothing can style,
link, move the cursor or reorder text.

Callers: the terminal UI and the CLI (``tui.literal``, which builds every Text from it and
escapes ``--json`` with :data:`CONTROL`), and the CI reports (:mod:`engine.ci.reports`,
through :func:`visible_line`, which also shows line breaks and tabs: a question cannot
start a line of its choosing in a report).
"""

from __future__ import annotations

import re

# Invisible format characters (Unicode category Cf) that hide or reorder text: zero-width
# spaces and joiners, bidirectional marks, embeddings, overrides and isolates, word
# joiners and invisible operators, the BOM / zero-width no-break space, the soft hyphen,
# the Arabic letter mark and the Mongolian vowel separator. Two ids that differ only by
# one of these would look the same.
_FORMAT = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_FORMAT}]")
"""What :func:`visible` pictures: every control character but newline and tab, and the
invisible format characters."""
_CONTROL_OR_BREAK = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029{_FORMAT}]")


def _picture(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if code <= 0x9F:
        return "\ufffd"  # C1 controls have no pictures
    return f"\u27e8U+{code:04X}\u27e9"  # a format character or a line separator: ⟨U+200B⟩


def visible(s: str) -> str:
    """Control characters (but newline and tab) as Unicode control pictures.

    Invisible format characters (zero-width, bidi overrides, BOM) show as their code
    point between angle brackets, ``⟨U+202E⟩``, so they can neither hide nor reorder text.
    """
    return CONTROL.sub(_picture, s)


def visible_line(s: str) -> str:
    """:func:`visible`, and line breaks and tabs too (``␊``, ``␍``, ``␉``): one line.

    Also U+2028 and U+2029, which some readers take as line breaks.
    """
    return _CONTROL_OR_BREAK.sub(_picture, s)
