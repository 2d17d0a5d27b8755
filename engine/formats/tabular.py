"""Shared text, CSV and JSON lines handling for every format's reader and writer.

Text is decoded as strict UTF-8; a byte-order mark and CRLF line ends are accepted.
JSONL and CSV records are read with their line numbers (duplicate keys and headers
refused); CSV cells are neutralised for spreadsheets on export and un-neutralised on import.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from engine.formats.errors import IngestError
from engine.formats.ids import form_clash, nfc
from engine.formats.jsontext import load_json
from engine.formats.outfiles import not_regular
from engine.grades import GRADE_RANGE

# A document of tens of megabytes may sit in one CSV field; the csv module's default limit
# (128 KiB) would call that malformed.
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))

_LINE_END = re.compile(r"\r\n?|\n")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def read_text(path: Path) -> str:
    """The whole file as text: strict UTF-8, BOM dropped, line ends kept.

    Raises:
        IngestError: missing, a folder, empty, binary, UTF-16/32 or not UTF-8.
    """
    if not path.exists():
        raise IngestError(path, None, "no such file")
    if path.is_dir():
        raise IngestError(path, None, "is a folder, expected a file")
    odd = not_regular(path)  # before any open, which would block on a FIFO
    if odd is not None:
        raise IngestError(path, None, f"{odd}; goldpan reads regular files only")
    from engine.workspace import held

    with held.plain_read_allowed(path) as plain:
        if not plain:  # reading it here would drop this process's locks on it
            raise IngestError(path, None, "is an open workspace (SQLite), not a text file")
        data = path.read_bytes()
    if not data.strip():
        raise IngestError(path, None, "the file is empty")
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            raise IngestError(
                path, None, f"looks like {name} text (byte-order mark); expected UTF-8"
            )
    nul = data.find(b"\0")
    if 0 <= nul < 8192:
        raise IngestError(path, None, "looks like a binary file (NUL bytes); expected text")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise IngestError(path, line, "a NUL byte (binary data?); expected text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise IngestError(
            path, line, f"invalid UTF-8 (byte 0x{data[exc.start]:02x}); expected UTF-8 text"
        ) from None


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for each non-blank line; CRLF and CR line ends accepted.

    Only CR and LF end a line: U+2028, U+0085 and the like are text (a JSON writer leaves
    them unescaped inside strings).
    """
    for n, line in enumerate(_LINE_END.split(text), start=1):
        if line.strip():
            yield n, line


def _plain(value: Any) -> Any:
    """YAML / JSON values made JSON-safe (dates as ISO strings)."""
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _lone_surrogate(value: Any, where: str) -> tuple[str, str] | None:
    """(where, character) of the first lone surrogate in a JSON value, else None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return where, value[exc.start]
        return None
    if isinstance(value, Mapping):
        for k, v in value.items():
            found = _lone_surrogate(k, where) or _lone_surrogate(v, f"{where}.{k}".lstrip("."))
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _lone_surrogate(v, f"{where}[{i}]")
            if found:
                return found
    return None


def _surrogate_message(where: str, char: str) -> str:
    place = f" in `{where}`" if where else ""
    return (
        f"a \\u{ord(char):04x} escape{place} is half of a surrogate pair, not a character; "
        "expected valid Unicode text"
    )


def _text_field(record: Mapping[str, Any], key: str, path: Path, line: int | None) -> str:
    value = record.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise IngestError(path, line, f"field `{key}` must be a string, got {type(value).__name__}")
    return value


def _check_unique(
    seen: dict[str, tuple[str, int]], ident: str, path: Path, line: int, what: str
) -> None:
    """Refuse an id seen before, also in another Unicode form (``seen``: NFC -> id, line)."""
    key = nfc(ident)
    if key in seen:
        first, first_line = seen[key]
        if first != ident:
            raise IngestError(path, line, form_clash(ident, first, what) + f" (line {first_line})")
        raise IngestError(
            path, line, f"duplicate {what} id {ident!r} (first seen on line {first_line})"
        )
    seen[key] = (ident, line)


def _jsonl_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for n, line in _lines(read_text(path)):
        record = load_json(line, path, n, hint="; expected one JSON object per line")
        if not isinstance(record, dict):
            raise IngestError(path, n, f"expected a JSON object, got {type(record).__name__}")
        if _SURROGATE_ESCAPE.search(line):
            found = _lone_surrogate(record, "")
            if found:
                raise IngestError(path, n, _surrogate_message(*found))
        yield n, record


_FORMULA_START = re.compile(r"'*[=+\-@\t\r]")
"""A cell a spreadsheet would run as a formula (OWASP's CSV injection list), possibly
behind quotes that an exporter added: :func:`spreadsheet_safe`."""


def unescape_formula(cell: str) -> str:
    """A cell as written before :func:`spreadsheet_safe` (one ``'`` less).

    goldpan's CSV exports put ``'`` before a cell starting with ``=``, ``+``, ``-``,
    ``@``, tab or CR (and before one already starting with quotes and then one of
    those), so that a spreadsheet shows it as text; its importers of those formats take
    that quote away again, so an export imports back unchanged.
    """
    if cell.startswith("'") and _FORMULA_START.match(cell, 1):
        return cell[1:]
    return cell


def _csv_records(
    path: Path, delimiter: str = ",", columns: tuple[str, ...] = (), *, unescape: bool = False
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, row) for each non-blank row; the header must name ``columns`` (else an id).

    ``unescape``: cells go through :func:`unescape_formula` (goldpan's own CSV formats).
    """
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        if not reader.fieldnames:
            raise IngestError(path, 1, "expected a header row")
        header = [h.strip() for h in reader.fieldnames]
        seen_columns: set[str] = set()
        for h in header:
            if h in seen_columns:
                raise IngestError(
                    path,
                    1,
                    f"column {h!r} appears twice in the header; "
                    "expected each column once (which one would hold the value?)",
                )
            seen_columns.add(h)
        reader.fieldnames = header
        if columns:
            if any(c not in header for c in columns):
                raise IngestError(
                    path, 1, f"the header needs the columns {', '.join(columns)}; found {header}"
                )
        elif "id" not in header and "_id" not in header:
            raise IngestError(path, 1, f"the header needs an `id` column; found {header}")
        for row in reader:
            n = reader.line_num
            if None in row:
                raise IngestError(path, n, f"more fields than the {len(header)} in the header")
            if any(v is None for v in row.values()):
                raise IngestError(path, n, f"fewer fields than the {len(header)} in the header")
            if not any((v or "").strip() for v in row.values()):
                continue
            if unescape:
                row = {k: unescape_formula(v) for k, v in row.items()}
            yield n, row
    except csv.Error as exc:
        # line_num still counts the lines before the broken record: name where it starts
        hint = "; a quoted field is never closed" if "end of data" in str(exc) else ""
        raise IngestError(path, reader.line_num + 1, f"malformed CSV ({exc}){hint}") from None


# -- qrels -------------------------------------------------------------------------------


def _grade(raw: str, path: Path, line: int) -> int:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if "_" in raw or not math.isfinite(value):  # float() takes 1_0, nan and inf
        raise IngestError(path, line, f"grade {raw!r} is not a number; expected {GRADE_RANGE}")
    if value != int(value):
        raise IngestError(
            path, line, f"grade {raw!r} is not a whole number; expected {GRADE_RANGE}"
        )
    return int(value)


def spreadsheet_safe(cell: object) -> object:
    """A CSV cell a spreadsheet shows as text, never runs as a formula (CSV injection).

    OWASP's rule: a cell starting with ``=``, ``+``, ``-``, ``@``, tab or CR gets a
    leading ``'``. A cell that already starts with quotes and then one of those gets one
    more, so that :func:`unescape_formula` (goldpan's CSV
    importers) takes exactly one away and every cell imports back as it was.
    Numbers are left alone.
    """
    if isinstance(cell, str) and _FORMULA_START.match(cell):
        return "'" + cell
    return cell


# -- JSON lines ---------------------------------------------------------------------------

# Line separators that JSON leaves unescaped but str.splitlines() (and so a JSONL reader
# that splits lines the Python way) would break a record at.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def jsonl_line(record: Mapping[str, Any]) -> str:
    """One JSON object on one line: UTF-8 kept, every line-breaking character escaped."""
    text = json.dumps(record, ensure_ascii=False)
    for raw, escaped in _LINE_BREAKS.items():
        text = text.replace(raw, escaped)  # only possible inside a JSON string
    return text + "\n"
