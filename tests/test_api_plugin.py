"""Issue 21, item 5: the Python API (``goldpan.evaluate``) and the pytest plugin.

A project folder (pytester's) holds a test set, its accepted snapshot and a package
``mypkg`` whose ``search`` reads a config file: which questions it gets wrong changes
between runs. The CI page's (docs/ci.md) example test file and plugin command line are run
as written.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from engine.types import Label
from engine.workspace_setup import new_workspace
from tests.cli.test_gate_fresh import DOCS, QUESTIONS

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
GOLD = {"q1": "d1", "q2": "d2", "q3": "d3", "q5": "d4"}

SEARCH = """
import json
from pathlib import Path

GOLD = {gold!r}
DOCS = ["d1", "d2", "d3", "d4"]


def search(text):
    config = json.loads((Path(__file__).parent / "config.json").read_text(encoding="utf-8"))
    first = GOLD.get(text, "d1")
    order = [first] + [d for d in DOCS if d != first]
    if text in config["demote"]:
        order[0], order[1] = order[1], order[0]
    return [(d, 10.0 - i) for i, d in enumerate(order)]
"""


def readme_block(heading: str, lang: str) -> str:
    """The first ``lang`` code block after ``heading`` in docs/ci.md (the CI page)."""
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    start = text.index(heading)
    m = re.compile(rf"```{lang}\n(.*?)```", re.S).search(text, start)
    assert m, f"docs/ci.md has no {lang} block after {heading!r}"
    return m.group(1)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """tests/retrieval.db, tests/retrieval-snapshot.json (of the search as it is now), mypkg."""
    texts = {q.id: q.text for q in QUESTIONS}
    pkg = pytester.mkpydir("mypkg")
    (pkg / "search.py").write_text(
        SEARCH.format(gold={texts[q]: d for q, d in GOLD.items()}), encoding="utf-8"
    )
    demote(pytester)
    (pytester.path / "tests").mkdir()
    ws = new_workspace(pytester.path / "tests" / "retrieval.db")
    ws.write_docs(DOCS)
    ws.write_questions(QUESTIONS)
    ws.write_labels([Label(q, d, "mina", 2) for q, d in GOLD.items()])
    ws.close()
    pytester.syspathinsert(pytester.path)
    monkeypatch.chdir(pytester.path)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only what -p names
    from mypkg.search import search  # type: ignore[import-not-found]

    import goldpan

    goldpan.evaluate(search, "tests/retrieval.db").save_snapshot("tests/retrieval-snapshot.json")
    return pytester


def demote(pytester: pytest.Pytester, *qids: str) -> None:
    """Change the search's behaviour: these questions' golds drop to rank 2."""
    texts = {q.id: q.text for q in QUESTIONS}
    (pytester.path / "mypkg" / "config.json").write_text(
        json.dumps({"demote": [texts[q] for q in qids]}), encoding="utf-8"
    )


def test_evaluate_scores_a_function_as_goldpan_score_does(project):
    from mypkg.search import search

    import goldpan

    with goldpan.open("tests/retrieval.db") as ts:
        result = goldpan.evaluate(search, ts, k=(1, 5))
    assert result.means["hit@1"] == 1.0 and result.means["mrr"] == 1.0
    assert set(result.board.retrievers) == {"search"}
    demote(project, "q2")
    worse = goldpan.evaluate(search, "tests/retrieval.db").compare_to(
        "tests/retrieval-snapshot.json"
    )
    assert [(m.question, m.rank_then, m.rank_now, m.winner) for m in worse.regressed] == [
        ("q2", 1, 2, "d1")
    ]
    assert "q2: rank 1 -> 2, ranked first now: d1; 금속 때문에 생기는 문제" in worse.report()
    # only the gold is judged here: the search's other documents are holes, and it is told
    (warning,) = result.warnings
    assert warning.retriever == "search" and warning.judged < 0.8
    assert [w.retriever for w in worse.warnings] == ["search"]
    # MRR fell on one question: a change, and too few questions differ to call it real
    mrr = worse.changes["mrr"]
    assert mrr.now < mrr.then and mrr.verdict.status == "too_few_discordant"
    with pytest.raises(Exception, match="document .nope. is not in the workspace"):
        goldpan.evaluate(lambda text: ["nope"], "tests/retrieval.db")


def test_plugin_fails_exactly_the_regressed_questions(project):
    demote(project, "q1", "q5")
    args = shlex.split(readme_block("## From Python and pytest", "console").split("$ ")[1])
    assert args[0] == "pytest"
    result = project.runpytest("-p", "goldpan.pytest_plugin", *args[1:], "-v")
    result.assert_outcomes(passed=3, failed=2)  # the gate's own item passes: it compared
    result.stdout.fnmatch_lines(
        [
            "*::goldpan PASSED*",
            "*goldpan[[]q1] FAILED*",
            "*goldpan[[]q2] PASSED*",
            "*goldpan[[]q3] PASSED*",
            "*goldpan[[]q5] FAILED*",
        ]
    )
    out = result.stdout.str()
    assert "got worse since snapshot accepted: first gold at rank 1 then, 2 now" in out
    assert "question q1: 감쇠 보정은 어떻게 하나" in out and "gold: d1" in out
    assert "ranked first: d2" in out


def test_plugin_without_a_snapshot_fails_the_questions_missing_their_gold(project):
    demote(project, "q3")
    result = project.runpytest(
        "-p", "goldpan.pytest_plugin", "--goldpan", "tests/retrieval.db",
        "--goldpan-search", "mypkg.search:search", "--goldpan-k", "1",
    )  # fmt: skip
    result.assert_outcomes(passed=4, failed=1)  # the gate's item and three questions
    assert "no gold in the top 1 (first gold at rank 2)" in result.stdout.str()


def test_the_readme_test_file_runs_and_catches_a_regression(project):
    (project.path / "tests" / "test_retrieval.py").write_text(
        readme_block("## From Python and pytest", "python"), encoding="utf-8"
    )
    project.runpytest("tests/test_retrieval.py").assert_outcomes(passed=2)
    demote(project, "q3")
    result = project.runpytest("tests/test_retrieval.py")
    result.assert_outcomes(passed=1, failed=1)
    assert "q3: rank 1 -> 2" in result.stdout.str()


def test_without_goldpan_the_plugin_collects_nothing_and_imports_no_engine(project):
    (project.path / "test_plain.py").write_text("def test_ok():\n    pass\n", encoding="utf-8")
    result = project.runpytest("-p", "goldpan.pytest_plugin", "test_plain.py")
    result.assert_outcomes(passed=1)
    probe = (
        "import sys, goldpan.pytest_plugin; "
        "print([m for m in ('engine', 'numpy', 'goldpan.api') if m in sys.modules])"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_plugin_is_registered_and_packaged():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["entry-points"]["pytest11"] == {"goldpan": "goldpan.pytest_plugin"}
    assert "goldpan" in meta["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    assert "goldpan" in meta["tool"]["mypy"]["files"]
