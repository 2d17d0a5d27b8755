import json
import math
import random

import numpy as np
import pytest

from engine.team.agreement import (
    PairKappa,
    VerdictPair,
    agreement_report,
    cohen_kappa,
    krippendorff_alpha_ordinal,
    label_units,
    pairable_units,
    pairwise_kappa,
    verdict_agreement,
)
from engine.types import Label, Verdict

# -- Cohen's kappa ---------------------------------------------------------------------


def test_kappa_hand_computed_2x2():
    # 10 items; a x b table: (1,1) = 4, (1,0) = 2, (0,1) = 1, (0,0) = 3
    a = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0]
    b = [1, 1, 1, 1, 0, 0, 1, 0, 0, 0]
    # p_o = (4 + 3) / 10 = 0.7
    # a: six 1s, four 0s; b: five 1s, five 0s -> p_e = 0.6 * 0.5 + 0.4 * 0.5 = 0.5
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(b, a) == pytest.approx(0.4)  # symmetric


def test_kappa_perfect_agreement():
    assert cohen_kappa([0, 1, 2, 1, 0], [0, 1, 2, 1, 0]) == 1.0


def test_kappa_total_disagreement():
    # p_o = 0; each rater half 0s and half 1s -> p_e = 0.5; kappa = (0 - 0.5) / 0.5 = -1
    assert cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0]) == -1.0
    # one item, different labels: p_o = 0, p_e = 0 (no category shared) -> kappa = 0
    assert cohen_kappa([0], [1]) == 0.0


def test_kappa_single_shared_category_is_one():
    # p_e = 1 (both raters used only category 1), so p_o = 1 and the formula is 0/0;
    # sklearn returns nan here, goldpan returns 1.0 (documented in cohen_kappa)
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) == 1.0
    assert cohen_kappa([0], [0]) == 1.0


def test_kappa_rejects_bad_input():
    with pytest.raises(ValueError, match="same items"):
        cohen_kappa([0, 1], [0])
    with pytest.raises(ValueError, match="at least one"):
        cohen_kappa([], [])


@pytest.mark.parametrize("seed", range(6))
def test_kappa_agrees_with_sklearn(seed):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random(seed)
    for _ in range(50):
        n = rng.randint(2, 60)
        k = rng.choice([2, 3, 4])
        a = [rng.randrange(k) for _ in range(n)]
        # b copies a with some probability, so kappa spreads over [-1, 1]
        p = rng.random()
        b = [x if rng.random() < p else rng.randrange(k) for x in a]
        if len(set(a)) == 1 and set(a) == set(b):
            continue  # p_e == 1: sklearn says nan, goldpan 1.0 (tested above)
        ref = sklearn_metrics.cohen_kappa_score(a, b)
        assert cohen_kappa(a, b) == pytest.approx(ref, abs=1e-12), (a, b)


# -- Krippendorff's alpha (ordinal) ------------------------------------------------------


def test_alpha_ordinal_hand_computed():
    units = {
        "u1": {"A": 0, "B": 0},
        "u2": {"A": 1, "B": 2},
        "u3": {"A": 2, "B": 2, "C": 1},
        "u4": {"A": 0},  # one value: not pairable, skipped
    }
    # coincidences o_ck (each unit's ordered pairs from different annotators / (m_u - 1)):
    #   u1 (m=2): (0,0) x2            -> o00 += 2
    #   u2 (m=2): (1,2), (2,1)        -> o12 += 1, o21 += 1
    #   u3 (m=3): (2,2) x2, (2,1) x2, (1,2) x2, each / 2 -> o22 += 1, o21 += 1, o12 += 1
    #        0  1  2   | n_c
    #   0  [ 2  0  0 ] | 2
    #   1  [ 0  0  2 ] | 2
    #   2  [ 0  2  1 ] | 3        n = 7
    # ordinal d2(c,k) = (sum_{g=c..k} n_g - (n_c + n_k)/2)^2:
    #   d2(0,1) = (4 - 2)^2 = 4; d2(1,2) = (5 - 2.5)^2 = 6.25; d2(0,2) = (7 - 2.5)^2 = 20.25
    # sum o_ck d2 = 2 * (o12 * 6.25) = 2 * 2 * 6.25 = 25
    # sum n_c n_k d2 = 2 * (2*2*4 + 2*3*6.25 + 2*3*20.25) = 2 * 175 = 350
    # alpha = 1 - (n - 1) * 25 / 350 = 1 - 6 * 25 / 350 = 4/7
    assert krippendorff_alpha_ordinal(units) == pytest.approx(4 / 7, abs=1e-12)
    assert pairable_units(units) == 3


def test_alpha_ordinal_published_example():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 observers x
    # 12 units example with missing values; ordinal alpha = 0.815 there
    rows = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    units = {f"u{i}": {c: v[i] for c, v in rows.items() if v[i] is not None} for i in range(12)}
    assert round(krippendorff_alpha_ordinal(units), 3) == 0.815


def test_alpha_ordinal_perfect_and_undefined():
    assert krippendorff_alpha_ordinal({"u1": {"A": 0, "B": 0}, "u2": {"A": 3, "B": 3}}) == 1.0
    # no pairable unit
    assert math.isnan(krippendorff_alpha_ordinal({}))
    assert math.isnan(krippendorff_alpha_ordinal({"u1": {"A": 1}, "u2": {"B": 2}}))
    # no variation among pairable values: expected disagreement is 0
    assert math.isnan(krippendorff_alpha_ordinal({"u1": {"A": 2, "B": 2}, "u2": {"C": 0}}))


def _random_units(rng: random.Random) -> tuple[dict[str, dict[str, int]], list[list[float]]]:
    coders = [f"c{i}" for i in range(rng.randint(2, 5))]
    n_units = rng.randint(5, 60)
    missing = rng.choice([0.0, 0.2, 0.5])
    matrix = [[math.nan] * n_units for _ in coders]
    units: dict[str, dict[str, int]] = {}
    for u in range(n_units):
        truth = rng.randrange(4)
        for i, c in enumerate(coders):
            if rng.random() < missing:
                continue
            # mostly near the unit's "true" grade, so alpha is not always near 0
            grade = (
                min(3, max(0, truth + rng.choice([-1, 0, 0, 0, 1, 2])))
                if rng.random() < 0.8
                else rng.randrange(4)
            )
            units.setdefault(f"u{u}", {})[c] = grade
            matrix[i][u] = float(grade)
    return units, matrix


@pytest.mark.parametrize("seed", range(8))
def test_alpha_ordinal_agrees_with_krippendorff_package(seed):
    krippendorff = pytest.importorskip("krippendorff")
    rng = random.Random(seed)
    compared = 0
    for _ in range(25):
        units, matrix = _random_units(rng)
        ours = krippendorff_alpha_ordinal(units)
        if math.isnan(ours):
            continue  # the package raises where goldpan returns nan
        ref = krippendorff.alpha(reliability_data=np.array(matrix), level_of_measurement="ordinal")
        assert ours == pytest.approx(float(ref), abs=1e-9)
        compared += 1
    assert compared >= 20


# -- labels and verdicts -----------------------------------------------------------------


def _labels() -> list[Label]:
    grades = {
        ("q1", "d1"): {"alice": 2, "bob": 1, "carol": 0},
        ("q1", "d2"): {"alice": 0, "bob": 0},
        ("q1", "d3"): {"alice": 3, "bob": 0, "carol": 3},
        ("q2", "d1"): {"alice": 1, "bob": 2},
        ("q9", "d5"): {"dave": 1},  # dave shares no item with anyone
    }
    return [Label(q, d, who, g) for (q, d), by in grades.items() for who, g in by.items()]


def _verdicts() -> list[Verdict]:
    return [
        Verdict("q1", "alice", "answerable"),
        Verdict("q1", "bob", "answerable"),
        Verdict("q1", "carol", "no_answer"),
        Verdict("q2", "alice", "no_answer"),
        Verdict("q2", "bob", "no_answer"),
        Verdict("q3", "alice", "answerable"),
        Verdict("q3", "bob", "no_answer"),
        Verdict("q3", "carol", "skip"),  # not a view on answerability
        Verdict("q4", "carol", "ambiguous"),
        Verdict("q4", "dave", "answerable"),  # dave and carol share nothing usable
    ]


def test_pairwise_kappa_on_labels():
    got = pairwise_kappa(reversed(_labels()))  # input order does not matter
    # alice/bob, relevant (grade >= 1) on q1d1 q1d2 q1d3 q2d1: alice 1 0 1 1, bob 1 0 0 1
    #   p_o = 3/4; alice 3 of 4 relevant, bob 2 of 4 -> p_e = 3/4*2/4 + 1/4*2/4 = 1/2
    #   kappa = (3/4 - 1/2) / (1/2) = 0.5
    # alice/carol on q1d1 q1d3: alice 1 1, carol 0 1
    #   p_o = 1/2; p_e = 1 * 1/2 + 0 * 1/2 = 1/2 -> kappa = 0
    # bob/carol on q1d1 q1d3: bob 1 0, carol 0 1 -> p_o = 0, p_e = 1/2 -> kappa = -1
    # dave: no shared item with anyone -> no pair
    assert got == [
        PairKappa("alice", "bob", 4, 0.5),
        PairKappa("alice", "carol", 2, 0.0),
        PairKappa("bob", "carol", 2, -1.0),
    ]


def test_label_units_keys_cannot_collide():
    units = label_units([Label("a\tb", "c", "x", 1), Label("a", "b\tc", "x", 2)])
    assert len(units) == 2
    assert units['["a","b\\tc"]'] == {"x": 2}


def test_verdict_agreement():
    got = verdict_agreement(_verdicts())
    # alice/bob on q1 q2 q3: (answerable, answerable), (no_answer, no_answer),
    #   (answerable, no_answer) -> agreement 2/3; no_answer flags alice 0 1 0, bob 0 1 1
    #   p_e = 2/3*1/3 + 1/3*2/3 = 4/9 -> kappa = (2/3 - 4/9) / (5/9) = 0.4
    # alice/carol and bob/carol on q1 only (carol skipped q3): disagree; p_e = 0 -> kappa 0
    # carol/dave: carol's q4 verdict is ambiguous -> no shared question, omitted
    assert list(got) == [("alice", "bob"), ("alice", "carol"), ("bob", "carol")]
    ab = got[("alice", "bob")]
    assert (ab.a, ab.b, ab.n) == ("alice", "bob", 3)
    assert ab.agreement == pytest.approx(2 / 3)
    assert ab.kappa == pytest.approx(0.4)
    assert got[("alice", "carol")] == VerdictPair("alice", "carol", 1, 0.0, 0.0)
    assert got[("bob", "carol")] == VerdictPair("bob", "carol", 1, 0.0, 0.0)


def test_later_verdict_replaces_earlier():
    got = verdict_agreement(
        [
            Verdict("q1", "a", "no_answer"),
            Verdict("q1", "b", "no_answer"),
            Verdict("q1", "a", "ambiguous"),  # a changed their mind: q1 drops out
            Verdict("q2", "a", "answerable"),
            Verdict("q2", "b", "answerable"),
        ]
    )
    assert got == {("a", "b"): VerdictPair("a", "b", 1, 1.0, 1.0)}


def test_agreement_report_json_shape():
    report = agreement_report(iter(_labels()), iter(_verdicts()))  # one-shot iterables
    # alpha over units q1d1 {2,1,0}, q1d2 {0,0}, q1d3 {3,0,3}, q2d1 {1,2} (q9d5 unpairable):
    #   coincidences: q1d1 each distinct ordered pair 1/2; q1d2 o00 += 2;
    #   q1d3 o33 += 1, o03 += 1, o30 += 1; q2d1 o12 += 1, o21 += 1
    #   n_0 = 4, n_1 = 2, n_2 = 2, n_3 = 2, n = 10
    #   d2: (0,1) 9, (0,2) 25, (0,3) 49, (1,2) 4, (1,3) 16, (2,3) 4
    #   sum o d2 = 2 * (0.5*9 + 0.5*25 + 1*49 + 1.5*4) = 144
    #   sum n_c n_k d2 = 2 * (8*9 + 8*25 + 8*49 + 4*4 + 4*16 + 4*4) = 1520
    #   alpha = 1 - 9 * 144 / 1520 = 14/95
    assert report == {
        "pairs": [
            {"a": "alice", "b": "bob", "n": 4, "kappa": 0.5},
            {"a": "alice", "b": "carol", "n": 2, "kappa": 0.0},
            {"a": "bob", "b": "carol", "n": 2, "kappa": -1.0},
        ],
        "alpha_ordinal": pytest.approx(14 / 95, abs=1e-12),
        "units": 4,
        "verdicts": [
            {"a": "alice", "b": "bob", "n": 3, "agreement": pytest.approx(2 / 3), "kappa": 0.4},
            {"a": "alice", "b": "carol", "n": 1, "agreement": 0.0, "kappa": 0.0},
            {"a": "bob", "b": "carol", "n": 1, "agreement": 0.0, "kappa": 0.0},
        ],
        "models": [],
    }
    assert list(report) == ["pairs", "alpha_ordinal", "units", "verdicts", "models"]
    # strict JSON: no nan anywhere
    assert json.loads(json.dumps(report, allow_nan=False)) == report


def test_agreement_report_without_pairable_units():
    report = agreement_report([Label("q1", "d1", "alice", 2), Label("q1", "d2", "bob", 0)], [])
    assert report == {
        "pairs": [],
        "alpha_ordinal": None,
        "units": 0,
        "verdicts": [],
        "models": [],
    }
    json.dumps(report, allow_nan=False)


def test_a_model_is_compared_with_each_person_and_the_gold_and_moves_no_peoples_figure():
    from engine.gold import resolve
    from engine.types import ModelLabel

    people = [
        Label("q1", "d1", "alice", 2),
        Label("q1", "d2", "alice", 0),
        Label("q1", "d3", "alice", 1),
        Label("q1", "d4", "alice", 0),
        Label("q1", "d1", "gold", 3),  # a person may be named "gold"
        Label("q2", "d1", "bob", 1),
    ]
    model = [
        ModelLabel("q1", "d1", "model:m", 2),
        ModelLabel("q1", "d2", "model:m", 1),
        ModelLabel("q1", "d3", "model:m", 0),
        ModelLabel("q1", "d4", "model:m", 0),
        ModelLabel("q3", "d9", "model:m", 3),  # nobody judged it: compared with no one
    ]
    # vs alice, relevant or not: model 1 1 0 0, alice 1 0 1 0 -> p_o 0.5, p_e 0.5, kappa 0
    golds = resolve(["q1", "q2", "q3"], people, [])
    report = agreement_report(people, [], model, golds)
    assert report["pairs"] == agreement_report(people, [])["pairs"]
    assert report["alpha_ordinal"] == agreement_report(people, [])["alpha_ordinal"]
    rows = {(m["against"], m["gold"]): m for m in report["models"]}
    assert rows[("alice", False)]["n"] == 4 and rows[("alice", False)]["kappa"] == 0.0
    assert rows[("gold", False)]["n"] == 1  # the person named gold
    assert ("bob", False) not in rows  # nothing shared
    # q1 is disputed (alice and "gold" disagree on d3): the resolved gold is q2's only,
    # which the model did not grade
    assert ("gold", True) not in rows
    golds = resolve(["q1", "q2", "q3"], people[:4], [])  # alice alone: q1 is labeled
    rows = {
        (m["against"], m["gold"]): m
        for m in agreement_report(people[:4], [], model, golds)["models"]
    }
    # the gold of q1 is alice's: d1 2, d3 1, d2 and d4 judged 0 -> the same as alice
    assert rows[("gold", True)]["n"] == 4 and rows[("gold", True)]["kappa"] == 0.0
