"""Writing output files safely: atomically, never onto a workspace or another database.

Every file goldpan writes (an export, a folder of exports) goes through this module:

* A file is written to a temporary file in the target's own folder, flushed and
  ``fsync``-ed, then renamed over the target (``os.replace``, atomic on POSIX), and the
  folder is ``fsync``-ed. A write that fails midway (disk full, ``ulimit -f``, a read-only
  folder) removes the temporary file: the old target, if any, is left as it was.
* A folder export is built in a temporary folder beside the target and renamed into place
  the same way.
* The target must not be the workspace (or its ``-wal``, ``-shm`` or ``-journal`` file),
  also through a symbolic or hard link, nor any SQLite database, nor a device, FIFO or
  socket (``/dev/full``). An existing target is replaced only when ``force`` is given;
  a folder only when it holds nothing but what the export itself writes.

Problems are :class:`~engine.formats.errors.IngestError` naming the target file.
"""

from __future__ import annotations

import contextlib
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


def is_sqlite(path: Path) -> bool:
    """True when ``path`` is a readable file that starts with SQLite's header."""
    try:
        with path.open("rb") as f:
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def check_target(
    target: Path, *, force: bool, protect: Iterable[Path] = (), folder: bool = False
) -> Path:
    """The path to write ``target`` at (symbolic links resolved), or why not.

    Args:
        target: the file (or, with ``folder``, the folder) to write.
        force: an existing target may be replaced.
        protect: workspace files that must never be written (their side files too).
        folder: the target is a folder.

    Raises:
        IngestError: the target is a protected file or a SQLite database, not a regular
            file (or folder), exists without ``force``, or its folder is missing.
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
    try:
        st = real.lstat()
    except FileNotFoundError:
        return real
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
            "is not a regular file (a device, FIFO or socket); goldpan writes regular files only",
        )
    if is_sqlite(real):
        raise IngestError(
            target,
            None,
            "is a SQLite database; goldpan never writes over one (choose another path)",
        )
    if not force:
        raise IngestError(target, None, "already exists; pass --force to replace it")
    return real


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
    target: Path, data: str | bytes, *, force: bool = False, protect: Iterable[Path] = ()
) -> Path:
    """Write ``data`` (text is UTF-8) to ``target`` atomically; returns the path written.

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
        os.chmod(tmp, 0o666 & ~_umask())
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
