"""The id grammar every format shares.

An id is any non-empty text without control characters, kept exactly as written
(:func:`_check_id`); two ids that differ only in Unicode form are refused
(:func:`nfc`, :func:`form_clash`). Whitespace-separated formats (TREC) split columns on
:data:`ASCII_SPACE` only, so an id written there must hold none of it (:func:`check_id`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.errors import BadInput
from engine.formats.errors import IngestError

ASCII_SPACE = " \t\r\n\x0b\x0c"
"""What separates TREC columns (trec_eval splits on ASCII whitespace only: an id may hold
a no-break space). Readers split and strip at it; writers refuse an id holding it."""
_ASCII_FIELDS = re.compile(f"[{re.escape(ASCII_SPACE)}]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def nfc(ident: str) -> str:
    """An id in Unicode NFC form, to find ids that differ only in form.

    ``é`` as one code point and ``e`` plus a combining accent look the same. goldpan
    keeps ids exactly as written (NFC would also change CJK compatibility ideographs
    such as U+F900, which other tools keep) and refuses two ids that differ only so.
    """
    return ident if ident.isascii() else unicodedata.normalize("NFC", ident)


def form_clash(ident: str, other: str, what: str) -> str:
    """The message for two ids equal but for their Unicode form."""
    return (
        f"{what} id {ident!r} and {other!r} differ only in Unicode form (NFC/NFD) and look "
        "the same; write them in one form (NFC) or give them different ids"
    )


def _check_id(ident: str, path: Path, line: int | None, what: str = "id") -> str:
    """``ident`` when usable as an id: not empty, no control characters."""
    if not ident:
        raise IngestError(path, line, f"record has an empty {what}")
    if _CONTROL.search(ident):
        raise IngestError(
            path, line, f"{what} {ident!r} contains a control character; expected printable text"
        )
    return ident


def _id_of(record: Mapping[str, Any], path: Path, line: int | None) -> str:
    key = "_id" if "_id" in record else "id"
    raw = record.get(key)
    if raw is None:
        raise IngestError(path, line, "record has no id; expected an `_id` or `id` field")
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        raise IngestError(
            path, line, f"field `{key}` must be text or a whole number, got {type(raw).__name__}"
        )
    return _check_id(str(raw).strip(), path, line)


def check_id(ident: str, what: str, *, first_column: bool = False) -> None:
    """Refuse an id that a whitespace-separated line could not give back unchanged.

    Raises:
        BadInput: the id is empty, holds whitespace or NUL, or (``first_column``)
            starts with ``#`` (a comment line) or U+FEFF (taken as a byte-order mark).
    """
    if not ident:
        raise BadInput(f"empty {what} id; TREC lines need every id")
    if any(c in ASCII_SPACE or c == "\0" for c in ident):
        raise BadInput(
            f"{what} id {ident!r} holds whitespace; TREC files separate columns by "
            "whitespace (export questions-jsonl or beir instead)"
        )
    if first_column and ident[0] in "#\ufeff":
        raise BadInput(f"{what} id {ident!r} starts with {ident[0]!r}; readers would skip it")
