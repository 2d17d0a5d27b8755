"""The README is a door: every relative link in it and in the pages it opens onto resolves
(the file, and the heading an ``#anchor`` names), and every ``goldpan CMD`` they show is a
command the parser knows.

The pages: README.md, CONTRIBUTING.md, docs/*.md and benchmarks/RESULTS.md. Anchors are
made as GitHub makes them from headings (lowercase; punctuation but ``-`` and ``_`` left
out; spaces become ``-``; a repeated heading gets ``-1``, ``-2``).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tui.cli import build_parser

PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "benchmarks" / "RESULTS.md",
        *(ROOT / "docs").glob("*.md"),
    ]
)

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
COMMAND = re.compile(r"(?:^|[\s;&|(])goldpan\s+([^\s`]+)(?:\s+([^\s`]+))?")


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def prose_and_code(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The lines outside code blocks, and (the block's language, line) of those inside."""
    prose: list[str] = []
    code: list[tuple[str, str]] = []
    language: str | None = None
    for line in text.splitlines():
        if FENCE.match(line):
            # a block opens (its language, "" for none) or closes
            opening = language is None
            language = (line.strip("`~ ").split() or [""])[0] if opening else None
            continue
        if language is None:
            prose.append(line)
        else:
            code.append((language, line))
    return prose, code


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """Every anchor of ``page``: its headings' (GitHub's way) and explicit ``id``/``name``."""
    prose, _ = prose_and_code(page.read_text(encoding="utf-8"))
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose:
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line))
    return frozenset(found)


def links(page: Path) -> Iterator[str]:
    """The link targets of ``page``'s prose (code blocks and code spans left out)."""
    prose, _ = prose_and_code(page.read_text(encoding="utf-8"))
    for line in prose:
        yield from (m.group(1) for m in LINK.finditer(CODE_SPAN.sub("", line)))


def broken(page: Path, target: str) -> str | None:
    """Why the link ``target`` on ``page`` does not resolve, or None when it does."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:
        return None
    path, _, anchor = target.partition("#")
    file = (page.parent / path).resolve() if path else page
    if not file.is_relative_to(ROOT):
        return f"{target}: outside the repository"
    if not file.exists():
        return f"{target}: no such file"
    if anchor and file.suffix == ".md" and anchor not in anchors(file):
        return f"{target}: {page_id(file)} has no heading for #{anchor}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_resolves(page: Path):
    problems = [why for target in links(page) if (why := broken(page, target))]
    assert not problems, "\n".join(problems)


# -- every goldpan command shown is one the parser knows ----------------------------------


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The commands one level below ``parser`` (none for a command that runs)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def commands_shown(page: Path) -> Iterator[tuple[str, str | None]]:
    """(command, next word) of each ``goldpan CMD ...`` that ``page`` shows as typed: in a
    code span that starts with it, or on a command line of a code block (a ``bash`` or
    ``sh`` block's lines, a ``console`` block's ``$`` lines; not their output)."""
    prose, code = prose_and_code(page.read_text(encoding="utf-8"))
    typed: list[str] = []
    for line in prose:
        typed += [
            span for _, span in CODE_SPAN.findall(line) if span.strip().startswith("goldpan ")
        ]
    for language, line in code:
        if language in ("bash", "sh", "shell"):
            typed.append(line)
        elif language == "console" and line.startswith("$ "):
            typed.append(line[2:])
    for text in typed:
        text = re.sub(r"(^|\s)#.*$", "", text)  # a shell comment
        for m in COMMAND.finditer(text):
            yield m.group(1), m.group(2)


def test_the_pages_show_commands(tmp_path):
    """The scan finds what it checks (a scan that finds nothing would pass anything)."""
    shown = {(c, n) for page in PAGES for c, n in commands_shown(page)}
    assert ("score", "ws.db") in shown and ("import", "beir") in shown
    bad = tmp_path / "bad.md"
    bad.write_text("Run `goldpan scroe WS`.\n\n```console\n$ goldpan import bier x\n```\n")
    assert list(commands_shown(bad)) == [("scroe", "WS"), ("import", "bier")]
    assert broken(bad, "nowhere.md") and broken(bad, "#no-such-heading")


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_goldpan_command_shown_exists(page: Path):
    top = subcommands(build_parser())
    problems = []
    for command, after in commands_shown(page):
        if not re.fullmatch(r"[a-z][a-z-]*", command):
            continue  # a placeholder (`goldpan CMD --help`) or an option (`goldpan --help`)
        if command not in top:
            problems.append(f"goldpan {command}: no such command")
            continue
        below = subcommands(top[command])
        word = re.match(r"[a-z]+", after or "")
        if below and word and word.group(0) not in below:
            problems.append(f"goldpan {command} {word.group(0)}: no such command")
    assert not problems, f"{page_id(page)}: " + "; ".join(problems)
