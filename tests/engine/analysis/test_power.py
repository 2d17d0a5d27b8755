"""Power: minimum detectable difference and questions needed, checked by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.analysis.compare import paired_tests
from engine.analysis.power import mde, n_needed, power_of, power_sentence, z_sum


def test_formula_by_hand() -> None:
    assert z_sum() == pytest.approx(1.959964 + 0.841621, abs=1e-5)
    # d = (0.5, 0, 0, -0.5, 1.0): mean 0.2, sample sd sqrt(0.325) = 0.570088
    p = power_of("A", "B", "mrr", [1.0, 0.5, 1.0, 0.0, 1.0], [0.5, 0.5, 1.0, 0.5, 0.0])
    assert (p.n, p.diff) == (5, pytest.approx(0.2))
    assert p.sd == pytest.approx(math.sqrt(0.325))
    assert p.mde == pytest.approx(2.801585 * 0.570088 / math.sqrt(5), rel=1e-5)  # 0.714
    assert p.n_needed == math.ceil((2.801585 * 0.570088 / 0.2) ** 2)  # 63.8 -> 64
    assert power_sentence(p) == (
        "at 5 questions you can see differences >= 0.71; to confirm 0.20 you need ~64 (a test "
        "needs 6 questions where they differ; 3 of 5 do now)"
    )
    assert set(p.to_json()) == {
        "a",
        "b",
        "metric",
        "n",
        "diff",
        "sd",
        "mde",
        "n_needed",
        "discordant",
        "least_discordant",
    }
    assert (p.discordant, p.least_discordant) == (3, 6)


def test_questions_needed_are_never_fewer_than_a_verdict_needs() -> None:
    # A gets 4 of 10 questions right that B misses: d = (1, 1, 1, 1, 0 x 6), mean 0.4, sd
    # 0.516. The normal approximation asks for 14 questions; but at 4 in 10, 15 are needed
    # to expect the 6 discordant questions without which no test reaches p < 0.05
    p = power_of("A", "B", "hit@1", [1.0] * 4 + [0.0] * 6, [0.0] * 10)
    by_formula = n_needed(p.diff, p.sd)
    assert by_formula == math.ceil((z_sum() * p.sd / 0.4) ** 2) == 14
    assert p.n_needed == math.ceil(6 * 10 / 4) == 15
    assert power_sentence(p).endswith(
        "you need ~15 (a test needs 6 questions where they differ; 4 of 10 do now)"
    )
    # issue 47's bigram vs word (4 of 31 differ): the formula's 57 is more than 47, and stands
    word = [1 / 4, 1 / 5, 1 / 2, 1 / 6] + [1.0] * 27
    q = power_of("bigram", "word", "mrr", [1.0] * 31, word)
    assert q.n_needed == n_needed(q.diff, q.sd) == 57 and q.discordant == 4


def test_edge_cases() -> None:
    assert n_needed(0.0, 0.3) is None
    assert mde(0.3, 1) is None
    # differences that do not vary (sd 0) give no estimate: the formulas would say that
    # a difference of 0.00 can be seen at 2 questions
    same = power_of("A", "B", "mrr", [1.0, 0.5], [1.0, 0.5])
    assert (same.sd, same.mde, same.n_needed) == (0.0, None, None)
    assert power_sentence(same) == (
        "at 2 questions A and B score the same mrr on every question: "
        "no estimate of power until they differ on some"
    )
    ahead = power_of("A", "B", "mrr", [0.5, 1.0, 0.5], [1.0, 1.5, 1.0])
    assert (ahead.diff, ahead.mde, ahead.n_needed) == (-0.5, None, None)
    assert power_sentence(ahead) == (
        "at 3 questions B is ahead by 0.50 mrr on every question: "
        "no estimate of power until the differences vary"
    )
    # equal up to rounding (0.1 + 0.2 is not 0.3 to the last bit) is equal
    rounded = power_of("A", "B", "mrr", [0.1 + 0.2, 0.3, 0.3], [0.0, 0.0, 0.0])
    assert 0 < rounded.sd < 1e-15 and (rounded.mde, rounded.n_needed) == (None, None)
    assert "A is ahead by 0.30 mrr on every question" in power_sentence(rounded)
    zero_mean = power_of("A", "B", "mrr", [1.0, 0.0], [0.0, 1.0])  # varies, mean 0
    assert zero_mean.mde is not None and zero_mean.mde > 0 and zero_mean.n_needed is None
    assert "the observed mrr difference is 0" in power_sentence(zero_mean)
    one = power_of("A", "B", "mrr", [1.0], [0.0])
    assert one.mde is None and one.n_needed is None
    with pytest.raises(ValueError):
        power_of("A", "B", "mrr", [1.0], [1.0, 0.0])


def simulated_n80(draw: object, n_grid: np.ndarray, reps: int = 1500, boots: int = 400) -> float:
    """The n at which 80% of verdicts call the difference real (interpolated)."""
    rng = np.random.default_rng(11)
    power = []
    for k, n in enumerate(n_grid.tolist()):
        d = draw(rng, (n, reps))  # type: ignore[operator]
        # every column is one simulated experiment; the engine resamples and flips
        # questions (rows), the same resamples and flips for every column
        tests = paired_tests(d, np.zeros_like(d), samples=boots, seed=k)
        power.append(float(np.mean([tests.verdict(c).real for c in range(reps)])))
    p = np.maximum.accumulate(np.array(power))  # power grows with n; smooth the noise
    assert p[0] < 0.8 < p[-1], power
    return float(np.interp(0.8, p, n_grid))


@pytest.mark.parametrize(
    ("name", "delta", "sd", "draw"),
    [
        (
            "normal differences",
            0.1,
            0.35,
            lambda rng, shape: rng.normal(0.1, 0.35, shape),
        ),
        (
            # hit@1-like: A wins 25% of questions, loses 15%, ties 60%
            "win/tie/loss differences",
            0.1,
            math.sqrt(0.4 - 0.01),
            lambda rng, shape: rng.choice([1.0, 0.0, -1.0], size=shape, p=[0.25, 0.6, 0.15]),
        ),
    ],
)
def test_n_needed_matches_bootstrap_simulation(
    name: str, delta: float, sd: float, draw: object
) -> None:
    want = n_needed(delta, sd)
    assert want is not None
    grid = np.unique(np.linspace(0.55 * want, 1.45 * want, 10).astype(int))
    got = simulated_n80(draw, grid)
    assert abs(want - got) / got < 0.15, (name, want, got)
