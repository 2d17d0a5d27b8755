"""Writers for the field's file formats: TREC qrels and runs, BEIR, ranx, questions, labels.

Scores are written with ``%.17g`` (TREC) or Python's shortest exact ``repr`` (JSON): both
read back as the same double, and trec_eval re-ranks a run by its score column, so
rounding would create ties that change the metrics.

What each format holds (``gold`` is the resolved gold of :func:`engine.scoring.workspace_golds`:
the grade >= 1 documents of every question whose status is ``labeled``):

* ``trec-qrels``: ``qid 0 doc grade`` lines of the gold.
* ``trec-run``: ``qid Q0 doc rank score tag`` lines of cached rankings (tag = retriever).
* ``labels`` (or ``labels-csv``): every annotator's labels, ``question_id,doc_id,annotator,grade``.
* ``beir``: a folder with ``corpus.jsonl`` (``_id``, ``title``, ``text``, ``metadata`` = the
  document's fields), ``queries.jsonl`` (``_id``, ``text``, ``metadata`` = ``tags`` and
  ``no_answer``) and ``qrels/test.tsv`` (``query-id  corpus-id  score`` with that header).
* ``ranx``: a folder with ``qrels.json`` (``{qid: {doc: grade}}``) and one
  ``run-<retriever>.json`` (``{qid: {doc: score}}``) per retriever, for
  ``ranx.Qrels.from_file`` / ``ranx.Run.from_file``. See :func:`write_ranx` for the two
  things done so that ranx computes goldpan's numbers.
* ``questions-jsonl`` / ``questions-csv``: ``id``, ``text``, ``tags``, ``gold`` (``doc:grade``
  entries) and ``no_answer`` per question; ``goldpan import questions`` reads them back.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from engine.gold import Gold, Status
from engine.outfiles import NAME_MAX, atomic_folder, check_target, write_atomic
from engine.readers import IngestError
from engine.retrieve.runner import select_retrievers
from engine.scoring import workspace_golds
from engine.types import CachedRun, Doc, Label, Question
from engine.workspace import Workspace

EXPORT_FORMATS: Sequence[str] = (
    "trec-qrels",
    "trec-run",
    "labels",
    "labels-csv",
    "beir",
    "ranx",
    "questions-jsonl",
    "questions-csv",
)
"""Formats of ``goldpan export``; ``beir`` and ``ranx`` write a folder, the others a file."""

FOLDER_FORMATS = frozenset({"beir", "ranx"})


ASCII_SPACE = frozenset(" \t\r\n\x0b\x0c")
"""What separates TREC columns (trec_eval splits on ASCII whitespace only: an id may hold
a no-break space)."""


def check_id(ident: str, what: str, *, first_column: bool = False) -> None:
    """Refuse an id that a whitespace-separated line could not give back unchanged.

    Raises:
        ValueError: the id is empty, holds whitespace or NUL, or (``first_column``)
            starts with ``#`` (a comment line) or U+FEFF (taken as a byte-order mark).
    """
    if not ident:
        raise ValueError(f"empty {what} id; TREC lines need every id")
    if any(c in ASCII_SPACE or c == "\0" for c in ident):
        raise ValueError(
            f"{what} id {ident!r} holds whitespace; TREC files separate columns by "
            "whitespace (export questions-jsonl or beir instead)"
        )
    if first_column and ident[0] in "#\ufeff":
        raise ValueError(f"{what} id {ident!r} starts with {ident[0]!r}; readers would skip it")


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


LABEL_COLUMNS: Sequence[str] = ("question_id", "doc_id", "annotator", "grade")

_FORMULA_START = re.compile(r"'*[=+\-@\t\r]")


def spreadsheet_safe(cell: object) -> object:
    """A CSV cell a spreadsheet shows as text, never runs as a formula (CSV injection).

    OWASP's rule: a cell starting with ``=``, ``+``, ``-``, ``@``, tab or CR gets a
    leading ``'``. A cell that already starts with quotes and then one of those gets one
    more, so that :func:`engine.readers.unescape_formula` (goldpan's CSV
    importers) takes exactly one away and every cell imports back as it was.
    Numbers are left alone.
    """
    if isinstance(cell, str) and _FORMULA_START.match(cell):
        return "'" + cell
    return cell


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
        ValueError: a gold document id holds whitespace (use questions-jsonl), or a tag
            holds a separator that the reader splits tags at.
    """
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(QUESTION_COLUMNS)
    n = 0
    for q in questions:
        gold, no_answer = _question_gold(q, golds)
        for doc in gold:
            if any(c.isspace() for c in doc):
                raise ValueError(
                    f"document id {doc!r} holds whitespace, which separates the gold "
                    "entries of questions-csv; export questions-jsonl instead"
                )
        for tag in q.tags:
            if any(c in tag for c in ",;|"):
                raise ValueError(f"tag {tag!r} of question {q.id!r} holds , ; or |")
        cells = (q.id, q.text, ",".join(q.tags), " ".join(gold_entries(gold)))
        writer.writerow((*map(spreadsheet_safe, cells), str(no_answer).lower()))
        n += 1
    return n


# -- BEIR ----------------------------------------------------------------------------------


def _check_tsv_id(ident: str, what: str) -> None:
    if not ident or any(c.isspace() and c != " " for c in ident) or ident != ident.strip():
        raise ValueError(f"{what} id {ident!r} cannot be a BEIR qrels TSV cell (tab or line end)")


def write_beir(
    folder: Path,
    docs: Iterable[Doc],
    questions: Iterable[Question],
    golds: Mapping[str, Gold],
    split: str = "test",
) -> dict[str, int]:
    """A BEIR folder; returns the number of documents, queries and qrels lines written.

    Every question is a query (tags and the no-answer flag under ``metadata``); the qrels
    hold the gold of the ``labeled`` questions (BEIR's loader keeps only the queries that
    have qrels, goldpan's importer keeps them all).
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels").mkdir(exist_ok=True)
    counts = {"docs": 0, "queries": 0, "qrels": 0}
    questions = list(questions)
    gold = {q.id: _question_gold(q, golds)[0] for q in questions}
    rows: list[str] = []
    for qid in sorted(gold):
        for doc, grade in sorted(gold[qid].items()):
            _check_tsv_id(qid, "question")
            _check_tsv_id(doc, "document")
            rows.append(f"{qid}\t{doc}\t{grade}\n")
    with (folder / "corpus.jsonl").open("w", encoding="utf-8", newline="\n") as f:
        for d in docs:
            record = {"_id": d.id, "title": d.title, "text": d.text, "metadata": dict(d.fields)}
            f.write(jsonl_line(record))
            counts["docs"] += 1
    with (folder / "queries.jsonl").open("w", encoding="utf-8", newline="\n") as f:
        for q in questions:
            no_answer = _question_gold(q, golds)[1]
            meta = {"tags": list(q.tags), "no_answer": no_answer}
            f.write(jsonl_line({"_id": q.id, "text": q.text, "metadata": meta}))
            counts["queries"] += 1
    with (folder / "qrels" / f"{split}.tsv").open("w", encoding="utf-8", newline="\n") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        f.writelines(rows)
        counts["qrels"] = len(rows)
    return counts


# -- ranx ----------------------------------------------------------------------------------


def tie_free_scores(scores: Sequence[float]) -> list[float]:
    """The scores made strictly decreasing in the given (ranking) order, by the least steps.

    Walking up from the last document, a score not above the one below it is raised to
    the next representable double above that one (``math.nextafter``). Tied documents
    thus keep their order (goldpan's and trec_eval's: doc id descending) and move by a few
    units in the last place; distinct scores are unchanged unless a raised one reaches
    them.
    """
    out = [float(s) for s in scores]
    for i in range(len(out) - 2, -1, -1):
        if out[i] <= out[i + 1]:
            out[i] = math.nextafter(out[i + 1], math.inf)
    return out


def ranx_file_name(retriever: str) -> str:
    """``run-<name>.json``, with characters unsafe in a file name replaced by ``_``."""
    safe = "".join(c if c.isalnum() or c in "+-._@" else "_" for c in retriever)
    return f"run-{safe}.json"


@dataclass
class RanxExport:
    """What :func:`write_ranx` wrote."""

    qrels: Path
    runs: dict[str, Path] = field(default_factory=dict)
    """retriever -> its run file."""
    skipped: list[str] = field(default_factory=list)
    """Retrievers without a ranking for any scored question (ranx cannot load those)."""


def write_ranx(
    folder: Path,
    gold: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Mapping[str, CachedRun]],
) -> RanxExport:
    """``qrels.json`` and one ``run-<retriever>.json`` per retriever, as ranx loads them.

    Two choices make ranx's numbers goldpan's (and trec_eval's):

    * Each run holds exactly the questions of ``qrels.json``, a question without a
      ranking as ``{}``: ``ranx.evaluate(qrels, run)`` then needs no
      ``make_comparable`` and averages over the same questions as ``goldpan score``.
    * ranx orders tied scores arbitrarily (ranx#9), so scores go through
      :func:`tie_free_scores` in the cached order.

    Raises:
        ValueError: there is no gold to write (ranx cannot load an empty qrels).
    """
    if not any(gold.values()):
        raise ValueError("no question has a gold document yet; there is nothing to evaluate")
    folder.mkdir(parents=True, exist_ok=True)
    qids = sorted(q for q, g in gold.items() if g)
    export = RanxExport(folder / "qrels.json")
    qrels = {q: dict(sorted(gold[q].items())) for q in qids}
    export.qrels.write_text(json.dumps(qrels, ensure_ascii=False) + "\n", encoding="utf-8")
    names: dict[str, str] = {}
    for name, cached in runs.items():
        body: dict[str, dict[str, float]] = {}
        for q in qids:
            r = cached.get(q)
            body[q] = dict(zip(r.doc_ids, tie_free_scores(r.scores), strict=True)) if r else {}
        if not any(body.values()):
            export.skipped.append(name)
            continue
        file_name = ranx_file_name(name)
        if len(file_name.encode("utf-8")) > NAME_MAX:
            raise ValueError(
                f"retriever {name[:40]!r}... gives a run file name of "
                f"{len(file_name.encode('utf-8'))} bytes; file systems allow {NAME_MAX}: "
                "export the others with --retriever NAME, or add it again under a shorter name"
            )
        if file_name in names:
            raise ValueError(
                f"retrievers {names[file_name]!r} and {name!r} both map to {file_name}"
            )
        names[file_name] = name
        path = folder / file_name
        path.write_text(json.dumps(body, ensure_ascii=False) + "\n", encoding="utf-8")
        export.runs[name] = path
    return export


# -- a workspace to files ------------------------------------------------------------------


def _owned(fmt: str, split: str = "test") -> Callable[[Path], bool]:
    """Which entries of an existing folder a ``fmt`` export writes (and so may replace)."""

    def owned(rel: Path) -> bool:
        parts = rel.parts
        if fmt == "beir":
            return parts in (("corpus.jsonl",), ("queries.jsonl",), ("qrels",)) or (
                len(parts) == 2 and parts[0] == "qrels" and parts[1].endswith(".tsv")
            )
        return len(parts) == 1 and (
            parts[0] == "qrels.json" or (parts[0].startswith("run-") and parts[0].endswith(".json"))
        )

    return owned


def export_workspace(
    ws: Workspace,
    fmt: str,
    target: Path,
    retrievers: Sequence[str] | None = None,
    *,
    force: bool = False,
) -> str:
    """Write the workspace in ``fmt`` to ``target``; returns one line saying what was written.

    ``target`` is a file, or a folder for ``beir`` and ``ranx``. Everything is built in
    memory or in a temporary file or folder beside ``target`` and renamed into place
    (:mod:`engine.outfiles`): a failure leaves no partial output and an older ``target``
    intact. An existing ``target`` is replaced only with ``force`` (a folder only when it
    holds nothing but this format's files); the workspace itself, any SQLite file and
    devices are never written. ``retrievers`` limits ``trec-run`` and ``ranx`` (default:
    all).

    Raises:
        ValueError: unknown format.
        IngestError: a target that cannot be written as asked, ids the format cannot hold,
            or a failed write; the message names ``target`` and says why.
    """
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(EXPORT_FORMATS)}")
    protect = [ws.path]
    folder = fmt in FOLDER_FORMATS
    check_target(target, force=force, protect=protect, folder=folder)  # before any work
    try:
        return _export(ws, fmt, target, retrievers, force=force, protect=protect)
    except ValueError as exc:
        raise IngestError(target, None, str(exc)) from None


def _export(
    ws: Workspace,
    fmt: str,
    target: Path,
    retrievers: Sequence[str] | None,
    *,
    force: bool,
    protect: Sequence[Path],
) -> str:
    golds = workspace_golds(ws)
    gold = {q: g.gold for q, g in golds.items() if g.status is Status.LABELED and g.gold}
    specs = select_retrievers(ws, retrievers)
    if fmt == "beir":
        with atomic_folder(target, force=force, protect=protect, owned=_owned(fmt)) as tmp:
            c = write_beir(tmp, ws.docs(), ws.questions(), golds)
        return (
            f"wrote {c['docs']} documents, {c['queries']} queries and {c['qrels']} qrels "
            f"lines to {target}"
        )
    if fmt == "ranx":
        with atomic_folder(target, force=force, protect=protect, owned=_owned(fmt)) as tmp:
            export = write_ranx(tmp, gold, {s.name: ws.runs(s.name) for s in specs})
        line = f"wrote qrels.json and {len(export.runs)} runs to {target}"
        if export.skipped:
            line += f" (no ranking of a scored question: {', '.join(export.skipped)})"
        return line
    buf = io.StringIO(newline="")
    if fmt == "trec-qrels":
        n = write_trec_qrels(buf, gold)
    elif fmt == "trec-run":
        n = write_trec_run(buf, [r for s in specs for r in ws.runs(s.name).values()])
    elif fmt in ("labels", "labels-csv"):
        n = write_labels_csv(buf, ws.labels())
    elif fmt == "questions-jsonl":
        n = write_questions_jsonl(buf, ws.questions(), golds)
    else:
        n = write_questions_csv(buf, ws.questions(), golds)
    write_atomic(target, buf.getvalue(), force=force, protect=protect)
    what = "questions" if fmt.startswith("questions") else "lines"
    return f"wrote {n} {what} to {target}"
