"""The blinded candidate list: titles and your grades, never retriever names, ranks or scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.geometry import Region
from textual.reactive import reactive
from textual.widgets.option_list import Option

from engine.pooling import Candidate
from tui.literal import one_line, visible
from tui.textual_compat import RemeasuringOptionList

GRADE_STYLE = {0: "dim", 1: "green", 2: "bold green", 3: "bold black on green"}
MODEL_STYLE = "italic magenta"
"""A model judge's grade, shown only when asked (the Label screen's `g`)."""


def grade_mark(grade: int | None) -> Text:
    """``[2]`` for a grade, ``[ ]`` when not judged yet."""
    if grade is None:
        return Text("[ ]", style="dim")
    return Text(f"[{grade}]", style=GRADE_STYLE[grade])


class CandidateList(RemeasuringOptionList):
    """Pooled candidates in judging order (blind: no retriever, rank or score), with your grade."""

    HELP = """
Each line is a pooled document: your grade (`[ ]` = not judged), its title and id.
The order is the workspace's judging order (likely relevant first), not any retriever's
ranking: nothing here tells which retriever found a document, at what rank or score.
A `+` marks a document you added with corpus search. With `g`, a model judge's grade
follows yours in italics (`m2`; `m·` where no model graded it), hidden otherwise.
"""

    highlighted: reactive[int | None] = reactive(None, repaint=False)
    """OptionList's, but a move redraws only the two rows it changes (see below)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        """An empty list."""
        super().__init__(id=id)
        self.candidates: list[Candidate] = []
        self.titles: dict[str, str] = {}
        self.grades: dict[str, int] = {}
        self.model: dict[str, str] | None = None
        """Doc id -> the model judges' grades as shown (None: not shown, the default)."""
        self._lit: int | None = None
        """The row last drawn highlighted (replacing the list redraws every row anyway)."""

    def watch_highlighted(self, highlighted: int | None) -> None:
        """Redraw the row the cursor left and the one it is on, no other.

        Textual redraws every row of the list when the highlight moves: the cost of a
        cursor move grew with the list, and was a third of each key's drawing. A move that
        scrolls the list redraws it all (the scroll does).
        """
        super().watch_highlighted(highlighted)
        for index in (self._lit, highlighted):
            if index is not None:
                self._refresh_option(index)
        self._lit = highlighted

    def _refresh_option(self, index: int) -> None:
        """Redraw the lines of one option (all of the list when it is not laid out yet)."""
        lines = self.option_lines(index)
        if lines is None:
            self.refresh()
            return
        y, height = lines
        self.refresh(Region(0, y - self.scroll_offset.y, self.size.width, height))

    @property
    def current(self) -> Candidate | None:
        """The highlighted candidate."""
        if self.highlighted is None or not self.candidates:
            return None
        return self.candidates[self.highlighted]

    def _prompt(self, c: Candidate) -> Text:
        text = grade_mark(self.grades.get(c.doc_id))
        if self.model is not None:
            mark = self.model.get(c.doc_id)
            text.append(" m" + (mark or "·"), style=MODEL_STYLE if mark else "dim italic")
        text.append(" ")
        text.append_text(one_line(self.titles.get(c.doc_id, c.doc_id), 48))
        text.append(visible(f"  {c.doc_id}"), style="dim")
        if c.added_by_search:
            text.append(" +", style="yellow")
        return text

    def show(
        self,
        candidates: Sequence[Candidate],
        titles: Mapping[str, str],
        grades: Mapping[str, int] | None = None,
        *,
        keep: bool = True,
        model: Mapping[str, str] | None = None,
    ) -> None:
        """Replace the list; the cursor goes to the first document not graded yet.

        With ``keep`` it stays on the same document when that is still listed. A question
        just opened passes ``keep=False``: a document also pooled for the last question
        must not carry the cursor to a row the annotator has not read. ``model``: the
        model judges' grades to show beside yours (None, the default: none shown).
        """
        kept = self.current.doc_id if keep and self.current else None
        self.candidates = list(candidates)
        self.titles = dict(titles)
        self.grades = dict(grades or {})
        self.model = None if model is None else dict(model)
        # no watcher sees the list without a row highlighted, in between: the document view
        # would be emptied, and then show the same document again from its top
        self.set_reactive(CandidateList.highlighted, None)
        self.clear_options()
        self.add_options([Option(self._prompt(c), id=c.doc_id) for c in self.candidates])
        if self.candidates:
            ids = [c.doc_id for c in self.candidates]
            self.highlighted = ids.index(kept) if kept in ids else self.first_unjudged()

    def first_unjudged(self) -> int:
        """The row of the first document not graded yet (the first row when all are)."""
        return next((i for i, c in enumerate(self.candidates) if c.doc_id not in self.grades), 0)

    def set_model(self, marks: Mapping[str, str] | None) -> None:
        """Show the model judges' grades (``None``: hide them) and redraw the marks."""
        self.model = None if marks is None else dict(marks)
        for c in self.candidates:
            self.replace_option_prompt(c.doc_id, self._prompt(c))

    def set_grades(self, grades: Mapping[str, int]) -> None:
        """Redraw the grade marks that changed, in place.

        Textual's ``replace_option_prompt`` forgets every option's drawing and every
        line's height, so the whole list was measured and drawn again once per candidate
        on every grade. A grade mark is three cells whatever the grade: the lines keep
        their heights, and only the options whose mark changed are drawn again.
        """
        old, self.grades = self.grades, dict(grades)
        for index, c in enumerate(self.candidates):
            if old.get(c.doc_id) != self.grades.get(c.doc_id):
                self._redraw_option(index, c)

    def _redraw_option(self, index: int, c: Candidate) -> None:
        """A new prompt of the same width for one option: only its drawing is dropped."""
        option = self.get_option_at_index(index)
        before = option.prompt
        prompt = self._prompt(c)
        if not isinstance(before, Text) or before.cell_len != prompt.cell_len:
            self.replace_option_prompt_at_index(index, prompt)  # its height may change
            return
        self.set_prompt_same_width(index, prompt)
        self._refresh_option(index)

    def select(self, doc_id: str) -> None:
        """Move the cursor to a document."""
        for i, c in enumerate(self.candidates):
            if c.doc_id == doc_id:
                self.highlighted = i
