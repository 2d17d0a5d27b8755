"""`goldpan serve` over real websockets: 403 without a token, and a short team run.

The long load run is benchmarks/bench_serve.py (8 annotators, 60 s); this runs the same
websocket clients and checks for a few seconds.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.tui.serve.test_served import unlabel

ROOT = Path(__file__).resolve().parents[3]


def load_bench():
    folder = str(ROOT / "benchmarks")
    if folder not in sys.path:  # as the script runs: its folder first, for bench_bytecode
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(
        "bench_serve", ROOT / "benchmarks" / "bench_serve.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_serve"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def child_processes(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the direct children of ``pid`` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                out.append((int(entry.name), cmdline))
        except (OSError, IndexError, ValueError):
            continue
    return out


def is_tab(cmdline: str) -> bool:
    """Whether a child of ``goldpan serve`` is a tab's process (not its preloader)."""
    return "tui.serve.tab" in cmdline or "tui.serve.served_app" in cmdline


def children(pid: int) -> list[str]:
    """Command lines of the tabs' processes of ``goldpan serve`` (pid ``pid``) and of the
    apps its preloader forked for them."""
    out = []
    for child, cmdline in child_processes(pid):
        if is_tab(cmdline):
            out.append(cmdline)
        elif "tui.serve.preload" in cmdline:
            out += [app for _, app in child_processes(child)]
    return out


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_403_without_a_valid_token_and_a_short_team_run(demo_ws, tmp_path):
    """No token, a wrong one: 403 and no process; then two annotators label for 3 s."""
    bench = load_bench()
    unlabel(demo_ws)
    served = bench.start_server(
        demo_ws, ["--annotator", "ara", "--annotator", "bo", "--per-question", "2"], tmp_path
    )
    try:
        base = f"http://127.0.0.1:{served.port}"
        assert status(f"{base}/") == 403
        assert status(f"{base}/?token=wrong") == 403
        assert status(f"{base}/ws/wrong?width=80&height=24") == 403
        assert status(f"{base}/ws/?width=80&height=24") in (403, 404)
        assert children(served.proc.pid) == []
        assert "connected" not in served.output()
        assert status(f"{base}/?token={served.tokens['ara']}") == 200

        team = asyncio.run(bench.run_team(served, demo_ws, ["ara", "bo"], 3.0, 0.0))
        assert bench.check(demo_ws, team, served.output()) == []
        assert all(w.latencies for w in team), [(w.name, w.error) for w in team]
    finally:
        served.stop()
    output = served.output()
    log_part = output.split("(`goldpan serve", 1)[1]  # what follows the printed links
    for token in served.tokens.values():
        assert token not in log_part
        assert token.encode() not in demo_ws.read_bytes()
    assert output.count("connected (annotator)") == 2 and output.count(" left") == 2
    config = json.loads(next((tmp_path / "serve").glob("*.json")).read_text())
    assert sorted(config["people"]) == ["ara", "bo"]
