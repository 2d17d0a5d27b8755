"""goldpan's terminal interface: the ``goldpan`` CLI (and, later, the Textual app)."""
