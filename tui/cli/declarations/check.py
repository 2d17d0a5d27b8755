"""``goldpan check``."""

from __future__ import annotations

from tui.cli.command import CliCommand

COMMAND = CliCommand(
    "check",
    "check a workspace: integrity, foreign keys, schema and rows (exit 2 if damaged)",
    "Check a workspace file, reading only: that it is goldpan's and its schema is whole, "
    "SQLite's integrity_check and foreign_key_check, and every row decoded as the commands "
    "decode it (JSON shapes, score blobs, grades, retriever kinds and parameters, "
    "retrievers that read their own rankings). Exit 0 when sound, 2 with each problem "
    "listed by table and row; a path that is not a workspace at all (a FIFO, a text file) "
    'is said to be that, not damaged. --json prints {"ok", "verdict" (sound, damaged, '
    '"not a workspace" or newer), "file", "integrity", "foreign_keys", "rows"}.',
    run="check:cmd_check",
    json=True,
)
