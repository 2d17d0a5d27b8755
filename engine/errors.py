"""The one family of errors a user can act on; every other exception is a bug.

A front end (the CLI, the app, a served session) shows a :class:`GoldpanError`'s message
and goes on or exits 2; anything else is an internal error, reported as one line with its
traceback in a crash log (exit 3). The decision is made by this family, never by a
built-in type: a ``KeyError`` or a ``sqlite3.Error`` from a bug must not read as "your
input is wrong" (click's ``ClickException`` and pytest's ``UsageError`` work the same way).

Raise the subclass where the problem is found, with a message that names the file and
line, or the table and row, and says whether anything was written.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path


class GoldpanError(Exception):
    """Something the user can fix; the message says what, and where."""


class BadInput(GoldpanError):
    """An input file, argument or setting that cannot be used as it is.

    Not a ``ValueError``: code that calls the engine catches this class (or
    :class:`GoldpanError`) for a bad argument, so that a ``ValueError`` from a bug is never
    taken for one.
    """


class UnknownName(BadInput):
    """A name that is not in a registry or a workspace (a retriever, a tokenizer, a metric).

    The message lists the names there are. Not a ``KeyError``, for the same reason.
    """


class Unusable(GoldpanError):
    """A workspace or file that cannot be used as it is (damaged, or another program's)."""


class Refused(GoldpanError):
    """An action goldpan will not or cannot carry out now; nothing was written."""


class Busy(Refused):
    """Another program holds the workspace's write lock longer than goldpan waits."""


class DiskFull(Refused):
    """The disk is full; the write was rolled back."""


class WriteFailed(Refused):
    """The system failed a read or write (a quota, a file-size limit, a failing disk)."""


SQLITE_BUSY_CODES = frozenset({"SQLITE_BUSY", "SQLITE_LOCKED"})
SQLITE_DAMAGED_CODES = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


def _code_name(exc: sqlite3.Error) -> str:
    """``SQLITE_FULL`` for any extended code of it (``SQLITE_BUSY_SNAPSHOT`` -> BUSY)."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    return "_".join(name.split("_")[:2])


def from_sqlite(exc: sqlite3.Error, path: Path | str) -> GoldpanError | None:
    """The user condition an SQLite error stands for, or None when it is none (a bug).

    Recognised by SQLite's result code (``sqlite_errorcode``, never the message text):
    a lock held too long, a full disk, the system failing a write, a damaged file (and the
    one condition Python's sqlite3 reports without a code: text that is not UTF-8).
    Everything else that SQLite
    reports while goldpan runs its own SQL on its own, checked file is goldpan's fault.
    """
    name = _code_name(exc)
    if name in SQLITE_BUSY_CODES:
        return Busy(f"{path} is locked by another program ({exc}); nothing was written, try again")
    if name == "SQLITE_FULL":
        return DiskFull(disk_full_message(path, full_temp_folder(path)))
    if name == "SQLITE_IOERR":  # SQLite reports ENOSPC as FULL; EDQUOT and EFBIG as this
        return WriteFailed(
            f"{path}: the system failed a write or read of the file (SQLite reports: {exc}, "
            f"{exc.sqlite_errorname}); nothing was written (the change was rolled back). A "
            "full quota, a file-size limit or a failing disk does this; free some space and "
            "try again"
        )
    # Python's sqlite3 reads a text value that is not UTF-8 as this error, with no result
    # code (SQLite stored the bytes as given): the one condition known by its message.
    undecodable = isinstance(exc, sqlite3.OperationalError) and str(exc).startswith(
        "Could not decode to UTF-8"
    )
    if name in SQLITE_DAMAGED_CODES or undecodable:
        return Unusable(
            f"{path} is damaged (SQLite reports: {exc}); nothing was written. "
            f"`goldpan check {path}` lists every problem"
        )
    return None


def from_os_error(exc: OSError) -> GoldpanError | None:
    """A full disk (``ENOSPC``, ``EFBIG``, ``EDQUOT``) as :class:`DiskFull`; else None."""
    if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        if exc.filename is None:  # a write to an open file, or to a redirected output
            return DiskFull(
                "disk full while writing: nothing was committed to the workspace, but what "
                "goldpan printed to a redirected output may be cut short. Free some space "
                "and try again"
            )
        return DiskFull(disk_full_message(exc.filename))
    return None


def disk_full_message(path: Path | str, temp: Path | None = None) -> str:
    """What a full disk means for the file being written.

    ``temp``: the full disk is the one of SQLite's temporary files' folder
    (:func:`full_temp_folder`), not the file's own.
    """
    if temp is not None:
        return (
            f"{path}: disk full in {temp}, the folder for SQLite's temporary files (TMPDIR); "
            "nothing was written (the write was rolled back and the file is as it was). Free "
            "some space there, or set TMPDIR to a folder with room, and try again"
        )
    return (
        f"{path}: disk full; nothing was written (the write was rolled back and the file "
        "is as it was). Free some space and try again"
    )


ROOM_BYTES = 1 << 20
"""Less free space than this on a disk counts as full (SQLite's pages are a few KB)."""


def sqlite_temp_folder() -> Path | None:
    """The folder SQLite writes its temporary files in on Unix (a sort, a statement's undo).

    SQLite's own choice (``unixTempFileDir``): ``$SQLITE_TMPDIR``, ``$TMPDIR``,
    ``/var/tmp``, ``/usr/tmp``, ``/tmp``, ``.``: the first that is a folder this process
    may write in.
    """
    for folder in (
        os.environ.get("SQLITE_TMPDIR"),
        os.environ.get("TMPDIR"),
        "/var/tmp",
        "/usr/tmp",
        "/tmp",
        ".",
    ):
        if folder and os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK):
            return Path(folder)
    return None


def full_temp_folder(path: Path | str) -> Path | None:
    """SQLite's temporary folder when it, and not ``path``'s own disk, is the full one.

    A full ``TMPDIR`` fails a large sort or write with the same SQLITE_FULL as a full disk
    under the workspace: said of the workspace, it sent people to free the wrong disk.
    """
    temp = sqlite_temp_folder()
    if temp is None:
        return None
    try:
        temp_free = shutil.disk_usage(temp).free
        own_free = shutil.disk_usage(Path(path).absolute().parent).free
    except OSError:
        return None
    return temp if temp_free < ROOM_BYTES <= own_free else None
