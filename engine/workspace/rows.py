"""Decoding workspace rows with every value checked.

There is no SQL here: :mod:`engine.workspace` reads the rows and hands them over. A
workspace is a file people send each other, so a row may hold anything SQLite can store:
a blob where text belongs, JSON of the wrong shape, a scores blob of the wrong length.
Each decoder turns one row into the engine's record or raises :class:`WorkspaceError`
naming the file, the table, the row and what is wrong, so that a damaged row is a clear
error (and a line of ``goldpan check``), never a ``TypeError`` deep in the scoring code.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from engine.errors import GoldpanError, Unusable
from engine.grades import GRADE_RANGE, GRADES
from engine.types import (
    JUDGING_KEYS,
    JUDGING_ORDERS,
    MAX_JSON_DEPTH,
    MODEL_JUDGE_KINDS,
    RETRIEVER_KIND_NAMES,
    TIMEOUT_RANGE,
    VERDICTS,
    Adjudication,
    Doc,
    Label,
    ModelJudge,
    ModelLabel,
    Proposal,
    Question,
    RetrieverSpec,
    Stop,
    Verdict,
)


class WorkspaceError(GoldpanError):
    """A workspace cannot be opened or changed as asked; the message says why."""


class NotAWorkspace(WorkspaceError):
    """The path is not a goldpan workspace at all.

    Missing, a folder, a FIFO or device, not SQLite, or another program's SQLite file:
    there is nothing to restore.
    """


class NewerWorkspace(WorkspaceError):
    """A workspace written by a newer goldpan (a schema version this one does not know)."""


class BadRow(WorkspaceError, Unusable):
    """A row whose values are not what goldpan writes; the message names table and row."""

    def __init__(self, path: Path | str, table: str, row: str, why: str) -> None:
        """Name the file, table and row (``row`` as the reader would find it)."""
        self.table = table
        self.row = row
        self.why = why
        super().__init__(
            f"{path}: table {table}, row {row}: {why} (the workspace is damaged; "
            f"`goldpan check {path}` lists every problem)"
        )


def show(value: Any) -> str:
    """A short, safe picture of a stored value for a message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _text(value: Any, path: Path, table: str, row: str, column: str) -> str:
    if type(value) is not str:
        raise BadRow(path, table, row, f"{column} is {show(value)}, not text")
    return value


def _int(value: Any, path: Path, table: str, row: str, column: str) -> int:
    if type(value) is not int:
        raise BadRow(path, table, row, f"{column} is {show(value)}, not a whole number")
    return value


def _json(value: Any, path: Path, table: str, row: str, column: str, shape: type) -> Any:
    """The JSON in a text column, checked to be a ``shape`` (list or dict)."""
    name = "array" if shape is list else "object"
    if type(value) is not str:
        raise BadRow(path, table, row, f"{column} is {show(value)}, not JSON text")
    try:
        decoded = json.loads(value)
    except RecursionError:
        raise BadRow(path, table, row, f"{column} holds JSON nested too deeply") from None
    except ValueError as exc:
        raise BadRow(path, table, row, f"{column} is not valid JSON ({exc})") from None
    if type(decoded) is not shape:
        raise BadRow(path, table, row, f"{column} is {show(value)}, not a JSON {name}")
    if too_deep(decoded):
        raise BadRow(path, table, row, f"{column} nests deeper than {MAX_JSON_DEPTH} levels")
    return decoded


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a decoded JSON value nests more than ``limit`` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


def doc(path: Path, r: Sequence[Any]) -> Doc:
    """(id, title, text, fields)."""
    row = f"id {show(r[0])}"
    doc_id = _text(r[0], path, "docs", row, "id")
    title = _text(r[1], path, "docs", row, "title")
    text = _text(r[2], path, "docs", row, "text")
    return Doc(doc_id, title, text, _json(r[3], path, "docs", row, "fields", dict))


def doc_text_row(path: Path, r: Sequence[Any]) -> tuple[str, str, str]:
    """(id, title, text) of a document, without its fields (a listing of the corpus)."""
    row = f"id {show(r[0])}"
    return (
        _text(r[0], path, "docs", row, "id"),
        _text(r[1], path, "docs", row, "title"),
        _text(r[2], path, "docs", row, "text"),
    )


Q_COLUMNS = "id, text, tags, author, written_blind, note"
"""The columns a question is read from, in :func:`question`'s order."""


def question(path: Path, r: Sequence[Any]) -> Question:
    """(id, text, tags, author, written_blind, note): :data:`Q_COLUMNS`."""
    qid, text, tags_json, author, blind, note = r
    if type(tags_json) is str and type(blind) is int:  # as goldpan writes it: no row named
        if tags_json == "[]":  # most questions: no tags (half the time of a row was JSON's)
            tags = []
        else:
            try:
                tags = json.loads(tags_json)
            except (ValueError, RecursionError):
                tags = None
        if (
            type(tags) is list  # of text: two levels, never too deep
            and all(type(t) is str for t in tags)
            and type(qid) is str
            and type(text) is str
            and type(author) is str
            and type(note) is str
        ):
            return Question(qid, text, tuple(tags), author, bool(blind), note)
    return _question_checked(path, r)


def _question_checked(path: Path, r: Sequence[Any]) -> Question:
    """:func:`question` for a row that is not as goldpan writes it: raises naming why."""
    row = f"id {show(r[0])}"
    qid = _text(r[0], path, "questions", row, "id")
    tags = _json(r[2], path, "questions", row, "tags", list)
    if not all(type(t) is str for t in tags):
        raise BadRow(path, "questions", row, f"tags is {show(r[2])}, not a list of text")
    blind = _int(r[4], path, "questions", row, "written_blind")
    return Question(
        qid,
        _text(r[1], path, "questions", row, "text"),
        tuple(tags),
        _text(r[3], path, "questions", row, "author"),
        bool(blind),
        _text(r[5], path, "questions", row, "note"),
    )


def label(path: Path, r: Sequence[Any]) -> Label:
    """(question_id, doc_id, annotator, grade)."""
    row = f"(question {show(r[0])}, doc {show(r[1])}, annotator {show(r[2])})"
    for value, column in zip(r[:3], ("question_id", "doc_id", "annotator"), strict=True):
        _text(value, path, "labels", row, column)
    grade = _int(r[3], path, "labels", row, "grade")
    if grade not in GRADES:
        raise BadRow(path, "labels", row, f"grade {grade} is not {GRADE_RANGE}")
    return Label(r[0], r[1], r[2], grade)


def verdict(path: Path, r: Sequence[Any]) -> Verdict:
    """(question_id, annotator, verdict, note)."""
    row = f"(question {show(r[0])}, annotator {show(r[1])})"
    for value, column in zip(r, ("question_id", "annotator", "verdict", "note"), strict=True):
        _text(value, path, "verdicts", row, column)
    if r[2] not in VERDICTS:
        raise BadRow(path, "verdicts", row, f"verdict {show(r[2])} is not one of {VERDICTS}")
    return Verdict(r[0], r[1], r[2], r[3])


def adjudication(path: Path, r: Sequence[Any]) -> Adjudication:
    """(question_id, no_answer, gold, by, note)."""
    row = f"question {show(r[0])}"
    qid = _text(r[0], path, "adjudications", row, "question_id")
    no_answer = _int(r[1], path, "adjudications", row, "no_answer")
    gold = _json(r[2], path, "adjudications", row, "gold", dict)
    if not all(type(g) is int and g in GRADES for g in gold.values()):
        raise BadRow(
            path, "adjudications", row, f"gold is {show(r[2])}, not document -> grade {GRADE_RANGE}"
        )
    return Adjudication(
        qid,
        bool(no_answer),
        gold,
        _text(r[3], path, "adjudications", row, "by"),
        _text(r[4], path, "adjudications", row, "note"),
    )


def stop(path: Path, r: Sequence[Any]) -> Stop:
    """(question_id, annotator, rule)."""
    row = f"(question {show(r[0])}, annotator {show(r[1])})"
    for value, column in zip(r, ("question_id", "annotator", "rule"), strict=True):
        _text(value, path, "stops", row, column)
    return Stop(r[0], r[1], r[2])


def proposal(path: Path, r: Sequence[Any]) -> Proposal:
    """(question_id, doc_id, method, by, proposed)."""
    row = f"(question {show(r[0])}, doc {show(r[1])})"
    columns = ("question_id", "doc_id", "method", "by", "proposed")
    for value, column in zip(r, columns, strict=True):
        _text(value, path, "proposals", row, column)
    return Proposal(r[0], r[1], r[2], r[3], r[4])


def model_judge(path: Path, r: Sequence[Any]) -> ModelJudge:
    """(annotator, kind, model, params)."""
    row = f"annotator {show(r[0])}"
    annotator = _text(r[0], path, "model_judges", row, "annotator")
    kind = _text(r[1], path, "model_judges", row, "kind")
    if kind not in MODEL_JUDGE_KINDS:
        known = ", ".join(MODEL_JUDGE_KINDS)
        raise BadRow(path, "model_judges", row, f"kind {show(kind)} is unknown (known: {known})")
    model = _text(r[2], path, "model_judges", row, "model")
    return ModelJudge(
        annotator, kind, model, _json(r[3], path, "model_judges", row, "params", dict)
    )


def model_label(path: Path, r: Sequence[Any]) -> ModelLabel:
    """(question_id, doc_id, annotator, grade, score)."""
    row = f"(question {show(r[0])}, doc {show(r[1])}, annotator {show(r[2])})"
    for value, column in zip(r[:3], ("question_id", "doc_id", "annotator"), strict=True):
        _text(value, path, "model_labels", row, column)
    grade = _int(r[3], path, "model_labels", row, "grade")
    if grade not in GRADES:
        raise BadRow(path, "model_labels", row, f"grade {grade} is not {GRADE_RANGE}")
    score = None if r[4] is None else number(path, "model_labels", row, "score", r[4])
    return ModelLabel(r[0], r[1], r[2], grade, score)


def retriever(path: Path, r: Sequence[Any]) -> RetrieverSpec:
    """(name, kind, params); whether the kind is known is the retrievers' registry's call."""
    row = f"name {show(r[0])}"
    name = _text(r[0], path, "retrievers", row, "name")
    kind = _text(r[1], path, "retrievers", row, "kind")
    if kind not in RETRIEVER_KIND_NAMES:
        known = ", ".join(RETRIEVER_KIND_NAMES)
        raise BadRow(path, "retrievers", row, f"kind {show(kind)} is unknown (known: {known})")
    return RetrieverSpec(name, kind, _json(r[2], path, "retrievers", row, "params", dict))


class DocNames(Protocol):
    """Document numbers to ids (the workspace's ``doc_numbers``)."""

    def ids(self, numbers: Sequence[int]) -> Sequence[str] | None:
        """The ids of ``numbers`` in order, or None when one of them numbers no document."""
        ...


def numbers_in(blob: bytes) -> tuple[int, ...] | None:
    """The document numbers a ranking's ``doc_ids`` blob holds (uint32, little endian).

    None when its length is not a whole number of them.
    """
    if len(blob) % 4:
        return None
    return struct.unpack(f"<{len(blob) // 4}I", blob)


def run_doc_ids(
    path: Path, retriever: str, question_id: Any, value: Any, names: DocNames
) -> tuple[str, ...]:
    """A cached ranking's doc ids.

    Stored as document numbers (uint32, little endian; see ``doc_numbers``), or as a JSON
    array of ids in rows written before schema version 9.
    """
    if type(question_id) is str and type(value) is bytes:  # the sound row, read at once
        numbers = numbers_in(value)
        found = names.ids(numbers) if numbers is not None else None
        if found is not None:
            return tuple(found)
    row = f"(retriever {show(retriever)}, question {show(question_id)})"
    _text(question_id, path, "runs", row, "question_id")
    if type(value) is bytes:
        numbers = numbers_in(value)
        if numbers is None:
            raise BadRow(path, "runs", row, f"doc_ids holds {len(value)} bytes, not 4 per document")
        found = names.ids(numbers)
        if found is None:
            unknown = next(n for n in numbers if names.ids([n]) is None)
            raise BadRow(
                path, "runs", row, f"doc_ids names document number {unknown}, which no document has"
            )
        return tuple(found)
    ids = _json(value, path, "runs", row, "doc_ids", list)
    if not all(type(d) is str for d in ids):
        raise BadRow(path, "runs", row, "doc_ids is not a list of document ids")
    return tuple(ids)


def run_scores(
    path: Path, retriever: str, question_id: Any, blob: Any, n: int
) -> tuple[float, ...]:
    """A cached ranking's scores: ``n`` little-endian float64 values, each finite."""
    row = f"(retriever {show(retriever)}, question {show(question_id)})"
    if type(blob) is not bytes:
        raise BadRow(path, "runs", row, f"scores is {show(blob)}, not a blob")
    if len(blob) != 8 * n:
        raise BadRow(
            path, "runs", row, f"scores holds {len(blob)} bytes; {n} documents need {8 * n}"
        )
    scores: tuple[float, ...] = struct.unpack(f"<{n}d", blob)
    # a finite sum has only finite terms (one C loop); a sum that overflowed is looked at
    if not math.isfinite(sum(scores)):
        bad = next((i for i, s in enumerate(scores) if not math.isfinite(s)), None)
        if bad is not None:
            raise BadRow(
                path, "runs", row, f"score {bad + 1} is {scores[bad]!r}, not a finite number"
            )
    return scores


MAX_MS = TIMEOUT_RANGE[1] * 1000.0
"""The longest time goldpan stores for one question (``runs.latency_ms``, ``alone_ms``):
the longest any run may take (a week, :data:`~engine.types.TIMEOUT_RANGE`)."""

MAX_FLOAT = 1.7976931348623157e308
"""The largest finite float: SQL's test of a stored REAL being finite is a ``BETWEEN``."""


def number(path: Path, table: str, row: str, column: str, value: Any) -> float:
    """A REAL column (an INTEGER is fine too), finite.

    SQLite stores infinities (a received file's ``9e999``; NaN it stores as NULL): a
    number goldpan reads is finite, so that no mean, sum or percentile of it overflows.
    """
    if type(value) not in (int, float):
        raise BadRow(path, table, row, f"{column} is {show(value)}, not a number")
    number = float(value)
    if not math.isfinite(number):
        raise BadRow(path, table, row, f"{column} is {show(value)}, not a finite number")
    return number


def duration_ms(path: Path, table: str, row: str, column: str, value: Any) -> float:
    """A stored time in milliseconds: a number from 0 to :data:`MAX_MS` (a week).

    A received file's ``1.7e308`` overflowed the latency percentiles' sum (exit 3), a
    negative time made them nonsense.
    """
    ms = number(path, table, row, column, value)
    if not 0 <= ms <= MAX_MS:
        raise BadRow(
            path, table, row, f"{column} is {show(value)}, not milliseconds from 0 to {MAX_MS:,.0f}"
        )
    return ms


def run_row(path: Path, retriever: str, r: Sequence[Any], names: DocNames) -> tuple[Any, ...]:
    """(question_id, doc_ids, scores, latency_ms, input_hash, depth) decoded and checked.

    A seventh value, the time ranked alone (``alone_ms``, NULL when not measured), is
    checked when given (``goldpan check`` and the soundness gate read it here).
    """
    row = f"(retriever {show(retriever)}, question {show(r[0])})"
    _text(retriever, path, "runs", row, "retriever")
    ids = run_doc_ids(path, retriever, r[0], r[1], names)
    scores = run_scores(path, retriever, r[0], r[2], len(ids))
    latency = duration_ms(path, "runs", row, "latency_ms", r[3])
    input_hash = _text(r[4], path, "runs", row, "input_hash")
    depth = _int(r[5], path, "runs", row, "depth")
    if len(r) > 6 and r[6] is not None:
        duration_ms(path, "runs", row, "alone_ms", r[6])
    return r[0], ids, scores, latency, input_hash, depth


def doc_number(path: Path, r: Sequence[Any]) -> tuple[int, str]:
    """(n, id) of ``doc_numbers``: a document's number, as cached rankings name it."""
    row = f"(number {show(r[0])})"
    if type(r[0]) is not int or r[0] < 1:
        raise BadRow(path, "doc_numbers", row, f"n is {show(r[0])}, not a number from 1")
    return r[0], _text(r[1], path, "doc_numbers", row, "id")


def embedding(path: Path, r: Sequence[Any]) -> tuple[str, str, bytes]:
    """(model, doc_id, doc_hash, dim, vector) -> (doc id, doc hash, vector bytes)."""
    row = f"(model {show(r[0])}, doc {show(r[1])})"
    doc_id = _text(r[1], path, "embeddings", row, "doc_id")
    doc_hash = _text(r[2], path, "embeddings", row, "doc_hash")
    dim = _int(r[3], path, "embeddings", row, "dim")
    if type(r[4]) is not bytes or len(r[4]) != 4 * dim:
        raise BadRow(path, "embeddings", row, f"vector is not {dim} float32 values")
    return doc_id, doc_hash, r[4]


EVENT_COLUMNS = ("id", "at", "annotator", "kind", "question_id", "doc_id", "old", "new")


def event(path: Path, r: Sequence[Any]) -> dict[str, Any]:
    """One event-log row as a dict; text columns are text (or NULL where allowed)."""
    row = f"id {show(r[0])}"
    for value, column in zip(r[1:], EVENT_COLUMNS[1:], strict=True):
        if value is None and column in ("question_id", "doc_id", "old", "new"):
            continue
        _text(value, path, "events", row, column)
    return dict(zip(EVENT_COLUMNS, r, strict=True))


def text_column(path: Path, table: str, column: str, value: Any) -> str:
    """One text value read alone (an id list, a title list)."""
    if type(value) is str:  # the row's name is made only for the message
        return value
    return _text(value, path, table, f"{column} {show(value)}", column)


MAX_COUNT = 2**63 - 1
"""The largest count SQLite's INTEGER holds (a query log's ``count``): past it, SQL's sum
turns into an inexact REAL."""

LOG_BANDS = ("head", "torso", "tail")
LOG_STATUSES = ("pending", "kept", "rewritten", "discarded")
LOG_COLUMNS = ("id", "text", "norm", "count", "band", "variants", "status", "question_id")


def querylog(path: Path, r: Sequence[Any]) -> dict[str, Any]:
    """A stored query-log group (:data:`LOG_COLUMNS`) as a dict, every value checked.

    Its ``count`` is a whole number from 1 to :data:`MAX_COUNT` (the order of the write
    screen's queries), its variants a JSON array of text.
    """
    row = f"id {show(r[0])}"
    _int(r[0], path, "querylog", row, "id")
    for value, column in ((r[1], "text"), (r[2], "norm"), (r[4], "band"), (r[6], "status")):
        _text(value, path, "querylog", row, column)
    count = r[3]
    if type(count) is not int or not 1 <= count <= MAX_COUNT:
        raise BadRow(
            path,
            "querylog",
            row,
            f"count is {show(count)}, not a whole number from 1 to {MAX_COUNT:,}",
        )
    if r[4] not in LOG_BANDS:
        raise BadRow(path, "querylog", row, f"band {show(r[4])} is not one of {LOG_BANDS}")
    if r[6] not in LOG_STATUSES:
        raise BadRow(path, "querylog", row, f"status {show(r[6])} is not one of {LOG_STATUSES}")
    if r[7] is not None:
        _text(r[7], path, "querylog", row, "question_id")
    variants = _json(r[5], path, "querylog", row, "variants", list)
    if not all(type(v) is str for v in variants):
        raise BadRow(path, "querylog", row, f"variants is {show(r[5])}, not a JSON array of text")
    return {**dict(zip(LOG_COLUMNS, r, strict=True)), "variants": variants}


def meta(path: Path, r: Sequence[Any]) -> tuple[str, str]:
    """(key, value); a judging setting's value is checked (:func:`judging_setting`)."""
    row = f"key {show(r[0])}"
    key, value = _text(r[0], path, "meta", row, "key"), _text(r[1], path, "meta", row, "value")
    if key in JUDGING_KEYS:
        why = judging_setting(key, value)
        if why is not None:
            raise BadRow(path, "meta", row, why)
    return key, value


MAX_STOP_AFTER = 10_000
"""The longest run of not relevant judgments a stopping rule may wait for."""


def judging_setting(key: str, value: str) -> str | None:
    """What is wrong with a judging setting's value (None: nothing).

    ``judging_order`` one of :data:`JUDGING_ORDERS`; ``stop_after`` a whole number from 0
    to :data:`MAX_STOP_AFTER`; ``stop_below`` a finite number from 0 (0 turns it off).
    """
    if key == "judging_order":
        if value not in JUDGING_ORDERS:
            return f"judging_order {show(value)} is not one of {', '.join(JUDGING_ORDERS)}"
        return None
    if key == "stop_after":
        if not (value.isascii() and value.isdigit()) or int(value) > MAX_STOP_AFTER:
            return f"stop_after {show(value)} is not a whole number from 0 to {MAX_STOP_AFTER}"
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number >= 0):
        return f"stop_below {show(value)} is not a number of 0 or more"
    return None
