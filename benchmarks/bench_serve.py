"""A team labeling at once through ``goldpan serve``: 8 websocket annotators on loopback.

Run from the repository root::

    python benchmarks/bench_serve.py                          # 8 annotators, 60 s
    python benchmarks/bench_serve.py --annotators 4 --seconds 20
    python benchmarks/bench_serve.py --workspace my.db        # a copy of it is used

The server is the real command, ``goldpan serve``, in its own process; each
simulated annotator is a websocket client speaking textual-serve's protocol (what the
browser page's xterm.js sends: ``["resize", ...]`` then ``["stdin", keys]``) to its own
app process, exactly as a browser tab does, minus the drawing.

Each annotator works like a person who knows the keys: on the question handed to it, it
grades the highlighted candidate (``1``), moves down (``j``) and grades the next, 3
documents in all, then asks for the next question (``]``).

The workspace is the demo with its labels cleared plus ``--questions`` more questions (so
8 people have 60 s of work at two annotators per question); ``--think`` seconds pass
before each key, like a quick person.

What is measured and checked:

- keypress-to-saved latency: from sending ``1`` to the label row being visible to another
  connection (polled every 10 ms); p50, p95 and max are printed;
- no lost label: every label an annotator saw saved is in the workspace at the end, with
  that annotator's name, and each client's count of saved keypresses equals its rows;
- no duplicate: one label event per (question, document, annotator);
- never the same question at the same time: each question's label events, in commit
  order, come in one run per annotator (A A A B B, never A B A);
- no ``database is locked`` and no traceback in the server's output (which carries every
  app process's stderr).
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GRADES_PER_QUESTION = 3  # every demo question pools more candidates than this
SAVE_TIMEOUT = 60.0  # a slow save is measured, not given up on (that would miscount)
LINK = re.compile(r"^(.+?) \(\w+\): http://\S+\?token=(\S+)$", re.M)
"""A printed link: the annotator's name (spaces and all), the role, the token."""


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
) -> Served:
    """Run ``goldpan serve WORKSPACE ARGS`` on a free port; wait for its links and socket."""
    port = free_port()
    log = config_dir / f"serve-{port}.log"
    env = dict(os.environ, GOLDPAN_CONFIG_DIR=str(config_dir))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tui.cli", "serve", str(workspace), "--port", str(port), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
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
    saved: set[tuple[str, str]] = field(default_factory=set)
    """(question, document) of every label this annotator saw saved."""
    questions: int = 0
    error: str | None = None


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


async def _settled(read: Callable[[], object], still: float, most: float) -> None:
    """Poll ``read()`` until its value has not changed for ``still`` s (at most ``most`` s)."""
    last, since, deadline = read(), time.monotonic(), time.monotonic() + most
    while time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        now = read()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= still:
            return


async def annotate(
    port: int, token: str, who: Annotator, workspace: Path, seconds: float, think: float
) -> None:
    """Label through the websocket for ``seconds`` (after the app is up), ``think`` s a key."""
    import aiohttp

    db = sqlite3.connect(workspace, timeout=30)
    name = who.name
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(
                f"ws://127.0.0.1:{port}/ws/{token}?width=120&height=40", max_msg_size=0
            ) as ws,
        ):

            async def drain() -> None:  # the terminal output is read and dropped
                async for _ in ws:
                    pass

            reader = asyncio.create_task(drain())
            await ws.send_json(["resize", {"width": 120, "height": 40}])

            async def key(k: str) -> None:
                await ws.send_json(["stdin", k])

            qid = await _wait(lambda: _my_lease(db, name), 60, 0.05)
            # the app is up once its first key lands: retry the (idempotent) first grade
            if qid is not None:
                before = _my_labels(db, name, qid)
                for _ in range(60):
                    await key("1")
                    if await _wait(lambda q=qid: _my_labels(db, name, q) - before, 1.0, 0.01):
                        break
                # a retried key may still be on its way (a loaded machine): wait until this
                # question's labels hold still before counting them as seen saved
                await _settled(lambda q=qid: _my_labels(db, name, q), 0.5, 15.0)
                who.saved |= {(qid, d) for d in _my_labels(db, name, qid)}
            end = time.monotonic() + seconds
            while qid is not None and time.monotonic() < end:
                who.questions += 1
                for i in range(GRADES_PER_QUESTION):
                    mine = _my_labels(db, name, qid)
                    if i == 0 and mine:
                        continue  # graded in the warm-up above
                    await asyncio.sleep(think)
                    if i:
                        await key("j")
                    sent = time.perf_counter()
                    await key("1")
                    new = await _wait(
                        lambda q=qid, m=mine: _my_labels(db, name, q) - m, SAVE_TIMEOUT
                    )
                    if not new:
                        who.error = f"pressing 1 on {qid} saved nothing in {SAVE_TIMEOUT:g} s"
                        break
                    who.latencies.append(time.perf_counter() - sent)
                    who.saved |= {(qid, d) for d in new}
                old = qid
                await key("]")
                moved = await _wait(lambda o=old: (_my_lease(db, name) or "") != o, 15.0, 0.005)
                qid = _my_lease(db, name) if moved else None
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
    served: Served, workspace: Path, names: list[str], seconds: float, think: float
) -> list[Annotator]:
    """Every annotator at once; what each did."""
    team = [Annotator(n) for n in names]
    await asyncio.gather(
        *(annotate(served.port, served.tokens[w.name], w, workspace, seconds, think) for w in team)
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--annotators", type=int, default=8)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--per-question", type=int, default=2)
    p.add_argument("--think", type=float, default=0.1, help="seconds before each key")
    p.add_argument("--questions", type=int, default=400, help="questions added to the demo")
    p.add_argument("--workspace", type=Path, help="default: the demo, unlabeled, plus questions")
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ws = folder / "team.db"
        if args.workspace:
            shutil.copy(args.workspace, ws)
        else:
            prepare_workspace(ws, args.questions)
        names = [f"ann{i + 1}" for i in range(args.annotators)]
        team_args = [a for n in names for a in ("--annotator", n)]
        served = start_server(ws, [*team_args, "--per-question", str(args.per_question)], folder)
        try:
            started = time.perf_counter()
            team = asyncio.run(run_team(served, ws, names, args.seconds, args.think))
            wall = time.perf_counter() - started
        finally:
            served.stop()
        problems = check(ws, team, served.output())
    lat = [x for w in team for x in w.latencies]
    print(f"{args.annotators} annotators, {args.seconds:g} s of labeling ({wall:.1f} s wall)")
    for w in team:
        print(f"  {w.name}: {len(w.saved)} labels on {w.questions} questions")
    if lat:
        print(
            f"keypress-to-saved latency over {len(lat)} labels: p50 "
            f"{statistics.median(lat) * 1000:.0f} ms, p95 {percentile(lat, 95) * 1000:.0f} ms, "
            f"max {max(lat) * 1000:.0f} ms"
        )
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min)")
    if problems:
        print("PROBLEMS:\n  " + "\n  ".join(problems))
        return 1
    print("no lost or duplicated label, no question held by two people, no 'database is locked'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
