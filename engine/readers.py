"""File readers: corpus, questions and qrels files into plain records.

Readers only parse and validate one file; they never touch a workspace. Every problem is
an :class:`IngestError` naming the file, the line (where there is one) and what was
expected. Text is decoded as strict UTF-8; a byte-order mark and CRLF line ends are
accepted.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import io
import json
import math
import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from engine.rows import too_deep
from engine.types import (
    GRADE_RANGE,
    GRADES,
    MAX_JSON_DEPTH,
    VERDICTS,
    Doc,
    Label,
    Question,
    Verdict,
)

# A document of tens of megabytes may sit in one CSV field; the csv module's default limit
# (128 KiB) would call that malformed.
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))

_LINE_END = re.compile(r"\r\n?|\n")
_ASCII_SPACE = " \t\r\n\x0b\x0c"
_ASCII_FIELDS = re.compile(r"[ \t\r\n\x0b\x0c]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_MAX_FRONT_MATTER_VALUES = 100_000
_GRADE = re.compile(r"[+-]?\d+(\.0+)?")


class IngestError(Exception):
    """Bad input: which file, which line, and what was expected."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        """Record where the problem is."""
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class QrelLine:
    """One qrels judgment with the line it came from."""

    question_id: str
    doc_id: str
    grade: int
    line: int


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
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(
                path,
                n,
                f"malformed JSON ({exc.msg} at column {exc.colno}); "
                "expected one JSON object per line",
            ) from None
        except RecursionError:
            raise IngestError(path, n, "JSON nested too deeply") from None
        if not isinstance(record, dict):
            raise IngestError(path, n, f"expected a JSON object, got {type(record).__name__}")
        if too_deep(record):
            raise IngestError(
                path, n, f"JSON nested too deeply (goldpan reads up to {MAX_JSON_DEPTH} levels)"
            )
        if _SURROGATE_ESCAPE.search(line):
            found = _lone_surrogate(record, "")
            if found:
                raise IngestError(path, n, _surrogate_message(*found))
        yield n, record


_FORMULA_START = re.compile(r"'*[=+\-@\t\r]")
"""A cell a spreadsheet would run as a formula (OWASP's CSV injection list), possibly
behind quotes that an exporter added: :func:`engine.formats.spreadsheet_safe`."""


def unescape_formula(cell: str) -> str:
    """A cell as written before :func:`engine.formats.spreadsheet_safe` (one ``'`` less).

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


# -- documents ---------------------------------------------------------------------------

DOC_FORMATS = ("auto", "markdown", "jsonl", "csv")


def detect_doc_format(path: Path) -> str:
    """``markdown`` for a folder, else by file suffix."""
    if path.is_dir():
        return "markdown"
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix in (".md", ".markdown"):
        return "markdown"
    raise IngestError(
        path, None, "cannot tell the format from the name; pass --format markdown|jsonl|csv"
    )


def read_docs(path: Path, fmt: str = "auto", warnings: list[str] | None = None) -> list[Doc]:
    """Documents from a Markdown folder, a JSONL file or a CSV file.

    ``warnings`` collects what a folder scan skipped (see :func:`read_markdown_docs`).
    """
    if fmt not in DOC_FORMATS:
        raise IngestError(path, None, f"unknown format {fmt!r}; expected one of {DOC_FORMATS}")
    if fmt == "auto":
        if not path.exists():
            raise IngestError(path, None, "no such file or folder")
        fmt = detect_doc_format(path)
    if fmt == "markdown":
        return read_markdown_docs(path, warnings)
    if fmt == "jsonl":
        return read_jsonl_docs(path)
    return read_csv_docs(path)


def read_jsonl_docs(path: Path) -> list[Doc]:
    """BEIR corpus shape: ``_id``/``id``, ``title``, ``text``; other keys become fields."""
    docs: list[Doc] = []
    seen: dict[str, tuple[str, int]] = {}
    for n, rec in _jsonl_records(path):
        ident = _id_of(rec, path, n)
        _check_unique(seen, ident, path, n, "document")
        fields = {k: _plain(v) for k, v in rec.items() if k not in ("_id", "id", "title", "text")}
        docs.append(
            Doc(
                ident, _text_field(rec, "title", path, n), _text_field(rec, "text", path, n), fields
            )
        )
    return docs


def read_csv_docs(path: Path) -> list[Doc]:
    """CSV (or TSV) with a header ``id,title,text,...``; other columns become fields."""
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    docs: list[Doc] = []
    seen: dict[str, tuple[str, int]] = {}
    for n, row in _csv_records(path, delimiter):
        ident = _id_of(row, path, n)
        _check_unique(seen, ident, path, n, "document")
        fields = {k: v for k, v in row.items() if k not in ("_id", "id", "title", "text")}
        docs.append(Doc(ident, row.get("title", "") or "", row.get("text", "") or "", fields))
    if not docs:
        raise IngestError(path, None, "no documents after the header row; expected one per row")
    return docs


_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
# Alt text without brackets and a target without parentheses: each scan stops at the next
# bracket or parenthesis, so a line of ten thousand `![` stays linear.
_IMAGE = re.compile(r"!\[[^\[\]]*\]\([^()]*\)")


def markdown_body(body: str) -> str:
    """The body without fenced code blocks and image links."""
    out: list[str] = []
    fence: str | None = None
    for line in body.splitlines():
        m = _FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(2)
                continue
            out.append(_IMAGE.sub("", line))
        elif m and m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence):
            fence = None
    return "\n".join(out).strip()


def _front_matter(loaded: Mapping[Any, Any], path: Path) -> dict[str, Any]:
    """The YAML mapping as JSON values: dates as ISO text; anything else is an error."""
    budget = [_MAX_FRONT_MATTER_VALUES]

    def value(v: Any, key: str) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise IngestError(
                path,
                2,
                f"front matter has over {_MAX_FRONT_MATTER_VALUES:,} values (YAML aliases?); "
                "expected a short key: value mapping",
            )
        if isinstance(v, dt.date | dt.datetime):
            return v.isoformat()
        if isinstance(v, str):
            found = _lone_surrogate(v, key)
            if found:
                raise IngestError(path, 2, "front matter: " + _surrogate_message(*found))
            return v
        if v is None or isinstance(v, bool | int | float):
            return v
        if isinstance(v, Mapping):
            return {str(value(k, key)): value(x, f"{key}.{k}") for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [value(x, f"{key}[{i}]") for i, x in enumerate(v)]
        raise IngestError(
            path,
            2,
            f"front matter `{key}` has a value of type {type(v).__name__}; "
            "expected text, numbers, dates, lists or mappings",
        )

    return {str(value(k, "")): value(v, str(k)) for k, v in loaded.items()}


def read_markdown_doc(path: Path) -> Doc:
    """One Markdown file with optional YAML front matter."""
    text = read_text(path)
    meta: dict[str, Any] = {}
    body = text
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        if end is None:
            raise IngestError(path, 1, "front matter opened with `---` is never closed")
        try:
            loaded = yaml.safe_load("".join(lines[1:end]))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 2 if mark is not None else 1
            problem = getattr(exc, "problem", None) or str(exc)
            raise IngestError(path, line, f"bad YAML front matter: {problem}") from None
        except (ValueError, OverflowError) as exc:  # e.g. a date such as 2024-13-45
            raise IngestError(path, 2, f"bad YAML front matter: {exc}") from None
        except RecursionError:
            raise IngestError(path, 2, "bad YAML front matter: nested too deeply") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise IngestError(path, 2, "front matter must be a YAML mapping (key: value)")
        meta = _front_matter(loaded, path)
        body = "".join(lines[end + 1 :])
    raw_id = meta.pop("id", None)
    if isinstance(raw_id, dict | list | bool):
        raise IngestError(path, 2, "front matter `id` must be text or a whole number")
    ident = str(raw_id).strip() if raw_id is not None else path.stem
    if not ident:
        raise IngestError(path, 2, "front matter `id` is empty")
    ident = _check_id(ident, path, 2 if raw_id is not None else None)
    title = meta.pop("title", None)
    if isinstance(title, dict | list):
        raise IngestError(path, 2, "front matter `title` must be text")
    if title is None:
        heading = next((ln for ln in body.splitlines() if ln.startswith("# ")), None)
        title = heading[2:].strip() if heading else path.stem
    fields = dict(meta)
    fields.setdefault("source", path.name)
    return Doc(ident, str(title), markdown_body(body), fields)


def _skip_reason(file: Path, root: Path) -> str | None:
    """Why a ``*.md`` entry of a folder scan is not read; None to read it."""
    try:
        real = Path(os.path.realpath(file))
        mode = real.stat().st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc.__class__.__name__})"
    if not real.is_relative_to(root):
        return f"a link to {real}, outside the imported folder"
    if stat.S_ISDIR(mode):
        return "a folder"
    if not stat.S_ISREG(mode):
        return "not a regular file (a FIFO, device or socket)"
    return None


def read_markdown_docs(path: Path, warnings: list[str] | None = None) -> list[Doc]:
    """Every ``*.md`` file under a folder (or one file), sorted by path.

    A folder scan skips, and lists in ``warnings``: symbolic links (to files or folders)
    leading outside the folder, and anything not a regular file (a FIFO named ``x.md``
    would block the read forever).
    """
    if path.is_file():
        return [read_markdown_doc(path)]
    if not path.exists():
        raise IngestError(path, None, "no such folder")
    if not path.is_dir():
        raise IngestError(path, None, "not a regular file or folder (a FIFO, device or socket)")
    root = Path(os.path.realpath(path))
    files = []
    for p in sorted(path.rglob("*")):
        if p.suffix.lower() not in (".md", ".markdown"):
            continue
        reason = _skip_reason(p, root)
        if reason is None:
            files.append(p)
        elif warnings is not None:
            warnings.append(f"skipped {p}: {reason}")
    if not files:
        raise IngestError(path, None, "no Markdown files (*.md) in this folder")
    docs: list[Doc] = []
    seen: dict[str, tuple[str, Path]] = {}
    for f in files:
        doc = read_markdown_doc(f)
        key = nfc(doc.id)
        if key in seen:
            first, where = seen[key]
            if first != doc.id:
                raise IngestError(f, None, form_clash(doc.id, first, "document") + f" (in {where})")
            raise IngestError(f, None, f"duplicate document id {doc.id!r} (also in {where})")
        seen[key] = (doc.id, f)
        docs.append(doc)
    return docs


# -- questions ---------------------------------------------------------------------------


def _tags(value: Any, path: Path, line: int) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        parts = re.split(r"[,;|]", value)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        parts = value
    else:
        raise IngestError(
            path, line, "`tags` must be a list of strings or a comma-separated string"
        )
    out: list[str] = []
    for p in parts:
        t = p.strip()
        if t and t not in out:
            out.append(t)
    return tuple(out)


def read_questions(path: Path) -> list[Question]:
    """Questions from JSONL (``_id``/``id``, ``text``, optional ``tags``) or CSV."""
    suffix = path.suffix.lower()
    records: Iterator[tuple[int, Mapping[str, Any]]]
    if suffix in (".csv", ".tsv"):
        records = _csv_records(path, "\t" if suffix == ".tsv" else ",", unescape=True)
    else:
        records = _jsonl_records(path)
    out: list[Question] = []
    seen: dict[str, tuple[str, int]] = {}
    for n, rec in records:
        ident = _id_of(rec, path, n)
        _check_unique(seen, ident, path, n, "question")
        text = _text_field(rec, "text", path, n).strip()
        if not text:
            raise IngestError(path, n, f"question {ident!r} has no text; expected a `text` field")
        out.append(Question(ident, text, _tags(rec.get("tags"), path, n), author="import"))
    if not out:
        raise IngestError(path, None, "no questions after the header row; expected one per row")
    return out


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


def read_qrels(path: Path) -> list[QrelLine]:
    """TREC qrels (``qid iter doc grade``) or a BEIR qrels TSV (``query-id corpus-id score``).

    A BEIR file is recognised by its header row. Grade -1 ("in the pool, unjudged" in
    TREC) lines are skipped; other grades must be 0-3. A (question, doc) pair may appear
    only once.
    """
    out: list[QrelLine] = []
    seen: dict[tuple[str, str], int] = {}
    first = True
    width = 0  # fields per line, fixed by the first judgment
    shapes = {4: "`qid iter doc grade` (TREC)", 3: "`qid doc grade` (BEIR)"}
    for n, line in _lines(read_text(path)):
        # Fields are split on tabs when there are any (ids may then hold spaces), else on
        # ASCII whitespace as trec_eval does (an id may hold a no-break space).
        text = line.strip(_ASCII_SPACE)
        fields = text.split("\t") if "\t" in text else _ASCII_FIELDS.split(text)
        parts = [p.strip(_ASCII_SPACE) for p in fields]
        judgment = len(parts) in shapes and len(parts) == (width or len(parts))
        if text.startswith("#") and not (judgment and _GRADE.fullmatch(parts[-1])):
            continue  # a comment (a judgment whose question id starts with # is not one)
        if first:
            first = False
            if len(parts) == 3 and not _GRADE.fullmatch(parts[2]):
                continue  # BEIR header: query-id, corpus-id, score
        if not width:
            if len(parts) not in shapes:
                raise IngestError(
                    path, n, f"expected {shapes[4]} or {shapes[3]}, got {len(parts)} fields"
                )
            width = len(parts)
        if len(parts) != width:
            raise IngestError(
                path, n, f"expected {shapes[width]} as on the first line, got {len(parts)} fields"
            )
        if "" in parts:
            raise IngestError(path, n, f"an empty field; expected {shapes[width]}")
        if width == 4:
            qid, _, doc, raw = parts
        else:
            qid, doc, raw = parts
        grade = _grade(raw, path, n)
        if grade == -1:
            continue
        if grade not in GRADES:
            raise IngestError(path, n, f"grade {grade} is out of range; expected {GRADE_RANGE}")
        key = (qid, doc)
        if key in seen:
            raise IngestError(
                path,
                n,
                f"question {qid!r} and document {doc!r} are judged twice "
                f"(first on line {seen[key]})",
            )
        seen[key] = n
        out.append(QrelLine(qid, doc, grade, n))
    return out


# -- SQuAD -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SquadSet:
    """Documents, questions and each question's source document from a SQuAD file."""

    docs: list[Doc]
    questions: list[Question]
    gold: list[tuple[str, str]]
    """(question id, doc id) pairs of the answerable questions."""
    no_answer: list[str] = dataclasses.field(default_factory=list)
    """Ids of SQuAD 2.0 unanswerable questions (``is_impossible``): no gold."""


def read_squad(path: Path, level: str) -> SquadSet:
    """A SQuAD 1.1 or 2.0 JSON file (such as KorQuAD) at article or paragraph level.

    Article: doc id = ``title``, doc title = title with ``_`` as spaces, text = the title
    line then the paragraphs, joined by newlines. Paragraph: doc id = ``title#i`` (i the
    0-based paragraph index), text = the paragraph. Each question's source is its gold,
    but a SQuAD 2.0 unanswerable question (``"is_impossible": true``; its
    ``plausible_answers`` are a distractor, not an answer) has none: it is listed in
    :attr:`SquadSet.no_answer`.
    """
    if level not in ("article", "paragraph"):
        raise IngestError(path, None, f"unknown level {level!r}; expected article or paragraph")
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(path, exc.lineno, f"malformed JSON ({exc.msg})") from None
    except RecursionError:
        raise IngestError(path, None, "JSON nested too deeply") from None
    if _SURROGATE_ESCAPE.search(text):
        found = _lone_surrogate(data, "")
        if found:
            raise IngestError(path, None, _surrogate_message(*found))

    def shape(where: str, expected: str) -> IngestError:
        return IngestError(path, None, f"{where}: expected {expected} (SQuAD 1.1 / 2.0 shape)")

    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise shape("top level", 'an object with a "data" list')
    docs: list[Doc] = []
    questions: list[Question] = []
    gold: list[tuple[str, str]] = []
    no_answer: list[str] = []
    seen_q: dict[str, tuple[str, str]] = {}
    seen_doc: dict[str, str] = {}
    for ai, article in enumerate(data["data"]):
        where = f"data[{ai}]"
        if not isinstance(article, dict) or not isinstance(article.get("title"), str):
            raise shape(where, 'an object with a "title" string')
        paragraphs = article.get("paragraphs")
        if not isinstance(paragraphs, list):
            raise shape(where, 'a "paragraphs" list')
        title = article["title"]
        if not title.strip():
            raise shape(where, 'a non-empty "title"')
        title = _check_id(title, path, None, f"{where}: title")
        if nfc(title) in seen_doc:
            first = seen_doc[nfc(title)]
            if first != title:
                raise IngestError(path, None, f"{where}: " + form_clash(title, first, "article"))
            raise IngestError(path, None, f"{where}: duplicate article title {title!r}")
        seen_doc[nfc(title)] = title
        contexts: list[str] = []
        for pi, para in enumerate(paragraphs):
            pwhere = f"{where}.paragraphs[{pi}]"
            if not isinstance(para, dict) or not isinstance(para.get("context"), str):
                raise shape(pwhere, 'an object with a "context" string')
            if not isinstance(para.get("qas"), list):
                raise shape(pwhere, 'a "qas" list')
            contexts.append(para["context"])
            doc_id = title if level == "article" else f"{title}#{pi}"
            for qi, qa in enumerate(para["qas"]):
                qwhere = f"{pwhere}.qas[{qi}]"
                if (
                    not isinstance(qa, dict)
                    or not isinstance(qa.get("id"), str | int)
                    or isinstance(qa.get("id"), bool)
                    or not isinstance(qa.get("question"), str)
                ):
                    raise shape(qwhere, 'an object with "id" and "question"')
                qid = str(qa["id"])
                if not qid.strip():
                    raise shape(qwhere, 'a non-empty "id"')
                qid = _check_id(qid, path, None, f"{qwhere}: id")
                if not qa["question"].strip():
                    raise IngestError(path, None, f"{qwhere}: question {qid!r} has no text")
                if nfc(qid) in seen_q:
                    first, also = seen_q[nfc(qid)]
                    if first != qid:
                        raise IngestError(
                            path, None, f"{qwhere}: " + form_clash(qid, first, "question")
                        )
                    raise IngestError(
                        path, None, f"{qwhere}: duplicate question id {qid!r} (also {also})"
                    )
                seen_q[nfc(qid)] = (qid, qwhere)
                questions.append(Question(qid, qa["question"].strip(), (), author="import"))
                if _squad_impossible(qa, qwhere, path):
                    no_answer.append(qid)
                else:
                    gold.append((qid, doc_id))
            if level == "paragraph":
                docs.append(
                    Doc(
                        doc_id,
                        title.replace("_", " "),
                        para["context"],
                        {"article": title, "paragraph": pi},
                    )
                )
        if level == "article":
            display = title.replace("_", " ")
            docs.append(Doc(title, display, "\n".join([display, *contexts]), {}))
    if not questions:
        raise IngestError(path, None, "no questions found (SQuAD 1.1 / 2.0 shape)")
    return SquadSet(docs, questions, gold, no_answer)


def _squad_impossible(qa: Mapping[str, Any], where: str, path: Path) -> bool:
    """True for a SQuAD 2.0 unanswerable question.

    That is ``"is_impossible": true``, or (a 2.0 file without the flag) an empty
    ``answers`` list next to ``plausible_answers``.
    """
    flag = qa.get("is_impossible")
    if flag is not None and not isinstance(flag, bool):
        raise IngestError(
            path, None, f'{where}: "is_impossible" must be true or false (SQuAD 2.0 shape)'
        )
    if flag is not None:
        return flag
    return "plausible_answers" in qa and not qa.get("answers")


# -- labels and verdicts (goldpan's own CSV) ---------------------------------------------


def read_labels_csv(path: Path) -> list[tuple[Label, int]]:
    """``question_id,doc_id,annotator,grade`` rows, each with its line number."""
    out: list[tuple[Label, int]] = []
    seen: dict[tuple[str, str, str], int] = {}
    columns = ("question_id", "doc_id", "annotator", "grade")
    for n, row in _csv_records(path, ",", columns, unescape=True):
        grade = _grade(row["grade"], path, n)
        if grade not in GRADES:
            raise IngestError(path, n, f"grade {grade} is out of range; expected {GRADE_RANGE}")
        key = (row["question_id"], row["doc_id"], row["annotator"])
        if not all(k.strip() for k in key):
            raise IngestError(path, n, "question_id, doc_id and annotator must not be empty")
        if key in seen:
            raise IngestError(path, n, f"label repeated (first on line {seen[key]})")
        seen[key] = n
        out.append((Label(*key, grade), n))
    return out


def read_verdicts_csv(path: Path) -> list[tuple[Verdict, int]]:
    """``question_id,annotator,verdict,note`` rows, each with its line number."""
    out: list[tuple[Verdict, int]] = []
    seen: dict[tuple[str, str], int] = {}
    for n, row in _csv_records(path, ",", ("question_id", "annotator", "verdict"), unescape=True):
        verdict = row["verdict"].strip()
        if verdict not in VERDICTS:
            raise IngestError(
                path, n, f"verdict {verdict!r} unknown; expected one of {', '.join(VERDICTS)}"
            )
        key = (row["question_id"], row["annotator"])
        if not all(k.strip() for k in key):
            raise IngestError(path, n, "question_id and annotator must not be empty")
        if key in seen:
            raise IngestError(
                path, n, f"a second verdict of the same annotator (first on line {seen[key]})"
            )
        seen[key] = n
        out.append((Verdict(*key, verdict, row.get("note") or ""), n))
    return out


# -- TREC runs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunLine:
    """One ranked document of a TREC run file with the line it came from."""

    question_id: str
    doc_id: str
    score: float
    line: int


_RUN_SHAPE = "`qid Q0 doc rank score tag`"


def _run_score(raw: str, path: Path | str, line: int) -> float:
    """The score column: a finite decimal number (what trec_eval's ``atof`` reads)."""
    try:
        value = float(raw) if raw.isascii() and "_" not in raw else None
    except ValueError:
        value = None
    if value is None:
        raise IngestError(path, line, f"score {raw!r} is not a number; expected {_RUN_SHAPE}")
    if not math.isfinite(value):
        raise IngestError(path, line, f"score {raw!r} is not a finite number")
    return value


def read_trec_run(path: Path) -> list[RunLine]:
    """A TREC run file: ``qid Q0 doc rank score tag`` lines, whitespace separated.

    ``#`` comment lines and blank lines are skipped. The ``Q0``, rank and tag columns are
    not used: as in trec_eval, the ranking is derived from the score column (see
    :func:`run_scores`). A document listed twice for one question is an error, as it is in
    trec_eval.

    Raises:
        IngestError: naming the file and line of a line with the wrong number of
            columns, a score that is not a finite number, a repeated document, or a
            file without any ranking line.
    """
    return parse_trec_run(read_text(path), path)


def parse_trec_run(text: str, path: Path | str) -> list[RunLine]:
    """TREC run lines from ``text`` (a file's or a command's output), named ``path``.

    Raises:
        IngestError: as :func:`read_trec_run`.
    """
    out: list[RunLine] = []
    seen: dict[tuple[str, str], int] = {}
    for n, line in _lines(text):
        if line.lstrip().startswith("#"):
            continue
        parts = _ASCII_FIELDS.split(line.strip(_ASCII_SPACE))
        if len(parts) != 6:
            raise IngestError(path, n, f"expected 6 fields {_RUN_SHAPE}, got {len(parts)} fields")
        qid, _, doc, _, raw, _ = parts
        score = _run_score(raw, path, n)
        key = (qid, doc)
        if key in seen:
            raise IngestError(
                path,
                n,
                f"document {doc!r} is listed twice for question {qid!r} "
                f"(lines {seen[key]} and {n}); trec_eval rejects this too",
            )
        seen[key] = n
        out.append(RunLine(qid, doc, score, n))
    if not out:
        raise IngestError(path, None, f"no ranking lines ({_RUN_SHAPE}); only comments")
    return out


def run_scores(lines: Iterable[RunLine]) -> dict[str, dict[str, float]]:
    """Question id -> doc id -> score of each run line.

    A ranking is derived from these (score descending, then doc id descending:
    :func:`engine.retrieve.base.trec_order`).
    """
    out: dict[str, dict[str, float]] = {}
    for r in lines:
        out.setdefault(r.question_id, {})[r.doc_id] = r.score
    return out


# -- gold given with questions -----------------------------------------------------------


@dataclass(frozen=True)
class QuestionExtras:
    """What a questions file may say besides id, text and tags."""

    question_id: str
    line: int
    gold: tuple[tuple[str, int], ...] = ()
    """(doc id, grade) pairs of the ``gold`` column or key."""
    no_answer: bool = False
    """The ``no_answer`` flag: nothing in the corpus answers the question."""
    metadata_tags: tuple[str, ...] | None = None
    """Tags under ``metadata`` (goldpan's BEIR ``queries.jsonl``); None when absent."""


_GOLD_SHAPE = f"`doc:grade` entries (grade {GRADE_RANGE})"


def _gold_entry(raw: str, path: Path, line: int) -> tuple[str, int]:
    doc, sep, grade = raw.strip().rpartition(":")
    if not sep or not doc.strip():
        raise IngestError(path, line, f"gold entry {raw!r}: expected {_GOLD_SHAPE}")
    value = _grade(grade, path, line)
    if value not in GRADES:
        raise IngestError(
            path, line, f"gold entry {raw!r}: grade {value} is out of range ({GRADE_RANGE})"
        )
    return doc.strip(), value


def _gold(value: Any, path: Path, line: int) -> tuple[tuple[str, int], ...]:
    """A gold column or key: ``"d1:2 d3:1"``, ``["d1:2", "d3:1"]`` or ``{"d1": 2}``."""
    pairs: list[tuple[str, int]] = []
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        pairs = [_gold_entry(tok, path, line) for tok in value.split()]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        pairs = [_gold_entry(tok, path, line) for tok in value]
    elif isinstance(value, Mapping):
        for doc, grade in value.items():
            if isinstance(grade, bool) or not isinstance(grade, int) or grade not in GRADES:
                raise IngestError(path, line, f"gold {doc!r}: grade {grade!r} is not {GRADE_RANGE}")
            pairs.append((str(doc), grade))
    else:
        raise IngestError(
            path, line, f"`gold` must be a list of {_GOLD_SHAPE} or an object doc -> grade"
        )
    seen: set[str] = set()
    for doc, _ in pairs:
        if doc in seen:
            raise IngestError(path, line, f"gold names document {doc!r} twice")
        seen.add(doc)
    return tuple(pairs)


_TRUE = ("1", "true", "yes", "y")
_FALSE = ("", "0", "false", "no", "n")


def _flag(value: Any, path: Path, line: int) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise IngestError(path, line, f"`no_answer` {value!r}: expected true or false")


def read_question_extras(path: Path) -> list[QuestionExtras]:
    """The ``gold`` and ``no_answer`` columns (CSV) or keys (JSONL) of a questions file.

    JSONL records may also carry them, and ``tags``, under a ``metadata`` object (the
    shape of goldpan's BEIR ``queries.jsonl``). Records with none of them give nothing,
    so a plain questions file gives an empty list.
    """
    suffix = path.suffix.lower()
    records: Iterator[tuple[int, Mapping[str, Any]]]
    if suffix in (".csv", ".tsv"):
        records = _csv_records(path, "\t" if suffix == ".tsv" else ",", unescape=True)
    else:
        records = _jsonl_records(path)
    out: list[QuestionExtras] = []
    for n, rec in records:
        meta = rec.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        keys = {"gold", "no_answer"}
        if not (keys & set(rec) or keys & set(meta) or "tags" in meta):
            continue
        ident = _id_of(rec, path, n)
        gold = _gold(rec.get("gold", meta.get("gold")), path, n)
        no_answer = _flag(rec.get("no_answer", meta.get("no_answer")), path, n)
        if no_answer and any(g >= 1 for _, g in gold):
            raise IngestError(
                path,
                n,
                f"question {ident!r} has relevant gold documents and no_answer; "
                "a question is one or the other",
            )
        tags = _tags(meta["tags"], path, n) if "tags" in meta else None
        out.append(QuestionExtras(ident, n, gold, no_answer, tags))
    return out
