"""``python -m tui.cli`` runs the ``goldpan`` command."""

import sys

from tui.cli import main

sys.exit(main())
