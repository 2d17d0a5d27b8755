"""No dead code in the shipped packages: ``vulture`` (pyproject's ``[tool.vulture]``, with
tools/vulture_whitelist.py) reports nothing, and the whitelist gives each entry a reason."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from tests.conftest import ROOT

WHITELIST = ROOT / "tools" / "vulture_whitelist.py"


def test_vulture_finds_nothing_unused():
    pytest.importorskip("vulture")
    done = subprocess.run(
        [sys.executable, "-m", "vulture"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and not done.stdout, done.stdout + done.stderr


def test_every_whitelisted_name_says_why():
    source = WHITELIST.read_text(encoding="utf-8")
    lines = source.splitlines()
    entries = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Name | ast.Attribute)
    ]
    assert entries
    for node in entries:
        line = lines[node.lineno - 1]
        _, _, reason = line.partition("#")
        assert len(reason.strip()) > 10, f"line {node.lineno} gives no reason: {line}"
