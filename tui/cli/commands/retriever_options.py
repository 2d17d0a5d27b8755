"""`retriever add`'s options and the spec they make, generated from the kinds' parameters.

Each kind declares its ``PARAMS`` (:data:`engine.retrieve.KIND_PARAMS`).

One option per parameter name (``--k1``, ``--of``, ...), shared by the kinds that declare
it; its default is the kind's own and is filled in after the kind is known, so argparse's
defaults are all None ("not given").
"""

from __future__ import annotations

import argparse
from typing import Any

from engine.retrieve import KIND_PARAMS, RETRIEVER_KINDS, kind_params, new_spec
from engine.retrieve.params import FLOATS, PATHS, Param, describe_default
from engine.types import RetrieverSpec
from tui.cli import values

DEFAULT_KIND = "bm25"


def _dest(p: Param) -> str:
    return p.name


def _by_flag() -> dict[str, list[tuple[str, Param]]]:
    """Option -> the (kind, parameter) pairs it sets, in registry order."""
    out: dict[str, list[tuple[str, Param]]] = {}
    for kind, params in KIND_PARAMS.items():
        for p in params:
            if p.cli:
                out.setdefault(p.flag, []).append((kind, p))
    return out


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _help(pairs: list[tuple[str, Param]], all_kinds: int) -> str:
    by_help: dict[str, list[str]] = {}  # kinds that share a help are named together
    for kind, p in pairs:
        by_help.setdefault(p.help, []).append(kind)
    if len(by_help) == 1:
        text = next(iter(by_help))
    else:
        text = "; ".join(f"{_join(kinds)}: {h}" for h, kinds in by_help.items())
    defaults: dict[str, list[str]] = {}
    for kind, p in pairs:
        if p.default is not None and p.type is not bool and p.default != "":
            defaults.setdefault(describe_default(p), []).append(kind)
    if len(defaults) == 1 and len(next(iter(defaults.values()))) == len(pairs):
        text += f" (default: {next(iter(defaults))})"
    elif defaults:
        text += " (default: " + ", ".join(f"{d} for {_join(k)}" for d, k in defaults.items()) + ")"
    if any(p.required for _, p in pairs):
        needed = [k for k, p in pairs if p.required]
        text += f"; needed by {_join(needed)}"
    return text


def kinds_summary() -> str:
    """One line per kind's options, for the command's description."""
    parts = []
    for kind, params in KIND_PARAMS.items():
        flags = [p.flag if p.required else f"[{p.flag}]" for p in params if p.cli]
        parts.append(f"{kind} ({' '.join(flags)})")
    return "Kinds: " + "; ".join(parts) + "."


def add_retriever_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--kind`` and every kind's parameter options to ``retriever add``."""
    parser.add_argument("--kind", default=DEFAULT_KIND, choices=sorted(RETRIEVER_KINDS))
    by_flag = _by_flag()
    groups: dict[tuple[str, ...], Any] = {}
    n_kinds = len(RETRIEVER_KINDS)
    for flag, pairs in by_flag.items():
        kinds = tuple(k for k, _ in pairs)
        p = pairs[0][1]
        if len(kinds) == n_kinds or len(kinds) > 2:
            group: Any = parser
        else:
            group = groups.get(kinds)
            if group is None:
                group = groups[kinds] = parser.add_argument_group(_join(list(kinds)))
        # argparse expands %(...)s in help: a template's placeholders are shown as written
        text = _help(pairs, n_kinds).replace("%", "%%")
        options: dict[str, Any] = {"dest": _dest(p), "default": None, "help": text}
        if p.type is bool:
            options["action"] = "store_true"
        else:
            # finite numbers in a sane range, checked as parsed (the kind's own check,
            # e.g. b in [0, 1], follows when the spec is made)
            if p.type is float:
                options["type"] = values.finite(*p.bounds) if p.bounds else values.finite()
            elif p.type is int:
                options["type"] = values.ranks
            elif p.type == FLOATS:
                options["type"] = values.finite_list
            if p.choices is not None:
                options["choices"] = list(p.choices)
            if p.type == PATHS:
                options["nargs"] = "+"
            if p.metavar:
                options["metavar"] = p.metavar
        group.add_argument(flag, **options)


def spec_from_args(name: str, args: argparse.Namespace) -> RetrieverSpec:
    """The spec the options ask for: the chosen kind's parameters, defaults filled in.

    Options of other kinds are ignored. Raises ValueError on a missing or bad value.
    """
    kind = args.kind
    given = {p.name: getattr(args, _dest(p), None) for p in kind_params(kind) if p.cli}
    return new_spec(name, kind, given)
