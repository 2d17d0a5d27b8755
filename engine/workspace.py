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
import functools
import json
import os
import sqlite3
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import __version__
from engine import rows as decode
from engine.migrations import GOLDPAN_APPLICATION_ID, M007_IDENTITY, MIGRATIONS, SCHEMA_VERSION
from engine.rows import BadRow as BadRow
from engine.rows import WorkspaceError as WorkspaceError
from engine.types import (
    MAX_JSON_DEPTH,
    RETRIEVER_KIND_NAMES,
    VERDICTS,
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


@dataclass(frozen=True)
class LeaseState:
    """What a lease is chosen from, read under the write lock (see :meth:`Workspace.take_lease`)."""

    held: dict[str, str]
    """Question id -> the annotator of another session that holds it now."""
    judges: dict[str, set[str]]
    """Question id -> everyone with a label or a verdict on it."""
    adjudicated: set[str]
    """Questions with the final word already given."""


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


SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

IDENTITY_VERSION = MIGRATIONS.index(M007_IDENTITY) + 1
"""From this schema version on, a goldpan workspace carries goldpan's application id."""


@functools.lru_cache(maxsize=8)
def _expected_tables(scripts: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Table -> column names of a workspace built by ``scripts`` (built in memory)."""
    conn = sqlite3.connect(":memory:")
    try:
        for script in scripts:
            for statement in _split_sql(script):
                conn.execute(statement)
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            n: tuple(c[1] for c in conn.execute(f"PRAGMA table_info({_quote(n)})"))
            for n in names
            if not n.startswith("sqlite_")
        }
    finally:
        conn.close()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def expected_tables(version: int) -> dict[str, tuple[str, ...]]:
    """Table -> column names of a goldpan workspace of schema ``version``."""
    return _expected_tables(tuple(MIGRATIONS[:version]))


def _not_goldpan(path: Path, why: str) -> WorkspaceError:
    return WorkspaceError(
        f"{path} is not a goldpan workspace: {why}. goldpan leaves it as it is (nothing "
        "was written); give the path of a workspace, or create one with `goldpan new`"
    )


def identify(path: Path) -> int:
    """The goldpan schema version of the file at ``path``, read without writing anything.

    A file is goldpan's when it is an SQLite file whose ``application_id`` is goldpan's
    (:data:`~engine.migrations.GOLDPAN_APPLICATION_ID`) or, for workspaces written before
    goldpan set one (schema versions below :data:`IDENTITY_VERSION`), 0; whose
    ``user_version`` is a goldpan schema version; and which holds every table of that
    schema with exactly its columns and no trigger (goldpan creates none). The header is
    read first, so that a file that is not SQLite at all is never handed to SQLite.

    Raises:
        WorkspaceError: the file is empty, not SQLite, another program's SQLite file, a
            workspace of a newer goldpan, or a goldpan workspace whose schema is damaged.
    """
    try:
        with path.open("rb") as f:
            head = f.read(100)
    except OSError as exc:
        raise WorkspaceError(f"{path} cannot be read ({exc.strerror or exc})") from None
    if not head:
        raise _not_goldpan(path, "the file is empty")
    if not head.startswith(SQLITE_MAGIC):
        raise _not_goldpan(path, "it is not an SQLite file")
    wal = path.with_name(path.name + "-wal")
    settled = not (wal.exists() and wal.stat().st_size > 0)
    if settled and len(head) == 100:
        # Everything committed is in the file: its header alone can refuse another
        # program's file without opening it (a connection to a WAL file leaves -shm/-wal).
        _judge_ids(
            path,
            int.from_bytes(head[68:72], "big", signed=True),
            int.from_bytes(head[60:64], "big", signed=True),
        )
    try:
        if settled:  # read as it lies, with no lock or side file (the schema only)
            uri = f"{path.absolute().as_uri()}?mode=ro&immutable=1"
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)
            conn.execute("PRAGMA user_version").fetchone()
        else:
            conn = _connect_readonly(path)
    except sqlite3.OperationalError as exc:
        raise WorkspaceError(f"{path} cannot be opened ({exc})") from None
    except sqlite3.DatabaseError as exc:
        raise WorkspaceError(
            f"{path} cannot be read: SQLite reports {exc}. If it is a goldpan workspace, it "
            f"is damaged: `goldpan check {path}` says what is wrong. Nothing was written"
        ) from None
    try:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        objects = conn.execute("SELECT type, name, tbl_name FROM sqlite_master").fetchall()
        tables = {str(o[1]) for o in objects if o[0] == "table"}
        expected = expected_tables(version) if 0 < version <= SCHEMA_VERSION else {}
        columns = {
            t: tuple(c[1] for c in conn.execute(f"PRAGMA table_info({_quote(t)})"))
            for t in expected
            if t in tables
        }
    except sqlite3.DatabaseError as exc:
        raise WorkspaceError(
            f"{path} cannot be read: SQLite reports {exc}. If it is a goldpan workspace, it "
            f"is damaged: `goldpan check {path}` says what is wrong. Nothing was written"
        ) from None
    finally:
        conn.close()
    _judge_ids(path, app_id, version)
    ours = app_id == GOLDPAN_APPLICATION_ID
    problems = [f"table {t} is missing" for t in expected if t not in tables]
    problems += [
        f"table {t} has columns ({', '.join(columns[t])}), not ({', '.join(expected[t])})"
        for t in columns
        if columns[t] != expected[t]
    ]
    problems += [f"table {o[2]} has a trigger {o[1]!r}" for o in objects if o[0] == "trigger"]
    if problems and not ours and len(problems) >= len(expected):
        raise _not_goldpan(path, f"user_version {version}, but {problems[0]}")
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise WorkspaceError(
            f"{path}: goldpan workspace with a damaged schema: {problems[0]}{more}, which "
            f"goldpan never writes. Nothing was written; `goldpan check {path}` lists "
            "every problem"
        )
    return version


def _judge_ids(path: Path, app_id: int, version: int) -> None:
    """Refuse by the header's application_id and user_version alone."""
    ours = app_id == GOLDPAN_APPLICATION_ID
    if not ours and app_id != 0:
        raise _not_goldpan(
            path,
            f"its SQLite application_id is {app_id} ({app_id & 0xFFFFFFFF:#010x}), another "
            f"program's (goldpan's is {GOLDPAN_APPLICATION_ID:#010x})",
        )
    if version > SCHEMA_VERSION and ours:
        raise _newer(path, version)
    if version <= 0 or version > SCHEMA_VERSION:
        raise _not_goldpan(
            path, f"an SQLite file whose user_version {version} is no goldpan schema version"
        )
    if not ours and version >= IDENTITY_VERSION:
        raise _not_goldpan(
            path,
            f"its user_version {version} is a goldpan schema version, but goldpan's "
            "application_id is missing",
        )


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
        self.conn = conn
        self._sound = False
        """SQLite's quick check passed (run before the first write of this connection)."""

    @functools.cached_property
    def db(self) -> Any:
        """The connection as a sqlite-utils ``Database``.

        Imported on first use: sqlite-utils takes about 0.3 s to import (it loads pandas
        and numpy when they are installed), more than a whole ``goldpan label``.
        """
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

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
    def inspect(cls, path: str | Path) -> Workspace:
        """Open a goldpan workspace of any known schema version read-only, to check it.

        Nothing is migrated (an old workspace is looked at as it is).

        Raises:
            WorkspaceError: the file is missing or not a goldpan workspace (see
                :func:`identify`).
        """
        path = Path(path)
        if not path.is_file():
            raise WorkspaceError(f"{path}: no such workspace file")
        identify(path)
        try:
            conn = _connect_readonly(path)
        except sqlite3.DatabaseError as exc:
            raise WorkspaceError(f"{path} cannot be opened ({exc})") from None
        ws = cls(path, conn, readonly=True)
        ws.readonly_reason = "opened for checking"
        return ws

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
        existed = path.exists()
        if existed:  # before any connection that could write: refuse other programs' files
            identify(path)
        reason = READ_ONLY_ASKED if readonly else None
        if reason is None and existed:
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
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise WorkspaceError(f"{path} cannot be read ({exc})") from None
        if version > SCHEMA_VERSION:
            conn.close()
            raise _newer(path, version)
        if existed and version == 0:  # identified a moment ago; replaced since?
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

    def checkpoint(self) -> None:
        """Copy every committed page from the ``-wal`` file into the file itself."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

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
        if not self._sound:
            self.ensure_sound()
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.rollback()
            raise
        else:
            self.conn.commit()

    def ensure_sound(self) -> None:
        """Refuse to write into a file SQLite reports as damaged (``PRAGMA quick_check``).

        A write that lands beside a damaged page succeeds and hides the damage a little
        deeper; goldpan stops before the first write instead and points to ``check``. The
        quick check reads every page once (no index cross-check): about 0.1 s per 100 MB.
        """
        try:  # a bad row first: its message names the row, quick_check's would not
            bad = next(self._bad_rows(), None)
        except sqlite3.DatabaseError:
            bad = None  # unreadable pages: quick_check says so
        if bad is not None:
            raise WorkspaceError(f"{bad}; nothing was written")
        try:
            found = [str(r[0]) for r in self.conn.execute("PRAGMA quick_check(5)")]
        except sqlite3.DatabaseError as exc:
            found = [str(exc)]
        if found != ["ok"]:
            raise WorkspaceError(
                f"{self.path} is damaged (SQLite reports: {found[0]}); nothing was written. "
                f"`goldpan check {self.path}` lists every problem; restore the workspace "
                "from a copy, or recover its rows with `sqlite3 FILE .recover`"
            )
        dangling = self.foreign_key_problems(1)
        if dangling:
            raise WorkspaceError(
                f"{self.path}: {dangling[0]} (the workspace is damaged); nothing was written. "
                f"`goldpan check {self.path}` lists every problem"
            )
        self._sound = True

    def _bad_rows(self) -> Iterator[BadRow]:
        """Rows the readers would refuse, found fast.

        SQL picks every suspect row (a superset: JSON validity, shapes, types, lengths,
        depth, UTF-8) and the readers' own decoders judge each suspect, so the gate and
        the readers never disagree.
        """
        self.conn.create_function("goldpan_bad_utf8", 1, _bad_utf8, deterministic=True)
        present = {
            r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        for table, where in _SUSPECTS.items():
            if table not in present:
                continue
            sql, read = _ROW_READERS[table]
            suspects = [r[0] for r in self.conn.execute(f"SELECT rowid FROM {table} WHERE {where}")]
            for rowid in suspects:
                try:
                    row = self.conn.execute(f"{sql} WHERE rowid = ?", (rowid,)).fetchone()
                    read(self.path, row)
                except BadRow as exc:
                    yield exc
                except sqlite3.OperationalError as exc:  # text that is not UTF-8
                    yield BadRow(self.path, table, f"rowid {rowid}", str(exc))

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
        return [
            f"table {t}, rowid {rowid}: refers to a row {parent} lacks"
            for t, rowid, parent, _ in found
        ]

    def row_problems(self) -> Iterator[str]:
        """Every row goldpan could not read back (checked as the readers decode them)."""
        present = {
            r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        for table, (sql, read) in _ROW_READERS.items():
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

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` answer (``ok`` when sound)."""
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])

    # -- meta ------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        """Every meta key and value."""
        return dict(
            decode.meta(self.path, r) for r in self.conn.execute("SELECT key, value FROM meta")
        )

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
        return [
            decode.text_column(self.path, "docs", "id", r[0])
            for r in self.conn.execute("SELECT id FROM docs ORDER BY id")
        ]

    def docs(self) -> list[Doc]:
        """Every document, in code-point order of id."""
        found = self.conn.execute("SELECT id, title, text, fields FROM docs ORDER BY id")
        return [decode.doc(self.path, r) for r in found]

    def titles(self) -> list[str]:
        """Every document title (for the title-overlap meter; no text is read)."""
        return [
            decode.text_column(self.path, "docs", "title", r[0])
            for r in self.conn.execute("SELECT title FROM docs ORDER BY id")
        ]

    def doc(self, doc_id: str) -> Doc | None:
        """One document, or None."""
        r = self.conn.execute(
            "SELECT id, title, text, fields FROM docs WHERE id = ?", (doc_id,)
        ).fetchone()
        return decode.doc(self.path, r) if r else None

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

    def _question(self, r: Sequence[Any]) -> Question:
        return decode.question(self.path, r)

    _Q_COLUMNS = "id, text, tags, author, written_blind, note"

    def questions(self) -> list[Question]:
        """Every question, in code-point order of id."""
        found = self.conn.execute(f"SELECT {self._Q_COLUMNS} FROM questions ORDER BY id")
        return [self._question(r) for r in found]

    def question(self, question_id: str) -> Question | None:
        """One question, or None."""
        r = self.conn.execute(
            f"SELECT {self._Q_COLUMNS} FROM questions WHERE id = ?", (question_id,)
        ).fetchone()
        return self._question(r) if r else None

    def question_ids(self) -> list[str]:
        """Every question id, in code-point order."""
        return [
            decode.text_column(self.path, "questions", "id", r[0])
            for r in self.conn.execute("SELECT id FROM questions ORDER BY id")
        ]

    def write_questions(
        self, questions: Iterable[Question], *, by: str = "import"
    ) -> tuple[int, int, int]:
        """Insert or update questions; returns (added, updated, unchanged).

        A changed text keeps the old one in the question's history (as
        :meth:`edit_question` does, logged as ``by``); what happens to the judgments made
        for the old text is :meth:`retext_judgments`'s job.
        """
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
                    if old[0] != q.text:
                        self._event("question", by, q.id, None, old[0], q.text, stamp)
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
            "SELECT id, at, annotator, old FROM events WHERE kind = 'question' AND "
            "question_id = ? AND old IS NOT NULL ORDER BY id",
            (question_id,),
        )
        found = [
            decode.event(self.path, (r[0], r[1], r[2], "question", question_id, None, r[3], None))
            for r in rows
        ]
        return [(e["at"], e["annotator"], e["old"]) for e in found]

    def retext_judgments(
        self, question_id: str, old_text: str, new_text: str, by: str, *, replace: bool = False
    ) -> int:
        """The question's text changed from ``old_text``: its judgments no longer hold.

        Every current label, verdict and adjudication of the question is marked as made
        for the old text (``made_for`` = its hash): kept, and counted as needing
        re-check, but no longer gold. With ``replace`` they are deleted instead (each
        deletion logged). Judgments earlier marked as made for ``new_text`` (the text
        came back) become current again. Returns how many judgments were marked or
        deleted.
        """
        old_hash, new_hash = sha256_text(old_text), sha256_text(new_text)
        n = 0
        with self.transaction():
            for table in _JUDGMENT_TABLES:
                if replace:
                    n += self._delete_current(table, question_id, by)
                else:
                    n += self.conn.execute(
                        f"UPDATE {table} SET made_for = ? WHERE question_id = ? "
                        "AND made_for IS NULL",
                        (old_hash, question_id),
                    ).rowcount
            for table in _JUDGMENT_TABLES:
                # a judgment made for the text now back, unless one for it exists anew
                self.conn.execute(
                    f"UPDATE OR IGNORE {table} SET made_for = NULL WHERE question_id = ? "
                    "AND made_for = ?",
                    (question_id, new_hash),
                )
        return n

    def _delete_current(self, table: str, question_id: str, by: str) -> int:
        stamp = now()
        if table == "labels":
            rows = self.conn.execute(
                "DELETE FROM labels WHERE question_id = ? AND made_for IS NULL "
                "RETURNING doc_id, annotator, grade",
                (question_id,),
            ).fetchall()
            for doc, annotator, grade in rows:
                self._event("label", annotator, question_id, doc, str(grade), None, stamp)
        elif table == "verdicts":
            rows = self.conn.execute(
                "DELETE FROM verdicts WHERE question_id = ? AND made_for IS NULL "
                "RETURNING annotator, verdict",
                (question_id,),
            ).fetchall()
            for annotator, verdict in rows:
                self._event("verdict", annotator, question_id, None, verdict, None, stamp)
        else:
            rows = self.conn.execute(
                "DELETE FROM adjudications WHERE question_id = ? AND made_for IS NULL "
                "RETURNING by, no_answer, gold",
                (question_id,),
            ).fetchall()
            for who, no_answer, gold in rows:
                old = "no_answer" if no_answer else gold
                self._event("adjudication", who, question_id, None, old, None, stamp)
        return len(rows)

    def recheck_counts(self, question_id: str | None = None) -> dict[str, int]:
        """Question id -> how many of its judgments were made for an earlier text."""
        where = "made_for IS NOT NULL" + (" AND question_id = ?" if question_id else "")
        args = (question_id,) if question_id else ()
        sql = " UNION ALL ".join(
            f"SELECT question_id FROM {t} WHERE {where}" for t in _JUDGMENT_TABLES
        )
        out: dict[str, int] = {}
        for (qid,) in self.conn.execute(sql, args * len(_JUDGMENT_TABLES)):
            out[qid] = out.get(qid, 0) + 1
        return out

    # -- labels, verdicts, adjudications ----------------------------------------------

    def labels(self) -> list[Label]:
        """Every label of every annotator."""
        rows = self.conn.execute(
            "SELECT question_id, doc_id, annotator, grade FROM labels WHERE made_for IS NULL "
            "ORDER BY question_id, doc_id, annotator"
        )
        return [decode.label(self.path, r) for r in rows]

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
                    "DO UPDATE SET grade = excluded.grade, updated = excluded.updated, "
                    "made_for = NULL",
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
            "AND made_for IS NULL ORDER BY doc_id, annotator",
            (question_id,),
        )
        return [decode.label(self.path, r) for r in rows]

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
            "AND made_for IS NULL ORDER BY annotator",
            (question_id,),
        )
        return [decode.verdict(self.path, r) for r in rows]

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
            "WHERE question_id = ? AND made_for IS NULL",
            (question_id,),
        ).fetchone()
        return decode.adjudication(self.path, r) if r else None

    def verdicts(self) -> list[Verdict]:
        """Every verdict of every annotator."""
        rows = self.conn.execute(
            "SELECT question_id, annotator, verdict, note FROM verdicts WHERE made_for IS NULL "
            "ORDER BY question_id, annotator"
        )
        return [decode.verdict(self.path, r) for r in rows]

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
                    "updated = excluded.updated, made_for = NULL",
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
            "SELECT question_id, no_answer, gold, by, note FROM adjudications "
            "WHERE made_for IS NULL ORDER BY question_id"
        )
        return [decode.adjudication(self.path, r) for r in rows]

    def write_adjudication(self, adj: Adjudication) -> None:
        """Record (or replace) the final word on a question."""
        stamp = now()
        with self.transaction():
            self.conn.execute(
                "INSERT INTO adjudications(question_id, no_answer, gold, by, at, note) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(question_id) DO UPDATE SET "
                "no_answer = excluded.no_answer, gold = excluded.gold, by = excluded.by, "
                "at = excluded.at, note = excluded.note, made_for = NULL",
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
        return [decode.event(self.path, r) for r in self.conn.execute(sql)]

    # -- retrievers ------------------------------------------------------------------

    def retrievers(self) -> list[RetrieverSpec]:
        """Every configured retriever, in the order they were added."""
        rows = self.conn.execute("SELECT name, kind, params FROM retrievers ORDER BY rowid")
        return [decode.retriever(self.path, r) for r in rows]

    def retriever(self, name: str) -> RetrieverSpec | None:
        """One retriever, or None."""
        r = self.conn.execute(
            "SELECT name, kind, params FROM retrievers WHERE name = ?", (name,)
        ).fetchone()
        return decode.retriever(self.path, r) if r else None

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
        out = {}
        for r in rows:
            row = f"(retriever {decode.show(retriever)}, question {decode.show(r[0])})"
            out[decode.text_column(self.path, "runs", "question_id", r[0])] = (
                decode.text_column(self.path, "runs", "input_hash", r[1]),
                int(decode.number(self.path, "runs", row, "depth", r[2])),
            )
        return out

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
        found = (decode.run_row(self.path, retriever, r) for r in self.conn.execute(sql, params))
        return {r[0]: CachedRun(retriever, *r) for r in found}

    def latencies(self) -> dict[str, list[float]]:
        """Per-query latencies (ms) of every retriever's cached rankings."""
        out: dict[str, list[float]] = {}
        for r in self.conn.execute("SELECT retriever, question_id, latency_ms FROM runs"):
            row = f"(retriever {decode.show(r[0])}, question {decode.show(r[1])})"
            out.setdefault(r[0], []).append(
                decode.number(self.path, "runs", row, "latency_ms", r[2])
            )
        return out

    def all_runs(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """Cached rankings (doc ids only) by retriever, then question id."""
        out: dict[str, dict[str, tuple[str, ...]]] = {s.name: {} for s in self.retrievers()}
        for r in self.conn.execute("SELECT retriever, question_id, doc_ids FROM runs"):
            out.setdefault(r[0], {})[r[1]] = decode.run_doc_ids(self.path, r[0], r[1], r[2])
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
            "SELECT model, doc_id, doc_hash, dim, vector FROM embeddings WHERE model = ?", (model,)
        )
        found = (decode.embedding(self.path, r) for r in rows)
        return {doc_id: (doc_hash, vector) for doc_id, doc_hash, vector in found}

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
        return [decode.text_column(self.path, "labels", "annotator", r[0]) for r in rows]

    # -- leases (`goldpan serve`) -------------------------------------------------------

    def _drop_expired_leases(self, stamp: str) -> None:
        self.conn.execute("DELETE FROM leases WHERE expires <= ?", (stamp,))

    def take_lease(
        self,
        holder: str,
        annotator: str,
        seconds: float,
        pick: Callable[[LeaseState], str | None],
    ) -> str | None:
        """Give up ``holder``'s lease and lease the question ``pick`` chooses; one transaction.

        ``pick`` sees, under the write lock, the questions other sessions hold, who judged
        each question and which are adjudicated, so two sessions choosing at once never get
        the same question. Returns the question leased (None: ``pick`` found none).
        """
        with self.transaction():
            stamp = now()
            self._drop_expired_leases(stamp)
            self.conn.execute("DELETE FROM leases WHERE holder = ?", (holder,))
            held = dict(self.conn.execute("SELECT question_id, annotator FROM leases"))
            judges: dict[str, set[str]] = {}
            for qid, who in self.conn.execute(
                "SELECT question_id, annotator FROM labels "
                "UNION SELECT question_id, annotator FROM verdicts"
            ):
                judges.setdefault(qid, set()).add(who)
            adjudicated = {r[0] for r in self.conn.execute("SELECT question_id FROM adjudications")}
            chosen = pick(LeaseState(held, judges, adjudicated))
            if chosen is not None:
                self._insert_lease(chosen, annotator, holder, stamp, seconds)
            return chosen

    def hold_lease(self, question_id: str, annotator: str, holder: str, seconds: float) -> str:
        """Lease one question for ``holder`` unless another session holds it.

        Returns the annotator holding it afterwards: ``annotator`` when the lease is (or
        already was) ``holder``'s, someone else's name when theirs is still running.
        """
        with self.transaction():
            stamp = now()
            self._drop_expired_leases(stamp)
            row = self.conn.execute(
                "SELECT annotator, holder FROM leases WHERE question_id = ?", (question_id,)
            ).fetchone()
            if row is not None and row[1] != holder:
                return str(row[0])
            self.conn.execute("DELETE FROM leases WHERE holder = ?", (holder,))
            self._insert_lease(question_id, annotator, holder, stamp, seconds)
            return annotator

    def _insert_lease(
        self, question_id: str, annotator: str, holder: str, stamp: str, seconds: float
    ) -> None:
        expires = (dt.datetime.fromisoformat(stamp) + dt.timedelta(seconds=seconds)).isoformat(
            timespec="milliseconds"
        )
        self.conn.execute(
            "INSERT INTO leases(question_id, annotator, holder, taken, expires) "
            "VALUES (?, ?, ?, ?, ?)",
            (question_id, annotator, holder, stamp, expires),
        )

    def renew_lease(self, holder: str, seconds: float) -> str | None:
        """Push back the expiry of ``holder``'s lease; returns its question (None: no lease)."""
        expires = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)).isoformat(
            timespec="milliseconds"
        )
        with self.transaction():
            row = self.conn.execute(
                "UPDATE leases SET expires = ? WHERE holder = ? AND expires > ? "
                "RETURNING question_id",
                (expires, holder, now()),
            ).fetchone()
        return None if row is None else str(row[0])

    def release_lease(self, holder: str) -> None:
        """Give up ``holder``'s lease (the annotator moved on or left)."""
        with self.transaction():
            self.conn.execute("DELETE FROM leases WHERE holder = ?", (holder,))

    def leases(self) -> dict[str, str]:
        """Question id -> the annotator judging it now (leases not yet expired)."""
        rows = self.conn.execute(
            "SELECT question_id, annotator FROM leases WHERE expires > ? ORDER BY question_id",
            (now(),),
        )
        return {r[0]: r[1] for r in rows}

    # -- snapshots (issue 14) ------------------------------------------------------------

    def snapshots(self) -> list[tuple[str, str]]:
        """(name, created) of every stored snapshot, oldest first."""
        rows = self.conn.execute("SELECT name, created FROM snapshots ORDER BY created, name")
        return [(r[0], r[1]) for r in rows]

    def snapshot(self, name: str) -> dict[str, Any] | None:
        """A stored snapshot's JSON document, or None."""
        r = self.conn.execute("SELECT data FROM snapshots WHERE name = ?", (name,)).fetchone()
        if r is None:
            return None
        try:
            data = json.loads(r[0])
        except (TypeError, ValueError) as exc:
            raise WorkspaceError(
                f"{self.path}: table snapshots, row {name!r}: not readable JSON ({exc})"
            ) from None
        if not isinstance(data, dict):
            raise WorkspaceError(f"{self.path}: table snapshots, row {name!r}: not a JSON object")
        return data

    def save_snapshot(
        self, name: str, created: str, data: dict[str, Any], *, replace: bool = False
    ) -> None:
        """Store a snapshot; an existing name is an error unless ``replace``."""
        with self.transaction():
            exists = self.conn.execute("SELECT 1 FROM snapshots WHERE name = ?", (name,)).fetchone()
            if exists and not replace:
                raise WorkspaceError(
                    f"a snapshot named {name!r} already exists (remove it, or use --replace)"
                )
            self.conn.execute(
                "INSERT INTO snapshots(name, created, data) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET created = excluded.created, data = excluded.data",
                (name, created, json.dumps(data, ensure_ascii=False, separators=(",", ":"))),
            )

    def remove_snapshot(self, name: str) -> None:
        """Remove a snapshot."""
        with self.transaction():
            cur = self.conn.execute("DELETE FROM snapshots WHERE name = ?", (name,))
            if cur.rowcount == 0:
                raise WorkspaceError(f"no snapshot named {name!r}")

    # -- query log (issue 14) -------------------------------------------------------------

    _LOG_COLUMNS = "id, text, norm, count, band, variants, status, question_id"

    @staticmethod
    def _log_row(r: Sequence[Any]) -> dict[str, Any]:
        keys = ("id", "text", "norm", "count", "band", "variants", "status", "question_id")
        row = dict(zip(keys, r, strict=True))
        row["variants"] = json.loads(row["variants"])
        return row

    def write_querylog(self, rows: Iterable[dict[str, Any]], source: str) -> tuple[int, int]:
        """Store query groups (text, norm, count, band, variants); returns (added, merged).

        A group whose normalized text is stored already adds its count to that row.
        """
        stamp = now()
        added = merged = 0
        with self.transaction():
            for row in rows:
                cur = self.conn.execute(
                    "UPDATE querylog SET count = count + ? WHERE norm = ?",
                    (int(row["count"]), row["norm"]),
                )
                if cur.rowcount:
                    merged += 1
                    continue
                self.conn.execute(
                    "INSERT INTO querylog(text, norm, count, band, variants, source, imported) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        row["text"],
                        row["norm"],
                        int(row["count"]),
                        row["band"],
                        json.dumps(list(row["variants"]), ensure_ascii=False),
                        source,
                        stamp,
                    ),
                )
                added += 1
        return added, merged

    def querylog(self, status: str | None = None) -> list[dict[str, Any]]:
        """Stored query groups (only those with ``status`` if given), most frequent first."""
        sql = f"SELECT {self._LOG_COLUMNS} FROM querylog"
        params: tuple[str, ...] = ()
        if status is not None:
            sql += " WHERE status = ?"
            params = (status,)
        rows = self.conn.execute(sql + " ORDER BY count DESC, id", params)
        return [self._log_row(r) for r in rows]

    def next_log_query(self) -> dict[str, Any] | None:
        """The most frequent query of the log still waiting for a decision, or None."""
        r = self.conn.execute(
            f"SELECT {self._LOG_COLUMNS} FROM querylog WHERE status = 'pending' "
            "ORDER BY count DESC, id LIMIT 1"
        ).fetchone()
        return self._log_row(r) if r else None

    def decide_log_query(
        self, log_id: int, status: str, by: str, question_id: str | None = None
    ) -> None:
        """Record what became of a logged query: kept, rewritten or discarded; logged."""
        with self.transaction():
            cur = self.conn.execute(
                "UPDATE querylog SET status = ?, question_id = ?, decided = ?, by = ? WHERE id = ?",
                (status, question_id, now(), by, log_id),
            )
            if cur.rowcount == 0:
                raise WorkspaceError(f"no query {log_id} in the log")
            self._event("querylog", by, question_id, None, None, f"{log_id} {status}", now())


def _bad_utf8(value: bytes | None) -> bool:
    if value is None:
        return False
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _not_text(*columns: str) -> str:
    """SQL: one of ``columns`` is not valid UTF-8 text."""
    return " OR ".join(
        f"typeof({c}) != 'text' OR goldpan_bad_utf8(CAST({c} AS BLOB))" for c in columns
    )


def _not_null_text(*columns: str) -> str:
    return " OR ".join(
        f"({c} IS NOT NULL AND (typeof({c}) != 'text' OR goldpan_bad_utf8(CAST({c} AS BLOB))))"
        for c in columns
    )


def _bad_json(column: str, shape: str, *more: str) -> str:
    """SQL: ``column`` is not JSON of ``shape`` (or nests too deep, or fails ``more``)."""
    openers = f"length({column}) - length(replace(replace({column}, '[', ''), '{{', ''))"
    checks = [
        f"typeof({column}) != 'text'",
        f"goldpan_bad_utf8(CAST({column} AS BLOB))",
        f"instr({column}, char(0)) > 0",
        f"NOT json_valid({column})",
        f"json_type({column}) != '{shape}'",
        f"{openers} > {MAX_JSON_DEPTH}",
        *more,
    ]
    return "(CASE " + " ".join(f"WHEN {c} THEN 1" for c in checks) + " ELSE 0 END)"


_SUSPECTS: dict[str, str] = {
    "meta": _not_text("key", "value"),
    "docs": f"{_not_text('id', 'title', 'text')} OR {_bad_json('fields', 'object')}",
    "questions": f"{_not_text('id', 'text', 'author', 'note')} OR "
    "typeof(written_blind) != 'integer' OR "
    + _bad_json(
        "tags", "array", "EXISTS (SELECT 1 FROM json_each(questions.tags) WHERE type != 'text')"
    ),
    "labels": f"{_not_text('question_id', 'doc_id', 'annotator')} OR "
    "typeof(grade) != 'integer' OR grade NOT BETWEEN 0 AND 3",
    "verdicts": f"{_not_text('question_id', 'annotator', 'verdict', 'note')} OR verdict NOT IN "
    f"({', '.join(repr(v) for v in VERDICTS)})",
    "adjudications": f"{_not_text('question_id', 'by', 'note')} OR "
    "typeof(no_answer) != 'integer' OR "
    + _bad_json(
        "gold",
        "object",
        "EXISTS (SELECT 1 FROM json_each(adjudications.gold) WHERE type != 'integer' "
        "OR value NOT BETWEEN 0 AND 3)",
    ),
    "retrievers": f"{_not_text('name', 'kind')} OR kind NOT IN "
    f"({', '.join(repr(k) for k in RETRIEVER_KIND_NAMES)}) OR {_bad_json('params', 'object')}",
    "runs": f"{_not_text('retriever', 'question_id', 'input_hash')} OR "
    "typeof(depth) != 'integer' OR typeof(latency_ms) NOT IN ('real', 'integer') OR "
    "typeof(scores) != 'blob' OR "
    + _bad_json(
        "doc_ids",
        "array",
        "length(scores) != 8 * json_array_length(doc_ids)",
        "EXISTS (SELECT 1 FROM json_each(runs.doc_ids) WHERE type != 'text')",
    ),
    "embeddings": f"{_not_text('model', 'doc_id', 'doc_hash')} OR typeof(dim) != 'integer' "
    "OR typeof(vector) != 'blob' OR length(vector) != 4 * dim",
    "events": f"{_not_text('at', 'annotator', 'kind')} OR "
    + _not_null_text("question_id", "doc_id", "old", "new"),
}
"""Table -> SQL condition picking every row its reader might refuse (and a few more)."""


_ROW_READERS: dict[str, tuple[str, Any]] = {
    "meta": ("SELECT key, value FROM meta", decode.meta),
    "docs": ("SELECT id, title, text, fields FROM docs", decode.doc),
    "questions": (f"SELECT {Workspace._Q_COLUMNS} FROM questions", decode.question),
    "labels": ("SELECT question_id, doc_id, annotator, grade FROM labels", decode.label),
    "verdicts": ("SELECT question_id, annotator, verdict, note FROM verdicts", decode.verdict),
    "adjudications": (
        "SELECT question_id, no_answer, gold, by, note FROM adjudications",
        decode.adjudication,
    ),
    "retrievers": ("SELECT name, kind, params FROM retrievers", decode.retriever),
    "runs": (
        "SELECT retriever, question_id, doc_ids, scores, latency_ms, input_hash, depth FROM runs",
        lambda path, r: decode.run_row(path, r[0], r[1:]),
    ),
    "embeddings": ("SELECT model, doc_id, doc_hash, dim, vector FROM embeddings", decode.embedding),
    "events": (f"SELECT {', '.join(decode.EVENT_COLUMNS)} FROM events", decode.event),
}
"""Table -> (the query, the decoder) ``row_problems`` reads each row with."""

_JUDGMENT_TABLES = ("labels", "verdicts", "adjudications")
"""The tables whose rows are made for one text of a question (``made_for``)."""


def _split_sql(script: str) -> list[str]:
    """Split a migration script into statements (no statement contains ';' in a literal)."""
    statements = []
    for chunk in script.split(";"):
        lines = [ln for ln in chunk.splitlines() if ln.strip()]
        if lines:
            statements.append("\n".join(lines))
    return statements
