"""A few lines of text that change on every key: redrawn without a layout pass when they can.

Textual's ``Static.update`` re-lays out the whole screen by default, in case the new text
needs another height; on the label screen that doubled the work of every grade (the
progress and status lines change on each one). :class:`Lines` measures the new text at its
width first and skips the layout when the height stays the same.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class Lines(Static):
    """A ``Static`` of rich ``Text`` whose updates re-lay out only on a change of height."""

    def show(self, text: Text | str) -> None:
        """Show ``text``; the screen's layout is redone only if its height changes."""
        content = text if isinstance(text, Text) else Text(text)
        width = self.size.width
        if width <= 0 or not self.is_mounted:
            self.update(content)
            return
        needed = len(content.wrap(self.app.console, width)) if content.plain else 1
        limit = self.styles.max_height
        if limit is not None and limit.is_cells:
            gutter = self.styles.gutter.height if self.styles.box_sizing == "border-box" else 0
            needed = min(needed, int(limit.value) - gutter)
        self.update(content, layout=needed != self.size.height)
