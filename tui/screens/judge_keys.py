"""The Label screen's keys and help: its commands (one per key) and the text `?` shows.

The screen (tui/screens/judge.py) takes both as its ``ACTIONS`` and ``HELP``; the help names
keys by command id, written out by :class:`tui.screens.base.GoldpanScreen`.
"""

from __future__ import annotations

from textual.binding import Binding

from engine.grades import GRADE_HELP, GRADE_MEANINGS, NOT_RELEVANT, RELEVANT
from tui.actions import Command

GRADE = Binding.Group("Grade", compact=True)

JUDGE_HELP = f"""
## Label

Below the question, the **pooled candidates**: every retriever's top 10, blind (no
retriever names, ranks or scores), likely relevant first; the document is on the right.

**Grades**: {GRADE_HELP}. `judge.toggle` toggles {RELEVANT} and {NOT_RELEVANT}. Mark
several documents when several answer. `judge.no_answer` says the corpus has no answer;
`judge.ambiguous` flags the question as ambiguous (with a note) for an adjudicator;
`judge.skip` skips it (you cannot judge it).

`judge.search` searches the whole corpus. Every change is saved at once; `judge.undo`
undoes the last. `judge.model_grades` shows a model judge's grades (never gold), hidden
unless you ask.

A **stop** leaves the candidates nobody judged *not judged (stopped)*, never grade 0.

**Auto-advance** (`judge.advance_off` toggles it): a grade moves to the next unjudged
candidate; `judge.no_answer`, `judge.ambiguous`, `judge.skip`, a stop or the last
candidate open the next unjudged question. `judge.no_answer` clears your relevant grades
(`judge.undo` restores them). The line above the footer shows your progress.
"""
"""What `?` shows on the Label screen (keys by command id)."""

JUDGE_ACTIONS = (
    *(
        Command(
            str(grade),
            f"grade({grade})",
            "Grade",
            meaning,
            f"judge.grade{grade}",
            title=f"Label: grade {grade} ({meaning.split(':')[0].lower()})",
            group=GRADE,
            when="can_judge",
        )
        for grade, meaning in enumerate(GRADE_MEANINGS)
    ),
    Command(
        "space",
        "toggle_relevant",
        "Relevant",
        f"Toggle relevant (grade {RELEVANT}) and not relevant (grade {NOT_RELEVANT})",
        "judge.toggle",
        title="Label: toggle relevant",
        show=False,
        when="can_judge",
    ),
    Command(
        "n",
        "no_answer",
        "No answer",
        "Nothing in the corpus answers this question (again: take back)",
        "judge.no_answer",
        title="Label: no answer in the corpus",
        when="can_judge",
    ),
    Command(
        "slash",
        "search",
        "Search",
        "Search the whole corpus for a document the pool missed",
        "judge.search",
        title="Label: search the corpus",
        when="can_judge",
    ),
    Command(
        "u",
        "undo",
        "Undo",
        "Undo your last change",
        "judge.undo",
        title="Label: undo",
        when="can_undo",
    ),
    Command(
        "right_square_bracket",
        "next",
        "Next",
        "Next question",
        "judge.next",
        title="Label: next question",
        when="has_question",
    ),
    Command(
        "left_square_bracket",
        "previous",
        "Previous",
        "Previous question",
        "judge.previous",
        title="Label: previous question",
        show=False,
        when="has_question",
    ),
    Command(
        "a",
        "ambiguous",
        "Ambiguous",
        "Flag it ambiguous, with a note",
        "judge.ambiguous",
        title="Label: flag ambiguous",
        show=False,
        when="can_judge",
    ),
    Command(
        "s",
        "skip",
        "Skip",
        "You cannot judge this question",
        "judge.skip",
        title="Label: skip question",
        show=False,
        when="can_judge",
    ),
    Command(
        "e",
        "edit",
        "Edit question",
        "Rewrite the question (old text kept)",
        "judge.edit",
        title="Label: edit question",
        show=False,
        when="can_judge",
    ),
    Command(
        "x",
        "stop",
        "Stop",
        "Stop the question (again: take back)",
        "judge.stop",
        title="Label: stop this question",
        show=False,
        when="stoppable",
    ),
    Command(
        "b",
        "beyond",
        "Beyond the pool",
        "Find more like the relevant ones",
        "judge.beyond",
        title="Label: find more beyond the pool",
        show=False,
        when="can_judge",
    ),
    Command(
        "m",
        "advance_off",
        "Auto-advance: on",
        "Auto-advance is on: a judgment moves on; press to stay put instead",
        "judge.advance_off",
        title="Label: auto-advance off",
        when="auto_advancing",
    ),
    Command(
        "m",
        "advance_on",
        "Auto-advance: off",
        "Auto-advance is off; press to move on after each judgment",
        "judge.advance_on",
        title="Label: auto-advance on",
        when="not_auto_advancing",
    ),
    Command(
        "g",
        "toggle_model_grades",
        "Model grades",
        "Show or hide model judges' grades",
        "judge.model_grades",
        title="Label: show or hide model grades",
        show=False,
        when="has_question",
    ),
    Command(
        "j",
        "cursor_down",
        "Down",
        "Next candidate",
        "judge.down",
        title="Label: next candidate",
        show=False,
    ),
    Command(
        "k",
        "cursor_up",
        "Up",
        "Previous candidate",
        "judge.up",
        title="Label: previous candidate",
        show=False,
    ),
)
"""The Label screen's commands: its footer, its keys and the command palette."""
