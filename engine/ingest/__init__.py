"""Import corpora, questions and judgments into a workspace, each import one transaction.

Files are parsed and checked completely before anything is written, and the write is a
single transaction: a bad line leaves the workspace exactly as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.ingest.readers import (
    DOC_FORMATS,
    IngestError,
    QrelLine,
    read_docs,
    read_labels_csv,
    read_qrels,
    read_questions,
    read_squad,
    read_verdicts_csv,
)
from engine.types import Doc, Label, Question
from engine.workspace import Workspace

__all__ = [
    "DOC_FORMATS",
    "ImportReport",
    "IngestError",
    "import_beir",
    "import_docs",
    "import_labels",
    "import_qrels",
    "import_questions",
    "import_squad",
    "import_verdicts",
]


@dataclass
class ImportReport:
    """What an import changed."""

    docs: tuple[int, int, int] = (0, 0, 0)
    """Documents (added, updated, unchanged)."""
    questions: tuple[int, int, int] = (0, 0, 0)
    """Questions (added, updated, unchanged)."""
    labels: int = 0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for people."""
        parts = []
        if any(self.docs):
            a, u, s = self.docs
            parts.append(f"documents: {a} added, {u} updated, {s} unchanged")
        if any(self.questions):
            a, u, s = self.questions
            parts.append(f"questions: {a} added, {u} updated, {s} unchanged")
        if self.labels:
            parts.append(f"labels: {self.labels}")
        parts.extend(self.notes)
        return "; ".join(parts) or "nothing to import"


def _check_qrels(
    ws: Workspace,
    path: Path,
    qrels: Sequence[QrelLine],
    new_docs: Sequence[Doc] = (),
    new_questions: Sequence[Question] = (),
) -> None:
    doc_ids = set(ws.doc_ids()) | {d.id for d in new_docs}
    question_ids = set(ws.question_ids()) | {q.id for q in new_questions}
    for q in qrels:
        if q.question_id not in question_ids:
            raise IngestError(
                path, q.line, f"unknown question {q.question_id!r}; import the questions first"
            )
        if q.doc_id not in doc_ids:
            raise IngestError(path, q.line, f"unknown document {q.doc_id!r}; not in the corpus")


def _log(ws: Workspace, what: str, path: Path, report: ImportReport) -> None:
    ws.log_event("import", "import", f"{what} {path.name}: {report.summary()}")


def import_docs(ws: Workspace, path: Path, fmt: str = "auto") -> ImportReport:
    """Documents from a Markdown folder, JSONL or CSV (new ids added, known ids replaced)."""
    docs = read_docs(path, fmt)
    report = ImportReport()
    with ws.transaction():
        report.docs = ws.write_docs(docs)
        _log(ws, "docs", path, report)
    return report


def import_questions(ws: Workspace, path: Path) -> ImportReport:
    """Questions from JSONL or CSV."""
    questions = read_questions(path)
    report = ImportReport()
    with ws.transaction():
        report.questions = ws.write_questions(questions)
        _log(ws, "questions", path, report)
    return report


def import_qrels(ws: Workspace, path: Path, annotator: str = "import") -> ImportReport:
    """TREC or BEIR qrels as labels of ``annotator``; every id must already be known."""
    qrels = read_qrels(path)
    if not qrels:
        raise IngestError(path, None, "no judgments found")
    _check_qrels(ws, path, qrels)
    report = ImportReport()
    with ws.transaction():
        report.labels = ws.write_labels(
            (Label(q.question_id, q.doc_id, annotator, q.grade) for q in qrels), event="import"
        )
        _log(ws, "qrels", path, report)
    return report


def import_beir(
    ws: Workspace, folder: Path, split: str = "test", annotator: str = "import"
) -> ImportReport:
    """A BEIR folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/{split}.tsv``.

    Every query is imported; those without qrels stay unlabeled.
    """
    if not folder.is_dir():
        raise IngestError(
            folder, None, "expected a BEIR folder (corpus.jsonl, queries.jsonl, qrels/)"
        )
    docs = read_docs(folder / "corpus.jsonl", "jsonl")
    questions = read_questions(folder / "queries.jsonl")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        splits = ", ".join(sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))) or "none"
        raise IngestError(
            qrels_path, None, f"no such file; expected the split's qrels (splits here: {splits})"
        )
    qrels = read_qrels(qrels_path)
    _check_qrels(ws, qrels_path, qrels, docs, questions)
    report = ImportReport()
    with ws.transaction():
        report.docs = ws.write_docs(docs)
        report.questions = ws.write_questions(questions)
        report.labels = ws.write_labels(
            (Label(q.question_id, q.doc_id, annotator, q.grade) for q in qrels), event="import"
        )
        _log(ws, "beir", folder, report)
    return report


def import_squad(
    ws: Workspace, path: Path, level: str = "article", annotator: str = "import"
) -> ImportReport:
    """A SQuAD 1.1 file; each question's source document becomes its gold (grade 1)."""
    squad = read_squad(path, level)
    report = ImportReport()
    with ws.transaction():
        report.docs = ws.write_docs(squad.docs)
        report.questions = ws.write_questions(squad.questions)
        report.labels = ws.write_labels(
            (Label(q, d, annotator, 1) for q, d in squad.gold), event="import"
        )
        _log(ws, f"squad ({level})", path, report)
    return report


def _check_refs(ws: Workspace, path: Path, refs: Sequence[tuple[str, str | None, int]]) -> None:
    """Every (question id, doc id or None, line) must name known ids."""
    doc_ids = set(ws.doc_ids())
    question_ids = set(ws.question_ids())
    for qid, doc, line in refs:
        if qid not in question_ids:
            raise IngestError(path, line, f"unknown question {qid!r}; import the questions first")
        if doc is not None and doc not in doc_ids:
            raise IngestError(path, line, f"unknown document {doc!r}; not in the corpus")


def import_labels(ws: Workspace, path: Path) -> ImportReport:
    """Goldpan's labels CSV (``question_id,doc_id,annotator,grade``), annotators kept."""
    rows = read_labels_csv(path)
    _check_refs(ws, path, [(lab.question_id, lab.doc_id, n) for lab, n in rows])
    report = ImportReport()
    with ws.transaction():
        report.labels = ws.write_labels((lab for lab, _ in rows), event="import")
        _log(ws, "labels", path, report)
    return report


def import_verdicts(ws: Workspace, path: Path) -> ImportReport:
    """Verdicts CSV (``question_id,annotator,verdict,note``)."""
    rows = read_verdicts_csv(path)
    _check_refs(ws, path, [(v.question_id, None, n) for v, n in rows])
    report = ImportReport()
    with ws.transaction():
        n = ws.write_verdicts((v for v, _ in rows), event="import")
        report.notes.append(f"{n} verdicts")
        _log(ws, "verdicts", path, report)
    return report
