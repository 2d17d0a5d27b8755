# subprocess: several real processes on one workspace file, and kill -9 of the labeler;
# they run engine entries (python -c), and some rounds' labeler is the app (tests/tui's
# TUI_LABELER script), whose workers' connections are what can drop the WAL's locks.
"""Several real goldpan processes on one workspace file, and ``kill -9`` of the labeler.

SQLite's WAL is shared safely only while every process keeps its POSIX locks. A process
that holds a connection and opens and closes the same file with another descriptor drops
them; the next process to close its connection then takes itself for the last one,
checkpoints and *deletes* the -wal and -shm files, and the first process goes on writing
labels into deleted files: shown as saved, seen by nobody, gone after ``kill -9``.

Each round here starts a labeler (a :class:`~engine.session.labeling.LabelingSession` that also
opens and closes read-only workspaces now and then, as the app's workers do; in some rounds
the real app under Pilot) and two other processes that run what ``info``, ``check``,
``score --no-pool``, ``export``, ``label`` run (their engine calls) and a second writable
open over and over. It watches
every process's open files for a "(deleted)" -wal/-shm, kills the labeler at a random
moment, and checks that every label it reported as committed is in the workspace.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine.retrieve import bm25_spec
from engine.retrieve.runner import refresh_runs
from engine.types import Doc, Question
from engine.workspace import Workspace, WorkspaceError
from tests.engine.test_crash import (
    WORDS,
    complete_saved_lines,
    env,
    kill_after_lines,
    labels_of,
    reopen_intact,
    script,
)
from tests.tui.test_labeling_crash import TUI_LABELER

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/fd").is_dir() or not hasattr(signal, "SIGKILL"),
    reason="reads /proc/PID/fd and sends SIGKILL (Linux)",
)

ROUNDS = 20
"""Rounds of start, share, kill -9 and check (the issue asks for at least 20)."""

TUI_ROUNDS = {3, 11}
"""The rounds whose labeler is the real app (under Pilot) rather than a bare session."""

LABELER = """
import itertools, sys
from engine.session.labeling import LabelingSession
from engine.workspace import Workspace

path = sys.argv[1]
ws = Workspace.open(path)
session = LabelingSession(ws, "shared-test")
pairs = [(qid, doc) for qid in ws.question_ids() for doc in ws.doc_ids()]
# round and round until killed: a labeler that ran out of work while the others started
# (its 2,400 labels can be done before they have run three commands) ended unkilled
for n in itertools.count():
    qid, doc = pairs[n % len(pairs)]
    grade = 1 + (n + n // len(pairs)) % 3  # a second pass grades each pair differently
    session.set_grade(qid, doc, grade)
    print("saved", qid, doc, grade, flush=True)  # set_grade returned: committed
    if n % 4 == 3:  # as the app's workers do: another connection, opened and closed
        Workspace.open(path, readonly=True).close()
"""

OTHER = """
import sys
from pathlib import Path
from engine.check import check_workspace
from engine.counters import workspace_counters
from engine.export import export_workspace
from engine.gold import workspace_golds
from engine.scoring import score_workspace
from engine.session.labeling import LabelingSession
from engine.workspace import Workspace

current, stop, offset = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])

# what `goldpan info`, `check`, `score --no-pool`, `export --format labels` and `label` run
def info(path, out):
    with Workspace.open(Path(path)) as ws:
        ws.counts(), workspace_golds(ws), workspace_counters(ws), ws.annotators()
        ws.recheck_counts()
    return 0

def check(path, out):
    return 0 if check_workspace(Path(path)).ok else 2

def score(path, out):
    with Workspace.open(Path(path)) as ws:
        score_workspace(ws)
    return 0

def export(path, out):
    with Workspace.open(Path(path)) as ws:
        export_workspace(ws, "labels", Path(out), force=True)
    return 0

def label(path, out):
    with Workspace.open(Path(path)) as ws:
        ws.ensure_sound()
        LabelingSession(ws, "other").set_grade("q000", "d000", 2)
    return 0

def second_open(path, out):
    ws = Workspace.open(Path(path))  # what a second `goldpan open` does before its first paint
    LabelingSession(ws, "other-open")
    ws.close()
    return 0

COMMANDS = [info, check, score, export, label, second_open]

n = offset
while not stop.exists():
    try:
        round_no, path = current.read_text().split(maxsplit=1)
    except (OSError, ValueError):
        continue
    command = COMMANDS[n % len(COMMANDS)]
    n += 1
    try:
        code = command(path, f"{path}.{offset}.jsonl")
    except Exception as exc:  # as goldpan's exit 2, said in the log
        print(f"{command.__name__}: {exc!r}", file=sys.stderr, flush=True)
        code = 2
    print("ran", round_no, command.__name__, code, flush=True)
"""


def build(path: Path) -> None:
    rnd = random.Random(11)
    ws = Workspace.create(path)
    ws.write_docs(
        Doc(f"d{i:03d}", f"title {i}", " ".join(rnd.choices(WORDS, k=20))) for i in range(60)
    )
    ws.write_questions(Question(f"q{i:03d}", " ".join(rnd.choices(WORDS, k=3))) for i in range(40))
    ws.add_retriever(bm25_spec("word", "word"))
    refresh_runs(ws)
    ws.close()


def deleted_side_files(pid: int) -> list[str]:
    """The -wal/-shm files process ``pid`` holds open although they were deleted."""
    found = []
    try:
        entries = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in entries:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if ("-wal" in target or "-shm" in target) and target.endswith("(deleted)"):
            found.append(target)
    return found


HELD_DELETED_S = 0.05
"""How long a process must go on holding a deleted side file to count. SQLite's own last
close unlinks the -shm a moment before it closes it, so a process that rightly deletes the
file holds it "(deleted)" for microseconds; a process whose locks were lost goes on writing
into it until it closes the connection."""


class Watch(threading.Thread):
    """Polls processes' open files until stopped, remembering every deleted side file that a
    process goes on holding (see :data:`HELD_DELETED_S`)."""

    def __init__(self, procs: list[subprocess.Popen[bytes]], labeler) -> None:
        super().__init__(daemon=True)
        self.procs = procs
        self.labeler = labeler
        self.seen: set[str] = set()
        self.first: dict[tuple[int, str], float] = {}
        self.stopped = threading.Event()
        self.pass_lock = threading.Lock()

    def forget(self, proc: subprocess.Popen[bytes]) -> None:
        """Stop watching ``proc`` (it is about to be killed: a process that is dying closes
        its files one by one, and another may meanwhile rightly delete what it had open)."""
        with self.pass_lock:  # not in the middle of a pass over it
            self.procs = [p for p in self.procs if p is not proc]

    def run(self) -> None:
        while not self.stopped.is_set():
            with self.pass_lock:
                now = time.monotonic()
                held = set()
                for p in self.procs:
                    if p.poll() is not None:
                        continue
                    for target in deleted_side_files(p.pid):
                        key = (p.pid, target)
                        held.add(key)
                        if now - self.first.setdefault(key, now) >= HELD_DELETED_S:
                            who = "labeler" if p is self.labeler else "other"
                            self.seen.add(f"{who} pid {p.pid}: {target}")
                self.first = {k: t for k, t in self.first.items() if k in held}
            self.stopped.wait(0.005)


def ran_lines(log: Path) -> list[str]:
    """The whole ``ran`` lines of a log (one still being written is left for the next read)."""
    text = log.read_text(errors="replace")
    whole = text[: text.rfind("\n") + 1]
    return [ln for ln in whole.splitlines() if ln.startswith("ran ")]


def wait_for(cond, what: str, procs: list[subprocess.Popen[bytes]], deadline_s: float = 120):
    deadline = time.monotonic() + deadline_s
    while not cond():
        for p in procs:
            if p.poll() is not None:
                pytest.fail(f"a process ended (exit {p.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {deadline_s:.0f} s")
        time.sleep(0.01)


@pytest.mark.timeout(600)
def test_labels_shown_as_saved_survive_other_processes_and_kill_9(tmp_path):
    template = tmp_path / "template.db"
    build(template)
    rnd = random.Random(2024)
    current, stop = tmp_path / "current", tmp_path / "stop"
    logs = [tmp_path / f"other{i}.log" for i in range(2)]
    others = []
    for i, log in enumerate(logs):  # two processes for the whole test, following `current`
        with log.open("wb") as f:
            others.append(
                subprocess.Popen(
                    [sys.executable, "-c", OTHER, str(current), str(stop), str(3 * i)],
                    cwd=Path(__file__).parents[3],
                    env=env(),
                    stdin=subprocess.DEVNULL,
                    stdout=f,
                    stderr=subprocess.STDOUT,
                )
            )
    try:
        for round_no in range(ROUNDS):
            one_round(tmp_path, round_no, rnd, current, logs, others)
    finally:
        stop.touch()
        for p in others:
            try:
                p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    for log in logs:
        ran = ran_lines(log)
        failed = [ln for ln in ran if not ln.endswith(" 0")]
        assert not failed, f"{failed}\n{log.read_text(errors='replace')}"
        assert len(ran) >= 3 * ROUNDS


def one_round(tmp_path, round_no, rnd, current, logs, others) -> None:
    """Label beside the others on a fresh copy, kill -9 the labeler, check every label."""
    path = tmp_path / f"round{round_no:02d}.db"
    shutil.copyfile(tmp_path / "template.db", path)
    tmp = tmp_path / "current.tmp"
    tmp.write_text(f"r{round_no:02d} {path}")
    tmp.replace(current)  # the others move to this round's file
    tui = round_no in TUI_ROUNDS
    labeler_log = tmp_path / f"labeler{round_no:02d}.log"
    labeler = script(TUI_LABELER if tui else LABELER, path, log=labeler_log)
    watch = Watch([labeler, *others], labeler)
    watch.start()

    def others_at_work() -> bool:  # each ran a few commands on this round's file
        return all(
            sum(ln.split()[1] == f"r{round_no:02d}" for ln in ran_lines(lg)) >= 3 for lg in logs
        )

    try:
        wait_for(others_at_work, "commands", others)
        seen = kill_after_lines(
            labeler,
            rnd.randint(5, 25 if tui else 60),
            labeler_log,
            before_kill=lambda: watch.forget(labeler),
        )
        wait_for(others_at_work, "commands", others)
    finally:
        if labeler.poll() is None:
            labeler.kill()
            labeler.wait()
        watch.stopped.set()
        watch.join()
    assert not watch.seen, f"round {round_no}: deleted -wal/-shm held open: {watch.seen}"
    shown = complete_saved_lines(seen)
    assert shown, f"round {round_no}: nothing was saved"
    stored = labels_of(path, "tui-crash" if tui else "shared-test")
    missing = {k: g for k, g in shown.items() if stored.get(k) != g}
    assert not missing, f"round {round_no}: shown as saved but lost: {missing}"
    reopen_intact(path)


def demo_force(path: Path) -> None:
    """What ``goldpan demo --force`` builds (without Kiwi's retriever and the models)."""
    from engine.demo import build_demo

    build_demo(path, force=True, slow=False, models=False).close()


def test_demo_force_refuses_a_demo_another_process_has_open(tmp_path):
    """Replacing a file another process writes would send its labels into a deleted file."""
    path = tmp_path / "demo.db"
    build(path)
    holder = script(
        "import sys, time\n"
        "from engine.workspace import Workspace\n"
        "ws = Workspace.open(sys.argv[1]); ws.labels()\n"
        "print('open', flush=True)\n"
        "sys.stdin.read() if False else time.sleep(600)\n",
        path,
        log=tmp_path / "holder.log",
    )
    try:
        assert holder.stdout.readline().strip() == b"open"
        before = path.read_bytes()
        with pytest.raises(WorkspaceError, match="open in another goldpan"):
            demo_force(path)
        assert path.read_bytes() == before
        assert not deleted_side_files(holder.pid)
    finally:
        holder.kill()
        holder.wait()
    # nobody has it open any more: --force replaces it
    demo_force(path)
    with Workspace.open(path, readonly=True) as ws:
        assert ws.doc_count() == 48  # the demo's documents, not build()'s 60


REPLACED_LABELER = """
import sys
from engine.errors import GoldpanError
from engine.session.labeling import LabelingSession
from engine.workspace import Workspace

ws = Workspace.open(sys.argv[1])
session = LabelingSession(ws, "stale")
session.set_grade("q000", "d000", 1)
print("saved", flush=True)
for line in sys.stdin:  # one grade per line, each after the test changed the file
    try:
        session.set_grade("q000", "d001", int(line))
    except GoldpanError as exc:
        print("refused", exc, flush=True)
    else:
        print("saved", flush=True)
"""


def _replace_as_demo_force_does(path: Path) -> None:
    """Rename a new workspace over ``path`` as ``demo --force`` publishes one (its check
    that nobody has the file open skipped: the outcome of opening it during the build)."""
    from engine.formats.outfiles import atomic_database

    with atomic_database(path, replace=True, label="demo") as tmp:
        build(tmp)


def test_a_process_whose_workspace_was_replaced_under_it_is_refused_its_next_write(tmp_path):
    """Its connection is left on the old file, which nobody else opens any more: a label
    written there would be shown as saved and be in no file at the path."""
    path = tmp_path / "demo.db"
    build(path)
    proc = subprocess.Popen(
        [sys.executable, "-c", REPLACED_LABELER, str(path)],
        cwd=Path(__file__).parents[3],
        env=env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "saved"
        assert labels_of(path, "stale") == {("q000", "d000"): 1}
        proc.stdin.write("2\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "saved"  # the same file: written
        assert labels_of(path, "stale")[("q000", "d001")] == 2
        _replace_as_demo_force_does(path)
        proc.stdin.write("3\n")
        proc.stdin.flush()
        answer = proc.stdout.readline().strip()
        assert answer.startswith("refused"), answer
        assert "was replaced or moved since goldpan opened it" in answer
        assert labels_of(path, "stale") == {}  # the new file, as built
        proc.stdin.write("3\n")  # and every grade after it, until the file is reopened
        proc.stdin.flush()
        assert proc.stdout.readline().startswith("refused")
    finally:
        proc.kill()
        proc.wait()
    reopen_intact(path)


def test_demo_force_checks_again_before_replacing_a_file_opened_during_its_build(
    tmp_path, monkeypatch
):
    """A goldpan that opens the demo while it is rebuilt keeps it from being replaced."""
    import engine.demo

    path = tmp_path / "demo.db"
    build(path)
    before = path.read_bytes()
    holders: list[subprocess.Popen[bytes]] = []
    pooled = engine.demo.refresh_runs

    def pool_while_another_opens(*args, **kwargs):
        holders.append(
            script(
                "import sys, time\n"
                "from engine.workspace import Workspace\n"
                "ws = Workspace.open(sys.argv[1]); ws.labels()\n"
                "print('open', flush=True)\n"
                "time.sleep(600)\n",
                path,
                log=tmp_path / "holder.log",
            )
        )
        assert holders[0].stdout is not None
        assert holders[0].stdout.readline().strip() == b"open"
        return pooled(*args, **kwargs)

    monkeypatch.setattr(engine.demo, "refresh_runs", pool_while_another_opens)
    try:
        with pytest.raises(WorkspaceError, match="open in another goldpan"):
            engine.demo.build_demo(path, force=True, slow=False, models=False)
        assert holders, "the build never pooled"
        assert path.read_bytes() == before
        assert not deleted_side_files(holders[0].pid)
        assert not list(tmp_path.glob(".demo.db.demo-*"))  # the build's temp file removed
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()


def test_reading_an_open_workspace_as_a_file_keeps_this_process_s_locks(tmp_path):
    """is_sqlite (the output guard) and read_text (every input) never open a file this
    process holds a connection to: another process's close would then delete its WAL."""
    from engine.formats.errors import IngestError
    from engine.formats.outfiles import is_sqlite
    from engine.formats.tabular import read_text
    from engine.types import Label

    path = tmp_path / "ws.db"
    build(path)
    ws = Workspace.open(path)
    try:
        ws.write_labels([Label("q000", "d000", "mina", 2)])
        assert is_sqlite(path)
        with pytest.raises(IngestError, match="open workspace"):
            read_text(path)
        proc = subprocess.run(  # what `goldpan info` reads, in another process
            [
                sys.executable,
                "-c",
                "import sys\n"
                "from engine.workspace import Workspace\n"
                "with Workspace.open(sys.argv[1]) as ws:\n"
                "    ws.counts(), ws.annotators(), ws.recheck_counts()\n",
                str(path),
            ],
            cwd=Path(__file__).parents[3],
            env=env(),
            capture_output=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        assert not deleted_side_files(os.getpid())
        ws.write_labels([Label("q000", "d001", "mina", 1)])
    finally:
        ws.close()
    assert labels_of(path, "mina") == {("q000", "d000"): 2, ("q000", "d001"): 1}
