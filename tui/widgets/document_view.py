"""The selected document's full text, with the question's words highlighted.

A document can be megabytes long. Rendering all of it at once (wrapping, highlighting,
one strip per line) took seconds and a few hundred bytes per character, while the
previous document stayed on screen. So the text is shown in parts of about
:data:`PART_CHARS` characters: the first part at once, the next one whenever the view is
scrolled to the end of what is shown, with a line below saying how much is still to come.
Only the parts shown are highlighted and rendered.
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


class DocumentView(VerticalScroll, can_focus=False):
    """Title, fields and text of one document (text shown literally, part by part)."""

    def compose(self) -> ComposeResult:
        """Head, the first part of the body, and what is still to come."""
        yield Static(id="doc-head")
        yield Static(id="doc-body")
        yield Static(id="doc-more")

    def on_mount(self) -> None:
        """Read on when scrolled to the end of what is shown."""
        self._text = ""
        self._terms: list[str] = []
        self._shown = 0  # characters of the text shown so far
        self._shown_bytes = self._bytes = 0  # their size in UTF-8, and the whole text's
        self._read_at = -1  # max_scroll_y when the last part was added (not laid out yet)
        self.watch(self, "scroll_y", self._scrolled, init=False)

    def shown_text(self) -> str:
        """The part of the document's text on show (from its start)."""
        return self._text[: self._shown]

    def show(
        self, doc: Doc | None, terms: list[str], empty: str = "No candidate selected."
    ) -> None:
        """Show a document (None: nothing selected, said with ``empty``)."""
        head = self.query_one("#doc-head", Static)
        body = self.query_one("#doc-body", Static)
        self.query(".doc-part").remove()
        self._text, self._terms, self._shown = (doc.text if doc else ""), terms, 0
        self._shown_bytes, self._bytes = 0, _utf8_bytes(self._text)
        self._read_at = -1
        if doc is None:
            head.update(Text(empty, style="dim"))
            body.update("")
            self._more()
            return
        title = literal(doc.title, style="bold")
        title.append(visible(f"  {doc.id}"), style="dim")
        fields = [f"{k}: {doc.fields[k]}" for k in SHOWN_FIELDS if k in doc.fields]
        if fields:
            title.append("\n")
            title.append_text(literal("  ·  ".join(fields), style="dim"))
        head.update(title)
        body.update(self._next_part())
        self._more()
        self.scroll_home(animate=False)

    def _next_part(self) -> Text:
        """The next part of the text, highlighted; marks it as shown."""
        start = self._shown
        self._shown = part_end(self._text, start)
        part = self._text[start : self._shown]
        self._shown_bytes += _utf8_bytes(part)
        return highlighted(part.removesuffix("\n"), self._terms)

    def _more(self) -> None:
        """Say how much of the text is still to come, and read on if it all fits."""
        more = self.query_one("#doc-more", Static)
        if self._shown >= len(self._text):
            more.update("")
            more.display = False
            return
        more.display = True
        more.update(
            Text(
                f"… showing {self._shown_bytes / 1024:,.0f} KB of {self._bytes / 1024:,.0f} KB; "
                "scroll down to read on",
                style="dim italic",
            )
        )
        self.call_after_refresh(self._scrolled)

    def read_on(self) -> None:
        """Show the next part of the text below the ones shown."""
        if self._shown >= len(self._text):
            return
        self._read_at = self.max_scroll_y
        part = Static(self._next_part(), classes="doc-part")
        self.mount(part, before=self.query_one("#doc-more"))
        self._more()

    def _scrolled(self) -> None:
        """Within two screens of the end of what is shown: read on (before it is reached)."""
        if self._shown >= len(self._text) or not self.size.height:
            return  # all shown, or not on screen (nothing to measure yet)
        if self.max_scroll_y == self._read_at:
            return  # the last part is not laid out yet: wait for its height
        if self.scroll_y >= self.max_scroll_y - 2 * self.size.height:
            self.read_on()
