"""What the screens share: the current question, the order `[` and `]` walk, auto-advance.

One object, made by the app and passed to every screen it opens
(:class:`~tui.screens.base.GoldpanScreen`): a screen reads and sets these here, never as
attributes of the app.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SharedState:
    """The state every screen means the same thing by."""

    current_question: str | None = None
    """The question every screen means by "current": the judge screen shows it, and the
    cursor of the questions, review and adjudicate lists rests on it."""
    question_order: list[str] = field(default_factory=list)
    """The order `[` and `]` walk (the questions screen's filtered list)."""
    auto_advance: bool = True
    """After a judgment, move on: to the next candidate after a grade, to the next
    question after a verdict or when every candidate is judged."""
    previous_mode: str = "questions"
    """The screen shown before the current one (escape on Write goes back to it)."""

    def open(self, question_id: str, order: list[str] | None = None) -> None:
        """Make ``question_id`` current; ``order``, when given, is the walk from now on."""
        self.current_question = question_id
        if order:
            self.question_order = order
