"""The `goldpan` subcommands, one module per area; `tui.cli` builds the parser."""
