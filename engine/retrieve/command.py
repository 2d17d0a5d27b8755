"""The team's own search engine as a retriever: a command that answers with a TREC run.

Once per pool run the command is started (not through a shell: wrap it in ``sh -c '…'``
for pipes or variables), is sent the questions to rank as JSON lines ``{"id", "text"}``
on its standard input, and must print TREC run lines ``qid Q0 docno rank score tag`` on
its standard output (blank lines and ``#`` comments are skipped). Rankings are re-derived
from the score column the trec_eval way (score descending, then doc id descending); the
rank column is ignored. A question the command does not answer gets an empty ranking.

Bad output is an error that names the output line and what was expected; so are a
non-zero exit (with the end of its standard error), a timeout, a question id that was not
asked, a document unknown to the workspace and a document listed twice for one question.

The command runs the team's own code, which can change while the corpus, the questions
and the command text stay the same. So its rankings are made again on every pool unless
it declares what its output depends on (:func:`cache_key`): ``cache_key_files`` (files or
folders whose contents are hashed) or ``cache_key_command`` (a command whose output is
hashed, e.g. ``git rev-parse HEAD:src/search``); that hash is then part of its cached
rankings' input hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import stat
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from engine.errors import BadInput
from engine.formats.errors import IngestError
from engine.formats.trec import parse_trec_run
from engine.retrieve.base import PrepareEnv, Ranking, RetrieverError
from engine.retrieve.checked import Hit, checked_ranking
from engine.retrieve.params import PATHS, Param, resolve, timeout
from engine.types import Doc, Question, RetrieverSpec

DEFAULT_TIMEOUT_S = 600.0
TIMEOUT = timeout(DEFAULT_TIMEOUT_S, "a pool run may take")
"""``--timeout``: the whole run of the command, for a pool's questions."""
CACHE_KEY_TIMEOUT_S = 60.0
"""How long a ``cache_key_command`` may take."""
SKIPPED_IN_CACHE_KEY = frozenset({"__pycache__", ".git", ".hg", ".svn", ".mypy_cache"})
"""Folders left out of ``cache_key_files`` (written by running or versioning the code)."""


def parse_run_output(
    text: str, questions: Sequence[str], docs: set[str] | None, source: str, depth: int
) -> list[Ranking]:
    """Each question's ranking from a command's TREC run output, every line checked.

    The lines are read as a run file is (:func:`~engine.formats.trec.parse_trec_run`),
    then each question's are one outside answer
    (:func:`~engine.retrieve.checked.checked_ranking`). A question the output does not
    answer gets an empty ranking.

    Raises:
        RetrieverError: the first bad line, named as ``source line N``.
    """
    if not text.strip():
        return [([], []) for _ in questions]
    try:
        lines = parse_trec_run(text, source)
    except IngestError as exc:
        where = f"{source} line {exc.line}" if exc.line is not None else source
        raise RetrieverError(f"{where}: {exc.message}") from None
    asked: dict[str, list[Hit]] = {q: [] for q in questions}
    for r in lines:
        if r.question_id not in asked:
            raise RetrieverError(
                f"{source} line {r.line}: question {r.question_id!r} was not asked"
            )
        asked[r.question_id].append((f"line {r.line}", r.doc_id, r.score))
    return [
        checked_ranking(asked[q], depth, docs, lambda what: RetrieverError(f"{source} {what}"))
        for q in questions
    ]


class CommandRetriever:
    """Runs a command once per pool; it answers every question with a TREC run."""

    PARAMS: tuple[Param, ...] = (
        Param(
            "command",
            str,
            None,
            "reads JSON lines, prints a TREC run",
            required=True,
            metavar="CMD",
        ),
        TIMEOUT,
        Param(
            "cache_key_files",
            PATHS,
            None,
            "files or folders the command's output depends on: their contents are hashed "
            "and its rankings are cached while they are unchanged (default: ranked again "
            "on every score, compare and pool)",
            metavar="PATH",
        ),
        Param(
            "cache_key_command",
            str,
            None,
            "a command whose output says which version of the code runs (e.g. `git "
            "rev-parse HEAD:src/search`): cached while it prints the same",
            metavar="CMD",
        ),
    )
    """The parameters of the ``command`` kind."""

    bases: tuple[str, ...] = ()
    base_depth: int | None = None
    batch_size = 1_000_000
    key_words = "cache key"

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the command line and the timeout."""
        self.spec = spec
        command = str(spec.params.get("command") or "").strip()
        if not command:
            raise BadInput('a command retriever needs --command "CMD"')
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise BadInput(f"cannot split the command {command!r}: {exc}") from None
        self.timeout: float = resolve((TIMEOUT,), spec.params, "command")["timeout"]
        for path in spec.params.get("cache_key_files") or []:
            if not isinstance(path, str) or not path.strip():
                raise BadInput("a command retriever's --cache-key-files are paths")
        key_command = spec.params.get("cache_key_command")
        if key_command is not None:
            try:
                if not shlex.split(str(key_command)):
                    raise BadInput("--cache-key-command is empty")
            except ValueError as exc:
                raise BadInput(f"cannot split the --cache-key-command: {exc}") from None
        self._docs: set[str] | None = None

    def cache_key(self) -> str | None:
        """What the command's output depends on (see the module function :func:`cache_key`)."""
        return cache_key(self.spec)

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Remember the corpus's doc ids (the command's answers are checked against them)."""
        self._docs = {d.id for d in docs}

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Run the command once for all ``questions``."""
        if not questions:
            return []
        stdin = "".join(
            json.dumps({"id": q.id, "text": q.text}, ensure_ascii=False) + "\n" for q in questions
        )
        name = f"command retriever {self.spec.name}"
        try:
            done = subprocess.run(
                self.argv,
                input=stdin,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError:
            raise RetrieverError(f"{name}: no such program {self.argv[0]!r}") from None
        except PermissionError:
            raise RetrieverError(f"{name}: {self.argv[0]!r} is not executable") from None
        except subprocess.TimeoutExpired:
            raise RetrieverError(
                f"{name}: no answer within {self.timeout:g} s (set --timeout)"
            ) from None
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            raise RetrieverError(
                f"{name} exited with status {done.returncode}" + (f":\n{tail}" if tail else "")
            )
        return parse_run_output(
            done.stdout, [q.id for q in questions], self._docs, f"{name} output", depth
        )


def declares_cache_key(spec: RetrieverSpec) -> bool:
    """Whether a command retriever says what its output depends on."""
    return bool(spec.params.get("cache_key_files")) or bool(spec.params.get("cache_key_command"))


def cache_key(spec: RetrieverSpec) -> str | None:
    """The hash of what a command retriever's output depends on, or None.

    None when it declares nothing: its rankings cannot be vouched for and are made again
    on every run.

    Files and folders are read as they are now (relative paths from the current folder,
    as the command itself runs); a folder's files are hashed with their relative paths,
    symbolic links followed, leaving out ``__pycache__`` and version-control folders.
    The cache-key command runs as the command does (no shell) and its standard output
    is hashed.

    Raises:
        RetrieverError: a path that does not exist; a file or folder that cannot be read
            (a broken link, no permission); a FIFO or device among the files; or a
            cache-key command that failed.
    """
    if not declares_cache_key(spec):
        return None
    name = f"command retriever {spec.name}"
    h = hashlib.sha256()
    for raw in spec.params.get("cache_key_files") or []:
        path = Path(raw)
        if not path.exists():
            raise RetrieverError(
                f"{name}: its cache key file {raw!r} does not exist (from {Path.cwd()})"
            )
        h.update(b"path\0" + raw.encode("utf-8", "surrogatepass") + b"\0")
        for file in _files(path, name):
            h.update(str(file.relative_to(path)).encode("utf-8", "surrogatepass") + b"\0")
            h.update(_file_digest(file, name))
    command = spec.params.get("cache_key_command")
    if command:
        argv = shlex.split(str(command))
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                timeout=CACHE_KEY_TIMEOUT_S,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (FileNotFoundError, PermissionError):
            raise RetrieverError(f"{name}: cannot run its cache key command {command!r}") from None
        except subprocess.TimeoutExpired:
            raise RetrieverError(
                f"{name}: its cache key command gave no answer in {CACHE_KEY_TIMEOUT_S:g} s"
            ) from None
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise RetrieverError(
                f"{name}: its cache key command {command!r} exited with status "
                f"{done.returncode}" + (":\n" + "\n".join(tail) if tail else "")
            )
        h.update(b"command\0" + done.stdout)
    return h.hexdigest()


def _files(path: Path, name: str) -> list[Path]:
    """``path`` itself, or a folder's files in a stable order, symbolic links followed.

    The code a key names is often reached through a link (``src/mysearch -> ../lib``): a
    linked folder is walked like any other, once (a link back up the tree is not walked
    again). A folder that cannot be read is an error, never left out of the key.

    Raises:
        RetrieverError: a folder that cannot be listed.
    """
    if not path.is_dir():
        return [path]
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()

    def refuse(exc: OSError) -> NoReturn:
        raise RetrieverError(
            f"{name}: cannot read its cache key folder {exc.filename}: {exc.strerror}"
        )

    for folder, dirs, files in os.walk(path, onerror=refuse, followlinks=True):
        try:
            st = os.stat(folder)
        except OSError as exc:
            refuse(exc)
        if (st.st_dev, st.st_ino) in seen:  # a link to a folder walked already
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_IN_CACHE_KEY)
        found += [Path(folder) / f for f in sorted(files) if not f.endswith(".pyc")]
    return found


def _file_digest(file: Path, name: str) -> bytes:
    """The SHA-256 of a regular file's contents (links followed).

    A FIFO or a device is refused before it is read (reading one would block, or never
    end); a file that vanished or cannot be read is an error: a key that silently left
    it out would read as "unchanged" while the code changed.

    Raises:
        RetrieverError: not a regular file, missing (a broken link), or unreadable.
    """
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise RetrieverError(
            f"{name}: cannot read its cache key file {file}: {exc.strerror}"
        ) from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
            raise RetrieverError(
                f"{name}: its cache key file {file} is {kind}, not a regular file; name "
                "the files the command's output depends on"
            )
        try:
            return hashlib.file_digest(f, "sha256").digest()
        except OSError as exc:
            raise RetrieverError(
                f"{name}: cannot read its cache key file {file}: {exc.strerror}"
            ) from None
