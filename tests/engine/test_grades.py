"""The grades and the relevance cut have one home (engine.grades); what restates them agrees."""

from __future__ import annotations

import sqlite3

import pytest

from engine.grades import (
    GRADE_HELP,
    GRADE_MEANINGS,
    GRADE_RANGE,
    GRADES,
    MAX_GRADE,
    MIN_GRADE,
    RELEVANT,
    is_relevant,
    sql_not_a_grade,
)
from engine.workspace.migrations import MIGRATIONS


def test_the_grades_and_their_words() -> None:
    assert GRADES == tuple(range(MIN_GRADE, MAX_GRADE + 1)) == (0, 1, 2, 3)
    assert GRADE_RANGE == "0-3"
    assert len(GRADE_MEANINGS) == len(GRADES)
    for g, meaning in zip(GRADES, GRADE_MEANINGS, strict=True):
        assert f"{g} = {meaning.split(':')[0].lower()}" in GRADE_HELP.replace(
            "relevant (partly answers)", "relevant"
        )


def test_relevant_means_grade_one_or_more() -> None:
    # trec_eval's rel_level 1: grade 0 is a judged miss, 1-3 are hits
    assert [is_relevant(g) for g in GRADES] == [False, True, True, True]
    assert RELEVANT == 1 and not is_relevant(RELEVANT - 1)


@pytest.mark.parametrize(
    ("value", "bad"),
    [(0, False), (3, False), (-1, True), (4, True), (1.5, True), ("2", True), (None, True)],
)
def test_sql_condition_finds_what_is_no_grade(value: object, bad: bool) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (grade)")
    db.execute("INSERT INTO t VALUES (?)", (value,))
    found = db.execute(f"SELECT count(*) FROM t WHERE {sql_not_a_grade()}").fetchone()[0]
    assert bool(found) is bad


def test_schema_check_agrees_with_the_grades() -> None:
    """The tables' CHECK, written out in the migrations (which never change once shipped),
    takes every grade and refuses the next ones out."""
    db = sqlite3.connect(":memory:")
    for script in MIGRATIONS:
        db.executescript(script)
    rows = {
        "labels": "INSERT INTO labels (question_id, doc_id, annotator, grade, updated) "
        "VALUES ('q', ?, 'a', ?, 'now')",
        "model_labels": "INSERT INTO model_labels (question_id, doc_id, annotator, grade, updated) "
        "VALUES ('q', ?, 'model:m', ?, 'now')",
    }
    for table, insert in rows.items():
        for g in GRADES:
            db.execute(insert, (f"d{g}", g))
        for g in (MIN_GRADE - 1, MAX_GRADE + 1):
            with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
                db.execute(insert, ("x", g))
        assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == len(GRADES)
