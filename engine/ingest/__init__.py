"""Import corpora, questions and judgments into a workspace, each import one transaction.

Files are parsed and checked completely before anything is written, and the write is a
single transaction: a bad line leaves the workspace exactly as it was.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import BadInput
from engine.formats.beir import read_beir
from engine.formats.docs import DOC_FORMATS, read_docs
from engine.formats.errors import IngestError
from engine.formats.ids import form_clash, nfc
from engine.formats.labels import read_labels_csv, read_verdicts_csv
from engine.formats.questions import QuestionExtras, read_question_extras, read_questions
from engine.formats.squad import SquadSet, read_squad
from engine.formats.trec import QrelLine, RunLine, read_qrels, read_trec_run, run_scores
from engine.grades import RELEVANT
from engine.retrieve.base import EXTERNAL_KIND, STORED_KINDS
from engine.retrieve.order import trec_order
from engine.series import fold
from engine.types import CachedRun, Doc, Label, Question, RetrieverSpec, Verdict
from engine.workspace import GOLD_IMPORT_EVENT, Workspace, WorkspaceError

__all__ = [
    "DOC_FORMATS",
    "ImportReport",
    "IngestError",
    "import_beir",
    "import_docs",
    "import_labels",
    "import_qrels",
    "import_questions",
    "import_run",
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
    recheck: tuple[int, int] = (0, 0)
    """Questions whose text changed, and their judgments made for the old text (marked
    as needing re-check, or deleted with ``replace_labels``)."""
    replaced_labels: bool = False
    rankings: int = 0
    """Questions given a ranking by an imported run."""
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Input left out (e.g. a link out of an imported folder), one line each."""

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
        if self.recheck[0]:
            n, judged = self.recheck
            what = "deleted (--replace-labels)" if self.replaced_labels else "need re-check"
            parts.append(
                f"text changed: {n} questions, whose {judged} judgments made for the old "
                f"text {what}"
            )
        if self.rankings:
            parts.append(f"rankings: {self.rankings} questions")
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


def _check_forms(known: Iterable[str], new: Iterable[str], path: Path, what: str) -> None:
    """Refuse a new id that differs from a workspace id only in Unicode form (NFC/NFD)."""
    by_form = {nfc(k): k for k in known if not k.isascii()}
    if not by_form:
        return
    for ident in new:
        other = by_form.get(nfc(ident))
        if other is not None and other != ident:
            raise IngestError(
                path, None, form_clash(ident, other, what) + " (the workspace has it)"
            )


def _log(ws: Workspace, what: str, path: Path, report: ImportReport) -> None:
    ws.log_event("import", "import", f"{what} {path.name}: {report.summary()}")


def import_docs(ws: Workspace, path: Path, fmt: str = "auto") -> ImportReport:
    """Documents from a Markdown folder, JSONL or CSV (new ids added, known ids replaced)."""
    report = ImportReport()
    docs = read_docs(path, fmt, report.warnings)
    _check_forms(ws.doc_ids(), (d.id for d in docs), path, "document")
    with ws.transaction():
        report.docs = ws.write_docs(docs)
        _log(ws, "docs", path, report)
    return report


def _write_questions(
    ws: Workspace,
    path: Path,
    questions: Sequence[Question],
    report: ImportReport,
    replace_labels: bool,
) -> None:
    """Write questions inside the caller's transaction.

    A changed text keeps the old one in the history and retires the judgments made for
    it (:meth:`Workspace.retext_judgments`).
    """
    _check_forms(ws.question_ids(), (q.id for q in questions), path, "question")
    old_texts = {}
    for q in questions:
        old = ws.question(q.id)
        if old is not None and old.text != q.text:
            old_texts[q.id] = (old.text, q.text)
    report.questions = ws.write_questions(questions, by="import")
    judged = sum(
        ws.retext_judgments(qid, old, new, "import", replace=replace_labels)
        for qid, (old, new) in old_texts.items()
    )
    report.recheck = (len(old_texts), judged)
    report.replaced_labels = replace_labels


def _with_extras(questions: Sequence[Question], extras: Sequence[QuestionExtras]) -> list[Question]:
    """Questions given the tags found under ``metadata`` when they have none of their own."""
    tags = {e.question_id: e.metadata_tags for e in extras if e.metadata_tags is not None}
    return [
        dataclasses.replace(q, tags=tags[q.id]) if not q.tags and q.id in tags else q
        for q in questions
    ]


def _extras_judgments(
    ws: Workspace,
    path: Path,
    extras: Sequence[QuestionExtras],
    annotator: str,
    new_docs: Sequence[Doc] = (),
) -> tuple[list[Label], list[Verdict]]:
    """Gold entries as labels and no-answer flags as verdicts; every doc must be known."""
    doc_ids = set(ws.doc_ids()) | {d.id for d in new_docs}
    labels: list[Label] = []
    verdicts: list[Verdict] = []
    for e in extras:
        for doc, grade in e.gold:
            if doc not in doc_ids:
                raise IngestError(path, e.line, f"unknown document {doc!r}; not in the corpus")
            labels.append(Label(e.question_id, doc, annotator, grade))
        if e.no_answer:
            verdicts.append(Verdict(e.question_id, annotator, "no_answer"))
    return labels, verdicts


def _write_judgments(
    ws: Workspace, labels: Sequence[Label], verdicts: Sequence[Verdict], report: ImportReport
) -> None:
    if labels:
        report.labels += ws.write_labels(labels, event=GOLD_IMPORT_EVENT)
    if verdicts:
        n = ws.write_verdicts(verdicts, event=GOLD_IMPORT_EVENT)
        report.notes.append(f"no-answer verdicts: {n}")


def import_questions(
    ws: Workspace, path: Path, annotator: str = "import", *, replace_labels: bool = False
) -> ImportReport:
    """Questions from JSONL or CSV, with their gold when the file gives it.

    A ``gold`` column or key (``doc:grade`` entries) becomes labels of ``annotator``; a
    true ``no_answer`` becomes that annotator's no-answer verdict. Files without them
    import questions only.

    A known question whose text changed keeps the old text in its history; the labels,
    verdicts and adjudication made for the old text are marked so (counted as needing
    re-check, never gold) or, with ``replace_labels``, deleted. The file's own gold is
    then written for the new text.
    """
    questions = read_questions(path)
    extras = read_question_extras(path)
    labels, verdicts = _extras_judgments(ws, path, extras, annotator)
    report = ImportReport()
    with ws.transaction():
        _write_questions(ws, path, _with_extras(questions, extras), report, replace_labels)
        _write_judgments(ws, labels, verdicts, report)
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
            (Label(q.question_id, q.doc_id, annotator, q.grade) for q in qrels),
            event=GOLD_IMPORT_EVENT,
        )
        _log(ws, "qrels", path, report)
    return report


def import_beir(
    ws: Workspace,
    folder: Path,
    split: str = "test",
    annotator: str = "import",
    *,
    replace_labels: bool = False,
) -> ImportReport:
    """A BEIR folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/{split}.tsv``.

    Every query is imported; those without qrels stay unlabeled. A document's
    ``metadata`` object becomes its fields; a query's ``metadata`` may give its tags and
    a ``no_answer`` flag (a no-answer verdict of ``annotator``), as goldpan's BEIR export
    writes them.
    """
    beir = read_beir(folder, split)
    docs, qrels, queries_path, qrels_path = beir.docs, beir.qrels, beir.queries, beir.qrels_path
    extras = beir.extras
    questions = _with_extras(beir.questions, extras)
    _check_qrels(ws, qrels_path, qrels, docs, questions)
    labels, verdicts = _extras_judgments(ws, queries_path, extras, annotator, docs)
    report = ImportReport()
    with ws.transaction():
        _check_forms(ws.doc_ids(), (d.id for d in docs), folder, "document")
        report.docs = ws.write_docs(docs)
        _write_questions(ws, folder, questions, report, replace_labels)
        report.labels = ws.write_labels(
            (Label(q.question_id, q.doc_id, annotator, q.grade) for q in qrels),
            event=GOLD_IMPORT_EVENT,
        )
        _write_judgments(ws, labels, verdicts, report)
        _log(ws, "beir", folder, report)
    return report


def import_squad(
    ws: Workspace,
    path: Path,
    level: str = "article",
    annotator: str = "import",
    *,
    replace_labels: bool = False,
    onto: bool = False,
) -> ImportReport:
    """A SQuAD 1.1 or 2.0 file; each question's source document becomes its gold (relevant).

    A SQuAD 2.0 unanswerable question (``is_impossible``) gets no gold but a
    ``no_answer`` verdict of ``annotator``: it is scored as a no-answer question.

    With ``onto`` the articles are not imported: each question's gold is the workspace's
    document titled as its article (:func:`_attach_by_title`), and the import is refused,
    with nothing written, unless every article that has an answerable question names
    exactly one document.
    """
    if onto and level != "article":
        raise BadInput(
            "--onto attaches questions to documents by their article's title; a title names "
            "an article, not one of its paragraphs: use --level article"
        )
    squad = read_squad(path, level)
    attached = _attach_by_title(ws, path, squad) if onto else {}
    report = ImportReport()
    with ws.transaction():
        if not onto:
            _check_forms(ws.doc_ids(), (d.id for d in squad.docs), path, "document")
            report.docs = ws.write_docs(squad.docs)
        _write_questions(ws, path, squad.questions, report, replace_labels)
        report.labels = ws.write_labels(
            (Label(q, attached.get(d, d), annotator, RELEVANT) for q, d in squad.gold),
            event=GOLD_IMPORT_EVENT,
        )
        if onto:
            report.notes.append(
                f"attached by title to {len(set(attached.values()))} existing documents"
            )
        verdicts = [Verdict(q, annotator, "no_answer") for q in squad.no_answer]
        _write_judgments(ws, [], verdicts, report)
        _log(ws, f"squad ({level}{', onto' if onto else ''})", path, report)
    return report


ONTO_PROBLEMS_SHOWN = 5
"""How many articles without one document of their title an ``--onto`` error names."""


def _title_key(title: str) -> str:
    """A title as ``--onto`` compares it: ``_`` as a space, case and spacing folded."""
    return fold(title.replace("_", " "))


def _attach_by_title(ws: Workspace, path: Path, squad: SquadSet) -> dict[str, str]:
    """Each article with an answerable question -> the workspace document of its title.

    Raises:
        IngestError: naming every article (up to :data:`ONTO_PROBLEMS_SHOWN`) that no
            document, or more than one, is titled as (their ``data[i]`` in the file).
    """
    by_title: dict[str, list[str]] = {}
    shown: dict[str, str] = {}
    for doc_id, title in ws.doc_titles():
        key = _title_key(title)
        by_title.setdefault(key, []).append(doc_id)
        shown.setdefault(key, title)
    needed = {doc for _, doc in squad.gold}
    attached: dict[str, str] = {}
    unattached: list[tuple[int, str, list[str]]] = []
    for i, article in enumerate(squad.docs):  # one per article, in the file's order
        if article.id not in needed:
            continue
        found = by_title.get(_title_key(article.title), [])
        if len(found) == 1:
            attached[article.id] = found[0]
        else:
            unattached.append((i, article.title, found))
    if not unattached:
        return attached
    if not by_title:
        raise IngestError(
            path, None, "--onto: the workspace has no documents yet; import the corpus first"
        )
    problems = []
    for i, title, found in unattached[:ONTO_PROBLEMS_SHOWN]:
        if found:
            ids = ", ".join(repr(d) for d in found[:3]) + (", ..." if len(found) > 3 else "")
            problems.append(
                f"data[{i}]: {len(found)} documents are titled {title!r} ({ids}): "
                "the title does not say which one"
            )
            continue
        near = difflib.get_close_matches(_title_key(title), list(by_title), n=1)
        hint = f" (the nearest: {shown[near[0]]!r})" if near else ""
        problems.append(f"data[{i}]: no document is titled {title!r}{hint}")
    more = len(unattached) - len(problems)
    raise IngestError(
        path,
        None,
        "--onto attaches each article's questions to the document of its title, and "
        f"{len(unattached)} of {len(needed)} articles cannot be attached: "
        + "; ".join(problems)
        + (f"; and {more} more" if more > 0 else "")
        + ". Nothing was imported",
    )


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


# -- imported runs ----------------------------------------------------------------------


def _check_run_refs(ws: Workspace, path: Path, lines: Sequence[RunLine]) -> None:
    """Every question and document of a run must be in the workspace."""
    checks = (
        ("question", set(ws.question_ids()), "question_id", "import the questions first"),
        ("document", set(ws.doc_ids()), "doc_id", "not in the corpus"),
    )
    for what, known, attr, hint in checks:
        bad = [r for r in lines if getattr(r, attr) not in known]
        if not bad:
            continue
        first = getattr(bad[0], attr)
        message = f"unknown {what} {first!r}"
        if len(bad) > 1:
            distinct = len({getattr(r, attr) for r in bad})
            message += (
                f"; {len(bad) - 1} more lines name {what}s not in the workspace "
                f"({distinct} distinct in all)"
            )
        raise IngestError(path, bad[0].line, f"{message}; {hint}")


def import_run(ws: Workspace, path: Path, name: str, *, replace: bool = False) -> ImportReport:
    """A TREC run file as the rankings of an ``external`` retriever called ``name``.

    Each question's ranking is derived from the score column as trec_eval does (score
    descending, then doc id descending; the rank column is ignored), and is as deep as
    the file has documents for it; every listed document is ranked, whatever its score
    (trec_eval counts them all). Questions the file lacks get an empty ranking and score
    as misses, as for a built-in retriever that finds nothing. Every line is checked before anything
    is written, and the retriever and its rankings are written in one transaction.

    Args:
        ws: the workspace.
        path: the run file.
        name: the retriever's name.
        replace: replace an earlier imported run of that name (never a built-in one).

    Raises:
        IngestError: a bad line, or ids unknown to the workspace (file and line named).
        WorkspaceError: the name is taken (without ``replace``, or by a built-in kind).
    """
    lines = read_trec_run(path)
    _check_run_refs(ws, path, lines)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()  # read_trec_run refused an open one
    spec = RetrieverSpec(name, EXTERNAL_KIND, {"source": path.name, "sha256": digest})
    ranked = {qid: trec_order(s, len(s)) for qid, s in run_scores(lines).items()}
    # A question the file lacks gets an empty ranking, as a built-in retriever that finds
    # nothing stores one: it scores as a miss and is not taken for "not pooled yet".
    runs = []
    for qid in ws.question_ids():
        ids, scores = ranked.get(qid, ([], []))
        runs.append(CachedRun(name, qid, tuple(ids), tuple(scores), 0.0, digest, len(ids)))
    report = ImportReport(rankings=len(ranked))
    lacking = len(runs) - len(ranked)
    if lacking:
        report.notes.append(f"{lacking} questions have no ranking in it (scored as misses)")
    with ws.transaction():
        old = ws.retriever(name)
        if old is not None and old.kind not in STORED_KINDS:
            raise WorkspaceError(
                f"retriever {name!r} is a {old.kind} retriever, not an imported run; "
                "choose another --name"
            )
        if old is not None and not replace:
            raise WorkspaceError(
                f"a retriever named {name!r} already exists; pass --replace to replace "
                "its imported run"
            )
        ws.replace_retriever_runs(spec, runs)
        _log(ws, f"run {name}", path, report)
    return report
