"""How wrong a new retriever's scores are when its top 10 is little judged, by Judged@10.

Run: ``python benchmarks/bench_holes.py WS`` on a pooled workspace whose gold is deep
(e.g. the BEIR DBPedia subset imported with ``goldpan import beir``: its qrels come from
a pool far deeper than goldpan's).

Each retriever R in turn plays "the new retriever": the judgments are cut to the depth-10
pool of the *other* retrievers (what a team has after labeling without R), and R is
scored on them and on the full judgments. Per question, the error of a metric is its
value on the full judgments minus its value on the cut ones; the questions are binned by
R's Judged@10 on the cut judgments. This is the evidence behind the gate's default
``--min-judged 0.8`` (engine/ci/holes.py).
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np

from engine.gold import Status, workspace_golds
from engine.metrics import judge, per_question
from engine.workspace import Workspace

METRICS = ("ndcg@10", "mrr", "judged:ndcg@10", "bpref")
BINS = ((0.0, 0.5), (0.5, 0.8), (0.8, 1.0), (1.0, 1.01))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workspace")
    p.add_argument("--depth", type=int, default=10, help="the others' pool depth")
    args = p.parse_args()
    ws = Workspace.open(args.workspace, readonly=True)
    golds = workspace_golds(ws)
    scored = sorted(q for q, g in golds.items() if g.status is Status.LABELED)
    full = [golds[q].qrels for q in scored]
    names = [s.name for s in ws.retrievers()]
    runs = {n: ws.runs(n, scored) for n in names}
    ranked = {n: [list(runs[n][q].doc_ids) if q in runs[n] else [] for q in scored] for n in names}
    ws.close()
    errors: dict[tuple[float, float], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    print(f"{len(scored)} scored questions, {len(names)} retrievers, others pooled to {args.depth}")
    print(f"{'new retriever':<18}{'Judged@10':>10}" + "".join(f"{m:>16}" for m in METRICS))
    for new in names:
        others = [n for n in names if n != new]
        cut = []
        for i, q in enumerate(full):
            pool = {d for n in others for d in ranked[n][i][: args.depth]}
            cut.append({d: g for d, g in q.items() if d in pool})
        j_full = judge(ranked[new], full)
        j_cut = judge(ranked[new], cut)
        judged = per_question(j_cut, "judged@10")
        diffs = {m: per_question(j_full, m) - per_question(j_cut, m) for m in METRICS}
        for lo_hi in BINS:
            lo, hi = lo_hi
            mask = (judged >= lo) & (judged < hi)
            for m in METRICS:
                errors[lo_hi][m] += diffs[m][mask].tolist()
        print(
            f"{new:<18}{judged.mean():>10.3f}"
            + "".join(f"{diffs[m].mean():>+16.3f}" for m in METRICS)
        )
    print("\nper question, by Judged@10 on the cut judgments: mean |full - cut| (questions)")
    print(f"{'Judged@10':<12}" + "".join(f"{m:>16}" for m in METRICS))
    for lo, hi in BINS:
        cells = errors[(lo, hi)]
        n = len(cells[METRICS[0]])
        label = "1.0" if lo == 1.0 else f"[{lo:.1f}, {hi:.1f})"
        row = "".join(
            f"{np.mean(np.abs(cells[m])) if n else float('nan'):>10.3f} ({n:>3})" for m in METRICS
        )
        print(f"{label:<12}{row}")


if __name__ == "__main__":
    main()
