"""Model judges with a deterministic fake judge: storage, removal, never gold, queues, agreement.

The fake judge is a real command judge (a script run through the protocol): each pair's
grade is a hash of the question and document ids, or read from a map file the test
writes. The model kinds with real models are in test_model_judge_models.py; what
``goldpan judge``, ``queue --model`` and ``agreement`` print is in
tests/cli/test_judge_command.py.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.check import check_workspace
from engine.counters import candidate_ids, workspace_counters
from engine.demo import build_demo
from engine.errors import Refused, UnknownName
from engine.gold import Status, workspace_golds
from engine.judges.run import JudgeReport, make_judge, remove_judge, run_judge, stored_judge
from engine.judging.queue import disagreement_queue, judged_docs, judging_queue, model_holes_queue
from engine.retrieve.base import RetrieverError
from engine.scoring import score_workspace
from engine.session.labeling import LabelingSession
from engine.team.agreement import agreement_report, cohen_kappa
from engine.team.assign import Assigner
from engine.trust import TrustStore
from engine.types import Label, ModelLabel
from engine.workspace import Workspace
from tests.conftest import copy_workspace

FAKE = """
import hashlib, json, sys
grades = json.load(open(sys.argv[1], encoding="utf-8")) if len(sys.argv) > 1 else None
for line in sys.stdin:
    r = json.loads(line)
    key = r["question_id"] + " " + r["doc_id"]
    if grades is None:
        g = int(hashlib.sha256(key.encode()).hexdigest(), 16) % 4
    else:
        g = grades.get(key, 0)
    print(json.dumps({"grade": g}) if g % 2 else g, flush=True)
"""
"""Reads the protocol's JSON lines; answers in both accepted forms (odd grades as JSON)."""


def hashed(question_id: str, doc_id: str) -> int:
    """The fake judge's grade without a map."""
    return int(hashlib.sha256(f"{question_id} {doc_id}".encode()).hexdigest(), 16) % 4


def write_fake(folder: Path) -> Path:
    """The fake judge's script in ``folder``."""
    path = folder / "fake_judge.py"
    path.write_text(FAKE, encoding="utf-8")
    return path


def word_level_demo(path: Path) -> Path:
    """The demo, pooled by the word-level retrievers (Kiwi's retriever removed: not needed)."""
    build_demo(path, slow=False, models=False).close()
    with Workspace.open(path) as ws:
        ws.remove_retriever("bm25-kiwi")
    return path


@pytest.fixture(scope="module")
def fake(tmp_path_factory) -> Path:
    return write_fake(tmp_path_factory.mktemp("judge"))


def command(fake: Path, *extra: object) -> str:
    return " ".join([sys.executable, str(fake), *(str(x) for x in extra)])


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory) -> Path:
    """The demo, pooled by the word-level retrievers (Kiwi's retriever removed: not needed)."""
    return word_level_demo(tmp_path_factory.mktemp("demo") / "demo.db")


@pytest.fixture
def demo(demo_file, tmp_path) -> Path:
    """A fresh copy of the demo for one test."""
    return copy_workspace(demo_file, tmp_path / "demo.db")


def judge_once(path: Path, judge_command: str, annotator: str, **kwargs: Any) -> JudgeReport:
    """Run a command judge typed by the user now, as ``goldpan judge --command`` does."""
    with Workspace.open(path) as ws:
        return run_judge(ws, make_judge("command", judge_command, annotator), **kwargs)


def scores_json(path: Path) -> dict[str, Any]:
    """Every retriever's scores as plain values (what ``goldpan score --json`` reports)."""
    with Workspace.open(path, readonly=True) as ws:
        return json.loads(json.dumps(score_workspace(ws).to_json()))


def people_view(ws: Workspace) -> dict[str, object]:
    """Everything computed from people's judgments that a model judge must not change."""
    golds = workspace_golds(ws)
    rankings = ws.all_runs()
    labels = ws.labels()
    judged = judged_docs([(lab.question_id, lab.doc_id) for lab in labels])
    seen: list[object] = []

    def pick(state):
        seen.append((state.judges, state.adjudicated))
        return None

    ws.take_lease("probe", "someone", 30, pick)
    report = agreement_report(labels, ws.verdicts())
    del report["models"]
    return {
        "golds": golds,
        "counters": workspace_counters(ws),
        "annotators": ws.annotators(),
        "labels": labels,
        "recheck": ws.recheck_counts(),
        "queue": judging_queue(golds, rankings, judged),
        "handout": Assigner(ws, "someone").queue_rank(rankings),
        "leases": seen,
        "agreement": report,
    }


def test_model_grades_are_their_own_annotator_and_change_nothing_people_see(demo, fake):
    before_score = scores_json(demo)
    with Workspace.open(demo) as ws:
        before = people_view(ws)
        runs = ws.all_runs()
        graded: dict[str, set[str]] = {}
        for lab in ws.labels():
            graded.setdefault(lab.question_id, set()).add(lab.doc_id)
        want = {q: candidate_ids(q, runs, graded.get(q, ())) for q in ws.question_ids()}
    report = judge_once(demo, command(fake), "model:fake")
    assert report.judge.annotator == "model:fake" and report.judge.kind == "command"
    with Workspace.open(demo) as ws:
        grades = ws.model_labels()
        # every candidate of every question (the Label screen's list), graded once
        assert {(m.question_id, m.doc_id) for m in grades} == {
            (q, d) for q, docs in want.items() for d in docs
        }
        assert report.grades == len(grades) == sum(len(d) for d in want.values())
        assert all(m.annotator == "model:fake" and m.score is None for m in grades)
        assert all(m.grade == hashed(m.question_id, m.doc_id) for m in grades)
        assert list(report.counts) == [sum(1 for m in grades if m.grade == g) for g in range(4)]
        judge = ws.model_judge("model:fake")
        assert judge is not None and judge.kind == "command" and judge.model == command(fake)
        # nothing computed from people's judgments moved: gold, counts, queue, hand-out,
        # leases, agreement among people, the annotators
        assert people_view(ws) == before
        assert "model:fake" not in ws.annotators()
        events = ws.events(limit=1)
        assert events[0]["kind"] == "model_judged" and events[0]["question_id"] is None
    assert _without_timing(scores_json(demo)) == _without_timing(before_score)


def _without_timing(board: dict) -> dict:
    for row in board["retrievers"].values():
        for key in [
            k for k in row if k.startswith("ms_") or k in ("questions_per_s", "timed_alone")
        ]:
            del row[key]
    return board


def test_a_model_never_makes_a_question_judged_disputed_or_gold(demo, fake, tmp_path):
    """One person on a question, the model graded the other way: still that person's gold."""
    with Workspace.open(demo) as ws:
        golds = workspace_golds(ws)
        qid = next(
            q for q, g in golds.items() if g.status is Status.LABELED and len(g.annotators) == 2
        )
        gold = dict(golds[qid].gold)
        assert gold
        # the model calls every gold document 0 and every other candidate 3
        runs = ws.all_runs()
        docs = candidate_ids(qid, runs, {lab.doc_id for lab in ws.labels_for(qid)})
    mapping = {f"{qid} {d}": 0 if d in gold else 3 for d in docs}
    grades = tmp_path / "map.json"
    grades.write_text(json.dumps(mapping), encoding="utf-8")
    with Workspace.open(demo) as ws:
        session = LabelingSession(ws, "mina")
        judged_before = session.judged_questions()
        j = make_judge("command", command(fake, grades), "model:contrary")
        run_judge(ws, j, questions=[qid])
        assert {m.question_id for m in ws.model_labels()} == {qid}
        session.reload()
        assert session.gold(qid).status is Status.LABELED
        assert dict(session.gold(qid).gold) == gold
        assert session.judged_questions() == judged_before
        assert workspace_golds(ws) == golds
        # a person adopting the model's side in Adjudicate: only then its grades are gold
        adopted = {m.doc_id: m.grade for m in ws.model_labels_for(qid)}
        LabelingSession(ws, "lee").adjudicate(qid, adopted, note="took model:contrary's side")
        after = workspace_golds(ws)[qid]
        assert after.adjudicated and dict(after.gold) == {d: g for d, g in adopted.items() if g}


def test_judging_again_replaces_only_the_questions_judged(demo, fake, tmp_path):
    first = tmp_path / "first.json"
    with Workspace.open(demo) as ws:
        q1, q2 = ws.question_ids()[:2]
    judge_once(demo, command(fake), "model:fake")
    with Workspace.open(demo) as ws:
        before = {(m.question_id, m.doc_id): m.grade for m in ws.model_labels()}
    first.write_text(json.dumps({}), encoding="utf-8")  # every pair 0
    judge_once(demo, command(fake, first), "model:fake", questions=[q1, q2])
    with Workspace.open(demo) as ws:
        after = {(m.question_id, m.doc_id): m.grade for m in ws.model_labels()}
    assert after.keys() == before.keys()
    for (q, d), g in after.items():
        assert g == (0 if q in (q1, q2) else before[(q, d)]), (q, d)


def test_remove_takes_the_judge_and_every_grade_it_gave(demo, fake):
    for name in ("model:a", "model:b"):
        judge_once(demo, command(fake), name)
    with Workspace.open(demo) as ws:
        n_a = len(ws.model_labels("model:a"))
        b = ws.model_labels("model:b")
        assert remove_judge(ws, "model:a") == n_a
    with Workspace.open(demo) as ws:
        assert [j.annotator for j in ws.model_judges()] == ["model:b"]
        assert ws.model_labels("model:a") == [] and ws.model_labels() == b
        assert ws.conn.execute(
            "SELECT count(*) FROM model_labels WHERE annotator = 'model:a'"
        ).fetchone() == (0,)
        assert ws.events(limit=1)[0]["kind"] == "model_removed"
        with pytest.raises(UnknownName, match="unknown model judge 'model:a'.*model:b"):
            remove_judge(ws, "model:a")


def test_a_new_question_text_sets_the_model_grades_aside_without_a_recheck(demo, fake):
    with Workspace.open(demo) as ws:
        qid = ws.question_ids()[0]
        run_judge(ws, make_judge("command", command(fake), "model:fake"), questions=[qid])
        n = len(ws.model_labels_for(qid))
        status = workspace_golds(ws)[qid].status
        session = LabelingSession(ws, "mina")
        session.edit_question(qid, "a different question entirely", None)
        assert n and ws.model_labels_for(qid) == []  # made for the old text: not shown
        assert ws.conn.execute(
            "SELECT count(*) FROM model_labels WHERE question_id = ? AND made_for IS NOT NULL",
            (qid,),
        ).fetchone() == (n,)
        people = sum(
            ws.conn.execute(
                f"SELECT count(*) FROM {t} WHERE question_id = ? AND made_for IS NOT NULL",
                (qid,),
            ).fetchone()[0]
            for t in ("labels", "verdicts", "adjudications")
        )
        assert ws.recheck_counts().get(qid, 0) == people  # people's judgments only
        session.undo()  # the text is back: so are the model's grades
        assert len(ws.model_labels_for(qid)) == n
        assert workspace_golds(ws)[qid].status is status


def test_a_read_only_workspace_is_refused_before_the_judge_runs(demo, fake, tmp_path):
    from engine.errors import Refused

    ran = tmp_path / "ran"
    script = tmp_path / "judge.py"
    script.write_text(f"open({str(ran)!r}, 'w').close()\n", encoding="utf-8")
    with Workspace.open(demo, readonly=True) as ws:
        judge = make_judge("command", f"{sys.executable} {script}", "model:f")
        with pytest.raises(Refused, match="read-only"):
            run_judge(ws, judge)
    assert not ran.exists()


# -- the command protocol and its trust ----------------------------------------------------


def again_from_the_workspace(path: Path, annotator: str) -> JudgeReport:
    """Run a stored judge again, as ``goldpan judge --annotator NAME`` does: not typed now."""
    with Workspace.open(path) as ws:
        return run_judge(ws, stored_judge(ws, annotator), typed=False)


def test_a_typed_command_is_trusted_and_a_stored_one_only_once_trusted(demo, fake):
    judge_once(demo, command(fake), "model:f")
    with Workspace.open(demo) as ws:
        spec_ok = TrustStore().for_workspace(ws)
        assert [e.command for e in spec_ok] == [command(fake)]
    # run again from the workspace: trusted (it was typed here)
    again_from_the_workspace(demo, "model:f")
    # a workspace that says another command: never run before this user trusted it
    with Workspace.open(demo) as ws:
        ws.conn.execute(
            "UPDATE model_judges SET model = ? WHERE annotator = 'model:f'",
            (command(fake) + " --evil",),
        )
        ws.conn.commit()
        before = ws.model_labels()
    with pytest.raises(Refused, match="only once you have trusted them") as refused:
        again_from_the_workspace(demo, "model:f")
    assert "--evil" in str(refused.value)
    with Workspace.open(demo) as ws:
        assert ws.model_labels() == before
    # the trust record is this user's: revoking it stops even the typed-once command
    with Workspace.open(demo) as ws:
        ws.conn.execute(
            "UPDATE model_judges SET model = ? WHERE annotator = 'model:f'", (command(fake),)
        )
        ws.conn.commit()
        TrustStore().revoke(ws)
    with pytest.raises(Refused, match="trusted"):
        again_from_the_workspace(demo, "model:f")


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (
            "import sys\nfor line in sys.stdin:\n    print('relevant')\n",
            "output line 1: expected a grade",
        ),
        ("import sys\nfor line in sys.stdin:\n    print(7)\n", "output line 1: expected a grade"),
        ("import sys\nsys.stdin.read()\nprint(1)\n", "answered 1 of the"),
        ("import sys\nfor line in sys.stdin:\n    print(1)\n    print(1)\n", "more lines than"),
        (
            "import sys\nsys.stdin.read()\nsys.stderr.write('no key\\n')\nsys.exit(3)\n",
            "status 3:\nno key",
        ),
    ],
)
def test_bad_command_output_is_an_error_naming_the_line_and_nothing_is_written(
    demo, tmp_path, script, expected
):
    path = tmp_path / "judge.py"
    path.write_text(script, encoding="utf-8")
    with pytest.raises(RetrieverError) as failed:
        judge_once(demo, f"{sys.executable} {path}", None)
    assert expected in str(failed.value)
    with Workspace.open(demo) as ws:
        assert ws.model_judges() == [] and ws.model_labels() == []


def test_a_command_that_takes_too_long_is_stopped(demo, tmp_path):
    path = tmp_path / "slow.py"
    path.write_text("import time\ntime.sleep(60)\n", encoding="utf-8")
    with pytest.raises(RetrieverError, match="no answer within 1 s"):
        judge_once(demo, f"{sys.executable} {path}", None, timeout=1.0)


# -- the two model queues -------------------------------------------------------------------


def test_disagreement_and_holes_queues_by_hand():
    from engine.gold import resolve

    people = [
        Label("q1", "a", "mina", 2),
        Label("q1", "b", "mina", 0),
        Label("q1", "c", "jun", 1),
        Label("q2", "a", "mina", 0),
        Label("q3", "a", "mina", 1),
    ]
    golds = resolve(["q1", "q2", "q3", "q4"], people, [])
    m = "model:x"
    model = [
        ModelLabel("q1", "a", m, 0),  # differs from mina's 2 (distance 2)
        ModelLabel("q1", "b", m, 3),  # differs from mina's 0 (distance 3)
        ModelLabel("q1", "c", m, 1),  # agrees
        ModelLabel("q1", "z", m, 2),  # nobody judged it: a hole
        ModelLabel("q2", "a", m, 1),  # differs (distance 1)
        ModelLabel("q2", "y", m, 3),  # a hole
        ModelLabel("q2", "x", m, 0),  # not relevant: no hole
        ModelLabel("q3", "a", m, 3),  # both relevant: no disagreement
        ModelLabel("q4", "w", m, 1),  # a hole on an unlabeled question
        ModelLabel("q4", "v", m, 1),
    ]
    disagree = disagreement_queue(golds, model, people)
    assert [(i.question_id, i.docs, i.distance) for i in disagree] == [
        ("q1", ("a", "b"), 5),
        ("q2", ("a",), 1),
    ]
    holes = model_holes_queue(golds, model, people)
    assert [(i.question_id, i.docs, i.distance) for i in holes] == [
        ("q4", ("v", "w"), 2),
        ("q2", ("y",), 3),
        ("q1", ("z",), 2),
    ]


# -- agreement --------------------------------------------------------------------------------


def test_model_agreement_equals_sklearn_and_krippendorff(demo, fake):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    krippendorff = pytest.importorskip("krippendorff")
    judge_once(demo, command(fake), "model:f")
    with Workspace.open(demo) as ws:
        report = json.loads(
            json.dumps(
                agreement_report(ws.labels(), ws.verdicts(), ws.model_labels(), workspace_golds(ws))
            )
        )
        people = ws.labels()
        model = {(m.question_id, m.doc_id): m.grade for m in ws.model_labels()}
        golds = workspace_golds(ws)
        # the people's own figures are as they were without any model
        alone = agreement_report(people, ws.verdicts())
    for key in ("pairs", "alpha_ordinal", "units", "verdicts"):
        assert report[key] == json.loads(json.dumps(alone[key])), key
    rows = {(m["against"], m["gold"]): m for m in report["models"]}
    assert set(rows) == {("jun", False), ("mina", False), ("gold", True)}
    references: dict[tuple[str, bool], dict[tuple[str, str], int]] = {}
    for lab in people:
        references.setdefault((lab.annotator, False), {})[(lab.question_id, lab.doc_id)] = lab.grade
    # the resolved gold, built here the plain way: resolved questions' judged documents
    gold_ref: dict[tuple[str, str], int] = {}
    for lab in people:
        g = golds[lab.question_id]
        if g.status in (Status.LABELED, Status.NO_ANSWER):
            gold_ref[(lab.question_id, lab.doc_id)] = g.gold.get(lab.doc_id, 0)
    references[("gold", True)] = gold_ref
    for key, theirs in references.items():
        shared = sorted(model.keys() & theirs.keys())
        a = [model[k] for k in shared]
        b = [theirs[k] for k in shared]
        row = rows[key]
        assert row["n"] == len(shared) > 30
        ref = sklearn_metrics.cohen_kappa_score([x >= 1 for x in a], [y >= 1 for y in b])
        assert row["kappa"] == pytest.approx(ref, abs=1e-12)
        assert row["kappa"] == pytest.approx(cohen_kappa([x >= 1 for x in a], [y >= 1 for y in b]))
        alpha = krippendorff.alpha(
            reliability_data=np.array([a, b], dtype=float), level_of_measurement="ordinal"
        )
        assert row["alpha_ordinal"] == pytest.approx(float(alpha), abs=1e-9)


# -- the workspace ----------------------------------------------------------------------------


def test_a_schema_10_workspace_upgrades_and_keeps_every_row(tmp_path, monkeypatch):
    import engine.workspace.lifecycle as lifecycle
    from engine.workspace.migrations import MIGRATIONS
    from tests.engine.workspace.test_upgrade import dump

    path = tmp_path / "old.db"
    with monkeypatch.context() as m:
        m.setattr(lifecycle, "MIGRATIONS", MIGRATIONS[:10])
        m.setattr(lifecycle, "SCHEMA_VERSION", 10)
        build_demo(path, slow=False, models=False).close()
    before = dump(path)
    assert "model_labels" not in before
    with Workspace.open(path) as ws:
        assert ws.upgraded_from == 10 and ws.backup_path is not None
        assert ws.model_judges() == [] and ws.model_labels() == []
    after = dump(path)
    assert after.pop("model_judges") == [] and after.pop("model_labels") == []
    assert after.pop("stops") == [] and after.pop("proposals") == []  # schema 12's tables
    assert after == before


def test_check_names_a_damaged_model_row(demo, fake):
    judge_once(demo, command(fake), "model:f")
    conn = sqlite3.connect(demo)
    conn.execute("UPDATE model_judges SET params = '[1]' WHERE annotator = 'model:f'")
    conn.execute("UPDATE model_labels SET score = 'high' WHERE rowid = 1")
    conn.commit()
    conn.close()
    report = check_workspace(demo)
    assert not report.ok
    rows = report.to_json()["rows"]
    assert any("model_judges" in r and "params" in r for r in rows), rows
    assert any("model_labels" in r and "score" in r for r in rows), rows
