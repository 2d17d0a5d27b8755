"""A team's own judge, run as a command: JSON lines in, one grade per line out.

The protocol (``goldpan judge --command``): the command is started once, not through a
shell, and reads one JSON object per line on stdin, ``{"question_id", "question",
"doc_id", "title", "text"}``; it prints one line per line read, in the same order: the
grade 0-3, as a bare number or as ``{"grade": N}``. Whether it may run at all is the
trust rule's (:func:`engine.judges.run.check_runnable`), not this module's.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shlex
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import IO

from engine.errors import BadInput
from engine.formats.errors import IngestError
from engine.formats.jsontext import load_json
from engine.grades import GRADE_RANGE, GRADES
from engine.retrieve.base import RetrieverError
from engine.types import TIMEOUT_RANGE, Doc, ModelJudge, Question

Progress = Callable[[str, int, int], None]
"""``(what, done, total)``, as the CLI's progress bar takes it."""

COMMAND_TIMEOUT_S = 3600.0
"""How long a command judge may take for one run, by default."""
MAX_LINE_CHARS = 64 * 1024
"""The longest output line read as a grade (a grade is a few characters; a longer line is
refused without being held whole)."""
STDERR_LINES = 20
"""The last lines of the judge's standard error kept, to quote when it fails."""


def command_argv(command: str) -> list[str]:
    """The command's words (split as a shell would, run without one), checked."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise BadInput(f"cannot split the command {command!r}: {exc}") from None
    if not argv:
        raise BadInput('a command judge needs --command "CMD"')
    return argv


def command_grades(
    judge: ModelJudge,
    pairs: Sequence[tuple[Question, Doc]],
    progress: Progress | None = None,
    timeout: float = COMMAND_TIMEOUT_S,
) -> list[int]:
    """Run a command judge once over every pair; its grade of each, in order.

    The pairs are written on its standard input by a thread while its answers are read
    line by line (a judge may answer as it reads), so the progress moves with them.

    Raises:
        RetrieverError: the program cannot start, exits non-zero, takes longer than
            ``timeout``, or prints a line that is not a grade (named by its number), or
            too few or too many lines.
    """
    name = f"command judge {judge.annotator}"
    argv = command_argv(judge.model)
    low, high = TIMEOUT_RANGE
    if not (math.isfinite(timeout) and low <= timeout <= high):
        raise BadInput(f"{name}: a timeout is from {low:g} to {high:,.0f} seconds, not {timeout!r}")
    if not pairs:
        return []
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,  # its own process group: the deadline ends all of it
        )
    except FileNotFoundError:
        raise RetrieverError(f"{name}: no such program {argv[0]!r}") from None
    except PermissionError:
        raise RetrieverError(f"{name}: {argv[0]!r} is not executable") from None
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines = [
        json.dumps(
            {
                "question_id": q.id,
                "question": q.text,
                "doc_id": d.id,
                "title": d.title,
                "text": d.text,
            },
            ensure_ascii=False,
        )
        + "\n"
        for q, d in pairs
    ]
    stderr: deque[str] = deque(maxlen=STDERR_LINES)
    timed_out = threading.Event()
    threads = [
        threading.Thread(target=_feed, args=(proc.stdin, lines), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, stderr), daemon=True),
    ]
    for t in threads:
        t.start()
    watchdog = threading.Timer(timeout, _kill, args=(proc, timed_out))
    watchdog.daemon = True
    watchdog.start()
    label = f"{judge.annotator}: grading pairs"
    grades: list[int] = []
    problem: str | None = None
    try:
        # read to the end, so the program is not stopped by a full pipe, each line at most
        # MAX_LINE_CHARS at a time: the rest of a longer line is read and dropped
        for n, raw, whole in _lines(proc.stdout):
            if problem is not None:
                continue
            if n > len(pairs):
                problem = f"{name} output line {n}: more lines than the {len(pairs)} pairs sent"
                continue
            grade = _grade_line(raw) if whole else None
            if grade is None:
                shown = raw.strip()[:80] + ("" if whole else "…")
                problem = (
                    f"{name} output line {n}: expected a grade {GRADE_RANGE} (a number, or "
                    f'{{"grade": N}}), got {shown!r}'
                )
                continue
            grades.append(grade)
            if progress is not None and (n % 50 == 0 or n == len(pairs)):
                progress(label, n, len(pairs))
        code = proc.wait()
    finally:
        watchdog.cancel()
        _kill_group(proc)
        proc.wait()
        for t in threads:
            t.join(timeout=5)
    if timed_out.is_set():
        raise RetrieverError(f"{name}: no answer within {timeout:g} s (set --timeout)")
    if code != 0:
        tail = "\n".join("".join(stderr).strip().splitlines()[-5:])
        raise RetrieverError(f"{name} exited with status {code}" + (f":\n{tail}" if tail else ""))
    if problem is not None:
        raise RetrieverError(problem)
    if len(grades) != len(pairs):
        raise RetrieverError(
            f"{name} answered {len(grades)} of the {len(pairs)} pairs sent (one line each)"
        )
    return grades


def _feed(stdin: IO[str], lines: Sequence[str]) -> None:
    try:
        for line in lines:
            stdin.write(line)
        stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass  # the program stopped reading: its exit status says why


def _lines(stream: IO[str]) -> Iterator[tuple[int, str, bool]]:
    """``(number, line, whole)`` of each output line, at most :data:`MAX_LINE_CHARS` held.

    A longer line gives its first :data:`MAX_LINE_CHARS` characters with ``whole`` false;
    the rest of it is read and dropped.
    """
    n, dropping = 0, False
    for raw in iter(lambda: stream.readline(MAX_LINE_CHARS + 1), ""):
        ended = raw.endswith("\n")
        if dropping:
            dropping = not ended
            continue
        n += 1
        whole = ended or len(raw) <= MAX_LINE_CHARS
        dropping = not whole
        yield n, raw, whole


def _drain(stream: IO[str], into: deque[str]) -> None:
    with contextlib.suppress(OSError, ValueError):
        for _, line, _ in _lines(stream):
            into.append(line)


def _kill(proc: subprocess.Popen[str], flag: threading.Event) -> None:
    flag.set()
    _kill_group(proc)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """End the judge and whatever it started (its session's process group)."""
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)


def _grade_line(raw: str) -> int | None:
    """The grade a line gives (a number 0-3, or ``{"grade": N}``), or None."""
    try:
        value = load_json(raw.strip(), "a judge's line")
    except IngestError:  # not JSON, nested too deeply, a number of 5,000 digits
        return None
    if isinstance(value, dict):
        value = value.get("grade")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value not in GRADES:  # NaN, 1e309 and 2.5 are not grades; 2.0 is 2
        return None
    return int(value)
