"""A received workspace whose command retriever never ranked a question here.

The command is not trusted on this machine, so nothing may run it, and it must not hold the
other retrievers' questions out of their scores either: a sender could otherwise blank
every score of a test set (0.000 over no question) by adding one command. The other
retrievers score exactly as without it; the command's own row says it is not ranked.
"""

from __future__ import annotations

import json

from engine.gold import COUNT_KEYS
from engine.scoring import metric_names, score_workspace
from engine.trust import TrustStore
from engine.workspace import Workspace
from tests.cli.test_trust import crafted, digest
from tests.conftest import run_cli
from tests.tui.conftest import APP_SIZE, wait_for
from tests.tui.serve.test_served_trust import app_over
from tests.tui.test_ranked_behind import shown_means
from tui.screens.review import REVIEW_METRICS, ReviewScreen
from tui.serve.served_app import Served

FAST = ["bm25-word", "bm25-bigram"]
"""The crafted workspace's own retrievers, pooled by its sender."""


def test_a_command_that_never_ranked_leaves_the_others_scores_as_they_were(tmp_path, capsys):
    path, marker, _ = crafted(tmp_path)
    with Workspace.open(path, readonly=True) as ws:
        alone = score_workspace(ws, retrievers=FAST)
    before = digest(path)
    code, out, err = run_cli(capsys, "score", path, "--json")
    assert code == 0, err
    board = json.loads(out)
    assert board["questions"] == alone.counts and board["questions"]["not_ranked"] == 0
    for name in FAST:
        assert {m: board["retrievers"][name][m] for m in metric_names()} == (
            alone.retrievers[name].means
        )
    sneaky = board["retrievers"]["sneaky"]
    assert all(sneaky[m] is None for m in metric_names()) and sneaky["not_ranked"] == 2
    assert not marker.exists()  # never run
    assert digest(path) == before  # nothing written
    assert TrustStore().entries() == []


async def test_a_served_app_scores_the_others_on_every_question_without_running_it(tmp_path):
    path, marker, _ = crafted(tmp_path)
    with Workspace.open(path, readonly=True) as ws:
        alone = score_workspace(ws, retrievers=FAST)
    app = app_over(path, served=Served())
    async with app.run_test(size=APP_SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.live.cannot_rank == {"sneaky"})
        await app.workers.wait_for_complete()
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        review = app.screen
        assert isinstance(review, ReviewScreen)
        await wait_for(pilot, lambda: bool(review.query("#metrics") and shown_means(review)))
        means = shown_means(review)
        for name in FAST:
            shown = alone.retrievers[name].means
            assert shown is not None
            assert means[name] == [f"{shown[m]:.3f}" for m in REVIEW_METRICS]
        assert means["sneaky"] == ["-"] * len(REVIEW_METRICS)
        assert app.session.live.counts() == {k: alone.counts[k] for k in COUNT_KEYS}
    assert not marker.exists()
    assert TrustStore().entries() == []
