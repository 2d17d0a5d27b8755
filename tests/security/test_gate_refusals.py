"""A gate never passes on what it did not compare: real ``goldpan score`` processes.

The project is ``test_gate_fresh``'s: a workspace of 4 labeled questions, ``bm25-word``
and a trusted ``mysearch`` command whose config file chooses the questions it gets wrong.
Each test is a way a careless or hostile change made the gate compare nothing (or the
wrong thing) and exit 0 on main; each must now exit 2 naming why, or score what was asked.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_gate_fresh import QUESTIONS, Project, make_project, run_file, snapshot_file


def gate(project: Project, snap: Path, *extra: object) -> tuple[int, str]:
    code, _, err = project.goldpan(
        "score", project.ws, "--against", snap, "--fail-on-regression", "--quiet", *extra
    )
    return code, err


def test_a_snapshot_retriever_removed_from_the_workspace_is_refused(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    code, _, err = project.goldpan("retriever", "remove", project.ws, "mysearch")
    assert code == 0, err
    code, err = gate(project, snap)
    assert code == 2, err
    assert "mysearch is in snapshot accepted but the workspace has no retriever mysearch now" in err


def test_a_snapshot_retriever_renamed_in_the_workspace_is_refused(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    project.goldpan("retriever", "remove", project.ws, "mysearch")
    code, _, err = project.goldpan(
        "retriever", "add", project.ws, "my-search", "--kind", "command",
        "--command", project.command,
    )  # fmt: skip
    assert code == 0, err
    project.goldpan("trust", project.ws, "--yes")
    project.demote("q1")  # worse, under its new name: compared with nothing it would pass
    code, err = gate(project, snap)
    assert code == 2, err
    assert "workspace has no retriever mysearch now (removed or renamed)" in err


def test_a_misspelt_run_command_name_is_refused_not_compared_with_nothing(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    project.demote("q1", "q2")  # today's code is worse
    code, err = gate(
        project, snap, "--run-command", f"{project.command}=mysaerch", "--retriever", "bm25-word"
    )
    assert code == 2, err
    assert "snapshot accepted has no retriever mysaerch (it has: bm25-word, mysearch)" in err


def test_a_misspelt_run_file_name_is_refused(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    today = run_file(project, project.root / "today.run")
    code, err = gate(project, snap, "--run", f"{today}=my-search")
    assert code == 2, err
    assert "has no retriever my-search" in err


def test_a_snapshot_of_another_test_set_is_refused(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    data = json.loads(snap.read_text(encoding="utf-8"))
    rename = {q.id: f"other-{q.id}" for q in QUESTIONS}
    data["golds"] = {rename[q]: g for q, g in data["golds"].items()}
    for body in data["retrievers"].values():
        body["questions"] = {rename[q]: v for q, v in body["questions"].items()}
    foreign = tmp_path / "other-snapshot.json"
    foreign.write_text(json.dumps(data, indent=1), encoding="utf-8")
    code, err = gate(project, foreign)
    assert code == 2, err
    assert "no question is scored both in snapshot accepted and now (4 scored only then" in err


def test_a_fusion_of_a_replaced_run_is_fused_again_from_it(tmp_path):
    project = make_project(tmp_path)
    good = run_file(project, project.root / "good.run")
    code, _, err = project.goldpan("import", "run", project.ws, good, "--name", "mine")
    assert code == 0, err
    code, _, err = project.goldpan(
        "retriever", "add", project.ws, "fz", "--kind", "rrf", "--of", "mine,bm25-word"
    )  # fmt: skip
    assert code == 0, err
    assert project.goldpan("pool", project.ws, "--retriever", "fz")[0] == 0
    project.demote("q1", "q2", "q3", "q5")  # today's `mine` ranks every gold second
    today = run_file(project, project.root / "today.run")
    code, out, err = project.goldpan(
        "score", project.ws, "--run", f"{today}=mine", "--retriever", "fz",
        "--fail-under", "fz:mrr=0.9", "--json", store=project.empty,
    )  # fmt: skip
    assert code == 1, err  # main scored fz from its cached fusion of the old mine: exit 0
    data = json.loads(out)
    assert data["rankings"]["fz"] == "fused again now from the given mine"
    assert data["retrievers"]["fz"]["mrr"] < 0.9
    assert data["gate"]["failures"] == [f"fz mrr {data['retrievers']['fz']['mrr']:.4f} < 0.9"]


def test_questions_not_ranked_for_their_inputs_now_are_not_compared(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    from engine.types import Question
    from engine.workspace import Workspace

    with Workspace.open(project.ws) as ws:  # q2 edited after the pool: bm25's is stale
        ws.write_questions([Question("q2", "금속 인공물이 생기는 문제", ())])
    today = run_file(project, project.root / "today.run")
    ask = ("--run", f"{today}=mysearch", "--retriever", "bm25-word", "--json")
    code, out, err = project.goldpan(
        "score", project.ws, "--against", snap, "--fail-on-regression", *ask
    )  # --run opens the workspace read-only: bm25-word is read, not pooled
    assert code == 0, err
    verdict = json.loads(out)["gate"]
    assert verdict["compared"] == {"bm25-word": 3, "mysearch": 3}  # q2 left out of both
    with Workspace.open(project.ws) as ws:
        ws.write_questions([Question(q.id, f"{q.text}?", ()) for q in QUESTIONS])
    code, err = gate(project, snap, *ask[:4])
    assert code == 2, err  # all left out: nothing compared
    assert "(0 scored only then, 0 only now, 4 not ranked yet)" in err


def test_a_floor_naming_a_retriever_not_scored_is_refused(tmp_path):
    project = make_project(tmp_path)
    today = run_file(project, project.root / "today.run")
    code, _, err = project.goldpan(
        "score", project.ws, "--run", f"{today}=mysearch", "--fail-under", "bm25-word:mrr=0.1",
        store=project.empty,
    )  # fmt: skip
    assert code == 2, err
    assert "--fail-under names 'bm25-word', which is not scored here (scored: mysearch)" in err
