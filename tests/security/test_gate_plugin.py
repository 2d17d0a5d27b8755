"""The pytest plugin and the Python API never pass on nothing compared.

Each test builds a small repository (``mypkg/search.py`` and a test set under ``tests/``)
and runs a real ``pytest`` in a subprocess, the plugin loaded from its entry point as a
team's CI loads it. On main, these runs passed: 0 items collected on a test set with no
scored question, every item passed when the snapshot's retriever was named otherwise
than the search function, or when the snapshot was of another test set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.types import Label
from engine.workspace_setup import new_workspace
from tests.cli.test_gate_fresh import DOCS, QUESTIONS

ROOT = Path(__file__).resolve().parents[2]
GOLD = {"q1": "d1", "q2": "d2", "q3": "d3", "q5": "d4"}
SEARCH = """
GOLD = {gold!r}
DOCS = ["d1", "d2", "d3", "d4"]


def {name}(text):
    first = GOLD.get(text, "d1")
    return [first] + [d for d in DOCS if d != first]
"""
TEST_FILE = """
import goldpan

from mypkg.search import search


def test_no_question_got_worse():
    result = goldpan.evaluate(search, "tests/retrieval.db")
    worse = result.compare_to("tests/retrieval-snapshot.json")
    assert not worse.regressed, worse.report()
"""


def make_repo(tmp_path: Path, *, labeled: bool = True, name: str = "search") -> Path:
    """A team's repository: ``mypkg.search.<name>`` and ``tests/retrieval.db``."""
    repo = tmp_path / "repo"
    (repo / "mypkg").mkdir(parents=True)
    (repo / "mypkg" / "__init__.py").write_text("", encoding="utf-8")
    texts = {q.id: q.text for q in QUESTIONS}
    (repo / "mypkg" / "search.py").write_text(
        SEARCH.format(gold={texts[q]: d for q, d in GOLD.items()}, name=name), encoding="utf-8"
    )
    (repo / "tests").mkdir()
    ws = new_workspace(repo / "tests" / "retrieval.db")
    ws.write_docs(DOCS)
    ws.write_questions(QUESTIONS)
    if labeled:
        ws.write_labels([Label(q, d, "mina", 2) for q, d in GOLD.items()])
    ws.close()
    return repo


def save_snapshot(repo: Path, retriever: str) -> Path:
    """The search's accepted snapshot, kept under ``retriever``."""
    code = (
        "import goldpan\nfrom mypkg.search import search\n"
        f"goldpan.evaluate(search, 'tests/retrieval.db', name={retriever!r})"
        ".save_snapshot('tests/retrieval-snapshot.json')\n"
    )
    run(repo, [sys.executable, "-c", code], check=True)
    return repo / "tests" / "retrieval-snapshot.json"


def run(repo: Path, argv: list[str], *, check: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(repo), str(ROOT)])
    return subprocess.run(
        argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=check
    )


def pytest_goldpan(repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``pytest --goldpan tests/retrieval.db --goldpan-search mypkg.search:search ...``."""
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA"]
    argv += ["--goldpan", "tests/retrieval.db", "--goldpan-search", "mypkg.search:search"]
    return run(repo, argv + list(extra))


def test_pytest_goldpan_on_a_test_set_with_nothing_scored_exits_non_zero_naming_why(tmp_path):
    repo = make_repo(tmp_path, labeled=False)
    (repo / "test_plain.py").write_text("def test_ok():\n    pass\n", encoding="utf-8")
    done = pytest_goldpan(repo, "test_plain.py")
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "FAILED ::goldpan" in done.stdout
    assert "no question is scored (4 unlabeled), so nothing was compared" in done.stdout


def test_a_snapshot_of_another_retriever_name_fails_the_gate(tmp_path):
    repo = make_repo(tmp_path)
    save_snapshot(repo, "mysearch")  # the snapshot's retriever is not the function's name
    done = pytest_goldpan(repo, "--goldpan-against", "tests/retrieval-snapshot.json")
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "snapshot accepted has no retriever search (it has: mysearch)" in done.stdout
    assert " passed" not in done.stdout.splitlines()[-1]  # no question passed on nothing
    named = pytest_goldpan(
        repo, "--goldpan-against", "tests/retrieval-snapshot.json", "--goldpan-name", "mysearch"
    )
    assert named.returncode == 0, named.stdout + named.stderr
    assert "5 passed" in named.stdout  # the gate's item and the 4 questions


def test_a_snapshot_of_another_test_set_fails_the_gate(tmp_path):
    repo = make_repo(tmp_path)
    snap = save_snapshot(repo, "search")
    data = json.loads(snap.read_text(encoding="utf-8"))
    data["golds"] = {f"other-{q}": g for q, g in data["golds"].items()}
    for body in data["retrievers"].values():
        body["questions"] = {f"other-{q}": v for q, v in body["questions"].items()}
    snap.write_text(json.dumps(data), encoding="utf-8")
    done = pytest_goldpan(repo, "--goldpan-against", "tests/retrieval-snapshot.json")
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "search: no question is scored both in snapshot accepted and now" in done.stdout
    assert "FAILED ::goldpan[q1]" in done.stdout  # every question fails: none was compared
    assert "not compared: search: no question is scored both" in done.stdout


def test_compare_to_on_a_missing_name_cannot_pass_the_readme_assert(tmp_path):
    repo = make_repo(tmp_path)
    save_snapshot(repo, "mysearch")
    (repo / "tests" / "test_retrieval.py").write_text(TEST_FILE, encoding="utf-8")
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    done = run(repo, [*argv, "tests/test_retrieval.py"])
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "GateRefused: snapshot accepted has no retriever search" in done.stdout
