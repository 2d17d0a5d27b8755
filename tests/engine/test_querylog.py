"""Query logs: normalization, duplicates, near-duplicates, frequency bands, seeded samples."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from engine.ingest import IngestError
from engine.neardup import char_ngrams, normalize, similar_pairs
from engine.querylog import (
    LogEntry,
    allocate,
    group_log,
    import_querylog,
    read_querylog,
)
from engine.types import Question
from engine.workspace import Workspace
from tests.conftest import querylog_rows, question_history


def test_normalize_nfkc_case_and_spacing() -> None:
    assert normalize("  ＴＤ－２０２４　Reset\tPassword ") == "td-2024 reset password"
    assert normalize("Straße") == normalize("STRASSE")  # case folding, not lower()
    assert normalize("감쇠   보정") == "감쇠 보정"


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b)


def test_similar_pairs_equal_brute_force() -> None:
    """Prefix filtering finds exactly the pairs an all-pairs comparison finds."""
    texts = [
        "reset password",
        "reset my password",
        "password reset",
        "reset passwords",
        "감쇠 보정 원리",
        "감쇠보정 원리는",
        "금속 인공물",
        "pet 팬텀 점검",
        "pet 팬텀 점검 절차",
        "ab",
        "ab",
        "abc",
    ]
    sets = [char_ngrams(normalize(t)) for t in texts]
    for t in (0.5, 0.7, 0.9):
        i, j, s = similar_pairs(sets, t)
        got = {(a, b): v for a, b, v in zip(i.tolist(), j.tolist(), s.tolist(), strict=True)}
        want = {
            (a, b): jaccard(sets[a], sets[b])
            for a in range(len(sets))
            for b in range(a + 1, len(sets))
            if jaccard(sets[a], sets[b]) >= t
        }
        assert got.keys() == want.keys(), t
        for k, v in want.items():
            assert got[k] == pytest.approx(v)


RARE = [
    "where is the fire exit",
    "calibration certificate 2019",
    "who signs the incident form",
    "spect collimator swap",
    "badge dosimeter lost",
    "holiday schedule for the lab",
    "how to order lead aprons",
    "ct protocol for children",
    "printer on floor 3",
    "wipe test frequency",
]


def skewed_log() -> list[LogEntry]:
    """A log with duplicates differing in spacing, case and full width, and a skew."""
    entries = []
    line = 0

    def add(text: str, times: int) -> None:
        nonlocal line
        for _ in range(times):
            line += 1
            entries.append(LogEntry(text, 1, line))

    add("reset password", 30)
    add("Reset  Password", 10)  # spacing and case
    add("ＲＥＳＥＴ ｐａｓｓｗｏｒｄ", 10)  # full-width
    add("reset passwords", 5)  # a near-duplicate (3-gram Jaccard 0.93)
    add("pet phantom check", 20)
    add("pet phantom checks", 4)  # near-duplicate
    add("dose limit for pregnant workers", 12)
    for rare in RARE:
        add(rare, 1)
    add("감쇠 보정은 어떻게 하나", 3)
    add("감쇠보정은 어떻게 하나", 2)  # Korean spacing: same n-grams without spaces
    return entries


def test_group_log_merges_counts_and_bands() -> None:
    entries = skewed_log()
    g = group_log(entries, similarity=0.7)
    assert g.queries == len(entries) == 106
    by_text = {x.text: x for x in g.groups}
    reset = by_text["reset password"]
    assert reset.count == 30 + 10 + 10 + 5
    assert set(reset.variants) == {
        "Reset  Password",
        "ＲＥＳＥＴ ｐａｓｓｗｏｒｄ",
        "reset passwords",
    }
    assert [t for t, _ in reset.near] == ["reset passwords"]
    assert by_text["pet phantom check"].count == 24
    assert by_text["감쇠 보정은 어떻게 하나"].count == 5
    rare = [x for x in g.groups if x.text in RARE]
    assert len(rare) == 10 and all(x.count == 1 for x in rare)
    assert sum(x.count for x in g.groups) == 106
    # bands by cumulative share of traffic: 55 of 106 queries is the first group, which
    # starts at 0% (head); the next starts at 51.9% (torso) ...
    order = [(x.text, x.band) for x in g.groups]
    assert order[0] == ("reset password", "head")
    assert order[1] == ("pet phantom check", "torso")  # starts at 55/106 = 52%
    assert order[2] == ("dose limit for pregnant workers", "torso")  # starts at 74%
    assert all(band == "tail" for _, band in order[3:])  # from 86/106 = 81%


def test_existing_questions_left_out() -> None:
    g = group_log(skewed_log(), existing=[Question("q1", "Reset Passwords?")])
    assert [x.text for x, qid in g.existing] == ["reset password"]
    assert g.existing[0][1] == "q1"
    assert "reset password" not in {x.text for x in g.groups}


def test_allocate_equal_and_capped() -> None:
    assert allocate(10, {"head": 5, "torso": 5, "tail": 50}) == {"head": 4, "torso": 3, "tail": 3}
    assert allocate(10, {"head": 1, "torso": 2, "tail": 50}) == {"head": 1, "torso": 2, "tail": 7}
    assert allocate(99, {"head": 1, "torso": 2, "tail": 3}) == {"head": 1, "torso": 2, "tail": 3}


def big_skewed_log(path: Path) -> Path:
    """Zipf-like counts over 300 distinct queries (JSONL with counts), plus variants."""
    records = []
    for k in range(300):
        records.append({"query": f"query {k:03d} {'x' * (k % 7)}", "count": max(1, 600 // (k + 1))})
        if k % 50 == 0:
            records.append({"query": f"QUERY  {k:03d} {'X' * (k % 7)}", "count": 2})
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_sample_is_stratified_reproducible_and_distinct(tiny_ws: Path, tmp_path: Path) -> None:
    log = big_skewed_log(tmp_path / "log.jsonl")
    ws = Workspace.open(tiny_ws)
    try:
        report = import_querylog(ws, log, sample=30, seed=7, similarity=0.95)
        qs = [q for q in ws.questions() if "from-log" in q.tags]
    finally:
        ws.close()
    assert len(qs) == 30
    bands = [next(t for t in q.tags if t != "from-log") for q in qs]
    assert sorted(set(bands)) == ["head", "tail", "torso"]
    per = {b: bands.count(b) for b in set(bands)}
    summary = report.to_json()["bands"]
    assert per == {"head": min(10, summary["head"]["groups"]), **{
        b: per[b] for b in ("torso", "tail")}}  # fmt: skip
    assert sum(per.values()) == 30
    assert len({normalize(q.text) for q in qs}) == 30  # no question duplicated
    assert summary["head"]["cut"] == [0.0, 0.5] and summary["torso"]["cut"] == [0.5, 0.8]
    assert (
        summary["head"]["traffic"]
        >= 0.5
        > summary["head"]["traffic"] - (summary["head"]["max_count"] / report.grouping.queries)
    )
    # the same seed on a fresh copy gives the same sample; another seed another one
    again = tmp_path / "again.db"
    other = tmp_path / "other.db"
    for path, seed in ((again, 7), (other, 8)):
        new = Workspace.create(path)
        import_querylog(new, log, sample=30, seed=seed, similarity=0.95)
        new.close()
    texts = sorted(q.text for q in qs)
    for path, same in ((again, True), (other, False)):
        w = Workspace.open(path)
        got = sorted(q.text for q in w.questions())
        w.close()
        assert (got == texts) is same


def test_sampling_twice_never_duplicates_a_question(tiny_ws: Path, tmp_path: Path) -> None:
    log = big_skewed_log(tmp_path / "log.jsonl")
    ws = Workspace.open(tiny_ws)
    try:
        import_querylog(ws, log, sample=40, seed=1, similarity=0.95)
        second = import_querylog(ws, log, sample=40, seed=2, similarity=0.95)
        texts = [normalize(q.text) for q in ws.questions()]
    finally:
        ws.close()
    assert len(second.grouping.existing) == 40  # the first sample is known now
    assert len(texts) == len(set(texts)) == 4 + 80


def test_read_formats_and_bad_lines(tmp_path: Path) -> None:
    text = tmp_path / "log.txt"
    text.write_text("a query\n\n  another one  \n", encoding="utf-8")
    assert [(e.text, e.count, e.line) for e in read_querylog(text)] == [
        ("a query", 1, 1),
        ("another one", 1, 3),
    ]
    csv = tmp_path / "log.csv"
    csv.write_text('timestamp,query,count\n2024-01-01,"a, query",3\n2024-01-02,b,\n')
    assert [(e.text, e.count) for e in read_querylog(csv)] == [("a, query", 3), ("b", 1)]
    bad = tmp_path / "bad.csv"
    bad.write_text("query,count\nfine,1\nnot fine,-2\n")
    with pytest.raises(IngestError) as exc:
        read_querylog(bad)
    assert exc.value.line == 3 and "count" in str(exc.value)
    nohdr = tmp_path / "nohdr.csv"
    nohdr.write_text("text,count\nx,1\n")
    with pytest.raises(IngestError, match="query"):
        read_querylog(nohdr)
    jl = tmp_path / "bad.jsonl"
    jl.write_text('{"query": "ok"}\n{"q": "x"}\n')
    with pytest.raises(IngestError) as exc:
        read_querylog(jl)
    assert exc.value.line == 2


def test_grouping_many_queries_is_fast() -> None:
    """Blocking by rare 3-grams, not all pairs: 20,000 queries in about a second."""
    import random
    import string

    rng = random.Random(3)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8)))
             for _ in range(3000)]  # fmt: skip
    entries = [
        LogEntry(" ".join(rng.choice(words) for _ in range(rng.randint(2, 5))), 1, k)
        for k in range(20_000)
    ]
    start = time.perf_counter()
    g = group_log(entries)
    took = time.perf_counter() - start
    assert g.queries == 20_000
    assert took < 10, took  # all pairs would be 200 million comparisons


def test_question_from_log_kept_or_rewritten(tiny_ws: Path, tmp_path: Path) -> None:
    from engine.querylog import question_from_log

    log = tmp_path / "log.txt"
    log.write_text("dose limit\nphantom schedule\n")
    ws = Workspace.open(tiny_ws)
    try:
        import_querylog(ws, log)
        first = ws.next_log_query()
        assert first is not None
        q, status = question_from_log(ws, first, "dose limit", ["from-log", "head"], "mina")
        assert status == "kept" and q.text == "dose limit" and question_history(ws, q.id) == []
        second = ws.next_log_query()
        assert second is not None and second["text"] == "phantom schedule"
        q2, status2 = question_from_log(ws, second, "how often is the phantom checked", [], "mina")
        assert status2 == "rewritten"
        assert [h[2] for h in question_history(ws, q2.id)] == ["phantom schedule"]
        assert ws.next_log_query() is None
        assert {r["status"] for r in querylog_rows(ws)} == {"kept", "rewritten"}
        assert ws.question(q.id) is not None and ws.question(q.id).written_blind  # type: ignore[union-attr]
    finally:
        ws.close()
