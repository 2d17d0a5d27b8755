"""Inter-annotator agreement over goldpan labels and verdicts.

Three measures, each answering a different question:

* :func:`pairwise_kappa`: for each pair of annotators, do they agree on which documents
  are relevant (grade >= 1)? Cohen's kappa on the (question, doc) pairs both judged.
* :func:`krippendorff_alpha_ordinal`: do all annotators together agree on the grades
  0-3, taken as ordered? Krippendorff's alpha with the ordinal difference function, which
  handles any number of annotators and missing judgments.
* :func:`verdict_agreement`: for each pair, do they agree on whether a question is
  answerable from the corpus at all (``answerable`` vs ``no_answer``)?
* :func:`model_agreement`: how far a model judge agrees with each person and with the
  resolved gold (kappa and alpha, as above, one model against one other at a time). The
  people's figures are computed without the models: a model never moves them.

:func:`agreement_report` gathers them into one JSON-ready dict.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.grades import is_relevant
from engine.types import Label, ModelLabel, Verdict, canonical_json

if TYPE_CHECKING:
    from engine.gold import Gold

GOLD = "gold"
"""What :func:`model_agreement` calls the resolved gold among the people it compares with."""

_BINARY_VERDICTS = ("answerable", "no_answer")


@dataclass(frozen=True)
class PairKappa:
    """Cohen's kappa of one annotator pair on relevant-or-not."""

    a: str
    b: str
    """The pair's names, ``a < b``."""
    n: int
    """(question, doc) pairs both annotators judged."""
    kappa: float


@dataclass(frozen=True)
class VerdictPair:
    """Agreement of one annotator pair on answerable vs no_answer."""

    a: str
    b: str
    """The pair's names, ``a < b``."""
    n: int
    """Questions on which both gave ``answerable`` or ``no_answer``."""
    agreement: float
    """Share of those questions with the same verdict (observed agreement)."""
    kappa: float
    """Cohen's kappa on no_answer-or-not."""


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's kappa of two raters' categorical labels of the same items (Cohen 1960).

    ``kappa = (p_o - p_e) / (1 - p_e)`` where ``p_o`` is the share of items on which the
    raters agree and ``p_e = sum_c p_a(c) * p_b(c)`` is the agreement expected by chance
    from each rater's own category shares. Computed as
    ``(n * agree - S) / (n^2 - S)`` with ``S = sum_c count_a(c) * count_b(c)``, in exact
    integers up to one division.

    Degenerate case: ``p_e == 1`` happens only when both raters put every item in the
    same single category, so ``p_o == 1`` too and the formula is 0/0. This returns 1.0
    there (scikit-learn's ``cohen_kappa_score`` returns nan): the raters agree on every
    item, and nan would mark the most agreeing pair as broken and cannot be written to
    JSON. A caller that must tell "agreed on one category only" apart can check the labels.

    Reference: J. Cohen, "A Coefficient of Agreement for Nominal Scales", Educational and
    Psychological Measurement 20(1), 1960.

    Args:
        a: the first rater's category of each item.
        b: the second rater's category of the same items, in the same order.

    Returns:
        Kappa in [-1, 1].

    Raises:
        ValueError: the sequences differ in length or are empty.
    """
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa needs labels of the same items: {len(a)} vs {len(b)}")
    n = len(a)
    if n == 0:
        raise ValueError("cohen_kappa needs at least one item")
    agree = sum(1 for x, y in zip(a, b, strict=True) if x == y)
    count_a, count_b = Counter(a), Counter(b)
    chance = sum(count_a[c] * count_b[c] for c in count_a)
    if chance == n * n:  # p_e == 1, hence p_o == 1
        return 1.0
    return (n * agree - chance) / (n * n - chance)


def _shared_items(
    judged: Mapping[str, Mapping[Any, bool]],
) -> Iterable[tuple[str, str, list[bool], list[bool]]]:
    """Each annotator pair (sorted, a < b) with their values on the items both judged."""
    for a, b in combinations(sorted(judged), 2):
        shared = sorted(judged[a].keys() & judged[b].keys())
        if shared:
            yield a, b, [judged[a][k] for k in shared], [judged[b][k] for k in shared]


def pairwise_kappa(labels: Iterable[Label]) -> list[PairKappa]:
    """Cohen's kappa of every annotator pair on relevant-or-not (grade >= 1).

    For each pair ``a < b`` (code-point order of names), the items are the
    (question, doc) pairs both annotators graded; pairs of annotators with no shared item
    are omitted. A later label of the same annotator, question and doc replaces an
    earlier one (the workspace holds one).

    Args:
        labels: every annotator's labels, e.g. ``Workspace.labels()``.

    Returns:
        One :class:`PairKappa` per pair with shared items, sorted by ``(a, b)``.
    """
    relevant: dict[str, dict[tuple[str, str], bool]] = defaultdict(dict)
    for lab in labels:
        relevant[lab.annotator][(lab.question_id, lab.doc_id)] = is_relevant(lab.grade)
    return [
        PairKappa(a, b, len(va), cohen_kappa([int(x) for x in va], [int(y) for y in vb]))
        for a, b, va, vb in _shared_items(relevant)
    ]


def label_units(labels: Iterable[Label]) -> dict[str, dict[str, int]]:
    """Labels as Krippendorff units: ``unit key -> annotator -> grade``.

    A unit is a (question, doc) pair; its key is ``canonical_json([question_id, doc_id])``,
    which cannot collide whatever characters the ids hold.
    """
    units: dict[str, dict[str, int]] = defaultdict(dict)
    for lab in labels:
        units[canonical_json([lab.question_id, lab.doc_id])][lab.annotator] = lab.grade
    return dict(units)


def pairable_units(units: Mapping[str, Mapping[str, int]]) -> int:
    """Number of units with at least two values (the ones alpha can use)."""
    return sum(1 for values in units.values() if len(values) >= 2)


def krippendorff_alpha_ordinal(units: Mapping[str, Mapping[str, int]]) -> float:
    """Krippendorff's alpha with the ordinal difference function.

    ``alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_{c,k} o_ck d2(c, k)
    / sum_{c,k} n_c n_k d2(c, k)``, where

    * ``o_ck = sum_u (number of ordered pairs of values (c, k) from different annotators in
      unit u) / (m_u - 1)`` is the coincidence matrix, ``m_u`` the number of values in unit
      ``u``; units with ``m_u < 2`` are not pairable and are skipped;
    * ``n_c = sum_k o_ck`` (the pairable values equal to ``c``) and ``n = sum_c n_c``;
    * ``d2(c, k) = (sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2`` is the ordinal metric, with
      the values ``g`` between ``c`` and ``k`` in their order.

    Values that occur in no pairable unit have ``n_g = 0`` and do not change the result.
    Matches the ``krippendorff`` package's ``alpha(..., level_of_measurement="ordinal")``.

    Reference: K. Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011
    (Annenberg School for Communication, University of Pennsylvania); K. Krippendorff,
    *Content Analysis: An Introduction to Its Methodology*, 2nd ed., 2004, ch. 11.

    Args:
        units: ``unit key -> annotator -> value`` (grades 0-3 in goldpan); an annotator
            missing from a unit is a missing value. :func:`label_units` builds it.

    Returns:
        Alpha (1 = perfect agreement, 0 = chance, below 0 = systematic disagreement), or
        nan when there is no pairable unit or no variation among the pairable values
        (the expected disagreement ``D_e`` is 0 and alpha is undefined).
    """
    pairable = [list(values.values()) for values in units.values() if len(values) >= 2]
    if not pairable:
        return math.nan
    domain = sorted({v for values in pairable for v in values})
    index = {v: i for i, v in enumerate(domain)}
    counts = np.zeros((len(pairable), len(domain)), dtype=np.float64)
    for u, values in enumerate(pairable):
        for v in values:
            counts[u, index[v]] += 1
    m = counts.sum(axis=1)
    # ordered pairs of different annotators: n_uc * n_uk, minus the self-pairs on c == k
    pairs = counts[:, :, None] * counts[:, None, :]
    pairs -= counts[:, :, None] * np.eye(len(domain))[None, :, :]
    o = (pairs / (m - 1)[:, None, None]).sum(axis=0)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    cum = np.concatenate(([0.0], np.cumsum(n_c)))
    lo = np.minimum.outer(np.arange(len(domain)), np.arange(len(domain)))
    hi = np.maximum.outer(np.arange(len(domain)), np.arange(len(domain)))
    d2 = (cum[hi + 1] - cum[lo] - (n_c[:, None] + n_c[None, :]) / 2) ** 2
    np.fill_diagonal(d2, 0.0)
    expected = float((np.outer(n_c, n_c) * d2).sum())
    if expected == 0.0:
        return math.nan
    observed = float((o * d2).sum())
    return 1.0 - (float(n) - 1.0) * observed / expected


def verdict_agreement(verdicts: Iterable[Verdict]) -> dict[tuple[str, str], VerdictPair]:
    """Agreement of every annotator pair on answerable vs no_answer.

    For each pair ``a < b``, the items are the questions on which both gave one of
    ``answerable`` or ``no_answer`` (``ambiguous`` and ``skip`` are not a view on
    answerability and are left out). Reports the observed agreement share and Cohen's
    kappa (:func:`cohen_kappa`) on no_answer-or-not. Pairs with no such question are
    omitted. A later verdict of the same annotator and question replaces an earlier one.

    Args:
        verdicts: every annotator's verdicts, e.g. ``Workspace.verdicts()``.

    Returns:
        ``(a, b) -> VerdictPair``, in sorted pair order.
    """
    no_answer: dict[str, dict[str, bool]] = defaultdict(dict)
    for v in verdicts:
        if v.verdict in _BINARY_VERDICTS:
            no_answer[v.annotator][v.question_id] = v.verdict == "no_answer"
        else:
            no_answer[v.annotator].pop(v.question_id, None)
    out: dict[tuple[str, str], VerdictPair] = {}
    for a, b, va, vb in _shared_items(no_answer):
        agree = sum(1 for x, y in zip(va, vb, strict=True) if x == y)
        kappa = cohen_kappa([int(x) for x in va], [int(y) for y in vb])
        out[(a, b)] = VerdictPair(a, b, len(va), agree / len(va), kappa)
    return out


@dataclass(frozen=True)
class ModelPair:
    """A model judge against one person, or against the resolved gold (:data:`GOLD`)."""

    model: str
    against: str
    """A person's name, or :data:`GOLD` (then ``gold`` is true)."""
    n: int
    """(question, doc) pairs both graded."""
    kappa: float
    """Cohen's kappa on relevant or not (grade >= 1)."""
    alpha: float | None
    """Krippendorff's alpha (ordinal) of the two on those pairs (None: undefined)."""
    gold: bool = False
    """Against the resolved gold, not a person (a person may be named ``gold`` too)."""


def gold_labels(golds: Mapping[str, Gold], judged: Iterable[tuple[str, str]]) -> list[Label]:
    """The resolved gold as labels of :data:`GOLD`, on the documents people judged.

    A question counts once its gold is resolved (``labeled`` or ``no_answer``, agreed or
    adjudicated): its gold documents at their gold grade, every other document a person
    judged there at 0. Disputed, ambiguous and unlabeled questions have no gold to compare.
    """
    from engine.gold import Status

    resolved = {q: g for q, g in golds.items() if g.status in (Status.LABELED, Status.NO_ANSWER)}
    docs: dict[str, set[str]] = defaultdict(set)
    for q, d in judged:
        if q in resolved:
            docs[q].add(d)
    for q, g in resolved.items():
        docs[q].update(g.gold)
    return [
        Label(q, d, GOLD, int(resolved[q].gold.get(d, 0)))
        for q in sorted(docs)
        for d in sorted(docs[q])
    ]


def model_agreement(
    models: Iterable[ModelLabel],
    people: Iterable[Label],
    golds: Mapping[str, Gold] | None = None,
) -> list[ModelPair]:
    """Each model judge against each person, and against the resolved gold.

    For a model and a person, the items are the (question, doc) pairs both graded; kappa
    as :func:`pairwise_kappa`, alpha as :func:`krippendorff_alpha_ordinal` on those two
    alone. Against the gold (:func:`gold_labels`, with ``golds``), the items are the
    documents people judged on questions whose gold is resolved. Pairs with no shared
    item are left out.

    Returns:
        Sorted by model, then the people by name, then the gold.
    """
    people = list(people)
    by_person: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
    for lab in people:
        by_person[lab.annotator][(lab.question_id, lab.doc_id)] = lab.grade
    others = [(name, False, by_person[name]) for name in sorted(by_person)]
    if golds is not None:
        gold = gold_labels(golds, ((x.question_id, x.doc_id) for x in people))
        others.append((GOLD, True, {(g.question_id, g.doc_id): g.grade for g in gold}))
    by_model: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
    for m in models:
        by_model[m.annotator][(m.question_id, m.doc_id)] = m.grade
    out: list[ModelPair] = []
    for model in sorted(by_model):
        mine = by_model[model]
        for name, is_gold, theirs in others:
            shared = sorted(mine.keys() & theirs.keys())
            if not shared:
                continue
            a = [mine[k] for k in shared]
            b = [theirs[k] for k in shared]
            kappa = cohen_kappa([int(is_relevant(x)) for x in a], [int(is_relevant(y)) for y in b])
            units = {
                canonical_json(list(k)): {"model": x, "other": y}
                for k, x, y in zip(shared, a, b, strict=True)
            }
            alpha = krippendorff_alpha_ordinal(units)
            found = None if math.isnan(alpha) else alpha
            out.append(ModelPair(model, name, len(shared), kappa, found, is_gold))
    return out


def agreement_report(
    labels: Iterable[Label],
    verdicts: Iterable[Verdict],
    models: Iterable[ModelLabel] = (),
    golds: Mapping[str, Gold] | None = None,
) -> dict[str, Any]:
    """Every agreement measure in one JSON-ready dict.

    Shape::

        {"pairs": [{"a", "b", "n", "kappa"}],          # pairwise_kappa
         "alpha_ordinal": float | None,                # None where alpha is nan
         "units": int,                                 # pairable (question, doc) units
         "verdicts": [{"a", "b", "n", "agreement", "kappa"}],  # verdict_agreement
         "models": [{"model", "against", "gold", "n", "kappa", "alpha_ordinal"}]}

    Args:
        labels: every person's labels (the pairs, alpha and units are theirs alone).
        verdicts: every annotator's verdicts.
        models: model judges' grades (``Workspace.model_labels()``).
        golds: the resolved gold (:func:`engine.gold.workspace_golds`), to compare the
            models with; without it they are compared with the people only.

    Returns:
        The report; lists are sorted by ``(a, b)`` (models: model, then who).
    """
    labels = list(labels)
    units = label_units(labels)
    alpha = krippendorff_alpha_ordinal(units)
    return {
        "pairs": [{"a": p.a, "b": p.b, "n": p.n, "kappa": p.kappa} for p in pairwise_kappa(labels)],
        "alpha_ordinal": None if math.isnan(alpha) else alpha,
        "units": pairable_units(units),
        "verdicts": [
            {"a": p.a, "b": p.b, "n": p.n, "agreement": p.agreement, "kappa": p.kappa}
            for p in verdict_agreement(verdicts).values()
        ],
        "models": [
            {
                "model": p.model,
                "against": p.against,
                "gold": p.gold,
                "n": p.n,
                "kappa": p.kappa,
                "alpha_ordinal": p.alpha,
            }
            for p in model_agreement(models, labels, golds)
        ],
    }
