"""The error every reader and writer of a file format raises: which file, which line, what."""

from __future__ import annotations

from pathlib import Path

from engine.errors import BadInput


class IngestError(BadInput):
    """Bad input: which file, which line, and what was expected."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        """Record where the problem is."""
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")
