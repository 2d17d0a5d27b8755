"""The read-only banner: one line under the header saying the workspace is for review only."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.literal import literal


def read_only_text(reason: str) -> Text:
    """What the banner says: read-only, why, and what still works."""
    text = Text("READ-ONLY ", style="bold")
    text.append_text(literal(f"({reason})"))
    text.append(": review only; labels, verdicts and questions cannot be changed.")
    return text


class ReadOnlyBanner(Static):
    """Shown on every screen while the workspace is open read-only."""

    def __init__(self, reason: str) -> None:
        """Say why the workspace is read-only."""
        super().__init__(read_only_text(reason), id="read-only-banner")
        self.reason = reason
