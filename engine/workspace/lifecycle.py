"""The workspace file's lifecycle.

Identify it as goldpan's, open it (read-only or writable), back it up and migrate it,
and refuse to write into a damaged file (``goldpan check``'s scans).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Self

from engine import __version__
from engine import rows as decode
from engine.errors import from_os_error, from_sqlite
from engine.grades import MAX_GRADE, MIN_GRADE, sql_not_a_grade
from engine.migrations import GOLDPAN_APPLICATION_ID, M007_IDENTITY, MIGRATIONS, SCHEMA_VERSION
from engine.rows import BadRow as BadRow
from engine.rows import WorkspaceError as WorkspaceError
from engine.types import (
    MAX_JSON_DEPTH,
    MODEL_JUDGE_KINDS,
    RETRIEVER_KIND_NAMES,
    VERDICTS,
)
from engine.workspace import held
from engine.workspace.numbers import DocNumbers

BUSY_TIMEOUT_S = 30.0
"""How long a connection waits for another's write lock before it gives up (a batch job)."""

INTERACTIVE_BUSY_TIMEOUT_S = 5.0
"""The same for a connection a person waits on (the app's): a grade that cannot get the
lock in this time is reported as not saved, rather than freezing the screen for 30 s."""

Q_COLUMNS = "id, text, tags, author, written_blind, note"
"""The columns a question is read from, in :func:`engine.rows.question`'s order."""

READ_ONLY_ASKED = "opened read-only on request"
"""The :attr:`Workspace.readonly_reason` of a workspace opened with ``readonly=True``."""


def _regular_file_problem(path: Path) -> str | None:
    """Why the file at ``path`` cannot be a workspace: it is a FIFO, device or socket.

    ``open()`` would block on a FIFO, and a device reads forever. None otherwise (a regular
    file, a folder or a missing path: the callers say what is wrong with those). By
    ``os.stat`` alone (links followed): nothing is opened.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        kind = "a FIFO"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    else:
        kind = "a socket"
    return (
        f"{path} is not a regular file ({kind}), so not a workspace: goldpan opens only "
        "regular files, and left it as it is"
    )


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


def _connect_readonly(path: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
    """A read-only connection that also sees what is committed in the ``-wal`` file.

    ``mode=ro`` reads the WAL through its ``-shm`` index, creating them when it can. When
    neither exists and the folder cannot be written, ``mode=ro`` fails; then the file holds
    every committed page (the last writer checkpointed it and removed the WAL), no process
    has it open in WAL mode (that would have made the ``-shm``), and ``immutable=1`` reads
    it without any lock or side file. ``immutable`` is never used while a side file exists:
    it would ignore the WAL's frames, and another process may be writing.

    Returns the connection and the function to call once it is closed (see :mod:`held`).
    """
    uri = path.absolute().as_uri()
    conn, release = held.connect(path, f"{uri}?mode=ro", timeout=BUSY_TIMEOUT_S)
    try:
        conn.execute("PRAGMA user_version").fetchone()
        return conn, release
    except sqlite3.OperationalError:
        conn.close()
        release()
        sides = [path.with_name(path.name + s) for s in ("-wal", "-shm")]
        if any(side.exists() for side in sides):
            raise
    except sqlite3.DatabaseError:
        conn.close()
        release()
        raise
    return held.connect(path, f"{uri}?mode=ro&immutable=1", timeout=BUSY_TIMEOUT_S)


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
    if (problem := _regular_file_problem(path)) is not None:
        raise WorkspaceError(problem)
    with held.plain_read_allowed(path) as plain:
        # While this process holds a connection to the file, a plain descriptor opened
        # and closed here would drop that connection's locks (see :mod:`held`): the file
        # was identified when that connection was opened, and is read through SQLite.
        head = _read_header(path) if plain else None
    if head is not None:
        if not head:
            raise _not_goldpan(path, "the file is empty")
        if not head.startswith(SQLITE_MAGIC):
            raise _not_goldpan(path, "it is not an SQLite file")
        wal = path.with_name(path.name + "-wal")
        settled = _file_size(wal) == 0
        if settled and len(head) == 100:
            # Everything committed is in the file: its header alone can refuse another
            # program's file without opening it (a connection to a WAL file leaves -shm/-wal).
            _judge_ids(
                path,
                int.from_bytes(head[68:72], "big", signed=True),
                int.from_bytes(head[60:64], "big", signed=True),
            )
    sides = [path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal")]
    try:
        if head is not None and not any(side.exists() for side in sides):
            # No process has the file open in WAL mode (that makes the -shm) and none is
            # mid-way through a rollback-journal write: read the schema as it lies, with
            # no lock and no side file left beside another program's file.
            uri = f"{path.absolute().as_uri()}?mode=ro&immutable=1"
            conn, release = held.connect(path, uri, timeout=BUSY_TIMEOUT_S)
            try:
                conn.execute("PRAGMA user_version").fetchone()
            except sqlite3.Error:
                conn.close()
                release()
                raise
        else:
            conn, release = _connect_readonly(path)
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
        release()
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


def _file_size(path: Path) -> int:
    """The size of ``path``; 0 when it does not exist.

    Read in one look: another process's last close may delete a -wal between two.
    """
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _read_header(path: Path) -> bytes:
    """The first 100 bytes of ``path`` (SQLite's header), read with a plain descriptor.

    Only where :func:`held.plain_read_allowed` says so.
    """
    try:
        with path.open("rb") as f:
            return f.read(100)
    except OSError as exc:
        raise WorkspaceError(f"{path} cannot be read ({exc.strerror or exc})") from None


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


PAGE_SIZE = 16384
"""The page size of a new workspace (SQLite's default is 4,096)."""


class WorkspaceFile:
    """An open workspace file: its connection, lifecycle and soundness checks.

    The tables' reads and writes are mixed in by :class:`engine.workspace.Workspace`.
    """

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        *,
        readonly: bool,
        release: Callable[[], None] = lambda: None,
    ) -> None:
        """Wrap an open connection; use :meth:`open` or :meth:`create` instead."""
        self.path = path
        self._release = release
        """Forgets the connection in :mod:`held` once it is closed."""
        self.readonly = readonly
        self.readonly_reason: str | None = READ_ONLY_ASKED if readonly else None
        """Why the workspace is read-only (None when it can be changed)."""
        self.upgraded_from: int | None = None
        """The schema version this open migrated the workspace from (None: no migration)."""
        self.backup_path: Path | None = None
        """The copy of the old version written before that migration."""
        self.conn = conn
        self.doc_numbers = DocNumbers(conn)
        """The numbers a cached ranking stores documents by."""
        self._sound = False
        """SQLite's quick check passed (run before the first write of this connection)."""
        self._behind: _SoundnessBehind | None = None
        """The soundness checks running in a thread (:meth:`check_soundness_behind`)."""

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
    def create(cls, path: str | Path) -> Self:
        """Create a new, empty workspace at ``path`` (which must not exist)."""
        path = Path(path)
        if path.exists():
            raise WorkspaceError(f"{path} already exists")
        if not path.parent.exists():
            raise WorkspaceError(f"folder {path.parent} does not exist")
        return cls.open(path, create=True)

    @classmethod
    def inspect(cls, path: str | Path) -> Self:
        """Open a goldpan workspace of any known schema version read-only, to check it.

        Nothing is migrated (an old workspace is looked at as it is).

        Raises:
            WorkspaceError: the file is missing or not a goldpan workspace (see
                :func:`identify`).
        """
        path = Path(path)
        if (problem := _regular_file_problem(path)) is not None:
            raise WorkspaceError(problem)
        if not path.is_file():
            raise WorkspaceError(f"{path}: no such workspace file")
        identify(path)
        try:
            conn, release = _connect_readonly(path)
        except sqlite3.DatabaseError as exc:
            raise WorkspaceError(f"{path} cannot be opened ({exc})") from None
        ws = cls(path, conn, readonly=True, release=release)
        ws.readonly_reason = "opened for checking"
        return ws

    @classmethod
    def open(cls, path: str | Path, *, create: bool = False, readonly: bool = False) -> Self:
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
        if (problem := _regular_file_problem(path)) is not None:
            raise WorkspaceError(problem)
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
                conn, release = held.connect(path, timeout=BUSY_TIMEOUT_S)
            else:
                conn, release = _connect_readonly(path)
        except sqlite3.OperationalError as exc:
            raise WorkspaceError(f"{path} cannot be opened ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise WorkspaceError(f"{path} is not a goldpan workspace ({exc})") from None
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            conn.close()
            release()
            raise WorkspaceError(f"{path} cannot be read ({exc})") from None
        if version > SCHEMA_VERSION:
            conn.close()
            release()
            raise _newer(path, version)
        if existed and version == 0:  # identified a moment ago; replaced since?
            conn.close()
            release()
            raise WorkspaceError(f"{path} is an SQLite file but not a goldpan workspace")
        if reason is not None and version < SCHEMA_VERSION:
            conn.close()
            release()
            raise WorkspaceError(
                f"{path} has schema version {version} and must be upgraded to "
                f"{SCHEMA_VERSION} before this goldpan ({__version__}) can read it, but it is "
                f"read-only ({reason}). Open it once with write access (a backup copy of "
                "the old version is written first), or open a writable copy of it."
            )
        ws = cls(path, conn, readonly=reason is not None, release=release)
        ws.readonly_reason = reason
        conn.execute("PRAGMA foreign_keys = ON")
        if reason is None:
            try:
                if not existed:
                    # chosen when a cached ranking was a ~3 KB row (4 KB pages held one
                    # each). Rankings are ~1.3 KB rows of numbers now (schema 9), and a
                    # KorQuAD pool and a label's commit (bench_live: 0.5 ms of commit,
                    # 0.4 with 4 KB pages) measure about the same either way; the term
                    # counts' multi-MB blobs take a quarter of the overflow pages. Only a
                    # new, empty file can take it; older workspaces keep their page size.
                    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
                conn.execute("PRAGMA journal_mode = WAL")
                # FULL: a commit is on disk before it returns, so a label survives a power
                # cut too. Labels are human-paced and imports one transaction: one fsync
                # each costs nothing anyone notices.
                conn.execute("PRAGMA synchronous = FULL")
                ws._migrate(version)
            except BaseException:
                ws.close()
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

    def set_busy_timeout(self, seconds: float) -> None:
        """How long this connection waits for another's write lock (see BUSY_TIMEOUT_S)."""
        self.conn.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")

    def checkpoint(self) -> None:
        """Copy every committed page from the ``-wal`` file into the file itself."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Close the connection (after stopping checks still running behind)."""
        behind, self._behind = self._behind, None
        if behind is not None:
            behind.stop()
        try:
            self.conn.close()
        finally:
            self._release()

    def __enter__(self) -> Self:
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
        self.ensure_sound()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:  # another program holds the write lock too long
            known = from_sqlite(exc, self.path)
            if known is None:
                raise
            raise known from exc
        try:
            yield
            self.conn.commit()
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back already
                self.conn.rollback()
            self.doc_numbers.forget()
            # A lock held too long, a full disk, a damaged page: the user's to act on, and
            # nothing was written. Any other error is raised as it is (a bug).
            known = from_sqlite(exc, self.path) if isinstance(exc, sqlite3.Error) else None
            if known is None and isinstance(exc, OSError):
                known = from_os_error(exc)
            if known is not None:
                raise known from exc
            raise

    def ensure_sound(self) -> None:
        """Refuse to write into a file SQLite reports as damaged (``PRAGMA quick_check``).

        A write that lands beside a damaged page succeeds and hides the damage a little
        deeper; goldpan stops before the first write instead and points to ``check``. The
        quick check reads every page once (no index cross-check): about 0.1 s per 100 MB.

        Once per connection: after it passes, every write of this connection goes through
        :meth:`transaction`, which does not check again either; nor does another
        connection of this process while the process keeps the file open
        (:func:`held.is_sound`), so the app can run the check in a worker before the first
        grade, and a pooling worker's connection skips it.
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
        self._behind = _SoundnessBehind(self.path)

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
        present = {
            r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        for table, where in _SUSPECTS.items():
            if table not in present:
                continue
            sql, read = self._row_readers()[table]
            suspects = [r[0] for r in self.conn.execute(f"SELECT rowid FROM {table} WHERE {where}")]
            for rowid in suspects:
                try:
                    row = self.conn.execute(f"{sql} WHERE rowid = ?", (rowid,)).fetchone()
                    read(self.path, row)
                except BadRow as exc:
                    yield exc
                except sqlite3.OperationalError as exc:  # text that is not UTF-8
                    yield BadRow(self.path, table, f"rowid {rowid}", str(exc))

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
                "SELECT retriever, question_id, doc_ids, scores, latency_ms, input_hash, depth "
                "FROM runs",
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


class _SoundnessBehind:
    """The soundness gate's checks on a connection of their own, in a daemon thread.

    The connection is this thread's alone (opened, used and closed in it); the process's
    other connection to the file stays open meanwhile, so closing this one neither
    checkpoints nor drops a lock (:mod:`held`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None
        self.passed = False
        self._conn: sqlite3.Connection | None = None
        self._stopping = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="goldpan-soundness", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            ws = WorkspaceFile.open(self.path)
        except (WorkspaceError, sqlite3.Error, OSError):
            return  # the caller's first write runs the checks itself
        try:
            with self._lock:
                if self._stopping:
                    return
                self._conn = ws.conn
            self.problem = ws._soundness_problem(pages_first=True)
            if self.problem is None and not self._stopping:
                self.passed = True
                held.mark_sound(self.path)
        except (sqlite3.Error, OSError):  # interrupted, or a failure of its own
            self.problem = None
        finally:
            with self._lock:
                self._conn = None
            ws.close()

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
    if value is None:
        return False
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _not_text(*columns: str) -> str:
    """SQL: one of ``columns`` is not valid UTF-8 text.

    The columns' bytes are checked in one call per row, joined by a newline: an ASCII
    byte ends any multi-byte sequence, so a join is valid UTF-8 exactly when every part
    is (a third of the calls into Python on a table of documents). A column that is not
    text makes the row a suspect by its type already (the reader then judges it whole).
    """
    types = " OR ".join(f"typeof({c}) != 'text'" for c in columns)
    joined = " || char(10) || ".join(columns)
    return f"{types} OR goldpan_bad_utf8(CAST({joined} AS BLOB))"


def _not_null_text(*columns: str) -> str:
    return " OR ".join(
        f"({c} IS NOT NULL AND (typeof({c}) != 'text' OR goldpan_bad_utf8(CAST({c} AS BLOB))))"
        for c in columns
    )


def _bad_json(column: str, shape: str, *more: str) -> str:
    """SQL: ``column`` is not JSON of ``shape`` (or nests too deep, or fails ``more``)."""
    openers = f"length({column}) - length(replace(replace({column}, '[', ''), '{{', ''))"
    empty = "{}" if shape == "object" else "[]"
    checks = [
        f"typeof({column}) != 'text'",
        f"goldpan_bad_utf8(CAST({column} AS BLOB))",
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


_SUSPECTS: dict[str, str] = {
    "meta": _not_text("key", "value"),
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
    "typeof(scores) != 'blob' OR (CASE WHEN typeof(doc_ids) = 'blob' THEN "
    "length(scores) != 2 * length(doc_ids) OR goldpan_bad_numbers(doc_ids) ELSE "
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
    "typeof(score) NOT IN ('real', 'integer', 'null')",
    "embeddings": f"{_not_text('model', 'doc_id', 'doc_hash')} OR typeof(dim) != 'integer' "
    "OR typeof(vector) != 'blob' OR length(vector) != 4 * dim",
    "events": f"{_not_text('at', 'annotator', 'kind')} OR "
    + _not_null_text("question_id", "doc_id", "old", "new"),
}
"""Table -> SQL condition picking every row its reader might refuse (and a few more)."""


_ROW_READERS: dict[str, tuple[str, Any]] = {
    "meta": ("SELECT key, value FROM meta", decode.meta),
    "docs": ("SELECT id, title, text, fields FROM docs", decode.doc),
    "questions": (f"SELECT {Q_COLUMNS} FROM questions", decode.question),
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
    "embeddings": ("SELECT model, doc_id, doc_hash, dim, vector FROM embeddings", decode.embedding),
    "events": (f"SELECT {', '.join(decode.EVENT_COLUMNS)} FROM events", decode.event),
}
"""Table -> (the query, the decoder) ``row_problems`` reads each row with (``runs``, whose
decoder needs the workspace's document numbers: :meth:`WorkspaceFile._row_readers`)."""

JUDGMENT_TABLES = ("labels", "verdicts", "adjudications")
"""The tables whose rows are made for one text of a question (``made_for``)."""


def _split_sql(script: str) -> list[str]:
    """Split a migration script into statements (no statement contains ';' in a literal)."""
    statements = []
    for chunk in script.split(";"):
        lines = [ln for ln in chunk.splitlines() if ln.strip()]
        if lines:
            statements.append("\n".join(lines))
    return statements
