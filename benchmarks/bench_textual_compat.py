"""What each private-Textual speed use in tui/textual_compat.py buys, on the path it speeds.

Run: ``python benchmarks/bench_textual_compat.py [--rounds 5] [--keys 24] [--only USE ...]``.

issue 48 keeps a private Textual name only where it pays: a use whose gain is under 10% of
its path goes. Each run here is what a user does, in a real process in a tmux pane of
120x40 cells: ``GoldpanApp`` opens a copy of the demo workspace (its first paint timed, as
``bench_startup.py`` does), enter opens the Label screen of q01 (20 candidates), then three
phases of keys are sent, each key (or pair) waiting until the pane has changed and then
stayed the same for :data:`SETTLE_S`:

- ``moves``: ``j`` and ``k`` in turn (another document shown each time);
- ``grades``: ``1`` (a grade; auto-advance moves on), ``k``, ``2``, ``k`` in turn;
- ``pairs``: ``j1`` sent in one write (a move and a grade typed ahead), then ``kk``.

For each phase: the app's CPU seconds per key (from /proc, user + system: what the keys
cost the app, the part that depends least on the load) and the wall time per key from the
send to the pane's last change (tmux's polling included, the same in both arms).

A run is either the product as it is (``with``) or the product without one use
(``without USE``): the use's class attribute swapped for plain public Textual in the app
process before it starts (:data:`WITHOUT`). The configurations alternate within every
round, so a swing of the machine's load falls on all of them. Prints each configuration's
medians, each use's gain on its own path, and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import re
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

SETTLE_S = 0.06
"""A key's result is drawn once the pane has stayed the same this long."""

WITHOUT = {
    "two-rows": (
        "moves",
        "from tui.widgets.candidate_list import CandidateList\n"
        "CandidateList._refresh_option = lambda self, index: self.refresh()\n",
    ),
    "same-width-prompt": (
        "grades",
        "from tui.widgets.candidate_list import CandidateList\n"
        "def _redraw_option(self, index, c):\n"
        "    self.replace_option_prompt_at_index(index, self._prompt(c))\n"
        "CandidateList._redraw_option = _redraw_option\n",
    ),
}
"""Use -> (the path it speeds, the code that removes it: plain public Textual instead).

The four uses measured under 10% of their path were removed from the product, and their
switches with them: no frame rendered inside the start's batch (path: the first paint),
one layout pass per document (moves), the option list's early return once every row is
measured (moves) and the frame held while keys typed ahead waited (pairs); their figures
are in benchmarks/RESULTS.md."""

PHASES = {
    "moves": [("j", "pet-qc-01"), ("k", "pet-qc-00")],
    "grades": [("1", "pet-qc-01"), ("k", "pet-qc-00"), ("2", "pet-qc-01"), ("k", "pet-qc-00")],
    "pairs": [("j1", "pet-qc-02"), ("kk", "pet-qc-00")],
}
"""Phase -> the keys sent in turn (a string of two: both in one write), each with the id of
the document its result shows (q01's candidates in order: pet-qc-00, pet-qc-01, pet-qc-02;
a grade moves on to the next)."""


def plain(screen: str) -> str:
    """The pane's text without its styles."""
    return re.sub(r"\x1b\[[0-9;]*m", "", screen)


def document_head(screen: str) -> str:
    """The Label screen's document head line: the title and id of the document shown."""
    lines = plain(screen).splitlines()
    return lines[5].rpartition("││")[2] if len(lines) > 5 else ""


class Pane:
    """A tmux pane of its own server (one per run) running one command."""

    def __init__(self, command: str, env: dict[str, str]) -> None:
        self.socket = f"goldpan-bench-compat-{os.getpid()}-{time.monotonic_ns()}"
        exports = f"cd {shlex.quote(str(ROOT))}; " + "".join(
            f"export {k}={shlex.quote(v)}; " if v else f"unset {k}; " for k, v in env.items()
        )
        self.started = time.perf_counter()
        subprocess.run(
            ["tmux", "-L", self.socket, "new-session", "-d", "-s", "b", "-x", "120", "-y", "40",
             exports + "exec " + command],
            check=True,
        )  # fmt: skip
        self.path = self.tmux("display-message", "-p", "#{socket_path}").strip()
        self.pid = int(self.tmux("list-panes", "-t", "b", "-F", "#{pane_pid}").split()[0])

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        ).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-e", "-t", "b")

    def wait_for(self, *markers: str, timeout: float = 60.0) -> float:
        while True:
            if all(m in plain(self.screen()) for m in markers):
                return time.perf_counter()
            if time.perf_counter() - self.started > timeout:
                raise SystemExit(f"not shown in {timeout} s: {markers}\n{self.screen()}")
            time.sleep(0.005)

    def key(self, keys: str, shows: str) -> float:
        """Send ``keys`` in one write; seconds until the pane's last change.

        Their result is drawn once the head of the document view names ``shows`` and the
        whole pane (styles included) has stayed the same for :data:`SETTLE_S`.
        """
        before = self.screen()
        sent = time.perf_counter()
        self.tmux("send-keys", "-t", "b", "-l", keys)
        last, changed = before, None
        while True:
            now = self.screen()
            t = time.perf_counter()
            if now != last:
                last, changed = now, t
            elif (
                changed is not None
                and t - changed >= SETTLE_S
                and f" {shows} " in document_head(now)
            ):
                return changed - sent
            elif t - sent > 10:
                raise SystemExit(f"no document shown after {keys!r}:\n{plain(now)}")
            time.sleep(0.002)

    def close(self) -> None:
        self.tmux("kill-server")
        if self.path:
            Path(self.path).unlink(missing_ok=True)


def run(template: Path, folder: Path, without: str | None, keys: int, env: dict[str, str]):
    """One process: {path: (CPU s per key, wall s per key)}; startup as its own path."""
    ws = folder / "demo.db"
    for old in folder.glob("demo.db*"):  # the last run's database and its WAL
        old.unlink()
    for part in template.parent.glob("demo.db*"):
        shutil.copy(part, folder / part.name)
    patch = WITHOUT[without][1] if without else ""
    code = (
        patch + "from pathlib import Path\nfrom tui.app import GoldpanApp\n"
        f"GoldpanApp(Path({str(ws)!r}), annotator='bench', warm_indexes=False).run()\n"
    )
    exports = {"PYTHONPATH": str(ROOT), **env}
    pane = Pane(f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}", exports)
    result: dict[str, tuple[float, float]] = {}
    try:
        painted = pane.wait_for("status:", "order:")
        result["startup"] = (cpu_seconds(pane.pid), painted - pane.started)
        pane.tmux("send-keys", "-t", "b", "Enter")
        pane.wait_for("candidates judged", "pet-qc-00 ")
        time.sleep(0.5)  # the Label screen settles
        for phase, cycle in PHASES.items():
            cpu0 = cpu_seconds(pane.pid)
            walls = [pane.key(*cycle[i % len(cycle)]) for i in range(keys)]
            result[phase] = ((cpu_seconds(pane.pid) - cpu0) / keys, statistics.median(walls))
    finally:
        pane.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keys", type=int, default=24, help="keys (or pairs) per phase")
    parser.add_argument("--only", nargs="*", choices=sorted(WITHOUT), default=sorted(WITHOUT))
    bench_bytecode.add_option(parser)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("needs tmux")
    with tempfile.TemporaryDirectory(prefix="goldpan-bench-compat-") as tmp:
        folder = Path(tmp)
        env, said = bench_bytecode.environment(args.compile_each_run, folder / "pycache")
        template = folder / "template" / "demo.db"
        template.parent.mkdir()
        subprocess.run(
            [sys.executable, "-m", "tui.cli", "demo", "--path", str(template), "--no-open"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True,
            capture_output=True,
        )  # fmt: skip
        configs: list[str | None] = [None, *args.only]
        load0 = os.getloadavg()
        run(template, folder, None, 4, env)  # untimed: bytecode written, caches warm
        results: dict[str | None, list[dict[str, tuple[float, float]]]] = {c: [] for c in configs}
        for r in range(args.rounds):
            order = configs if r % 2 == 0 else configs[::-1]
            for config in order:
                results[config].append(run(template, folder, config, args.keys, env))
            print(f"round {r + 1} done, load {os.getloadavg()[0]:.2f}", flush=True)
        load1 = os.getloadavg()

    def median(config: str | None, path: str, i: int) -> float:
        return statistics.median(res[path][i] for res in results[config])

    paths = ["startup", *PHASES]
    print("\nmedians over", args.rounds, "runs (CPU ms per key | wall ms per key; startup: "
          "CPU ms and wall ms to the first paint)")  # fmt: skip
    for config in configs:
        name = "with every use" if config is None else f"without {config}"
        cells = "  ".join(
            f"{p} {median(config, p, 0) * 1000:6.1f} | {median(config, p, 1) * 1000:6.1f}"
            for p in paths
        )
        print(f"{name:28} {cells}")
    print("\neach use's gain on its own path (without / with - 1; CPU, wall):")
    for use in args.only:
        path = WITHOUT[use][0]
        cpu = median(use, path, 0) / median(None, path, 0) - 1
        wall = median(use, path, 1) / median(None, path, 1) - 1
        verdict = "keep (>= 10%)" if max(cpu, wall) >= 0.10 else "remove (< 10%)"
        print(f"{use:20} {path:8} CPU {cpu:+6.1%}  wall {wall:+6.1%}  -> {verdict}")
    print(
        f"\nload average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, after "
        f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} on {os.cpu_count()} cores; "
        f"bytecode {said}"
    )


if __name__ == "__main__":
    main()
