"""Peak memory of pooling a corpus with one large document, as a multiple of its size.

Run from the repository root::

    python benchmarks/bench_pool_memory.py              # one 50 MB document
    python benchmarks/bench_pool_memory.py --mb 250     # the size issue 12 reported

A workspace is made in a temporary folder with one generated document of ``--mb``
megabytes (ASCII words drawn from a 50,000-word vocabulary, Zipf-distributed, with
spaces and line breaks) and a few small ones, and one question. Then ``goldpan pool``
runs the three built-in word tokenizers' BM25 retrievers in a child process, and the
child's peak resident set size (``VmHWM``) is read. The same is done on the same
workspace without the large document, and the difference is reported as a multiple of
the document's size: what pooling costs per byte of its largest document. The target
(issue 12) is at most 4x.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RETRIEVERS = ("bm25-word", "bm25-bigram", "bm25-word+bigram")


def document(size: int, seed: int = 0) -> str:
    """About ``size`` characters of ASCII text from a Zipf-distributed vocabulary."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i:x}" for i in range(50_000)]
    ranks = np.minimum(rng.zipf(1.2, size // 4), len(vocab)) - 1
    words = [vocab[r] for r in ranks.tolist()]
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return "\n".join(lines)[:size]


def peak_rss_of(argv: list[str]) -> tuple[int, float]:
    """(peak RSS in bytes, seconds) of a child goldpan process."""
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across fork and exec, so a child would
    # report this (large) process's peak
    code = (
        "import sys, json\n"
        "from tui.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0]\n"
        "print(json.dumps([rc, int(hwm.split()[1])]))\n"
    )
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True
    )
    seconds = time.perf_counter() - start
    rc, kib = json.loads(out.stdout.strip().splitlines()[-1])
    if rc != 0:
        raise SystemExit(f"goldpan {' '.join(argv)} exited {rc}: {out.stderr}")
    return int(kib) * 1024, seconds


def workspace(folder: Path, big: str | None) -> Path:
    from engine.workspace_setup import new_workspace
    from tui.cli import main

    path = folder / ("big.db" if big else "small.db")
    new_workspace(path).close()
    docs = folder / ("docs-big" if big else "docs-small")
    docs.mkdir()
    for i in range(5):
        (docs / f"d{i}.md").write_text(f"# doc {i}\n\nsmall document w{i} w1 w2\n")
    if big is not None:
        (docs / "big.md").write_text(f"# big\n\n{big}\n")
    questions = folder / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "text": "w1 w2 w3"}) + "\n")
    for argv in (
        ["import", "docs", str(path), str(docs)],
        ["import", "questions", str(path), str(questions)],
    ):
        if main(argv) != 0:
            raise SystemExit(f"could not build the workspace: {argv}")
    return path


def main() -> None:
    """Build, pool, report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the large document")
    args = parser.parse_args()
    size = int(args.mb * 1_000_000)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        text = document(size)
        big = workspace(folder, text)
        small = workspace(folder, None)
        del text
        pool = ["pool", "--quiet", "--force"]
        for name in RETRIEVERS:
            pool += ["--retriever", name]
        base, _ = peak_rss_of([pool[0], str(small), *pool[1:]])
        peak, seconds = peak_rss_of([pool[0], str(big), *pool[1:]])
    extra = peak - base
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    print(f"largest document: {size / 1e6:.0f} MB ({size:,} characters, ASCII)")
    print(f"goldpan pool ({', '.join(RETRIEVERS)}): {seconds:.1f} s")
    print(f"peak RSS: {peak / 1e6:.0f} MB; without the document: {base / 1e6:.0f} MB")
    print(
        f"pooling cost of the document: {extra / 1e6:.0f} MB = {extra / size:.2f}x its size "
        f"(target: at most 4x, {'met' if extra <= 4 * size else 'NOT met'})"
    )
    print(f"peak RSS / document size: {peak / size:.2f}x (with the interpreter and the rest)")


if __name__ == "__main__":
    main()
