"""The `goldpan` subcommands, one module per area; the `tui.cli` package builds the parser."""
