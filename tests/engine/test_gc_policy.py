"""engine.gc_policy: the one home of goldpan's cycle-collector policy."""

from __future__ import annotations

import gc
import re
from pathlib import Path

from engine import gc_policy

ROOT = Path(__file__).resolve().parents[2]
GC_CALL = re.compile(r"\bgc\.(disable|enable|freeze|unfreeze|collect|set_threshold)\(")


def test_no_other_module_of_goldpan_calls_gc():
    callers = sorted(
        str(path.relative_to(ROOT))
        for package in ("engine", "tui", "goldpan")
        for path in (ROOT / package).rglob("*.py")
        if GC_CALL.search(path.read_text(encoding="utf-8"))
    )
    assert callers == ["engine/gc_policy.py"]


def test_pause_and_resume_leave_the_collector_as_it_was():
    was = gc.isenabled()
    try:
        gc.enable()
        outer = gc_policy.pause()
        assert not gc.isenabled()
        inner = gc_policy.pause()  # nested: the inner resume must not start collections
        gc_policy.resume(inner)
        assert not gc.isenabled()
        gc_policy.resume(outer)
        assert gc.isenabled()
        gc.disable()
        gc_policy.resume(gc_policy.pause())
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_a_pool_runs_without_collections_and_restores_them(tiny_ws, monkeypatch):
    from engine.retrieve import runner
    from engine.workspace import Workspace

    seen: list[bool] = []
    real = runner._PoolRun.refresh

    def refresh(self, spec):
        seen.append(gc.isenabled())
        return real(self, spec)

    monkeypatch.setattr(runner._PoolRun, "refresh", refresh)
    assert gc.isenabled()
    with Workspace.open(tiny_ws) as ws:
        runner.refresh_runs(ws)
    assert seen and not any(seen)
    assert gc.isenabled()
