"""Label's `b`: feedback proposes documents, which come first among the candidates.

Feedback ranks every document nobody judged, pooled candidates included
(:func:`engine.judging.feedback.next_round`): a proposal beyond the pool joins the candidates, one
already among them moves up, and the notice says how many of each.
"""

from __future__ import annotations

import re

from tests.tui.conftest import APP_SIZE, open_judge, rows, wait_for
from tui.textual_compat import notification_messages
from tui.widgets.candidate_list import CandidateList


async def test_b_proposes_documents_and_says_how_many_are_beyond_the_pool(app_factory, demo_ws):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = await open_judge(pilot, "q16")
        candidates = screen.query_one(CandidateList)
        await wait_for(pilot, lambda: candidates.option_count > 0)
        await pilot.press("m")  # auto-advance off: stay on q16 after the grade
        await pilot.press("2")  # a relevant document: what feedback learns from
        before = {c.doc_id for c in candidates.candidates}
        await pilot.press("b")
        await wait_for(
            pilot, lambda: "for q16" in " ".join(notification_messages(app)), timeout=120
        )
        assert not screen.finding
        proposed = [d for (d,) in rows(demo_ws, "SELECT doc_id FROM proposals")]
        assert proposed  # kept in the file the moment they are shown
        beyond = [d for d in proposed if d not in before]
        await wait_for(pilot, lambda: len(candidates.candidates) == len(before) + len(beyond))
        said = " ".join(notification_messages(app))
        if len(beyond) == len(proposed):
            assert f"{len(proposed)} more documents for q16" in said, said
        else:
            moved = len(proposed) - len(beyond)
            told = re.search(r"\((\d+) beyond the pool, (\d+) of its candidates moved up\)", said)
            assert told and told.groups() == (str(len(beyond)), str(moved)), said
        # what feedback proposed comes first among the documents not graded yet
        ungraded = [c.doc_id for c in candidates.candidates if c.doc_id not in candidates.grades]
        assert set(ungraded[: len(proposed)]) == set(proposed)
