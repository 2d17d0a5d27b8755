"""``goldpan fidelity``: top-1 agreement, rank correlation over the union of the top k, ties.

The correlations are checked against scipy.stats (kendalltau, variant b; spearmanr) on
random samples full of ties, and on a hand-computed case; the CLI's figures on the demo
workspace are recomputed here from the cached rankings with scipy.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from engine.analysis.fidelity import (
    MOSTLY_TIES,
    fidelity,
    fidelity_of,
    kendall_tau_b,
    spearman_rho,
    tied_rows,
    union_scores,
)
from engine.demo import build_demo
from engine.ingest import import_run
from engine.retrieve.runner import refresh_runs
from engine.types import CachedRun
from engine.workspace import Workspace

stats = pytest.importorskip("scipy.stats")


def run(name: str, qid: str, pairs: list[tuple[str, float]]) -> CachedRun:
    return CachedRun(
        name, qid, tuple(d for d, _ in pairs), tuple(s for _, s in pairs), 0.0, "", 100
    )


@pytest.mark.parametrize("seed", range(40))
def test_kendall_and_spearman_equal_scipy_with_ties(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 25)
    x = [float(rng.randint(0, 4)) for _ in range(n)]  # few values: many ties
    y = [float(rng.randint(0, 4)) for _ in range(n)]
    want_tau = stats.kendalltau(x, y).statistic
    want_rho = stats.spearmanr(x, y).statistic
    got_tau, got_rho = kendall_tau_b(x, y), spearman_rho(x, y)
    if math.isnan(want_tau):
        assert got_tau is None and got_rho is None
    else:
        assert got_tau == pytest.approx(want_tau, abs=1e-12)
        assert got_rho == pytest.approx(want_rho, abs=1e-12)


def test_a_hand_computed_question():
    # A: d1 3, d2 2, d3 1; B: d2 5, d1 4, d4 1 (k = 3). Union d1 d2 d3 d4; d4 is outside
    # A's top 3 and d3 outside B's, each ranked below all of that side's top 3.
    # Pairs: d1d2 A+ B- discordant; d1d3 C; d1d4 C; d2d3 C; d2d4 C; d3d4 A+ B- D.
    # C = 4, D = 2, no ties: tau = 2 / 6. Ranks A (4 = best): 4 3 2 1, B: 3 4 1 2;
    # rho = 1 - 6 * (1 + 1 + 1 + 1) / (4 * 15) = 0.6.
    a = run("A", "q", [("d1", 3.0), ("d2", 2.0), ("d3", 1.0)])
    b = run("B", "q", [("d2", 5.0), ("d1", 4.0), ("d4", 1.0)])
    union, xa, xb = union_scores(a, b, 3)
    assert union == ["d1", "d2", "d3", "d4"]
    report = fidelity_of("A", "B", {"q": a}, {"q": b}, ["q"], k=3)
    (q,) = report.questions
    assert q.kendall_tau == pytest.approx(1 / 3)
    assert q.spearman == pytest.approx(0.6)
    assert q.same_top1 is False and q.same_top1_up_to_ties is False
    assert report.top1_agreement == 0.0


def test_tie_share_counts_ties_across_the_cutoff_and_warns_when_mostly_ties():
    # top 3 of A: 2, 2, 1 and the 4th row scores 1 too: all three rows sit in tied groups
    a = run("A", "q", [("d5", 2.0), ("d4", 2.0), ("d3", 1.0), ("d2", 1.0), ("d1", 0.5)])
    b = run("B", "q", [("d4", 9.0), ("d5", 8.0), ("d1", 7.0)])
    assert tied_rows(a, 3) == 3 and tied_rows(b, 3) == 0
    report = fidelity_of("A", "B", {"q": a}, {"q": b}, ["q", "other"], k=3)
    assert report.tie_share("a") == 1.0 > MOSTLY_TIES and report.tie_share("b") == 0.0
    assert report.missing == 1
    # A's first is d5 by the doc-id tie-break; B's first d4 is tied with it
    q = report.questions[0]
    assert q.same_top1 is False and q.same_top1_up_to_ties is True
    (warning,) = report.warnings
    assert warning.startswith("A's top 3 is mostly ties: 100% of its top-3 rows")


def test_identical_rankings_agree_fully():
    a = run("A", "q", [("d3", 3.0), ("d2", 2.0), ("d1", 1.0)])
    report = fidelity_of("A", "A", {"q": a}, {"q": a}, ["q"], k=3)
    assert report.top1_agreement == 1.0 and report.kendall_tau == 1.0 and report.spearman == 1.0
    assert report.warnings == []


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fid") / "demo.db"
    build_demo(path, pool=False, models=False).close()
    return path


def fidelity_json(path: Path, a: str, b: str) -> dict:
    """What ``goldpan fidelity A B --json`` reports: A and B pooled as needed, compared."""
    with Workspace.open(path) as ws:
        refresh_runs(ws, [a, b])
        return json.loads(json.dumps(fidelity(ws, a, b).to_json()))


def test_fidelity_on_the_demo_equals_scipy_on_the_cached_rankings(demo):
    got = fidelity_json(demo, "bm25-word", "bm25-bigram")
    with Workspace.open(demo, readonly=True) as ws:
        a, b = ws.runs("bm25-word"), ws.runs("bm25-bigram")
        qids = [q.id for q in ws.questions()]
    assert got["questions"] == len(qids) == 49 and got["missing"] == 0
    taus, rhos, same = [], [], 0
    for qid in qids:
        ra, rb = a[qid], b[qid]
        top_a = dict(zip(ra.doc_ids[:10], ra.scores[:10], strict=True))
        top_b = dict(zip(rb.doc_ids[:10], rb.scores[:10], strict=True))
        union = sorted(set(top_a) | set(top_b))
        xa = [top_a.get(d, -1e300) for d in union]  # left out: below all, tied
        xb = [top_b.get(d, -1e300) for d in union]
        tau = stats.kendalltau(xa, xb).statistic
        if not math.isnan(tau):
            taus.append(tau)
            rhos.append(stats.spearmanr(xa, xb).statistic)
        same += bool(ra.doc_ids) and bool(rb.doc_ids) and ra.doc_ids[0] == rb.doc_ids[0]
    assert got["kendall_tau_b"] == pytest.approx(sum(taus) / len(taus), abs=1e-12)
    assert got["spearman_rho"] == pytest.approx(sum(rhos) / len(rhos), abs=1e-12)
    assert got["top1_agreement"] == pytest.approx(same / len(qids))
    assert 0 < got["top1_agreement"] < 1  # two different tokenizers: a real comparison


def write_flat_run(workspace: Path, trec: Path) -> Path:
    """A TREC run named flat where every question's first 10 documents all score 1."""
    with Workspace.open(workspace, readonly=True) as ws:
        qids = [q.id for q in ws.questions()]
        docs = [d.id for d in ws.docs()][:10]
    trec.write_text(
        "".join(f"{q} Q0 {d} {i + 1} 1.0 flat\n" for q in qids for i, d in enumerate(docs)),
        encoding="utf-8",
    )
    return trec


def test_a_mostly_tied_imported_run_is_warned_about(demo, tmp_path):
    """A run where every document scores 1: its order is only the doc-id tie-break."""
    trec = write_flat_run(demo, tmp_path / "flat.trec")
    with Workspace.open(demo) as ws:
        import_run(ws, trec, "flat")
    got = fidelity_json(demo, "flat", "bm25-word")
    assert got["tie_share"] == {"flat": 1.0, "bm25-word": got["tie_share"]["bm25-word"]}
    assert got["tie_share"]["bm25-word"] < MOSTLY_TIES
    assert any(w.startswith("flat's top 10 is mostly ties: 100%") for w in got["warnings"])
