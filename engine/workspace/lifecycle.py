"""The workspace file's lifecycle: open it (read-only or writable), back it up and migrate it.

Whether a file is goldpan's is :mod:`engine.workspace.identity`'s; the soundness gate
before the first write and ``goldpan check``'s scans are :mod:`engine.workspace.soundness`'s
(mixed into :class:`WorkspaceFile`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Self

from engine import __version__
from engine.errors import from_os_error, from_sqlite
from engine.workspace import held
from engine.workspace import rows as decode
from engine.workspace.held import BUSY_TIMEOUT_S
from engine.workspace.identity import (
    connect_readonly,
    identify,
    newer_schema,
    regular_file_problem,
    split_sql,
)
from engine.workspace.migrations import MIGRATIONS, SCHEMA_VERSION
from engine.workspace.numbers import DocNumbers
from engine.workspace.rows import BadRow as BadRow
from engine.workspace.rows import NewerWorkspace as NewerWorkspace
from engine.workspace.rows import NotAWorkspace as NotAWorkspace
from engine.workspace.rows import WorkspaceError as WorkspaceError
from engine.workspace.soundness import SoundnessBehind, SoundnessChecks

READ_ONLY_ASKED = "opened read-only on request"
"""The :attr:`Workspace.readonly_reason` of a workspace opened with ``readonly=True``."""


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
        # Another process's last connection removes them as it closes: one seen, then gone
        # before it was asked about, is no reason to open read-only (asked about first, and
        # again if it is still there, a -wal made again meanwhile is not taken for one
        # that cannot be written).
        if not os.access(side, os.W_OK) and side.exists() and not os.access(side, os.W_OK):
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


def now() -> str:
    """The current UTC time, ISO 8601 to the millisecond."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


PAGE_SIZE = 16384
"""The page size of a new workspace (SQLite's default is 4,096)."""


class WorkspaceFile(SoundnessChecks):
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
        self._at = Path(os.path.abspath(path))  # the same file whatever the process's cwd
        self._file = held.file_key(self._at)
        """The file this connection opened: a write checks ``path`` still names it."""
        self.doc_numbers = DocNumbers(conn)
        """The numbers a cached ranking stores documents by."""
        self._sound = False
        """SQLite's quick check passed (run before the first write of this connection)."""
        self._behind: SoundnessBehind | None = None
        """The soundness checks running in a thread (:meth:`check_soundness_behind`)."""
        self._runs_decoded_at: int | None = None
        """:meth:`data_version` when every ranking's documents were last decoded whole by
        this connection (:meth:`all_runs`), before any write of its own: the soundness
        gate need not decode them again while no other connection has committed since."""

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: changes when another connection commits."""
        return held.data_version(self.conn)

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
        if (problem := regular_file_problem(path)) is not None:
            raise NotAWorkspace(problem)
        if not path.is_file():
            what = "a folder, not a workspace file" if path.is_dir() else "no such workspace file"
            raise NotAWorkspace(f"{path}: {what}")
        identify(path)
        try:
            conn, release = connect_readonly(path)
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
        if (problem := regular_file_problem(path)) is not None:
            raise NotAWorkspace(problem)
        if not path.exists() and not create:
            raise NotAWorkspace(f"{path}: no such workspace (create one with `goldpan new`)")
        if path.is_dir():
            raise NotAWorkspace(f"{path} is a folder, not a workspace file")
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
                conn, release = connect_readonly(path)
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
            raise newer_schema(path, version)
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

    @classmethod
    def open_for_checks(cls, path: Path) -> Self:
        """A new writable connection to ``path`` (the soundness checks' own, in a thread)."""
        return cls.open(path)

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
                    raise newer_schema(self.path, version)
                if version == SCHEMA_VERSION:
                    return
                if version > 0:
                    backup = self._write_backup(version)
                for script in MIGRATIONS[version:]:
                    for statement in split_sql(script):
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
            self._check_still_here()
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

    def _check_still_here(self) -> None:
        """Refuse to write when ``path`` no longer names the file this connection opened.

        A workspace rebuilt in place (``goldpan demo --force``, which renames a new file
        over the old) or moved away leaves this connection on a file nobody else opens:
        a label written there would be shown as saved and be in no file at ``path``.
        Checked under the write lock, so a replacement while this transaction runs is seen
        by the next one (its commit then went to the file as it was before the rebuild).
        """
        if self._file is None or held.file_key(self._at) == self._file:
            return
        raise WorkspaceError(
            f"{self.path} was replaced or moved since goldpan opened it (`goldpan demo "
            "--force` rebuilds a workspace that way); nothing was written to the old file. "
            "Open the workspace again to go on"
        )

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


JUDGMENT_TABLES = ("labels", "verdicts", "adjudications")
"""The tables whose rows are made for one text of a question (``made_for``)."""
