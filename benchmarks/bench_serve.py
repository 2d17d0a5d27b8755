"""A team labeling at once through ``goldpan serve``: 8 websocket annotators on loopback.

Run from the repository root::

    python benchmarks/bench_serve.py                          # 8 annotators, 60 s
    python benchmarks/bench_serve.py --annotators 4 --seconds 20
    python benchmarks/bench_serve.py --workspace my.db        # a copy of it is used
    python benchmarks/bench_serve.py --scale --annotators 16 --seconds 120 --think 2
    python benchmarks/bench_serve.py --scale --annotators 16 --seconds 120 --think 2 \
        --join-over 60                                        # then joining over 60 s

The server is the real command, ``goldpan serve``, in its own process; each
simulated annotator is a websocket client speaking textual-serve's protocol (what the
browser page's xterm.js sends: ``["resize", ...]`` then ``["stdin", keys]``) to its own
app process, exactly as a browser tab does, minus the drawing.

Each annotator works like a person who knows the keys: on the question handed to it, it
grades the highlighted candidate (``1``), moves down (``j``) and grades the next, 3
documents in all, then, once its last grade is drawn, asks for the next question (``]``).

The workspace is the demo with its labels cleared plus ``--questions`` more questions (so
8 people have 60 s of work at two annotators per question); ``--think`` seconds pass
for each grade, like a quick person: before a move (``j``) half of them, the other half
between the move and the grade, as a person reads the document the cursor moved to
before grading it. (Until this was so, ``j`` and ``1`` went out together and a grade's
latency counted the drawing of the move sent a moment before it; ``--keys-together``
sends them so still, to compare.)

With ``--scale`` the workspace is instead synthetic and team-sized: 1,000 questions, 8
BM25 retrievers (three tokenizers, several variants and k1) over 5,000 documents, pooled
by ``goldpan pool`` before the clock starts. The issue's target there: 16 annotators, a
grade every 2 s each for 120 s, key-to-screen p95 <= 50 ms and p99 <= 150 ms on 2 cores.

What is measured and checked:

- key-to-screen latency: from sending ``1`` to the first frame of the app that shows it
  (its progress line with this question's new count of judged candidates, read from the
  terminal output with the escape codes taken out); p50, p95, p99 and max are printed;
- keypress-to-saved latency: from sending ``1`` to the label row being visible to another
  connection (polled every 10 ms); p50, p95 and max are printed;
- no lost label: every label an annotator saw saved is in the workspace at the end, with
  that annotator's name, and each client's count of saved keypresses equals its rows;
- no duplicate: one label event per (question, document, annotator);
- never the same question at the same time: each question's label events, in commit
  order, come in one run per annotator (A A A B B, never A B A);
- no ``database is locked`` and no traceback in the server's output (which carries every
  app process's stderr).

The key-to-screen numbers are printed for every grade, then split at the moment the last
tab's app had drawn its first question: the grades sent while apps were still starting
(each takes about a second of CPU, all at once with everyone at once) and those after.
The CPU each tab's app used until its first question was drawn is printed too, then the
CPU the apps used while labeling (in all, and per key), and that of the server process and
of this benchmark's own clients (they share the machine with the apps). ``--start-at-once``
passes ``goldpan serve`` its option (``16``: every tab's app starting at once, as before
the server held starts back). With
``--join-over SECONDS`` a second run follows on a fresh copy, the annotators joining one
after another over that time, as a team does; the all-at-once run always comes first.

Where PYTHONDONTWRITEBYTECODE is set (no installed goldpan runs so: pip writes bytecode at
install), the server and its tabs get a bytecode folder of their own that one untimed tab
fills first, unless ``--compile-each-run``; the output says which.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import bench_bytecode
from bench_procs import cpu_seconds, forked_app

ROOT = Path(__file__).resolve().parents[1]
GRADES_PER_QUESTION = 3  # every demo question pools more candidates than this
SAVE_TIMEOUT = 60.0  # a slow save is measured, not given up on (that would miscount)
ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]*[0-~])")
"""Terminal escape sequences (CSI, OSC, and two-character ones), taken out of frames."""
LINK = re.compile(r"^(.+?) \(\w+\): http://\S+\?token=(\S+)$", re.M)
"""A printed link: the annotator's name (spaces and all), the role, the token."""


BYTECODE: dict[str, str] = {}
"""Environment of the server and its app processes for their bytecode (set by main)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    """A ``goldpan serve`` process and the links it printed."""

    proc: subprocess.Popen[bytes]
    port: int
    tokens: dict[str, str]
    log: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_server(
    workspace: Path,
    args: list[str],
    config_dir: Path,
    *,
    timeout: float = 60.0,
    cwd: Path = ROOT,
) -> Served:
    """Run ``goldpan serve WORKSPACE ARGS`` on a free port; wait for its links and socket.

    It runs in ``cwd`` with Python's safe path (``-P``), as the installed ``goldpan`` runs:
    the folder it runs in is not on its path.
    """
    port = free_port()
    log = config_dir / f"serve-{port}.log"
    env = dict(os.environ, GOLDPAN_CONFIG_DIR=str(config_dir), **BYTECODE)
    env = {k: v for k, v in env.items() if v}  # BYTECODE's empty values: unset
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-P",
                "-m",
                "tui.cli",
                "serve",
                str(workspace),
                "--port",
                str(port),
                *args,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
        )
    served = Served(proc, port, {}, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"goldpan serve exited {proc.returncode}:\n{served.output()}")
        served.tokens = dict(LINK.findall(served.output()))
        if served.tokens:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return served
            except OSError:
                pass
        time.sleep(0.1)
    served.stop()
    raise RuntimeError(f"goldpan serve did not start:\n{served.output()}")


@dataclass
class Annotator:
    """What one simulated annotator did and saw."""

    name: str
    latencies: list[float] = field(default_factory=list)
    """Keypress to the label visible to another connection, per grade."""
    screen: list[float] = field(default_factory=list)
    """Keypress to the first frame that shows the grade (its new judged count)."""
    saved: set[tuple[str, str]] = field(default_factory=set)
    """(question, document) of every label this annotator saw saved."""
    questions: int = 0
    error: str | None = None
    joined: float | None = None
    """When its app had drawn its first question (perf_counter)."""
    start_cpu: float | None = None
    """CPU seconds (user + system) its app process had used by then."""
    labeling_cpu: float | None = None
    """CPU seconds its app process used from then to the end of its labeling."""
    sent: list[float] = field(default_factory=list)
    """When each grade seen drawn was sent (perf_counter), in the order of ``screen``."""


def _my_lease(db: sqlite3.Connection, name: str) -> str | None:
    row = db.execute("SELECT question_id FROM leases WHERE annotator = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


def _my_labels(db: sqlite3.Connection, name: str, qid: str) -> set[str]:
    rows = db.execute(
        "SELECT doc_id FROM labels WHERE annotator = ? AND question_id = ?", (name, qid)
    )
    return {r[0] for r in rows}


async def _wait(check, timeout: float, every: float = 0.01):  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        await asyncio.sleep(every)
    return None


def app_process(server: int, name: str) -> int | None:
    """The app process ``goldpan serve`` (pid ``server``) started for annotator ``name``
    (forked by its preloader for the tab process the server started, or that process)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != server:
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        started = b"tui.serve.tab" in argv or b"tui.serve.served_app" in argv
        if started and f"--annotator={name}".encode() in argv:
            return forked_app(int(entry.name))
    return None


async def annotate(
    served: Served,
    who: Annotator,
    workspace: Path,
    seconds: float,
    think: float,
    delay: float = 0.0,
    together: bool = False,
) -> None:
    """Label through the websocket for ``seconds`` (after the app is up), ``think`` s a grade;
    connect after ``delay`` seconds. ``together``: a move and the grade after it sent at once."""
    import aiohttp

    await asyncio.sleep(delay)
    port, token = served.port, served.tokens[who.name]
    db = sqlite3.connect(workspace, timeout=30)
    name = who.name
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(
                f"ws://127.0.0.1:{port}/ws/{token}?width=120&height=40", max_msg_size=0
            ) as ws,
        ):
            # the terminal output, escape codes taken out: the frame that shows `expect`
            # (this question's new judged count) stops the key-to-screen clock
            waiting: dict[str, object] = {"expect": None, "sent": 0.0}
            tail = ""

            async def drain() -> None:
                nonlocal tail
                async for msg in ws:
                    if msg.type != aiohttp.WSMsgType.BINARY:
                        continue
                    text = ANSI.sub("", msg.data.decode("utf-8", "replace"))
                    expect = waiting["expect"]
                    if isinstance(expect, str) and expect in tail[-200:] + text:
                        sent = float(str(waiting["sent"]))
                        who.screen.append(time.perf_counter() - sent)
                        who.sent.append(sent)
                        waiting["expect"] = None
                    tail = (tail + text)[-4000:]

            reader = asyncio.create_task(drain())
            await ws.send_json(["resize", {"width": 120, "height": 40}])

            async def key(k: str) -> None:
                await ws.send_json(["stdin", k])

            qid = await _wait(lambda: _my_lease(db, name), 60, 0.05)
            # the app is up once it has drawn this question's progress line: one key then
            # (a key sent before the app listens would be lost, and a retried one could
            # land later, on the next candidate)
            if qid is not None and not await _wait(lambda q=qid: f"{q}: " in tail, 120, 0.02):
                who.error = f"the app never drew {qid}"
                qid = None
            who.joined = time.perf_counter()
            pid = app_process(served.proc.pid, name)
            who.start_cpu = cpu_seconds(pid) if pid is not None else None
            end = time.monotonic() + seconds
            while qid is not None and time.monotonic() < end:
                who.questions += 1
                for i in range(GRADES_PER_QUESTION):
                    mine = _my_labels(db, name, qid)
                    if i and not together:
                        await asyncio.sleep(think / 2)
                        await key("j")  # read the document moved to, then grade it
                        await asyncio.sleep(think / 2)
                    else:
                        await asyncio.sleep(think)
                        if i:
                            await key("j")
                    waiting["expect"] = f"{qid}: {len(mine) + 1}/"
                    sent = time.perf_counter()
                    waiting["sent"] = sent
                    await key("1")
                    new = await _wait(
                        lambda q=qid, m=mine: _my_labels(db, name, q) - m, SAVE_TIMEOUT
                    )
                    if not new:
                        who.error = f"pressing 1 on {qid} saved nothing in {SAVE_TIMEOUT:g} s"
                        break
                    who.latencies.append(time.perf_counter() - sent)
                    who.saved |= {(qid, d) for d in new}
                # like a person, who moves on once the last grade is drawn: sent before, `]`
                # could be taken with it, the grade's own frame never drawn (its time lost
                # from the percentiles, and the slowest ones most often)
                await _wait(lambda: waiting["expect"] is None, SAVE_TIMEOUT, 0.002)
                old = qid
                await key("]")
                moved = await _wait(lambda o=old: (_my_lease(db, name) or "") != o, 15.0, 0.005)
                qid = _my_lease(db, name) if moved else None
            if pid is not None and who.start_cpu is not None:
                who.labeling_cpu = cpu_seconds(pid) - who.start_cpu
            await ws.close()
            reader.cancel()
    except Exception as exc:  # reported with the results
        who.error = f"{type(exc).__name__}: {exc}"
    finally:
        db.close()


def check(workspace: Path, team: list[Annotator], server_output: str) -> list[str]:
    """Every problem found (empty: none)."""
    problems = []
    db = sqlite3.connect(workspace)
    try:
        for who in team:
            if who.error:
                problems.append(f"{who.name}: {who.error}")
            rows = {
                (q, d)
                for q, d in db.execute(
                    "SELECT question_id, doc_id FROM labels WHERE annotator = ?", (who.name,)
                )
            }
            if who.saved - rows:
                problems.append(f"{who.name}: lost labels {sorted(who.saved - rows)}")
            if rows != who.saved:
                problems.append(f"{who.name}: labels nobody saw saved {sorted(rows - who.saved)}")
        # one person at a time on a question: its label events, in commit order, come in
        # one run per annotator (A A A B B, never A B A)
        runs: dict[str, list[str]] = {}
        for qid, who_name in db.execute(
            "SELECT question_id, annotator FROM events WHERE kind = 'label' ORDER BY id"
        ):
            seq = runs.setdefault(qid, [])
            if not seq or seq[-1] != who_name:
                if who_name in seq:
                    problems.append(f"{qid}: {seq + [who_name]} labeled it at the same time")
                seq.append(who_name)
        dup = db.execute(
            "SELECT question_id, doc_id, annotator, count(*) FROM events WHERE kind = 'label' "
            "GROUP BY 1, 2, 3 HAVING count(*) > 1"
        ).fetchall()
        if dup:
            problems.append(f"duplicated label writes: {dup}")
    finally:
        db.close()
    for bad in ("database is locked", "Traceback"):
        if bad in server_output:
            problems.append(f"the server's output has {bad!r}")
    return problems


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def run_team(
    served: Served,
    workspace: Path,
    names: list[str],
    seconds: float,
    think: float,
    join_over: float = 0.0,
    together: bool = False,
) -> list[Annotator]:
    """Every annotator at once, or one after another over ``join_over`` seconds (evenly
    spaced); what each did."""
    team = [Annotator(n) for n in names]
    step = join_over / (len(team) - 1) if len(team) > 1 else 0.0
    await asyncio.gather(
        *(
            annotate(served, w, workspace, seconds, think, i * step, together)
            for i, w in enumerate(team)
        )
    )
    return team


def prepare_workspace(path: Path, extra_questions: int) -> None:
    """The demo without its labels (work for everyone), plus ``extra_questions`` questions.

    The extra questions reuse the demo's question texts with a number, so they pool to
    real candidates (``goldpan serve`` pools them before serving).
    """
    from engine.demo import build_demo
    from engine.types import Question

    ws = build_demo(path)
    try:
        texts = [q.text for q in ws.questions()]
        ws.write_questions(
            [
                Question(f"load{i:04d}", f"{texts[i % len(texts)]} ({i})")
                for i in range(extra_questions)
            ]
        )
    finally:
        ws.close()
    db = sqlite3.connect(path)  # setup only: clear the demo's own labels
    with db:
        for table in ("labels", "verdicts", "adjudications", "events"):
            db.execute(f"DELETE FROM {table}")
    db.close()


def prepare_scaled_workspace(
    path: Path, n_questions: int = 1000, n_docs: int = 5000, seed: int = 0
) -> None:
    """1,000 questions x 8 BM25 retrievers x 5,000 documents, pooled by ``goldpan pool``.

    Documents are 20-80 words from a Zipf-like vocabulary; each question is 3-6 words of
    one document, so every question pools real candidates.
    """
    import itertools
    import random

    from engine.retrieve import bm25_spec
    from engine.types import Doc, Question
    from engine.workspace import Workspace

    rng = random.Random(seed)
    words = [f"w{i}" for i in range(20_000)]
    cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(words))))
    docs = [
        Doc(
            f"d{i:05d}",
            f"doc {i}",
            " ".join(rng.choices(words, cum_weights=cum, k=rng.randint(20, 80))),
        )
        for i in range(n_docs)
    ]
    questions = []
    for i in range(n_questions):
        text = rng.choice(docs).text.split()
        start = rng.randrange(max(1, len(text) - 6))
        questions.append(Question(f"q{i:04d}", " ".join(text[start : start + rng.randint(3, 6)])))
    specs = [
        bm25_spec("word", "word"),
        bm25_spec("bigram", "bigram"),
        bm25_spec("word+bigram", "word+bigram"),
        bm25_spec("word-okapi", "word", variant="okapi"),
        bm25_spec("word-bm25plus", "word", variant="bm25plus"),
        bm25_spec("word-k1-0.9", "word", k1=0.9),
        bm25_spec("bigram-k1-0.9", "bigram", k1=0.9),
        bm25_spec("word-b-0.4", "word", b=0.4),
    ]
    ws = Workspace.create(path)
    try:
        with ws.transaction():
            for spec in specs:
                ws.add_retriever(spec)
        ws.write_docs(docs)
        ws.write_questions(questions)
    finally:
        ws.close()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run(
        [sys.executable, "-m", "tui.cli", "pool", str(path), "--quiet"],
        check=True,
        env=env,
        cwd=ROOT,
        capture_output=True,
    )


def summary(values: list[float]) -> str:
    """p50, p95, p99 and max of seconds, in ms."""
    return (
        f"p50 {statistics.median(values) * 1000:.0f} ms, p95 {percentile(values, 95) * 1000:.0f} "
        f"ms, p99 {percentile(values, 99) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms"
    )


def report(team: list[Annotator], seconds: float, wall: float, join_over: float) -> None:
    """What one run measured: every grade, then split at the moment the last app was up."""
    how = f"joining one after another over {join_over:g} s" if join_over else "all at once"
    print(f"{len(team)} annotators {how}, {seconds:g} s of labeling each ({wall:.1f} s wall)")
    for w in team:
        print(f"  {w.name}: {len(w.saved)} labels on {w.questions} questions")
    lat = [x for w in team for x in w.latencies]
    screen = [x for w in team for x in w.screen]
    if screen:
        print(
            f"key-to-screen latency over all {len(screen)} grades: {summary(screen)} "
            f"(target: p95 <= 50 ms, p99 <= 150 ms; {len(lat) - len(screen)} grades not seen drawn)"
        )
    joined = [w.joined for w in team if w.joined is not None]
    if screen and joined:
        last = max(joined)  # every app is up from here on: no tab is starting
        pairs = [(t, x) for w in team for t, x in zip(w.sent, w.screen, strict=True)]
        storm = [x for t, x in pairs if t < last]
        steady = [x for t, x in pairs if t >= last]
        first = min(joined)
        print(
            f"  while apps were starting (the {last - first:.1f} s from the first app up to "
            f"the last): {len(storm)} grades" + (f", {summary(storm)}" if storm else "")
        )
        print(
            f"  once every app was up: {len(steady)} grades"
            + (f", {summary(steady)}" if steady else "")
        )
    cpus = [w.start_cpu for w in team if w.start_cpu is not None]
    if cpus:
        print(
            f"CPU of a tab's app up to its first question drawn: median "
            f"{statistics.median(cpus):.2f} s, max {max(cpus):.2f} s, {sum(cpus):.1f} s for all "
            f"{len(cpus)}"
        )
    busy = [w.labeling_cpu for w in team if w.labeling_cpu is not None]
    if busy:
        keys = len(lat) * 2  # each grade's own key and the move (j or ]) that goes with it
        print(
            f"CPU of the apps while labeling: {sum(busy):.1f} s in all, "
            f"{sum(busy) / max(wall, 1e-9):.2f} cores over the run's {wall:.0f} s, "
            f"{sum(busy) / max(keys, 1) * 1000:.0f} ms per key ({keys} keys: grades and moves)"
        )
    if lat:
        print(f"keypress-to-saved latency over {len(lat)} labels: {summary(lat)}")
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores")


def run(
    source: Path, folder: Path, args: argparse.Namespace, join_over: float
) -> tuple[list[Annotator], float, list[str]]:
    """One team on a fresh copy of ``source``: what each did, the wall time, problems."""
    ws = folder / f"team-{time.monotonic_ns()}.db"
    shutil.copy(source, ws)
    names = [f"ann{i + 1}" for i in range(args.annotators)]
    team_args = [a for n in names for a in ("--annotator", n)]
    starts = ["--start-at-once", str(args.start_at_once)] if args.start_at_once else []
    served = start_server(
        ws, [*team_args, "--per-question", str(args.per_question), *starts], folder
    )
    try:
        server_cpu, own_cpu = cpu_seconds(served.proc.pid), time.process_time()
        started = time.perf_counter()
        team = asyncio.run(
            run_team(served, ws, names, args.seconds, args.think, join_over, args.keys_together)
        )
        wall = time.perf_counter() - started
        server_cpu = cpu_seconds(served.proc.pid) - server_cpu
        own_cpu = time.process_time() - own_cpu
    finally:
        served.stop()
    print(
        f"CPU of the server process (websockets to and from every tab): {server_cpu:.1f} s; "
        f"of this benchmark's clients (frames read, saves polled every 10 ms): {own_cpu:.1f} s"
    )
    return team, wall, check(ws, team, served.output())


def warm_bytecode(source: Path, folder: Path) -> None:
    """One untimed tab on a copy of ``source``: writes the bytecode of everything a tab
    and the server import into :data:`BYTECODE`'s folder."""
    ws = folder / "warm.db"
    shutil.copy(source, ws)
    served = start_server(ws, ["--annotator", "warm"], folder)
    try:
        asyncio.run(annotate(served, Annotator("warm"), ws, 0.0, 0.0))
    finally:
        served.stop()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--annotators", type=int, default=8)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--per-question", type=int, default=2)
    p.add_argument(
        "--think",
        type=float,
        default=0.1,
        help="seconds per grade: half before a move, half between it and the grade",
    )
    p.add_argument(
        "--keys-together",
        action="store_true",
        help="send a move and the grade after it at once, after --think seconds (as before)",
    )
    p.add_argument(
        "--start-at-once",
        type=int,
        help="goldpan serve's --start-at-once (default: serve's own, the cores less one)",
    )
    p.add_argument("--questions", type=int, default=400, help="questions added to the demo")
    p.add_argument("--workspace", type=Path, help="default: the demo, unlabeled, plus questions")
    p.add_argument(
        "--scale",
        action="store_true",
        help="a synthetic 1,000 questions x 8 retrievers x 5,000 documents workspace",
    )
    p.add_argument(
        "--join-over",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="after the run with everyone at once, a second run on a fresh copy where the "
        "annotators join one after another over SECONDS, as a team does",
    )
    bench_bytecode.add_option(p, "every tab")
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ws = folder / "source.db"
        if args.workspace:
            shutil.copy(args.workspace, ws)
        elif args.scale:
            print("building and pooling 1,000 questions x 8 retrievers x 5,000 documents ...")
            prepare_scaled_workspace(ws)
        else:
            prepare_workspace(ws, args.questions)
        env, said = bench_bytecode.environment(args.compile_each_run, folder / "pyc")
        BYTECODE.update(env)
        if env:
            warm_bytecode(ws, folder)
        problems: list[str] = []
        for join_over in [0.0, args.join_over] if args.join_over else [0.0]:
            team, wall, found = run(ws, folder, args, join_over)
            report(team, args.seconds, wall, join_over)
            problems += found
    print(f"bytecode: {said}")
    print(
        f"keys: {args.think:g} s per grade, "
        + (
            "a move and the grade after it sent at once (--keys-together)"
            if args.keys_together
            else "half of them before a move, half between it and the grade"
        )
    )
    if problems:
        print("PROBLEMS:\n  " + "\n  ".join(problems))
        return 1
    print("no lost or duplicated label, no question held by two people, no 'database is locked'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
