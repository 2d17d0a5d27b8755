"""Markdown corpora: one document per ``.md`` file, YAML front matter as fields."""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from engine.formats.errors import IngestError
from engine.formats.ids import _check_id, form_clash, nfc
from engine.formats.tabular import _lone_surrogate, _surrogate_message, read_text
from engine.types import Doc

_MAX_FRONT_MATTER_VALUES = 100_000


_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
# Alt text without brackets and a target without parentheses: each scan stops at the next
# bracket or parenthesis, so a line of ten thousand `![` stays linear.
_IMAGE = re.compile(r"!\[[^\[\]]*\]\([^()]*\)")


def markdown_body(body: str) -> str:
    """The body without fenced code blocks and image links."""
    out: list[str] = []
    fence: str | None = None
    for line in body.splitlines():
        m = _FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(2)
                continue
            out.append(_IMAGE.sub("", line))
        elif m and m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence):
            fence = None
    return "\n".join(out).strip()


def _front_matter(loaded: Mapping[Any, Any], path: Path) -> dict[str, Any]:
    """The YAML mapping as JSON values: dates as ISO text; anything else is an error."""
    budget = [_MAX_FRONT_MATTER_VALUES]

    def value(v: Any, key: str) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise IngestError(
                path,
                2,
                f"front matter has over {_MAX_FRONT_MATTER_VALUES:,} values (YAML aliases?); "
                "expected a short key: value mapping",
            )
        if isinstance(v, dt.date | dt.datetime):
            return v.isoformat()
        if isinstance(v, str):
            found = _lone_surrogate(v, key)
            if found:
                raise IngestError(path, 2, "front matter: " + _surrogate_message(*found))
            return v
        if v is None or isinstance(v, bool | int | float):
            return v
        if isinstance(v, Mapping):
            return {str(value(k, key)): value(x, f"{key}.{k}") for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [value(x, f"{key}[{i}]") for i, x in enumerate(v)]
        raise IngestError(
            path,
            2,
            f"front matter `{key}` has a value of type {type(v).__name__}; "
            "expected text, numbers, dates, lists or mappings",
        )

    return {str(value(k, "")): value(v, str(k)) for k, v in loaded.items()}


def read_markdown_doc(path: Path) -> Doc:
    """One Markdown file with optional YAML front matter."""
    text = read_text(path)
    meta: dict[str, Any] = {}
    body = text
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        if end is None:
            raise IngestError(path, 1, "front matter opened with `---` is never closed")
        try:
            loaded = yaml.safe_load("".join(lines[1:end]))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 2 if mark is not None else 1
            problem = getattr(exc, "problem", None) or str(exc)
            raise IngestError(path, line, f"bad YAML front matter: {problem}") from None
        except (ValueError, OverflowError) as exc:  # e.g. a date such as 2024-13-45
            raise IngestError(path, 2, f"bad YAML front matter: {exc}") from None
        except RecursionError:
            raise IngestError(path, 2, "bad YAML front matter: nested too deeply") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise IngestError(path, 2, "front matter must be a YAML mapping (key: value)")
        meta = _front_matter(loaded, path)
        body = "".join(lines[end + 1 :])
    raw_id = meta.pop("id", None)
    if isinstance(raw_id, dict | list | bool):
        raise IngestError(path, 2, "front matter `id` must be text or a whole number")
    ident = str(raw_id).strip() if raw_id is not None else path.stem
    if not ident:
        raise IngestError(path, 2, "front matter `id` is empty")
    ident = _check_id(ident, path, 2 if raw_id is not None else None)
    title = meta.pop("title", None)
    if isinstance(title, dict | list):
        raise IngestError(path, 2, "front matter `title` must be text")
    if title is None:
        heading = next((ln for ln in body.splitlines() if ln.startswith("# ")), None)
        title = heading[2:].strip() if heading else path.stem
    fields = dict(meta)
    fields.setdefault("source", path.name)
    return Doc(ident, str(title), markdown_body(body), fields)


def _skip_reason(file: Path, root: Path) -> str | None:
    """Why a ``*.md`` entry of a folder scan is not read; None to read it."""
    try:
        real = Path(os.path.realpath(file))
        mode = real.stat().st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc.__class__.__name__})"
    if not real.is_relative_to(root):
        return f"a link to {real}, outside the imported folder"
    if stat.S_ISDIR(mode):
        return "a folder"
    if not stat.S_ISREG(mode):
        return "not a regular file (a FIFO, device or socket)"
    return None


def read_markdown_docs(path: Path, warnings: list[str] | None = None) -> list[Doc]:
    """Every ``*.md`` file under a folder (or one file), sorted by path.

    A folder scan skips, and lists in ``warnings``: symbolic links (to files or folders)
    leading outside the folder, and anything not a regular file (a FIFO named ``x.md``
    would block the read forever).
    """
    if path.is_file():
        return [read_markdown_doc(path)]
    if not path.exists():
        raise IngestError(path, None, "no such folder")
    if not path.is_dir():
        raise IngestError(path, None, "not a regular file or folder (a FIFO, device or socket)")
    root = Path(os.path.realpath(path))
    files = []
    for p in sorted(path.rglob("*")):
        if p.suffix.lower() not in (".md", ".markdown"):
            continue
        reason = _skip_reason(p, root)
        if reason is None:
            files.append(p)
        elif warnings is not None:
            warnings.append(f"skipped {p}: {reason}")
    if not files:
        raise IngestError(path, None, "no Markdown files (*.md) in this folder")
    docs: list[Doc] = []
    seen: dict[str, tuple[str, Path]] = {}
    for f in files:
        doc = read_markdown_doc(f)
        key = nfc(doc.id)
        if key in seen:
            first, where = seen[key]
            if first != doc.id:
                raise IngestError(f, None, form_clash(doc.id, first, "document") + f" (in {where})")
            raise IngestError(f, None, f"duplicate document id {doc.id!r} (also in {where})")
        seen[key] = (doc.id, f)
        docs.append(doc)
    return docs
