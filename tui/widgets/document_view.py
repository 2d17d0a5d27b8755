"""The selected document's full text, with the question's words highlighted.

A document can be megabytes long. Rendering all of it at once (wrapping, highlighting,
one strip per line) took seconds and a few hundred bytes per character, while the
previous document stayed on screen. So the text is shown in parts of about
:data:`PART_CHARS` characters: the first part at once, the next one whenever the view is
scrolled near the end of what is shown, the one before when scrolled near its top, with
a line saying how much is still below (or above). At most :data:`MOST_PARTS` parts are
on show, a window that slides with the scrolling: only they are highlighted and
rendered, so reading to the end of a big document costs no more than its start.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from engine.tokenize import bigram_tokens, word_tokens
from engine.types import Doc
from tui.literal import highlighted, literal, visible

SHOWN_FIELDS = ("series", "number", "version", "date")
PART_CHARS = 4_096
"""About how many characters of a document one part shows (a few screens)."""
MOST_PARTS = 8
"""How many parts are on show at most (the window that slides as one scrolls)."""


def question_terms(question: str) -> list[str]:
    """Words of two or more characters and Hangul bigrams: what to highlight."""
    terms = {w for w in word_tokens(question) if len(w) > 1}
    terms |= {b for b in bigram_tokens(question) if len(b) > 1}
    return sorted(terms)


def part_end(text: str, start: int, size: int = PART_CHARS) -> int:
    """Where the part of ``text`` from ``start`` ends.

    After a line break or a space in its second half when there is one (no word is cut),
    else after ``size`` characters.
    """
    end = start + size
    if end >= len(text):
        return len(text)
    for sep in ("\n", " "):
        cut = text.rfind(sep, start + size // 2, end)
        if cut >= 0:
            return cut + 1
    return end


def _utf8_bytes(chars: str) -> int:
    return len(chars.encode("utf-8", "surrogatepass"))


class Part(Static):
    """A piece of the view (the head, a note, a part of the text).

    Textual lays the screen out a second time when a part's size changes (its virtual size
    is a reactive, for scrollbars a part never has). Skipping that pass through a private
    Textual name saved under 10% of a move's time (``benchmarks/bench_textual_compat.py``:
    CPU 2-4%, wall 4-12% in two loaded runs), so a part is a plain ``Static``.
    """


class DocumentView(VerticalScroll, can_focus=False):
    """Title, fields and text of one document (text shown literally, part by part)."""

    def compose(self) -> ComposeResult:
        """Head, what is above the window, its first part, and what is below it."""
        yield Part(id="doc-head")
        yield Part(id="doc-above")
        yield Part(id="doc-body")
        yield Part(id="doc-more")

    def on_mount(self) -> None:
        """Read on (or back) when scrolled near the end (or the top) of what is shown."""
        self._doc: Doc | None = None  # the document on show
        self._text = ""
        self._terms: list[str] = []
        self._cuts = [0]  # where the parts found so far start (the last: where one ends)
        self._first = 0  # the first part on show (in #doc-body)
        self._parts: list[Part] = []  # the widgets of the parts after it
        self._bytes = 0  # the whole text's size in UTF-8
        self._waiting = False  # a part was added or removed and is not laid out yet
        self.query_one("#doc-above").display = False
        self.watch(self, "scroll_y", self._scrolled, init=False)

    def shown_text(self) -> str:
        """The text of the parts on show, in order."""
        return self._text[self._cuts[self._first] : self._cuts[self._first + self._count]]

    @property
    def _count(self) -> int:
        return 1 + len(self._parts) if self._text else 0

    def show(
        self, doc: Doc | None, terms: list[str], empty: str = "No candidate selected."
    ) -> None:
        """Show a document (None: nothing selected, said with ``empty``).

        The document on show already, with the same words highlighted, stays as it is,
        scrolled where it was (a question drawn again shows its candidate once more).
        """
        if doc is not None and doc == self._doc and terms == self._terms:
            return
        self._doc = doc
        head = self.query_one("#doc-head", Static)
        body = self.query_one("#doc-body", Static)
        for part in self._parts:
            part.remove()
        self._parts = []
        self._text, self._terms = (doc.text if doc else ""), terms
        self._cuts, self._first = [0], 0
        self._bytes = _utf8_bytes(self._text)
        if doc is None:
            head.update(Text(empty, style="dim"))
            body.update("")
            self._notes()
            return
        title = literal(doc.title, style="bold")
        title.append(visible(f"  {doc.id}"), style="dim")
        fields = [f"{k}: {doc.fields[k]}" for k in SHOWN_FIELDS if k in doc.fields]
        if fields:
            title.append("\n")
            title.append_text(literal("  ·  ".join(fields), style="dim"))
        head.update(title)
        body.update(self._part(0))
        self._notes()
        self.scroll_home(animate=False, immediate=True)

    def _span(self, i: int) -> tuple[int, int]:
        """Where part ``i`` starts and ends (cut the first time it is asked for)."""
        while len(self._cuts) <= i + 1:
            self._cuts.append(part_end(self._text, self._cuts[-1]))
        return self._cuts[i], self._cuts[i + 1]

    def _part(self, i: int) -> Text:
        """Part ``i`` of the text, highlighted."""
        start, end = self._span(i)
        return highlighted(self._text[start:end].removesuffix("\n"), self._terms)

    def _notes(self) -> None:
        """Say how much of the text is above and below what is shown."""
        above = self.query_one("#doc-above", Static)
        more = self.query_one("#doc-more", Static)
        start = self._cuts[self._first]
        end = self._span(self._first + self._count - 1)[1] if self._text else 0
        above.display = start > 0
        above.update(
            Text(
                f"… {_utf8_bytes(self._text[:start]) / 1024:,.0f} KB above: scroll up to read back",
                style="dim italic",
            )
        )
        more.display = end < len(self._text)
        more.update(
            Text(
                f"… showing {_utf8_bytes(self._text[:end]) / 1024:,.0f} KB of "
                f"{self._bytes / 1024:,.0f} KB; scroll down to read on",
                style="dim italic",
            )
        )
        self._waiting = True
        self.call_after_refresh(self._laid_out)

    def _laid_out(self) -> None:
        """The parts are laid out: their heights are known; read on if near the end."""
        self._waiting = False
        self._scrolled()

    def read_on(self) -> None:
        """Show the next part below the ones shown (the first one leaves when too many)."""
        nxt = self._first + self._count
        if self._span(nxt - 1)[1] >= len(self._text):
            return
        if self._count >= MOST_PARTS:  # the text on screen stays where it is
            body = self.query_one("#doc-body", Static)
            above = self.query_one("#doc-above", Static)
            gone = body.outer_size.height - (0 if above.display else 1)  # the note appears
            body.update(self._part(self._first + 1))
            self._parts.pop(0).remove()
            self._first += 1
            self.scroll_to(y=max(0, self.scroll_y - gone), animate=False, immediate=True)
        part = Part(self._part(nxt), classes="doc-part")
        self._parts.append(part)
        self.mount(part, before=self.query_one("#doc-more"))
        self._notes()

    def read_back(self) -> None:
        """Show the part before the ones shown (the last one leaves when too many)."""
        if self._first == 0:
            return
        body = self.query_one("#doc-body", Static)
        moved = Part(self._part(self._first), classes="doc-part")
        self._parts.insert(0, moved)
        self.mount(moved, after=body)
        self._first -= 1
        body.update(self._part(self._first))
        if self._count > MOST_PARTS:
            self._parts.pop().remove()
        y, note = self.scroll_y, 0 if self._first else 1  # the note above may leave
        # once laid out, keep the text on screen where it was: below the part put back
        # (before _notes asks to read on, which must see the scroll where it now is)
        self.call_after_refresh(
            lambda: self.scroll_to(
                y=y + body.outer_size.height - note, animate=False, immediate=True
            )
        )
        self._notes()

    def _scrolled(self) -> None:
        """Near the end of what is shown: read on; near its top: read back."""
        if not self._text or not self.size.height:
            return  # nothing to read, or not on screen (nothing to measure yet)
        if self._waiting:
            return  # a part is not laid out yet: wait for its height
        if self.scroll_y >= self.max_scroll_y - 2 * self.size.height:
            self.read_on()
        elif self._first and self.scroll_y <= self.size.height:
            self.read_back()
