"""Issue 21: the regression gate scores the team's code as it is today.

A real search program (a Python script in tmp_path) answers goldpan's questions; which
questions it gets wrong is read from a config file, so its behaviour changes between
runs while the command text stays the same. Every goldpan call is a real subprocess with
its own, empty or trusted, trust store (GOLDPAN_CONFIG_DIR).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from engine.types import Doc, Label, Question
from engine.workspace_setup import new_workspace

ROOT = Path(__file__).resolve().parents[2]

SEARCH = r"""
import json, sys
config = json.load(open(sys.argv[1], encoding="utf-8"))
gold = {"q1": "d1", "q2": "d2", "q3": "d3", "q5": "d4"}
docs = ["d1", "d2", "d3", "d4"]
for line in sys.stdin:
    q = json.loads(line)["id"]
    first = gold.get(q, "d1")
    order = [first] + [d for d in docs if d != first]
    if q in config.get("demote", []):  # the gold drops from rank 1 to rank 2
        order[0], order[1] = order[1], order[0]
    for rank, d in enumerate(order, 1):
        print(q, "Q0", d, rank, 10 - rank, "mysearch")
"""

DOCS = [
    Doc("d1", "감쇠 보정 원리", "감쇠 보정은 CT 영상으로 감쇠 계수를 구한다.", {}),
    Doc("d2", "감쇠 보정 금속", "금속 인공물이 감쇠 보정을 망친다.", {}),
    Doc("d3", "TD-2024-0137", "문서번호 TD-2024-0137 팬텀 점검 절차.", {}),
    Doc("d4", "notice", "점검 <공지> | `code`.", {}),
]
QUESTIONS = [
    Question("q1", "감쇠 보정은 어떻게 하나", ()),
    Question("q2", "금속 때문에 생기는 문제", ()),
    Question("q3", "0137 문서의 점검 절차", ()),
    Question("q5", 'a <b>&amp; | `tick` ]]> "quote"\nsecond line', ()),
]


@dataclass
class Project:
    """A team's repository: the workspace, the search program and its config."""

    root: Path
    ws: Path
    config: Path
    command: str
    trusted: Path
    """A trust store in which the command is trusted for ``ws``."""
    empty: Path
    """A trust store that trusts nothing (a CI machine)."""

    def goldpan(self, *argv: object, store: Path | None = None) -> tuple[int, str, str]:
        """Run ``goldpan`` as a subprocess in the project folder."""
        env = {**os.environ, "GOLDPAN_CONFIG_DIR": str(store or self.trusted)}
        env["PYTHONPATH"] = str(ROOT)
        done = subprocess.run(
            [sys.executable, "-m", "tui.cli", *map(str, argv)],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return done.returncode, done.stdout, done.stderr

    def demote(self, *qids: str) -> None:
        """Change the search code's behaviour (the command text stays the same)."""
        self.config.write_text(json.dumps({"demote": list(qids)}), encoding="utf-8")


def make_project(tmp_path: Path, *, add_options: tuple[str, ...] = ()) -> Project:
    """A workspace with 4 labeled questions, bm25-word and a trusted `mysearch` command."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "search.py").write_text(SEARCH, encoding="utf-8")
    config = root / "search.json"
    config.write_text(json.dumps({"demote": []}), encoding="utf-8")
    path = root / "retrieval.db"
    ws = new_workspace(path)
    ws.write_docs(DOCS)
    ws.write_questions(QUESTIONS)
    ws.write_labels(
        [
            Label("q1", "d1", "mina", 2),
            Label("q2", "d2", "mina", 2),
            Label("q3", "d3", "mina", 2),
            Label("q5", "d4", "mina", 2),
        ]
    )
    for spec in ws.retrievers():
        if spec.name != "bm25-word":
            ws.remove_retriever(spec.name)
    ws.close()
    command = shlex.join([sys.executable, "search.py", "search.json"])
    project = Project(root, path, config, command, tmp_path / "trusted", tmp_path / "empty")
    code, _, err = project.goldpan(
        "retriever", "add", path, "mysearch", "--kind", "command", "--command", command,
        *add_options,
    )  # fmt: skip
    assert code == 0, err
    code, _, err = project.goldpan("trust", path, "--yes")
    assert code == 0, err
    return project


def snapshot_file(project: Project) -> Path:
    """Snapshot the scores now and export them as the CI job's accepted file."""
    code, _, err = project.goldpan("snapshot", project.ws, "accepted")
    assert code == 0, err
    snap = project.root / "snap.json"
    code, _, err = project.goldpan(
        "snapshot", "export", project.ws, "accepted", "--out", snap
    )  # fmt: skip
    assert code == 0, err
    return snap


def run_file(project: Project, path: Path) -> Path:
    """The search program's TREC run as it behaves now (what a CI job writes), at ``path``."""
    done = subprocess.run(
        shlex.split(project.command),
        input="".join(json.dumps({"id": q.id, "text": q.text}) + "\n" for q in QUESTIONS),
        capture_output=True,
        text=True,
        cwd=project.root,
        check=True,
    )
    path.write_text(done.stdout, encoding="utf-8")
    return path


def regressed(out: str) -> dict[str, list[str]]:
    """Per retriever, the regressed questions of `score --against --json`."""
    data = json.loads(out)
    return {r: [m["question"] for m in d["regressed"]] for r, d in data["retrievers"].items()}


def test_a_changed_program_with_the_same_command_fails_the_gate(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    project.demote("q1", "q2")  # two golds drop from rank 1 to rank 2
    code, out, err = project.goldpan(
        "score", project.ws, "--against", snap, "--fail-on-regression"
    )  # fmt: skip
    assert code == 1, err
    assert "mysearch: 2 question(s) (q1 1->2, q2 1->2)" in err
    assert "mysearch: ranked now (command, no cache key)" in err
    assert "bm25-word: cached, inputs unchanged" in err
    assert "mysearch: 2 question(s) got worse" in out
    code, out, _ = project.goldpan("score", project.ws, "--against", snap, "--json")
    assert code == 0
    assert regressed(out) == {"bm25-word": [], "mysearch": ["q1", "q2"]}
    assert json.loads(out)["rankings"]["mysearch"] == "ranked now (command, no cache key)"
    project.demote()  # fixed again: the gate passes on the program as it is now
    code, _, err = project.goldpan(
        "score", project.ws, "--against", snap, "--fail-on-regression"
    )  # fmt: skip
    assert code == 0, err


def test_fail_under_scores_the_program_as_it_is_now(tmp_path):
    project = make_project(tmp_path)
    code, _, err = project.goldpan("score", project.ws, "--fail-under", "mysearch:hit@1=1")
    assert code == 0, err
    project.demote("q3")
    code, _, err = project.goldpan("score", project.ws, "--fail-under", "mysearch:hit@1=1")
    assert code == 1 and "mysearch hit@1 0.7500 < 1" in err


def test_a_cache_key_keeps_rankings_until_what_it_names_changes(tmp_path):
    project = make_project(tmp_path, add_options=("--cache-key-files", "search.json", "search.py"))
    code, _, err = project.goldpan("score", project.ws, "--retriever", "mysearch")
    assert code == 0 and "mysearch: ranked now (inputs and cache key changed" in err
    code, _, err = project.goldpan("score", project.ws, "--retriever", "mysearch")
    assert code == 0 and "mysearch: cached, inputs and cache key unchanged" in err
    project.demote("q1")  # a file the key names changed: ranked again, and it shows
    code, out, err = project.goldpan("score", project.ws, "--retriever", "mysearch", "--json")
    assert code == 0 and json.loads(out)["retrievers"]["mysearch"]["hit@1"] == 0.75
    assert json.loads(out)["rankings"]["mysearch"].startswith("ranked now (inputs and cache key")
    code, _, err = project.goldpan("score", project.ws, "--retriever", "mysearch", "--refresh")
    assert code == 0 and "mysearch: ranked now (--refresh)" in err


def test_an_untrusted_command_in_ci_exits_2_naming_it_and_the_fix(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    project.demote("q1", "q2")  # worse, but CI cannot run it: the gate must not pass
    for gate in (["--against", snap, "--fail-on-regression"], ["--fail-under", "mrr=0.1"]):
        code, _, err = project.goldpan("score", project.ws, *gate, store=project.empty)
        assert code == 2, err
        assert "the gate covers mysearch, which did not run here" in err
        assert f"goldpan trust {project.ws} --yes" in err and "--run-command" in err
    # a gate that covers only retrievers that ran still works
    code, _, err = project.goldpan(
        "score", project.ws, "--fail-under", "bm25-word:mrr=0.1", store=project.empty
    )  # fmt: skip
    assert code == 0, err


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_run_file_gates_and_leaves_the_workspace_byte_identical(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    project.demote("q2")
    run = run_file(project, project.root / "today.trec")
    before = digest(project.ws)
    code, out, err = project.goldpan(
        "score", project.ws, "--run", f"{run}=mysearch", "--against", snap,
        "--fail-on-regression", store=project.empty,
    )  # fmt: skip
    assert code == 1, err
    assert "mysearch: 1 question(s) (q2 1->2)" in err
    assert "bm25-word" not in out  # only the given rankings are scored
    code, out, err = project.goldpan(
        "score", project.ws, "--run", f"{run}=mysearch", "--fail-under", "hit@1=0.7", "--json",
        store=project.empty,
    )  # fmt: skip
    assert code == 0, err
    assert set(json.loads(out)["retrievers"]) == {"mysearch"}
    assert json.loads(out)["rankings"]["mysearch"].endswith("(--run)")
    assert digest(project.ws) == before


def test_run_command_is_trusted_because_typed_and_stored_nowhere(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    project.demote("q3")
    before = digest(project.ws)
    code, out, err = project.goldpan(
        "score", project.ws, "--run-command", f"{project.command}=mysearch",
        "--retriever", "bm25-word", "--against", snap, "--fail-on-regression", "--json",
        store=project.empty,
    )  # fmt: skip
    assert code == 1, err
    assert regressed(out) == {"bm25-word": [], "mysearch": ["q3"]}
    assert json.loads(out)["rankings"]["mysearch"] == "ranked now (--run-command)"
    assert digest(project.ws) == before
