"""Whether a file is a goldpan workspace, and of which schema version, found without writing.

:func:`identify` reads the header with a plain descriptor only where :mod:`held` allows
it, then the schema through a read-only SQLite connection (:func:`connect_readonly`).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path

from engine import __version__
from engine.workspace import held
from engine.workspace.held import BUSY_TIMEOUT_S
from engine.workspace.migrations import (
    GOLDPAN_APPLICATION_ID,
    M007_IDENTITY,
    MIGRATIONS,
    SCHEMA_VERSION,
)
from engine.workspace.rows import NewerWorkspace, NotAWorkspace, WorkspaceError

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""


IDENTITY_VERSION = MIGRATIONS.index(M007_IDENTITY) + 1
"""From this schema version on, a goldpan workspace carries goldpan's application id."""


def regular_file_problem(path: Path) -> str | None:
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


def connect_readonly(path: Path) -> tuple[sqlite3.Connection, Callable[[], None]]:
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


@functools.lru_cache(maxsize=8)
def _expected_tables(scripts: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Table -> column names of a workspace built by ``scripts`` (built in memory)."""
    conn = sqlite3.connect(":memory:")
    try:
        for script in scripts:
            for statement in split_sql(script):
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


def _not_goldpan(path: Path, why: str) -> NotAWorkspace:
    return NotAWorkspace(
        f"{path} is not a goldpan workspace: {why}. goldpan leaves it as it is (nothing "
        "was written); give the path of a workspace, or create one with `goldpan new`"
    )


def identify(path: Path) -> int:
    """The goldpan schema version of the file at ``path``, read without writing anything.

    A file is goldpan's when it is an SQLite file whose ``application_id`` is goldpan's
    (:data:`~engine.workspace.migrations.GOLDPAN_APPLICATION_ID`) or, for workspaces written before
    goldpan set one (schema versions below :data:`IDENTITY_VERSION`), 0; whose
    ``user_version`` is a goldpan schema version; and which holds every table of that
    schema with exactly its columns and no trigger (goldpan creates none). The header is
    read first, so that a file that is not SQLite at all is never handed to SQLite.

    Raises:
        WorkspaceError: the file is empty, not SQLite, another program's SQLite file, a
            workspace of a newer goldpan, or a goldpan workspace whose schema is damaged.
    """
    if (problem := regular_file_problem(path)) is not None:
        raise NotAWorkspace(problem)
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
            conn, release = connect_readonly(path)
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
        raise newer_schema(path, version)
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


def newer_schema(path: Path, version: int) -> NewerWorkspace:
    """The refusal of a workspace written by a newer goldpan."""
    return NewerWorkspace(
        f"{path} has workspace schema version {version}, written by a newer "
        f"goldpan; this goldpan ({__version__}) reads schema versions up to "
        f"{SCHEMA_VERSION}. Upgrade goldpan to open it."
    )


def split_sql(script: str) -> list[str]:
    """Split a migration script into statements (no statement contains ';' in a literal)."""
    statements = []
    for chunk in script.split(";"):
        lines = [ln for ln in chunk.splitlines() if ln.strip()]
        if lines:
            statements.append("\n".join(lines))
    return statements
