"""A command retriever's cache key covers what it names (``--cache-key-files``).

Each test adds the project's ``mysearch`` command with ``--cache-key-files src`` and runs
real ``goldpan`` processes: the key must change when the code it names changes, also
through a symbolic link, and must never be a silently different key (a FIFO, a device, a
broken link or an unreadable file is an error, exit 2, that names it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.test_gate_fresh import Project, make_project

CACHED = "mysearch: cached, inputs and cache key unchanged"
RANKED = "mysearch: ranked now (inputs and cache key changed"


def keyed_project(tmp_path: Path) -> tuple[Project, Path]:
    """The project, its ``src`` folder named as the cache key, and a library outside it."""
    project = make_project(tmp_path, add_options=("--cache-key-files", "src"))
    lib = project.root / "vendor" / "mysearch"
    lib.mkdir(parents=True)
    (lib / "rank.py").write_text("WEIGHT = 1\n", encoding="utf-8")
    src = project.root / "src"
    src.mkdir()
    (src / "main.py").write_text("import rank\n", encoding="utf-8")
    (src / "mysearch").symlink_to(Path("..") / "vendor" / "mysearch")  # relative, as in a repo
    return project, lib


def score(project: Project) -> tuple[int, str]:
    code, _, err = project.goldpan("score", project.ws, "--retriever", "mysearch", "--quiet")
    return code, err


def test_code_reached_through_a_symlink_changes_the_key(tmp_path: Path) -> None:
    project, lib = keyed_project(tmp_path)
    assert score(project)[0] == 0  # the first score ranks and caches
    code, err = score(project)
    assert code == 0 and CACHED in err, err
    (lib / "rank.py").write_text("WEIGHT = 2\n", encoding="utf-8")  # the code behind the link
    code, err = score(project)
    assert code == 0 and RANKED in err, err


def test_a_link_back_up_the_tree_is_walked_once(tmp_path: Path) -> None:
    project, _ = keyed_project(tmp_path)
    (tmp_path / "repo" / "src" / "loop").symlink_to(Path("."))  # src/loop -> src
    score(project)
    code, err = score(project)
    assert code == 0 and CACHED in err, err


def test_a_fifo_among_the_key_files_is_refused_without_blocking(tmp_path: Path) -> None:
    project, _ = keyed_project(tmp_path)
    os.mkfifo(tmp_path / "repo" / "src" / "pipe")
    code, err = score(project)  # the old walk read the FIFO and waited for a writer forever
    assert code == 2, err
    assert "src/pipe is a FIFO, not a regular file" in err


def test_a_device_among_the_key_files_is_refused(tmp_path: Path) -> None:
    project, _ = keyed_project(tmp_path)
    (tmp_path / "repo" / "src" / "null").symlink_to("/dev/null")
    code, err = score(project)
    assert code == 2, err
    assert "src/null is a device or socket, not a regular file" in err


def test_a_broken_link_is_an_error_not_a_different_key(tmp_path: Path) -> None:
    project, lib = keyed_project(tmp_path)
    score(project)
    (lib / "rank.py").unlink()
    (lib / "rank.py").symlink_to(lib / "deleted.py")
    code, err = score(project)
    assert code == 2, err
    assert "cannot read its cache key file src/mysearch/rank.py" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file and folder")
def test_an_unreadable_folder_is_an_error_not_left_out(tmp_path: Path) -> None:
    project, lib = keyed_project(tmp_path)
    score(project)
    lib.chmod(0)
    try:
        code, err = score(project)
    finally:
        lib.chmod(0o755)
    assert code == 2, err
    assert "cannot read its cache key folder" in err
