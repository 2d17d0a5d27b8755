"""``python -m tui.serve.tab SOCKET WS --annotator NAME ...``: one tab's app for ``goldpan serve``.

The app forked by the server's preloader (:mod:`tui.serve.preload`), on this process's standard
input, output and error; or run here when the preloader cannot fork it. The arguments
after SOCKET are :mod:`tui.serve.served_app`'s.
"""

from __future__ import annotations

import sys

from tui.serve.preload import run_tab

if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(
            "usage: python -m tui.serve.tab SOCKET WS ... (goldpan serve starts it)",
            file=sys.stderr,
        )
        sys.exit(2)
    run_tab(sys.argv[1], sys.argv[2:])
