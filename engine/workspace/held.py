"""The database files this process holds a connection to, so that nothing here drops locks.

SQLite's locks are POSIX advisory locks: they belong to a process and a file, and closing
*any* descriptor of that file in the process drops all of them ("How To Corrupt An SQLite
Database File", section 2.2). A process that holds a workspace connection and then opens
and closes the same file with ``open()`` loses its locks without knowing. The next process
to close a connection then takes itself for the last one, checkpoints and deletes the
``-wal`` and ``-shm`` files, and the first process goes on writing labels into deleted
files: shown as saved, seen by no one, gone with the process.

SQLite's own connections are safe among themselves: connections in one process share one
record of each file's locks, and SQLite defers closing a descriptor while another of its
connections holds a lock. So the rule is: while this process holds a connection to a file,
it reads that file (and its side files) only through SQLite. Every connection goldpan
opens is registered here (:func:`connect`), and code that would read a file with a plain
descriptor asks :func:`plain_read_allowed` first, under :data:`LOCK`, which also orders it
against a connection being opened in another thread.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

BUSY_TIMEOUT_S = 30.0
"""How long a connection waits for another's write lock before it gives up (a batch job)."""

INTERACTIVE_BUSY_TIMEOUT_S = 5.0
"""The same for a connection a person waits on (the app's): a grade that cannot get the
lock in this time is reported as not saved, rather than freezing the screen for 30 s."""

LOCK = threading.RLock()
"""Held while a connection is opened and registered, and while a file is read plainly."""

_held: collections.Counter[tuple[int, int]] = collections.Counter()
_sound: set[tuple[int, int]] = set()
"""Files a connection of this process found sound while the process kept them open."""


def file_key(path: Path) -> tuple[int, int] | None:
    """Which file ``path`` names now (device and inode), or None when it names none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def is_held(path: Path) -> bool:
    """Whether a connection of this process is open on the file at ``path`` (any link)."""
    key = file_key(path)
    with LOCK:
        return key is not None and _held[key] > 0


def holding_any() -> bool:
    """Whether this process has a connection open on any database file."""
    with LOCK:
        return bool(_held)


def is_sound(path: Path) -> bool:
    """Whether a connection of this process passed the soundness gate on this file.

    Kept while the process holds the file open without a break, as one long-lived
    connection keeps its own pass: a pooling worker's connection, or one whose checks ran
    behind on another connection (``check_soundness_behind``), need not read every page
    again.
    """
    key = file_key(path)
    with LOCK:
        return key is not None and key in _sound and _held[key] > 0


def mark_sound(path: Path) -> None:
    """Record that the file passed the soundness gate (see :func:`is_sound`)."""
    key = file_key(path)
    with LOCK:
        if key is not None and _held[key] > 0:
            _sound.add(key)


@contextlib.contextmanager
def plain_read_allowed(path: Path) -> Iterator[bool]:
    """True inside when ``path`` may be opened with a plain descriptor and closed again.

    It may when no connection of this process is open on that file. The check and the
    read that follows happen under :data:`LOCK`, so no other thread opens a connection to
    the file in between.
    """
    with LOCK:
        yield not is_held(path)


_DMS_BYTE = 128
"""SQLite's "dead man switch" in the ``-shm`` file: every connection of every process that
has the file open in WAL mode holds a shared lock on this byte (unix VFS: 120 + 8 locks)."""


def open_elsewhere(path: Path) -> bool:
    """Whether another process has the workspace at ``path`` open (SQLite's WAL mode).

    Asks for a write lock on the ``-shm`` file's dead-man-switch byte, without waiting, and
    lets it go at once: it is refused exactly while some connection holds the file open.
    Only when no connection of this process is open on it (the plain descriptor closed here
    would drop that connection's locks).
    """
    shm = path.with_name(path.name + "-shm")
    with LOCK:
        if is_held(path):
            raise RuntimeError(f"{path} is open in this process; ask before opening it")
        try:
            fd = os.open(shm, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return False  # no -shm: no connection has it open in WAL mode
        except OSError:
            return True  # a -shm that cannot be opened (a link, say): it may be in use
        try:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _DMS_BYTE)
            except OSError:
                return True
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, _DMS_BYTE)
            return False
        finally:
            os.close(fd)


def data_version(conn: sqlite3.Connection) -> int:
    """SQLite's ``PRAGMA data_version`` on ``conn``: moved by other connections' commits.

    This connection's own commits leave it as it was.
    """
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def connect(
    path: Path, uri: str | None = None, **kwargs: Any
) -> tuple[sqlite3.Connection, Callable[[], None]]:
    """An SQLite connection to ``path`` (or ``uri``) and the function that forgets it.

    Call the returned function right after closing the connection.
    """
    with LOCK:
        conn = sqlite3.connect(uri or str(path), uri=uri is not None, **kwargs)
        key = file_key(path)
        if key is not None:
            _held[key] += 1
    released = False

    def release() -> None:
        nonlocal released
        if released or key is None:
            return
        released = True
        with LOCK:
            _held[key] -= 1
            if _held[key] <= 0:
                del _held[key]
                _sound.discard(key)

    return conn, release
