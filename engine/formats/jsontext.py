"""JSON from a user's file, decoded with every failure named by file and line.

``json.loads`` fails in three ways besides malformed text, none of which names a place:
an integer of more than 4,300 digits (Python's limit on converting text to int) is a
plain ``ValueError``, nesting deeper than the interpreter's recursion limit is a
``RecursionError``, and nesting it does decode may still be too deep for the code that
copies and prints it (:data:`engine.types.MAX_JSON_DEPTH`). :func:`load_json` turns all
of them into :class:`~engine.formats.errors.IngestError` naming the file and, where it
can be found, the line.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from engine.formats.errors import IngestError
from engine.types import MAX_JSON_DEPTH
from engine.workspace.rows import too_deep

_DIGITS_LIMIT = sys.get_int_max_str_digits() or 4300
_LONG_DIGITS = re.compile(f"[0-9]{{{_DIGITS_LIMIT + 1},}}")


def _line_of(text: str, at: int, first_line: int | None) -> int | None:
    """The line of offset ``at`` in ``text``, counted from ``first_line`` (None: unknown)."""
    return (first_line or 1) + text.count("\n", 0, at) if first_line is not None else None


def load_json(text: str, path: Path | str, line: int | None = 1, hint: str = "") -> Any:
    """``text`` decoded; :class:`IngestError` naming ``path`` and the line otherwise.

    ``line``: the line ``text`` starts on (a JSON-lines record's), or None when lines mean
    nothing for this input. ``hint`` ends the message of malformed JSON. A one-line text
    (a record) is told by column, a document by line.
    """
    one_line = "\n" not in text.rstrip("\n")
    deep = f"JSON nested too deeply (goldpan reads up to {MAX_JSON_DEPTH} levels)"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        where = _line_of(text, exc.pos, line)
        column = f" at column {exc.colno}" if one_line else ""
        raise IngestError(path, where, f"malformed JSON ({exc.msg}{column}){hint}") from None
    except RecursionError:
        raise IngestError(path, line if one_line else None, deep) from None
    except ValueError:  # json's only other failure: an integer too long for int()
        found = _LONG_DIGITS.search(text)
        where = _line_of(text, found.start(), line) if found else line
        size = f"of {len(found.group()):,} digits" if found else "too long"
        raise IngestError(
            path, where, f"a number {size}; goldpan reads numbers of up to {_DIGITS_LIMIT:,} digits"
        ) from None
    if too_deep(value):
        raise IngestError(path, line if one_line else None, deep)
    return value
