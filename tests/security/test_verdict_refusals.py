"""Hostile input to the verdict and evidence rules: nothing to compare, one question,
non-finite and huge values, a snapshot holding them, levels no test can reach.

Each promise: a clear refusal (exit 2, no traceback, the workspace as it was) or an
honest "no verdict", never a difference called real on nothing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from engine.analysis.compare import compare, verdict_of
from engine.analysis.noanswer import calibrate
from engine.errors import BadInput
from tests.conftest import run_cli as run
from tests.conftest import snapshot


@pytest.fixture
def pooled(tiny_ws: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The tiny workspace with bm25-word and bm25-bigram ranked, and a snapshot s1."""
    for argv in (
        ("pool", tiny_ws, "--retriever", "bm25-word", "--retriever", "bm25-bigram"),
        ("snapshot", tiny_ws, "s1", "--retriever", "bm25-word", "--no-pool"),
    ):
        code, _, err = run(capsys, *argv)
        assert code == 0, err
    return tiny_ws


def test_nothing_to_compare_is_never_called_real(pooled, capsys):
    v = verdict_of([], [])
    assert v.status == "no_questions" and not v.real and v.higher is None
    before = snapshot(pooled)
    # q4, the only question tagged no-answer, is not scored: nothing to compare
    code, out, err = run(
        capsys, "compare", pooled, "bm25-word", "bm25-bigram", "--tag", "no-answer"
    )
    assert code == 2 and out == "" and "Traceback" not in err
    assert "compare: no question with tag 'no-answer' is scored" in err
    assert snapshot(pooled) == before


def test_one_question_gets_no_verdict(pooled, capsys):
    v = verdict_of([1.0], [0.0])
    assert (v.status, v.discordant, v.real) == ("too_few_discordant", 1, False)
    code, out, _ = run(capsys, "compare", pooled, "bm25-word", "bm25-bigram", "--tag", "easy")
    assert code == 0
    data = json.loads(
        run(capsys, "compare", pooled, "bm25-word", "bm25-bigram", "--tag", "easy", "--json")[1]
    )
    assert data["n"] == 1 and not data["verdict"]["real"]
    assert data["verdict"]["status"] == "too_few_discordant"


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_value_is_refused_naming_the_question(bad):
    a = np.full(10, 0.5)
    a[2] = bad
    with pytest.raises(BadInput, match=r"A's value of question #3 is .*: paired values must be"):
        verdict_of(a, np.zeros(10))
    with pytest.raises(BadInput, match=r"B's value of question #3"):
        compare("x", "y", "mrr", np.zeros(10), a)


def test_values_whose_sum_overflows_are_refused():
    with pytest.raises(BadInput, match="beyond a float's range"):
        verdict_of(np.full(31, 1e308), np.zeros(31))
    # each value and each difference is a finite float, but A - B sums past the range
    with pytest.raises(BadInput, match="A − B is too large"):
        verdict_of(np.array([1e308, 0.0]), np.array([-1e308, 0.0]))


def test_huge_finite_values_get_a_verdict_not_an_overflow():
    # a resample drawing the largest difference 31 times would overflow unscaled
    a = np.zeros(31)
    a[:8] = 1e307
    v = verdict_of(a, np.zeros(31))
    assert v.status == "real" and v.higher == "a"
    lo, hi = v.interval
    assert 0 < lo < hi <= 1e307 and math.isfinite(hi)
    # a difference past 2 ** 1023: its scale must not overflow either
    a[0] = 1.5e308
    assert verdict_of(a[:1], np.zeros(1)).status == "too_few_discordant"
    w = verdict_of(np.r_[1.5e308, np.full(7, 1e306), np.zeros(23)], np.zeros(31))
    assert w.real and math.isfinite(w.interval[1])


@pytest.mark.parametrize("value", ["1e308", "-0.5", "1.5", "NaN"])
def test_a_snapshot_metric_value_outside_0_1_is_refused_with_file_and_line(
    pooled, capsys, tmp_path, value
):
    path = tmp_path / "snap.json"
    assert run(capsys, "snapshot", "export", pooled, "s1", "--out", path)[0] == 0
    data = json.loads(path.read_text(encoding="utf-8"))
    q = sorted(data["retrievers"]["bm25-word"]["questions"])[0]
    data["retrievers"]["bm25-word"]["questions"][q]["values"]["mrr"] = "@@"
    text = json.dumps(data, indent=1, sort_keys=True).replace('"@@"', value)
    path.write_text(text, encoding="utf-8")
    before = snapshot(pooled)
    code, out, err = run(capsys, "score", pooled, "--against", path, "--no-pool")
    assert code == 2 and out == "" and "Traceback" not in err
    line = text[: text.index(f'"mrr": {value}')].count("\n") + 1
    assert f"snap.json:{line}:" in err and f"questions.{q}.values.mrr" in err
    assert "expected a number from 0 to 1" in err
    assert snapshot(pooled) == before


def test_too_few_resamples_for_the_level_are_refused(pooled, capsys):
    for argv in (
        ("compare", pooled, "bm25-word", "bm25-bigram", "--samples", "19"),
        ("score", pooled, "--against", "s1", "--samples", "19", "--no-pool"),
    ):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and "Traceback" not in err, argv
        assert "19 resamples cannot give a p-value below 0.05" in err


@pytest.mark.parametrize("level", ["0", "-0.05", "0.51", "inf", "nan", "5%"])
def test_a_level_no_verdict_can_be_given_at_is_refused(pooled, capsys, level):
    code, out, err = run(capsys, "compare", pooled, "bm25-word", "bm25-bigram", "--level", level)
    assert code == 2 and out == "" and "--level" in err and "Traceback" not in err


def test_no_threshold_is_named_on_no_question_of_a_kind():
    for ans, na in (([], []), ([1.0] * 40, []), ([], [0.0] * 40)):
        cal = calibrate("r", ans, na)
        assert cal.best is None and not cal.usable and not cal.evidence.established
        assert "needed" in (cal.warning() or "")
