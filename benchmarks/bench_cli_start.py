"""How long a ``goldpan`` command takes as a whole process, and what it imports.

Run from the repository root::

    python benchmarks/bench_cli_start.py
    python benchmarks/bench_cli_start.py --runs 20 --workspace workspaces/demo.db

What is measured: the wall time of a new ``python -m tui.cli ...`` process, start to exit
(interpreter start, imports, the command's work), for ``goldpan --version``, ``info`` on
the demo workspace, ``label`` (one label written to a copy of it) and ``score --no-pool``
for comparison. Each command runs ``--runs`` times after one warm-up; the median and the
fastest wall time and the median CPU time (user + system) are printed, then the heavy
modules each command imported (``-X importtime``): numpy, scipy, sqlite_utils, pandas,
yaml, rich.progress, kiwipiepy, textual, torch.

The demo workspace is built (without opening it) when it is missing. Targets: ``info``
and ``label`` at most 0.5 s. The load average is printed: on a busy machine the wall times
grow (the CPU times much less).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 0.5
HEAVY = (
    "numpy",
    "scipy",
    "sqlite_utils",
    "pandas",
    "yaml",
    "rich.progress",
    "kiwipiepy",
    "textual",
    "torch",
)


def run_times(argv: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of each run of ``python -m tui.cli argv``.

    One warm-up run first. CPU time is what the process itself spent: it grows less than
    the wall time when other processes share the machine.
    """
    cmd = [sys.executable, "-m", "tui.cli", *argv]
    walls, cpus = [], []
    for i in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i:
            walls.append(wall)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls, cpus


def heavy_imports(argv: list[str]) -> list[str]:
    """The modules of ``HEAVY`` the command imported, from ``-X importtime``."""
    cmd = [sys.executable, "-X", "importtime", "-m", "tui.cli", *argv]
    result = subprocess.run(cmd, check=True, capture_output=True, text=True)
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    return [m for m in HEAVY if m in imported]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--workspace", default="workspaces/demo.db", help="the demo workspace")
    args = parser.parse_args()
    ws = Path(args.workspace)
    if not ws.exists():
        subprocess.run(
            [sys.executable, "-m", "tui.cli", "demo", "--no-open", "--path", str(ws)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "demo.db"
        shutil.copy(ws, copy)
        commands = {
            "--version": ["--version"],
            "info": ["info", str(ws)],
            "label": ["label", str(copy), "q01", "manual-r1", "2", "--annotator", "bench"],
            "score --no-pool": ["score", str(ws), "--no-pool", "--quiet"],
        }
        load = os.getloadavg()
        print(
            f"python {platform.python_version()} on {platform.machine()}, "
            f"{os.cpu_count()} cpus, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        )
        print(
            f"{'command':<16} {'median s':>9} {'fastest s':>10} {'cpu s':>6}  target  heavy imports"
        )
        for name, argv in commands.items():
            times, cpus = run_times(argv, args.runs)
            median = statistics.median(times)
            target = (
                ("ok" if median <= TARGET_SECONDS else "MISSED")
                if name in ("info", "label")
                else "-"
            )
            heavy = ", ".join(heavy_imports(argv)) or "none"
            cpu = statistics.median(cpus)
            print(
                f"{name:<16} {median:>9.3f} {min(times):>10.3f} {cpu:>6.3f}  {target:<6}  {heavy}"
            )


if __name__ == "__main__":
    main()
