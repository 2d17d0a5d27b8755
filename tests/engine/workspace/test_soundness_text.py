"""The soundness gate's UTF-8 test, made many rows at once, picks what the per-row test picks."""

import sqlite3

import pytest

from engine.types import Doc
from engine.workspace import Workspace, WorkspaceError, soundness

BAD = "CAST(X'6162FF63' AS TEXT)"  # 'ab', a byte no UTF-8 text has, 'c'
CUT = "CAST(X'61C3' AS TEXT)"  # a two-byte sequence cut short at the end of the value


def _damage(path, sql):
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute(sql)
    conn.commit()
    conn.close()


def _verdict(path, monkeypatch, *, row_by_row: bool) -> str | None:
    with monkeypatch.context() as m:
        if row_by_row:  # the test of every row on its own, as before the joined test
            m.setattr(Workspace, "_text_sound", lambda self, table, where: False)
        with Workspace.open(path) as ws:
            return ws._soundness_problem()


def _many_docs(path, n):
    with Workspace.open(path) as ws:
        ws.write_docs([Doc(f"x{i}", f"title {i}", f"본문 {i} " * (1 + i % 7)) for i in range(n)])


CASES = {
    "docs.text": f"UPDATE docs SET text = {BAD} WHERE rowid = 2",
    "docs.title cut short": f"UPDATE docs SET title = {CUT} WHERE rowid = 1",
    "docs.fields": "UPDATE docs SET fields = CAST(X'7B7DFF' AS TEXT) WHERE rowid = 3",
    "questions.note": f"UPDATE questions SET note = {BAD} WHERE rowid = 1",
    "questions.tags": "UPDATE questions SET tags = CAST(X'5B2261FF225D' AS TEXT) WHERE rowid = 2",
    "labels.annotator": f"UPDATE labels SET annotator = {BAD} WHERE rowid = 1",
    "events.new": f"UPDATE events SET new = {BAD} WHERE rowid = (SELECT max(rowid) FROM events)",
    "meta.value": f"UPDATE meta SET value = {BAD} WHERE key = (SELECT min(key) FROM meta)",
    "last of many docs": f"UPDATE docs SET text = {CUT} "
    "WHERE rowid = (SELECT max(rowid) FROM docs)",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_value_that_is_not_utf8_is_found_as_row_by_row(tiny_ws, monkeypatch, case):
    _many_docs(tiny_ws, 700)
    monkeypatch.setattr(soundness, "_TEXT_ROWS", 16)  # several reads, of growing size
    _damage(tiny_ws, CASES[case])
    want = _verdict(tiny_ws, monkeypatch, row_by_row=True)
    got = _verdict(tiny_ws, monkeypatch, row_by_row=False)
    assert want is not None and "nothing was written" in want
    assert got == want


def test_a_sound_file_never_calls_python_per_row(tiny_ws, monkeypatch):
    _many_docs(tiny_ws, 300)
    calls = []
    real = soundness._bad_utf8
    monkeypatch.setattr(soundness, "_bad_utf8", lambda v: calls.append(v) or real(v))
    with Workspace.open(tiny_ws) as ws:
        assert ws._soundness_problem() is None
    assert calls == []
    _damage(tiny_ws, f"UPDATE docs SET text = {BAD} WHERE rowid = 5")
    with Workspace.open(tiny_ws) as ws:
        problem = ws._soundness_problem()
    assert problem is not None and "docs" in problem
    assert calls  # a table that fails the joined test is tested row by row


def test_long_rows_are_read_a_few_at_a_time(tiny_ws, monkeypatch):
    # a read of more than _TEXT_BYTES halves the next: a bad value among long ones is found
    _many_docs(tiny_ws, 200)
    monkeypatch.setattr(soundness, "_TEXT_ROWS", 16)
    monkeypatch.setattr(soundness, "_TEXT_BYTES", 500)
    sizes = []
    real = Workspace._text_sound

    def watched(self, table, where):
        conn = self.conn
        self.conn = _Counting(conn, sizes)
        try:
            return real(self, table, where)
        finally:
            self.conn = conn

    monkeypatch.setattr(Workspace, "_text_sound", watched)
    _damage(tiny_ws, f"UPDATE docs SET text = {BAD} WHERE rowid = 150")
    with Workspace.open(tiny_ws) as ws, pytest.raises(WorkspaceError, match="docs"):
        ws.ensure_sound()
    assert min(sizes) < 16  # it shrank


class _Counting:
    """A connection that notes the row limit of each joined read."""

    def __init__(self, conn, sizes):
        self._conn, self._sizes = conn, sizes

    def execute(self, sql, params=()):
        if "group_concat" in sql:
            self._sizes.append(params[1])
        return self._conn.execute(sql, params)

    def __getattr__(self, name):
        return getattr(self._conn, name)


def test_a_long_document_is_decoded_a_piece_at_a_time(tmp_path):
    # the joined blob is the one copy Python holds: its text is never made whole (a
    # 250 MB document would make a str of several hundred MB more)
    import tracemalloc

    from engine.workspace_setup import new_workspace

    text = "감쇠 보정은 어떻게 하나 " * 300_000
    with new_workspace(tmp_path / "big.db") as ws:
        ws.write_docs([Doc("big", "t", text), Doc("small", "t", "x")])
    size = len(text.encode("utf-8"))
    with Workspace.open(tmp_path / "big.db") as ws:
        tracemalloc.start()
        try:
            assert ws._soundness_problem() is None
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert size < peak < 1.6 * size
