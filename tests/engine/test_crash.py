# subprocess: kill -9 needs the job in a process of its own; each runs an engine entry
# (python -c), not goldpan's command line.
"""kill -9 in the middle of real work: an import, a pool, a labeling session.

Each test starts the job (an engine entry of this worktree's code, ``python -c``) in a
subprocess, waits until it is
observably in the middle of the job, SIGKILLs it, and then checks the workspace: it
opens, passes ``PRAGMA integrity_check``, and holds exactly what was committed. The waits
poll a condition (the -wal file growing, rows landing, lines printed) with a generous
deadline instead of sleeping for a guessed time. About 30 s together, half of it the
300,000-document import.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.retrieve import bm25_spec
from engine.retrieve.runner import refresh_runs
from engine.types import Doc, Label, Question, Verdict
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import ROOT, TINY_DOCS, TINY_QUESTIONS, snapshot

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "SIGKILL"), reason="needs POSIX signals (SIGKILL)"
)

DEADLINE_S = 120.0
"""How long to wait for a subprocess to reach the point where it is killed."""

WORDS = [
    "감쇠",
    "보정",
    "금속",
    "인공물",
    "팬텀",
    "점검",
    "절차",
    "공지",
    "영상",
    "선량",
    "한도",
    "매뉴얼",
    "재구성",
    "노이즈",
    "필터",
    "검출기",
    "교정",
    "품질",
    "관리",
    "시험",
    "장비",
    "기록",
    "alpha",
    "beta",
    "gamma",
    "delta",
    "sigma",
    "omega",
]


def env() -> dict[str, str]:
    """The environment of a subprocess that must run this worktree's code."""
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), out.get("PYTHONPATH")]))
    out["PYTHONUNBUFFERED"] = "1"
    return out


IMPORT_DOCS = """
import sys
from pathlib import Path
from engine.ingest import import_docs
from engine.workspace import Workspace

with Workspace.open(Path(sys.argv[1])) as ws:
    report = import_docs(ws, Path(sys.argv[2]))
print("imported", report.summary(), flush=True)
"""
"""What ``goldpan import docs WS FILE`` runs: one transaction."""

POOL = """
import sys
from pathlib import Path
from engine.pooling import DEFAULT_POOL_DEPTH
from engine.retrieve.runner import PreparedRetrievers, refresh_runs
from engine.workspace import Workspace

with Workspace.open(Path(sys.argv[1])) as ws:
    refresh_runs(
        ws, depth=int(sys.argv[2]), prepared=PreparedRetrievers(), keep_top=DEFAULT_POOL_DEPTH
    )
print("pooled", flush=True)
"""
"""What ``goldpan pool WS --depth N`` runs: every retriever's rankings, each in its commit."""

MERGE = """
import sys
from pathlib import Path
from engine.team.merge import merge_workspaces

report = merge_workspaces(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
print("merged", report.summary(), flush=True)
"""
"""What ``goldpan merge OUT SOURCE...`` runs."""


def job(code: str, *args: object, log: Path) -> subprocess.Popen[bytes]:
    """``python -c CODE ARGS`` in a subprocess over this worktree, output to ``log``."""
    with log.open("wb") as f:
        return subprocess.Popen(
            [sys.executable, "-c", code, *map(str, args)],
            cwd=ROOT,
            env=env(),
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=subprocess.STDOUT,
        )


def kill_when(
    proc: subprocess.Popen[bytes], ready: Callable[[], bool], what: str, log: Path
) -> None:
    """SIGKILL ``proc`` as soon as ``ready()`` holds; fail if it ends or times out first."""
    deadline = time.monotonic() + DEADLINE_S
    while not ready():
        if proc.poll() is not None:
            pytest.fail(
                f"the job ended (exit {proc.returncode}) before {what}:\n"
                + log.read_text(errors="replace")
            )
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            pytest.fail(f"no sign of {what} within {DEADLINE_S:.0f} s")
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL, log.read_text(errors="replace")


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def reopen_intact(path: Path) -> None:
    """The killed workspace opens for writing (SQLite recovers the WAL) and is sound."""
    ws = Workspace.open(path)
    try:
        assert ws.integrity_problems() == []
        assert ws.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        ws.close()


def earlier_workspace(path: Path) -> Workspace:
    """A workspace with some history: docs, questions, labels, a verdict, cached runs."""
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.write_labels([Label("q1", "d1", "mina", 2), Label("q3", "d3", "jun", 3)])
    ws.write_verdicts([Verdict("q4", "mina", "no_answer", "")])
    refresh_runs(ws, ["bm25-word"], depth=10)
    return ws


# -- (a) an import ------------------------------------------------------------------------


def write_big_corpus(path: Path, n: int) -> None:
    """``n`` documents as BEIR JSONL (about 250 bytes each); d1 comes back retitled."""
    rnd = random.Random(7)
    texts = [" ".join(rnd.choices(WORDS, k=30)) for _ in range(997)]
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"_id": "d1", "title": "retitled", "text": "changed"}) + "\n")
        for i in range(n):
            f.write(f'{{"_id": "big{i:06d}", "title": "문서 {i}", "text": "{texts[i % 997]}"}}\n')


@pytest.mark.timeout(300)
def test_kill_9_in_the_middle_of_a_300000_document_import_keeps_the_earlier_contents(tmp_path):
    path = tmp_path / "ws.db"
    earlier_workspace(path).close()
    before = snapshot(path)
    big = tmp_path / "big.jsonl"
    write_big_corpus(big, 300_000)
    wal = Path(f"{path}-wal")
    start = file_size(wal)
    log = tmp_path / "import.log"

    proc = job(IMPORT_DOCS, path, big, log=log)
    # The import is one transaction: once its pages spill into the -wal file it is
    # writing, and it commits only after all 300,000 rows (about 100 MB of -wal).
    kill_when(proc, lambda: file_size(wal) > start + (1 << 20), "the import writing", log)
    assert "imported" not in log.read_text(errors="replace")
    assert file_size(wal) > start + (1 << 20)  # the uncommitted half import was on disk

    reopen_intact(path)
    assert snapshot(path) == before  # no document, event or hash of the half import

    # the workspace works as before: the same import now completes
    done = job(IMPORT_DOCS, path, big, log=log)
    assert done.wait(timeout=DEADLINE_S) == 0, log.read_text(errors="replace")
    assert "300000 added, 1 updated, 0 unchanged" in log.read_text()
    ws = Workspace.open(path, readonly=True)
    assert ws.doc_count() == 300_004 and ws.doc("d1") == Doc("d1", "retitled", "changed")
    assert ws.labels() == [Label("q1", "d1", "mina", 2), Label("q3", "d3", "jun", 3)]
    ws.close()


# -- (b) a pool ---------------------------------------------------------------------------

POOL_DOCS = 6000
POOL_QUESTIONS = 2500
RETRIEVERS = ("a-word", "b-bigram", "c-word+bigram")


def pool_workspace(path: Path) -> None:
    """Docs, questions, labels; three BM25 retrievers already cached at depth 10."""
    rnd = random.Random(11)
    ws = Workspace.create(path)
    ws.write_docs(
        Doc(f"d{i:05d}", f"title {i}", " ".join(rnd.choices(WORDS, k=30))) for i in range(POOL_DOCS)
    )
    ws.write_questions(
        Question(f"q{i:05d}", " ".join(rnd.choices(WORDS, k=4))) for i in range(POOL_QUESTIONS)
    )
    ws.write_labels(Label(f"q{i:05d}", f"d{i:05d}", "mina", 1 + i % 3) for i in range(0, 300))
    ws.write_verdicts([Verdict("q00400", "mina", "no_answer", "none")])
    for name, tok in zip(RETRIEVERS, ("word", "bigram", "word+bigram"), strict=True):
        ws.add_retriever(bm25_spec(name, tok))
    refresh_runs(ws, depth=10)
    ws.close()


def depths(conn: sqlite3.Connection) -> dict[str, list[tuple[int, int]]]:
    """Retriever -> [(depth, number of cached rankings at that depth)]."""
    out: dict[str, list[tuple[int, int]]] = {}
    for name, depth, n in conn.execute(
        "SELECT retriever, depth, count(*) FROM runs GROUP BY retriever, depth ORDER BY 1, 2"
    ):
        out.setdefault(name, []).append((depth, n))
    return out


@pytest.mark.timeout(300)
def test_kill_9_in_the_middle_of_a_pool_lands_each_retriever_whole_or_not_at_all(tmp_path):
    path = tmp_path / "pool.db"
    pool_workspace(path)
    before = snapshot(path)
    rest_before = {t: rows for t, rows in before.items() if t != "runs"}
    log = tmp_path / "pool.log"
    watch = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)

    def first_retriever_landed() -> bool:
        return any(d == [(30, POOL_QUESTIONS)] for d in depths(watch).values())

    proc = job(POOL, path, 30, log=log)
    kill_when(proc, first_retriever_landed, "the first retriever's rankings landing", log)
    watch.close()

    reopen_intact(path)
    conn = sqlite3.connect(path)
    got = depths(conn)
    conn.close()
    # each retriever: all its rankings from the new pool, or all of its old ones
    assert set(got) == set(RETRIEVERS)
    assert all(d in ([(30, POOL_QUESTIONS)], [(10, POOL_QUESTIONS)]) for d in got.values()), got
    landed = [r for r, d in got.items() if d == [(30, POOL_QUESTIONS)]]
    assert landed and len(landed) < len(RETRIEVERS), f"not killed mid-pool: {got}"
    after = snapshot(path)
    for rows in (after, rest_before):  # rankings written log "ranked" events: the pool's own
        rows["events"] = [e for e in rows["events"] if e[3] != "ranked"]
    assert {t: rows for t, rows in after.items() if t != "runs"} == rest_before  # labels too

    ws = Workspace.open(path, readonly=True)
    kept = {r: ws.runs(r) for r in landed}
    ws.close()
    # a second pool completes, and what had landed is reused, not run again
    again = job(POOL, path, 30, log=log)
    assert again.wait(timeout=DEADLINE_S) == 0, log.read_text(errors="replace")
    ws = Workspace.open(path, readonly=True)
    assert all(len(ws.runs(r)) == POOL_QUESTIONS for r in RETRIEVERS)
    assert all(run.depth == 30 for r in RETRIEVERS for run in ws.runs(r).values())
    assert {r: ws.runs(r) for r in landed} == kept
    assert ws.integrity_problems() == []
    ws.close()


# -- (c) a labeling session ---------------------------------------------------------------

LABELER = """
import sys
from engine.session.labeling import LabelingSession
from engine.workspace import Workspace

ws = Workspace.open(sys.argv[1])
session = LabelingSession(ws, "crash-test")
for qid in ws.question_ids():
    for i, doc in enumerate(ws.doc_ids()):
        grade = (len(qid) + i) % 4
        session.set_grade(qid, doc, grade)
        print("saved", qid, doc, grade, flush=True)  # shown as saved: set_grade returned
print("done", flush=True)
"""


def script(code: str, *args: object, log: Path) -> subprocess.Popen[bytes]:
    """``python -c CODE ARGS`` over this worktree; stdout piped, stderr to ``log``."""
    with log.open("wb") as err:
        return subprocess.Popen(
            [sys.executable, "-c", code, *map(str, args)],
            cwd=ROOT,
            env=env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
        )


def read_lines(stream, into: queue.Queue[str | None]) -> None:
    for raw in stream:
        into.put(raw.decode())
    into.put(None)


def kill_after_lines(
    proc: subprocess.Popen[bytes], n: int, log: Path, before_kill: Callable[[], None] = lambda: None
) -> list[str]:
    """SIGKILL ``proc`` once it has printed ``n`` lines; every line it printed before dying.

    ``before_kill`` runs just before the signal is sent.
    """
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=read_lines, args=(proc.stdout, lines), daemon=True)
    reader.start()
    seen: list[str] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(seen) < n:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            proc.kill()
            pytest.fail(f"only {len(seen)} lines in {DEADLINE_S:.0f} s:\n{log.read_text()}")
        if line is None or line.startswith("done"):
            pytest.fail(f"ended before it was killed:\n{log.read_text(errors='replace')}")
        seen.append(line)
    before_kill()
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    reader.join(timeout=30)
    while (line := lines.get()) is not None:  # printed before the kill, read only now
        seen.append(line)
    assert not any(line.startswith("done") for line in seen)
    return seen


def complete_saved_lines(lines: list[str]) -> dict[tuple[str, str], int]:
    """(question, doc) -> grade of every whole ``saved`` line (a cut-off last line is not)."""
    out = {}
    for line in lines:
        parts = line.split()
        if line.endswith("\n") and len(parts) == 4 and parts[0] == "saved":
            out[(parts[1], parts[2])] = int(parts[3])
    return out


def labels_of(path: Path, annotator: str) -> dict[tuple[str, str], int]:
    ws = Workspace.open(path, readonly=True)
    try:
        return {
            (lab.question_id, lab.doc_id): lab.grade
            for lab in ws.labels()
            if lab.annotator == annotator
        }
    finally:
        ws.close()


def assert_saved_survived(path: Path, before, shown: dict[tuple[str, str], int], who: str) -> None:
    """Every label shown as saved is stored; nothing else changed."""
    reopen_intact(path)
    labeled = labels_of(path, who)
    missing = {k: g for k, g in shown.items() if labeled.get(k) != g}
    assert not missing, f"shown as saved but not in the workspace: {missing}"
    # at most the one label being written when the kill came was committed unseen
    assert len(labeled) - len(shown) <= 1, (len(labeled), len(shown))
    after = snapshot(path)
    for table in ("docs", "questions", "verdicts", "runs", "retrievers", "adjudications"):
        assert after[table] == before[table], table
    assert [r for r in after["labels"] if r[2] != who] == before["labels"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("after", [1, 150])
def test_kill_9_while_labeling_keeps_every_label_shown_as_saved(tmp_path, after):
    path = tmp_path / "label.db"
    ws = earlier_workspace(path)
    ws.write_docs(Doc(f"x{i:03d}", f"t{i}", " ".join(WORDS[i % 7 : i % 7 + 5])) for i in range(60))
    ws.write_questions(Question(f"p{i:03d}", f"question {i}") for i in range(40))
    ws.close()
    before = snapshot(path)
    log = tmp_path / "labeler.log"
    seen = kill_after_lines(script(LABELER, path, log=log), after, log)
    shown = complete_saved_lines(seen)
    assert len(shown) >= after
    assert_saved_survived(path, before, shown, "crash-test")


# -- (d) a merge that creates OUT ---------------------------------------------------------


@pytest.mark.timeout(180)
def test_kill_9_during_a_merge_into_a_new_out_leaves_no_out_and_the_rerun_succeeds(tmp_path):
    source = tmp_path / "mina.db"
    rnd = random.Random(3)
    ws = Workspace.create(source)
    ws.write_docs(Doc(f"d{i:04d}", f"t{i}", " ".join(rnd.choices(WORDS, k=8))) for i in range(400))
    ws.write_questions(Question(f"q{i:04d}", f"question {i}") for i in range(400))
    ws.write_labels(
        Label(f"q{i:04d}", f"d{j:04d}", "mina", (i + j) % 4) for i in range(400) for j in range(60)
    )
    ws.close()
    out = tmp_path / "merged.db"
    log = tmp_path / "merge.log"

    def building_aside() -> bool:  # the merge is writing its temp file, not OUT
        return any(
            file_size(p) > (256 << 10) for p in tmp_path.glob(".merged.db.merging-*.tmp-wal")
        )

    proc = job(MERGE, out, source, log=log)
    kill_when(proc, building_aside, "the merge writing its temp file", log)
    assert not out.exists()  # no half-merged (or empty) workspace under OUT's name
    assert list(tmp_path.glob(".merged.db.merging-*.tmp"))  # what the kill left

    done = job(MERGE, out, source, log=log)
    assert done.wait(timeout=DEADLINE_S) == 0, log.read_text(errors="replace")
    assert "labels: 24000 added" in log.read_text()
    assert not list(tmp_path.glob(".merged.db.merging-*"))  # the dead merge's file is gone
    reopen_intact(out)
    ws = Workspace.open(out, readonly=True)
    assert len(ws.labels()) == 24_000 and ws.doc_count() == 400
    ws.close()
