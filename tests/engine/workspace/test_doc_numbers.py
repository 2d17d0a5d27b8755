"""Cached rankings name documents by number (``doc_numbers``, schema version 9).

A number is given once per document and never changes: these tests hold the readers to
that through the ways a workspace changes (documents added here or by another process, a
rolled-back import, VACUUM), and hold them to the JSON rows goldpan wrote before.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from engine.retrieve.runner import refresh_runs
from engine.types import Doc
from engine.workspace import Workspace, WorkspaceError
from tests.engine.retrieve.test_bm25_index import NAMES, make_ws, rankings


def pooled(path) -> tuple[Workspace, dict]:
    """A workspace at ``path`` whose questions every BM25 retriever ranked, and the rankings."""
    ws = make_ws(path)
    refresh_runs(ws, NAMES)
    return ws, rankings(ws)


def stored_types(ws: Workspace) -> set[str]:
    return {r[0] for r in ws.conn.execute("SELECT DISTINCT typeof(doc_ids) FROM runs")}


def test_a_pool_stores_numbers_that_read_back_as_the_ranked_ids(tmp_path):
    ws = make_ws(tmp_path / "a.db")
    refresh_runs(ws, NAMES)
    assert stored_types(ws) == {"blob"}
    numbers = dict(ws.conn.execute("SELECT id, n FROM doc_numbers"))
    assert sorted(numbers) == ws.doc_ids()  # every document, once
    for name, by_question in rankings(ws).items():
        for qid, (ids, scores) in by_question.items():
            blob = ws.conn.execute(
                "SELECT doc_ids FROM runs WHERE retriever = ? AND question_id = ?", (name, qid)
            ).fetchone()[0]
            assert blob == b"".join(numbers[d].to_bytes(4, "little") for d in ids)
            assert len(ids) == len(scores)
    ws.close()


def test_rankings_stored_as_json_before_version_9_read_the_same(tmp_path):
    path = tmp_path / "a.db"
    ws, before = pooled(path)
    with ws.transaction():  # the rows as goldpan wrote them before schema version 9
        for name, by_question in before.items():
            for qid, (ids, _) in by_question.items():
                ws.conn.execute(
                    "UPDATE runs SET doc_ids = ? WHERE retriever = ? AND question_id = ?",
                    (json.dumps(list(ids), ensure_ascii=False), name, qid),
                )
    ws.close()

    ws = Workspace.open(path)
    assert stored_types(ws) == {"text"}
    ws.ensure_sound()  # the write gate takes them
    assert list(ws.row_problems()) == []
    assert rankings(ws) == before
    stored = ws.all_runs()
    assert {n: stored[n] for n in NAMES} == {
        n: {q: ids for q, (ids, _) in r.items()} for n, r in before.items()
    }
    assert refresh_runs(ws, NAMES).ran == dict.fromkeys(NAMES, 0)  # still valid caches
    refresh_runs(ws, NAMES, force=True)
    assert stored_types(ws) == {"blob"} and rankings(ws) == before
    ws.close()


def test_numbers_stay_with_their_documents_through_updates_and_vacuum(tmp_path):
    path = tmp_path / "a.db"
    ws = make_ws(path)
    first = dict(ws.conn.execute("SELECT id, n FROM doc_numbers"))
    ws.write_docs([Doc("d-new", "", "보정 팬텀 새 문서"), Doc("d1", "", "바뀐 본문 보정")])
    numbers = dict(ws.conn.execute("SELECT id, n FROM doc_numbers"))
    assert {d: numbers[d] for d in first} == first  # an updated document keeps its number
    assert numbers["d-new"] == max(first.values()) + 1
    refresh_runs(ws, NAMES)
    before = rankings(ws)
    ws.close()

    conn = sqlite3.connect(path)
    conn.execute("VACUUM")  # renumbers rowids of tables without an INTEGER PRIMARY KEY
    conn.close()
    ws = Workspace.open(path)
    assert dict(ws.conn.execute("SELECT id, n FROM doc_numbers")) == numbers
    assert rankings(ws) == before
    ws.close()


def test_a_rolled_back_import_leaves_no_number_behind(tmp_path):
    path = tmp_path / "a.db"
    ws = make_ws(path)
    with pytest.raises(RuntimeError), ws.transaction():
        ws.write_docs([Doc("ghost", "", "보정 유령 문서 보정 보정")])
        assert "ghost" in ws.doc_numbers.numbers()  # numbered, and read into the cache
        raise RuntimeError("the import fails after its documents")
    other = Workspace.open(path)  # gives the next number to another document, and ranks it
    other.write_docs([Doc("real", "", "보정 진짜 문서 보정 보정")])
    refresh_runs(other, NAMES)
    other.close()
    ids = {d for by_q in rankings(ws).values() for ids, _ in by_q.values() for d in ids}
    assert "real" in ids and "ghost" not in ids
    ws.close()


def test_documents_another_process_adds_are_read_when_first_named(tmp_path):
    path = tmp_path / "a.db"
    mine, first = pooled(path)  # numbers read and cached here
    assert first
    theirs = Workspace.open(path)
    theirs.write_docs([Doc("theirs", "", "감쇠 보정 감쇠 보정 감쇠 보정")])
    refresh_runs(theirs, ["bm25-word"])
    theirs.close()
    assert any("theirs" in ids for ids, _ in rankings(mine)["bm25-word"].values())
    refresh_runs(mine, NAMES)  # its pool names the new document too
    assert any("theirs" in ids for ids, _ in rankings(mine)["bm25-bigram"].values())
    mine.close()


def test_a_ranking_of_a_document_without_a_number_is_refused(tmp_path):
    ws = make_ws(tmp_path / "a.db")
    with ws.transaction():
        ws.conn.execute("DELETE FROM doc_numbers WHERE id = 'd1'")
    (problem,) = ws.foreign_key_problems()
    assert problem.endswith("the document has no number in doc_numbers")
    with pytest.raises(WorkspaceError, match="'d1' has no number in doc_numbers"):
        refresh_runs(ws, ["bm25-word"])  # this connection checked the file before
    assert ws.conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    ws.close()


def test_numbers_with_gaps_read_and_check_as_numbers(tmp_path):
    # goldpan numbers documents 1..N; another tool may leave gaps, which read just as well
    path = tmp_path / "a.db"
    ws = make_ws(path)
    with ws.transaction():
        ws.conn.execute("UPDATE doc_numbers SET n = 1000 WHERE id = 'd1'")
    refresh_runs(ws, NAMES)
    before = rankings(ws)
    assert any("d1" in ids for by_q in before.values() for ids, _ in by_q.values())
    ws.close()
    ws = Workspace.open(path)
    assert ws.doc_numbers.dense_top() is None
    ws.ensure_sound()
    assert rankings(ws) == before
    ws.close()
    conn = sqlite3.connect(path)  # the number d1's rankings name now names nothing
    conn.execute("UPDATE doc_numbers SET n = 2000 WHERE id = 'd1'")
    conn.commit()
    conn.close()
    ws = Workspace.open(path)
    with pytest.raises(WorkspaceError, match="doc_ids names document number 1000"):
        ws.ensure_sound()
    ws.close()


def test_a_few_rankings_read_only_their_own_numbers(tmp_path):
    path = tmp_path / "a.db"
    ws, everything = pooled(path)
    ws.close()
    ws = Workspace.open(path)
    one = ws.runs("bm25-bigram", ["q1"])["q1"]  # what a screen reads for its question
    assert ws.doc_numbers._names is None  # no other document's number was read
    assert (one.doc_ids, one.scores) == everything["bm25-bigram"]["q1"]
    with ws.transaction():  # a number that names nothing: the few path says so too
        ws.conn.execute(
            "UPDATE runs SET doc_ids = x'ffffff7f', scores = zeroblob(8) "
            "WHERE retriever = 'bm25-word' AND question_id = 'q2'"
        )
    with pytest.raises(WorkspaceError, match="doc_ids names document number 2147483647"):
        ws.runs("bm25-word", ["q2"])
    ws.close()


def test_a_corpus_without_documents_pools_and_checks(tmp_path):
    from engine.workspace_setup import new_workspace
    from tests.engine.retrieve.test_bm25_index import QUESTIONS

    path = tmp_path / "a.db"
    ws = new_workspace(path)
    ws.write_questions(QUESTIONS)
    refresh_runs(ws, ["bm25-word"])  # every ranking is empty: nothing to number
    ws.close()
    ws = Workspace.open(path)
    assert ws.doc_numbers.dense_top() == 0
    ws.ensure_sound()
    assert {r.doc_ids for r in ws.runs("bm25-word").values()} == {()}
    assert ws.doc_numbers.ids([]) == [] and ws.doc_numbers.ids([1]) is None
    ws.close()


def counting_numbers_check(ws: Workspace, monkeypatch) -> list[int]:
    """How many rankings the gate's numbers check (a call into Python each) is asked of."""
    calls: list[int] = []
    made = type(ws)._bad_numbers

    def counted(self, top):
        check = made(self, top)

        def bad(blob):
            calls.append(1)
            return check(blob)

        return bad

    monkeypatch.setattr(type(ws), "_bad_numbers", counted)
    return calls


def test_the_gate_does_not_decode_again_what_this_connection_just_decoded(tmp_path, monkeypatch):
    # a served tab reads every ranking (its live scores), then takes a lease: its first
    # write, before which the soundness gate decoded every ranking's numbers once more
    path = tmp_path / "a.db"
    ws, _ = pooled(path)
    n_runs = ws.conn.execute("SELECT count(*) FROM runs").fetchone()[0]
    ws.close()
    ws = Workspace.open(path)
    calls = counting_numbers_check(ws, monkeypatch)
    ws.all_runs()
    assert ws._soundness_problem() is None
    assert calls == []
    ws.close()
    ws = Workspace.open(path)  # without the rankings read first: every one is checked
    calls = counting_numbers_check(ws, monkeypatch)
    assert ws._soundness_problem() is None
    assert len(calls) == n_runs
    ws.close()


def test_a_ranking_damaged_by_another_connection_after_the_read_is_still_refused(
    tmp_path, monkeypatch
):
    path = tmp_path / "a.db"
    ws, _ = pooled(path)
    ws.close()
    ws = Workspace.open(path)
    ws.all_runs()  # sound when read
    other = sqlite3.connect(path)  # then another connection writes a number naming nothing
    other.execute(
        "UPDATE runs SET doc_ids = x'ffffff7f', scores = zeroblob(8) "
        "WHERE retriever = 'bm25-word' AND question_id = 'q2'"
    )
    other.commit()
    other.close()
    calls = counting_numbers_check(ws, monkeypatch)
    with pytest.raises(WorkspaceError, match="doc_ids names document number 2147483647"):
        ws.ensure_sound()
    assert calls, "the numbers were checked again"
    assert ws.conn.execute("SELECT count(*) FROM events").fetchone()[0] == before_events(path)
    ws.close()


def before_events(path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        conn.close()


def test_numbers_read_before_another_connection_committed_do_not_vouch(tmp_path, monkeypatch):
    # the numbers were read, then another connection committed, then the rankings were
    # decoded with the numbers read before: they vouch for nothing of the file as it is
    path = tmp_path / "a.db"
    ws, _ = pooled(path)
    ws.close()
    ws = Workspace.open(path)
    ws.doc_numbers.ids([1])  # read now
    other = sqlite3.connect(path)
    other.execute("INSERT INTO meta(key, value) VALUES ('note', 'another commit')")
    other.commit()
    other.close()
    ws.all_runs()
    calls = counting_numbers_check(ws, monkeypatch)
    assert ws._soundness_problem() is None
    assert calls, "checked: the numbers were read before the other commit"
    ws.close()
