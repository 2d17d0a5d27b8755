"""`goldpan agreement` and `goldpan queue` on the demo workspace."""

import json

import pytest

from engine.demo import build_demo
from engine.team.agreement import agreement_report
from engine.workspace import Workspace
from tui.cli import main


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("team") / "demo.db"
    build_demo(path, models=False).close()
    return path


def run_json(capsys, *argv):
    assert main([*map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_agreement_json_is_the_engines_report(demo, capsys):
    data = run_json(capsys, "agreement", demo)
    ws = Workspace.open(demo)
    assert data == json.loads(json.dumps(agreement_report(ws.labels(), ws.verdicts())))
    (pair,) = data["pairs"]
    assert (pair["a"], pair["b"]) == ("jun", "mina")
    assert 0.5 < pair["kappa"] < 1  # they disagree on a few questions only
    assert data["units"] == pair["n"] > 0


def test_queue_json(demo, capsys):
    data = run_json(capsys, "queue", demo, "--k", "5")
    assert data["k"] == 5
    assert set(data["coverage"]) == {"bm25-word", "bm25-bigram", "bm25-word+bigram", "bm25-kiwi"}
    assert all(0 < v < 1 for v in data["coverage"].values())
    holes = [i["unjudged"] for i in data["queue"] if i["reason"] == "unjudged"]
    assert holes == sorted(holes, reverse=True) and holes[0] > 0
    # the no-answer questions mina and jun agree on are settled: not in the queue
    assert not any(i["status"] == "no_answer" for i in data["queue"])
