"""Which workspace commands this user has trusted to run (as editors and direnv do it).

A ``command`` retriever runs a program named in the workspace file, and a workspace
arrives from a colleague as easily as a corpus from the web. So goldpan runs a workspace's
command only once this user has trusted that exact command for that workspace. The record
is kept outside every workspace, in the user's config folder
(``$XDG_CONFIG_HOME/goldpan/trusted-commands.json``, else ``~/.config/goldpan/…``), where a
received file cannot add to it.

An entry is keyed by the command text, the workspace's random id (``meta.workspace_id``,
written when the workspace is created or upgraded) and its resolved path. Both, because
each alone can be copied: a file sent around keeps its id, and a received file can be
saved under the path of a trusted one. A moved or copied workspace is therefore asked
about again, and so is a command whose text changed in any way.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.errors import Unusable
from engine.formats.errors import IngestError
from engine.formats.outfiles import not_regular, write_atomic
from engine.types import RetrieverSpec

COMMAND_KIND = "command"
"""The retriever kind that runs a program (see :mod:`engine.retrieve.command`)."""

TRUST_FILE = "trusted-commands.json"


class TrustError(Unusable):
    """The trust record cannot be read or written; the message names the file."""


class HasIdentity(Protocol):
    """What identifies a workspace (an open :class:`~engine.workspace.Workspace`)."""

    path: Path

    def meta(self) -> dict[str, str]:
        """Every meta key and value."""
        ...


def config_dir() -> Path:
    """The user's goldpan config folder (trust record, serve links; not created here).

    ``$GOLDPAN_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/goldpan``, else ``~/.config/goldpan``.
    """
    if os.environ.get("GOLDPAN_CONFIG_DIR"):
        return Path(os.environ["GOLDPAN_CONFIG_DIR"])
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "goldpan"


@dataclass(frozen=True)
class Trusted:
    """One trusted command of one workspace."""

    workspace_id: str
    path: str
    """The workspace file's resolved path when it was trusted."""
    command: str
    retriever: str
    """The retriever's name then (for people: matching is by command, id and path)."""
    at: str


def identity(ws: HasIdentity) -> tuple[str, str]:
    """(workspace id, resolved path) of an open workspace ("" id for a pre-id workspace)."""
    return ws.meta().get("workspace_id", ""), str(ws.path.resolve())


def command_of(spec: RetrieverSpec) -> str:
    """The command line a command retriever runs, as stored.

    A ``cache_key_command`` runs too, so it is part of what is trusted (and shown).
    """
    command = str(spec.params.get("command", ""))
    key = spec.params.get("cache_key_command")
    return f"{command}  [cache key: {key}]" if key else command


class TrustStore:
    """The user's record of trusted commands (one small JSON file, rewritten atomically)."""

    def __init__(self, path: Path | None = None) -> None:
        """Use ``path``, or the record in the user's config folder (read when asked)."""
        self.path = path if path is not None else config_dir() / TRUST_FILE

    def entries(self) -> list[Trusted]:
        """Every trusted command of every workspace."""
        odd = not_regular(self.path)  # a FIFO would block the open, and every pool with it
        if odd is not None:
            raise TrustError(
                f"{self.path}: the trust record {odd}; remove it and trust the commands "
                "again with `goldpan trust WS`"
            )
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise TrustError(f"{self.path}: the trust record cannot be read ({exc})") from None
        try:
            data: Any = json.loads(raw)
            return [Trusted(**item) for item in data["trusted"]]
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            raise TrustError(
                f"{self.path}: the trust record is damaged ({type(exc).__name__}: {exc}); "
                "delete it and trust the commands again with `goldpan trust WS`"
            ) from None

    def trusts(self, ws: HasIdentity, spec: RetrieverSpec) -> bool:
        """Whether ``spec``'s command may run for this workspace (other kinds always may)."""
        if spec.kind != COMMAND_KIND:
            return True
        ws_id, path = identity(ws)
        command = command_of(spec)
        return bool(ws_id) and any(
            e.workspace_id == ws_id and e.path == path and e.command == command
            for e in self.entries()
        )

    def untrusted(self, ws: HasIdentity, specs: Iterable[RetrieverSpec]) -> list[RetrieverSpec]:
        """The command retrievers among ``specs`` that may not run for this workspace."""
        commands = [s for s in specs if s.kind == COMMAND_KIND]
        if not commands:
            return []
        return [s for s in commands if not self.trusts(ws, s)]

    def trust(self, ws: HasIdentity, specs: Sequence[RetrieverSpec]) -> None:
        """Record ``specs``' commands as trusted for this workspace."""
        ws_id, path = identity(ws)
        if not ws_id:
            raise TrustError(f"{ws.path} has no workspace id; open it once to upgrade it")
        stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        kept = self.entries()
        for spec in specs:
            entry = Trusted(ws_id, path, command_of(spec), spec.name, stamp)
            kept = [
                e
                for e in kept
                if (e.workspace_id, e.path, e.command) != (ws_id, path, entry.command)
            ]
            kept.append(entry)
        self._write(kept)

    def revoke(self, ws: HasIdentity, names: Sequence[str] | None = None) -> list[Trusted]:
        """Forget this workspace's trusted commands (only those of ``names`` if given)."""
        ws_id, path = identity(ws)
        kept: list[Trusted] = []
        gone: list[Trusted] = []
        for e in self.entries():
            mine = e.workspace_id == ws_id and e.path == path
            (gone if mine and (not names or e.retriever in names) else kept).append(e)
        if gone:
            self._write(kept)
        return gone

    def for_workspace(self, ws: HasIdentity) -> list[Trusted]:
        """This workspace's trusted commands."""
        ws_id, path = identity(ws)
        return [e for e in self.entries() if e.workspace_id == ws_id and e.path == path]

    def _write(self, entries: Sequence[Trusted]) -> None:
        """Replace the record atomically, readable by the user only (``write_atomic``)."""
        text = json.dumps(
            {"version": 1, "trusted": [asdict(e) for e in entries]}, indent=2, ensure_ascii=False
        )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TrustError(
                f"{self.path}: the trust record cannot be written ({exc.strerror or exc})"
            ) from None
        try:
            write_atomic(self.path, text + "\n", force=True, mode=0o600)
        except IngestError as exc:
            raise TrustError(f"the trust record cannot be written: {exc}") from None
