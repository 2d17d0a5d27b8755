"""The soundness gate: refuse to write into a file that is damaged, and ``goldpan check``'s scans.

:class:`SoundnessChecks` is mixed into :class:`~engine.workspace.lifecycle.WorkspaceFile`:
before a connection's first write it finds rows the readers would refuse (SQL picks the
suspects, the readers' own decoders judge them), runs SQLite's ``quick_check`` and looks
for rows pointing at rows missing, once per connection (and once per process while it
holds the file open: :mod:`held`).
"""

from __future__ import annotations

import codecs
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine.grades import MAX_GRADE, MIN_GRADE, sql_not_a_grade
from engine.types import (
    JUDGING_KEYS,
    MAX_JSON_DEPTH,
    MODEL_JUDGE_KINDS,
    RETRIEVER_KIND_NAMES,
    VERDICTS,
)
from engine.workspace import held
from engine.workspace import rows as decode
from engine.workspace.numbers import DocNumbers
from engine.workspace.rows import BadRow, WorkspaceError


class SoundnessChecks:
    """The soundness gate and the checks behind ``goldpan check``, over :attr:`conn`."""

    path: Path
    conn: sqlite3.Connection
    readonly: bool
    doc_numbers: DocNumbers
    _sound: bool
    """The gate passed on this connection (it runs before the first write)."""
    _behind: SoundnessBehind | None
    """The gate's checks running in a thread (:meth:`check_soundness_behind`)."""
    _runs_decoded_at: int | None
    """``data_version`` when this connection decoded every ranking's documents, before
    writing anything (:meth:`RankingTables.all_runs`)."""

    @classmethod
    def open_for_checks(cls, path: Path) -> Any:
        """A new connection to ``path`` of the class mixing this in (for checks in a thread)."""
        raise NotImplementedError

    def ensure_sound(self) -> None:
        """Refuse to write into a file SQLite reports as damaged (``PRAGMA quick_check``).

        A write that lands beside a damaged page succeeds and hides the damage a little
        deeper; goldpan stops before the first write instead and points to ``check``. The
        quick check reads every page once (no index cross-check): about 0.1 s per 100 MB.

        Once per connection: after it passes, every write of this connection goes through
        :meth:`transaction`, which does not check again either; nor does another
        connection of this process while the process keeps the file open
        (:func:`held.is_sound`): a pooling worker's connection skips it. The checks can
        start early on a connection of their own (:meth:`check_soundness_behind`, as the
        app does after its first paint and ``pool`` as it opens); this waits for them.
        """
        if self._sound:
            return
        behind, self._behind = self._behind, None
        if behind is not None:
            problem = behind.verdict()
            if problem is not None:
                raise WorkspaceError(problem)
            if behind.passed:
                self._sound = True
                return
            # the thread could not finish (its connection failed): checked here instead
        if held.is_sound(self.path):
            self._sound = True
            return
        problem = self._soundness_problem()
        if problem is not None:
            raise WorkspaceError(problem)
        self._sound = True
        held.mark_sound(self.path)

    def check_soundness_behind(self) -> None:
        """Start :meth:`ensure_sound`'s checks on a connection of their own, in a thread.

        For a command that reads and computes before its first write (``pool``): the
        checks read every page while it loads and ranks, and the first write waits for
        their verdict, the same verdict and message :meth:`ensure_sound` gives. Nothing
        is skipped; the work is only moved earlier. :meth:`close` stops the thread.
        """
        if self.readonly or self._sound or self._behind is not None or held.is_sound(self.path):
            return
        self._behind = SoundnessBehind(self.path, type(self).open_for_checks)

    def soundness_checking(self) -> bool:
        """Whether :meth:`check_soundness_behind`'s checks are still running."""
        return self._behind is not None and self._behind.running

    def _soundness_problem(self, *, pages_first: bool = False) -> str | None:
        """What makes the file unfit to write into, or None: the soundness gate's verdict.

        Three checks, whose first failure in this order is the one told: a row the
        readers would refuse (its message names the row), SQLite's ``quick_check``, a
        row pointing at a row missing. With ``pages_first`` the page checks run first
        (they run in SQLite without Python's lock, so a thread makes progress beside a
        busy main thread), and the verdict is the same.
        """

        def rows() -> str | None:
            try:
                bad = next(self._bad_rows(), None)
            except sqlite3.DatabaseError:
                return None  # unreadable pages: quick_check says so
            return None if bad is None else f"{bad}; nothing was written"

        def pages() -> str | None:
            try:
                found = [str(r[0]) for r in self.conn.execute("PRAGMA quick_check(5)")]
            except sqlite3.DatabaseError as exc:
                found = [str(exc)]
            if found == ["ok"]:
                return None
            return (
                f"{self.path} is damaged (SQLite reports: {found[0]}); nothing was written. "
                f"`goldpan check {self.path}` lists every problem; restore the workspace "
                "from a copy, or recover its rows with `sqlite3 FILE .recover`"
            )

        def links() -> str | None:
            dangling = self.foreign_key_problems(1)
            if not dangling:
                return None
            return (
                f"{self.path}: {dangling[0]} (the workspace is damaged); nothing was written. "
                f"`goldpan check {self.path}` lists every problem"
            )

        if pages_first:
            found_pages, found_links = pages(), links()
            return rows() or found_pages or found_links
        return rows() or pages() or links()

    def _bad_rows(self) -> Iterator[BadRow]:
        """Rows the readers would refuse, found fast.

        SQL picks every suspect row (a superset: JSON validity, shapes, types, lengths,
        depth, UTF-8) and the readers' own decoders judge each suspect, so the gate and
        the readers never disagree.
        """
        self.conn.create_function("goldpan_bad_utf8", 1, _bad_utf8, deterministic=True)
        top = self.doc_numbers.dense_top()  # numbers are checked without reading the ids
        self.conn.create_function("goldpan_bad_numbers", 1, self._bad_numbers(top))
        version = held.data_version(self.conn)
        decoded = self._runs_decoded_at == version
        present = {
            r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        for table, where in _SUSPECTS.items():
            if table not in present:
                continue
            sql, read = self._row_readers()[table]
            if table == "runs" and decoded:  # every ranking's numbers were just decoded
                where = where.replace(_RUN_NUMBERS, "0")
            if self._text_sound(table, where):  # no UTF-8 test can pick a row: left out
                where = _UTF8_TEST.sub("0", where)
            suspects = [r[0] for r in self.conn.execute(f"SELECT rowid FROM {table} WHERE {where}")]
            for rowid in suspects:
                try:
                    row = self.conn.execute(f"{sql} WHERE rowid = ?", (rowid,)).fetchone()
                    read(self.path, row)
                except BadRow as exc:
                    yield exc
                except sqlite3.OperationalError as exc:  # text that is not UTF-8
                    yield BadRow(self.path, table, f"rowid {rowid}", str(exc))

    def _text_sound(self, table: str, where: str) -> bool:
        """Whether every value ``where``'s UTF-8 tests read in ``table`` is valid UTF-8.

        Tested many rows at once: each test's values, joined by newlines, are read as one
        blob and decoded once, a megabyte at a time (an ASCII byte ends any multi-byte
        sequence, so the join is valid exactly when every value is). The per-row test
        calls into Python once per row, and in a thread beside a busy main thread
        (``pool``'s imports and indexing) each call waits for Python's lock: a few calls
        per table instead. A read holds about :data:`_TEXT_BYTES` (fewer rows when they
        are long; a value longer than that alone). False when some value is not valid
        (the per-row test then finds which).
        """
        parts = _UTF8_TEST.findall(where)
        if not parts:
            return True
        joined = ", ".join(
            f"CAST(group_concat(coalesce(CAST({p} AS BLOB), x''), x'0a') AS BLOB)" for p in parts
        )
        sql = (
            f"SELECT max(goldpan_rowid), {joined} FROM (SELECT rowid AS goldpan_rowid, * "
            f"FROM {table} WHERE rowid >= ? ORDER BY rowid LIMIT ?)"
        )
        start, rows = -(1 << 63), _TEXT_ROWS
        while True:
            last, *found = self.conn.execute(sql, (start, rows)).fetchone()
            if last is None:
                return True
            blobs = [blob or b"" for blob in found]
            if not all(_utf8(blob) for blob in blobs):
                return False
            if last == (1 << 63) - 1:
                return True
            start = last + 1
            size = sum(map(len, blobs))
            if size > _TEXT_BYTES and rows > 1:
                rows //= 2
            elif size < _TEXT_BYTES // 4:
                rows = min(rows * 2, _TEXT_ROWS_MAX)

    def _bad_numbers(self, top: int | None) -> Any:
        """SQL's test of a ranking's document numbers (a blob): not whole, or naming none.

        With ``top`` (:meth:`DocNumbers.dense_top`), the numbers 1 to ``top`` all name a
        document and no id is read.
        """

        def bad(blob: bytes) -> bool:
            numbers = decode.numbers_in(blob)
            if numbers is None:
                return True
            if top is not None:
                return bool(numbers) and (min(numbers) < 1 or max(numbers) > top)
            return self.doc_numbers.ids(numbers) is None

        return bad

    def _row_readers(self) -> dict[str, tuple[str, Any]]:
        """Table -> (the query, the decoder) each row is checked with."""
        return {
            **_ROW_READERS,
            "runs": (
                "SELECT retriever, question_id, doc_ids, scores, latency_ms, input_hash, depth, "
                "alone_ms FROM runs",
                lambda path, r: decode.run_row(path, r[0], r[1:], self.doc_numbers),
            ),
        }

    def integrity_problems(self, limit: int = 100) -> list[str]:
        """SQLite's ``PRAGMA integrity_check`` findings (empty when the file is sound)."""
        try:
            found = [str(r[0]) for r in self.conn.execute(f"PRAGMA integrity_check({limit})")]
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        return [] if found == ["ok"] else found

    def foreign_key_problems(self, limit: int = 100) -> list[str]:
        """Rows that point at a row missing from the table they refer to."""
        try:
            found = self.conn.execute("PRAGMA foreign_key_check").fetchmany(limit)
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        problems = [
            f"table {t}, rowid {rowid}: refers to a row {parent} lacks"
            for t, rowid, parent, _ in found
        ]
        try:  # every document has a number (no SQL constraint can say so: see doc_numbers)
            unnumbered = self.conn.execute(
                "SELECT rowid FROM docs WHERE id NOT IN (SELECT id FROM doc_numbers) LIMIT ?",
                (max(0, limit - len(problems)),),
            ).fetchall()
        except sqlite3.OperationalError:  # an older schema, without doc_numbers
            unnumbered = []
        return problems + [
            f"table docs, rowid {rowid}: the document has no number in doc_numbers"
            for (rowid,) in unnumbered
        ]

    def row_problems(self) -> Iterator[str]:
        """Every row goldpan could not read back (checked as the readers decode them)."""
        present = {
            r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        for table, (sql, read) in self._row_readers().items():
            if table not in present:
                continue
            try:
                rows = self.conn.execute(sql).fetchall()
            except sqlite3.OperationalError:  # a value that does not decode: row by row
                rows = None
            except sqlite3.DatabaseError as exc:
                yield f"table {table} cannot be read to the end: {exc}"
                continue
            if rows is None:
                yield from self._row_by_row(table, sql, read)
                continue
            for r in rows:
                try:
                    read(self.path, r)
                except BadRow as exc:
                    yield f"table {exc.table}, row {exc.row}: {exc.why}"

    def _row_by_row(self, table: str, sql: str, read: Any) -> Iterator[str]:
        for (rowid,) in self.conn.execute(f"SELECT rowid FROM {table}").fetchall():
            try:
                read(self.path, self.conn.execute(f"{sql} WHERE rowid = ?", (rowid,)).fetchone())
            except BadRow as exc:
                yield f"table {exc.table}, row {exc.row}: {exc.why}"
            except sqlite3.DatabaseError as exc:
                yield f"table {table}, rowid {rowid}: {exc}"


class SoundnessBehind:
    """The soundness gate's checks on a connection of their own, in a daemon thread.

    The connection is this thread's alone (opened, used and closed in it); the process's
    other connection to the file stays open meanwhile, so closing this one neither
    checkpoints nor drops a lock (:mod:`held`).
    """

    def __init__(self, path: Path, open_file: Callable[[Path], Any]) -> None:
        self.path = path
        self._open = open_file
        self.problem: str | None = None
        self.passed = False
        self._conn: sqlite3.Connection | None = None
        self._stopping = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="goldpan-soundness", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        # Whatever stops the checks here (an interrupt, a failure of their own), the first
        # write runs them itself on its own connection, and reports what it finds there:
        # nothing is printed from this thread.
        try:
            ws = self._open(self.path)
        except Exception:
            return
        try:
            with self._lock:
                if self._stopping:
                    return
                self._conn = ws.conn
            self.problem = ws._soundness_problem(pages_first=True)
            if self.problem is None and not self._stopping:
                self.passed = True
                held.mark_sound(self.path)
        except Exception:
            self.problem = None
        finally:
            with self._lock:
                self._conn = None
            ws.close()

    @property
    def running(self) -> bool:
        """Whether the checks have not ended yet."""
        return self._thread.is_alive()

    def verdict(self) -> str | None:
        """Wait for the checks: the problem they found, or None (see :attr:`passed`)."""
        self._thread.join()
        return self.problem

    def stop(self) -> None:
        """Interrupt the checks (nothing will be written) and wait for the thread."""
        with self._lock:
            self._stopping = True
        while self._thread.is_alive():
            with self._lock:  # an interrupt reaches only a statement already running
                if self._conn is not None:
                    self._conn.interrupt()
            self._thread.join(0.05)


def _bad_utf8(value: bytes | None) -> bool:
    """SQL's per-row test (``goldpan_bad_utf8``): a value that is not valid UTF-8."""
    return value is not None and not _utf8(value)


def _utf8_test(expression: str) -> str:
    """SQL: the bytes of ``expression`` (text, or NULL: sound) are not valid UTF-8."""
    return f"goldpan_bad_utf8(CAST({expression} AS BLOB))"


_UTF8_TEST = re.compile(re.escape("goldpan_bad_utf8(CAST(") + "(.+?)" + re.escape(" AS BLOB))"))
"""A :func:`_utf8_test` in a condition; its group is the expression tested."""

_TEXT_ROWS = 256
"""Rows :meth:`SoundnessChecks._text_sound` reads at once at first (it adapts)."""
_TEXT_ROWS_MAX = 4096
_TEXT_BYTES = 8 << 20
"""About how many bytes of text :meth:`SoundnessChecks._text_sound` reads at once."""


def _utf8(blob: bytes) -> bool:
    """Whether ``blob`` is valid UTF-8, decoded a megabyte at a time (no copy of it whole)."""
    if blob.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(blob)
    try:
        for at in range(0, len(view), 1 << 20):
            decoder.decode(view[at : at + (1 << 20)])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _not_text(*columns: str) -> str:
    """SQL: one of ``columns`` is not valid UTF-8 text.

    The columns' bytes are checked in one call per row, joined by a newline: an ASCII
    byte ends any multi-byte sequence, so a join is valid UTF-8 exactly when every part
    is (a third of the calls into Python on a table of documents). A column that is not
    text makes the row a suspect by its type already (the reader then judges it whole).
    """
    types = " OR ".join(f"typeof({c}) != 'text'" for c in columns)
    joined = " || char(10) || ".join(columns)
    return f"{types} OR {_utf8_test(joined)}"


def _not_null_text(*columns: str) -> str:
    return " OR ".join(
        f"({c} IS NOT NULL AND (typeof({c}) != 'text' OR {_utf8_test(c)}))" for c in columns
    )


def _bad_json(column: str, shape: str, *more: str) -> str:
    """SQL: ``column`` is not JSON of ``shape`` (or nests too deep, or fails ``more``)."""
    openers = f"length({column}) - length(replace(replace({column}, '[', ''), '{{', ''))"
    empty = "{}" if shape == "object" else "[]"
    checks = [
        f"typeof({column}) != 'text'",
        _utf8_test(column),
        f"instr({column}, char(0)) > 0",
        f"NOT json_valid({column})",
        f"json_type({column}) != '{shape}'",
        f"{openers} > {MAX_JSON_DEPTH}",
        *more,
    ]
    # most values are the empty one (a document without fields): sound at a glance
    return (
        f"(CASE WHEN {column} = '{empty}' THEN 0 "
        + " ".join(f"WHEN {c} THEN 1" for c in checks)
        + " ELSE 0 END)"
    )


_RUN_NUMBERS = "goldpan_bad_numbers(doc_ids)"
"""SQL: a ranking's document numbers are not whole or name no document (a call into
Python per ranking: most of the gate's time on a pooled workspace). Left out when this
connection has just decoded every ranking (``_runs_decoded_at``)."""

_MS = repr(decode.MAX_MS)
"""SQL's longest stored time (ms): a time ranked is a number from 0 to it (``duration_ms``)."""

_SUSPECTS: dict[str, str] = {
    "meta": f"{_not_text('key', 'value')} OR key IN ({', '.join(map(repr, JUDGING_KEYS))})",
    "docs": f"{_not_text('id', 'title', 'text')} OR {_bad_json('fields', 'object')}",
    "questions": f"{_not_text('id', 'text', 'author', 'note')} OR "
    "typeof(written_blind) != 'integer' OR "
    + _bad_json(
        "tags", "array", "EXISTS (SELECT 1 FROM json_each(questions.tags) WHERE type != 'text')"
    ),
    "labels": f"{_not_text('question_id', 'doc_id', 'annotator')} OR " + sql_not_a_grade(),
    "verdicts": f"{_not_text('question_id', 'annotator', 'verdict', 'note')} OR verdict NOT IN "
    f"({', '.join(repr(v) for v in VERDICTS)})",
    "adjudications": f"{_not_text('question_id', 'by', 'note')} OR "
    "typeof(no_answer) != 'integer' OR "
    + _bad_json(
        "gold",
        "object",
        "EXISTS (SELECT 1 FROM json_each(adjudications.gold) WHERE type != 'integer' "
        f"OR value NOT BETWEEN {MIN_GRADE} AND {MAX_GRADE})",
    ),
    "retrievers": f"{_not_text('name', 'kind')} OR kind NOT IN "
    f"({', '.join(repr(k) for k in RETRIEVER_KIND_NAMES)}) OR {_bad_json('params', 'object')}",
    "runs": f"{_not_text('retriever', 'question_id', 'input_hash')} OR "
    "typeof(depth) != 'integer' OR typeof(latency_ms) NOT IN ('real', 'integer') OR "
    f"latency_ms NOT BETWEEN 0 AND {_MS} OR (alone_ms IS NOT NULL AND "
    f"(typeof(alone_ms) NOT IN ('real', 'integer') OR alone_ms NOT BETWEEN 0 AND {_MS})) OR "
    "typeof(scores) != 'blob' OR (CASE WHEN typeof(doc_ids) = 'blob' THEN "
    f"length(scores) != 2 * length(doc_ids) OR {_RUN_NUMBERS} ELSE "
    + _bad_json(
        "doc_ids",
        "array",
        "length(scores) != 8 * json_array_length(doc_ids)",
        "EXISTS (SELECT 1 FROM json_each(runs.doc_ids) WHERE type != 'text')",
    )
    + " END)",
    # the NOT IN of foreign_key_problems finds an id that is not its document's exact text
    "doc_numbers": "typeof(id) != 'text'",
    "model_judges": f"{_not_text('annotator', 'kind', 'model')} OR kind NOT IN "
    f"({', '.join(repr(k) for k in MODEL_JUDGE_KINDS)}) OR {_bad_json('params', 'object')}",
    "model_labels": f"{_not_text('question_id', 'doc_id', 'annotator')} OR "
    + sql_not_a_grade()
    + " OR "
    "typeof(score) NOT IN ('real', 'integer', 'null') OR "
    f"score NOT BETWEEN -{decode.MAX_FLOAT!r} AND {decode.MAX_FLOAT!r}",
    "stops": _not_text("question_id", "annotator", "rule"),
    "proposals": _not_text("question_id", "doc_id", "method", "by", "proposed"),
    "embeddings": f"{_not_text('model', 'doc_id', 'doc_hash')} OR typeof(dim) != 'integer' "
    "OR typeof(vector) != 'blob' OR length(vector) != 4 * dim",
    "events": f"{_not_text('at', 'annotator', 'kind')} OR "
    + _not_null_text("question_id", "doc_id", "old", "new"),
    "querylog": f"{_not_text('text', 'norm', 'band', 'status')} OR typeof(id) != 'integer' OR "
    "typeof(count) != 'integer' OR count < 1 OR "
    f"band NOT IN ({', '.join(repr(b) for b in decode.LOG_BANDS)}) OR "
    f"status NOT IN ({', '.join(repr(s) for s in decode.LOG_STATUSES)}) OR "
    + _not_null_text("question_id")
    + " OR "
    + _bad_json(
        "variants",
        "array",
        "EXISTS (SELECT 1 FROM json_each(querylog.variants) WHERE type != 'text')",
    ),
}
"""Table -> SQL condition picking every row its reader might refuse (and a few more)."""


_ROW_READERS: dict[str, tuple[str, Any]] = {
    "meta": ("SELECT key, value FROM meta", decode.meta),
    "docs": ("SELECT id, title, text, fields FROM docs", decode.doc),
    "questions": (f"SELECT {decode.Q_COLUMNS} FROM questions", decode.question),
    "labels": ("SELECT question_id, doc_id, annotator, grade FROM labels", decode.label),
    "verdicts": ("SELECT question_id, annotator, verdict, note FROM verdicts", decode.verdict),
    "adjudications": (
        "SELECT question_id, no_answer, gold, by, note FROM adjudications",
        decode.adjudication,
    ),
    "retrievers": ("SELECT name, kind, params FROM retrievers", decode.retriever),
    "doc_numbers": ("SELECT n, id FROM doc_numbers", decode.doc_number),
    "model_judges": (
        "SELECT annotator, kind, model, params FROM model_judges",
        decode.model_judge,
    ),
    "model_labels": (
        "SELECT question_id, doc_id, annotator, grade, score FROM model_labels",
        decode.model_label,
    ),
    "stops": ("SELECT question_id, annotator, rule FROM stops", decode.stop),
    "proposals": (
        "SELECT question_id, doc_id, method, by, proposed FROM proposals",
        decode.proposal,
    ),
    "embeddings": ("SELECT model, doc_id, doc_hash, dim, vector FROM embeddings", decode.embedding),
    "events": (f"SELECT {', '.join(decode.EVENT_COLUMNS)} FROM events", decode.event),
    "querylog": (f"SELECT {', '.join(decode.LOG_COLUMNS)} FROM querylog", decode.querylog),
}
"""Table -> (the query, the decoder) ``row_problems`` reads each row with (``runs``, whose
decoder needs the workspace's document numbers: :meth:`WorkspaceFile._row_readers`)."""
