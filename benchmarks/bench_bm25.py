"""How fast goldpan pools BM25 rankings, against bm25s and rank_bm25 on the same questions.

Run from the repository root::

    python benchmarks/bench_bm25.py                 # every question (rank_bm25: ~1-2 min)
    python benchmarks/bench_bm25.py --sample 500    # rank_bm25 on 500 questions, scaled up
    python benchmarks/bench_bm25.py --data PATH     # another SQuAD 1.1 file
    python benchmarks/bench_bm25.py --repeat 5      # bm25s and goldpan 5 times each

The data is KorQuAD 1.0 dev at paragraph level (964 paragraphs, 5,774 questions), read
from ``shared/data`` beside the repository unless ``--data`` says otherwise.

What is measured, per tokenizer (``word``, ``bigram``, ``word+bigram``), in one run:

(a) rank_bm25: ``BM25Okapi.get_scores`` plus an ``argsort`` for the top 100, for every
    question, over tokens made beforehand with goldpan's own tokenizers. Tokenizing and
    building the ``BM25Okapi`` object are not in this number (the build is printed). With
    ``--sample N`` only N evenly spread questions are ranked and the time is scaled
    linearly to all questions; the output says so.
(b) bm25s (``method="lucene"``, goldpan's default formula): tokenize every document and
    question with goldpan's tokenizer, ``BM25.index`` the document tokens, ``retrieve``
    the top 100 of every question (query terms outside the vocabulary dropped first, as
    bm25s needs). Nothing is stored.
(c) goldpan: the whole pooling job, ``refresh_runs(ws, [bm25-word, bm25-bigram,
    bm25-word+bigram], depth=100)`` on a fresh workspace in a temporary folder: reading
    the corpus, tokenizing documents and questions, building the index, ranking and
    writing every ranking to SQLite, and closing the workspace (the checkpoint that
    copies what the pool wrote to the write-ahead log into the file). Creating the
    workspace and importing the file are not in this number (the import time is
    printed). goldpan ranks on a worker thread
    (and chunks of a batch on up to 4 threads) while it stores the retriever before, so
    its per-retriever seconds overlap; the total is the whole call.

(d) the whole ``goldpan pool WS --retriever bm25-word --retriever bm25-bigram
    --retriever bm25-word+bigram --quiet`` process, as a user runs it, on a copy of a
    workspace the corpus was imported into beforehand: Python's start, the imports, the
    pool of (c), and its report (the documents only one retriever found). Its CPU seconds
    (user + system, of the process and anything it waited for) are printed beside: on a
    loaded machine they tell more than the wall time.

Where PYTHONDONTWRITEBYTECODE is set (no installed goldpan runs so), the (d) processes get
a bytecode folder of their own that one untimed run fills, unless ``--compile-each-run``.

(b), (c) and (d) each run ``--repeat`` times (default 3), alternating, every run in a
fresh Python process of its own (so that neither pays for the other's heap, nor for
rank_bm25's), and the medians are compared. The machine's load average is printed.

Targets (all three tokenizers together): goldpan <= 1/10 of rank_bm25's ranking time,
goldpan's whole job <= 0.5 x bm25s's tokenize + index + retrieve, and the whole
``goldpan pool`` process <= 0.5 x bm25s's, in one process (issue 48).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bench_bytecode
import numpy as np
from rank_bm25 import BM25Okapi

from engine.formats.squad import read_squad
from engine.ingest import import_squad
from engine.retrieve.runner import refresh_runs
from engine.tokenize import bigram_tokens, word_bigram_tokens, word_tokens
from engine.workspace_setup import new_workspace

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "korquad_v1.0_dev" / "KorQuAD_v1.0_dev.json"
DEPTH = 100
TARGET_RATIO = 10.0
BM25S_TARGET = 0.5
PROCESS_TARGET = 0.5

TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "word": word_tokens,
    "bigram": bigram_tokens,
    "word+bigram": word_bigram_tokens,
}


def time_rank_bm25(
    doc_texts: list[str], questions: list[str], sample: int
) -> dict[str, tuple[float, float, float]]:
    """tokenizer -> (build seconds, measured ranking seconds, ranking seconds scaled to all)."""
    n = len(questions)
    picked = [questions[i * n // sample] for i in range(sample)] if sample < n else questions
    out = {}
    for name, tokenize in TOKENIZERS.items():
        doc_tokens = [tokenize(t) for t in doc_texts]
        query_tokens = [tokenize(q) for q in picked]
        t0 = time.perf_counter()
        bm25 = BM25Okapi(doc_tokens)
        build = time.perf_counter() - t0
        t0 = time.perf_counter()
        for toks in query_tokens:
            scores = bm25.get_scores(toks)
            np.argsort(-scores)[:DEPTH]
        ranking = time.perf_counter() - t0
        out[name] = (build, ranking, ranking * n / len(picked))
        print(f"  rank_bm25 {name:<12} {ranking:7.2f} s for {len(picked)} questions", flush=True)
    return out


def time_bm25s(doc_texts: list[str], questions: list[str]) -> dict[str, float] | None:
    """tokenizer -> bm25s seconds (tokenize + index + retrieve); None without bm25s."""
    try:
        import bm25s
    except ImportError:
        return None
    out = {}
    for name, tokenize in TOKENIZERS.items():
        t0 = time.perf_counter()
        doc_tokens = [tokenize(t) for t in doc_texts]
        query_tokens = [tokenize(q) for q in questions]
        model = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
        model.index(doc_tokens, show_progress=False)
        vocab = model.vocab_dict
        known = [[t for t in toks if t in vocab] for toks in query_tokens]
        model.retrieve(known, k=DEPTH, show_progress=False)
        out[name] = time.perf_counter() - t0
    return out


def time_goldpan(data: Path, n_questions: int) -> dict[str, float]:
    """The import's seconds, the pooling call's and each retriever's (they overlap)."""
    names = [f"bm25-{tok}" for tok in TOKENIZERS]
    with tempfile.TemporaryDirectory(prefix="goldpan-bench-") as tmp:
        ws = new_workspace(Path(tmp) / "bench.db")
        try:
            t0 = time.perf_counter()
            import_squad(ws, data, "paragraph")
            imported = time.perf_counter() - t0
            t0 = time.perf_counter()
            report = refresh_runs(ws, names, depth=DEPTH)
            ws.close()  # its WAL checkpoint writes the rankings into the file itself
            pooled = time.perf_counter() - t0
        finally:
            ws.close()
    for name in names:
        if report.ran.get(name) != n_questions:
            sys.exit(f"goldpan ran {report.ran.get(name)} questions for {name}, not {n_questions}")
    per = {name.removeprefix("bm25-"): report.seconds[name] for name in names}
    return {"import": imported, "total": pooled, **per}


def make_template(data: Path, folder: Path) -> Path:
    """A workspace with the corpus imported (paragraph level), nothing pooled yet."""
    path = folder / "template.db"
    ws = new_workspace(path)
    try:
        import_squad(ws, data, "paragraph")
        ws.checkpoint()
    finally:
        ws.close()
    return path


BYTECODE: dict[str, str] = {}
"""Environment of the timed ``goldpan pool`` processes for their bytecode (set by main)."""


def time_process(template: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one whole ``goldpan pool`` process on a copy of ``template``."""
    with tempfile.TemporaryDirectory(prefix="goldpan-bench-") as tmp:
        ws = Path(tmp) / "pool.db"
        shutil.copy(template, ws)
        argv = [sys.executable, "-m", "tui.cli", "pool", str(ws), "--quiet"]
        for tok in TOKENIZERS:
            argv += ["--retriever", f"bm25-{tok}"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(
            argv,
            capture_output=True,
            check=True,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), **BYTECODE},
        )
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu


def run_one(which: str, data: Path) -> None:
    """Measure one contender in this (fresh) process and print its seconds as JSON."""
    squad = read_squad(data, "paragraph")
    if which == "bm25s":
        found = time_bm25s([d.text for d in squad.docs], [q.text for q in squad.questions])
        out = None if found is None else {**found, "total": sum(found.values())}
    else:
        out = time_goldpan(data, len(squad.questions))
    print(json.dumps(out))


def measured_apart(which: str, data: Path) -> dict[str, float] | None:
    """Seconds of one contender's run in a fresh Python process."""
    done = subprocess.run(
        [sys.executable, __file__, "--data", str(data), "--one", which],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    found: dict[str, float] | None = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="a SQuAD 1.1 JSON file")
    parser.add_argument(
        "--sample",
        type=int,
        default=None,
        help="rank_bm25 ranks N evenly spread questions, scaled up linearly (default: all)",
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of bm25s and of goldpan (default 3)"
    )
    bench_bytecode.add_option(parser, "every (d) process")
    parser.add_argument("--one", choices=("bm25s", "goldpan"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.data.is_file():
        parser.error(f"{args.data} not found; pass --data PATH to a SQuAD 1.1 JSON file")
    if args.one:
        run_one(args.one, args.data)
        return 0

    squad = read_squad(args.data, "paragraph")
    doc_texts = [d.text for d in squad.docs]
    questions = [q.text for q in squad.questions]
    n = len(questions)
    sample = n if args.sample is None else max(1, min(args.sample, n))
    scaled = sample < n

    print(f"data: {args.data} ({len(doc_texts)} paragraphs, {n} questions), depth {DEPTH}")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"{platform.machine()}, {platform.system()}"
    )
    print()
    load_before = f"{os.getloadavg()[0]:.2f}"
    print("(a) rank_bm25 BM25Okapi: get_scores + argsort top 100, tokens made beforehand")
    ref = time_rank_bm25(doc_texts, questions, sample)
    print(f"(b) bm25s and (c) goldpan, {args.repeat} runs each, each in a fresh process")
    print("    and (d) the whole `goldpan pool` process on an imported copy")
    fast_runs: list[dict[str, float]] = []
    ours_runs: list[dict[str, float]] = []
    process_runs: list[float] = []
    process_cpu: list[float] = []
    folder = Path(tempfile.mkdtemp(prefix="goldpan-bench-template-"))
    try:
        template = make_template(args.data, folder)
        env, said = bench_bytecode.environment(args.compile_each_run, folder / "pyc")
        BYTECODE.update(env)
        if env:
            time_process(template)  # untimed: writes the bytecode
        print(f"    bytecode of the (d) processes: {said}")
        for i in range(max(1, args.repeat)):
            found = measured_apart("bm25s", args.data)
            if found is not None:
                fast_runs.append(found)
            ours_runs.append(measured_apart("goldpan", args.data))  # type: ignore[arg-type]
            wall, cpu = time_process(template)
            process_runs.append(wall)
            process_cpu.append(cpu)
            bm = f"bm25s {found['total']:.2f} s, " if found else ""
            print(
                f"  run {i + 1}: {bm}goldpan {ours_runs[-1]['total']:.2f} s, "
                f"goldpan pool process {wall:.2f} s ({cpu:.2f} s CPU)",
                flush=True,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if not fast_runs:
        print("  bm25s is not installed (pip install bm25s): no comparison")

    def median(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    fast = {name: median(fast_runs, name) for name in TOKENIZERS} if fast_runs else None
    per_retriever = {name: median(ours_runs, name) for name in TOKENIZERS}
    pooled = median(ours_runs, "total")
    print(f"  import squad (paragraph level), not counted: {median(ours_runs, 'import'):.2f} s")
    if process_cpu:
        print(f"  goldpan pool process CPU, median: {statistics.median(process_cpu):.2f} s")
    print(f"  load average before and after: {load_before} / {os.getloadavg()[0]:.2f}")
    print()

    note = f" (measured on {sample} questions, scaled x{n / sample:.2f})" if scaled else ""
    print(f"per tokenizer, seconds for all {n} questions{note}, medians:")
    header = (
        f"  {'tokenizer':<12} {'rank_bm25':>10} {'bm25s':>7} {'goldpan':>9} "
        f"{'rank_bm25/goldpan':>18} {'goldpan/bm25s':>14}   rank_bm25 build"
    )
    print(header)
    for name, (build, _, full) in ref.items():
        ours = per_retriever[name]
        other = fast[name] if fast else float("nan")
        print(
            f"  {name:<12} {full:10.2f} {other:7.2f} {ours:9.2f} {full / ours:17.1f}x "
            f"{ours / other:13.2f}x   {build:.2f} s"
        )
    total_ref = sum(full for _, _, full in ref.values())
    total_fast = median(fast_runs, "total") if fast_runs else float("nan")
    print(
        f"  {'total':<12} {total_ref:10.2f} {total_fast:7.2f} {pooled:9.2f} "
        f"{total_ref / pooled:17.1f}x {pooled / total_fast:13.2f}x"
    )
    print()
    if scaled:
        print(f"rank_bm25 time is extrapolated linearly from {sample} of {n} questions.")
    print(
        "goldpan's per-tokenizer seconds are refresh_runs' own and overlap (ranking one "
        "retriever while storing another); the total is the whole call and the close."
    )
    met = pooled <= total_ref / TARGET_RATIO
    print(
        f"target goldpan <= 1/{TARGET_RATIO:g} of rank_bm25: "
        f"{'met' if met else 'NOT met'} ({pooled:.2f} s vs {total_ref / TARGET_RATIO:.2f} s)"
    )
    if fast:
        met = pooled <= BM25S_TARGET * total_fast
        print(
            f"target goldpan <= {BM25S_TARGET:g} x bm25s: {'met' if met else 'NOT met'} "
            f"({pooled:.2f} s vs {BM25S_TARGET * total_fast:.2f} s, "
            f"ratio {pooled / total_fast:.2f})"
        )
        process = statistics.median(process_runs)
        met = process <= PROCESS_TARGET * total_fast
        print(
            f"target whole `goldpan pool` process <= {PROCESS_TARGET:g} x bm25s: "
            f"{'met' if met else 'NOT met'} ({process:.2f} s vs "
            f"{PROCESS_TARGET * total_fast:.2f} s, ratio {process / total_fast:.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
