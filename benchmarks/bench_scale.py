"""A 200,000-document workspace: building the BM25 index once, then pooling a new question.

Where PYTHONDONTWRITEBYTECODE is set (no installed goldpan runs so), the processes get a
bytecode folder of their own, filled once before the runs, unless ``--compile-each-run``.

Run from the repository root::

    python benchmarks/bench_scale.py                  # 200,000 documents
    python benchmarks/bench_scale.py --docs 50000     # a smaller corpus

The corpus is synthetic (nothing is committed): short documents (8 to 40 words) drawn
from a Zipf-like vocabulary of 60,000 words, written straight into a fresh workspace in a
temporary folder with one question. Then, each as its own ``goldpan`` process, as a user
runs them (timed from outside, peak memory from the kernel's count for the child):

(a) ``goldpan pool WS --retriever bm25-word``: reads and tokenizes the corpus, counts its
    terms, stores the counts in the workspace, ranks the question. Targets: <= 20 s and
    <= 1 GB peak.
(b) a new question is added, then ``goldpan pool WS --retriever bm25-word`` again: the
    stored counts are read back (no document is read or tokenized) and only the new
    question is ranked. Target: <= 1 s for the whole process.
(c) one document is edited, then the same pool: the counts are rebuilt for the new corpus
    (every question is stale, since its input hash names the corpus).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_bytecode

from engine.types import Doc, Question
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace

REPO = Path(__file__).resolve().parents[1]
VOCAB = 60_000
BUILD_TARGET_S = 20.0
BUILD_TARGET_MB = 1024.0
POOL_TARGET_S = 1.0


def make_corpus(n_docs: int, seed: int = 0) -> list[Doc]:
    """Short synthetic documents over a Zipf-like vocabulary."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(VOCAB)]
    cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(VOCAB)))
    docs = []
    for i in range(n_docs):
        n = rng.randint(8, 40)
        text = " ".join(rng.choices(words, cum_weights=cum, k=n))
        docs.append(Doc(f"d{i:07d}", f"doc {i}", text))
    return docs


BYTECODE: dict[str, str] = {}
"""Environment of the ``goldpan`` processes for their bytecode (set by main)."""


def goldpan(*argv: str) -> tuple[float, float]:
    """Run ``goldpan ARGV`` in a child process: (wall seconds, peak MB of that child)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **BYTECODE}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "tui.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0:
        sys.exit(f"goldpan {' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    # ru_maxrss of the children is the largest so far: exact for the first child, a lower
    # bound check for the later ones (they are reported only when larger)
    return wall, max(peak, before) / 1024.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=200_000)
    bench_bytecode.add_option(parser, "every process")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="goldpan-scale-") as tmp:
        env, said = bench_bytecode.environment(args.compile_each_run, Path(tmp) / "pyc")
        BYTECODE.update(env)
        if env:  # untimed: the imports of what pool runs write their bytecode
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import tui.cli.commands.workspace, engine.analysis.analyses, "
                    "engine.retrieve.runner, engine.pooling",
                ],
                env={**os.environ, "PYTHONPATH": str(REPO), **BYTECODE},
                check=True,
            )
        print(f"bytecode of the goldpan processes: {said}")
        path = Path(tmp) / "scale.db"
        t0 = time.perf_counter()
        docs = make_corpus(args.docs)
        ws = new_workspace(path)
        ws.write_docs(docs)
        ws.write_questions([Question("q1", " ".join(docs[123].text.split()[:5]))])
        ws.close()
        size = path.stat().st_size / 1e6
        print(
            f"workspace: {args.docs:,} documents, 1 question, {size:.0f} MB "
            f"(made in {time.perf_counter() - t0:.1f} s, not counted)"
        )
        pool = ["pool", str(path), "--retriever", "bm25-word", "--quiet"]
        build_s, build_mb = goldpan(*pool)
        print(f"(a) first pool (tokenize, count, store, rank): {build_s:.2f} s", end="")
        print(f", peak {build_mb:.0f} MB")
        ws = Workspace.open(path)
        ws.add_question(" ".join(docs[4567].text.split()[:6]), [], "bench")
        ws.close()
        again_s, _ = goldpan(*pool)
        print(f"(b) new question, pool after reopen: {again_s:.2f} s (whole process)")
        info_s, _ = goldpan("info", str(path))
        print(f"    for scale, `goldpan info` (process start and imports): {info_s:.2f} s")
        ws = Workspace.open(path)
        d = docs[99]
        ws.write_docs([Doc(d.id, d.title, d.text + " edited")])
        ws.close()
        edit_s, _ = goldpan(*pool)
        print(f"(c) one document edited, pool (counts rebuilt): {edit_s:.2f} s")
        ok_build = build_s <= BUILD_TARGET_S and build_mb <= BUILD_TARGET_MB
        print(
            f"target build <= {BUILD_TARGET_S:g} s and <= {BUILD_TARGET_MB:g} MB: "
            f"{'met' if ok_build else 'NOT met'}"
        )
        print(
            f"target pool after reopen <= {POOL_TARGET_S:g} s: "
            f"{'met' if again_s <= POOL_TARGET_S else 'NOT met'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
