"""The links of ``goldpan serve``: one random token per person, kept in a file of the user's.

Tokens live outside the workspace (a workspace travels between colleagues), in a file
only the user can read: ``$GOLDPAN_CONFIG_DIR`` (default ``$XDG_CONFIG_HOME/goldpan``,
else ``~/.config/goldpan``), ``serve/<path key>.json``, so that a restarted server and
``goldpan serve --links`` keep the same links. The path key is a hash of the file's
resolved path, not the workspace id in its ``meta``: a copy elsewhere gets links of its own.
The server (:mod:`tui.serve.server`) reads them.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from engine.errors import GoldpanError
from engine.formats.errors import IngestError
from engine.formats.outfiles import not_regular, write_atomic
from engine.trust import config_dir
from tui.serve.served_app import ROLES


class ServeError(GoldpanError):
    """Serving cannot start as asked (a bad name, an unreadable token file); exit code 2."""


def path_key(workspace: Path) -> str:
    """The token book's name for a workspace file on this machine: its resolved path, hashed.

    Not :data:`meta.workspace_id <engine.workspace.migrations>` (the random id a workspace carries,
    that trust records use): a copy of the file keeps that id, but gets links of its own.
    """
    return hashlib.sha256(str(workspace.resolve()).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Person:
    """Someone with a link: their name on labels, their role and their token."""

    name: str
    role: str
    token: str


class TokenBook:
    """The links of one workspace: name -> role and token, kept in a 0600 file."""

    def __init__(self, workspace: Path) -> None:
        """The book of ``workspace`` (read from its file when there is one)."""
        self.workspace = workspace
        self.path = config_dir() / "serve" / f"{path_key(workspace)}.json"
        self.people: dict[str, Person] = {}
        self.serving: list[str] = []
        """The names the last ``goldpan serve`` gave links to, in order."""
        self.url = ""
        """The base address the last ``goldpan serve`` printed links for."""
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        odd = not_regular(self.path)  # a FIFO would block the read
        if odd is not None:
            raise ServeError(f"{self.path}: the links file {odd}; remove it to issue new links")
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            for name, entry in data["people"].items():
                if entry["role"] not in ROLES or not isinstance(entry["token"], str):
                    raise ValueError(f"bad entry for {name!r}")
                self.people[name] = Person(name, entry["role"], entry["token"])
            self.serving = [n for n in data.get("serving", []) if n in self.people]
            self.url = str(data.get("url", ""))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ServeError(
                f"{self.path}: cannot read the links file ({exc}); remove it to issue new links"
            ) from None

    def give(self, people: list[tuple[str, str]], *, new_tokens: bool = False) -> list[Person]:
        """Links for these (name, role) pairs: a known name keeps its token unless asked."""
        out = []
        for name, role in people:
            old = self.people.get(name)
            token = secrets.token_urlsafe(24) if old is None or new_tokens else old.token
            self.people[name] = Person(name, role, token)
            out.append(self.people[name])
        self.serving = [p.name for p in out]
        return out

    def save(self) -> None:
        """Write the file atomically, readable by the user only (``write_atomic``)."""
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = {
            "workspace": str(self.workspace.resolve()),
            "url": self.url,
            "serving": self.serving,
            "people": {p.name: {"role": p.role, "token": p.token} for p in self.people.values()},
        }
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        try:
            write_atomic(self.path, text, force=True, mode=0o600)
        except IngestError as exc:
            raise ServeError(f"the links file cannot be written: {exc}") from None

    def active(self) -> list[Person]:
        """The people of the last serve, in order."""
        return [self.people[n] for n in self.serving]


def link(base_url: str, person: Person) -> str:
    """The address a person opens."""
    return f"{base_url.rstrip('/')}/?token={person.token}"
