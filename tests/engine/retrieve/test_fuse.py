"""The ``fuse`` kind (ranx's score fusion) against ``ranx.fuse`` on the same cached runs.

Every method and normalization is checked against ranx itself: the same scores to 1e-9
and the same order, ties broken the trec_eval way (score descending, doc id descending).
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.demo import build_demo
from engine.errors import BadInput
from engine.retrieve import check_spec
from engine.retrieve.bm25 import canonical_scores
from engine.retrieve.fusion import FUSE_METHODS, NORMS, FuseRetriever
from engine.retrieve.order import trec_order
from engine.types import RetrieverSpec
from engine.workspace import Workspace
from tests.conftest import add_retriever, pool

BASES = ["bm25-word", "bm25-bigram", "bm25-word+bigram"]


@pytest.fixture(scope="session")
def ranx() -> Iterator[Any]:
    """ranx, imported once per session (its first import compiles with numba)."""
    yield pytest.importorskip("ranx")


@pytest.fixture(scope="module")
def pooled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo workspace whose three BM25 retrievers are pooled (48 docs, 49 questions)."""
    path = tmp_path_factory.mktemp("fuse") / "demo.db"
    build_demo(path, pool=True, models=False).close()
    return path


def base_rankings(path: Path) -> dict[str, dict[str, tuple[list[str], list[float]]]]:
    """question -> base -> its cached (doc ids, scores)."""
    with Workspace.open(path, readonly=True) as ws:
        runs = {b: ws.runs(b) for b in BASES}
        qids = ws.question_ids()
    return {
        q: {b: (list(runs[b][q].doc_ids), list(runs[b][q].scores)) for b in BASES if q in runs[b]}
        for q in qids
    }


def ranx_order(results: dict[str, float], depth: int = 100) -> tuple[list[str], list[float]]:
    """ranx's fused scores in trec_eval order, rounded as goldpan rounds every ranking's."""
    docs = list(results)
    rounded = canonical_scores(np.array([results[d] for d in docs], dtype=np.float64))
    ids, _ = trec_order(dict(zip(docs, rounded.tolist(), strict=True)), depth)
    return ids, [results[d] for d in ids]


@pytest.mark.parametrize("method", FUSE_METHODS)
@pytest.mark.parametrize("norm", sorted(NORMS))
def test_fuse_equals_ranx_fuse(ranx, pooled, method, norm):
    rankings = base_rankings(pooled)
    qids = sorted(q for q, r in rankings.items() if all(r.get(b, ([], []))[0] for b in BASES))
    assert len(qids) >= 30  # the comparison is not vacuous
    weights = [1.0, 0.5, 2.0]
    params: dict[str, Any] = {"of": BASES, "method": method, "norm": norm}
    if method == "wsum":
        params["weights"] = weights
    fuse = FuseRetriever(RetrieverSpec("f", "fuse", params))
    runs = [
        ranx.Run(
            {q: dict(zip(*rankings[q][b], strict=True)) for q in qids},
            name=b,
        )
        for b in BASES
    ]
    ref = ranx.fuse(
        runs=runs,
        norm=None if norm == "none" else norm,
        method=method,
        params={"weights": weights} if method == "wsum" else {},
    )
    for q in qids:
        want_ids, want_scores = ranx_order(dict(ref[q]))
        ids, scores = fuse.fuse(rankings[q], 100)
        assert ids == want_ids, (q, method, norm)
        assert scores == pytest.approx(want_scores, abs=1e-9, rel=0), (q, method, norm)


@pytest.mark.parametrize("method", FUSE_METHODS)
def test_fuse_ties_go_doc_id_descending_as_in_trec_eval(ranx, method):
    # mirrored rankings: min-max gives x 1+0, y 0.5+0.5, z 0+1 -- an exact three-way tie
    # (and CombMNZ doubles each); "z" > "y" > "x" by code point
    a = (["x", "y", "z"], [3.0, 2.0, 1.0])
    b = (["z", "y", "x"], [3.0, 2.0, 1.0])
    fuse = FuseRetriever(RetrieverSpec("f", "fuse", {"of": ["a", "b"], "method": method}))
    ids, scores = fuse.fuse({"a": a, "b": b}, 10)
    runs = [ranx.Run({"q": dict(zip(*r, strict=True))}, name=n) for n, r in (("a", a), ("b", b))]
    params = {"weights": [1.0, 1.0]} if method == "wsum" else {}
    ref = dict(ranx.fuse(runs=runs, norm="min-max", method=method, params=params)["q"])
    assert ids == ["z", "y", "x"]
    assert scores[0] == scores[1] == scores[2] == pytest.approx(ref["x"], abs=1e-9)
    assert ranx_order(ref)[0] == ids
    assert fuse.fuse({"a": a, "b": b}, 1)[0] == ["z"]  # depth cuts after the tie is broken


def test_fuse_kind_pools_from_its_declared_parameters(ranx, pooled, tmp_path):
    path = tmp_path / "ws.db"
    path.write_bytes(pooled.read_bytes())
    add_retriever(path, "hy", "fuse", of="bm25-word,bm25-bigram", method="wsum", norm="zmuv")
    add_retriever(path, "mnz", "fuse", of="bm25-word,bm25-bigram")
    pool(path, ["hy"])
    pool(path, ["mnz"])
    rankings = base_rankings(path)
    with Workspace.open(path, readonly=True) as ws:
        spec = ws.retriever("mnz")
        assert spec is not None
        # the spec says what it runs with: ranx's defaults
        assert (spec.params["method"], spec.params["norm"]) == ("wsum", "min-max")
        fused = ws.runs("hy")
    fuse = FuseRetriever(RetrieverSpec("hy", "fuse", {"of": BASES[:2], "norm": "zmuv"}))
    negative = 0
    for q, r in fused.items():
        assert (list(r.doc_ids), list(r.scores)) == fuse.fuse(rankings[q], 100)
        negative += any(s < 0 for s in r.scores)
    assert negative > 0  # z-scores below the mean stay candidates


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"of": ["bm25-word"]}, "at least two"),
        ({"of": ["bm25-word", "bm25-word"]}, "twice"),
        ({"of": ["bm25-word", "bm25-bigram"], "method": "max"}, "known values: sum, mnz, wsum"),
        ({"of": ["bm25-word", "bm25-bigram"], "norm": "l2"}, "known values: min-max, max"),
        ({"of": ["bm25-word", "bm25-bigram"], "weights": [1, 2, 3]}, "2 retrievers but 3"),
        ({"of": ["bm25-word", "bm25-bigram"], "weights": [1, -1]}, "finite and >= 0"),
        (
            {"of": ["bm25-word", "bm25-bigram"], "method": "mnz", "weights": [1, 2]},
            "go with --method wsum",
        ),
    ],
)
def test_fuse_bad_parameters_are_refused(params, message):
    from engine.retrieve import bm25_spec

    existing = [bm25_spec("bm25-word", "word"), bm25_spec("bm25-bigram", "bigram")]
    with pytest.raises(BadInput, match=message):
        check_spec(RetrieverSpec("f", "fuse", params), existing)
