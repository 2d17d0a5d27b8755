"""Served apps forked from the preloader: the same app, however the preloader fares.

Real processes throughout: a preloader (``python -m tui.serve.preload``) with the environment
``goldpan serve`` gives it, and tab processes (``python -m tui.serve.tab``) on pipes, spoken to
as textual-serve does (meta packets on standard input, the app's frames on its output).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from tests.tui.conftest import until
from tests.tui.serve.test_serve_load import child_processes, load_bench
from tests.tui.serve.test_served import unlabel
from tui.serve.preload import _alive

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/fd").is_dir(), reason="reads /proc to tell the processes apart"
)

ROOT = Path(__file__).resolve().parents[3]
ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT),
    "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver",
    "TEXTUAL_FPS": "60",
    "TEXTUAL_COLOR_SYSTEM": "truecolor",
}


def packet(kind: bytes, payload: bytes) -> bytes:
    return kind + len(payload).to_bytes(4, "big") + payload


class Tab:
    """A tab's process on pipes, its output read as it comes."""

    def __init__(self, sock: Path, ws: Path, name: str, **env: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tui.serve.tab", str(sock), str(ws), f"--annotator={name}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env={**ENV, "COLUMNS": "100", "ROWS": "30", **env},
        )
        self.out = bytearray()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := os.read(self.proc.stdout.fileno(), 65536):
            self.out += chunk

    def drawn(self, text: str) -> bool:
        """Whether ``text`` is in what the app has drawn (escape codes taken out)."""
        return text in load_bench().ANSI.sub("", bytes(self.out).decode("utf-8", "replace"))

    def press(self, key: str) -> None:
        """Send a key as textual-serve does, and wait until the app draws again."""
        assert self.proc.stdin is not None
        before = len(self.out)
        self.proc.stdin.write(packet(b"D", key.encode()))
        self.proc.stdin.flush()
        until(lambda: len(self.out) > before, 60, f"a frame after {key!r}")

    def quit(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.write(packet(b"M", json.dumps({"type": "quit"}).encode()))
        self.proc.stdin.flush()
        return self.proc.wait(60)

    def app(self) -> int:
        return load_bench().forked_app(self.proc.pid)


@pytest.fixture
def preloader():
    # a short folder of its own: a Unix socket's path has room for about 100 bytes
    sock = Path(tempfile.mkdtemp(prefix="gp-preload-")) / "preload.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.serve.preload", str(sock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=ENV,
    )
    until(sock.exists, 60, "preloader's socket")
    yield proc, sock
    if proc.poll() is None:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(30)
    assert not sock.exists(), "the preloader takes its socket away"
    shutil.rmtree(sock.parent, ignore_errors=True)  # removed with it when it ended well


def test_the_app_is_forked_from_the_preloader_and_ends_as_it_ends(preloader, demo_ws):
    proc, sock = preloader
    unlabel(demo_ws)
    tab = Tab(sock, demo_ws, "ara")
    until(lambda: tab.drawn("candidates judged"), 60, "question drawn")
    app = tab.app()
    assert app != tab.proc.pid and app in [p for p, _ in child_processes(proc.pid)]
    assert tab.quit() == 0
    until(lambda: not child_processes(proc.pid), 60, "app to end")

    again = Tab(sock, demo_ws, "bo")  # killed: its tab process ends by the same signal
    until(lambda: again.drawn("candidates judged"), 60, "question drawn")
    os.kill(again.app(), signal.SIGKILL)
    assert again.proc.wait(60) == -signal.SIGKILL


def test_a_tab_killed_takes_its_app_along(preloader, demo_ws):
    proc, sock = preloader
    tab = Tab(sock, demo_ws, "ara")
    until(lambda: tab.drawn("candidates judged"), 60, "question drawn")
    app = tab.app()
    assert app != tab.proc.pid
    tab.proc.kill()
    until(lambda: not child_processes(proc.pid), 60, "the app to end with its tab")


def test_other_textual_settings_run_the_app_in_the_tab_itself(preloader, demo_ws):
    _, sock = preloader
    tab = Tab(sock, demo_ws, "ara", TEXTUAL_FPS="30")  # read as Textual is imported
    until(lambda: tab.drawn("candidates judged"), 60, "question drawn")
    assert tab.app() == tab.proc.pid
    assert tab.quit() == 0


def test_apps_go_on_when_the_preloader_is_killed_and_new_tabs_start_alone(preloader, demo_ws):
    proc, sock = preloader
    tab = Tab(sock, demo_ws, "ara")
    until(lambda: tab.drawn("candidates judged"), 60, "question drawn")
    app = tab.app()
    proc.kill()
    proc.wait(30)
    sock.unlink()  # a preloader killed leaves it; the fixture checks the clean end
    tab.press("j")  # the session goes on: its app still draws what it is sent
    assert tab.proc.poll() is None
    later = Tab(sock, demo_ws, "bo")
    until(lambda: later.drawn("candidates judged"), 60, "question drawn")
    assert later.app() == later.proc.pid  # no preloader: the tab runs its app itself
    assert later.quit() == 0
    # the first tab's app still answers, and its tab ends once it does
    assert tab.quit() == 3  # how the app ended is not known without the preloader
    assert not _alive(app)


def test_a_preloader_that_cannot_listen_says_so_in_one_line(tmp_path, capsys):
    from tui.serve import preload

    sock = tmp_path / "no-such-folder" / "preload.sock"  # bind refused by the system
    assert preload.main([str(sock)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("goldpan: tabs start their apps afresh") and len(err.splitlines()) == 1
    assert "Traceback" not in err and "crash log" not in err  # the system said no: no bug


def test_a_preloader_bug_is_one_line_and_a_crash_log(tmp_path, capsys, monkeypatch, user_dirs):
    from tui.serve import preload

    def broken(path):
        raise RuntimeError("a bug in the preloader")

    monkeypatch.setattr(preload, "serve", broken)
    sock = tmp_path / "preload.sock"
    assert preload.main([str(sock)]) == 3
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    (log,) = (user_dirs / "state" / "goldpan").glob("goldpan-crash-*.log")
    assert str(log) in err and "a bug in the preloader" in log.read_text(encoding="utf-8")
    assert (tmp_path / preload.FAILED).exists()  # tabs waiting for it stop waiting


def test_a_bug_in_a_forked_app_is_one_line_and_a_crash_log(tmp_path, monkeypatch, user_dirs):
    """A forked app that fails before its screen: exit 3, one line, the traceback in a log."""
    from tui.serve import preload, served_app

    def broken(argv):
        raise RuntimeError("a bug before the app ran")

    monkeypatch.setattr(served_app, "main", broken)
    err_r, err_w = os.pipe()
    with open(os.devnull, "rb") as null_in, open(os.devnull, "wb") as null_out:
        fds = [null_in.fileno(), null_out.fileno(), err_w]
        request = {"argv": ["ws.db", "--annotator=ann"], "env": dict(os.environ)}
        pid = os.fork()
        if pid == 0:  # the preloader's side of a fork: becomes the tab's app, or ends
            # as in the preloader, Python's stderr writes to descriptor 2 (not pytest's capture)
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 (the process ends in _child)
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
            preload._child(request, fds, [err_r])
        os.close(err_w)
        with os.fdopen(err_r, encoding="utf-8") as err_pipe:
            err = err_pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 3
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("goldpan: a served session stopped on a bug")
    (log,) = (user_dirs / "state" / "goldpan").glob("goldpan-crash-*.log")
    assert str(log) in err and "a bug before the app ran" in log.read_text(encoding="utf-8")
