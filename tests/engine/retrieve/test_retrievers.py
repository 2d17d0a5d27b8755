"""RRF, id boost, the command retriever and the runner's bookkeeping (no torch needed).

Every expectation is computed here from first principles (exact rational RRF, the demo
documents' own fields, goldpan's BM25 run in a child process), never copied from the
retriever under test.
"""

import json
import math
import re
import shlex
import sys
import textwrap
import time
from fractions import Fraction
from itertools import pairwise
from pathlib import Path

import pytest

from engine.demo import build_demo
from engine.errors import BadInput, UnknownName
from engine.retrieve import bm25_spec, check_spec
from engine.retrieve.base import RetrieverError
from engine.retrieve.fusion import RRFRetriever
from engine.retrieve.idboost import IdBoostRetriever
from engine.retrieve.runner import refresh_runs
from engine.scoring import Latency, score_workspace
from engine.trust import TrustStore, needs_trust
from engine.types import CachedRun, Doc, Question, RetrieverSpec
from engine.workspace import Workspace
from tests.conftest import ROOT, TINY_DOCS, add_retriever, pool

BASES = ["bm25-word", "bm25-bigram", "bm25-word+bigram"]


def trust_all(path: Path) -> None:
    """Trust every retriever that needs it, as ``goldpan trust --yes`` does."""
    with Workspace.open(path) as ws:
        TrustStore().trust(ws, [s for s in ws.retrievers() if needs_trust(s)])


def pool_fails(path: Path, *names: str, force: bool = False) -> str:
    """Pool ``names``, which must fail: the error, on one line."""
    with Workspace.open(path) as ws, pytest.raises(RetrieverError) as failed:
        refresh_runs(ws, list(names), force=force)
    return " ".join(str(failed.value).split())


@pytest.fixture
def demo_path(tmp_path: Path) -> Path:
    """A fresh, unpooled demo workspace (48 docs, 49 questions)."""
    path = tmp_path / "demo.db"
    build_demo(path, pool=False, models=False).close()
    return path


def hand_rrf(
    rankings: list[list[str]], weights: list[float] | None = None, k: float = 60
) -> list[tuple[str, Fraction]]:
    """Exact RRF: sum of w / (k + rank), ranks 1-based; score desc, then doc id desc."""
    weights = weights if weights is not None else [1.0] * len(rankings)
    scores: dict[str, Fraction] = {}
    for ids, w in zip(rankings, weights, strict=True):
        for rank, doc in enumerate(ids, start=1):
            scores[doc] = scores.get(doc, Fraction(0)) + Fraction(w) / (Fraction(k) + rank)
    pairs = sorted(((d, s) for d, s in scores.items() if s > 0), key=lambda p: p[0], reverse=True)
    pairs.sort(key=lambda p: -p[1])
    return pairs


def assert_fused(run: CachedRun, expected: list[tuple[str, Fraction]], depth: int = 100) -> None:
    expected = expected[:depth]
    assert list(run.doc_ids) == [d for d, _ in expected], run.question_id
    for got, (_, want) in zip(run.scores, expected, strict=True):
        assert got == pytest.approx(float(want), rel=1e-11, abs=0), run.question_id


# -- RRF -----------------------------------------------------------------------------------


def test_rrf_equals_exact_hand_fusion_with_weights_and_k(demo_path):
    add_retriever(demo_path, "fused", "rrf", of=",".join(BASES), k="10", weights="1,2,0.5")
    pool(demo_path, ["fused"])
    with Workspace.open(demo_path, readonly=True) as ws:
        base = {b: ws.runs(b) for b in BASES}
        fused = ws.runs("fused")
        assert set(fused) == set(ws.question_ids())
        nonempty = 0
        for qid, r in fused.items():
            expected = hand_rrf([list(base[b][qid].doc_ids) for b in BASES], [1, 2, 0.5], 10)
            assert_fused(r, expected)
            nonempty += bool(expected)
        assert nonempty >= 40  # the comparison is not vacuous


def test_rrf_default_k_is_60_and_unit_weights(demo_path):
    add_retriever(demo_path, "f", "rrf", of="bm25-word,bm25-bigram")
    pool(demo_path, ["f"])
    with Workspace.open(demo_path, readonly=True) as ws:
        a, b, fused = ws.runs("bm25-word"), ws.runs("bm25-bigram"), ws.runs("f")
        for qid, r in fused.items():
            assert_fused(r, hand_rrf([list(a[qid].doc_ids), list(b[qid].doc_ids)]))


def test_rrf_equals_ranx_fuse(demo_path):
    ranx = pytest.importorskip("ranx")
    add_retriever(demo_path, "f", "rrf", of=",".join(BASES))
    pool(demo_path, ["f"])
    with Workspace.open(demo_path, readonly=True) as ws:
        base = {b: ws.runs(b) for b in BASES}
        fused = ws.runs("f")
    # ranx needs the same questions in every run: those every base answers
    qids = sorted(q for q in fused if all(base[b][q].doc_ids for b in BASES))
    assert len(qids) >= 30
    # rank-position scores (n - i): ranx sees exactly the cached order, ties already broken
    runs = [
        ranx.Run(
            {
                q: {d: float(len(base[b][q].doc_ids) - i) for i, d in enumerate(base[b][q].doc_ids)}
                for q in qids
            },
            name=b,
        )
        for b in BASES
    ]
    ref = ranx.fuse(runs=runs, method="rrf", params={"k": 60}, norm=None)
    for q in qids:
        want = dict(ref[q])
        got = dict(zip(fused[q].doc_ids, fused[q].scores, strict=True))
        assert set(got) == set(want), q
        for d, s in want.items():
            assert got[d] == pytest.approx(s, abs=1e-9), (q, d)


def test_rrf_ties_at_mirrored_ranks_go_doc_id_descending():
    rrf = RRFRetriever(RetrieverSpec("f", "rrf", {"of": ["a", "b"]}))
    # d10 and d9 sit at mirrored ranks (1 and 3): exactly equal; x at rank 2 twice
    ids, scores = rrf.fuse(
        {"a": (["d10", "x", "d9"], [3, 2, 1]), "b": (["d9", "x", "d10"], [3, 2, 1])}, 10
    )
    # 1/61 + 1/63 > 2/62, and "d9" > "d10" by code point
    assert Fraction(1, 61) + Fraction(1, 63) > Fraction(2, 62)
    assert ids == ["d9", "d10", "x"]
    assert scores[0] == scores[1] > scores[2]
    # three bases, each document at ranks 1, 2 and 3 once: a three-way exact tie
    rrf3 = RRFRetriever(RetrieverSpec("f", "rrf", {"of": ["a", "b", "c"]}))
    cyclic = {
        "a": (["x", "y", "z"], [3, 2, 1]),
        "b": (["y", "z", "x"], [3, 2, 1]),
        "c": (["z", "x", "y"], [3, 2, 1]),
    }
    ids, scores = rrf3.fuse(cyclic, 10)
    assert ids == ["z", "y", "x"]
    assert (
        scores[0] == scores[1] == scores[2] == pytest.approx(1 / 61 + 1 / 62 + 1 / 63, rel=1e-11)
    )  # rounded to 12 significant digits like every ranking's scores
    # depth cuts after the tie is broken
    assert rrf3.fuse(cyclic, 1)[0] == ["z"]


def test_rrf_weights_can_overturn_the_order():
    rankings = {"a": (["p", "q"], [2.0, 1.0]), "b": (["q", "p"], [2.0, 1.0])}
    even = RRFRetriever(RetrieverSpec("f", "rrf", {"of": ["a", "b"], "k": 0}))
    assert even.fuse(rankings, 10)[0] == ["q", "p"]  # a tie (1/1 + 1/2 each): id descending
    tilted = RRFRetriever(RetrieverSpec("f", "rrf", {"of": ["a", "b"], "k": 0, "weights": [3, 1]}))
    ids, scores = tilted.fuse(rankings, 10)
    assert ids == ["p", "q"]
    assert scores == pytest.approx([3 / 1 + 1 / 2, 3 / 2 + 1 / 1], abs=1e-12)


def test_rrf_bad_parameters_raise_bad_input():
    existing = [bm25_spec("bm25-word", "word"), bm25_spec("bm25-bigram", "bigram")]

    def spec(**params):
        return RetrieverSpec("f", "rrf", params)

    with pytest.raises(UnknownName, match="unknown base retriever 'gone'.*bm25-bigram, bm25-word"):
        check_spec(spec(of=["bm25-word", "gone"]), existing)
    with pytest.raises(BadInput, match="twice"):
        check_spec(spec(of=["bm25-word", "bm25-word"]), existing)
    with pytest.raises(BadInput, match="2 retrievers but 1 weights"):
        check_spec(spec(of=["bm25-word", "bm25-bigram"], weights=[1]), existing)
    with pytest.raises(BadInput, match="k must be a number >= 0"):
        check_spec(spec(of=["bm25-word", "bm25-bigram"], k=-0.5), existing)
    with pytest.raises(BadInput, match="weights must be finite and >= 0"):
        check_spec(spec(of=["bm25-word", "bm25-bigram"], weights=[1, -1]), existing)
    check_spec(spec(of=["bm25-word", "bm25-bigram"], k=0, weights=[1, 0.5]), existing)


# -- id boost ------------------------------------------------------------------------------


def test_idboost_puts_the_document_a_partial_number_names_first(demo_path):
    add_retriever(demo_path, "ib", "idboost", of="bm25-word")
    pool(demo_path, ["ib"])
    with Workspace.open(demo_path, readonly=True) as ws:
        docs = ws.docs()
        questions = {q.id: q for q in ws.questions()}
        base, boosted = ws.runs("bm25-word"), ws.runs("ib")
    partial = sorted(q for q, question in questions.items() if "partial-id" in question.tags)
    assert partial == ["q16", "q17", "q18", "q19"]
    base_was_wrong = 0
    for qid in partial:
        fragments = re.findall(r"(?:\d{4}-)?\d{4}", questions[qid].text)
        assert len(fragments) == 1, questions[qid].text
        named = [d.id for d in docs if str(d.fields.get("number", "")).endswith(fragments[0])]
        assert len(named) == 1, (fragments, named)
        want = named[0]
        ids = list(boosted[qid].doc_ids)
        assert ids[0] == want, qid
        # the rest is the base ranking, in its order
        assert ids[1:] == [d for d in base[qid].doc_ids if d != want][: len(ids) - 1]
        base_was_wrong += base[qid].doc_ids[0] != want
    assert base_was_wrong >= 1  # the boost changed something that mattered (q16)
    for r in boosted.values():
        assert all(a > b for a, b in pairwise(r.scores)), r.question_id


def test_idboost_year_alone_names_nothing_on_a_corpus_without_year_titles():
    ib = IdBoostRetriever(RetrieverSpec("ib", "idboost", {"of": "b"}))
    ib.prepare(TINY_DOCS, {})
    base = (["d1", "d2", "d3", "d4"], [4.0, 3.0, 2.0, 1.0])
    assert ib.rerank("2024 점검 절차", base, 10)[0] == ["d1", "d2", "d3", "d4"]
    assert ib.rerank("2024-0137 점검 절차", base, 10)[0] == ["d3", "d1", "d2", "d4"]
    assert ib.rerank("td-2024-0137", base, 10)[0][0] == "d3"
    assert ib.rerank("0138 점검", base, 10)[0] == ["d1", "d2", "d3", "d4"]


def test_idboost_year_alone_names_nothing_on_the_demo(demo_path):
    with Workspace.open(demo_path) as ws:
        ws.write_questions([Question("y1", "2024년에 바뀐 PET 균일도 팬텀 점검 절차")])
        ws.add_retriever(RetrieverSpec("ib", "idboost", {"of": ["bm25-word"]}))
        refresh_runs(ws, ["ib"], question_ids=["y1"])
        base, boosted = ws.runs("bm25-word")["y1"], ws.runs("ib")["y1"]
    assert base.doc_ids  # bm25 finds something, so the comparison is not vacuous
    assert boosted.doc_ids == base.doc_ids


def _latest_of_series(docs, series: str) -> str:
    """The series' highest version (R2 > R1), then latest date, from the fields alone."""

    def key(d):
        v = str(d.fields.get("version", ""))
        digits = re.sub(r"\D", "", v)
        return (bool(v), int(digits) if digits else -1, str(d.fields.get("date", "")))

    return max((d for d in docs if d.fields.get("series") == series), key=key).id


def test_idboost_latest_puts_the_series_current_version_first(demo_path):
    add_retriever(demo_path, "ib", "idboost", of="bm25-word")
    add_retriever(demo_path, "ib-latest", "idboost", of="bm25-word", latest=True)
    pool(demo_path)
    with Workspace.open(demo_path, readonly=True) as ws:
        docs = ws.docs()
        by_id = {d.id: d for d in docs}
        questions = {q.id: q for q in ws.questions()}
        base, plain, latest = ws.runs("bm25-word"), ws.runs("ib"), ws.runs("ib-latest")
    assert _latest_of_series(docs, "safety-manual") == "manual-r2"
    for qid, word in (("q20", "현행"), ("q22", "지금")):
        assert word in questions[qid].text
        top_series = by_id[base[qid].doc_ids[0]].fields["series"]
        want = _latest_of_series(docs, top_series)
        assert latest[qid].doc_ids[0] == want, qid
        assert len(set(latest[qid].doc_ids)) == len(latest[qid].doc_ids)
        assert plain[qid].doc_ids == base[qid].doc_ids  # without --latest: no change
    assert base["q22"].doc_ids[0] != "manual-r2"  # q22 is a real test of --latest
    # no current-version word (q21 asks for R1): --latest changes nothing
    assert latest["q21"].doc_ids == base["q21"].doc_ids
    for r in latest.values():
        assert all(a > b for a, b in pairwise(r.scores)), r.question_id


# -- command retriever ---------------------------------------------------------------------

BM25_COMMAND = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {root!r})
    from engine.retrieve import bm25_spec, build_retriever
    from engine.workspace import Workspace

    ws_path, log = sys.argv[1], sys.argv[2]
    asked = [json.loads(line) for line in sys.stdin if line.strip()]
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps(asked, ensure_ascii=False) + "\\n")
    ws = Workspace.open(ws_path, readonly=True)
    retriever = build_retriever(bm25_spec("x", "word"))
    retriever.prepare(ws.docs(), {{}})
    ws.close()
    print("# goldpan BM25 from outside")
    for q in asked:
        ids, scores = retriever.search(q["text"], 100)
        for rank, (doc, score) in enumerate(zip(ids, scores), start=1):
            print(f"{{q['id']}} Q0 {{doc}} {{rank}} {{score:.17g}} outside")
    """
)


def _command(*parts: object) -> str:
    return " ".join(shlex.quote(str(p)) for p in (sys.executable, *parts))


def test_command_retriever_reproduces_bm25_exactly(demo_path, tmp_path):
    script = tmp_path / "bm25cmd.py"
    script.write_text(BM25_COMMAND.format(root=str(ROOT)), encoding="utf-8")
    log = tmp_path / "asked.jsonl"
    command = _command(script, demo_path, log)
    # the script is all its output depends on: cached while it is unchanged
    add_retriever(demo_path, "cmd", "command", command=command, cache_key_files=str(script))
    trust_all(demo_path)  # goldpan runs trusted commands only
    pool(demo_path, ["bm25-word", "cmd"])

    def check_equal() -> None:
        with Workspace.open(demo_path, readonly=True) as ws:
            ours, theirs = ws.runs("bm25-word"), ws.runs("cmd")
            assert set(theirs) == set(ws.question_ids())
        for qid, r in ours.items():
            assert theirs[qid].doc_ids == r.doc_ids, qid
            assert theirs[qid].scores == pytest.approx(r.scores, abs=1e-12, rel=0), qid

    check_equal()
    with Workspace.open(demo_path, readonly=True) as ws:
        questions = ws.questions()
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(calls) == 1
    assert sorted(calls[0], key=lambda q: q["id"]) == [
        {"id": q.id, "text": q.text} for q in questions
    ]

    # one question changes: only it is sent, and the answer still matches BM25
    with Workspace.open(demo_path) as ws:
        ws.edit_question("q05", "방사성 폐기물은 얼마나 오래 감쇠 보관해요", None, "mina")
    pool(demo_path)
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert calls[1:] == [[{"id": "q05", "text": "방사성 폐기물은 얼마나 오래 감쇠 보관해요"}]]
    check_equal()

    report = pool(demo_path, ["bm25-word", "cmd"])  # what `goldpan score` brings up to date
    assert report.ran == {"bm25-word": 0, "cmd": 0}
    with Workspace.open(demo_path, readonly=True) as ws:
        scored = score_workspace(ws, retrievers=["bm25-word", "cmd"]).to_json()
    board = json.loads(json.dumps(scored))["retrievers"]
    timing = set(Latency.of([], []).as_dict())  # how fast, not how well: may differ
    quality = {m for m in board["bm25-word"] if m not in timing}
    assert {"mrr", "ndcg@10", "hit@1"} <= quality
    for m in quality:
        assert math.isfinite(board["cmd"][m])
        assert board["cmd"][m] == board["bm25-word"][m], m
    assert len(log.read_text(encoding="utf-8").splitlines()) == 2  # nothing was stale


FAKE_COMMAND = textwrap.dedent(
    """
    import json, sys, time
    mode = open(sys.argv[1], encoding="utf-8").read().strip()
    asked = [json.loads(line)["id"] for line in sys.stdin if line.strip()]
    q = asked[0]
    if mode == "exit":
        print("starting", file=sys.stderr)
        print("boom: the index is unavailable", file=sys.stderr)
        sys.exit(3)
    if mode == "sleep":
        time.sleep(60)
    second = {{
        "cols": f"{{q}} Q0 d2 2 0.5",
        "score": f"{{q}} Q0 d2 2 high t",
        "qid": "q99 Q0 d2 2 0.5 t",
        "doc": f"{{q}} Q0 d999 2 0.5 t",
        "dup": f"{{q}} Q0 d1 2 0.5 t",
    }}
    if mode in second:
        print(f"{{q}} Q0 d1 1 1.0 t")
        print(second[mode])
        sys.exit(0)
    for q in asked:
        print(f"{{q}} Q0 d3 1 2.0 t")
        print(f"{{q}} Q0 d1 2 1.0 t")
    """
)


@pytest.fixture
def fake_command(tiny_ws, tmp_path):
    """A command retriever `cmd` on tiny_ws whose behaviour is set by writing `mode`."""
    script = tmp_path / "fake.py"
    script.write_text(FAKE_COMMAND.format(), encoding="utf-8")
    mode = tmp_path / "mode"
    mode.write_text("ok", encoding="utf-8")
    add_retriever(tiny_ws, "cmd", "command", command=_command(script, mode))
    trust_all(tiny_ws)
    return script, mode


def _runs(path: Path, name: str) -> dict[str, CachedRun]:
    with Workspace.open(path, readonly=True) as ws:
        return ws.runs(name)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("exit", ["exited with status 3", "boom: the index is unavailable"]),
        ("cols", ["output line 2", "6 fields", "got 5"]),
        ("score", ["output line 2", "'high'", "not a number"]),
        ("qid", ["output line 2", "'q99'", "not asked"]),
        ("doc", ["output line 2", "'d999'", "not in the workspace"]),
        ("dup", ["output line 2", "'d1'", "twice", "lines 1 and 2"]),
    ],
)
def test_command_retriever_bad_answers_are_errors_and_keep_the_runs(
    tiny_ws, fake_command, mode, expected
):
    _, mode_file = fake_command
    pool(tiny_ws, ["cmd"])
    before = _runs(tiny_ws, "cmd")
    assert {q: r.doc_ids for q, r in before.items()} == {
        q: ("d3", "d1") for q in ("q1", "q2", "q3", "q4")
    }
    mode_file.write_text(mode, encoding="utf-8")
    err = pool_fails(tiny_ws, "cmd", force=True)
    assert "cmd" in err
    for part in expected:
        assert part in err, (part, err)
    assert _runs(tiny_ws, "cmd") == before


def test_command_retriever_timeout(tiny_ws, tmp_path):
    script = tmp_path / "fake.py"
    script.write_text(FAKE_COMMAND.format(), encoding="utf-8")
    mode = tmp_path / "mode"
    mode.write_text("sleep", encoding="utf-8")
    add_retriever(tiny_ws, "slow", "command", command=_command(script, mode), timeout="1")
    trust_all(tiny_ws)
    started = time.monotonic()
    err = pool_fails(tiny_ws, "slow")
    assert time.monotonic() - started < 30  # the sleeper (60 s) was not waited for
    assert "slow" in err and "--timeout" in err
    assert _runs(tiny_ws, "slow") == {}


def test_command_retriever_missing_program(tiny_ws, tmp_path):
    missing = tmp_path / "no-such-program"
    add_retriever(tiny_ws, "gone", "command", command=str(missing))
    trust_all(tiny_ws)
    assert "no-such-program" in pool_fails(tiny_ws, "gone")
    assert _runs(tiny_ws, "gone") == {}


# -- the runner ----------------------------------------------------------------------------


def test_pooling_a_fusion_alone_brings_its_bases_up_to_date_first(tiny_ws):
    add_retriever(tiny_ws, "f", "rrf", of="bm25-word,bm25-bigram")
    report = pool(tiny_ws, ["f"])
    assert report.ran == {"bm25-word": 4, "bm25-bigram": 4, "f": 4}
    with Workspace.open(tiny_ws, readonly=True) as ws:
        qids = set(ws.question_ids())
        a, b, fused = ws.runs("bm25-word"), ws.runs("bm25-bigram"), ws.runs("f")
        assert ws.runs("bm25-kiwi") == {} and ws.runs("bm25-word+bigram") == {}
    assert set(a) == set(b) == set(fused) == qids
    for qid, r in fused.items():
        assert_fused(r, hand_rrf([list(a[qid].doc_ids), list(b[qid].doc_ids)]))


def test_a_changed_base_makes_the_fusion_stale(tiny_ws):
    with Workspace.open(tiny_ws) as ws:
        ws.add_retriever(RetrieverSpec("f", "rrf", {"of": ["bm25-word", "bm25-bigram"]}))
        refresh_runs(ws, ["f"])
        first = ws.runs("f")

        # a question's text changes: its base rankings and its fused ranking are redone
        ws.edit_question("q2", "금속 인공물 보정 방법", None, "mina")
        report = refresh_runs(ws, ["f"])
        assert report.ran == {"bm25-word": 1, "bm25-bigram": 1, "f": 1}
        a, b, fused = ws.runs("bm25-word"), ws.runs("bm25-bigram"), ws.runs("f")
        assert_fused(fused["q2"], hand_rrf([list(a["q2"].doc_ids), list(b["q2"].doc_ids)]))
        assert fused["q2"].doc_ids != first["q2"].doc_ids

        # the base is replaced under the same name (bigram tokens, other k1 and b): every
        # fused ranking is redone from the new base rankings
        ws.remove_retriever("bm25-word")
        ws.add_retriever(bm25_spec("bm25-word", "bigram", k1=0.6, b=0.3))
        report = refresh_runs(ws, ["f"])
        assert report.ran["bm25-word"] == 4 and report.ran["f"] == 4
        assert report.ran["bm25-bigram"] == 0
        a, b, fused = ws.runs("bm25-word"), ws.runs("bm25-bigram"), ws.runs("f")
        for qid, r in fused.items():
            assert_fused(r, hand_rrf([list(a[qid].doc_ids), list(b[qid].doc_ids)]))
        # and nothing is left stale
        assert refresh_runs(ws, ["f"]).ran == {"bm25-word": 0, "bm25-bigram": 0, "f": 0}


def test_a_bug_in_a_retriever_is_a_crash_not_a_retriever_that_could_not_run(tiny_ws, monkeypatch):
    """A pool that goes on past retrievers that cannot run (the terminal app's) still stops
    on a bug: a built-in ``ValueError`` is not "could not run", which would hide it in a
    notice without a crash log. A refused parameter is."""

    def buggy(self, rankings, depth):
        raise ValueError("a bug in the fusion code")

    monkeypatch.setattr(RRFRetriever, "fuse", buggy)
    with Workspace.open(tiny_ws) as ws:
        ws.add_retriever(RetrieverSpec("f", "rrf", {"of": ["bm25-word", "bm25-bigram"]}))
        with pytest.raises(ValueError, match="a bug in the fusion code"):
            refresh_runs(ws, ["f"], keep_going=True)
        ws.add_retriever(RetrieverSpec("g", "rrf", {"of": ["bm25-word"], "k": "sixty"}))
        report = refresh_runs(ws, ["g"], keep_going=True)
    assert "rrf k: expected a number, not 'sixty'" in report.errors["g"]


def test_a_fused_ranking_does_not_depend_on_how_deep_its_bases_were_cached(tmp_path):
    def fused_at_depth_3(path: Path, deepen_first: bool) -> dict[str, tuple[str, ...]]:
        with build_demo(path, pool=False, models=False) as ws:
            ws.add_retriever(RetrieverSpec("f", "rrf", {"of": ["bm25-word", "bm25-bigram"]}))
            if deepen_first:
                refresh_runs(ws, ["bm25-word", "bm25-bigram"], depth=100)
            refresh_runs(ws, ["f"], depth=3)
            return {q: r.doc_ids for q, r in ws.runs("f").items()}

    assert fused_at_depth_3(tmp_path / "a.db", False) == fused_at_depth_3(tmp_path / "b.db", True)


def test_an_external_run_is_never_run_again(tiny_ws):
    stored = [
        CachedRun("ext", "q1", ("d4", "d2"), (9.5, 1.25), 3.0, "imported-1", 2),
        CachedRun("ext", "q3", ("d3",), (7.0,), 4.0, "imported-3", 1),
    ]
    with Workspace.open(tiny_ws) as ws:
        ws.add_retriever(RetrieverSpec("ext", "external", {"source": "team.run"}))
        ws.write_runs(stored)
        ws.add_retriever(RetrieverSpec("f", "rrf", {"of": ["ext", "bm25-word"]}))
        for kwargs in ({}, {"force": True}, {"names": ["ext"], "force": True}):
            report = refresh_runs(ws, **kwargs)
            assert report.ran["ext"] == 0 and report.cached["ext"] == 2
            assert ws.runs("ext") == {r.question_id: r for r in stored}
        # the corpus and a question change: still untouched
        ws.write_docs([Doc("d5", "새 문서", "감쇠 보정 새 문서", {})])
        ws.edit_question("q1", "감쇠 보정 방법", None, "mina")
        refresh_runs(ws, force=True)
        assert ws.runs("ext") == {r.question_id: r for r in stored}
        # and a fusion reads the stored rankings as they are
        word, fused = ws.runs("bm25-word"), ws.runs("f")
        ext = ws.runs("ext")
        for qid, r in fused.items():
            ext_ids = list(ext[qid].doc_ids) if qid in ext else []
            assert_fused(r, hand_rrf([ext_ids, list(word[qid].doc_ids)]))


def test_a_cached_ranking_is_keyed_by_the_same_input_hash_as_before():
    """The hash of (corpus, retriever, question text, base hashes), NUL after each part:
    a changed formula would make every workspace's cached rankings stale."""
    import hashlib

    from engine.types import TextHasher, sha256_text

    parts = ["corpus", "spec", "질문 text \udc80", ""]
    by_hand = hashlib.sha256(
        b"".join(p.encode("utf-8", "surrogatepass") + b"\0" for p in parts)
    ).hexdigest()
    shared = TextHasher(*parts[:2])
    assert shared(*parts[2:]) == sha256_text(*parts) == by_hand
    assert shared("other") != by_hand and shared(*parts[2:]) == by_hand  # the prefix is kept
    # lone surrogates either side of a boundary stay apart, and no part is no NUL at all
    for split in (["a\ud83d", "\ude00b"], ["\ud83d", "", "\ude00"], [], ["", ""]):
        want = hashlib.sha256(
            b"".join(p.encode("utf-8", "surrogatepass") + b"\0" for p in ["c", *split])
        ).hexdigest()
        assert TextHasher("c")(*split) == sha256_text("c", *split) == want
