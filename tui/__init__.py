"""goldpan's interfaces: the ``goldpan`` CLI, the Textual app and its browser sessions."""
