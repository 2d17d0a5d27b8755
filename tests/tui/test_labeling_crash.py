"""kill -9 while labeling in the TUI: every grade the screen showed as saved survives.

The app runs in a subprocess (a ``python -c`` script driving it with Textual's pilot), is
SIGKILLed after it has shown some grades saved, and the workspace is then checked as
tests/engine/test_crash.py checks the engine's own jobs (whose helpers it shares).
"""

from __future__ import annotations

import random

import pytest

from engine.retrieve import bm25_spec
from engine.retrieve.runner import refresh_runs
from engine.types import Doc, Question
from engine.workspace import Workspace
from tests.conftest import snapshot
from tests.engine.test_crash import (
    WORDS,
    assert_saved_survived,
    complete_saved_lines,
    kill_after_lines,
    script,
)

TUI_LABELER = """
import asyncio, sys
from pathlib import Path
from tui.app import GoldpanApp
from tui.screens.judge import JudgeScreen
from tui.widgets.candidate_list import CandidateList

async def main():
    app = GoldpanApp(
        Path(sys.argv[1]), annotator="tui-crash", warm_indexes=False, animations=False,
        blink=False,
    )
    app.state.auto_advance = False  # the script walks the candidates itself (j, ])
    async with app.run_test(size=(120, 40)) as pilot:
        ids = list(app.session.live.question_ids)
        app.judge(ids[0])
        await pilot.pause()
        for n, qid in enumerate(ids):
            if n:
                await pilot.press("right_square_bracket")  # the next question
            assert isinstance(app.screen, JudgeScreen) and app.screen.question_id == qid
            cands = app.screen.query_one(CandidateList)
            for i, cand in enumerate(list(cands.candidates)):
                assert cands.current is not None and cands.current.doc_id == cand.doc_id
                grade = 1 + (i + int(qid[1:])) % 3
                await pilot.press(str(grade))
                line = str(cands.get_option_at_index(i).prompt)
                assert line.startswith(f"[{grade}]"), line  # the screen shows it saved
                print("saved", qid, cand.doc_id, grade, flush=True)
                await pilot.press("j")
    print("done", flush=True)

asyncio.run(main())
"""


@pytest.mark.timeout(180)
def test_kill_9_while_labeling_in_the_tui_keeps_every_grade_it_showed(tmp_path):
    path = tmp_path / "tui.db"
    rnd = random.Random(5)
    ws = Workspace.create(path)
    ws.write_docs(
        Doc(f"d{i:03d}", f"title {i}", " ".join(rnd.choices(WORDS, k=20))) for i in range(80)
    )
    ws.write_questions(Question(f"q{i:03d}", " ".join(rnd.choices(WORDS, k=3))) for i in range(30))
    for name, tok in (("word", "word"), ("bigram", "bigram")):
        ws.add_retriever(bm25_spec(name, tok))
    refresh_runs(ws)  # every question pooled: the judge screen has candidates at once
    ws.close()
    before = snapshot(path)
    log = tmp_path / "tui.log"
    seen = kill_after_lines(script(TUI_LABELER, path, log=log), 20, log)
    shown = complete_saved_lines(seen)
    assert len(shown) >= 20
    assert_saved_survived(path, before, shown, "tui-crash")
