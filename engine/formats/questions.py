"""Question files (JSONL or CSV), read and written with tags, gold and the no-answer flag."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from engine.errors import BadInput
from engine.formats.errors import IngestError
from engine.formats.ids import _id_of
from engine.formats.tabular import (
    _check_unique,
    _csv_records,
    _grade,
    _jsonl_records,
    _text_field,
    jsonl_line,
    spreadsheet_safe,
)
from engine.gold import Gold, Status
from engine.grades import GRADE_RANGE, GRADES, is_relevant
from engine.types import Question

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


def _question_records(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """A questions file's (line, record) pairs: CSV or TSV by its name, else JSONL."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return _csv_records(path, "\t" if suffix == ".tsv" else ",", unescape=True)
    return _jsonl_records(path)


def read_questions(path: Path) -> list[Question]:
    """Questions from JSONL (``_id``/``id``, ``text``, optional ``tags``) or CSV."""
    records = _question_records(path)
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
    records = _question_records(path)
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
        if no_answer and any(is_relevant(g) for _, g in gold):
            raise IngestError(
                path,
                n,
                f"question {ident!r} has relevant gold documents and no_answer; "
                "a question is one or the other",
            )
        tags = _tags(meta["tags"], path, n) if "tags" in meta else None
        out.append(QuestionExtras(ident, n, gold, no_answer, tags))
    return out


# -- questions with their gold -------------------------------------------------------------

QUESTION_COLUMNS: Sequence[str] = ("id", "text", "tags", "gold", "no_answer")


def gold_entries(gold: Mapping[str, int]) -> list[str]:
    """``doc:grade`` entries in code-point order of doc id (read back at the last ``:``)."""
    return [f"{doc}:{grade}" for doc, grade in sorted(gold.items())]


def _question_gold(q: Question, golds: Mapping[str, Gold]) -> tuple[Mapping[str, int], bool]:
    g = golds.get(q.id)
    if g is None:
        return {}, False
    return (g.gold if g.status is Status.LABELED else {}), g.status is Status.NO_ANSWER


def write_questions_jsonl(
    out: TextIO, questions: Iterable[Question], golds: Mapping[str, Gold]
) -> int:
    """One ``{"id", "text", "tags", "gold": ["doc:grade", ...], "no_answer"}`` per line."""
    n = 0
    for q in questions:
        gold, no_answer = _question_gold(q, golds)
        out.write(
            jsonl_line(
                {
                    "id": q.id,
                    "text": q.text,
                    "tags": list(q.tags),
                    "gold": gold_entries(gold),
                    "no_answer": no_answer,
                }
            )
        )
        n += 1
    return n


def write_questions_csv(
    out: TextIO, questions: Iterable[Question], golds: Mapping[str, Gold]
) -> int:
    """CSV ``id,text,tags,gold,no_answer``: tags comma-joined, gold space-separated.

    Cells are :func:`spreadsheet_safe`.

    Raises:
        BadInput: a gold document id holds whitespace (use questions-jsonl), or a tag
            holds a separator that the reader splits tags at.
    """
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(QUESTION_COLUMNS)
    n = 0
    for q in questions:
        gold, no_answer = _question_gold(q, golds)
        for doc in gold:
            if any(c.isspace() for c in doc):
                raise BadInput(
                    f"document id {doc!r} holds whitespace, which separates the gold "
                    "entries of questions-csv; export questions-jsonl instead"
                )
        for tag in q.tags:
            if any(c in tag for c in ",;|"):
                raise BadInput(f"tag {tag!r} of question {q.id!r} holds , ; or |")
        cells = (q.id, q.text, ",".join(q.tags), " ".join(gold_entries(gold)))
        writer.writerow((*map(spreadsheet_safe, cells), str(no_answer).lower()))
        n += 1
    return n
