"""The fast layer's lists (tests/slow.py) name tests that exist, and mark them."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT
from tests.slow import SLOW_FILES, SLOW_TESTS, TESTS


def test_every_slow_file_exists() -> None:
    missing = sorted(f for f in SLOW_FILES if not (TESTS / f).is_file())
    assert not missing, f"tests/slow.py names files that are gone (moved?): {missing}"


def test_every_slow_test_is_collected_and_marked() -> None:
    """Collected with ``-m slow``: each listed test is there, and nothing of a fast file is."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-n",
            "0",
            "-m",
            "slow",
            "-p",
            "no:cacheprovider",
            *sorted({f"tests/{t.split('::')[0]}" for t in SLOW_TESTS}),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    collected = {line.removeprefix("tests/") for line in done.stdout.splitlines() if "::" in line}
    assert collected == set(SLOW_TESTS), (
        f"listed but not collected as slow: {sorted(set(SLOW_TESTS) - collected)}; "
        f"slow but not listed: {sorted(collected - set(SLOW_TESTS))}"
    )
