"""Retriever parameters, declared once per kind.

Each retriever kind lists its parameters as :class:`Param` rows (name, type, default,
help, choices, check). The kind reads its spec through :func:`resolve`, so the default and
the check of a parameter live in one place; the CLI's ``retriever add`` options and the
spec they build are generated from the same rows (see :func:`build_params`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import BadInput
from engine.formats.outfiles import not_regular
from engine.types import TIMEOUT_RANGE

LIST = "list"
"""``Param.type`` of a list of names (a JSON list, or a comma-separated string)."""
FLOATS = "floats"
"""``Param.type`` of a list of numbers (a JSON list, or a comma-separated string)."""
PATHS = "paths"
"""``Param.type`` of a list of file or folder paths (a JSON list; on the command line one
word per path, never split at commas)."""


@dataclass(frozen=True)
class Param:
    """One parameter of a retriever kind."""

    name: str
    """Its key in the spec's parameters (``RetrieverSpec.params``)."""
    type: Any
    """``float``, ``int``, ``str``, ``bool`` (an on/off flag), :data:`LIST`, :data:`FLOATS`
    or :data:`PATHS`."""
    default: Any
    """The value when not given; ``None``: optional and only stored when given."""
    help: str
    choices: tuple[str, ...] | None = None
    lookup: Callable[[Any], object] | None = None
    """Checks a value against a registry, raising that registry's own error (which lists
    its names); used instead of :attr:`choices` when given."""
    check: Callable[[Any], bool] | None = None
    """True when a (converted) value is acceptable; else :attr:`must` says what it must be."""
    must: str = ""
    bounds: tuple[float, float] | None = None
    """The range of a number (both ends included), checked here and by the command line's
    option as it is parsed."""
    required: bool = False
    metavar: str | None = None
    cli: bool = True
    """Offered as a ``retriever add`` option (``--name`` with ``_`` as ``-``)."""
    from_file: bool = False
    """The value given names a UTF-8 text file (a SQL or request template) and what is
    stored is that file's text, never its path: :func:`build_params` reads it, so the
    spec says exactly what runs (and is trusted by it)."""

    @property
    def flag(self) -> str:
        """The command-line option."""
        return "--" + self.name.replace("_", "-")

    def convert(self, value: Any, kind: str) -> Any:
        """``value`` as this parameter's type, checked.

        Raises:
            BadInput: naming the kind, the parameter and what it must be.
        """
        what = f"{kind} {self.name}"
        try:
            if self.type is bool:
                if not isinstance(value, bool | int):
                    raise TypeError
                out: Any = bool(value)
            elif self.type == PATHS:
                items = [value] if isinstance(value, str) else [str(v) for v in value]
                out = [i for i in items if i.strip()]
            elif self.type in (LIST, FLOATS):
                items = (
                    [v.strip() for v in value.split(",")]
                    if isinstance(value, str)
                    else [str(v).strip() if self.type == LIST else v for v in value]
                )
                out = [i for i in items if i] if self.type == LIST else [float(v) for v in items]
            elif self.type is str:
                if not isinstance(value, str):
                    raise TypeError
                out = value
            else:
                if isinstance(value, bool):
                    raise TypeError
                out = self.type(value)
        except (TypeError, ValueError, OverflowError):  # OverflowError: int(inf), float(10**400)
            raise BadInput(f"{what}: expected {_type_name(self.type)}, not {value!r}") from None
        if self.lookup is not None:
            self.lookup(out)
        elif self.choices is not None and out not in self.choices:
            raise BadInput(
                f"{what}: unknown value {out!r}; known values: {', '.join(self.choices)}"
            )
        if self.check is not None and not self.check(out):
            raise BadInput(f"{what} must be {self.must}, not {value!r}")
        if self.bounds is not None and not (
            math.isfinite(out) and self.bounds[0] <= out <= self.bounds[1]
        ):
            raise BadInput(f"{what} must be {in_range(self.bounds)}, not {value!r}")
        return out


def _type_name(t: Any) -> str:
    return {
        float: "a number",
        int: "a whole number",
        str: "text",
        bool: "true or false",
        LIST: "a list of names",
        FLOATS: "a list of numbers",
        PATHS: "a list of paths",
    }.get(t, str(t))


def in_range(bounds: tuple[float, float]) -> str:
    """``from 0.1 to 604,800``: a range as the help and the messages say it."""
    return "from " + " to ".join(f"{b:,g}" if b < 1 else f"{b:,.0f}" for b in bounds)


def timeout(default: float, per: str) -> Param:
    """The ``timeout`` parameter: seconds ``per`` something, in :data:`TIMEOUT_RANGE`."""
    return Param(
        "timeout",
        float,
        default,
        f"seconds {per}, {in_range(TIMEOUT_RANGE)}",
        bounds=TIMEOUT_RANGE,
    )


def finite_at_least(low: float) -> Callable[[Any], bool]:
    """A check: a finite number >= ``low``."""
    return lambda v: math.isfinite(v) and v >= low


def resolve(params: Sequence[Param], given: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """Every declared parameter's value: the given one (converted, checked) or its default.

    Keys not declared are ignored (older workspaces may carry them). A required parameter
    that is missing raises.

    Raises:
        BadInput: a missing required parameter or a bad value.
    """
    out: dict[str, Any] = {}
    for p in params:
        value = given.get(p.name)
        if value is None:
            if p.required:
                raise BadInput(f"a {kind} retriever needs {p.flag}")
            out[p.name] = p.default
        else:
            out[p.name] = p.convert(value, kind)
    return out


def build_params(params: Sequence[Param], given: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """The parameters a new spec stores, from option values (None: not given).

    A parameter is stored when given, or when it has a default (so that a spec says what
    it runs with); an optional parameter without a default is left out. Values are
    converted and checked as :func:`resolve` does.

    Raises:
        BadInput: a missing required parameter or a bad value.
    """
    out: dict[str, Any] = {}
    for p in params:
        value = given.get(p.name)
        if isinstance(value, str) and p.type is not str and not value.strip():
            value = None
        if value is None:
            if p.required:
                raise BadInput(f"a {kind} retriever needs {p.flag}")
            if p.default is not None:
                out[p.name] = list(p.default) if isinstance(p.default, tuple) else p.default
            continue
        if p.type is str and p.required and not str(value).strip():
            raise BadInput(f"a {kind} retriever needs {p.flag}")
        if p.from_file:
            value = read_text_file(value, f"{kind} {p.flag}")
        out[p.name] = p.convert(value, kind)
    return out


MAX_TEXT_FILE = 1 << 20
"""The largest file a :attr:`Param.from_file` parameter reads (a template, not a corpus)."""


def read_text_file(value: Any, what: str) -> str:
    """The text of the file ``value`` names, for a :attr:`Param.from_file` parameter.

    Raises:
        BadInput: naming the option and the file: missing, not a regular file, too
            large, unreadable, not UTF-8 or empty.
    """
    if not isinstance(value, str | Path) or not str(value).strip():
        raise BadInput(f"{what}: expected a file name, not {value!r}")
    path = Path(value)
    odd = not_regular(path)
    if odd is not None:
        raise BadInput(f"{what}: {path} {odd}")
    try:
        if path.stat().st_size > MAX_TEXT_FILE:
            raise BadInput(f"{what}: {path} is larger than {MAX_TEXT_FILE >> 20} MiB")
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"{what}: cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{what}: {path} is not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise BadInput(f"{what}: {path} is empty")
    return text.removeprefix("\ufeff")


def describe_default(p: Param) -> str:
    """The default as a user types it (``title,text``, ``1.5``)."""
    d = p.default
    if isinstance(d, list | tuple):
        return ",".join(str(x) for x in d)
    if isinstance(d, float):
        return f"{d:g}"
    return str(d)


def default_of(params: Sequence[Param], name: str) -> Any:
    """The declared default of parameter ``name``."""
    for p in params:
        if p.name == name:
            return p.default
    raise KeyError(name)


OF = Param("of", LIST, None, "the retrievers whose rankings are read", required=True, metavar="A,B")
"""The bases of a kind that reads other retrievers' rankings (rrf, rerank, idboost)."""
