"""`goldpan judge`, `queue --model` and `agreement` with a command judge: what they print,
their JSON and exit codes, and ``judge --report``'s card in words. What the judge stores
and changes is in tests/engine/judges/test_model_judge.py, whose fake judge and demo these tests
share; the report card's figures are in tests/engine/judges/test_judge_report.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from engine.gold import workspace_golds
from engine.judging.queue import disagreement_queue
from engine.types import Label
from engine.workspace import Workspace
from tests.conftest import copy_workspace
from tests.conftest import run_cli as run
from tests.engine.judges.test_judge_report import judged_workspace
from tests.engine.judges.test_model_judge import (
    command,
    hashed,
    word_level_demo,
    write_fake,
)


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fake(tmp_path_factory.mktemp("judge"))


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return word_level_demo(tmp_path_factory.mktemp("demo") / "demo.db")


@pytest.fixture
def demo(demo_file: Path, tmp_path: Path) -> Path:
    return copy_workspace(demo_file, tmp_path / "demo.db")


def test_judge_json_remove_and_list(demo, fake, capsys):
    code, out, err = run(
        capsys, "judge", demo, "--command", command(fake), "--annotator", "model:a", "--json"
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["annotator"] == "model:a" and report["kind"] == "command"
    with Workspace.open(demo) as ws:
        n_a = len(ws.model_labels("model:a"))
    assert report["grades"] == n_a and sum(report["counts"]) == n_a
    code, _, err = run(capsys, "judge", demo, "--command", command(fake), "--annotator", "model:b")
    assert code == 0, err
    code, out, err = run(capsys, "judge", demo, "--remove", "model:a")
    assert code == 0, err
    assert f"removed model:a and its {n_a:,} grades" in out
    code, _, err = run(capsys, "judge", demo, "--remove", "model:a")
    assert code == 2 and "unknown model judge 'model:a'" in err and "model:b" in err
    code, out, _ = run(capsys, "judge", demo, "--list", "--json")
    assert code == 0 and [j["annotator"] for j in json.loads(out)] == ["model:b"]


def test_a_judge_that_fails_or_is_not_trusted_is_exit_2_saying_why(demo, fake, tmp_path, capsys):
    path = tmp_path / "judge.py"
    path.write_text("import sys\nfor line in sys.stdin:\n    print(7)\n", encoding="utf-8")
    code, _, err = run(capsys, "judge", demo, "--command", f"{sys.executable} {path}", "--quiet")
    assert code == 2 and "output line 1: expected a grade" in err
    code, _, err = run(capsys, "judge", demo, "--command", command(fake), "--annotator", "model:f")
    assert code == 0, err
    with Workspace.open(demo) as ws:
        ws.conn.execute(
            "UPDATE model_judges SET model = ? WHERE annotator = 'model:f'",
            (command(fake) + " --evil",),
        )
        ws.conn.commit()
    code, _, err = run(capsys, "judge", demo, "--annotator", "model:f")
    assert code == 2 and "only once you have trusted them" in err and "--evil" in err


def test_agreement_shows_the_model_judges_rows(demo, fake, capsys):
    code, _, err = run(capsys, "judge", demo, "--command", command(fake), "--annotator", "model:f")
    assert code == 0, err
    code, text, err = run(capsys, "agreement", demo)
    assert code == 0, err
    assert "model judges against each person and the resolved gold" in text
    assert "resolved gold" in text


def test_people_cannot_take_a_model_name_nor_a_model_a_persons(demo, fake, capsys):
    code, _, err = run(capsys, "label", demo, "q01", "recon-00", "1", "--annotator", "model:x")
    assert code == 2 and "model judges'" in err
    code, _, err = run(capsys, "judge", demo, "--command", command(fake), "--annotator", "mina")
    assert code == 2 and "model:NAME" in err
    with Workspace.open(demo) as ws:
        ws.write_labels([Label("q01", "recon-00", "model:old", 1)])  # e.g. an old import
    code, _, err = run(
        capsys, "judge", demo, "--command", command(fake), "--annotator", "model:old"
    )
    assert code == 2 and "labels as a person" in err


def test_queue_cli_shows_the_model_queues_and_leaves_adjudicated_questions_out(demo, fake, capsys):
    code, _, err = run(capsys, "judge", demo, "--command", command(fake), "--annotator", "model:f")
    assert code == 0, err
    code, out, err = run(capsys, "queue", demo, "--model", "model:f", "--json")
    assert code == 0, err
    data = json.loads(out)
    with Workspace.open(demo) as ws:
        golds = workspace_golds(ws)
        model, people = ws.model_labels("model:f"), ws.labels()
    want = disagreement_queue(golds, model, people)
    assert [i["question"] for i in data["disagree"]] == [i.question_id for i in want]
    assert data["disagree"] and data["holes"] and data["model"] == "model:f"
    assert not {i["question"] for i in data["disagree"] + data["holes"]} & {
        q for q, g in golds.items() if g.adjudicated
    }
    theirs = {(lab.question_id, lab.doc_id): lab.grade for lab in people}
    for item in data["disagree"]:
        for d in item["docs"]:
            assert (item["question"], d) in theirs
    for item in data["holes"]:
        for d in item["docs"]:
            assert (item["question"], d) not in theirs
            assert hashed(item["question"], d) >= 1
    code, _, err = run(capsys, "queue", demo, "--model", "model:nobody")
    assert code == 2 and "unknown model judge" in err and "model:f" in err


@pytest.fixture
def judged(tiny_ws: Path, tmp_path: Path) -> Path:
    """tests/engine/judges/test_judge_report.py's judged tiny workspace."""
    return judged_workspace(tiny_ws, tmp_path)


def test_the_card_in_words(judged, capsys):
    code, out, err = run(capsys, "judge", judged, "--report", "--repeats", "2", "--samples", "50")
    assert code == 0, err
    assert "report card of model:fake (command," in out
    assert "agreement with people on relevant or not: kappa" in out
    assert "against its grades as stored" in out and "Base rates: people call 50%" in out
    assert "asked twice: the same grade for 100% of" in out and "reverse order" in out
    assert "ranked by ndcg@10 on 3 scored questions" in out and "people's judgments kept" in out
    assert "warning: kappa rests on 6 grades" in err
