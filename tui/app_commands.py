"""The app's own commands (every screen) and its screens, declared once.

The app binds them (:mod:`tui.app`); the help screen and the README's key table list them
(:mod:`tui.help`), without importing the app.
"""

from __future__ import annotations

from tui.actions import Command
from tui.screens.adjudicate import AdjudicateScreen
from tui.screens.base import GoldpanScreen
from tui.screens.judge import JudgeScreen
from tui.screens.questions import QuestionsScreen
from tui.screens.review import ReviewScreen
from tui.screens.write import WriteScreen

SCREENS: dict[str, type[GoldpanScreen]] = {
    "questions": QuestionsScreen,
    "write": WriteScreen,
    "judge": JudgeScreen,
    "review": ReviewScreen,
    "adjudicate": AdjudicateScreen,
}
"""Each mode of the app and its screen."""

ACTIONS = (
    Command(
        "q",
        "switch_mode('questions')",
        "Questions",
        "Every question with its status, tags and labels",
        "questions",
        title="Go: questions",
        show=False,
    ),
    Command(
        "w",
        "switch_mode('write')",
        "Write",
        "Write a new question without seeing any document",
        "write",
        title="Go: write",
        show=False,
    ),
    Command(
        "l",
        "switch_mode('judge')",
        "Label",
        "Judge the pooled candidates of the current question",
        "judge",
        title="Go: label",
        show=False,
    ),
    Command(
        "r",
        "switch_mode('review')",
        "Review",
        "Scores per retriever and per question, live",
        "review",
        title="Go: review",
        show=False,
    ),
    Command(
        "d",
        "switch_mode('adjudicate')",
        "Adjudicate",
        "Settle disputed and ambiguous questions",
        "adjudicate",
        title="Go: adjudicate",
        show=False,
    ),
    Command(
        "question_mark,f1",
        "toggle_help",
        "Help",
        "Show or hide how to move around, the keys and what this screen is for",
        "help",
        title="Help: keys and what this screen is for",
    ),
    Command(
        "ctrl+r",
        "reload",
        "Reload",
        "Re-read the workspace (see other annotators' labels)",
        "reload",
        title="Workspace: reload",
        show=False,
    ),
    Command(
        "ctrl+q",
        "quit",
        "Quit",
        "Quit goldpan; every label is already saved",
        "quit",
        title="App: quit",
        show=False,
        priority=True,
    ),
)
"""The global commands (every screen); the first five switch screens."""
SCREEN_KEYS = ACTIONS[:5]
"""The commands that move between screens (the first line of help)."""
