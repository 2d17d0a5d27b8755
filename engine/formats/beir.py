"""BEIR folders as goldpan writes them (``corpus.jsonl``, ``queries.jsonl``, ``qrels/*.tsv``).

goldpan reads a BEIR folder with the corpus, questions and qrels readers
(:func:`engine.ingest.import_beir`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from engine.formats.questions import _question_gold
from engine.formats.tabular import jsonl_line
from engine.gold import Gold
from engine.types import Doc, Question

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
