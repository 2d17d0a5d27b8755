"""tools/house.py on trees it cannot or should not trust: a clear message, exit 2, nothing
written, nothing followed out of the tree, no file name reaching the terminal as escapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import file_hashes
from tests.tools.house_tree import HOUSE, clean_tree, load_house, write

house = load_house()


def run(root: Path, *args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, str(HOUSE), "--root", str(root), *args], capture_output=True, text=True
    )
    return done.returncode, done.stdout, done.stderr


def test_a_folder_holding_no_engine_or_tui(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "# not goldpan\n")
    code, out, err = run(tmp_path, "--check")
    assert code == 2 and out == ""
    assert "no engine/ and no tui/ folder" in err and "Traceback" not in err
    (tmp_path / "engine").mkdir()
    code, _, err = run(tmp_path)
    assert code == 2 and "no tui/ folder" in err


def test_a_root_that_does_not_exist(tmp_path: Path) -> None:
    code, out, err = run(tmp_path / "absent")
    assert code == 2 and out == "" and "Traceback" not in err


def test_a_missing_readme_or_app(tmp_path: Path) -> None:
    root = clean_tree(tmp_path, house)
    (root / "tui" / "app.py").unlink()
    code, _, err = run(root)
    assert code == 2 and "tui/app.py: not found" in err
    clean_tree(tmp_path, house)
    (root / "README.md").unlink()
    code, _, err = run(root)
    assert code == 2 and "README.md: not found" in err


@pytest.mark.parametrize(
    "content, said",
    [
        (b"def f(:\n", "engine/bad.py:1: not valid Python"),
        (b"x = 1\n\nclass\n", "engine/bad.py:3: not valid Python"),
        (b"x = '\xff\xfe'\n", "engine/bad.py: not UTF-8"),
        (b"x = 1\x00\n", "engine/bad.py: not valid Python"),
        (b"x = " + b"-" * 200_000 + b"1\n", "engine/bad.py: nested too deeply"),
    ],
    ids=["syntax", "syntax-line-3", "not-utf8", "nul-byte", "too-deep"],
)
def test_a_module_that_is_not_python(tmp_path: Path, content: bytes, said: str) -> None:
    root = clean_tree(tmp_path, house)
    (root / "engine" / "bad.py").write_bytes(content)
    code, out, err = run(root, "--json")
    assert code == 2 and out == ""
    assert said in err and "Traceback" not in err


def test_symbolic_links_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "huge.py", "x = 1\n" * 5000)
    write(outside, "rules.py", "class Unusable:\n    pass\n")
    write(outside, "private.py", "app._batch_count\n")
    root = clean_tree(tmp_path / "tree", house)
    os.symlink(outside / "huge.py", root / "engine" / "huge.py")
    os.symlink(outside, root / "engine" / "linked")
    os.symlink(outside, root / "tests")
    m = house.measure(root)
    assert m["all_met"], m["targets"]
    assert all("huge" not in row["file"] for row in m["largest_modules"])
    # a package folder that is a link is refused, not measured as the tree's
    (root / "tui" / "app.py").rename(tmp_path / "app.py")
    os.symlink(tmp_path / "app.py", root / "tui" / "app.py")
    code, _, err = run(root)
    assert code == 2 and "tui/app.py: not found" in err


def test_nothing_is_written(tmp_path: Path) -> None:
    root = clean_tree(tmp_path, house)
    write(root, "tui/a.py", "from tui import b\n")
    write(root, "tui/b.py", "from tui import a\n")
    before = file_hashes(root)
    names = sorted(p for p in root.rglob("*"))
    assert run(root, "--check")[0] == 1
    assert run(root, "--json")[0] == 0
    assert file_hashes(root) == before
    assert sorted(p for p in root.rglob("*")) == names  # no __pycache__: nothing is imported


def test_the_tree_is_read_never_run(tmp_path: Path) -> None:
    root = clean_tree(tmp_path, house)
    witness = tmp_path / "ran"
    write(root, "engine/__init__.py", f"open({str(witness)!r}, 'w').write('ran')\n")
    write(root, "tui/app.py", f"open({str(witness)!r}, 'w').write('ran')\n")
    assert run(root)[0] == 0
    assert not witness.exists()


def test_a_file_name_is_never_a_terminal_escape(tmp_path: Path) -> None:
    root = clean_tree(tmp_path, house)
    write(root, "tests/test_\x1b[2J\x1b]0;owned\x07.py", "app._batch_count\n")
    code, out, _ = run(root)
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "test_\\x1b[2J\\x1b]0;owned\\x07.py" in out
    code, out, _ = run(root, "--json")
    assert "\x1b" not in out
    assert json.loads(out)["private_api_uses"]["uses"][0]["file"].startswith("tests/test_\x1b")


def test_a_deep_import_chain() -> None:
    """Far past Python's recursion limit: the circle search is iterative."""
    n = 5 * sys.getrecursionlimit()
    chain = {f"engine.m{i}": {f"engine.m{(i + 1) % n}"} for i in range(n)}
    assert house.circles(chain) == [sorted(chain)]
    chain[f"engine.m{n - 1}"] = set()  # the chain no longer closes
    assert house.circles(chain) == []
