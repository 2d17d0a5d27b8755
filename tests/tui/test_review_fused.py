"""The review screen shows a ``fuse`` retriever like any other."""

from __future__ import annotations

from textual.widgets import DataTable

from engine.scoring import score_workspace
from engine.workspace import Workspace
from tests.conftest import run_cli
from tests.tui.conftest import APP_SIZE, wait_for


async def test_review_scores_a_fused_retriever(app_factory, demo_ws, capsys):
    of = ["--of", "bm25-word,bm25-kiwi", "--norm", "zmuv"]
    assert run_cli(capsys, "retriever", "add", demo_ws, "hybrid", "--kind", "fuse", *of)[0] == 0
    assert run_cli(capsys, "pool", demo_ws, "--retriever", "hybrid")[0] == 0
    with Workspace.open(demo_ws, readonly=True) as ws:
        want = score_workspace(ws, retrievers=["hybrid"]).retrievers["hybrid"].means["mrr"]
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r")
        metrics = app.screen.query_one("#metrics", DataTable)

        def row() -> list[str]:
            for key in metrics.rows:
                cells = [str(c) for c in metrics.get_row(key)]
                if cells and cells[0].strip() == "hybrid":
                    return cells
            return []

        await wait_for(pilot, lambda: bool(row()))
        assert f"{want:.3f}" in row()
        assert app.session.live.means()["hybrid"]["mrr"] == want
