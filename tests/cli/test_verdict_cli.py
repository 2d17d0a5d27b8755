"""The verdict and the evidence rules as a user meets them: real ``goldpan`` processes.

The workspace is the one issue 47 reported on (:mod:`tests.verdict_study`), built with
goldpan's own commands.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.verdict_study import no_answer_questions, study_files


def goldpan(home: Path, *argv: object) -> subprocess.CompletedProcess[str]:
    """Run the goldpan program (``python -m tui``) with its own user folders."""
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
    }
    return subprocess.run(
        [sys.executable, "-m", "tui", *map(str, argv)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=300,
        check=False,
    )


def ok(home: Path, *argv: object) -> str:
    done = goldpan(home, *argv)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the workspace, a home for the user folders)."""
    home = tmp_path_factory.mktemp("study")
    ws = home / "posts.db"
    docs, questions, runs = study_files(home)
    ok(home, "new", ws)
    ok(home, "import", "docs", ws, docs)
    ok(home, "import", "questions", ws, questions)
    for name, run in runs.items():
        ok(home, "import", "run", ws, run, "--name", name)
    return ws, home


def test_the_issue_case_says_no_test_can_reach_the_level(study):
    ws, home = study
    out = " ".join(ok(home, "compare", ws, "bigram", "word").split())
    # the numbers of the report: W/T/L 4/27/0, [+0.016, +0.186], p 0.12
    assert "[+0.016, +0.186]" in out and re.search(r"4/27/0 0\.12\d too few \(4\)", out)
    assert "mrr: 4 questions differ: no test on 4 can reach p < 0.05 (the least p is 0.125)" in out
    assert "too few (4)" in out
    # today's main said "the interval excludes 0" here, beside p = 0.126
    assert "the interval excludes 0" not in out
    data = json.loads(ok(home, "compare", ws, "bigram", "word", "--json"))
    assert data["verdict"] == {
        "status": "too_few_discordant",
        "real": False,
        "higher": None,
        "level": 0.05,
        "questions": 31,
        "discordant": 4,
        "least_p": 0.125,
        "p_value": data["p_value"],
        "interval": data["ci95"],
        "says": "4 questions differ: no test on 4 can reach p < 0.05 (the least p is 0.125)",
    }


def test_no_question_differs(study):
    ws, home = study
    out = " ".join(ok(home, "compare", ws, "bigram", "twin").split())
    assert "0/31/0" in out and "too few (0)" in out
    assert "mrr: bigram and twin are equal on every question: there is no difference to test" in out
    verdict = json.loads(ok(home, "compare", ws, "bigram", "twin", "--json"))["verdict"]
    assert (verdict["status"], verdict["discordant"], verdict["real"]) == (
        "too_few_discordant",
        0,
        False,
    )


def test_every_question_differs(study):
    ws, home = study
    out = " ".join(ok(home, "compare", ws, "bigram", "second").split())
    assert "31/0/0" in out and "+0.500" in out
    assert "mrr: real: bigram is higher (p = 0.0001 < 0.05 and the 95% interval" in out
    assert "31 questions differ)" in out
    verdict = json.loads(ok(home, "compare", ws, "second", "bigram", "--json"))["verdict"]
    assert (verdict["status"], verdict["real"], verdict["higher"]) == ("real", True, "b")


def test_several_metrics_at_once(study):
    ws, home = study
    argv = ("compare", ws, "bigram", "word", "--metric", "mrr,HIT@1", "--metric", "hit@5")
    data = json.loads(ok(home, *argv, "--json"))
    assert [c["metric"] for c in data] == ["mrr", "hit@1", "hit@5"]
    # hit@5: only q03 (rank 6) differs
    assert [c["verdict"]["discordant"] for c in data] == [4, 4, 1]
    single = json.loads(ok(home, "compare", ws, "bigram", "word", "--metric", "hit@1", "--json"))
    assert single == data[1]  # the same resamples whatever else is compared
    out = " ".join(ok(home, *argv).split())
    assert "hit@5: 1 question differs: no test on 1 can reach p < 0.05 (the least p is 1)" in out


def test_level_and_resamples_are_checked(study):
    ws, home = study
    strict = json.loads(ok(home, "compare", ws, "bigram", "second", "--level", "0.01", "--json"))
    assert strict["verdict"]["level"] == 0.01 and strict["verdict"]["real"]
    for bad in ("0", "0.6", "nan"):
        done = goldpan(home, "compare", ws, "bigram", "word", "--level", bad)
        assert done.returncode == 2 and "--level" in done.stderr and not done.stdout
    done = goldpan(home, "compare", ws, "bigram", "word", "--samples", "10")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "10 resamples cannot give a p-value below 0.05" in done.stderr
    assert "use at least 20" in done.stderr


@pytest.mark.parametrize(("no_answer", "named"), [(4, False), (5, True)])
def test_noanswer_names_a_threshold_from_5_and_5(study, tmp_path, no_answer, named):
    ws, home = study
    copy = tmp_path / "copy.db"
    shutil.copyfile(ws, copy)
    ok(home, "import", "questions", copy, no_answer_questions(tmp_path, no_answer))
    data = json.loads(ok(home, "noanswer", copy, "--retriever", "bigram", "--json"))
    assert (data["answerable"], data["no_answer"], data["established"]) == (31, no_answer, named)
    out = " ".join(ok(home, "noanswer", copy, "--retriever", "bigram").split())
    if named:
        # answerable top-1 scores are 100, no-answer questions are not ranked (0)
        assert data["best"]["threshold"] == 100.0 and data["warning"] is None
        assert "best threshold 100.0000 (balanced accuracy 1.000)" in out
        assert "warning" not in out
    else:
        assert data["best"] is None and data["thresholds"] == []
        assert data["needs"]["no_answer"] == {"have": 4, "least": 5, "more": 1}
        assert "best threshold" not in out
        assert out.endswith(
            "found 4 no-answer questions and 31 answerable questions: 1 more no-answer "
            "question needed"
        )
