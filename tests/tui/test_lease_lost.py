"""Served: a hold on a question that ran out and went to someone else is told at once.

Two people must never judge one question: once another annotator has taken it, the app
says so and moves on, and the next grade key lands on a question this session holds.
"""

from __future__ import annotations

import sqlite3

from engine.team.assign import Assigner
from engine.workspace import Workspace
from tests.tui.conftest import APP_SIZE
from tests.tui.serve.test_served import unlabel
from tests.tui.test_readonly import record_notifications
from tui.screens.judge import JudgeScreen
from tui.serve.served_app import Served


def expire_leases(path) -> None:
    """Every lease ran out (a laptop asleep, a tab frozen past the lease time)."""
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE leases SET expires = '2000-01-01T00:00:00.000+00:00'")
    db.close()


async def test_a_lost_lease_is_told_and_the_next_grade_goes_to_a_held_question(
    app_factory, demo_ws
):
    unlabel(demo_ws)
    app = app_factory(annotator="ara", served=Served())
    seen = record_notifications(app)
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, JudgeScreen)
        lost = app.screen.question_id
        assert lost is not None
        expire_leases(demo_ws)
        with Workspace.open(demo_ws) as other:
            assert Assigner(other, "bo").hold(lost) == "bo"  # bo takes the question
            app.leases.renew()  # the app's next renewal (its interval timer)
            await pilot.pause()
            assert any(f"{lost} ran out and bo is judging it" in m for m in seen), seen
            now = app.screen.question_id
            assert now is not None and now != lost
            assert app.leases.assigner is not None and app.leases.assigner.current == now
            assert other.leases() == {lost: "bo", now: "ara"}
            await pilot.press("1")
            assert other.labels_for(lost) == []  # nothing of ara's on bo's question
            assert {lab.annotator for lab in other.labels_for(now)} == {"ara"}
