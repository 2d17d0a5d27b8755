"""A workspace's corpus, questions, labels and qrels as a plain SQLite database.

``goldpan export WS --format sqlite --out copy.db`` writes what the text exports write, as
tables anyone can query with ``sqlite3``, Datasette or ``pandas.read_sql``, without goldpan:

- ``docs(id, title, text)``;
- ``questions(id, text, tags, status, no_answer)``: ``tags`` a JSON list, ``status`` the
  resolved gold's (:class:`~engine.gold.Status`), ``no_answer`` 0 or 1;
- ``labels(question_id, doc_id, annotator, grade)``: every annotator's labels, as the
  ``labels`` export writes them;
- ``qrels(question_id, doc_id, grade)``: the scored questions' judgments, as the
  ``trec-qrels`` export writes them (the resolved gold, and 0 for a document judged not
  relevant).

The tables are made by sqlite-utils (on goldpan's design card: the right tool for a new,
plain database with declared columns and keys). It is imported here, and only when this
export runs: its import takes 0.3 s or more (it loads pandas and numpy when they are
installed), more than a whole ``goldpan label``; the workspace itself is read and written
with :mod:`sqlite3` (:mod:`engine.workspace` says why). The copy is not a workspace: it has
no ``application_id``, so goldpan opens it as nothing but another program's database.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from engine.gold import Gold, Status
from engine.types import Doc, Label, Question


def write_sqlite_copy(
    path: Path,
    docs: Iterable[Doc],
    questions: Iterable[Question],
    labels: Iterable[Label],
    golds: Mapping[str, Gold],
) -> dict[str, int]:
    """Create the database at ``path`` (which must not exist); rows written per table.

    The file is closed when this returns, in rollback-journal mode: nothing is left beside
    it, so it can be moved into place (:func:`engine.formats.outfiles.atomic_database`,
    which also removes it when this fails half-way).
    """
    import sqlite_utils

    counts: dict[str, int] = {}
    db = sqlite_utils.Database(str(path))
    try:
        counts["docs"] = _insert(
            db,
            "docs",
            ({"id": d.id, "title": d.title, "text": d.text} for d in docs),
            {"id": str, "title": str, "text": str},
            "id",
        )
        counts["questions"] = _insert(
            db,
            "questions",
            (_question_row(q, golds.get(q.id)) for q in questions),
            {"id": str, "text": str, "tags": str, "status": str, "no_answer": int},
            "id",
        )
        counts["labels"] = _insert(
            db,
            "labels",
            (
                {
                    "question_id": x.question_id,
                    "doc_id": x.doc_id,
                    "annotator": x.annotator,
                    "grade": x.grade,
                }
                for x in labels
            ),
            {"question_id": str, "doc_id": str, "annotator": str, "grade": int},
            ("question_id", "doc_id", "annotator"),
        )
        counts["qrels"] = _insert(
            db,
            "qrels",
            (
                {"question_id": q, "doc_id": doc, "grade": grade}
                for q, g in sorted(golds.items())
                if g.status is Status.LABELED and g.gold
                for doc, grade in g.qrels.items()
            ),
            {"question_id": str, "doc_id": str, "grade": int},
            ("question_id", "doc_id"),
        )
    finally:
        db.close()
    return counts


def _question_row(q: Question, gold: Gold | None) -> dict[str, object]:
    status = gold.status if gold is not None else Status.UNLABELED
    return {
        "id": q.id,
        "text": q.text,
        "tags": json.dumps(list(q.tags), ensure_ascii=False),
        "status": status.value,
        "no_answer": int(status is Status.NO_ANSWER),
    }


def _insert(
    db: Any,
    name: str,
    rows: Iterable[dict[str, object]],
    columns: Mapping[str, type],
    pk: str | tuple[str, ...],
) -> int:
    """Create table ``name`` (also when ``rows`` is empty) and insert ``rows``; their count."""
    table = db[name]
    table.create(dict(columns), pk=pk, not_null=set(columns))
    n = 0

    def counted() -> Iterable[dict[str, object]]:
        nonlocal n
        for row in rows:
            n += 1
            yield row

    table.insert_all(counted(), batch_size=1000)
    return n
