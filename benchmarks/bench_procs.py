"""What the benchmarks read of the processes they time (Linux ``/proc``)."""

from __future__ import annotations

import os
from pathlib import Path


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def forked_app(tab: int) -> int:
    """The process that runs the app of ``goldpan serve``'s tab process ``tab``.

    A tab (``python -m tui.serve.tab``) hands its standard output to the preloader, which forks
    the app onto it: the app is the other process writing to the same pipe. ``tab``
    itself when no other does (it ran the app itself).
    """
    try:
        pipe = os.readlink(f"/proc/{tab}/fd/1")
    except OSError:
        return tab
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == tab:
            continue
        try:
            if os.readlink(entry / "fd" / "1") == pipe:
                return int(entry.name)
        except OSError:
            continue
    return tab
