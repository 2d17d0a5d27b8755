"""Writing output files safely: atomically, never onto a workspace or another database.

Every file goldpan writes (an export, a folder of exports, a snapshot, the trust record,
serve's links, a new workspace built by ``merge`` or ``demo``) goes through this module,
the only one that renames files (a test holds the rest of goldpan to that):

* A file is written to a temporary file in the target's own folder, flushed and
  ``fsync``-ed, then renamed over the target (``os.replace``, atomic on POSIX), and the
  folder is ``fsync``-ed. A write that fails midway (disk full, ``ulimit -f``, a read-only
  folder) removes the temporary file: the old target, if any, is left as it was.
* A folder export is built in a temporary folder beside the target and renamed into place
  the same way; so is a SQLite file (:func:`atomic_database`), which without ``replace``
  is linked into place and so never lands on a file that appeared meanwhile.
* The target must not be the workspace (or its ``-wal``, ``-shm`` or ``-journal`` file),
  also through a symbolic or hard link, nor any SQLite database, nor a device, FIFO or
  socket (``/dev/full``). An existing target is replaced only when ``force`` is given;
  a folder only when it holds nothing but what the export itself writes. A file is never
  written through a symbolic link onto the link's target: ``force`` replaces the link.
* Before a file is read, :func:`not_regular` tells a FIFO, device or socket, which
  ``open()`` would block on or read forever, from a regular file (by ``stat``, never
  opening it).

Problems are :class:`~engine.formats.errors.IngestError` naming the target file.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from engine.formats.errors import IngestError

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

_SIDE_FILES = ("", "-wal", "-shm", "-journal")

NAME_MAX = 255
"""The longest file name (in bytes) the usual file systems accept."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _why(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "neither a file nor a folder"


def not_regular(path: Path) -> str | None:
    """Why ``path`` (symbolic links followed) is not a regular file, or None.

    The reason reads "is not a regular file (a FIFO)"; None when ``path`` is a regular file
    or missing (the caller's open then says so). Checked by ``stat``, never by opening it:
    opening a FIFO blocks until a writer comes, and a device reads forever.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISREG(st.st_mode):
        return None
    return f"is not a regular file ({_kind(st.st_mode)})"


def is_sqlite(path: Path) -> bool:
    """True when ``path`` is a readable file that starts with SQLite's header.

    A file this process holds a connection to is SQLite, and is not opened here: closing a
    plain descriptor of it would drop that connection's locks (:mod:`engine.workspace.held`).
    """
    from engine.workspace import held

    with held.plain_read_allowed(path) as plain:
        if not plain:
            return True
        try:
            with path.open("rb") as f:
                return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
        except OSError:
            return False


def check_target(
    target: Path,
    *,
    force: bool,
    protect: Iterable[Path] = (),
    folder: bool = False,
    database: bool = False,
) -> Path:
    """The path to write ``target`` at, or why not.

    Symbolic links in the folders are resolved. A file's own name that is a symbolic link
    is never written through: it exists (``force`` replaces the link itself), and what it
    points to must still pass every check below (it is never the workspace, a database or
    a device). A folder or a database is written where its links lead.

    Args:
        target: the file (or, with ``folder``, the folder) to write.
        force: an existing target may be replaced.
        protect: workspace files that must never be written (their side files too).
        folder: the target is a folder.
        database: the target is a SQLite file that the caller has identified as its own:
            an existing target must be one (and nothing else is replaced).

    Raises:
        IngestError: the target is a protected file or a SQLite database (without
            ``database``; with it, anything else), not a regular file (or folder), exists
            without ``force``, or its folder is missing.
    """
    real = _real(target)
    for ws in protect:
        ws_real = _real(ws)
        for suffix in _SIDE_FILES:
            side = ws_real.with_name(ws_real.name + suffix)
            same = real == side
            if not same and side.exists() and real.exists():
                with contextlib.suppress(OSError):
                    same = os.path.samefile(real, side)  # a hard link
            if same:
                raise IngestError(
                    target,
                    None,
                    f"is the workspace {ws}{suffix and ' ' + suffix[1:] + ' file'}; "
                    "choose another output path (goldpan never writes over a workspace)",
                )
            if folder and ws_real.is_relative_to(real) and real.exists():
                raise IngestError(
                    target, None, f"holds the workspace {ws}; choose an output folder of its own"
                )
    name = real.name.encode("utf-8", "surrogateescape")
    if len(name) > NAME_MAX:
        raise IngestError(
            target, None, f"the file name is {len(name)} bytes long; file systems allow {NAME_MAX}"
        )
    parent = real.parent
    if not parent.is_dir():
        raise IngestError(target, None, f"no such folder {parent}; create it first")
    # a file is written at a symbolic link's own place, never through it onto its target
    # (a link planted in a checkout, reports/out.xml -> ../src/search.py, must not turn a
    # report into that file): with force the link itself is replaced
    link = not folder and not database and os.path.islink(target)
    at = _real(target.parent) / target.name if link else real
    if link and not force:
        raise IngestError(
            target,
            None,
            f"already exists (a symbolic link to {os.readlink(target)}); pass --force to "
            "replace the link itself (goldpan never writes through a link onto its target)",
        )
    try:
        st = real.lstat()
    except FileNotFoundError:
        return at
    except OSError as exc:
        raise IngestError(target, None, f"cannot be checked: {_why(exc)}") from None
    if folder:
        if not stat.S_ISDIR(st.st_mode):
            raise IngestError(target, None, "is a file; this format writes a folder")
        return real
    if stat.S_ISDIR(st.st_mode):
        raise IngestError(target, None, "is a folder; this format writes a file")
    if not stat.S_ISREG(st.st_mode):
        raise IngestError(
            target,
            None,
            f"is not a regular file ({_kind(st.st_mode)}); goldpan writes regular files "
            "only (it was left as it is)",
        )
    if database and not is_sqlite(real):
        raise IngestError(
            target,
            None,
            "exists and is not a SQLite database; goldpan replaces only its own workspace "
            "there (it was left as it is; choose another path)",
        )
    if not database and is_sqlite(real):
        raise IngestError(
            target,
            None,
            "is a SQLite database; goldpan never writes over one (choose another path)",
        )
    if not force:
        raise IngestError(target, None, "already exists; pass --force to replace it")
    return at


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # some platforms cannot open a folder; the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(
    target: Path,
    data: str | bytes,
    *,
    force: bool = False,
    protect: Iterable[Path] = (),
    mode: int | None = None,
) -> Path:
    """Write ``data`` (text is UTF-8) to ``target`` atomically; returns the path written.

    The new file's permissions are ``mode`` when given (``0o600``: readable by the user
    only, from its creation on), else the usual ``0o666`` less the umask.

    Raises:
        IngestError: see :func:`check_target`; or the write failed (the message says why;
            the old file is intact and no temporary file is left).
    """
    real = check_target(target, force=force, protect=protect)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{real.name[:60]}.", suffix=".tmp", dir=real.parent
        )
    except OSError as exc:
        raise IngestError(target, None, f"cannot write in {real.parent}: {_why(exc)}") from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())
        os.replace(tmp, real)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        kept = f"{target} is unchanged" if real.exists() else "nothing was written"
        raise IngestError(target, None, f"writing failed ({_why(exc)}); {kept}") from None
    _fsync_dir(real.parent)
    return real


def fsync_file(path: Path) -> None:
    """Flush a file written by other means to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_folder(
    target: Path,
    *,
    force: bool = False,
    protect: Iterable[Path] = (),
    owned: Callable[[Path], bool] = lambda p: False,
) -> Iterator[Path]:
    """A temporary folder beside ``target`` to fill; renamed to ``target`` on success.

    An existing ``target`` is replaced only with ``force``, and only when every entry in
    it is ``owned`` (one the export writes: relative path given), so that ``--out .``
    can never delete unrelated files. An empty folder is replaced without ``force``.
    Every file in the new folder is ``fsync``-ed before the rename.

    Raises:
        IngestError: see :func:`check_target`; an existing folder holding other files;
            or writing failed (the old folder is intact, the temporary one removed).
    """
    real = check_target(target, force=force, protect=protect, folder=True)
    existing = real.exists()
    if existing:
        entries = sorted(p.relative_to(real) for p in real.rglob("*"))
        if entries and not force:
            raise IngestError(target, None, "already exists; pass --force to replace it")
        stray = [e for e in entries if not owned(e)]
        if stray:
            raise IngestError(
                target,
                None,
                f"holds {stray[0]}, which this export does not write; "
                "choose an empty or new folder",
            )
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{real.name[:60]}.", suffix=".tmp", dir=real.parent))
    except OSError as exc:
        raise IngestError(target, None, f"cannot write in {real.parent}: {_why(exc)}") from None
    old: Path | None = None
    try:
        yield tmp
        for p in tmp.rglob("*"):
            if p.is_file():
                fsync_file(p)
        os.chmod(tmp, 0o777 & ~_umask())
        if existing:
            old = Path(
                tempfile.mkdtemp(prefix=f".{real.name[:60]}.", suffix=".old", dir=real.parent)
            )
            os.replace(real, old)
        try:
            os.replace(tmp, real)
        except OSError:
            if old is not None:
                os.replace(old, real)  # put the old folder back
                old = None
            raise
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        kept = f"{target} is unchanged" if real.exists() else "nothing was written"
        raise IngestError(target, None, f"writing failed ({_why(exc)}); {kept}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(real.parent)


_DB_FILES = ("", "-wal", "-shm", "-journal")


def _unlink_db(path: Path) -> None:
    for suffix in _DB_FILES:
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _db_temp_prefix(real: Path, label: str) -> str:
    return f".{real.name[:60]}.{label}-"


def _remove_stale_temps(real: Path, label: str) -> None:
    """Remove temp files of earlier builds of ``real`` whose process has ended."""
    prefix = _db_temp_prefix(real, label)
    for found in real.parent.glob(f"{glob.escape(prefix)}*.tmp"):
        pid = found.name[len(prefix) : -len(".tmp")]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            _unlink_db(found)
        except OSError:
            continue  # alive (another user's process): leave it


def _publish_db(
    tmp: Path,
    real: Path,
    target: Path,
    *,
    replace: bool,
    before_replace: Callable[[], None] | None = None,
) -> None:
    fsync_file(tmp)
    if replace and real.exists():
        if before_replace is not None:
            before_replace()
        # the old file's side files belong to it: a -wal left beside the new file would
        # be replayed into it
        for suffix in _DB_FILES[1:]:
            Path(f"{real}{suffix}").unlink(missing_ok=True)
        os.replace(tmp, real)
    else:
        try:
            os.link(tmp, real)  # fails if the target exists: no clobbering, unlike rename
        except FileExistsError:
            raise IngestError(
                target, None, "appeared while goldpan built it; it was left as it is"
            ) from None
        except OSError:  # a file system without hard links
            if real.exists():
                raise IngestError(
                    target, None, "appeared while goldpan built it; it was left as it is"
                ) from None
            os.replace(tmp, real)
        else:
            tmp.unlink()
    _fsync_dir(real.parent)


@contextlib.contextmanager
def atomic_database(
    target: Path,
    *,
    protect: Iterable[Path] = (),
    replace: bool = False,
    label: str = "building",
    before_replace: Callable[[], None] | None = None,
) -> Iterator[Path]:
    """A temporary path beside ``target`` to build a SQLite file at; moved to ``target``.

    The caller creates the database at the path it is given, fills it and closes it
    (checkpointed: nothing left in a ``-wal``, which is not moved) before the block ends.
    Without ``replace`` the target must not exist, and the file is linked into place, so a
    file that appeared meanwhile is never written over. With ``replace`` an existing target
    must be a SQLite file, which the caller has checked is its own (a goldpan workspace);
    its ``-wal``, ``-shm`` and ``-journal`` files are removed and the new file renamed over
    it, right after ``before_replace`` (which may raise to keep the target as it is) is
    called. If the block fails, the temporary file is removed and the target is unchanged; a
    build killed half-way leaves ``.NAME.LABEL-PID.tmp``, which the next build of the same
    target removes once that process has ended.

    Raises:
        IngestError: see :func:`check_target` (a protected file, a device, FIFO or socket,
            a file that is not a database, or a missing folder); a target that appeared
            while the database was built.
    """
    real = check_target(target, force=replace, protect=protect, database=True)
    _remove_stale_temps(real, label)
    tmp = real.with_name(f"{_db_temp_prefix(real, label)}{os.getpid()}.tmp")
    _unlink_db(tmp)
    done = False
    try:
        yield tmp
        _publish_db(tmp, real, target, replace=replace, before_replace=before_replace)
        done = True
    finally:
        if not done:
            _unlink_db(tmp)
