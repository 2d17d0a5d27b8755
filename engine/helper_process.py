"""A helper process of goldpan's own: ``python -P -m MODULE`` over pipes, never outliving us.

How goldpan starts a Python of its own is decided here, once (:func:`python_argv`,
:func:`helper_env`, :func:`python_shell_command`): this Python, with its safe path (``-P``:
the current folder is never put first on ``sys.path``), running one of goldpan's own
modules, with the folder this ``engine`` package is in first on ``PYTHONPATH``. A folder
that holds an ``engine/``, ``tui/`` or ``goldpan/`` package of its own (an unpacked
dataset, a cloned repository) is then never imported in goldpan's place, whatever folder
goldpan was started in. Every process goldpan starts with ``sys.executable`` starts so:
the helpers below, and ``goldpan serve``'s preloader and tabs (:mod:`tui.serve.server`).

Kiwi's tokenizing for the terminal app runs in a process of its own
(:mod:`engine.kiwi_helper`). It starts and ends this way:

* the helper is this Python running one of goldpan's own modules, started as above (the
  same code as the parent's);
* it reads its requests on its standard input and answers on its standard output, and
  ends when its standard input ends: when the parent closes it, or when the parent's
  process dies, however it dies;
* what it writes to its standard error (a warning, a traceback) is read by a thread into
  memory, never to the parent's terminal nor to a file, and its last line is quoted when
  the helper fails;
* it runs in a session of its own, so a terminal's Ctrl-C is the parent's to handle.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import IO


def python_argv(module: str, *args: str) -> list[str]:
    """The command line of a Python of goldpan's own running ``module`` with ``args``.

    ``-P`` (Python's safe path, 3.11): ``python -m`` would otherwise put the current folder
    first on ``sys.path``, and a folder holding an ``engine/`` or ``tui/`` package would
    run its code in goldpan's place. Run it with :func:`helper_env`'s environment, which
    puts goldpan's own folder on the path instead.
    """
    return [sys.executable, "-P", "-m", module, *args]


def helper_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this environment) with goldpan's own folder first on the path.

    The folder this ``engine`` package is in goes first on ``PYTHONPATH``: the helper
    imports the same goldpan as this process.
    """
    env = dict(os.environ if base is None else base)
    root = str(Path(__file__).resolve().parent.parent)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = root if not path else os.pathsep.join([root, path])
    return env


def python_shell_command(module: str, *args: str) -> str:
    """:func:`python_argv` as a POSIX shell command line that becomes that process.

    For a program that runs its command through a shell and cannot be given an
    environment (textual-serve): ``exec env PYTHONPATH=… python -P -m MODULE ARGS``.
    ``exec`` makes Python the process the caller watches, not a shell.
    """
    path = "PYTHONPATH=" + helper_env()["PYTHONPATH"]
    return "exec " + shlex.join(["env", path, *python_argv(module, *args)])


class HelperFailed(RuntimeError):
    """A helper process could not start, or ended, or answered what it should not.

    Not a :class:`~engine.errors.GoldpanError`: nothing the user gave is wrong (a helper
    works on what the workspace already holds).
    """


class HelperProcess:
    """The parent's side of one helper process: started on demand, asked under a lock."""

    module = ""
    """The module the helper runs (``python -P -m MODULE``, see :func:`python_argv`)."""
    label = "a helper process"
    """How its failures name it ("Kiwi's helper process ended (exit code 1)")."""
    failure: type[HelperFailed] = HelperFailed
    """What its failures raise."""
    env: dict[str, str] = {}  # a class's constant: never changed in place
    """Variables set in its environment besides this process's."""
    killed_when_closed = False
    """Closing kills it instead of waiting for it to exit (a helper that keeps nothing
    worth waiting for, and may still be loading when the parent is done with it)."""

    def __init__(self) -> None:
        """Nothing starts yet."""
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._said: deque[bytes] = deque(maxlen=20)
        """The last lines the helper wrote to its standard error (read by a thread)."""

    def _failed(self, what: str) -> HelperFailed:
        """The failure to raise: ``what`` happened, with its exit code and last words.

        The helper is ended first, and its standard error read to the end.
        """
        proc, said = self._proc, ""
        self._close()
        code = proc.returncode if proc is not None else None
        lines = [line.strip() for line in self._said if line.strip()]
        if lines:
            said = f"; it said: {lines[-1].decode('utf-8', 'replace')[-300:]}"
        ended = f" (exit code {code})" if code is not None else ""
        return self.failure(f"{self.label} {what}{ended}{said}")

    def _keep_said(self, stream: IO[bytes]) -> None:
        """Keep the last lines of the helper's standard error (a pipe never left full)."""
        with stream:
            for line in stream:
                self._said.append(line)

    def _spawn(self) -> tuple[subprocess.Popen[bytes], bool]:
        """The helper process, started now when it is not running: (process, started now).

        Called with :attr:`_lock` held. It does not wait for the helper to be ready.
        """
        if self._proc is not None and self._proc.poll() is None:
            return self._proc, False
        self._close()
        self._said.clear()
        try:
            self._proc = subprocess.Popen(
                python_argv(self.module),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**helper_env(), **self.env},
                close_fds=True,
                start_new_session=True,  # the terminal's Ctrl-C is the parent's to handle
            )
        except OSError as exc:
            raise self.failure(f"{self.label} could not start: {exc}") from exc
        assert self._proc.stderr is not None
        self._reader = threading.Thread(
            target=self._keep_said,
            args=(self._proc.stderr,),
            name=f"{self.module}-stderr",
            daemon=True,
        )
        self._reader.start()
        return self._proc, True

    def _close(self) -> None:
        """End the helper: its input ends, so it exits.

        It is killed instead where :attr:`killed_when_closed` says so. Called with
        :attr:`_lock` held, or from :meth:`_failed`.
        """
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()  # its input ends: it exits
            if self.killed_when_closed:
                with contextlib.suppress(OSError):
                    proc.kill()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.join(timeout=5)  # the pipe ends with the process

    def close(self) -> None:
        """End the helper (it exits when its input ends), if it runs."""
        with self._lock:
            self._close()

    @property
    def pid(self) -> int | None:
        """The helper's process id while it runs (None before the first use)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None


def answer_stream() -> IO[bytes]:
    """The helper's side: the stream its answers go to, its standard output's own copy.

    The standard output itself then goes to standard error: a stray print in the helper
    never reaches the parent among the answers.
    """
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return out
