"""``goldpan sweep --fusion``: cells equal real fused retrievers, and the held-out figure.

On Cranfield (../shared/data; skipped when absent) the held-out figure of BM25 word +
BM25 over titles is the one docs/retrievers.md quotes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.demo import build_demo
from tests.conftest import ROOT, shared_data
from tests.conftest import run_cli as run
from tests.cranfield import cranfield_beir


@pytest.fixture(scope="module")
def demo_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sweep") / "demo.db"
    build_demo(path, pool=True, models=False).close()
    return path


@pytest.fixture
def demo(demo_master: Path, tmp_path: Path) -> Path:
    path = tmp_path / "demo.db"
    path.write_bytes(demo_master.read_bytes())
    return path


def sweep_json(capsys, *argv: object) -> dict:
    code, out, err = run(capsys, "sweep", *argv, "--json", "--samples", "500")
    assert code == 0, err
    return json.loads(out)


def mrr(capsys, ws: Path, name: str) -> float:
    code, out, err = run(capsys, "score", ws, "--retriever", name, "--json")
    assert code == 0, err
    return json.loads(out)["retrievers"][name]["mrr"]


def test_each_cell_equals_the_fused_retriever_it_stands_for(demo, capsys):
    pair = "bm25-word,bm25-kiwi"
    got = sweep_json(capsys, demo, "--fusion", pair, "--weights", "0.25,0.75", "--norm", "zmuv")
    rrf = sweep_json(capsys, demo, "--fusion", pair, "--weights", "0.25", "--k", "10,60")
    assert [s["weights"] for s in got["settings"]] == [[0.25, 0.75], [0.75, 0.25]]
    assert [s["k"] for s in rrf["settings"]] == [10, 60]
    add = ["retriever", "add", demo]
    fuse = ["--kind", "fuse", "--of", pair, "--norm", "zmuv"]
    assert run(capsys, *add, "f1", *fuse, "--weights", "0.75,0.25")[0] == 0
    assert run(capsys, *add, "r1", "--kind", "rrf", "--of", pair, "--weights", "0.25,0.75")[0] == 0
    assert got["settings"][1]["value"] == pytest.approx(mrr(capsys, demo, "f1"), abs=1e-12)
    assert rrf["settings"][1]["value"] == pytest.approx(mrr(capsys, demo, "r1"), abs=1e-12)
    # the interval is against the better single retriever, whose value it names
    assert got["single_value"] == pytest.approx(mrr(capsys, demo, got["single"]), abs=1e-12)
    # fused retrievers are compared like any other
    code, out, err = run(capsys, "compare", demo, "f1", "bm25-word", "--json", "--samples", "200")
    assert code == 0, err
    assert json.loads(out)["mean_a"] == pytest.approx(got["settings"][1]["value"], abs=1e-12)


def test_held_out_is_recomputed_from_the_fold_picks_and_warns_in_words(demo, capsys):
    got = sweep_json(capsys, demo, "--fusion", "bm25-word,bm25-kiwi", "--folds", "3")
    assert got["folds"] == 3 and len(got["picks"]) == 3
    assert got["tuned"] == max(s["value"] for s in got["settings"])
    # 35 questions: the peak is not really above its neighbours, and the sweep says so
    assert any("not really better than its neighbour" in w for w in got["warnings"])
    assert all(not nb["verdict"]["real"] for nb in got["neighbours"])
    assert got["held_out_vs_single"]["n"] == got["n"] == 35
    assert got["established"] is True and got["needs"]["scored"]["least"] == 15
    # every setting against the single retriever, and the held-out figure, by the verdict
    assert {s["verdict"]["status"] for s in got["settings"]} <= {
        "real",
        "not_shown",
        "tests_disagree",
        "too_few_discordant",
    }
    held = got["held_out_vs_single"]["verdict"]
    if not (held["real"] and held["higher"] == "a"):
        assert any(
            w.startswith("on held-out questions the tuned fusion is not really")
            for w in got["warnings"]
        )
    again = sweep_json(capsys, demo, "--fusion", "bm25-word,bm25-kiwi", "--folds", "3")
    assert again == got  # seeded: the same folds and resamples


def test_no_tuned_setting_is_named_on_fewer_than_5_questions_a_fold(demo, capsys):
    # 35 scored questions in 8 folds: 4 or 5 a fold; the evidence rule asks for 5 x 8 = 40
    got = sweep_json(capsys, demo, "--fusion", "bm25-word,bm25-kiwi", "--folds", "8")
    assert got["established"] is False and got["best"] is None and got["tuned"] is None
    assert got["needs"] == {"scored": {"have": 35, "least": 40, "more": 5}}
    assert got["neighbours"] == []
    assert got["warnings"][0] == (
        "no tuned setting is named: naming a tuned setting (5 questions in each of 8 folds) "
        "needs at least 40 scored questions; found 35 scored questions: 5 more scored "
        "questions needed"
    )
    assert len(got["picks"]) == 8  # the held-out figure is still measured
    code, out, err = run(capsys, "sweep", demo, "--fusion", "bm25-word,bm25-kiwi", "--folds", "8")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "no tuned setting (too few questions); held out (8 folds" in flat
    assert " * " not in flat


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--retriever", "bm25-word", "--weights", "0.5"], "--weights goes with --fusion"),
        (["--fusion", "bm25-word,bm25-kiwi", "--k1", "1.2"], "takes no --retriever, --k1"),
        (["--fusion", "bm25-word,bm25-kiwi", "--k", "60", "--norm", "max"], "--norm goes"),
        (["--fusion", "bm25-word,bm25-kiwi", "--weights", "1.5"], "--weights"),
        (["--fusion", "bm25-word"], "name two retrievers"),
        (["--fusion", "bm25-word,nope"], "nope"),
        ([], "--retriever NAME"),
    ],
)
def test_bad_fusion_sweeps_exit_2(demo, capsys, argv, message):
    code, _, err = run(capsys, "sweep", demo, *argv)
    assert code == 2
    assert message in err


def test_cranfield_held_out_figure_is_the_readmes(tmp_path, capsys):
    beir = cranfield_beir(shared_data("cranfield"), tmp_path / "cran")
    ws = tmp_path / "cran.db"
    assert run(capsys, "new", ws)[0] == 0
    assert run(capsys, "import", "beir", ws, beir)[0] == 0
    title = ["--kind", "bm25", "--tokenizer", "word", "--fields", "title"]
    assert run(capsys, "retriever", "add", ws, "bm25-title", *title)[0] == 0
    code, out, err = run(capsys, "sweep", ws, "--fusion", "bm25-word,bm25-title", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["n"] == 225
    c = got["held_out_vs_single"]
    lo, hi = c["ci95"]
    line = (
        f"held out {got['held_out']:.3f} vs {got['held_out_single']:.3f} "
        f"({c['diff']:+.3f}, 95% CI {lo:+.3f} to {hi:+.3f})"
    )
    page = " ".join((ROOT / "docs" / "retrievers.md").read_text(encoding="utf-8").split())
    assert line in page, line
    assert f"tuned {got['tuned']:.3f}" in page
