"""A model judge's report card (``goldpan judge --report``): can its grades stand in for people's?

Four figures, after the TREC 2024 RAG track's studies of automatic judging (Upadhyay et
al. 2024; Clarke & Dietz 2024):

1. **Agreement with people**: Cohen's kappa on relevant or not, judge against every
   grade a person gave to a pair it graded, with a 95% percentile interval from a
   bootstrap over *questions* (a question's pairs are not independent: the same text,
   the same pool) and the base rates (the share of those pairs people and the judge call
   relevant; a kappa means little without them). A score judge's thresholds were fitted
   on these very grades, so its kappa is of *held-out* grades: each question graded by
   thresholds fitted on the other folds (:func:`engine.judges.calibration.held_out_grades`).
2. **Self-consistency** of a command judge (an LLM behind a script, which may answer
   differently when asked again): a seeded sample of the pairs it graded is sent to it
   twice, in two runs of the command, the second in the reverse order; the report gives
   the share of identical grades and kappa between the two runs. Only a command this user
   trusts for this workspace is run (:func:`engine.judges.run.check_runnable`); else the
   report says why it is not measured. Model judges are deterministic: not asked.
3. **Ranking the retrievers**: Kendall's tau-b between the retrievers' ranking by a
   metric under people's judgments and under judgments where the judge fills the holes:
   a share of people's judgments is kept (seeded, drawn over every judged pair of the
   scored questions, several repeats), and every other pair the judge graded takes its
   grade. 100% kept is people's gold with only its holes filled; 0% is the judge alone.
4. **Circularity**: a judge that is the same model as a pooled retriever (or a retriever
   built on it: a fusion, a reranker over it) favours it; the report warns, and says where
   that retriever ranks under people and under the judge alone.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.analysis.compare import bootstrap_means, percentile_interval
from engine.errors import BadInput, Refused
from engine.grades import is_relevant
from engine.judges.calibration import Item, held_out_grades, stored_calibration
from engine.judges.circular import MODEL_PARAMS, Circular, circular_retrievers, model_key
from engine.judges.command import COMMAND_TIMEOUT_S, command_grades
from engine.judges.run import check_runnable, stored_judge
from engine.metrics import FloatArray, judge, mean, parse_metric, per_question
from engine.scoring import scored_set
from engine.trust import COMMAND_KIND, TrustStore
from engine.types import ModelJudge
from engine.workspace import Workspace

KEEP = (0.0, 0.1, 0.25, 0.5, 1.0)
"""Shares of people's judgments kept when the judge fills the rest."""
REPEATS = 10
"""Seeded draws of each share strictly between 0 and 1."""
KAPPA_SAMPLES = 1000
"""Bootstrap resamples of the questions for kappa's interval."""
CONSISTENCY_PAIRS = 200
"""Pairs a command judge is asked twice (kappa needs some 150-200 items to settle)."""
REPORT_METRICS = ("ndcg@10", "mrr")
"""The metrics the retrievers are ranked by."""

__all__ = [
    "MODEL_PARAMS",
    "Circular",
    "ReportCard",
    "circular_retrievers",
    "model_key",
    "report_card",
]


@dataclass(frozen=True)
class KappaFigure:
    """The judge against people on relevant or not."""

    kappa: float | None
    """None: no pair both graded."""
    ci95: tuple[float, float] | None
    items: int
    """People's grades of pairs the judge graded (a pair two people graded counts twice)."""
    questions: int
    people_relevant: float | None
    """Base rate: the share of those grades that are relevant (1-3)."""
    judge_relevant: float | None
    """The share of the judge's grades of the same pairs that are relevant."""
    held_out: bool
    """The judge's grades were held out (a score judge whose thresholds were fitted)."""
    samples: int
    seed: int

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape."""
        return {
            "value": self.kappa,
            "ci95": None if self.ci95 is None else list(self.ci95),
            "items": self.items,
            "questions": self.questions,
            "base_rate": {"people": self.people_relevant, "judge": self.judge_relevant},
            "grades": "held_out" if self.held_out else "as_stored",
            "samples": self.samples,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class Consistency:
    """A command judge asked twice about the same pairs."""

    asked: bool
    reason: str = ""
    """Why it was not asked (empty when asked)."""
    pairs: int = 0
    same: float | None = None
    """The share of pairs given the same grade both times."""
    kappa: float | None = None
    """Kappa on relevant or not between the two runs."""
    how: str = ""

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape."""
        return {
            "asked": self.asked,
            "reason": self.reason or None,
            "pairs": self.pairs,
            "same_grade": self.same,
            "kappa": self.kappa,
            "how": self.how or None,
        }


@dataclass(frozen=True)
class KeptShare:
    """Kendall tau of the retrievers' ranking with a share of people's judgments kept."""

    share: float
    taus: tuple[float | None, ...]
    """One per repeat (None: tau undefined, every retriever scored the same)."""

    def summary(self) -> tuple[float | None, float | None, float | None]:
        """Mean, least and greatest tau over the repeats where it is defined."""
        defined = [t for t in self.taus if t is not None]
        if not defined:
            return None, None, None
        return math.fsum(defined) / len(defined), min(defined), max(defined)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape."""
        avg, lo, hi = self.summary()
        return {
            "kept": self.share,
            "repeats": len(self.taus),
            "tau_mean": avg,
            "tau_min": lo,
            "tau_max": hi,
            "taus": list(self.taus),
        }


@dataclass(frozen=True)
class Ranking:
    """The retrievers' ranking by one metric, under people and with the judge filling in."""

    metric: str
    people: dict[str, float]
    """Each retriever's mean under people's judgments."""
    judge_alone: dict[str, float]
    """Each retriever's mean under the judge's grades alone (0% kept)."""
    kept: tuple[KeptShare, ...]

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape."""
        return {
            "metric": self.metric,
            "people": self.people,
            "judge_alone": self.judge_alone,
            "kept": [k.to_json() for k in self.kept],
        }


@dataclass(frozen=True)
class ReportCard:
    """Everything ``goldpan judge --report`` prints."""

    judge: ModelJudge
    kappa: KappaFigure
    consistency: Consistency
    scored: int
    """Scored questions the retrievers are ranked on."""
    rankings: tuple[Ranking, ...]
    circular: tuple[Circular, ...]
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape (stable names)."""
        return {
            "annotator": self.judge.annotator,
            "kind": self.judge.kind,
            "model": self.judge.model,
            "kappa": self.kappa.to_json(),
            "self_consistency": self.consistency.to_json(),
            "scored_questions": self.scored,
            "ranking": [r.to_json() for r in self.rankings],
            "circular": [c.to_json() for c in self.circular],
            "warnings": list(self.warnings),
        }


# -- agreement ----------------------------------------------------------------------------


def kappa_of_counts(tp: FloatArray, fp: FloatArray, fn: FloatArray, tn: FloatArray) -> FloatArray:
    """:func:`engine.team.agreement.cohen_kappa` on 2 x 2 tables, vectorized over resamples.

    ``tp``: both relevant, ``fp``: only the judge, ``fn``: only people, ``tn``: neither.
    ``(n * agree - S) / (n^2 - S)`` with ``S = sum_c count_judge(c) * count_people(c)``;
    1 where both put every item in one category (as cohen_kappa), NaN for an empty table.
    """
    n = tp + fp + fn + tn
    chance = (tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)
    num = n * (tp + tn) - chance
    den = n * n - chance
    out: FloatArray = np.full(np.shape(n), np.nan)
    np.divide(num, den, out=out, where=den != 0)
    out[(den == 0) & (n > 0)] = 1.0
    return out


def _tables(pairs: Sequence[tuple[str, int, int]]) -> tuple[list[str], FloatArray]:
    """Per question, the 2 x 2 counts (tp, fp, fn, tn) of (question, judge, person) grades."""
    questions = sorted({q for q, _, _ in pairs})
    row = {q: i for i, q in enumerate(questions)}
    counts = np.zeros((len(questions), 4))
    for q, j, p in pairs:
        cell = (0 if is_relevant(p) else 1) if is_relevant(j) else (2 if is_relevant(p) else 3)
        counts[row[q], cell] += 1
    return questions, counts


def agreement(
    pairs: Sequence[tuple[str, int, int]],
    *,
    held_out: bool,
    samples: int = KAPPA_SAMPLES,
    seed: int = 0,
) -> KappaFigure:
    """Kappa of ``(question, judge grade, person's grade)`` items, with a question bootstrap."""
    questions, counts = _tables(pairs)
    if not pairs:
        return KappaFigure(None, None, 0, 0, None, None, held_out, samples, seed)
    total = counts.sum(axis=0)
    kappa = float(kappa_of_counts(*(total[i : i + 1] for i in range(4)))[0])
    boot = bootstrap_means(counts, samples, seed)  # mean counts per question, per resample
    kappas = kappa_of_counts(boot[:, 0], boot[:, 1], boot[:, 2], boot[:, 3])
    finite = kappas[np.isfinite(kappas)]
    ci = percentile_interval(finite) if len(questions) > 1 and finite.size else None
    n = len(pairs)
    people = float(total[0] + total[2]) / n
    judged = float(total[0] + total[1]) / n
    return KappaFigure(kappa, ci, n, len(questions), people, judged, held_out, samples, seed)


def _agreement_items(
    ws: Workspace, judge: ModelJudge, samples: int, seed: int
) -> tuple[KappaFigure, dict[tuple[str, str], int]]:
    """The kappa figure, and the judge's grade of every pair it graded."""
    grades = {(m.question_id, m.doc_id): m for m in ws.model_labels(judge.annotator)}
    people = [lab for lab in ws.labels() if (lab.question_id, lab.doc_id) in grades]
    cal = stored_calibration(judge.params) or {}
    fitted = judge.kind != COMMAND_KIND and bool(cal.get("fitted"))
    model = [grades[(lab.question_id, lab.doc_id)].grade for lab in people]
    if fitted:
        scores = [grades[(lab.question_id, lab.doc_id)].score for lab in people]
        if all(s is not None for s in scores):
            items = [
                Item(lab.question_id, float(s), lab.grade)
                for lab, s in zip(people, scores, strict=True)
                if s is not None
            ]
            held = held_out_grades(items, seed=seed)
            if held is not None:
                model = held
            else:
                fitted = False  # too few to hold out: the stored grades, and said so
    pairs = [(lab.question_id, m, lab.grade) for lab, m in zip(people, model, strict=True)]
    figure = agreement(pairs, held_out=fitted, samples=samples, seed=seed)
    return figure, {pair: m.grade for pair, m in grades.items()}


# -- self-consistency ---------------------------------------------------------------------


def consistency(
    ws: Workspace,
    judge: ModelJudge,
    graded: Mapping[tuple[str, str], int],
    *,
    pairs: int = CONSISTENCY_PAIRS,
    seed: int = 0,
    trust: TrustStore | None = None,
    timeout: float = COMMAND_TIMEOUT_S,
) -> Consistency:
    """Ask a command judge twice about a seeded sample of the pairs it graded.

    Raises:
        RetrieverError: the command failed, timed out or answered something not a grade.
    """
    if judge.kind != COMMAND_KIND:
        return Consistency(False, f"a {judge.kind} judge gives the same score every time")
    if pairs <= 0:
        return Consistency(False, "not asked (--consistency 0)")
    if not graded:
        return Consistency(False, "the judge has graded no pair")
    try:
        check_runnable(ws, judge, typed=False, trust=trust)
    except Refused:  # nothing runs unasked: the card says so instead of running it
        return Consistency(
            False,
            f"not run: {judge.annotator}'s command is not trusted on this machine for this "
            "workspace (give it with `goldpan judge --command` once to trust it)",
        )
    chosen = sorted(graded)
    random.Random(seed).shuffle(chosen)
    chosen = sorted(chosen[:pairs])
    questions = {q.id: q for q in ws.questions()}
    docs = {d: doc for d in {d for _, d in chosen} if (doc := ws.doc(d)) is not None}
    sent = [(questions[q], docs[d]) for q, d in chosen if q in questions and d in docs]
    if not sent:
        return Consistency(False, "the pairs it graded are no longer in the workspace")
    first = command_grades(judge, sent, timeout=timeout)
    second = list(reversed(command_grades(judge, sent[::-1], timeout=timeout)))
    same = sum(1 for a, b in zip(first, second, strict=True) if a == b) / len(sent)
    tables = _tables([("", a, b) for a, b in zip(first, second, strict=True)])[1]
    kappa = float(kappa_of_counts(*(tables[0, i : i + 1] for i in range(4)))[0])
    how = (
        f"{len(sent)} pairs drawn at random (seed {seed}) from the {len(graded)} it graded, "
        "sent in two runs of the command, the second in the reverse order"
    )
    return Consistency(True, "", len(sent), same, kappa, how)


# -- ranking the retrievers -----------------------------------------------------------------


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b of two scorings of the same retrievers (None: undefined)."""
    from scipy.stats import kendalltau

    if len(x) < 2:
        return None
    tau = float(kendalltau(x, y).statistic)
    return None if math.isnan(tau) else tau


def _means(
    rankings: Mapping[str, Sequence[Sequence[str]]],
    qrels: Sequence[Mapping[str, int]],
    metric: str,
) -> dict[str, float]:
    m = parse_metric(metric)
    return {r: mean(per_question(judge(rs, qrels), m)) for r, rs in rankings.items()}


def _place(means: Mapping[str, float], name: str) -> int:
    """1 + how many retrievers score strictly higher than ``name``."""
    return 1 + sum(1 for v in means.values() if v > means[name])


def rank_under_judge(
    rankings: Mapping[str, Sequence[Sequence[str]]],
    people: Sequence[Mapping[str, int]],
    graded: Sequence[Mapping[str, int]],
    *,
    metrics: Sequence[str] = REPORT_METRICS,
    keep: Sequence[float] = KEEP,
    repeats: int = REPEATS,
    seed: int = 0,
) -> tuple[Ranking, ...]:
    """Tau of the retrievers' ranking under people's qrels vs the judge filling them.

    ``people`` and ``graded``: per scored question (the rows of ``rankings``' lists),
    people's qrels and the judge's grades. For a share ``f`` kept, ``round(f * n)`` of
    the ``n`` judged (question, document) pairs are drawn (seeded) and keep the person's
    grade; every other pair the judge graded takes the judge's grade; a pair neither
    kept nor graded by the judge is unjudged.
    """
    judgments = [(i, d) for i, g in enumerate(people) for d in sorted(g)]
    n = len(judgments)
    out = []
    variants: list[tuple[float, list[dict[str, int]]]] = []
    for share in keep:
        draws = repeats if 0 < share < 1 else 1
        for r in range(draws):
            order = list(range(n))
            random.Random(f"{seed}:{share}:{r}").shuffle(order)
            kept = {judgments[i] for i in order[: round(share * n)]}
            mixed = [dict(g) for g in graded]
            for i, d in kept:
                mixed[i][d] = people[i][d]
            variants.append((share, mixed))
    for metric in metrics:
        ref = _means(rankings, people, metric)
        names = list(ref)
        taus: dict[float, list[float | None]] = {s: [] for s in keep}
        alone: dict[str, float] = {}
        for share, mixed in variants:
            got = _means(rankings, mixed, metric)
            if share == 0:
                alone = got
            taus[share].append(kendall_tau([ref[r] for r in names], [got[r] for r in names]))
        if not alone:
            alone = _means(rankings, [dict(g) for g in graded], metric)
        kept_shares = tuple(KeptShare(s, tuple(taus[s])) for s in keep)
        out.append(Ranking(parse_metric(metric).name, ref, alone, kept_shares))
    return tuple(out)


# -- the card ---------------------------------------------------------------------------------


def report_card(
    ws: Workspace,
    annotator: str | None = None,
    *,
    keep: Sequence[float] = KEEP,
    repeats: int = REPEATS,
    samples: int = KAPPA_SAMPLES,
    seed: int = 0,
    consistency_pairs: int = CONSISTENCY_PAIRS,
    metrics: Sequence[str] = REPORT_METRICS,
    trust: TrustStore | None = None,
    timeout: float = COMMAND_TIMEOUT_S,
) -> ReportCard:
    """The report card of the model judge ``annotator`` (the workspace's only one if None).

    Raises:
        UnknownName: no model judge of that name (the known ones listed).
        BadInput: the workspace has no model judge, several and none named, or no person
            graded any pair the judge graded (nothing to compare it with); a share kept
            outside 0-1 or no repeat.
        RetrieverError: a command judge asked again failed.
    """
    if not keep or any(not (math.isfinite(s) and 0 <= s <= 1) for s in keep):
        raise BadInput("--keep: shares of people's judgments kept, each from 0 to 100%")
    if repeats < 1:
        raise BadInput("--repeats must be at least 1")
    judge_ = _the_judge(ws, annotator)
    kappa, graded = _agreement_items(ws, judge_, samples, seed)
    if kappa.items == 0:
        raise BadInput(
            f"no person has graded a pair {judge_.annotator} graded in {ws.path}: nothing to "
            "compare it with (label some of the questions it judged first)"
        )
    pooled = [s.name for s in ws.retrievers() if ws.run_hashes(s.name)]
    scope = scored_set(ws, pooled)  # what goldpan score of these retrievers is over
    golds, scored = scope.golds, scope.question_ids
    people = [golds[q].qrels for q in scored]
    by_q: dict[str, dict[str, int]] = {}
    for (q, d), g in graded.items():
        by_q.setdefault(q, {})[d] = g
    judged_by_model = [by_q.get(q, {}) for q in scored]
    rankings: dict[str, list[list[str]]] = {}
    for name in pooled:
        runs = ws.runs(name, scored)
        rankings[name] = [list(runs[q].doc_ids) if q in runs else [] for q in scored]
    ranked = (
        rank_under_judge(
            rankings,
            people,
            judged_by_model,
            metrics=metrics,
            keep=sorted(set(keep)),
            repeats=repeats,
            seed=seed,
        )
        if len(rankings) >= 2
        else ()
    )
    specs = [spec for spec in ws.retrievers() if spec.name in rankings]
    circular = tuple(
        Circular(r, via, *_places(ranked, r))
        for r, via in circular_retrievers(judge_, specs).items()
    )
    same = consistency(
        ws, judge_, graded, pairs=consistency_pairs, seed=seed, trust=trust, timeout=timeout
    )
    warnings = _warnings(judge_, kappa, scored, rankings, circular)
    return ReportCard(judge_, kappa, same, len(scored), ranked, circular, tuple(warnings))


def _places(ranked: Sequence[Ranking], name: str) -> tuple[str, int, int]:
    """The first metric, and ``name``'s place under people and under the judge alone."""
    if not ranked:
        return "", 0, 0
    r = ranked[0]
    return r.metric, _place(r.people, name), _place(r.judge_alone, name)


def _the_judge(ws: Workspace, annotator: str | None) -> ModelJudge:
    if annotator is not None:
        return stored_judge(ws, annotator)
    judges = ws.model_judges()
    if len(judges) == 1:
        return judges[0]
    if not judges:
        raise BadInput(f"{ws.path} has no model judge (add one with `goldpan judge`)")
    names = ", ".join(j.annotator for j in judges)
    raise BadInput(f"{ws.path} has several model judges ({names}): name one with --annotator")


def _warnings(
    judge_: ModelJudge,
    kappa: KappaFigure,
    scored: Sequence[str],
    rankings: Mapping[str, Any],
    circular: Sequence[Circular],
) -> list[str]:
    out = []
    if kappa.items < 150:
        out.append(
            f"kappa rests on {kappa.items} grades people gave: under some 150-200 it moves "
            "a lot from one sample to the next (read its interval)"
        )
    if not scored:
        out.append(
            "no scored question (gold, ranked by every pooled retriever): the retrievers "
            "cannot be ranked; label gold documents, and pool (goldpan pool)"
        )
    elif len(rankings) < 2:
        out.append("fewer than two retrievers have rankings: there is no ranking to compare")
    for c in circular:
        through = "" if c.via == c.retriever else f" (through {c.via})"
        out.append(
            f"{judge_.annotator} is the same model as the pooled retriever {c.retriever}"
            f"{through}: a judge favours its own retriever, so ranking it by these grades is "
            "circular"
            + (
                f"; it ranks {c.rank_people} under people and {c.rank_judge} under the judge "
                f"alone on {c.metric}"
                if c.rank_people
                else ""
            )
        )
    return out
