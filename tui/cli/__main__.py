"""``python -m tui.cli`` runs the ``goldpan`` command."""

from tui.cli import run

run()
