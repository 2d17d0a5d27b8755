"""Labels and verdicts CSV: every annotator's grades, read and written."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

from engine.errors import BadInput
from engine.formats.errors import IngestError
from engine.formats.tabular import _csv_records, _grade, spreadsheet_safe
from engine.grades import GRADE_RANGE, GRADES
from engine.names import check_person_role
from engine.types import VERDICTS, Label, Verdict

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
        _person(row["annotator"], path, n)
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
        _person(row["annotator"], path, n)
        if key in seen:
            raise IngestError(
                path, n, f"a second verdict of the same annotator (first on line {seen[key]})"
            )
        seen[key] = n
        out.append((Verdict(*key, verdict, row.get("note") or ""), n))
    return out


def _person(name: str, path: Path, line: int) -> None:
    """The annotator column names a person (:func:`~engine.names.check_person_role`)."""
    try:
        check_person_role(name, "annotator")
    except BadInput as exc:
        raise IngestError(path, line, str(exc)) from None


LABEL_COLUMNS: Sequence[str] = ("question_id", "doc_id", "annotator", "grade")


def write_labels_csv(out: TextIO, labels: Iterable[Label]) -> int:
    """Every annotator's labels as CSV ``question_id,doc_id,annotator,grade``.

    Cells are :func:`spreadsheet_safe`.
    """
    writer = csv.writer(out, lineterminator="\n")
    # the csv module quotes a field holding the line terminator ("\n") but not a bare CR,
    # which every reader takes for a line end: such a row is written fully quoted
    quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(LABEL_COLUMNS)
    n = 0
    for lab in labels:
        row = tuple(spreadsheet_safe(v) for v in (lab.question_id, lab.doc_id, lab.annotator))
        row = (*row, lab.grade)
        (quoted if any("\r" in str(v) for v in row) else writer).writerow(row)
        n += 1
    return n
