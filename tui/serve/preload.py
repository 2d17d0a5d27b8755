"""Served tabs' apps forked from one process that imported them already (``goldpan serve``).

Each browser tab of ``goldpan serve`` is an app process of its own. Started afresh, each
spent about a third of its start (0.3 s of CPU) importing Textual and goldpan, while the
people already labeling waited for the processor. The server now starts one *preloader*
(``python -m tui.serve.preload``) that imports all of it once, then forks an app per tab.

What textual-serve starts for a tab is ``python -m tui.serve.tab SOCKET WS --annotator ...``: a
small process that hands its standard input, output and error (the pipes textual-serve
talks to the app through) to the preloader over a Unix socket, and lives as long as the
app the preloader forks with them. It passes on the signals it is sent and ends as the
app ended (its exit code, or the same signal), so for textual-serve it *is* the app. When
the preloader cannot be reached, or was started with other settings than the tab's
(Textual reads its settings from the environment as it is imported), the tab runs the
app in its own process, as before: slower to start, never different.

The socket lives in a folder only the server's user can open (``0700``). Nothing is
trusted from a request but what a tab's own command line says; the preloader forks only
:func:`tui.serve.served_app.main`, and only for a process of the same user.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

PRELOADED_ENV = (
    "TEXTUAL",
    "TEXTUAL_DRIVER",
    "TEXTUAL_FPS",
    "TEXTUAL_COLOR_SYSTEM",
    "TEXTUAL_LOG",
    "TEXTUAL_DEBUG",
    "TEXTUAL_THEME",
    "TEXTUAL_ANIMATIONS",
    "PYTHONPATH",
    "PYTHONHASHSEED",
)
"""Settings read as the modules are imported (or Python starts): a tab whose values differ
from the preloader's runs its app itself."""

PRELOAD_WAIT_S = 10.0
"""How long a tab waits for a preloader that is still starting."""
LISTEN_WAIT_S = 0.2
"""How long a refused tab tries again (between the preloader's bind and listen)."""
FAILED = "preload.failed"
"""What a preloader that cannot serve leaves in its folder."""

MAX_REQUEST = 1 << 20
"""The largest request a tab may send (its arguments and environment, as JSON)."""


def _request(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    """A tab's request: its JSON and the three descriptors sent with it."""
    fds = array.array("i")
    data = b""
    while not data.endswith(b"\n"):
        msg, ancdata, _flags, _addr = conn.recvmsg(65536, socket.CMSG_SPACE(3 * fds.itemsize))
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
        if not msg or len(data) + len(msg) > MAX_REQUEST:
            break
        data += msg
    try:
        request = json.loads(data)
    except ValueError:
        request = None
    return (request if isinstance(request, dict) else {}), list(fds)


def _child(
    request: dict[str, object], fds: list[int], closing: Sequence[socket.socket | int]
) -> NoReturn:
    """In the forked process: become the tab's app, on the tab's descriptors."""
    code = 3
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for own in closing:  # the preloader's: its socket, its wake-up pipe, other tabs
            if isinstance(own, socket.socket):
                own.close()  # marked closed: never closed again by number
            else:
                os.close(own)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        env = request.get("env")
        if isinstance(env, dict):
            os.environ.clear()
            os.environ.update({str(k): str(v) for k, v in env.items()})
        cwd = request.get("cwd")
        if isinstance(cwd, str):
            os.chdir(cwd)
        argv = [str(a) for a in request.get("argv") or []]  # type: ignore[attr-defined]
        sys.argv = ["tui.serve.served_app", *argv]
        from tui.serve import served_app

        code = served_app.main(argv)
    except SystemExit as exc:  # as Python ends on it: None is 0, a message is 1
        code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 (a bug in a forked app ends it, never the preloader)
        argv = [str(a) for a in request.get("argv") or []]  # type: ignore[attr-defined]
        logged = _crash_logged(exc, ["serve (tab)", *argv])
        print(f"goldpan: a served session stopped on a bug: {exc!r}{logged}", file=sys.stderr)
        code = 3
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
    os._exit(code)


def _status_of(status: int) -> bytes:
    """What the tab is told of its app's end: ``exit N`` or ``signal N``."""
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}\n".encode()
    return f"exit {os.waitstatus_to_exitcode(status)}\n".encode()


def serve(socket_path: Path) -> int:
    """The preloader: import the app, then fork it for each tab that asks, until told to end.

    It ends when its standard input closes (the server is gone, whatever way it ended).
    """
    import concurrent.futures.thread  # noqa: F401 (the app's workers)

    import textual.drivers.web_driver  # noqa: F401 (what a served app runs on)
    import textual.layouts.factory  # noqa: F401 (and what it loads on the way to its screen)
    import textual.layouts.horizontal  # noqa: F401
    import textual.layouts.stream  # noqa: F401
    from rich.cells import cell_len

    import engine.live  # noqa: F401
    import tui.app  # noqa: F401 (Textual, the screens, the engine: the slow part)
    import tui.help  # noqa: F401 (the help screen: Markdown, opened at the first `?`)
    import tui.serve.served_app  # noqa: F401
    from engine import gc_policy

    cell_len("가")  # loads rich's table of character widths

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(socket_path))  # a tab that finds it before the next line retries
    listener.listen(64)
    wake_r, wake_w = os.pipe()  # an app that ends wakes the loop (SIGCHLD)
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    gc_policy.freeze_survivors()  # the forks share these pages; their collectors skip them
    children: dict[int, socket.socket] = {}
    settings = {name: os.environ.get(name) for name in PRELOADED_ENV}
    print("ready", flush=True)
    try:
        while True:
            watched: list[socket.socket | int] = [listener, 0, wake_r, *children.values()]
            ready, _, _ = select.select(watched, [], [])
            if 0 in ready and not os.read(0, 4096):
                return 0
            if wake_r in ready:
                while _drain(wake_r):
                    pass
            for pid, tab in list(children.items()):
                if tab in ready and not _said(tab):  # the tab's process ended before its
                    tab.close()  # app did: so does the app
                    del children[pid]
                    _kill_with(pid, signal.SIGTERM)
            _reap(children)
            if listener in ready:
                conn, _ = listener.accept()
                _start(conn, [listener, wake_r, wake_w, *children.values()], settings, children)
    finally:
        listener.close()
        socket_path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # the server's folder for it, when nothing else
            socket_path.parent.rmdir()  # is in it (the server ended without a word)


def _said(tab: socket.socket) -> bool:
    """Read what a tab sent after its request (nothing is expected): False at its end."""
    try:
        return bool(tab.recv(4096))
    except OSError:
        return False


def _drain(fd: int) -> bool:
    try:
        return bool(os.read(fd, 4096))
    except BlockingIOError:
        return False


def _reap(children: dict[int, socket.socket]) -> None:
    """Tell each tab whose app ended how it ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        tab = children.pop(pid, None)
        if tab is not None:
            with contextlib.suppress(OSError):
                tab.sendall(_status_of(status))
            tab.close()


def _start(
    conn: socket.socket,
    own: Sequence[socket.socket | int],
    settings: dict[str, str | None],
    children: dict[int, socket.socket],
) -> None:
    """Fork the app a tab asks for, or tell it to run the app itself."""
    fds: list[int] = []
    pid = 0
    try:
        conn.settimeout(5)
        request, fds = _request(conn)
        env = request.get("env")
        same = isinstance(env, dict) and all(env.get(k) == v for k, v in settings.items())
        if len(fds) != 3 or not same or not isinstance(request.get("argv"), list):
            conn.sendall(b"no\n")
            conn.close()
            return
        pid = os.fork()
        if pid == 0:
            conn.close()
            _child(request, fds, own)
        conn.settimeout(None)
        conn.sendall(f"pid {pid}\n".encode())
        children[pid] = conn
    except OSError:  # the tab, told nothing, runs its app itself (if it is still there)
        conn.close()
        if pid:
            _kill_with(pid, signal.SIGTERM)
    finally:  # the app has its copies; the preloader keeps none
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


# -- the tab's side --------------------------------------------------------------------


def _read_line(conn: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        try:
            part = conn.recv(256)
        except InterruptedError:
            continue
        if not part:
            break
        data += part
    return data.decode("ascii", "replace").strip()


def _wait_for(socket_path: Path) -> None:
    """Wait while the preloader starts (its imports take what the tab's own would)."""
    deadline = time.monotonic() + PRELOAD_WAIT_S
    failed = socket_path.with_name(FAILED)
    while not socket_path.exists() and not failed.exists() and time.monotonic() < deadline:
        if not socket_path.parent.is_dir():
            return
        time.sleep(0.02)


def _connect(conn: socket.socket, socket_path: str) -> None:
    """Connect, again for a moment if refused: the preloader binds, then listens."""
    deadline = time.monotonic() + LISTEN_WAIT_S
    while True:
        try:
            conn.connect(socket_path)
            return
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def run_tab(socket_path: str, argv: Sequence[str]) -> NoReturn:
    """A tab's process: have the preloader fork its app, or run the app here."""
    pid = None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        _wait_for(Path(socket_path))
        _connect(conn, socket_path)
        request = {"argv": list(argv), "env": dict(os.environ), "cwd": os.getcwd()}
        body = json.dumps(request).encode("utf-8") + b"\n"
        fds = array.array("i", [0, 1, 2])
        conn.sendmsg([body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())])
        answer = _read_line(conn)
        if answer.startswith("pid "):
            pid = int(answer.split()[1])
    except (OSError, ValueError):
        pid = None
    if pid is None:
        conn.close()
        from tui.serve import served_app

        sys.exit(served_app.main(list(argv)))

    def forward(sig: int, _frame: object) -> None:
        _kill_with(pid, sig)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    # ctrl+c at the server's terminal reaches the app itself (one process group): this
    # process only waits for the app's end, to end the same way
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ended = _read_line(conn)
    conn.close()
    kind, _, value = ended.partition(" ")
    if kind == "signal" and value.isdigit():  # ended by the app's own signal, for the server
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's cannot be set, nor need be
            signal.signal(int(value), signal.SIG_DFL)
        with contextlib.suppress(OSError, ValueError):
            os.kill(os.getpid(), int(value))
    if kind == "exit" and value.lstrip("-").isdigit():
        sys.exit(int(value))
    # the preloader went away first: the app goes on; this process lasts as long, so that
    # its tab stays open, and then cannot say how it ended
    while _alive(pid):
        time.sleep(0.1)
    sys.exit(3)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (not gone, nor a zombie nobody reaps)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _kill_with(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _crash_logged(exc: BaseException, argv: Sequence[str]) -> str:
    """Write a bug's traceback to a crash log: ``"; its crash log: PATH"`` ("" if none)."""
    from tui.crash import write_crash_log

    log = write_crash_log(exc, argv)
    return f"; its crash log: {log}" if log is not None else ""


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tui.serve.preload SOCKET``: what ``goldpan serve`` starts once.

    When it cannot serve, it says so in one line and leaves a mark beside the socket's
    place (tabs then stop waiting for it and run their apps themselves).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print(
            "usage: python -m tui.serve.preload SOCKET (goldpan serve starts it)", file=sys.stderr
        )
        return 2
    path = Path(args[0])
    try:
        return serve(path)
    except KeyboardInterrupt:  # ctrl+c at the server's terminal: the server ends too
        return 0
    except BaseException as exc:  # noqa: BLE001 (one line in the server's log, no traceback)
        with contextlib.suppress(OSError):
            path.with_name(FAILED).write_text(f"{type(exc).__name__}: {exc}\n")
        said = f"the preloader stopped: {exc!r}"
        if not isinstance(exc, OSError):  # not the system's refusal: a bug, logged whole
            said += _crash_logged(exc, ["serve (preloader)", str(path)])
        print(f"goldpan: tabs start their apps afresh ({said})", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
