"""The bytecode of the processes a benchmark times: written once, as pip does at install.

pip writes an installed package's bytecode at install (a source checkout, on its first
run). Where ``PYTHONDONTWRITEBYTECODE`` is set, as in some sandboxes and CI images, every
timed ``goldpan`` process would compile goldpan's modules from source instead: some
0.3-0.5 s of CPU no user pays. So the benchmarks that time whole processes point them at a
bytecode folder of the run's own (``PYTHONPYCACHEPREFIX``), which one untimed process fills
before the timed ones, unless ``--compile-each-run`` keeps the environment as it is; their
output says which.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_option(parser: argparse.ArgumentParser, each: str = "every run") -> None:
    """Add ``--compile-each-run`` (``each``: what compiles, in its help)."""
    parser.add_argument(
        "--compile-each-run",
        action="store_true",
        help=f"where PYTHONDONTWRITEBYTECODE is set, keep it: {each} compiles goldpan's "
        "modules from source (no installed goldpan does: pip writes its bytecode)",
    )


def environment(compile_each_run: bool, folder: Path) -> tuple[dict[str, str], str]:
    """(what to add to the timed processes' environment, the line saying so).

    The environment is empty unless ``PYTHONDONTWRITEBYTECODE`` is set and not kept; then
    it unsets that (an empty value: Python writes bytecode) and names ``folder`` for the
    bytecode. The caller fills it with one untimed process.
    """
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return {}, "as this environment keeps it"
    if compile_each_run:
        return {}, "compiled from source in every process (PYTHONDONTWRITEBYTECODE)"
    env = {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(folder)}
    return env, "compiled once before the timed runs (PYTHONDONTWRITEBYTECODE is set here)"
