"""The workspace: one SQLite file (WAL mode). The only module of goldpan that runs SQL.

A workspace holds the corpus, the questions, every annotator's labels and verdicts,
adjudications, the configured retrievers and their cached rankings, and an append-only
event log. The schema version is ``PRAGMA user_version``; older workspaces are migrated
on open, after a copy of the old version is written next to them (SQLite's online backup,
so pages still in the ``-wal`` file are included); newer ones are refused. A workspace
that cannot be written (the file, its folder or its ``-wal``/``-shm`` files) opens
read-only, for review, with :attr:`Workspace.readonly_reason` saying why.

Writes go through :meth:`Workspace.transaction`, which takes SQLite's write lock up front
(``BEGIN IMMEDIATE``) so that two processes labeling the same file wait for each other
instead of failing half-way; an import is one such transaction, so it lands whole or not
at all.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sqlite3
import struct
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import sqlite_utils

from engine import __version__
from engine.migrations import MIGRATIONS, SCHEMA_VERSION
from engine.types import (
    Adjudication,
    CachedRun,
    Doc,
    Label,
    Question,
    RetrieverSpec,
    Verdict,
    canonical_json,
    sha256_text,
)

BUSY_TIMEOUT_S = 30.0

READ_ONLY_ASKED = "opened read-only on request"
"""The :attr:`Workspace.readonly_reason` of a workspace opened with ``readonly=True``."""


class WorkspaceError(Exception):
    """A workspace cannot be opened or changed as asked; the message says why."""


def writable_problem(path: Path) -> str | None:
    """Why goldpan cannot write the workspace file at ``path``; None when it can.

    In WAL mode SQLite writes the file, and the ``-wal`` and ``-shm`` files beside it,
    which it creates and removes: the folder must be writable too.
    """
    if not os.access(path, os.W_OK):
        return "the file is not writable"
    folder = path.absolute().parent
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} is not writable"
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists() and not os.access(side, os.W_OK):
            return f"{side.name} is not writable"
    return None


def backup_path(path: Path, version: int) -> Path:
    """A free name for the copy of a version-``version`` workspace, next to it.

    ``demo.db`` becomes ``demo.v1-backup-20250101T120000Z.db`` (UTC).
    """
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    base = f"{path.stem}.v{version}-backup-{stamp}"
    target = path.with_name(base + path.suffix)
    n = 2
    while target.exists():
        target = path.with_name(f"{base}-{n}{path.suffix}")
        n += 1
    return target


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection that also sees what is committed in the ``-wal`` file.

    ``mode=ro`` reads the WAL through its ``-shm`` index, creating them when it can. When
    neither exists and the folder cannot be written, ``mode=ro`` fails; then the file holds
    every committed page (the last writer checkpointed it and removed the WAL), and
    ``immutable=1`` reads it without any lock or side file. ``immutable`` is never used
    while a WAL with frames exists: it would ignore them.
    """
    uri = path.absolute().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
    try:
        conn.execute("PRAGMA user_version").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, timeout=BUSY_TIMEOUT_S)


def _newer(path: Path, version: int) -> WorkspaceError:
    return WorkspaceError(
        f"{path} has workspace schema version {version}, written by a newer "
        f"goldpan; this goldpan ({__version__}) reads schema versions up to "
        f"{SCHEMA_VERSION}. Upgrade goldpan to open it."
    )


def now() -> str:
    """The current UTC time, ISO 8601 to the millisecond."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


_JSON = json.JSONEncoder(ensure_ascii=False)
"""One encoder for every cached ranking's doc ids (``json.dumps`` with options builds one
per call)."""


def _pack_scores(scores: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(scores)}d", *scores)


def _unpack_scores(blob: bytes) -> tuple[float, ...]:
    return struct.unpack(f"<{len(blob) // 8}d", blob)


class Workspace:
    """An open workspace file."""

    def __init__(self, path: Path, conn: sqlite3.Connection, *, readonly: bool) -> None:
        """Wrap an open connection; use :meth:`open` or :meth:`create` instead."""
        self.path = path
        self.readonly = readonly
        self.readonly_reason: str | None = READ_ONLY_ASKED if readonly else None
        """Why the workspace is read-only (None when it can be changed)."""
        self.upgraded_from: int | None = None
        """The schema version this open migrated the workspace from (None: no migration)."""
        self.backup_path: Path | None = None
        """The copy of the old version written before that migration."""
        self.db = sqlite_utils.Database(conn)
        self.conn = conn

    # -- opening -------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path) -> Workspace:
        """Create a new, empty workspace at ``path`` (which must not exist)."""
        path = Path(path)
        if path.exists():
            raise WorkspaceError(f"{path} already exists")
        if not path.parent.exists():
            raise WorkspaceError(f"folder {path.parent} does not exist")
        return cls.open(path, create=True)

    @classmethod
    def open(cls, path: str | Path, *, create: bool = False, readonly: bool = False) -> Workspace:
        """Open a workspace, applying pending migrations (after writing a backup copy).

        A workspace that cannot be written opens read-only (see :func:`writable_problem`);
        :attr:`readonly_reason` says why. After a migration, :attr:`upgraded_from` and
        :attr:`backup_path` say from which version and where the copy of it is.

        Args:
            path: the workspace file.
            create: create the file when it does not exist.
            readonly: open without write access (no migration is applied).

        Raises:
            WorkspaceError: the file is missing, not a goldpan workspace, was written by a
                newer goldpan, needs a migration but cannot be written, or its migration
                (or the backup before it) failed; the file is then unchanged.
        """
        path = Path(path)
        if not path.exists() and not create:
            raise WorkspaceError(f"{path}: no such workspace (create one with `goldpan new`)")
        if path.is_dir():
            raise WorkspaceError(f"{path} is a folder, not a workspace file")
        reason = READ_ONLY_ASKED if readonly else None
        if reason is None and path.exists():
            reason = writable_problem(path)
        try:
            if reason is None:
                conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S)
            else:
                conn = _connect_readonly(path)
        except sqlite3.OperationalError as exc:
            raise WorkspaceError(f"{path} cannot be opened ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise WorkspaceError(f"{path} is not a goldpan workspace ({exc})") from None
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            has_tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise WorkspaceError(f"{path} is not a goldpan workspace ({exc})") from None
        if version > SCHEMA_VERSION:
            conn.close()
            raise _newer(path, version)
        if version == 0 and has_tables:
            conn.close()
            raise WorkspaceError(f"{path} is an SQLite file but not a goldpan workspace")
        if reason is not None and version < SCHEMA_VERSION:
            conn.close()
            raise WorkspaceError(
                f"{path} has schema version {version} and must be upgraded to "
                f"{SCHEMA_VERSION} before this goldpan ({__version__}) can read it, but it is "
                f"read-only ({reason}). Open it once with write access (a backup copy of "
                "the old version is written first), or open a writable copy of it."
            )
        ws = cls(path, conn, readonly=reason is not None)
        ws.readonly_reason = reason
        conn.execute("PRAGMA foreign_keys = ON")
        if reason is None:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                # FULL: a commit is on disk before it returns, so a label survives a power
                # cut too. Labels are human-paced and imports one transaction: one fsync
                # each costs nothing anyone notices.
                conn.execute("PRAGMA synchronous = FULL")
                ws._migrate(version)
            except BaseException:
                conn.close()
                raise
        return ws

    def _migrate(self, version: int) -> None:
        """Bring the schema up to date: one transaction, after a backup copy (version > 0).

        The write lock is taken first, so of several processes opening an old workspace
        one migrates and the others find it done. A failed backup or migration leaves the
        file as it was.
        """
        if version == SCHEMA_VERSION:
            return
        backup: Path | None = None
        try:
            with self.transaction():
                version = self.schema_version  # as of now, under the write lock
                if version > SCHEMA_VERSION:
                    raise _newer(self.path, version)
                if version == SCHEMA_VERSION:
                    return
                if version > 0:
                    backup = self._write_backup(version)
                for script in MIGRATIONS[version:]:
                    for statement in _split_sql(script):
                        self.conn.execute(statement)
                if version == 0:
                    stamp = now()
                    self.conn.executemany(
                        "INSERT INTO meta(key, value) VALUES (?, ?)",
                        [("created", stamp), ("goldpan_version", __version__)],
                    )
                self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException as exc:
            if backup is not None:  # the workspace is unchanged: the copy is not needed
                backup.unlink(missing_ok=True)
            if isinstance(exc, sqlite3.Error):
                raise WorkspaceError(
                    f"{self.path}: upgrading schema version {version} to {SCHEMA_VERSION} "
                    f"failed ({exc}); the workspace is unchanged (still version {version})"
                ) from exc
            raise
        if version > 0:
            self.upgraded_from = version
            self.backup_path = backup

    def _write_backup(self, version: int) -> Path:
        """Copy the workspace, as committed now, next to it; returns the copy's path.

        Called with the write lock held; a second connection reads (WAL readers do not wait
        for the writer), so the copy is exactly what the migration starts from.
        """
        target = backup_path(self.path, version)
        try:
            source = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_S)
            try:
                copy = sqlite3.connect(str(target))
                try:
                    source.backup(copy)
                    copied = copy.execute("PRAGMA user_version").fetchone()[0]
                finally:
                    copy.close()
            finally:
                source.close()
            if copied != version:
                raise sqlite3.DatabaseError(f"the copy reads as schema version {copied}")
        except (OSError, sqlite3.Error) as exc:
            with contextlib.suppress(OSError):
                target.unlink(missing_ok=True)
            raise WorkspaceError(
                f"{self.path} has schema version {version} and this goldpan ({__version__}) "
                f"needs {SCHEMA_VERSION}; it was not upgraded, because a backup copy could "
                f"not be written first to {target} ({exc}). The workspace is unchanged; make "
                "its folder writable (or free some disk space) and open it again."
            ) from None
        return target

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """The schema version stored in the file."""
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction: everything inside lands together, or nothing does."""
        if self.readonly:
            raise WorkspaceError(
                f"{self.path} is open read-only ({self.readonly_reason}); changes are not allowed"
            )
        if self.conn.in_transaction:  # nested: part of the outer transaction
            yield
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.rollback()
            raise
        else:
            self.conn.commit()

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` answer (``ok`` when sound)."""
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])

    # -- meta ------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        """Every meta key and value."""
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # -- docs ------------------------------------------------------------------------

    def doc_count(self) -> int:
        """Number of documents."""
        return int(self.conn.execute("SELECT count(*) FROM docs").fetchone()[0])

    def doc_ids(self) -> list[str]:
        """Every document id, in code-point order."""
        return [r[0] for r in self.conn.execute("SELECT id FROM docs ORDER BY id")]

    def docs(self) -> list[Doc]:
        """Every document, in code-point order of id."""
        rows = self.conn.execute("SELECT id, title, text, fields FROM docs ORDER BY id")
        return [Doc(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def titles(self) -> list[str]:
        """Every document title (for the title-overlap meter; no text is read)."""
        return [r[0] for r in self.conn.execute("SELECT title FROM docs ORDER BY id")]

    def doc(self, doc_id: str) -> Doc | None:
        """One document, or None."""
        r = self.conn.execute(
            "SELECT id, title, text, fields FROM docs WHERE id = ?", (doc_id,)
        ).fetchone()
        return Doc(r[0], r[1], r[2], json.loads(r[3])) if r else None

    def write_docs(self, docs: Iterable[Doc]) -> tuple[int, int, int]:
        """Insert or replace documents; returns (added, updated, unchanged).

        Call inside :meth:`transaction` to make it part of a larger import.
        """
        with self.transaction():
            known = dict(self.conn.execute("SELECT id, hash FROM docs").fetchall())
            added = updated = unchanged = 0
            rows = []
            for d in docs:
                h = d.hash
                old = known.get(d.id)
                if old == h:
                    unchanged += 1
                    continue
                if old is None:
                    added += 1
                else:
                    updated += 1
                rows.append((d.id, d.title, d.text, canonical_json(dict(d.fields)), h))
            self.conn.executemany(
                "INSERT INTO docs(id, title, text, fields, hash) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET title = excluded.title, "
                "text = excluded.text, fields = excluded.fields, hash = excluded.hash",
                rows,
            )
            if rows:
                self._set_meta("corpus_hash", self._compute_corpus_hash())
        return added, updated, unchanged

    def _compute_corpus_hash(self) -> str:
        hashes = self.conn.execute("SELECT hash FROM docs ORDER BY id").fetchall()
        return sha256_text(*(h[0] for h in hashes))

    def corpus_hash(self) -> str:
        """A hash of every document's content; cached runs depend on it."""
        return self.meta().get("corpus_hash", sha256_text())

    # -- questions -----------------------------------------------------------------

    @staticmethod
    def _question(r: Sequence[Any]) -> Question:
        return Question(r[0], r[1], tuple(json.loads(r[2])), r[3], bool(r[4]), r[5])

    _Q_COLUMNS = "id, text, tags, author, written_blind, note"

    def questions(self) -> list[Question]:
        """Every question, in code-point order of id."""
        rows = self.conn.execute(f"SELECT {self._Q_COLUMNS} FROM questions ORDER BY id")
        return [self._question(r) for r in rows]

    def question(self, question_id: str) -> Question | None:
        """One question, or None."""
        r = self.conn.execute(
            f"SELECT {self._Q_COLUMNS} FROM questions WHERE id = ?", (question_id,)
        ).fetchone()
        return self._question(r) if r else None

    def question_ids(self) -> list[str]:
        """Every question id, in code-point order."""
        return [r[0] for r in self.conn.execute("SELECT id FROM questions ORDER BY id")]

    def write_questions(self, questions: Iterable[Question]) -> tuple[int, int, int]:
        """Insert or update questions; returns (added, updated, unchanged)."""
        with self.transaction():
            known = {
                r[0]: (r[1], r[2])
                for r in self.conn.execute("SELECT id, text, tags FROM questions")
            }
            added = updated = unchanged = 0
            stamp = now()
            for q in questions:
                tags = canonical_json(list(q.tags))
                old = known.get(q.id)
                if old == (q.text, tags):
                    unchanged += 1
                    continue
                if old is None:
                    added += 1
                else:
                    updated += 1
                self.conn.execute(
                    "INSERT INTO questions(id, text, tags, author, created, written_blind, note)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                    "text = excluded.text, tags = excluded.tags",
                    (q.id, q.text, tags, q.author, stamp, int(q.written_blind), q.note),
                )
        return added, updated, unchanged

    def add_question(
        self, text: str, tags: Sequence[str], author: str, *, written_blind: bool = True
    ) -> Question:
        """Add a question written in goldpan; its id is the next free ``w0001``-style id."""
        text = text.strip()
        if not text:
            raise WorkspaceError("a question needs some text")
        with self.transaction():
            taken = {r[0] for r in self.conn.execute("SELECT id FROM questions WHERE id LIKE 'w%'")}
            n = len(taken) + 1
            while f"w{n:04d}" in taken:
                n += 1
            q = Question(f"w{n:04d}", text, tuple(tags), author, written_blind)
            stamp = now()
            self.conn.execute(
                "INSERT INTO questions(id, text, tags, author, created, written_blind, note) "
                "VALUES (?, ?, ?, ?, ?, ?, '')",
                (q.id, q.text, canonical_json(list(q.tags)), author, stamp, int(written_blind)),
            )
            self._event("question", author, q.id, None, None, q.text, stamp)
        return q

    def edit_question(
        self, question_id: str, text: str, tags: Sequence[str] | None, by: str
    ) -> Question:
        """Change a question's text (and tags); the old text stays in the event log."""
        text = text.strip()
        if not text:
            raise WorkspaceError("a question needs some text")
        with self.transaction():
            old = self.question(question_id)
            if old is None:
                raise WorkspaceError(f"no question {question_id!r}")
            new_tags = tuple(tags) if tags is not None else old.tags
            self.conn.execute(
                "UPDATE questions SET text = ?, tags = ? WHERE id = ?",
                (text, canonical_json(list(new_tags)), question_id),
            )
            if text != old.text:
                self._event("question", by, question_id, None, old.text, text, now())
        return Question(question_id, text, new_tags, old.author, old.written_blind, old.note)

    def question_history(self, question_id: str) -> list[tuple[str, str, str]]:
        """(when, who, text) of every earlier text of a question, oldest first."""
        rows = self.conn.execute(
            "SELECT at, annotator, old FROM events WHERE kind = 'question' AND "
            "question_id = ? AND old IS NOT NULL ORDER BY id",
            (question_id,),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    # -- labels, verdicts, adjudications ----------------------------------------------

    def labels(self) -> list[Label]:
        """Every label of every annotator."""
        rows = self.conn.execute(
            "SELECT question_id, doc_id, annotator, grade FROM labels "
            "ORDER BY question_id, doc_id, annotator"
        )
        return [Label(*r) for r in rows]

    def write_labels(self, labels: Iterable[Label], *, event: str = "label") -> int:
        """Set labels (replacing the same annotator's earlier grade); logs each change."""
        stamp = now()
        n = 0
        with self.transaction():
            for lab in labels:
                old = self.conn.execute(
                    "SELECT grade FROM labels WHERE question_id = ? AND doc_id = ? "
                    "AND annotator = ?",
                    (lab.question_id, lab.doc_id, lab.annotator),
                ).fetchone()
                self.conn.execute(
                    "INSERT INTO labels(question_id, doc_id, annotator, grade, updated) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(question_id, doc_id, annotator) "
                    "DO UPDATE SET grade = excluded.grade, updated = excluded.updated",
                    (lab.question_id, lab.doc_id, lab.annotator, lab.grade, stamp),
                )
                self._event(
                    event,
                    lab.annotator,
                    lab.question_id,
                    lab.doc_id,
                    None if old is None else str(old[0]),
                    str(lab.grade),
                    stamp,
                )
                n += 1
        return n

    def labels_for(self, question_id: str) -> list[Label]:
        """Every annotator's labels of one question."""
        rows = self.conn.execute(
            "SELECT question_id, doc_id, annotator, grade FROM labels WHERE question_id = ? "
            "ORDER BY doc_id, annotator",
            (question_id,),
        )
        return [Label(*r) for r in rows]

    def delete_label(self, question_id: str, doc_id: str, annotator: str) -> None:
        """Remove one annotator's label (undo of a first judgment); logged."""
        with self.transaction():
            old = self.conn.execute(
                "DELETE FROM labels WHERE question_id = ? AND doc_id = ? AND annotator = ? "
                "RETURNING grade",
                (question_id, doc_id, annotator),
            ).fetchone()
            if old is not None:
                self._event("label", annotator, question_id, doc_id, str(old[0]), None, now())

    def verdicts_for(self, question_id: str) -> list[Verdict]:
        """Every annotator's verdict on one question."""
        rows = self.conn.execute(
            "SELECT question_id, annotator, verdict, note FROM verdicts WHERE question_id = ? "
            "ORDER BY annotator",
            (question_id,),
        )
        return [Verdict(*r) for r in rows]

    def delete_verdict(self, question_id: str, annotator: str) -> None:
        """Remove one annotator's verdict; logged."""
        with self.transaction():
            old = self.conn.execute(
                "DELETE FROM verdicts WHERE question_id = ? AND annotator = ? RETURNING verdict",
                (question_id, annotator),
            ).fetchone()
            if old is not None:
                self._event("verdict", annotator, question_id, None, old[0], None, now())

    def adjudication(self, question_id: str) -> Adjudication | None:
        """The adjudication of one question, or None."""
        r = self.conn.execute(
            "SELECT question_id, no_answer, gold, by, note FROM adjudications "
            "WHERE question_id = ?",
            (question_id,),
        ).fetchone()
        return Adjudication(r[0], bool(r[1]), json.loads(r[2]), r[3], r[4]) if r else None

    def verdicts(self) -> list[Verdict]:
        """Every verdict of every annotator."""
        rows = self.conn.execute(
            "SELECT question_id, annotator, verdict, note FROM verdicts "
            "ORDER BY question_id, annotator"
        )
        return [Verdict(*r) for r in rows]

    def write_verdicts(self, verdicts: Iterable[Verdict], *, event: str = "verdict") -> int:
        """Set verdicts (one per question and annotator); logs each change."""
        stamp = now()
        n = 0
        with self.transaction():
            for v in verdicts:
                old = self.conn.execute(
                    "SELECT verdict FROM verdicts WHERE question_id = ? AND annotator = ?",
                    (v.question_id, v.annotator),
                ).fetchone()
                self.conn.execute(
                    "INSERT INTO verdicts(question_id, annotator, verdict, note, updated) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(question_id, annotator) DO UPDATE "
                    "SET verdict = excluded.verdict, note = excluded.note, "
                    "updated = excluded.updated",
                    (v.question_id, v.annotator, v.verdict, v.note, stamp),
                )
                self._event(
                    event,
                    v.annotator,
                    v.question_id,
                    None,
                    None if old is None else old[0],
                    v.verdict,
                    stamp,
                )
                n += 1
        return n

    def adjudications(self) -> list[Adjudication]:
        """Every adjudication."""
        rows = self.conn.execute(
            "SELECT question_id, no_answer, gold, by, note FROM adjudications ORDER BY question_id"
        )
        return [Adjudication(r[0], bool(r[1]), json.loads(r[2]), r[3], r[4]) for r in rows]

    def write_adjudication(self, adj: Adjudication) -> None:
        """Record (or replace) the final word on a question."""
        stamp = now()
        with self.transaction():
            self.conn.execute(
                "INSERT INTO adjudications(question_id, no_answer, gold, by, at, note) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(question_id) DO UPDATE SET "
                "no_answer = excluded.no_answer, gold = excluded.gold, by = excluded.by, "
                "at = excluded.at, note = excluded.note",
                (
                    adj.question_id,
                    int(adj.no_answer),
                    canonical_json(dict(adj.gold)),
                    adj.by,
                    stamp,
                    adj.note,
                ),
            )
            new = "no_answer" if adj.no_answer else canonical_json(dict(adj.gold))
            self._event("adjudication", adj.by, adj.question_id, None, None, new, stamp)

    def _event(
        self,
        kind: str,
        annotator: str,
        question_id: str | None,
        doc_id: str | None,
        old: str | None,
        new: str | None,
        at: str,
    ) -> None:
        self.conn.execute(
            "INSERT INTO events(at, annotator, kind, question_id, doc_id, old, new) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (at, annotator, kind, question_id, doc_id, old, new),
        )

    def log_event(self, kind: str, annotator: str, new: str) -> None:
        """Append a workspace-level event (an import, say) to the log."""
        with self.transaction():
            self._event(kind, annotator, None, None, None, new, now())

    def events(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The event log, newest first."""
        sql = "SELECT id, at, annotator, kind, question_id, doc_id, old, new FROM events "
        sql += "ORDER BY id DESC" + (f" LIMIT {int(limit)}" if limit else "")
        cols = ("id", "at", "annotator", "kind", "question_id", "doc_id", "old", "new")
        return [dict(zip(cols, r, strict=True)) for r in self.conn.execute(sql)]

    # -- retrievers ------------------------------------------------------------------

    def retrievers(self) -> list[RetrieverSpec]:
        """Every configured retriever, in the order they were added."""
        rows = self.conn.execute("SELECT name, kind, params FROM retrievers ORDER BY rowid")
        return [RetrieverSpec(r[0], r[1], json.loads(r[2])) for r in rows]

    def retriever(self, name: str) -> RetrieverSpec | None:
        """One retriever, or None."""
        r = self.conn.execute(
            "SELECT name, kind, params FROM retrievers WHERE name = ?", (name,)
        ).fetchone()
        return RetrieverSpec(r[0], r[1], json.loads(r[2])) if r else None

    def add_retriever(self, spec: RetrieverSpec) -> None:
        """Add a retriever; its name must be new."""
        with self.transaction():
            if self.retriever(spec.name) is not None:
                raise WorkspaceError(f"a retriever named {spec.name!r} already exists")
            self.conn.execute(
                "INSERT INTO retrievers(name, kind, params, hash, created) VALUES (?, ?, ?, ?, ?)",
                (spec.name, spec.kind, canonical_json(dict(spec.params)), spec.hash, now()),
            )

    def remove_retriever(self, name: str) -> None:
        """Remove a retriever and its cached runs."""
        with self.transaction():
            cur = self.conn.execute("DELETE FROM retrievers WHERE name = ?", (name,))
            if cur.rowcount == 0:
                raise WorkspaceError(f"no retriever named {name!r}")

    # -- cached runs -----------------------------------------------------------------

    def run_hashes(self, retriever: str) -> dict[str, tuple[str, int]]:
        """Question id -> (input hash, depth) of every cached ranking of a retriever."""
        rows = self.conn.execute(
            "SELECT question_id, input_hash, depth FROM runs WHERE retriever = ?",
            (retriever,),
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    def write_runs(self, runs: Iterable[CachedRun]) -> int:
        """Store (or replace) cached rankings."""
        rows = [
            (
                r.retriever,
                r.question_id,
                r.depth,
                _JSON.encode(list(r.doc_ids)),
                _pack_scores(r.scores),
                r.latency_ms,
                r.input_hash,
            )
            for r in runs
        ]
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO runs(retriever, question_id, depth, doc_ids, scores, latency_ms,"
                " input_hash) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(retriever, question_id) DO UPDATE SET depth = excluded.depth, "
                "doc_ids = excluded.doc_ids, scores = excluded.scores, "
                "latency_ms = excluded.latency_ms, input_hash = excluded.input_hash",
                rows,
            )
        return len(rows)

    def runs(
        self, retriever: str, question_ids: Sequence[str] | None = None
    ) -> dict[str, CachedRun]:
        """Question id -> cached ranking, for one retriever (only ``question_ids``' if given)."""
        sql = (
            "SELECT question_id, doc_ids, scores, latency_ms, input_hash, depth FROM runs "
            "WHERE retriever = ?"
        )
        params: tuple[str, ...] = (retriever,)
        if question_ids is not None:
            sql += " AND question_id IN (SELECT value FROM json_each(?))"
            params += (json.dumps(list(question_ids)),)
        rows = self.conn.execute(sql, params)
        return {
            r[0]: CachedRun(
                retriever,
                r[0],
                tuple(json.loads(r[1])),
                _unpack_scores(r[2]),
                r[3],
                r[4],
                r[5],
            )
            for r in rows
        }

    def latencies(self) -> dict[str, list[float]]:
        """Per-query latencies (ms) of every retriever's cached rankings."""
        out: dict[str, list[float]] = {}
        for r in self.conn.execute("SELECT retriever, latency_ms FROM runs"):
            out.setdefault(r[0], []).append(float(r[1]))
        return out

    def all_runs(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """Cached rankings (doc ids only) by retriever, then question id."""
        out: dict[str, dict[str, tuple[str, ...]]] = {s.name: {} for s in self.retrievers()}
        for r in self.conn.execute("SELECT retriever, question_id, doc_ids FROM runs"):
            out.setdefault(r[0], {})[r[1]] = tuple(json.loads(r[2]))
        return out

    def replace_retriever_runs(self, spec: RetrieverSpec, runs: Iterable[CachedRun]) -> int:
        """Add or update a retriever and replace every cached ranking of it, in one step.

        For rankings that come from outside (an imported run file): a known retriever
        keeps its place in the list and loses all its earlier rankings, so a question the
        new rankings lack has none. Returns the number of rankings written.
        """
        rows = list(runs)
        strangers = sorted({r.retriever for r in rows} - {spec.name})
        if strangers:
            raise WorkspaceError(f"rankings of {strangers[0]!r} given for {spec.name!r}")
        with self.transaction():
            cur = self.conn.execute(
                "UPDATE retrievers SET kind = ?, params = ?, hash = ? WHERE name = ?",
                (spec.kind, canonical_json(dict(spec.params)), spec.hash, spec.name),
            )
            if cur.rowcount == 0:
                self.add_retriever(spec)
            self.conn.execute("DELETE FROM runs WHERE retriever = ?", (spec.name,))
            return self.write_runs(rows)

    # -- embeddings ------------------------------------------------------------------

    def write_embeddings(self, model: str, rows: Iterable[tuple[str, str, Sequence[float]]]) -> int:
        """Store (or replace) document vectors: ``(doc id, doc hash, vector)`` rows."""
        packed = []
        for doc_id, doc_hash, vector in rows:
            vec = struct.pack(f"<{len(vector)}f", *vector)
            packed.append((model, doc_id, doc_hash, len(vector), vec))
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO embeddings(model, doc_id, doc_hash, dim, vector) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(model, doc_id) DO UPDATE SET "
                "doc_hash = excluded.doc_hash, dim = excluded.dim, vector = excluded.vector",
                packed,
            )
        return len(packed)

    def embeddings(self, model: str) -> dict[str, tuple[str, bytes]]:
        """Doc id -> (doc hash, float32 little-endian vector bytes), for a model."""
        rows = self.conn.execute(
            "SELECT doc_id, doc_hash, vector FROM embeddings WHERE model = ?", (model,)
        )
        return {r[0]: (r[1], bytes(r[2])) for r in rows}

    # -- BM25 term counts ------------------------------------------------------------

    COUNT_PARTS = ("indptr", "indices", "tf", "doc_len")
    """The packed arrays of a stored term-count record (see :meth:`term_counts`)."""

    def term_counts(self, key: str, corpus_hash: str) -> dict[str, Any] | None:
        """The BM25 term counts stored under ``key`` for the corpus ``corpus_hash``, or None.

        A record: ``n_docs``, ``n_terms``, ``doc_ids`` and ``terms`` (lists of text), and
        the packed arrays of :attr:`COUNT_PARTS` (bytes). Nothing here checks that they
        fit together: the reader must (a workspace is untrusted input). A record that is
        not valid JSON reads as None.
        """
        row = self.conn.execute(
            "SELECT n_docs, n_terms, doc_ids, terms, indptr, indices, tf, doc_len "
            "FROM bm25_counts WHERE key = ? AND corpus_hash = ?",
            (key, corpus_hash),
        ).fetchone()
        if row is None:
            return None
        try:
            doc_ids, terms = json.loads(row[2]), json.loads(row[3])
        except (TypeError, ValueError):
            return None
        record: dict[str, Any] = {
            "n_docs": row[0],
            "n_terms": row[1],
            "doc_ids": doc_ids,
            "terms": terms,
        }
        record.update(zip(self.COUNT_PARTS, row[4:], strict=True))
        return record

    def write_term_counts(self, key: str, corpus_hash: str, record: dict[str, Any]) -> None:
        """Store (or replace) the term counts under ``key``, as :meth:`term_counts` reads them."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO bm25_counts(key, corpus_hash, n_docs, n_terms, doc_ids, terms, "
                "indptr, indices, tf, doc_len) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET corpus_hash = excluded.corpus_hash, "
                "n_docs = excluded.n_docs, n_terms = excluded.n_terms, "
                "doc_ids = excluded.doc_ids, terms = excluded.terms, "
                "indptr = excluded.indptr, indices = excluded.indices, tf = excluded.tf, "
                "doc_len = excluded.doc_len",
                (
                    key,
                    corpus_hash,
                    int(record["n_docs"]),
                    int(record["n_terms"]),
                    json.dumps(list(record["doc_ids"]), ensure_ascii=False),
                    json.dumps(list(record["terms"]), ensure_ascii=False),
                    *(bytes(record[p]) for p in self.COUNT_PARTS),
                ),
            )

    # -- summary ---------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Row counts of the main tables."""
        tables = (
            "docs",
            "questions",
            "labels",
            "verdicts",
            "adjudications",
            "retrievers",
            "runs",
            "events",
        )
        return {
            t: int(self.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in tables
        }

    def annotators(self) -> list[str]:
        """Everyone who labeled or gave a verdict, sorted."""
        rows = self.conn.execute(
            "SELECT annotator FROM labels UNION SELECT annotator FROM verdicts ORDER BY 1"
        )
        return [r[0] for r in rows]


def _split_sql(script: str) -> list[str]:
    """Split a migration script into statements (no statement contains ';' in a literal)."""
    statements = []
    for chunk in script.split(";"):
        lines = [ln for ln in chunk.splitlines() if ln.strip()]
        if lines:
            statements.append("\n".join(lines))
    return statements
