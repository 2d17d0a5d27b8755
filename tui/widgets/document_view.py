"""The selected document's full text, with the question's words highlighted."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from engine.tokenize import bigram_tokens, word_tokens
from engine.types import Doc
from tui.literal import highlighted, literal, visible

SHOWN_FIELDS = ("series", "number", "version", "date")


def question_terms(question: str) -> list[str]:
    """Words of two or more characters and Hangul bigrams: what to highlight."""
    terms = {w for w in word_tokens(question) if len(w) > 1}
    terms |= {b for b in bigram_tokens(question) if len(b) > 1}
    return sorted(terms)


class DocumentView(VerticalScroll, can_focus=False):
    """Title, fields and text of one document (text shown literally)."""

    def compose(self) -> ComposeResult:
        """Head and body."""
        yield Static(id="doc-head")
        yield Static(id="doc-body")

    def show(
        self, doc: Doc | None, terms: list[str], empty: str = "No candidate selected."
    ) -> None:
        """Show a document (None: nothing selected, said with ``empty``)."""
        head = self.query_one("#doc-head", Static)
        body = self.query_one("#doc-body", Static)
        if doc is None:
            head.update(Text(empty, style="dim"))
            body.update("")
            return
        title = literal(doc.title, style="bold")
        title.append(visible(f"  {doc.id}"), style="dim")
        fields = [f"{k}: {doc.fields[k]}" for k in SHOWN_FIELDS if k in doc.fields]
        if fields:
            title.append("\n")
            title.append_text(literal("  ·  ".join(fields), style="dim"))
        head.update(title)
        body.update(highlighted(doc.text, terms))
        self.scroll_home(animate=False)
