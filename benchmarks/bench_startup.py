"""How long reopening a workspace takes until its first screen is painted.

Run: ``python benchmarks/bench_startup.py [--runs 5] [--workspace workspaces/demo.db]
[--command open|demo|demo-fresh|app] [--busy]`` (``app`` starts the app module without the
CLI's imports; ``demo-fresh`` runs ``goldpan demo`` where no demo workspace is yet, so that
it builds one first, every run; ``--busy`` keeps one core busy with another process
meanwhile).

Each run starts ``python -m tui.cli open WS`` (or ``demo``) in a fresh detached tmux
session of 120x40 cells, polls the pane every 10 ms and stops the clock when the
Questions screen shows its filter line and its first question row: what a user sees. The
time includes Python's own start, every import and opening the workspace. The demo
workspace is built first when it is missing (not timed). Where PYTHONDONTWRITEBYTECODE
is set (this is no installed goldpan: pip writes bytecode at install, a checkout on its
first run), the runs get a bytecode folder of their own that one untimed run fills,
unless ``--compile-each-run``; the last line says which. Prints each run, the median and
the machine's load average, and the CPU time the app used before its first paint (the
part of the wait that does not depend on how busy the machine is). Targets: reopening,
median 1.0 s or less on a 2-core machine, also with ``--busy``; ``demo-fresh`` 3 s or
less (the demo shows before its Kiwi retriever is pooled, which goes on behind).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_bytecode
from bench_procs import cpu_seconds

ROOT = Path(__file__).resolve().parents[1]


def tmux(socket: str, *args: str) -> str:
    """Run tmux on the server of ``socket`` (-L): one per run, the benchmark's own, so
    another tmux user's sessions are never touched and no run races the shutdown of the
    server the last run's session left."""
    return subprocess.run(
        ["tmux", "-L", socket, *args], capture_output=True, text=True, check=False
    ).stdout


BYTECODE: dict[str, str] = {}
"""Set by :func:`main`: environment of the timed processes for their bytecode (name ->
value; empty: unset)."""


def first_paint(
    command: list[str], markers: tuple[str, ...], timeout: float
) -> tuple[float, float]:
    """Seconds from launching ``command`` in tmux until every marker is on screen, and
    the CPU seconds the app used until then (what a quiet machine would wait for)."""
    session = f"goldpan-bench-{os.getpid()}-{time.monotonic_ns()}"  # one per run
    socket = session
    shell = shlex.join(command)
    exports = f"export PYTHONPATH={shlex.quote(str(ROOT))}; cd {shlex.quote(str(ROOT))}; "
    for name, value in BYTECODE.items():
        exports += f"export {name}={shlex.quote(value)}; " if value else f"unset {name}; "
    started = time.perf_counter()
    started_ok = subprocess.run(
        [
            "tmux",
            "-L",
            socket,
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "120",
            "-y",
            "40",
            exports + "exec " + shell,
        ],
        check=False,
    )
    if started_ok.returncode != 0:
        raise SystemExit("tmux could not start a session")
    path = tmux(socket, "display-message", "-p", "#{socket_path}").strip()
    try:
        while True:
            elapsed = time.perf_counter() - started
            screen = tmux(socket, "capture-pane", "-p", "-t", session)
            if all(m in screen for m in markers):
                pid = int(tmux(socket, "list-panes", "-t", session, "-F", "#{pane_pid}").split()[0])
                return elapsed, cpu_seconds(pid)
            if elapsed > timeout:
                raise SystemExit(f"no first paint after {timeout:.0f} s; the pane shows:\n{screen}")
            time.sleep(0.01)
    finally:
        tmux(socket, "kill-server")
        if path:  # tmux leaves its socket file behind
            Path(path).unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workspace", default="workspaces/demo.db")
    parser.add_argument(
        "--command",
        choices=("open", "demo", "demo-fresh", "app"),
        default="open",
        help="goldpan open / goldpan demo, or app: the app module alone, without the CLI",
    )
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument(
        "--busy", action="store_true", help="keep one core busy with another process meanwhile"
    )
    bench_bytecode.add_option(parser)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("needs tmux")
    # with a prefix set, Python reads no __pycache__ beside the sources: the standard
    # library's and Textual's bytecode is written into it too
    cache = Path(tempfile.gettempdir()) / f"goldpan-bench-pycache-{os.getpid()}"
    env, said = bench_bytecode.environment(args.compile_each_run, cache)
    BYTECODE.update(env)
    ws = ROOT / args.workspace
    fresh = args.command == "demo-fresh"
    if fresh:  # a folder of its own, emptied before every run
        ws = Path(tempfile.mkdtemp(prefix="goldpan-bench-demo-")) / "demo.db"
    elif not ws.exists():
        subprocess.run(
            [sys.executable, "-m", "tui.cli", "demo", "--path", str(ws), "--no-open"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=True,
            capture_output=True,
        )
    if args.command == "open":
        command = [sys.executable, "-m", "tui.cli", "open", str(ws)]
    elif args.command == "app":
        code = (
            "from pathlib import Path; from tui.app import GoldpanApp; "
            f"GoldpanApp(Path({str(ws)!r}), annotator='bench').run()"
        )
        command = [sys.executable, "-c", code]
    else:  # demo, demo-fresh
        command = [sys.executable, "-m", "tui.cli", "demo", "--path", str(ws)]
    # the filter line and the first demo question: the table is drawn, not just the frame
    markers = ("status:", "order:")
    if BYTECODE:  # untimed: writes the bytecode
        first_paint(command, markers, args.timeout)
    times, cpus = [], []
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    try:
        for i in range(args.runs):
            if fresh:
                for old in ws.parent.iterdir():
                    old.unlink()
            t, cpu = first_paint(command, markers, args.timeout)
            times.append(t)
            cpus.append(cpu)
            print(f"run {i + 1}: {t:.3f} s to the first paint, {cpu:.2f} s of CPU")
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
        if fresh:
            shutil.rmtree(ws.parent, ignore_errors=True)
        if BYTECODE:
            shutil.rmtree(BYTECODE["PYTHONPYCACHEPREFIX"], ignore_errors=True)
    load = os.getloadavg()
    print(
        f"median {statistics.median(times):.3f} s over {len(times)} runs "
        f"(min {min(times):.3f}, max {max(times):.3f}); CPU before the first paint: median "
        f"{statistics.median(cpus):.2f} s; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores"
        + (", one kept busy by another process" if busy is not None else "")
        + f"; bytecode {said}"
    )


if __name__ == "__main__":
    main()
