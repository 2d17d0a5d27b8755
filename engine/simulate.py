"""``goldpan simulate``: replay judging with one annotator's labels as the assessor.

A test set whose questions someone judged in full answers what an order, a stopping rule
or feedback beyond the pool would have cost and found: the same judging is replayed with
that annotator's grades (a document they did not judge is not relevant) as the Label
screen would have run it, question after question in id order, each question's order
learning from the questions before it as a session does.

For each policy the report gives, over the questions with a relevant pooled document:

* ``first_relevant``: judgments until the first relevant document (mean, median);
* ``all_found``: judgments until every pooled relevant document is found, and that as a
  share of the question's pool (mean over questions);
* ``judged_share``: the share of all pooled candidates judged (1 unless a stopping rule
  ends questions early; ``saved`` = 1 - it), and ``pooled_relevant_found``: the share of
  the pooled relevant documents found;
* ``found_at``: the share of all the assessor's relevant documents found within 10, 20
  and 50 judgments per question (in the pool, or beyond it with ``beyond_pool``);
* ``tau``: Kendall's tau-b between the retrievers' order by MRR (and by nDCG@10) under
  the policy's judgments and under the assessor's full judgments, with a 95% bootstrap
  interval (questions resampled, the same resamples for every policy);
* ``real_pairs_swapped``: the pairs of retrievers whose difference is real under the
  full judgments (:func:`engine.analysis.compare.verdict_of`, the verdict rule every front end
  presents) whose order the policy's judgments reverse.

The same figures are given for a random order (the mean over ``seeds`` seeds) and a
perfect order (every pooled relevant document first); each order's ``gap_closed`` is
(random - policy) / (random - perfect) of the judgments to the first relevant document and
to all of them: the share of what any order could save that this one saves.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.analysis.compare import DEFAULT_SAMPLES, percentile_interval, verdict_of
from engine.errors import BadInput
from engine.grades import is_relevant
from engine.judging.feedback import relevant_left
from engine.judging.order import ORDERS, Record, walk
from engine.judging.stopping import StopRule, offer
from engine.metrics import judge, per_question
from engine.pooling import only_found
from engine.simulate_setup import Figures, Question, Setup, Trace, _num, load
from engine.verdict import LEVEL, check_level

FloatArray = npt.NDArray[np.float64]

BUDGETS = (10, 20, 50)
"""Judgments per question at which ``found_at`` is reported."""

TAU_METRICS = ("mrr", "ndcg@10")
"""The metrics the retrievers are ordered by for Kendall's tau."""

DEFAULT_SEEDS = 20
"""Random orders averaged for the ``random`` row."""

__all__ = [
    "DEFAULT_SEEDS",
    "Figures",
    "Question",
    "Setup",
    "Trace",
    "kendall_tau_b",
    "load",
    "replay",
    "simulate",
]

Propose = Callable[[str, Mapping[str, int], set[str], int], list[str]]
"""Feedback: (question id, grades so far, documents to leave out, how many) -> documents."""


# -- replaying -------------------------------------------------------------------------


def _records(previous: Mapping[str, Record], q: Question, judged: Sequence[str]) -> None:
    """Add ``q``'s judged documents to the running records (in place)."""
    done = set(judged)
    for name, top in zip(q.view.names, q.view.tops(), strict=True):
        grades = [q.grade(d) for d in top if d in done]
        rec = Record(sum(1 for g in grades if is_relevant(g)), len(grades))
        previous[name] = previous.get(name, Record()) + rec  # type: ignore[index]


def _walk(order: str, q: Question, records: Mapping[str, Record], rng: Any) -> Iterator[str]:
    """The candidates of ``q`` in ``order``, an :data:`ORDERS` name or a baseline."""
    pool = q.view.pooled()
    if order == "random":
        yield from (pool[i] for i in rng.permutation(len(pool)))
    elif order == "perfect":
        fused = q.view.fused(pool)
        yield from [d for d in fused if is_relevant(q.grade(d))]
        yield from [d for d in fused if not is_relevant(q.grade(d))]
    elif order == "deeper":
        yield from _deeper(q)
    else:
        yield from walk(order, q.view, q.grade, records)


def _deeper(q: Question) -> list[str]:
    """A deeper pool at the same cost: every retriever's rank 1, then rank 2, ...

    Fused order within a rank, as deep as the cached rankings go.
    """
    best: dict[str, int] = {}
    for name in q.view.names:
        for rank, d in enumerate(q.view.rankings[name], start=1):
            best[d] = min(best.get(d, rank), rank)
    fused = q.view.fused(list(best))
    at = {d: i for i, d in enumerate(fused)}
    return sorted(best, key=lambda d: (best[d], at[d]))


def replay(
    setup: Setup,
    order: str,
    rule: StopRule | None,
    *,
    beyond: int | None = None,
    propose: Propose | None = None,
    batch: int = 5,
    rng: Any = None,
) -> list[Trace]:
    """Judge every question with ``order`` (and ``rule``, and feedback up to ``beyond``)."""
    records: dict[str, Record] = {}
    traces = []
    for q in setup.questions:
        pool = q.view.pooled()
        grades: dict[str, int] = {}
        order_seq: list[str] = []
        judged: list[str] | None = None
        for d in _walk(order, q, records, rng):
            order_seq.append(d)
            if judged is not None:
                continue
            grades[d] = q.grade(d)
            if propose is not None and is_relevant(grades[d]):
                judged = list(order_seq)  # feedback from the first relevant document on
            elif rule is not None and order != "deeper":
                rest = [x for x in pool if x not in grades]
                if offer(rule, order_seq + rest, grades, q.view, records) is not None:
                    judged = list(order_seq)
        if judged is None:
            judged = list(order_seq)
        if order == "deeper" and beyond is not None:
            judged = judged[:beyond]
            order_seq = [d for d in order_seq if d in set(pool)]
        rounds: list[tuple[int, int]] = []
        if beyond is not None and propose is not None and order != "deeper":
            known = {d: q.grade(d) for d in judged}
            leave = set(judged)
            while len(judged) < beyond:
                found = propose(q.id, known, leave, min(batch, beyond - len(judged)))
                if not found:
                    break
                for d in found:
                    judged.append(d)
                    known[d] = q.grade(d)
                    leave.add(d)
                rounds.append((len(found), sum(1 for d in found if is_relevant(known[d]))))
        _records(records, q, judged)
        traces.append(Trace(order_seq, judged, len(pool), rounds))
    return traces


def figures(setup: Setup, name: str, order: str, traces: Sequence[Trace], **kw: Any) -> Figures:
    """A policy's figures from its traces (tau and swaps are added by :func:`simulate`)."""
    first, last, share = [], [], []
    judged = pooled = pooled_rel = found_pooled = 0
    found = dict.fromkeys(BUDGETS, 0)
    total_rel = 0
    left: list[tuple[float, int]] = []
    for q, t in zip(setup.questions, traces, strict=True):
        pool = set(q.view.pooled())
        rel = [i for i, d in enumerate(t.order, 1) if d in pool and is_relevant(q.grade(d))]
        if rel:
            first.append(rel[0])
            last.append(rel[-1])
            share.append(rel[-1] / t.pool)
        in_pool = [d for d in t.judged if d in pool]
        judged += len(in_pool)
        pooled += t.pool
        pooled_rel += len(rel)
        found_pooled += sum(1 for d in in_pool if is_relevant(q.grade(d)))
        total_rel += q.relevant
        for b in BUDGETS:
            found[b] += sum(1 for d in t.judged[:b] if is_relevant(q.grade(d)))
        estimate = relevant_left(t.rounds) if t.rounds else None
        if estimate is not None:
            truly = q.relevant - sum(1 for d in t.judged if is_relevant(q.grade(d)))
            left.append((estimate, truly))
    return Figures(
        name=name,
        order=order,
        stop=kw.get("stop", False),
        beyond_pool=kw.get("beyond"),
        first=first,
        last=last,
        last_share=share,
        judged=judged,
        pooled=pooled,
        pooled_relevant=pooled_rel,
        pooled_relevant_found=found_pooled,
        found_at={b: (found[b] / total_rel if total_rel else math.nan) for b in BUDGETS},
        left=left,
    )


# -- retrievers' order under the policy's judgments -------------------------------------


@dataclass
class RankingCheck:
    """The retrievers' scores under the full judgments, and the resamples to reuse."""

    names: list[str]
    counts: FloatArray
    """Bootstrap resamples as draw counts per question (samples x questions)."""
    full: dict[str, FloatArray]
    """Metric -> questions x retrievers values under the full judgments."""
    full_mask: FloatArray
    """1 where a question has a relevant document under the full judgments."""
    real: dict[str, list[tuple[int, int, float]]]
    """Metric -> the pairs (i, j, mean i - j) whose difference is real."""


def _values(
    setup: Setup, qrels: Sequence[Mapping[str, int]]
) -> tuple[dict[str, FloatArray], FloatArray]:
    """Per metric: questions x retrievers values; and the mask of questions with gold."""
    names = setup.retrievers
    mask = np.array([1.0 if any(map(is_relevant, g.values())) else 0.0 for g in qrels])
    out = {}
    for metric in TAU_METRICS:
        cols = []
        for name in names:
            ranks = [setup.rankings[name].get(q.id, ()) for q in setup.questions]
            cols.append(per_question(judge(ranks, list(qrels)), metric))
        out[metric] = np.stack(cols, axis=1) if cols else np.zeros((len(qrels), 0))
    return out, mask


def ranking_check(setup: Setup, samples: int, seed: int) -> RankingCheck:
    """The full judgments' scores, their real pairs, and the resamples."""
    from engine.analysis.compare import _resample_counts

    full, mask = _values(setup, [q.truth for q in setup.questions])
    n = len(setup.questions)
    rng = np.random.default_rng(seed)
    counts = _resample_counts(rng, samples, n) if n else np.zeros((samples, 0))
    keep = mask > 0
    real: dict[str, list[tuple[int, int, float]]] = {}
    for metric, v in full.items():
        pairs = []
        for i, j in combinations(range(v.shape[1]), 2):
            a, b = v[keep, i], v[keep, j]
            if verdict_of(a, b, level=LEVEL, samples=samples, seed=seed).real:
                pairs.append((i, j, float((a - b).mean())))
        real[metric] = pairs
    return RankingCheck(setup.retrievers, counts, full, mask, real)


def kendall_tau_b(x: FloatArray, y: FloatArray) -> FloatArray:
    """Kendall's tau-b of each row pair of ``x`` and ``y`` (rows x items); NaN if undefined.

    The same value as :func:`scipy.stats.kendalltau` (tau-b) on each row.
    """
    x = np.atleast_2d(x)
    y = np.atleast_2d(y)
    i, j = np.triu_indices(x.shape[1], k=1)
    sx = np.sign(x[:, i] - x[:, j])
    sy = np.sign(y[:, i] - y[:, j])
    n0 = i.size
    tx = (sx == 0).sum(axis=1)
    ty = (sy == 0).sum(axis=1)
    den = np.sqrt((n0 - tx) * (n0 - ty).astype(np.float64))
    num = (sx * sy).sum(axis=1).astype(np.float64)
    out: FloatArray = np.full(x.shape[0], np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _means(values: FloatArray, mask: FloatArray, counts: FloatArray | None) -> FloatArray:
    """Means over the masked questions: once (``counts`` None) or per resample."""
    if counts is None:
        n = mask.sum()
        return (mask @ values) / n if n else np.full(values.shape[1], np.nan)
    n = counts @ mask
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts @ (values * mask[:, None])) / n[:, None]


def check_ranking(setup: Setup, check: RankingCheck, traces: Sequence[Trace], f: Figures) -> None:
    """Fill ``f``'s tau (with its interval) and real pairs swapped."""
    qrels = []
    for q, t in zip(setup.questions, traces, strict=True):
        done = set(t.judged)
        qrels.append({d: g for d, g in q.truth.items() if d in done})
    values, mask = _values(setup, qrels)
    for metric in TAU_METRICS:
        full, now = check.full[metric], values[metric]
        tau = float(kendall_tau_b(_means(full, check.full_mask, None), _means(now, mask, None))[0])
        both = kendall_tau_b(
            _means(full, check.full_mask, check.counts), _means(now, mask, check.counts)
        )
        both = both[np.isfinite(both)]
        lo, hi = percentile_interval(both) if both.size else (math.nan, math.nan)
        f.tau[metric] = (tau, lo, hi)
        m = _means(now, mask, None)
        f.swapped[metric] = sum(
            1 for i, j, diff in check.real[metric] if np.sign(m[i] - m[j]) != np.sign(diff)
        )


# -- the whole report ------------------------------------------------------------------


@dataclass
class Report:
    """What ``goldpan simulate`` prints."""

    setup: Setup
    rule: StopRule | None
    policies: list[Figures]
    seeds: int
    unique_relevant: dict[str, int]
    seconds: float
    feedback: str | None = None
    real_pairs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Metric -> the pairs of retrievers whose difference is real under full judgments."""

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document (names documented in docs/complete-gold.md)."""
        qs = self.setup.questions
        pools = [len(q.view.pooled()) for q in qs]
        pooled_rel = [sum(1 for d in q.view.pooled() if is_relevant(q.grade(d))) for q in qs]
        total_rel = sum(q.relevant for q in qs)
        return {
            "assessor": self.setup.assessor,
            "depth": self.setup.depth,
            "questions": len(qs),
            "questions_with_pooled_relevant": sum(1 for r in pooled_rel if r),
            "retrievers": self.setup.retrievers,
            "pool": {
                "candidates": _num(statistics.fmean(pools) if pools else math.nan),
                "relevant": _num(statistics.fmean(pooled_rel) if pooled_rel else math.nan),
                "relevant_share": _num(sum(pooled_rel) / total_rel if total_rel else math.nan),
            },
            "unique_relevant": self.unique_relevant,
            "real_pairs": {m: [list(p) for p in pairs] for m, pairs in self.real_pairs.items()},
            "stop": None
            if self.rule is None
            else {"after": self.rule.after, "below": self.rule.below},
            "feedback": self.feedback,
            "random_seeds": self.seeds,
            "policies": [p.to_json() for p in self.policies],
            "seconds": round(self.seconds, 3),
        }


def unique_relevant(setup: Setup) -> dict[str, int]:
    """Per first-stage retriever: relevant pooled documents no other one put in its top k."""
    qids = [q.id for q in setup.questions]
    truth = {q.id: q.truth for q in setup.questions}
    alone = only_found({n: setup.rankings[n] for n in setup.first_stage}, qids, setup.depth)
    return {
        n: sum(1 for qid, d in pairs if is_relevant(truth[qid].get(d, 0)))
        for n, pairs in alone.items()
    }


def simulate(
    setup: Setup,
    orders: Sequence[str] = ORDERS,
    rule: StopRule | None = None,
    *,
    beyond: int | None = None,
    propose: Propose | None = None,
    feedback: str | None = None,
    seeds: int = DEFAULT_SEEDS,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
) -> Report:
    """Every policy's figures: each order (with ``rule``), random and perfect.

    With ``beyond``: the default order followed by feedback, beside a deeper pool.
    """
    started = time.perf_counter()
    unknown = [o for o in orders if o not in ORDERS]
    if unknown:
        raise BadInput(f"unknown judging order {unknown[0]!r}; known: {', '.join(ORDERS)}")
    if seeds < 1:
        raise BadInput("--seeds must be at least 1")
    check_level(LEVEL, samples)
    check = ranking_check(setup, samples, seed)
    stop = rule is not None
    policies = []
    rows: list[tuple[Figures, list[list[Trace]]]] = []
    rng = np.random.default_rng(seed)
    randoms = [replay(setup, "random", rule, rng=rng) for _ in range(seeds)]
    rows.append((_mean_figures(setup, randoms, stop), randoms))
    perfect = replay(setup, "perfect", rule)
    rows.append((figures(setup, "perfect", "perfect", perfect, stop=stop), [perfect]))
    for order in dict.fromkeys(orders):
        traces = replay(setup, order, rule)
        rows.append((figures(setup, order, order, traces, stop=stop), [traces]))
    if beyond is not None:
        deeper = replay(setup, "deeper", None, beyond=beyond)
        rows.append((figures(setup, "deeper-pool", "deeper", deeper, beyond=beyond), [deeper]))
        if propose is not None:
            order = ORDERS[0]
            traces = replay(setup, order, rule, beyond=beyond, propose=propose)
            name = "beyond-pool"
            rows.append((figures(setup, name, order, traces, stop=stop, beyond=beyond), [traces]))
    for f, runs in rows:
        check_ranking(setup, check, runs[0], f)
        if len(runs) > 1:  # random: tau and swaps averaged over the seeds
            each = []
            for traces in runs:
                g = Figures(f.name, f.order, f.stop, None, [], [], [], 0, 0, 0, 0, {})
                check_ranking(setup, check, traces, g)
                each.append(g)
            for metric in TAU_METRICS:
                taus = [t for g in each if (t := g.tau[metric][0]) is not None and math.isfinite(t)]
                f.tau[metric] = (statistics.fmean(taus) if taus else math.nan, None, None)
                f.swapped[metric] = round(statistics.fmean(g.swapped[metric] for g in each))
        policies.append(f)
    random, perfect_f = policies[0], policies[1]
    for f in policies[2:]:
        if f.order == "deeper":
            continue
        f.gap_first = _gap(random.first_mean, f.first_mean, perfect_f.first_mean)
        f.gap_all = _gap(random.all_share, f.all_share, perfect_f.all_share)
    return Report(
        setup,
        rule,
        policies,
        seeds,
        unique_relevant(setup),
        time.perf_counter() - started,
        feedback,
        {
            m: [(check.names[i], check.names[j]) for i, j, _ in pairs]
            for m, pairs in check.real.items()
        },
    )


def _gap(random: float, policy: float, perfect: float) -> float:
    """(random - policy) / (random - perfect); NaN when random is already perfect."""
    span = random - perfect
    return (random - policy) / span if span > 0 else math.nan


def _mean_figures(setup: Setup, runs: Sequence[Sequence[Trace]], stop: bool) -> Figures:
    """The random row: each figure the mean over the seeds' runs."""
    each = [figures(setup, "random", "random", traces, stop=stop) for traces in runs]
    out = each[0]
    out.first = [x for f in each for x in f.first]
    out.last = [x for f in each for x in f.last]
    out.last_share = [x for f in each for x in f.last_share]
    out.judged = round(statistics.fmean(f.judged for f in each))
    out.pooled_relevant_found = round(statistics.fmean(f.pooled_relevant_found for f in each))
    out.found_at = {b: statistics.fmean(f.found_at[b] for f in each) for b in BUDGETS}
    return out
