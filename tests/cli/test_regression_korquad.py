"""The regression gate on KorQuAD 1.0 dev, paragraph level, checked against a reference.

A snapshot of ``bm25-word`` is taken, the retriever's k1 is changed (removed and added
again, as a user would), and ``score --against`` must list exactly the questions whose
first-gold rank moved, with both ranks and the new rank-1 document. The ranks are
recomputed here independently: a plain-Python Lucene BM25 written from docs/numbers.md (the
same reference as tests/engine/test_reference_korquad.py, with k1 as a parameter).

The whole corpus (964 paragraphs) is kept; every 8th question is asked (722), to keep the
test's runtime modest. The data (CC BY-ND) is read from ``shared/data`` beside the
repository and never copied; the test skips when it is absent.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_reference_korquad import (
    KORQUAD,
    RefLuceneBM25,
    ref_collection,
    ref_ranking,
    ref_word,
)
from tui.cli import main

K1_THEN = 1.5
K1_NOW = 0.6
EVERY = 8


def reference_ranks(coll: Any, k1: float) -> tuple[dict[str, int], dict[str, str | None]]:
    """question -> rank of its gold paragraph (0: not in the top 100), and the rank-1 doc."""
    index = RefLuceneBM25([ref_word(t) for t in coll.doc_texts], k1)
    ranks: dict[str, int] = {}
    top: dict[str, str | None] = {}
    for qid, text, gold in coll.questions:
        scores = index.scores(ref_word(text))
        ids = [d for d, _ in ref_ranking({coll.doc_ids[d]: s for d, s in scores.items()})]
        ranks[qid] = ids.index(gold) + 1 if gold in ids else 0
        top[qid] = ids[0] if ids else None
    return ranks, top


@pytest.fixture(scope="module")
def subset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """Every paragraph of KorQuAD dev, every 8th question: a SQuAD file and its reference."""
    if not KORQUAD.is_file():
        pytest.skip(f"KorQuAD 1.0 dev not found at {KORQUAD} (shared/data is not beside the repo)")
    data = json.loads(KORQUAD.read_text(encoding="utf-8"))
    n = 0
    for article in data["data"]:
        for para in article["paragraphs"]:
            kept = []
            for qa in para["qas"]:
                if n % EVERY == 0:
                    kept.append(qa)
                n += 1
            para["qas"] = kept
    path = tmp_path_factory.mktemp("korquad-subset") / "korquad-subset.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path, ref_collection(data, "paragraph")


def test_score_against_lists_exactly_the_moved_questions(
    subset: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    squad, coll = subset
    assert 700 < len(coll.questions) < 750 and len(coll.doc_ids) == 964
    ws = str(tmp_path / "ws.db")
    assert main(["new", ws]) == 0
    assert main(["import", "squad", ws, str(squad), "--level", "paragraph"]) == 0
    assert main(["snapshot", ws, "base", "--retriever", "bm25-word"]) == 0
    # change k1 the way a user does: remove the retriever and add it again
    assert main(["retriever", "remove", ws, "bm25-word"]) == 0
    assert main(["retriever", "add", ws, "bm25-word", "--k1", str(K1_NOW)]) == 0
    capsys.readouterr()
    argv = ["score", ws, "--against", "base", "--retriever", "bm25-word", "--quiet"]
    assert main([*argv, "--json", "--samples", "500"]) == 0
    report = json.loads(capsys.readouterr().out)

    then, _ = reference_ranks(coll, K1_THEN)
    now, top_now = reference_ranks(coll, K1_NOW)
    moved = {q for q in then if then[q] != now[q]}
    assert len(moved) > 20, "k1 0.6 vs 1.5 should move some questions"

    r = report["retrievers"]["bm25-word"]
    listed = r["regressed"] + r["improved"]
    assert {m["question"] for m in listed} == moved
    assert len(listed) == len(moved)  # no question twice
    for m in listed:
        q = m["question"]
        assert (m["rank_then"], m["rank_now"]) == (then[q], now[q]), q
        assert m["winner"] == top_now[q], q
        assert m["cause"] == "retriever"  # the labels did not change
        worse = now[q] == 0 or (then[q] != 0 and now[q] > then[q])
        assert (m in r["regressed"]) == worse, q
    assert r["regressed"] and r["improved"]
    # the means are those of the reference ranks (one gold paragraph per question)
    n = len(coll.questions)
    mrr_then = math.fsum(1 / x for x in then.values() if x) / n
    mrr_now = math.fsum(1 / x for x in now.values() if x) / n
    mrr = r["metrics"]["mrr"]
    assert mrr["then"] == pytest.approx(mrr_then, abs=1e-12)
    assert mrr["now"] == pytest.approx(mrr_now, abs=1e-12)
    assert mrr["diff"] == pytest.approx(mrr_now - mrr_then, abs=1e-12)
    lo, hi = mrr["ci95"]
    assert lo <= mrr["diff"] <= hi
    assert r["changed_config"] is True

    # the gate: exit 1 on a regression, 0 when nothing regressed
    assert main([*argv, "--fail-on-regression"]) == 1
    assert "regressed since base" in capsys.readouterr().err
    assert main(["snapshot", ws, "after", "--retriever", "bm25-word"]) == 0
    assert main(["score", ws, "--against", "after", "--retriever", "bm25-word",
                 "--quiet", "--fail-on-regression"]) == 0  # fmt: skip
    # a tolerance above every finite rank loss lets only lost golds fail the gate
    finite = [then[q] for q in moved if now[q] != 0 and then[q] != 0 and now[q] > then[q]]
    lost = [q for q in moved if now[q] == 0 and then[q] != 0]
    rc = main([*argv, "--fail-on-regression", "--tolerance", "100"])
    assert rc == (1 if lost else 0)
    assert finite  # the tolerance above did excuse some questions
