"""A small goldpan-shaped tree for tools/house.py: every target met, until a test breaks one."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
HOUSE = ROOT / "tools" / "house.py"


def load_house() -> ModuleType:
    """tools/house.py as a module (it is a script, not part of a package)."""
    spec = importlib.util.spec_from_file_location("house_under_test", HOUSE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def clean_tree(root: Path, house: ModuleType) -> Path:
    """A tree meeting every target: each rule defined once, no circle, no private name."""
    write(root, "README.md", "# goldpan\n\nA door.\n")
    for pkg in ("engine", "tui", "goldpan"):
        write(root, f"{pkg}/__init__.py", "")
    write(root, "tui/app.py", "from engine import rules\n\n\ndef run():\n    return rules\n")
    body = "\n\n".join(
        f"{rule.kind} {rule.name}{'()' if rule.kind == 'def' else ''}:\n    pass\n"
        for rule in house.RULES
    )
    write(root, "engine/rules.py", body)
    return root
