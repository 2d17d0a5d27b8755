"""What every goldpan screen shares: the typed app, the cursor row of a table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen
from textual.widgets import DataTable

if TYPE_CHECKING:
    from tui.app import GoldpanApp


class GoldpanScreen(Screen[None]):
    """A screen of the goldpan app."""

    @property
    def gp(self) -> GoldpanApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    def next_tag(self, current: str | None) -> str | None:
        """The tag after ``current`` in the cycle all -> each tag -> all."""
        tags: list[str | None] = [None, *self.gp.session.live.all_tags()]
        i = tags.index(current) if current in tags else 0
        return tags[(i + 1) % len(tags)]


def cursor_key(table: DataTable[object]) -> str | None:
    """The key of the row under a table's cursor (None when the table is empty)."""
    if not table.row_count:
        return None
    value = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    return None if value is None else str(value)
