# subprocess: the Kiwi helper is a process of its own (python -P), and its parent is
# killed with kill -9 to see it end.
"""engine.kiwi_helper: Kiwi in a process of its own gives the same tokens, and never outlives us.

The terminal app tokenizes with Kiwi through a helper process, so that Kiwi's loading
(two seconds holding Python's lock in its first analysis) never freezes the screen. Every
test here runs real processes: the helper itself, and a parent killed with ``kill -9``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.helper_process import helper_env
from engine.kiwi_helper import KiwiHelper, KiwiHelperFailed
from engine.tokenize import KiwiTokenizer, kiwi_safe

REPO = Path(__file__).resolve().parents[2]

TEXTS = [
    "감쇠 보정은 CT 영상으로 감쇠 계수를 구한다.",
    "TD-2024-0137 문서의 0137 번호",  # a serial: whole and by digit groups
    "",
    "   ",
    "x\ud800y 서울특별시",  # a lone surrogate: U+FFFD for Kiwi
    "a" * 3000,  # a long run without spaces: cut as Kiwi cuts it
    "İstanbul straße ﬁne Ⅻ https://example.org/a?b=1 #태그",
]


def gone(pid: int, timeout: float = 60.0) -> bool:
    """Whether process ``pid`` has ended (waited for, bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # our own child: reap it, or it lingers as a zombie
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def helper():
    made = KiwiHelper()
    yield made
    made.close()


def test_the_helper_gives_the_tokens_kiwi_gives_in_this_process(helper, kiwi):
    local = KiwiTokenizer()
    assert local.helper is None
    want = local.tokenize_many(TEXTS)
    assert any(want)  # Kiwi found content words
    assert helper.tokenize_many([kiwi_safe(t) for t in TEXTS]) == want
    for text, tokens in zip(TEXTS, want, strict=True):  # one at a time, as a question is
        assert helper.tokenize_many([kiwi_safe(text)]) == [tokens]


def test_a_tokenizer_set_to_use_the_helper_asks_it(helper, kiwi, monkeypatch):
    want = KiwiTokenizer().tokenize_many(TEXTS)
    monkeypatch.setattr(KiwiTokenizer, "helper", helper)
    tok = KiwiTokenizer()
    tok.ready()
    assert helper.pid is not None
    assert tok.tokenize_many(TEXTS) == want
    assert [tok(t) for t in TEXTS] == want


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux's /proc")
def test_the_helper_leaves_no_deleted_file_open_in_its_parent():
    """An app's open files are checked for deleted ones (a workspace replaced under it):
    the helper's standard error is a pipe read into memory, not an unlinked temp file.
    Checked in a process of its own: pytest's output capture holds such files itself."""
    parent = textwrap.dedent(
        """
        import os
        from engine.kiwi_helper import KiwiHelper
        helper = KiwiHelper()
        helper.ready()
        for fd in os.listdir("/proc/self/fd"):
            try:
                print(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:  # the listing's own descriptor, closed meanwhile
                pass
        helper.close()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", parent],
        capture_output=True,
        text=True,
        env=helper_env(),
        cwd=REPO,
        timeout=600,
        check=True,
    )
    targets = done.stdout.splitlines()
    assert any(t.startswith("pipe:") for t in targets)  # the helper's pipes are there
    assert not [t for t in targets if t.endswith("(deleted)")]


def test_a_helper_killed_is_reported_then_started_again(helper):
    helper.ready()
    pid = helper.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert gone(pid)
    # the next request starts a new one (the one killed had answered every request)
    assert helper.tokenize_many(["서울"]) == [["서울"]]
    assert helper.pid not in (None, pid)


def test_a_helper_that_cannot_start_says_why(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")  # starts, then ends at once
    broken = KiwiHelper()
    with pytest.raises(KiwiHelperFailed, match=r"helper process ended \(exit code 1\)"):
        broken.ready()
    assert broken.pid is None
    monkeypatch.setattr(sys, "executable", "/bin/sh")  # refuses Python's options: says so
    said = r"ended \(exit code 2\); it said: .*-P"
    with pytest.raises(KiwiHelperFailed, match=said):
        KiwiHelper().ready()


def ends_with_its_parent(start_helper: str) -> None:
    """A parent that runs ``start_helper`` (which binds ``helper``) is killed with ``kill -9``:
    its helper's input ends, so the helper exits."""
    parent = f"import time\n{start_helper}\nprint(helper.pid, flush=True)\ntime.sleep(600)\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", parent],
        stdout=subprocess.PIPE,
        text=True,
        env=helper_env(),
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        helper_pid = int(proc.stdout.readline())
        os.kill(helper_pid, 0)  # it runs
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert gone(helper_pid), "the helper outlived its parent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_helper_ends_when_its_parent_is_killed():
    """``kill -9`` of the app's process: the helper's input ends, so it exits."""
    ends_with_its_parent(
        "from engine.kiwi_helper import KiwiHelper\nhelper = KiwiHelper()\nhelper.ready()"
    )
