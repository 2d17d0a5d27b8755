"""TREC qrels and runs: the readers and writers side by side.

Scores are written with ``%.17g``: they read back as the same double, and trec_eval
re-ranks a run by its score column, so rounding would create ties that change the metrics.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from engine.formats.errors import IngestError
from engine.formats.ids import _ASCII_FIELDS, ASCII_SPACE, check_id
from engine.formats.tabular import _grade, _lines, read_text
from engine.grades import GRADE_RANGE, GRADES
from engine.types import CachedRun

_GRADE = re.compile(r"[+-]?\d+(\.0+)?")


@dataclass(frozen=True)
class QrelLine:
    """One qrels judgment with the line it came from."""

    question_id: str
    doc_id: str
    grade: int
    line: int


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
        text = line.strip(ASCII_SPACE)
        fields = text.split("\t") if "\t" in text else _ASCII_FIELDS.split(text)
        parts = [p.strip(ASCII_SPACE) for p in fields]
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
        parts = _ASCII_FIELDS.split(line.strip(ASCII_SPACE))
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
    :func:`engine.retrieve.order.trec_order`).
    """
    out: dict[str, dict[str, float]] = {}
    for r in lines:
        out.setdefault(r.question_id, {})[r.doc_id] = r.score
    return out


def write_trec_qrels(out: TextIO, gold: Mapping[str, Mapping[str, int]]) -> int:
    """``qid 0 doc grade`` lines, questions and documents in code-point order."""
    n = 0
    for qid in sorted(gold):
        check_id(qid, "question", first_column=True)
        for doc, grade in sorted(gold[qid].items()):
            check_id(doc, "document")
            out.write(f"{qid} 0 {doc} {grade}\n")
            n += 1
    return n


def write_trec_run(out: TextIO, runs: Iterable[CachedRun], tag: str | None = None) -> int:
    """``qid Q0 doc rank score tag`` lines; the tag defaults to the retriever name."""
    n = 0
    for run in sorted(runs, key=lambda r: (r.retriever, r.question_id)):
        name = tag or run.retriever
        check_id(name, "run tag")
        check_id(run.question_id, "question", first_column=True)
        for rank, (doc, score) in enumerate(zip(run.doc_ids, run.scores, strict=True), 1):
            check_id(doc, "document")
            out.write(f"{run.question_id} Q0 {doc} {rank} {score:.17g} {name}\n")
            n += 1
    return n
