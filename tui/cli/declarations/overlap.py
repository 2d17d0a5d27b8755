"""``goldpan overlap``."""

from __future__ import annotations

from tui.cli.command import CliCommand

COMMAND = CliCommand(
    "overlap",
    "each question's overlap with titles and gold text",
    "Each question's share of words in the nearest document title and in its gold "
    'documents\' text (likely easy questions). --json prints [{"question", "title", '
    '"gold", "high"}].',
    run="scores:cmd_overlap",
    see="[docs/analysis.md](analysis.md#questions-that-copy-a-title-goldpan-overlap)",
    json=True,
)
