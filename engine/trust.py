"""Which of a workspace's retrievers this user has trusted to run (as editors and direnv do it).

Some retriever kinds reach outside the workspace: a ``command`` runs a program named in the
workspace file, an ``opensearch``, ``elasticsearch`` or ``http`` retriever sends every
question (and the credentials held by the environment variables it names) to an address
named there, a ``postgres`` retriever runs the workspace's SQL on the database an
environment variable it names connects to. A workspace arrives from a colleague as easily
as a corpus from the web, so goldpan runs such a retriever only once this user has
trusted exactly what it runs or sends for that workspace (:data:`UNTRUSTED_KINDS`,
:func:`what_runs`). A model named in a workspace (``dense``, ``rerank``, a model judge:
:data:`MODEL_KINDS`) loads from a local folder with the hub off; a name that would come
from the Hugging Face hub loads only once trusted (a beacon, and weights the sender
chooses, otherwise). The record is kept outside every workspace, in the user's config folder
(``$XDG_CONFIG_HOME/goldpan/trusted-commands.json``, else ``~/.config/goldpan/…``), where a
received file cannot add to it. A served session (``goldpan serve``) never trusts.

An entry is keyed by that text, the workspace's random id (``meta.workspace_id``,
written when the workspace is created or upgraded) and its resolved path. Both, because
each alone can be copied: a file sent around keeps its id, and a received file can be
saved under the path of a trusted one. A moved or copied workspace is therefore asked
about again, and so is a retriever whose trusted parameters changed in any way.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.errors import Unusable
from engine.formats.errors import IngestError
from engine.formats.outfiles import not_regular, write_atomic
from engine.types import RetrieverSpec

COMMAND_KIND = "command"
"""The retriever kind that runs a program (see :mod:`engine.retrieve.command`)."""

UNTRUSTED_KINDS: dict[str, tuple[str, ...]] = {
    COMMAND_KIND: ("command", "cache_key_command"),
    "http": ("http_method", "url", "body", "header_env", "insecure"),
    "opensearch": (
        "url",
        "index",
        "template",
        "fields",
        "api_key_env",
        "user_env",
        "password_env",
        "insecure",
    ),
    "elasticsearch": (
        "url",
        "index",
        "template",
        "fields",
        "api_key_env",
        "user_env",
        "password_env",
        "insecure",
    ),
    # the variable's name (never its value), the SQL template by its hash, and the
    # cache-key query, which runs there too
    "postgres": ("dsn_env", "sql", "cache_key_sql", "embed_model", "query_prefix"),
    # Each kind that runs a program or sends questions out of this machine adds its entry
    # here, naming the parameters that say what runs or where questions and credentials
    # go (addresses, the *names* of environment variables, templates); nothing else may
    # run it unasked. Its retrievers' output then also depends on something outside the
    # workspace: the runner ranks them again on every pool unless the retriever says what
    # that output depends on (``engine.retrieve.base.OutsideRetriever``).
}
"""Kind -> the parameters whose exact values are what a user trusts (in this order)."""

MODEL_KINDS: dict[str, str] = {"dense": "model", "rerank": "model", "cross-encoder": "model"}
"""Kinds that load a model by name (retrievers, and the model judges' kinds) -> the
parameter naming it. What is trusted is the name (:func:`what_runs`: ``model NAME``), so
one trust covers a retriever and a judge of that model. An untrusted name loads only from
a folder on this machine, the hub off (:mod:`engine.retrieve.models`); the ``postgres``
kind's ``embed_model`` is part of what its retriever's trust covers."""

MODEL_LINE = "model "
"""How a trusted model name starts its line in the record (``model NAME``)."""

CONTENT_PARAMS = frozenset({"template", "body", "sql"})
"""Parameters that hold a whole text (a request or query template, stored in the
workspace): trusted by the SHA-256 of that text, which :func:`what_runs` shows."""

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
    """One trusted retriever of one workspace."""

    workspace_id: str
    path: str
    """The workspace file's resolved path when it was trusted."""
    command: str
    """What was trusted: :func:`what_runs` of the retriever (a command line for commands)."""
    retriever: str
    """The retriever's name then (for people: matching is by command, id and path)."""
    at: str


def identity(ws: HasIdentity) -> tuple[str, str]:
    """(workspace id, resolved path) of an open workspace ("" id for a pre-id workspace)."""
    return ws.meta().get("workspace_id", ""), str(ws.path.resolve())


def is_untrusted_kind(kind: str) -> bool:
    """Whether retrievers of ``kind`` run or send anything only once trusted."""
    return kind in UNTRUSTED_KINDS


def needs_trust(spec: RetrieverSpec) -> bool:
    """Whether ``spec`` runs, sends or loads anything that the owner's trust decides.

    Kinds that run a program or send questions out (:data:`UNTRUSTED_KINDS`), and kinds
    that load a model by name (:data:`MODEL_KINDS`).
    """
    return spec.kind in UNTRUSTED_KINDS or spec.kind in MODEL_KINDS


def model_of(spec: RetrieverSpec) -> str | None:
    """The model name a model kind loads (None for other kinds)."""
    param = MODEL_KINDS.get(spec.kind)
    return str(spec.params.get(param) or "").strip() if param else None


def is_local_model(name: str) -> bool:
    """Whether ``name`` is a folder on this machine holding a model.

    A sentence-transformers folder (``modules.json``) or a transformers one
    (``config.json``): what loads with the hub off. Anything else (a hub name, a path that
    is not there) would be looked up on the hub.
    """
    try:
        folder = Path(name)
        return folder.is_dir() and any(
            (folder / f).is_file() for f in ("modules.json", "config.json")
        )
    except (OSError, ValueError):  # a name too long for a path, or with a NUL
        return False


def command_of(spec: RetrieverSpec) -> str:
    """The command line a command retriever runs, as stored.

    A ``cache_key_command`` runs too, so it is part of what is trusted (and shown).
    """
    command = str(spec.params.get("command", ""))
    key = spec.params.get("cache_key_command")
    return f"{command}  [cache key: {key}]" if key else command


def content_hash(text: str) -> str:
    """How a whole text parameter (a template) is shown and trusted: ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def what_runs(spec: RetrieverSpec) -> str:
    """The one line a user trusts for ``spec``: exactly what it runs or where it sends.

    A command retriever's is its command line (:func:`command_of`, unchanged so that
    records written before other kinds existed still match). Another kind's is the kind
    and its trusted parameters (:data:`UNTRUSTED_KINDS`) as options, a whole text by its
    hash: ``opensearch --url https://search:9200 --index docs --template sha256:…
    --api-key-env OS_KEY``. "" for a kind that needs no trust.
    """
    if spec.kind == COMMAND_KIND:
        return command_of(spec)
    model = model_of(spec)
    if model is not None:
        return MODEL_LINE + model
    names = UNTRUSTED_KINDS.get(spec.kind)
    if names is None:
        return ""
    parts = [spec.kind]
    for name in names:
        value = spec.params.get(name)
        if value is None or value is False or value == "" or value == [] or value == {}:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            parts.append(flag)
        elif name in CONTENT_PARAMS:
            parts.append(f"{flag} {content_hash(str(value))}")
        elif isinstance(value, Mapping):
            parts += [f"{flag} {k}={v}" for k, v in sorted(value.items())]
        elif isinstance(value, list | tuple):
            parts.append(f"{flag} {','.join(str(v) for v in value)}")
        else:
            parts.append(f"{flag} {value}")
    return " ".join(parts)


def whole_texts(spec: RetrieverSpec) -> list[tuple[str, str]]:
    """The whole texts :func:`what_runs` names by their hash: (``--sql sha256:…``, the text).

    What ``goldpan trust`` shows in full before asking, so that a template is read, not
    trusted by its hash.
    """
    if spec.kind not in UNTRUSTED_KINDS:
        return []
    return [
        (f"--{name.replace('_', '-')} {content_hash(str(value))}", str(value))
        for name in UNTRUSTED_KINDS[spec.kind]
        if name in CONTENT_PARAMS and (value := spec.params.get(name))
    ]


def not_trusted(kind: str, what: str) -> str:
    """A clause naming what is not trusted: ``its command 'X' is not trusted``."""
    if kind == COMMAND_KIND:
        return f"its command {what!r} is not trusted"
    if kind in MODEL_KINDS:
        name = what.removeprefix(MODEL_LINE)
        return (
            f"its model {name!r} is not a folder holding a model on this machine (it would "
            "come from the Hugging Face hub), and that name is not trusted"
        )
    return f"what it sends questions to ({what}) is not trusted"


class TrustStore:
    """The user's record of trusted retrievers (one small JSON file, rewritten atomically)."""

    def __init__(self, path: Path | None = None) -> None:
        """Use ``path``, or the record in the user's config folder (read when asked)."""
        self.path = path if path is not None else config_dir() / TRUST_FILE

    def entries(self) -> list[Trusted]:
        """Every trusted retriever of every workspace."""
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
        """Whether ``spec`` may run for this workspace (kinds that need no trust always may).

        A model kind may whenever its model is a local folder (it then loads with the hub
        off); a model name from the hub only once trusted.
        """
        if not needs_trust(spec):
            return True
        model = model_of(spec)
        if model is not None and is_local_model(model):
            return True
        ws_id, path = identity(ws)
        command = what_runs(spec)
        return bool(ws_id) and any(
            e.workspace_id == ws_id and e.path == path and e.command == command
            for e in self.entries()
        )

    def untrusted(self, ws: HasIdentity, specs: Iterable[RetrieverSpec]) -> list[RetrieverSpec]:
        """The retrievers among ``specs`` that may not run for this workspace."""
        commands = [s for s in specs if needs_trust(s)]
        if not commands:
            return []
        return [s for s in commands if not self.trusts(ws, s)]

    def hub_models(self, ws: HasIdentity) -> frozenset[str]:
        """The model names trusted for this workspace: they may load from the hub."""
        return frozenset(
            e.command.removeprefix(MODEL_LINE)
            for e in self.for_workspace(ws)
            if e.command.startswith(MODEL_LINE)
        )

    def trust(self, ws: HasIdentity, specs: Sequence[RetrieverSpec]) -> None:
        """Record what ``specs`` run (:func:`what_runs`) as trusted for this workspace."""
        ws_id, path = identity(ws)
        if not ws_id:
            raise TrustError(f"{ws.path} has no workspace id; open it once to upgrade it")
        stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        kept = self.entries()
        for spec in specs:
            entry = Trusted(ws_id, path, what_runs(spec), spec.name, stamp)
            kept = [
                e
                for e in kept
                if (e.workspace_id, e.path, e.command) != (ws_id, path, entry.command)
            ]
            kept.append(entry)
        self._write(kept)

    def revoke(self, ws: HasIdentity, names: Sequence[str] | None = None) -> list[Trusted]:
        """Forget this workspace's trusted retrievers (only those of ``names`` if given)."""
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
        """This workspace's trusted retrievers."""
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
