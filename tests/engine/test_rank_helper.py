"""engine.retrieve.rank_helper: a large BM25 batch ranked in a process of its own.

The helper runs the function the pool would run itself on the same arrays, so its
rankings must be the pool's to the bit; and whatever goes wrong with it (it cannot start,
is killed, answers nonsense), the pool must still store the right rankings, ranked in
its own process. Every test here runs the real helper process (or a stand-in that
answers wrongly, ``tests.engine.fake_rank_helper``), never a mock of it.
"""

from __future__ import annotations

import io
import os
import random
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from engine.retrieve import rank_helper
from engine.retrieve.bm25 import VARIANTS, BM25Index, BM25Params, id_ranks
from engine.retrieve.rank_helper import RankHelper, read_frame, write_frame
from engine.retrieve.runner import refresh_runs
from engine.types import Doc, Question
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.engine.test_kiwi_helper import ends_with_its_parent, gone

REPO = Path(__file__).resolve().parents[2]


def corpus(seed: int, n_docs: int = 80, n_queries: int = 60):
    """Documents and queries over a small vocabulary: ties, repeats, unknown terms."""
    rng = random.Random(seed)
    vocab = [f"t{i}" for i in range(40)]
    docs = [rng.choices(vocab, k=rng.randint(0, 15)) for _ in range(n_docs)]
    docs[5] = list(docs[9])  # identical documents tie exactly
    queries = [rng.choices(vocab + ["unknown"], k=rng.randint(0, 7)) for _ in range(n_queries)]
    queries.append([])
    return docs, queries


def same(a, b) -> None:
    """Two rankings (cols, scores, ends) are equal to the bit."""
    for x, y in zip(a, b, strict=True):
        assert x.dtype == y.dtype
        assert x.tobytes() == y.tobytes()


@pytest.fixture
def helper():
    made = RankHelper()
    made.start()
    yield made
    made.close()


@pytest.fixture
def every_batch(monkeypatch):
    """Every batch is large enough for the helper (the threshold is a size, not a rule)."""
    monkeypatch.setattr(rank_helper, "HELPER_CELLS", 0)


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("depth", [1, 7, 200])
def test_the_helper_ranks_as_this_process_does_to_the_bit(helper, every_batch, variant, depth):
    docs, queries = corpus(3)
    rank = id_ranks([f"d{i:03d}" for i in range(len(docs))][::-1])  # ids not in order
    index = BM25Index(docs, BM25Params(variant=variant))
    want = index.rank_flat(queries, rank, depth)
    served = helper.served
    got = index.rank_flat(queries, rank, depth, helper)
    assert helper.failure_message is None
    assert helper.served == served + 1  # the helper ranked it, not this process
    same(got, want)
    assert want[0].size > 0


def test_the_helper_keeps_the_index_between_batches_and_takes_a_new_one(helper, every_batch):
    """A retriever's later batches send only their questions; another index sends its own."""
    docs_a, queries_a = corpus(1)
    docs_b, queries_b = corpus(2, n_docs=50)
    a, b = BM25Index(docs_a, BM25Params()), BM25Index(docs_b, BM25Params(variant="okapi"))
    rank_a, rank_b = id_ranks([f"a{i}" for i in range(80)]), id_ranks([f"b{i}" for i in range(50)])
    want = [
        a.rank_flat(queries_a[:30], rank_a, 10),
        a.rank_flat(queries_a[30:], rank_a, 10),
        b.rank_flat(queries_b, rank_b, 10),
        a.rank_flat(queries_a, rank_a, 10),
    ]
    sent: list[bool] = []
    real_write = rank_helper.write_frame

    def counting(stream, header, arrays):
        sent.append("index" in header)
        real_write(stream, header, arrays)

    rank_helper.write_frame = counting
    try:
        got = [
            a.rank_flat(queries_a[:30], rank_a, 10, helper),
            a.rank_flat(queries_a[30:], rank_a, 10, helper),
            b.rank_flat(queries_b, rank_b, 10, helper),
            a.rank_flat(queries_a, rank_a, 10, helper),
        ]
    finally:
        rank_helper.write_frame = real_write
    for g, w in zip(got, want, strict=True):
        same(g, w)
    assert sent == [True, False, True, True]
    assert helper.failure_message is None


def test_a_small_batch_is_ranked_here(helper):
    docs, queries = corpus(4)
    index = BM25Index(docs, BM25Params())
    rank = id_ranks([f"d{i}" for i in range(len(docs))])
    served = helper.served
    same(index.rank_flat(queries, rank, 10, helper), index.rank_flat(queries, rank, 10))
    assert helper.served == served  # 61 x 80 scores: far under HELPER_CELLS


def test_a_helper_killed_is_not_asked_again_and_the_batch_is_ranked_here(helper, every_batch):
    docs, queries = corpus(5)
    index = BM25Index(docs, BM25Params())
    rank = id_ranks([f"d{i}" for i in range(len(docs))])
    want = index.rank_flat(queries, rank, 10)
    same(index.rank_flat(queries, rank, 10, helper), want)
    pid = helper.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert gone(pid)
    same(index.rank_flat(queries, rank, 10, helper), want)
    assert helper.failure_message is not None
    assert "ended" in helper.failure_message or "stopped reading" in helper.failure_message
    assert helper.pid is None  # not started again: the pool goes on without it
    same(index.rank_flat(queries, rank, 10, helper), want)


class _Fake(RankHelper):
    module = "tests.engine.fake_rank_helper"


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("far", "do not hold together"),
        ("short", "do not hold together"),
        ("deep", "do not hold together"),
        ("garbage", "not a frame"),
        ("huge", "at most"),  # refused before anything is allocated
        ("silent", "ended"),
    ],
)
def test_rankings_that_do_not_hold_together_are_ranked_here(monkeypatch, every_batch, mode, why):
    monkeypatch.setenv("FAKE_RANK_HELPER", mode)
    docs, queries = corpus(6)
    index = BM25Index(docs, BM25Params())
    rank = id_ranks([f"d{i}" for i in range(len(docs))])
    fake = _Fake()
    fake.start()
    try:
        got = index.rank_flat(queries, rank, 10, fake)
        assert fake.failure_message is not None and why in fake.failure_message
        assert fake.served == 0
    finally:
        fake.close()
    same(got, index.rank_flat(queries, rank, 10))


def test_a_helper_is_started_only_by_a_python(monkeypatch, every_batch):
    """A program that embeds Python would be run with the helper's arguments: not started."""
    monkeypatch.setattr(sys, "executable", "/usr/bin/uwsgi")
    made = RankHelper()
    made.start()
    assert made.pid is None
    assert made.failure_message is not None and "is not Python" in made.failure_message
    docs, queries = corpus(7)
    index = BM25Index(docs, BM25Params())
    rank = id_ranks([f"d{i}" for i in range(len(docs))])
    same(index.rank_flat(queries, rank, 5, made), index.rank_flat(queries, rank, 5))
    made.close()


def test_frames_carry_arrays_whole_and_refuse_what_is_not_one():
    arrays = [
        np.arange(5, dtype=np.int64),
        np.array([0.1, -2.5e300, np.inf]),
        np.zeros(0, np.int64),
        np.array([3, 1], dtype=np.int32),
    ]
    buf = io.BytesIO()
    write_frame(buf, {"depth": 3}, arrays)
    write_frame(buf, {}, [])
    buf.seek(0)
    frame = read_frame(buf)
    assert frame is not None
    head, got = frame
    assert head["depth"] == 3
    for a, b in zip(arrays, got, strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert read_frame(buf) == ({"arrays": []}, [])
    assert read_frame(buf) is None  # the stream ended between frames
    truncated = io.BytesIO()
    write_frame(truncated, {}, [np.arange(10, dtype=np.int64)])
    with pytest.raises(ValueError, match="ended inside a frame"):
        read_frame(io.BytesIO(truncated.getvalue()[:-1]))
    for bad in (
        b'{"arrays": [["|O", 1]]}\n',  # objects are never read
        b'{"arrays": [["<i8", -1]]}\n',
        b'{"arrays": [["<i8", 1.5]]}\n',
        b'{"arrays": "x"}\n',
        b"[1]\n",
    ):
        with pytest.raises(ValueError):
            read_frame(io.BytesIO(bad))


def _pool_ws(path: Path, n_docs: int = 120, n_questions: int = 90) -> Path:
    rng = random.Random(9)
    words = [f"w{i}" for i in range(60)] + ["감쇠", "보정은", "영상으로", "계수를"]
    ws = new_workspace(path)
    ws.write_docs(
        [Doc(f"d{i:04d}", f"title {i}", " ".join(rng.choices(words, k=25))) for i in range(n_docs)]
    )
    ws.write_questions(
        [Question(f"q{i:03d}", " ".join(rng.choices(words, k=4))) for i in range(n_questions)]
    )
    ws.close()
    return path


def _stored(path: Path) -> list[tuple[object, ...]]:
    ws = Workspace.open(path, readonly=True)
    try:
        return ws.conn.execute(
            "SELECT retriever, question_id, doc_ids, scores, input_hash, depth FROM runs "
            "ORDER BY retriever, question_id"
        ).fetchall()
    finally:
        ws.close()


def test_a_pool_ranked_by_the_helper_stores_the_pools_rankings(tmp_path, monkeypatch):
    names = ["bm25-word", "bm25-bigram", "bm25-word+bigram"]
    here = _pool_ws(tmp_path / "here.db")
    ws = Workspace.open(here)
    refresh_runs(ws, names, depth=20)
    ws.close()

    asked: list[int] = []
    helpers: set[RankHelper] = set()
    real_rank, real_ask = RankHelper.rank, RankHelper._ask

    def rank(self, *args):
        helpers.add(self)
        return real_rank(self, *args)

    def ask(self, index, q, *args):
        asked.append(q.indptr.size - 1)
        return real_ask(self, index, q, *args)

    monkeypatch.setattr(RankHelper, "rank", rank)
    monkeypatch.setattr(RankHelper, "_ask", ask)
    monkeypatch.setattr(rank_helper, "HELPER_CELLS", 120 * 90)  # this pool's batches
    there = _pool_ws(tmp_path / "there.db")
    ws = Workspace.open(there)
    report = refresh_runs(ws, names, depth=20)
    ws.close()
    (helper,) = helpers
    assert asked == [90, 90, 90]  # each retriever's batch went to the helper
    assert helper.failure_message is None and helper.pid is None  # ended with the pool
    assert report.ran == {n: 90 for n in names}
    assert _stored(there) == _stored(here)
    assert len(_stored(here)) == 270


@pytest.mark.parametrize(
    ("names", "cells", "starts"),
    [
        (["bm25-word", "bm25-bigram"], None, False),  # 90 x 120 scores: ranked here
        (["bm25-word"], 0, False),  # one retriever: nothing would run beside its ranking
        (["bm25-word", "bm25-bigram"], 0, True),
    ],
)
def test_a_helper_starts_for_a_large_pool_of_several_retrievers(
    tmp_path, monkeypatch, names, cells, starts
):
    started: list[bool] = []
    monkeypatch.setattr(RankHelper, "start", lambda self: started.append(True))
    if cells is not None:
        monkeypatch.setattr(rank_helper, "HELPER_CELLS", cells)
    ws = Workspace.open(_pool_ws(tmp_path / "small.db"))
    report = refresh_runs(ws, names, depth=20)
    ws.close()
    assert started == ([True] if starts else [])
    assert report.ran == {n: 90 for n in names}  # a helper never started: ranked here


def test_the_helper_ends_when_its_parent_is_killed():
    """``kill -9`` of the pool's process: the helper's input ends, so it exits."""
    ends_with_its_parent(
        "from engine.retrieve.rank_helper import RankHelper\nhelper = RankHelper()\nhelper.start()"
    )


def test_closing_ends_a_helper_still_loading_at_once():
    made = RankHelper()
    made.start()
    pid = made.pid
    assert pid is not None
    started = time.monotonic()
    made.close()  # killed, not waited for while it imports numpy
    assert made.pid is None
    assert gone(pid, timeout=5)
    assert time.monotonic() - started < 5
