"""BEIR folders (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``), read and written.

The reader takes each file with the corpus, questions and qrels readers; goldpan's
writer puts a document's fields and a query's tags and no-answer flag under ``metadata``,
which the reader gives back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import BadInput
from engine.formats.docs import read_docs
from engine.formats.errors import IngestError
from engine.formats.questions import (
    QuestionExtras,
    _question_gold,
    read_question_extras,
    read_questions,
)
from engine.formats.tabular import jsonl_line
from engine.formats.trec import QrelLine, read_qrels
from engine.gold import Gold, Status
from engine.types import Doc, Question

# -- BEIR ----------------------------------------------------------------------------------


def _check_tsv_id(ident: str, what: str) -> None:
    if not ident or any(c.isspace() and c != " " for c in ident) or ident != ident.strip():
        raise BadInput(f"{what} id {ident!r} cannot be a BEIR qrels TSV cell (tab or line end)")


def _question_qrels(q: Question, golds: Mapping[str, Gold]) -> Mapping[str, int]:
    """A labeled question's judgments (:attr:`Gold.qrels`); none for any other."""
    g = golds.get(q.id)
    return g.qrels if g is not None and g.status is Status.LABELED else {}


def write_beir(
    folder: Path,
    docs: Iterable[Doc],
    questions: Iterable[Question],
    golds: Mapping[str, Gold],
    split: str = "test",
) -> dict[str, int]:
    """A BEIR folder; returns the number of documents, queries and qrels lines written.

    Every question is a query (tags and the no-answer flag under ``metadata``); the qrels
    hold the judgments of the ``labeled`` questions: the gold, and 0 for every document
    judged not relevant (what bpref and the judged-only metrics read; BEIR's loader keeps
    only the queries that have qrels, goldpan's importer keeps them all).
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels").mkdir(exist_ok=True)
    counts = {"docs": 0, "queries": 0, "qrels": 0}
    questions = list(questions)
    gold = {q.id: _question_qrels(q, golds) for q in questions}
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


@dataclass(frozen=True)
class BeirSet:
    """A BEIR folder's records, parsed and checked file by file (not against each other)."""

    docs: list[Doc]
    questions: list[Question]
    """The queries, without the tags of their ``metadata`` (those are in ``extras``)."""
    extras: list[QuestionExtras]
    qrels: list[QrelLine]
    queries: Path
    qrels_path: Path


def read_beir(folder: Path, split: str = "test") -> BeirSet:
    """A BEIR folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/{split}.tsv``.

    A document's ``metadata`` object becomes its fields; a query's ``metadata`` may give
    its tags and a ``no_answer`` flag (:func:`engine.formats.questions.read_question_extras`).
    """
    if not folder.is_dir():
        raise IngestError(
            folder, None, "expected a BEIR folder (corpus.jsonl, queries.jsonl, qrels/)"
        )
    docs = [_unwrap_metadata(d) for d in read_docs(folder / "corpus.jsonl", "jsonl")]
    queries_path = folder / "queries.jsonl"
    extras = read_question_extras(queries_path)
    questions = read_questions(queries_path)
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        splits = ", ".join(sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))) or "none"
        raise IngestError(
            qrels_path, None, f"no such file; expected the split's qrels (splits here: {splits})"
        )
    qrels = read_qrels(qrels_path)
    return BeirSet(docs, questions, extras, qrels, queries_path, qrels_path)


def _unwrap_metadata(doc: Doc) -> Doc:
    """A BEIR document's ``metadata`` object becomes its fields (goldpan writes them there).

    Kept as one ``metadata`` field when it is not an object or a key would collide.
    """
    meta = doc.fields.get("metadata")
    if not isinstance(meta, Mapping):
        return doc
    rest = {k: v for k, v in doc.fields.items() if k != "metadata"}
    if set(meta) & set(rest):
        return doc
    fields: dict[str, Any] = {**meta, **rest}
    return dataclasses.replace(doc, fields=fields)
