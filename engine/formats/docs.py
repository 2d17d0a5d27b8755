"""Corpus files: a markdown folder, JSONL (BEIR corpus shape) or CSV documents."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from engine.formats.errors import IngestError
from engine.formats.ids import _id_of
from engine.formats.markdown import read_markdown_docs
from engine.formats.tabular import _check_unique, _csv_records, _jsonl_records, _plain, _text_field
from engine.types import Doc

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
        if "text" not in rec:
            # a body under another name would be imported as an empty text (and an
            # update would empty the stored one): refused, naming the keys there are
            raise IngestError(
                path, n, f"no `text` field; expected _id, title, text (found {_keys(rec)})"
            )
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
        if not docs and "text" not in row:
            raise IngestError(
                path,
                1,
                f"the header needs a `text` column (id, title, text); found {_keys(row)}",
            )
        ident = _id_of(row, path, n)
        _check_unique(seen, ident, path, n, "document")
        fields = {k: v for k, v in row.items() if k not in ("_id", "id", "title", "text")}
        docs.append(Doc(ident, row.get("title", "") or "", row.get("text", "") or "", fields))
    if not docs:
        raise IngestError(path, None, "no documents after the header row; expected one per row")
    return docs


def _keys(record: Mapping[str, object]) -> str:
    """A record's keys as the message names them (each quoted, at most ten)."""
    keys = [repr(k) for k in record]
    more = f", and {len(keys) - 10} more" if len(keys) > 10 else ""
    return ", ".join(keys[:10]) + more if keys else "none"
