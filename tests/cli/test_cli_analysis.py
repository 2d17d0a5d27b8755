"""The analysis commands: ``compare``, ``failures``, ``noanswer``, ``sweep``, ``overlap``."""

import json

import pytest

from engine.types import Label, Question, RetrieverSpec, Verdict
from engine.workspace import Workspace
from tests.conftest import run_cli as run
from tests.conftest import snapshot, write_jsonl
from tests.engine.analysis.test_compare import JSON_KEYS


@pytest.fixture
def split_ws(tiny_ws):
    """tiny_ws plus two questions that only bigrams answer (gold d1 for both).

    q5 "영상 보정": word tokens 영상, 보정 match only d2 (d1 has 영상으로, 보정은), so
    bm25-word misses d1; bigrams 영상, 보정 find d1 first. q6 "계수 구하기": no word of it
    is in any text; the bigrams 계수, 구하 are in d1 only.
    """
    ws = Workspace.open(tiny_ws)
    ws.write_questions([Question("q5", "영상 보정"), Question("q6", "계수 구하기")])
    ws.write_labels([Label("q5", "d1", "mina", 1), Label("q6", "d1", "mina", 1)])
    ws.close()
    return tiny_ws


# -- compare --------------------------------------------------------------------------------


def test_compare_json_by_hand(split_ws, capsys):
    code, out, _ = run(capsys, "compare", split_ws, "bm25-bigram", "bm25-word", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == JSON_KEYS | {"judged@10", "warnings"}  # the CLI adds the holes
    # reciprocal ranks: bigram 1 everywhere; word 1, 1, 1 on q1-q3 and 0 on q5, q6
    assert (data["a"], data["b"], data["metric"], data["n"]) == (
        "bm25-bigram",
        "bm25-word",
        "mrr",
        5,
    )
    assert (data["wins"], data["ties"], data["losses"]) == (2, 3, 0)
    assert data["mean_a"] == 1.0 and data["mean_b"] == pytest.approx(0.6, abs=1e-15)
    assert data["diff"] == pytest.approx(0.4, abs=1e-15)
    # a resample's mean difference is k/5, k ~ Binomial(5, 2/5): P(k = 0) = 0.078 > 2.5%,
    # P(k <= 4) = 0.990 > 97.5% > P(k <= 3) = 0.913: the interval is [0, 0.8]
    assert data["ci95"] == pytest.approx([0.0, 0.8], abs=1e-15)
    # sign flips of [0, 0, 0, 1, 1]: |mean| = 0.4 when both ones keep the same sign: 1/2
    assert data["p_value"] == pytest.approx(0.5, abs=5 * (0.25 / 10_000) ** 0.5)


def test_compare_table(split_ws, capsys):
    code, out, err = run(capsys, "compare", split_ws, "bm25-bigram", "bm25-word", "--samples", 500)
    assert code == 0
    assert "A bm25-bigram  vs  B bm25-word" in out
    assert "W/T/L" in out and "2/3/0" in out and "verdict" in out
    assert "+0.400" in out and "[+0.000, +0.800]" in out and "too few (2)" in out
    flat = " ".join(out.split())
    assert "mrr: 2 questions differ: no test on 2 can reach p < 0.05 (the least p is 0.5)" in flat
    assert "500 paired bootstrap resamples and sign flips (seed 0)" in flat
    assert "excludes 0" not in flat.replace("the 95% interval excludes 0)", "")
    assert "pooled (questions run)" in err  # pooled on the way; --json stays quiet
    code, out, err = run(capsys, "compare", split_ws, "bm25-bigram", "bm25-word", "--json")
    assert code == 0 and err == ""


def test_compare_tag_and_metric(split_ws, capsys):
    code, out, _ = run(
        capsys, "compare", split_ws, "bm25-bigram", "bm25-word", "--json", "--tag", "easy"
    )
    assert code == 0 and json.loads(out)["n"] == 1  # q1 only
    code, out, _ = run(
        capsys, "compare", split_ws, "bm25-bigram", "bm25-word", "--json", "--metric", "HIT@1"
    )
    data = json.loads(out)
    assert code == 0 and data["metric"] == "hit@1" and data["wins"] == 2


def test_compare_calls_a_difference_real_when_both_tests_agree(tiny_ws, capsys):
    ws = Workspace.open(tiny_ws)
    # twelve questions bm25-word misses and bm25-bigram answers (gold d1 each time)
    ws.write_questions([Question(f"x{i:02d}", "계수 구하기") for i in range(12)])
    ws.write_labels([Label(f"x{i:02d}", "d1", "mina", 1) for i in range(12)])
    ws.close()
    code, out, _ = run(capsys, "compare", tiny_ws, "bm25-bigram", "bm25-word")
    flat = " ".join(out.split())
    assert code == 0 and "mrr: real: bm25-bigram is higher (p = " in flat
    assert "12 questions differ)" in flat


# -- failures -------------------------------------------------------------------------------


def _relabel(path):
    ws = Workspace.open(path)
    ws.write_labels(
        [Label("q1", "d1", "mina", 0), Label("q1", "d2", "mina", 1), Label("q4", "d4", "mina", 1)]
    )
    ws.close()


def test_failures_json_and_table(tiny_ws, capsys):
    _relabel(tiny_ws)  # q1: gold d2, ranked 2nd after d1; q4: gold d4, never retrieved
    code, out, _ = run(capsys, "failures", tiny_ws, "--retriever", "bm25-bigram", "--json")
    assert code == 0
    assert json.loads(out) == [
        {
            "question": "q1",
            "gold": ["d2"],
            "gold_rank": 2,
            "top_doc": "d1",
            "relation": "neighbour",
            "relation_detail": "neighbour in series 'ac'",
            "series": "ac",
            "gold_doc": "d2",
            "gold_title": "감쇠 보정 금속",
            "top_title": "감쇠 보정 원리",
        },
        {
            "question": "q4",
            "gold": ["d4"],
            "gold_rank": 0,
            "top_doc": None,
            "relation": "other",
            "relation_detail": "other",
            "series": None,
            "gold_doc": "d4",
            "gold_title": "notice",
            "top_title": "",
        },
    ]
    code, out, _ = run(capsys, "failures", tiny_ws, "--retriever", "bm25-bigram")
    assert code == 0
    assert "gold not at rank 1 (2)" in out
    assert "d1 감쇠 보정 원리" in out and "d2 감쇠 보정 금속" in out  # both titles
    assert "neighbour in series 'ac'" in out


@pytest.mark.parametrize(
    "argv",
    [
        ("compare", "{ws}", "bm25-word", "bm25-bigram"),
        ("compare", "{ws}", "bm25-word", "bm25-bigram", "--json"),
        ("sweep", "{ws}", "--retriever", "bm25-word"),
        ("sweep", "{ws}", "--fusion", "bm25-word,bm25-bigram", "--folds", "2"),
        ("failures", "{ws}", "--retriever", "bm25-word"),
        ("failures", "{ws}", "--retriever", "bm25-word", "--json"),
    ],
)
def test_a_report_over_no_scored_question_is_refused(tiny_ws, capsys, argv):
    # q4, the only question tagged no-answer, has no label: compare printed means of 0 and
    # "the interval includes 0", sweep a grid of 0.000 with its own cell starred as best,
    # failures "(0)": each about an empty set of questions, with exit 0
    args = [a.format(ws=tiny_ws) for a in argv]
    code, out, err = run(capsys, *args, "--tag", "no-answer")
    assert code == 2 and out == ""
    assert f"{argv[0]}: no question with tag 'no-answer' is scored (1 unlabeled)" in err
    assert run(capsys, *args)[0] == 0  # the scored questions


def test_failures_none(tiny_ws, capsys):
    code, out, _ = run(capsys, "failures", tiny_ws, "--retriever", "bm25-word", "--json")
    assert code == 0 and json.loads(out) == []


# -- noanswer -------------------------------------------------------------------------------


def test_noanswer_json_names_no_threshold_from_one_no_answer_question(tiny_ws, capsys):
    ws = Workspace.open(tiny_ws)
    ws.write_verdicts([Verdict("q4", "mina", "no_answer")])
    ws.close()
    code, out, _ = run(capsys, "noanswer", tiny_ws, "--retriever", "bm25-word", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {
        "retriever",
        "answerable",
        "no_answer",
        "answerable_top1",
        "no_answer_top1",
        "established",
        "needs",
        "thresholds",
        "best",
        "usable",
        "warning",
    }
    ws = Workspace.open(tiny_ws, readonly=True)
    runs = ws.runs("bm25-word")
    ws.close()
    top1 = sorted(runs[q].scores[0] for q in ("q1", "q2", "q3"))
    assert (data["retriever"], data["answerable"], data["no_answer"]) == ("bm25-word", 3, 1)
    assert data["answerable_top1"] == top1
    assert data["no_answer_top1"] == [0.0]  # q4 retrieves nothing
    # the scores separate perfectly, and 3 + 1 questions establish no threshold
    assert data["established"] is False
    assert data["needs"] == {
        "no_answer": {"have": 1, "least": 5, "more": 4},
        "answerable": {"have": 3, "least": 5, "more": 2},
    }
    assert data["thresholds"] == [] and data["best"] is None and data["usable"] is False
    assert data["warning"].endswith(
        "4 more no-answer questions and 2 more answerable questions needed"
    )


def test_noanswer_table_and_without_no_answer_questions(tiny_ws, capsys):
    code, out, _ = run(capsys, "noanswer", tiny_ws, "--retriever", "bm25-word")
    flat = " ".join(out.split())
    assert code == 0
    assert "3 answerable, 0 no-answer" in flat
    assert "found 0 no-answer questions and 3 answerable questions" in flat
    assert "best threshold" not in flat


# -- sweep ----------------------------------------------------------------------------------


def test_sweep_json(tiny_ws, capsys):
    _relabel(tiny_ws)
    code, out, _ = run(
        capsys,
        "sweep",
        tiny_ws,
        "--retriever",
        "bm25-word",
        "--k1",
        "1.2,1.5",
        "--b",
        "0.5,0.75",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"retriever", "metric", "grid", "note"}
    assert (data["retriever"], data["metric"]) == ("bm25-word", "mrr")
    assert [(c["k1"], c["b"]) for c in data["grid"]] == [
        (1.2, 0.5),
        (1.2, 0.75),
        (1.5, 0.5),
        (1.5, 0.75),
    ]
    assert all(set(c) == {"k1", "b", "value"} for c in data["grid"])
    assert "overfit" in data["note"] and "4 cells" in data["note"]
    # the retriever's own cell (k1 1.5, b 0.75) is goldpan score's number:
    # reciprocal ranks q1 1/2 (d2 after d1), q2 1, q3 1, q4 0 -> 2.5 / 4
    code, out, _ = run(capsys, "score", tiny_ws, "--json", "--retriever", "bm25-word")
    own = next(c for c in data["grid"] if (c["k1"], c["b"]) == (1.5, 0.75))
    assert own["value"] == json.loads(out)["retrievers"]["bm25-word"]["mrr"] == 0.625


def test_sweep_table_marks_own_cell(tiny_ws, capsys):
    code, out, _ = run(
        capsys, "sweep", tiny_ws, "--retriever", "bm25-bigram", "--k1", "1.5,2", "--b", "0.75"
    )
    assert code == 0
    assert "1.000*" in out  # k1 1.5, b 0.75: the retriever's own parameters
    assert "the retriever's own parameters" in out and "overfit" in out


# -- overlap --------------------------------------------------------------------------------


def test_overlap_json(tiny_ws, capsys):
    ws = Workspace.open(tiny_ws)
    ws.write_questions([Question("q5", "감쇠 보정 원리는")])  # copies d1's title
    ws.close()
    code, out, _ = run(capsys, "overlap", tiny_ws, "--json")
    assert code == 0
    rows = {r["question"]: r for r in json.loads(out)}
    assert all(set(r) == {"question", "title", "gold", "high"} for r in rows.values())
    # shares worked out in tests/engine/analysis/test_analysis.py::test_question_overlaps_on_tiny_ws
    expected = {
        "q1": (1 / 3, 1 / 2, False),
        "q2": (1 / 4, 1 / 4, False),
        "q3": (1 / 4, 4 / 5, False),
        "q4": (0.0, None, False),
        "q5": (3 / 4, None, True),
    }
    assert set(rows) == set(expected)
    for q, (title, gold, high) in expected.items():
        assert rows[q]["title"] == pytest.approx(title)
        assert rows[q]["gold"] == (None if gold is None else pytest.approx(gold))
        assert rows[q]["high"] is high
    code, out, _ = run(capsys, "overlap", tiny_ws)
    assert code == 0 and "80%" in out
    # every column has a header: "likely easy" said yes in a column without one
    lines = out.splitlines()
    header = next(line for line in lines if "question" in line and "nearest title" in line)
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "question",
        "nearest title",
        "gold text",
        "likely easy",
    ]
    q5 = next(line for line in lines if line.startswith("│ q5"))
    assert [c.strip() for c in q5.strip("│").split("│")] == ["q5", "75%", "-", "yes"]
    assert "likely easy: 60% or more of the question's words are in one title" in out


# -- bad usage: exit 2 with a message, no traceback -----------------------------------------

BAD_USAGE = {
    "compare unknown retriever": (
        ["compare", "{ws}", "bm25-word", "nope"],
        "unknown retriever 'nope'",
    ),
    "compare unknown metric": (
        ["compare", "{ws}", "bm25-word", "bm25-bigram", "--metric", "map"],
        "unknown metric 'map'",
    ),
    "compare no samples": (
        ["compare", "{ws}", "bm25-word", "bm25-bigram", "--samples", "0"],
        "argument --samples: '0' is out of range",
    ),
    "failures unknown retriever": (
        ["failures", "{ws}", "--retriever", "nope"],
        "unknown retriever 'nope'",
    ),
    "noanswer unknown retriever": (
        ["noanswer", "{ws}", "--retriever", "nope", "--json"],
        "unknown retriever 'nope'",
    ),
    "sweep unknown retriever": (
        ["sweep", "{ws}", "--retriever", "nope"],
        "unknown retriever 'nope'",
    ),
    "sweep k1 not numbers": (
        ["sweep", "{ws}", "--retriever", "bm25-word", "--k1", "a,b"],
        "--k1 'a,b': expected numbers",
    ),
    "sweep b empty": (
        ["sweep", "{ws}", "--retriever", "bm25-word", "--b", ","],
        "--b ',': expected non-negative numbers",
    ),
    "sweep unknown metric": (
        ["sweep", "{ws}", "--retriever", "bm25-word", "--metric", "map", "--json"],
        "unknown metric 'map'",
    ),
}


@pytest.mark.parametrize("case", BAD_USAGE, ids=list(BAD_USAGE))
def test_bad_usage_exits_2(case, tiny_ws, capsys):
    argv, expected = BAD_USAGE[case]
    code, out, err = run(capsys, *[a.format(ws=tiny_ws) for a in argv])
    assert code == 2
    assert expected in err.replace("\n", "")
    assert "Traceback" not in out + err


def test_sweep_of_a_non_bm25_retriever_exits_2(tiny_ws, capsys):
    ws = Workspace.open(tiny_ws)
    ws.add_retriever(RetrieverSpec("dense-x", "dense", {"model": "none"}))
    ws.close()
    code, _, err = run(capsys, "sweep", tiny_ws, "--retriever", "dense-x")
    assert code == 2 and "only bm25 has k1 and b" in err


def test_unknown_workspace_exits_2(tmp_path, capsys):
    for argv in (
        ["compare", tmp_path / "no.db", "a", "b"],
        ["overlap", tmp_path / "no.db"],
        ["sweep", tmp_path / "no.db", "--retriever", "bm25-word"],
    ):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "no such workspace" in err


# -- regressions (found by review: a nan grid value, a bad metric after pooling) -----------


def test_sweep_k1_nan_is_a_usage_error(tiny_ws, capsys):
    code, out, err = run(capsys, "sweep", tiny_ws, "--retriever", "bm25-word", "--k1", "nan")
    assert code == 2 and "Traceback" not in out + err


def test_compare_unknown_metric_leaves_the_workspace_unchanged(tiny_ws, capsys):
    before = snapshot(tiny_ws)
    code, _, _ = run(capsys, "compare", tiny_ws, "bm25-word", "bm25-bigram", "--metric", "map")
    assert code == 2
    assert snapshot(tiny_ws) == before


def test_sweep_rejects_negative_and_out_of_range_parameters(tiny_ws, capsys):
    code, _, err = run(capsys, "sweep", tiny_ws, "--retriever", "bm25-word", "--k1", "-1")
    assert code == 2 and "non-negative" in err
    code, _, err = run(capsys, "sweep", tiny_ws, "--retriever", "bm25-word", "--b", "1.5")
    assert code == 2 and "b between 0 and 1" in err


def test_failures_of_posts_name_the_title_series_and_both_titles(tmp_path):
    """Posts with only title, date and tags in their front matter (the seed's): the series
    and the overview come from the titles, in a real goldpan process."""
    from tests.cli.test_cli_exit import goldpan

    posts = tmp_path / "posts"
    posts.mkdir()
    for name, title, body in [
        ("pet-5", "PET 원리 ⑤ 감쇠", "감쇠 보정은 CT로 한다"),
        ("pet-6", "PET 원리 ⑥ 산란", "산란 보정 감쇠 보정 감쇠 보정 이야기"),
        ("myth-0", "오개념 ⓪ 개요", "흔한 오개념 모음: 산란 보정 오해"),
        ("myth-3", "오개념 ③ 산란 보정은 필요 없다", "틀린 믿음"),
    ]:
        (posts / f"{name}.md").write_text(
            f'---\ntitle: "{title}"\ndate: 2024-05-01\ntags: [pet]\n---\n{body}\n',
            encoding="utf-8",
        )
    write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"id": "q1", "text": "감쇠 보정", "gold": ["pet-5:2"]},
            {"id": "q2", "text": "산란 보정 오해", "gold": ["myth-3:1"]},
        ],
    )
    ws = tmp_path / "posts.db"
    for argv in (
        ("new", ws),
        ("import", "docs", ws, posts),
        ("import", "questions", ws, tmp_path / "q.jsonl"),
    ):
        assert goldpan(tmp_path, *argv).returncode == 0
    done = goldpan(tmp_path, "failures", ws, "--retriever", "bm25-word")
    assert done.returncode == 0, done.stderr
    assert "neighbour in series 'PET 원리' (⑤ vs ⑥)" in done.stdout
    assert "pet-5 PET 원리 ⑤ 감쇠" in done.stdout and "pet-6 PET 원리 ⑥ 산란" in done.stdout
    assert "overview of series '오개념' (개요)" in done.stdout
    done = goldpan(tmp_path, "failures", ws, "--retriever", "bm25-word", "--json")
    rows = {r["question"]: r for r in json.loads(done.stdout)}
    assert (rows["q1"]["relation"], rows["q1"]["series"]) == ("neighbour", "PET 원리")
    assert (rows["q2"]["relation"], rows["q2"]["top_title"]) == ("overview", "오개념 ⓪ 개요")


@pytest.mark.parametrize("command", ["failures", "noanswer"])
def test_without_retriever_the_first_retriever_is_analysed(tiny_ws, command):
    """The README showed --retriever as optional and both commands refused to run without
    it: the first retriever (Review's A) is the default, named in the output."""
    from tests.cli.test_cli_exit import goldpan

    _relabel(tiny_ws)
    plain = goldpan(tiny_ws.parent, command, tiny_ws)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("bm25-word: ")
    named = goldpan(tiny_ws.parent, command, tiny_ws, "--retriever", "bm25-word", "--json")
    assert goldpan(tiny_ws.parent, command, tiny_ws, "--json").stdout == named.stdout
    if command == "noanswer":
        assert json.loads(named.stdout)["retriever"] == "bm25-word"


def test_without_any_retriever_failures_says_how_to_add_one(tiny_ws, capsys):
    ws = Workspace.open(tiny_ws)
    for spec in ws.retrievers():
        ws.remove_retriever(spec.name)
    ws.close()
    for command in ("failures", "noanswer"):
        code, out, err = run(capsys, command, tiny_ws)
        assert code == 2 and out == ""
        assert "no retriever yet: add one with `goldpan retriever add`" in err
