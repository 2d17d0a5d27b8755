"""The README's key table and the bindings agree; every binding explains itself."""

from __future__ import annotations

import re

from tests.conftest import ROOT
from tui.app import GoldpanApp
from tui.screens.adjudicate import AdjudicateScreen
from tui.screens.judge import JudgeScreen
from tui.screens.questions import QuestionsScreen
from tui.screens.review import ReviewScreen
from tui.screens.write import WriteScreen

SCREENS = {
    "global": GoldpanApp,
    "questions": QuestionsScreen,
    "write": WriteScreen,
    "label": JudgeScreen,
    "review": ReviewScreen,
    "adjudicate": AdjudicateScreen,
}
NAMES = {
    "question_mark": "?",
    "slash": "/",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "space": "space",
    "plus": "+",
    "minus": "-",
}


def shown(key: str) -> str:
    return " / ".join(NAMES.get(k, k) for k in key.split(","))


def bindings() -> set[tuple[str, str, str]]:
    out = set()
    for screen, cls in SCREENS.items():
        for b in cls.BINDINGS:
            key = shown(b.key)
            if screen == "adjudicate" and key.isdigit():
                key = "1-9"  # one row in the README for the nine "take side" keys
            out.add((screen, key, b.description))
    return out


def readme_keys() -> set[tuple[str, str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Keys", 1)[1].split("\n## ", 1)[0]
    rows = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[1].startswith("`"):
            rows.add((cells[0], re.sub(r"`", "", cells[1]), cells[2]))
    return rows


def test_every_binding_has_a_description_tooltip_and_id():
    for cls in SCREENS.values():
        for b in cls.BINDINGS:
            assert b.description and b.tooltip and b.id, b


def test_readme_key_table_matches_the_bindings():
    assert readme_keys() == bindings()


def test_footers_show_at_most_seven_keys():
    app_shown = [b for b in GoldpanApp.BINDINGS if b.show]
    for cls in SCREENS.values():
        if cls is GoldpanApp:
            continue
        entries = set()
        for b in cls.BINDINGS:
            if b.show:
                entries.add(b.group.description if b.group else b.key)
        assert len(entries) + len(app_shown) <= 7, cls.__name__
