"""Paired statistics of ``engine.analysis.compare``: bootstrap, randomization test, win/tie/loss.

The small cases are worked out by hand (or enumerated); the KorQuAD case is imported,
pooled, compared and scored through the engine (``goldpan compare``'s own JSON is in
tests/cli/test_cli_analysis.py) and checked against reciprocal ranks and a bootstrap
computed here from the cached runs and the SQuAD JSON, with a different random stream.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engine.analysis.compare
from engine.analysis.analyses import compare_retrievers
from engine.analysis.compare import (
    CHUNK,
    DEFAULT_SAMPLES,
    bootstrap_means,
    compare,
    percentile_interval,
    randomization_ps,
)
from engine.ingest import import_squad
from engine.scoring import score_workspace
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import pool, shared_data


def randomization_p(diffs, samples=DEFAULT_SAMPLES, seed=0):
    """The sign-flip p-value of one column of differences."""
    return float(randomization_ps(np.asarray(diffs, dtype=np.float64), samples, seed)[0])


JSON_KEYS = {
    "a",
    "b",
    "metric",
    "n",
    "mean_a",
    "mean_b",
    "diff",
    "ci95",
    "wins",
    "ties",
    "losses",
    "p_value",
    "verdict",
}

# -- bootstrap ------------------------------------------------------------------------------


def test_two_question_resample_means_are_0_half_or_1():
    means = bootstrap_means(np.array([0.0, 1.0]), samples=4000, seed=7)
    assert means.shape == (4000, 1)
    values, counts = np.unique(means[:, 0], return_counts=True)
    # a resample of 2 questions draws 0, 1 or 2 copies of the "1": mean 0, 0.5 or 1
    assert set(values.tolist()) <= {0.0, 0.5, 1.0}
    # ... with probabilities 1/4, 1/2, 1/4 (binomial(2, 1/2)); 5 standard deviations
    freq = dict(zip(values.tolist(), counts.tolist(), strict=True))
    for value, p in ((0.0, 0.25), (0.5, 0.5), (1.0, 0.25)):
        sd = math.sqrt(4000 * p * (1 - p))
        assert abs(freq.get(value, 0) - 4000 * p) < 5 * sd


def test_one_question_every_resample_is_that_question():
    means = bootstrap_means(np.array([0.3]), samples=50, seed=1)
    assert (means == 0.3).all()


def test_constant_column_gives_exactly_that_constant():
    # 0.75 and the counts are exact in binary: every resampled mean is exactly 0.75
    for n in (3, 7, 10, 64):
        means = bootstrap_means(np.full(n, 0.75), samples=1500, seed=n)[:, 0]
        assert (means == 0.75).all()
        assert percentile_interval(means) == (0.75, 0.75)
    # a constant such as 0.1 is not exact in binary: equal to the last bit or so
    means = bootstrap_means(np.full(7, 0.1), samples=1500, seed=0)[:, 0]
    lo, hi = percentile_interval(means)
    assert lo == pytest.approx(0.1, abs=1e-15) and hi == pytest.approx(0.1, abs=1e-15)


def test_every_column_is_resampled_the_same_way():
    rng = np.random.default_rng(99)
    # n = 8 (a power of two) and whole numbers: every sum and division below is exact
    a = rng.integers(0, 5, size=8).astype(np.float64)
    values = np.column_stack([a, 2 * a + 1, a[::-1]])
    means = bootstrap_means(values, samples=1200, seed=3)
    assert means.shape == (1200, 3)
    assert (means[:, 1] == 2 * means[:, 0] + 1).all()
    # the same resamples whether a column is bootstrapped alone or with others
    assert (bootstrap_means(a, samples=1200, seed=3)[:, 0] == means[:, 0]).all()
    assert (bootstrap_means(values[:, 2], samples=1200, seed=3)[:, 0] == means[:, 2]).all()
    # not an exact-arithmetic case: the relation still holds to rounding
    x = rng.random(13)
    m = bootstrap_means(np.column_stack([x, 2 * x + 1]), samples=800, seed=5)
    np.testing.assert_allclose(m[:, 1], 2 * m[:, 0] + 1, rtol=0, atol=1e-12)


def test_same_seed_same_means_other_seed_other_means():
    x = np.random.default_rng(0).random((30, 2))
    first = bootstrap_means(x, samples=700, seed=11)
    assert np.array_equal(first, bootstrap_means(x, samples=700, seed=11))
    other = bootstrap_means(x, samples=700, seed=12)
    assert not np.array_equal(first, other)
    # and the default is seed 0, DEFAULT_SAMPLES resamples
    assert np.array_equal(bootstrap_means(x[:5]), bootstrap_means(x[:5], DEFAULT_SAMPLES, 0))


def _reference_bootstrap(values: np.ndarray, samples: int, seed: int) -> np.ndarray:
    """The documented algorithm, written out plainly: index-gather per resample.

    ``numpy.random.default_rng(seed)``; resamples drawn in chunks of ``CHUNK`` rows as
    ``rng.integers(0, n, size=(rows, n))``; a resample's mean is the mean of the rows it
    drew.
    """
    rng = np.random.default_rng(seed)
    n = values.shape[0]
    out = []
    done = 0
    while done < samples:
        rows = min(CHUNK, samples - done)
        idx = rng.integers(0, n, size=(rows, n))
        for r in range(rows):
            out.append(values[idx[r]].mean(axis=0))
        done += rows
    return np.array(out)


def test_chunk_size_does_not_change_the_resamples(monkeypatch):
    # numpy draws the same integer stream however it is cut into calls, so the chunk
    # size is a speed/memory knob only; the default sample count is part of the output
    x = np.random.default_rng(6).random((23, 2))
    want = bootstrap_means(x, samples=1111, seed=9)
    monkeypatch.setattr(engine.analysis.compare, "CHUNK", 7)
    # (equal to rounding: the matrix product's summation order follows the chunk shape)
    np.testing.assert_allclose(bootstrap_means(x, samples=1111, seed=9), want, rtol=0, atol=1e-12)
    assert DEFAULT_SAMPLES == 10_000


@pytest.mark.parametrize("n", [1, 5, 37])
def test_bootstrap_means_follow_the_documented_algorithm(n):
    x = np.random.default_rng(n).random((n, 3))
    samples = 2 * CHUNK + 37  # two full chunks and a partial one
    got = bootstrap_means(x, samples=samples, seed=2024)
    want = _reference_bootstrap(x, samples, 2024)
    assert got.shape == want.shape == (samples, 3)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_no_questions_gives_zero_means():
    assert (bootstrap_means(np.zeros((0, 2)), samples=10) == 0.0).all()


def test_percentile_interval_is_numpys_linear_percentile():
    means = np.arange(101, dtype=np.float64)  # percentiles are the values themselves
    # (1 - 0.95) / 2 * 100 is 2.5000000000000022 in floating point, hence approx
    assert percentile_interval(means) == pytest.approx((2.5, 97.5), abs=1e-12)
    assert percentile_interval(means, level=0.9) == pytest.approx((5.0, 95.0), abs=1e-12)
    x = np.random.default_rng(3).normal(size=999)
    want = np.percentile(x, [2.5, 97.5])
    assert percentile_interval(x) == pytest.approx(tuple(want), abs=1e-12)


# -- randomization test ---------------------------------------------------------------------


def test_all_zero_differences_give_p_1():
    # every flip ties the observed mean 0
    assert randomization_p(np.zeros(12), samples=500, seed=0) == 1.0


@pytest.mark.parametrize("d", [0.7, -0.25, 1.0, 1e-9])
def test_a_single_question_gives_p_1(d):
    # both flips give |+-d| = |d| >= |observed|
    assert randomization_p(np.array([d]), samples=300, seed=4) == 1.0


def test_equal_positive_differences_p_is_2_over_2_to_the_n():
    n, samples = 10, 20_000
    p = randomization_p(np.full(n, 0.2), samples=samples, seed=0)
    # only the all-plus and all-minus flips reach |mean| = 0.2: probability 2/2^n
    count = p * (samples + 1) - 1
    assert count == pytest.approx(round(count), abs=1e-6)  # (count + 1) / (samples + 1)
    expected = samples * 2 / 2**n  # about 39
    sd = math.sqrt(samples * (2 / 2**n) * (1 - 2 / 2**n))
    assert abs(count - expected) < 4 * sd


def test_p_is_never_0():
    samples = 2000
    # 60 equal differences: a flip as extreme has probability 2^-59
    assert randomization_p(np.full(60, 1.0), samples=samples, seed=1) == 1 / (samples + 1)
    assert randomization_p(np.array([]), samples=samples) == 1.0


def _reference_p(d: np.ndarray, samples: int, seed: int) -> float:
    """Sign flips drawn as documented, one flip and one question at a time."""
    rng = np.random.default_rng(seed)
    observed = abs(d.mean())
    extreme = 0
    done = 0
    while done < samples:
        rows = min(CHUNK, samples - done)
        packed = rng.integers(0, 256, size=(rows, (d.size + 7) // 8), dtype=np.uint8)
        for r in range(rows):
            # bit j of the row, most significant first: keep (1) or negate (0) question j
            bits = [(packed[r][j // 8] >> (7 - j % 8)) & 1 for j in range(d.size)]
            flipped = sum(x if b else -x for x, b in zip(d.tolist(), bits, strict=True))
            if abs(flipped / d.size) >= observed - 1e-12:
                extreme += 1
        done += rows
    return (extreme + 1) / (samples + 1)


def test_two_questions_hand_computed_and_replicated():
    # d = [1, 3]: the four flips give means 2, -1, 1, -2; |mean| >= 2 for half of them
    d = np.array([1.0, 3.0])
    p = randomization_p(d, samples=1201, seed=8)
    assert p == _reference_p(d, 1201, 8)
    assert abs(p - 0.5) < 5 * math.sqrt(0.25 / 1201)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 23])
def test_flips_follow_the_documented_algorithm(n):
    # n around a byte's 8 bits: the last byte's unused bits must not shift the flips
    d = np.random.default_rng(n).normal(0.05, 0.3, size=n)
    samples = 2 * CHUNK + 11
    assert randomization_p(d, samples=samples, seed=3) == _reference_p(d, samples, 3)


# -- win / tie / loss and the result shape --------------------------------------------------


def test_win_tie_loss_and_means_by_hand():
    a = np.array([1.0, 0.5, 0.0, 0.25, 1 / 3])
    b = np.array([0.5, 0.5, 1.0, 0.0, 1 / 3])
    c = compare("A", "B", "mrr", a, b, samples=200, seed=0)
    # wins: q0 (1 > .5), q3 (.25 > 0); ties: q1, q4; losses: q2
    assert (c.wins, c.ties, c.losses) == (2, 2, 1)
    assert c.n == 5
    assert c.mean_a == pytest.approx((1 + 0.5 + 0 + 0.25 + 1 / 3) / 5, abs=1e-15)
    assert c.mean_b == pytest.approx((0.5 + 0.5 + 1 + 0 + 1 / 3) / 5, abs=1e-15)
    assert c.diff == pytest.approx((0.5 + 0 - 1 + 0.25 + 0) / 5, abs=1e-15)
    lo, hi = c.ci95
    assert lo <= hi
    assert 0 < c.p_value <= 1
    # swapping A and B swaps wins and losses and negates the difference
    s = compare("B", "A", "mrr", b, a, samples=200, seed=0)
    assert (s.wins, s.ties, s.losses) == (1, 2, 2)
    assert s.diff == pytest.approx(-c.diff, abs=1e-15)


def test_identical_retrievers_all_ties():
    x = np.array([1.0, 0.5, 0.0, 1 / 3])
    c = compare("A", "A2", "mrr", x, x.copy(), samples=300)
    assert (c.wins, c.ties, c.losses) == (0, 4, 0)
    assert c.diff == 0.0 and c.ci95 == (0.0, 0.0) and c.p_value == 1.0


def test_compare_json_shape():
    c = compare("x", "y", "hit@1", np.array([1.0, 0.0, 1.0]), np.array([0.0, 0.0, 1.0]), samples=50)
    data = c.to_json()
    assert set(data) == JSON_KEYS
    assert isinstance(data["ci95"], list) and len(data["ci95"]) == 2
    assert (data["a"], data["b"], data["metric"], data["n"]) == ("x", "y", "hit@1", 3)
    json.dumps(data)  # plain JSON types


def test_compare_rejects_different_question_counts():
    with pytest.raises(ValueError, match="same questions"):
        compare("a", "b", "mrr", np.zeros(3), np.zeros(4))


def test_compare_with_no_questions():
    c = compare("a", "b", "mrr", np.zeros(0), np.zeros(0), samples=20)
    assert (c.n, c.wins, c.ties, c.losses) == (0, 0, 0, 0)
    assert c.ci95 == (0.0, 0.0) and c.p_value == 1.0


# -- KorQuAD 1.0 dev, article level, through the engine -------------------------------------

RESAMPLES = 10_000


@pytest.fixture(scope="module")
def korquad_compare(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data_path = shared_data("korquad_v1.0_dev", "KorQuAD_v1.0_dev.json")
    ws_path = tmp_path_factory.mktemp("korquad") / "kq.db"
    with new_workspace(ws_path) as ws:
        import_squad(ws, data_path, "article")
    pool(ws_path, ["bm25-bigram", "bm25-word"])
    with Workspace.open(ws_path) as ws:
        (comparison,) = compare_retrievers(ws, "bm25-bigram", "bm25-word")
        result = json.loads(json.dumps(comparison.to_json()))
        board = score_workspace(ws, retrievers=["bm25-bigram", "bm25-word"])
        score = json.loads(json.dumps(board.to_json()))
    # gold straight from the SQuAD JSON: at article level a question's document is its title
    squad = json.loads(Path(data_path).read_text(encoding="utf-8"))
    gold = {
        str(qa["id"]): article["title"]
        for article in squad["data"]
        for para in article["paragraphs"]
        for qa in para["qas"]
    }
    qids = sorted(gold)
    handle = Workspace.open(ws_path, readonly=True)
    try:
        rr = {}
        for name in ("bm25-bigram", "bm25-word"):
            runs = handle.runs(name)
            values = []
            for q in qids:
                ids = runs[q].doc_ids
                values.append(1.0 / (ids.index(gold[q]) + 1) if gold[q] in ids else 0.0)
            rr[name] = np.array(values)
    finally:
        handle.close()
    return {"result": result, "score": score, "rr": rr, "n": len(qids)}


def test_korquad_compare_shape_and_counts(korquad_compare):
    result = korquad_compare["result"]
    a, b = korquad_compare["rr"]["bm25-bigram"], korquad_compare["rr"]["bm25-word"]
    assert set(result) == JSON_KEYS
    assert (result["a"], result["b"], result["metric"]) == ("bm25-bigram", "bm25-word", "mrr")
    assert result["n"] == korquad_compare["n"] == 5774
    assert result["wins"] == int((a > b).sum())
    assert result["ties"] == int((a == b).sum())
    assert result["losses"] == int((a < b).sum())
    assert result["wins"] + result["ties"] + result["losses"] == 5774
    assert 0 < result["p_value"] <= 1


def test_korquad_means_equal_goldpan_score_and_own_reciprocal_ranks(korquad_compare):
    result, score = korquad_compare["result"], korquad_compare["score"]
    rr = korquad_compare["rr"]
    assert abs(result["mean_a"] - score["retrievers"]["bm25-bigram"]["mrr"]) < 1e-12
    assert abs(result["mean_b"] - score["retrievers"]["bm25-word"]["mrr"]) < 1e-12
    assert abs(result["mean_a"] - rr["bm25-bigram"].mean()) < 1e-12
    assert abs(result["mean_b"] - rr["bm25-word"].mean()) < 1e-12
    assert abs(result["diff"] - (result["mean_a"] - result["mean_b"])) < 1e-12


def test_korquad_interval_matches_an_independent_bootstrap(korquad_compare):
    result = korquad_compare["result"]
    d = korquad_compare["rr"]["bm25-bigram"] - korquad_compare["rr"]["bm25-word"]
    n = d.size
    rng = np.random.default_rng(12345)  # not the engine's stream (seed 0, chunked draws)
    means = np.empty(RESAMPLES)
    for i in range(RESAMPLES):
        means[i] = d[rng.integers(0, n, size=n)].mean()
    lo, hi = np.percentile(means, [2.5, 97.5])
    got_lo, got_hi = result["ci95"]
    assert abs(got_lo - lo) < 1e-3 and abs(got_hi - hi) < 1e-3
    # bigram beats word here by a margin the interval shows: both ends above 0
    assert 0 < got_lo < result["diff"] < got_hi
    assert result["p_value"] == 1 / (DEFAULT_SAMPLES + 1)
