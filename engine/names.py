"""Names a user gives that must already exist, and the rule for a person's name.

One message for a name that is not there (a tag, a retriever, a question, an annotator):
the name, what it was given to, and the names there are, closest first. A typo such as
``--tag hrad`` must stop with "known tags: hard, ..." rather than score zero questions
and exit 0.

The retriever rule (:func:`check_retriever_name`) is what every retriever's name passes
when it is added (``retriever add``, ``import run --name``, the engine's
``Workspace.add_retriever``): no spaces, ``:``, ``=`` or ``,``, the characters that
separate a name from what follows it on a command line (``--fail-under NAME:METRIC=V``,
``of=A,B``, ``gate --run FILE=NAME``).

The person rule (:func:`check_person_name`) is what every annotator, adjudicator and
viewer name passes, wherever it comes from (``--annotator``, ``$GOLDPAN_ANNOTATOR``,
``serve``): a name that could be read as an option (``-x``) or that a terminal would
show differently from what is stored is refused before anything is written.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from engine.errors import BadInput, UnknownName

SHOWN = 12
"""How many known names an error lists (closest first); the rest are counted."""

PERSON_NAME_MAX = 64
"""The longest person name, in characters."""


def closest_first(name: str, known: Iterable[str], limit: int = SHOWN) -> tuple[list[str], int]:
    """Up to ``limit`` of ``known``, close matches of ``name`` first; and how many are left.

    The close matches are difflib's (best first); the rest keep their given order.
    """
    names = list(dict.fromkeys(known))
    close = difflib.get_close_matches(name, names, n=limit, cutoff=0.6)
    ordered = close + [n for n in names if n not in close]
    return ordered[:limit], max(0, len(ordered) - limit)


def unknown_name(
    what: str,
    name: str,
    known: Iterable[str],
    *,
    given_to: str | None = None,
    plural: str | None = None,
    where: str = "this workspace",
) -> UnknownName:
    """The error for ``name``, which is no ``what`` of ``where``; it lists the known ones.

    ``given_to``: the option or argument it came from (``--tag``), named first.
    """
    many = plural or f"{what}s"
    shown, left = closest_first(name, known)
    head = f"{given_to}: " if given_to else ""
    if not shown:
        return UnknownName(f"{head}unknown {what} {name!r}: {where} has no {many}")
    more = f" and {left} more" if left else ""
    return UnknownName(
        f"{head}unknown {what} {name!r}; known {many} (closest first): {', '.join(shown)}{more}"
    )


def check_known(
    what: str,
    names: Iterable[str] | str | None,
    known: Iterable[str],
    *,
    given_to: str | None = None,
    plural: str | None = None,
    where: str = "this workspace",
) -> None:
    """Raise :func:`unknown_name`'s error for the first of ``names`` not in ``known``.

    ``names`` may be one name, several, or None (nothing to check).
    """
    if names is None:
        return
    wanted = [names] if isinstance(names, str) else list(names)
    have = list(known)
    present = set(have)
    for n in wanted:
        if n not in present:
            raise unknown_name(what, n, have, given_to=given_to, plural=plural, where=where)


RETRIEVER_NAME = re.compile(r"^[^\s:=,]+$")
"""A retriever's name: one or more characters, none of them white space, ``:``, ``=`` or ``,``."""


def is_retriever_name(name: str) -> bool:
    """Whether ``name`` can name a retriever (:data:`RETRIEVER_NAME`)."""
    return RETRIEVER_NAME.fullmatch(name) is not None  # `$` alone lets "x\n" through


def retriever_name_problem(
    name: str, given_to: str = "retriever name", example: str = "bm25-word"
) -> str:
    """What is wrong with ``name`` as a retriever's name, said for ``given_to``."""
    return f"{given_to} {name!r}: use no spaces, ':', '=' or ',' (e.g. {example})"


def check_retriever_name(name: str, given_to: str = "retriever name") -> str:
    """``name`` when it can name a retriever; else :class:`BadInput` saying why."""
    if not is_retriever_name(name):
        raise BadInput(retriever_name_problem(name, given_to))
    return name


def check_person_name(name: str, given_to: str = "--annotator") -> str:
    """``name`` when it can name a person on labels and in a served session.

    Refused: empty, leading or trailing spaces, a first character ``-`` (it would be read
    as an option where the name is passed on, as ``serve`` does to each browser tab's
    app), characters that are not printable, more than :data:`PERSON_NAME_MAX`, and a
    model judge's name (:data:`MODEL_PREFIX`): a person's grades are never a model's.
    """
    _check_name(name, given_to)
    check_person_role(name, given_to)
    return name


def check_person_role(name: str, given_to: str = "annotator") -> str:
    """``name`` when it cannot pass for something else than a person's name.

    Not a model judge's (:data:`MODEL_PREFIX`: a person's grades are never a model's, nor
    a model's people's), nor one read as an option where it is passed on (``-x``). What an
    imported file's names must pass (``import labels``, ``import verdicts``): names a
    received workspace may hold otherwise (unprintable, long) are shown escaped, and a
    file goldpan exported is read back.
    """
    _not_an_option(name, given_to)
    if is_model_name(name):
        raise BadInput(
            f"{given_to} {name!r}: names starting with {MODEL_PREFIX!r} are model judges' "
            "(`goldpan judge`); give a person's name"
        )
    return name


MODEL_PREFIX = "model:"
"""How every model judge's annotator name starts (``model:minilm``)."""


def is_model_name(name: str) -> bool:
    """Whether ``name`` is a model judge's annotator name."""
    return name.startswith(MODEL_PREFIX)


def check_model_name(name: str, given_to: str = "--annotator") -> str:
    """``name`` when it can name a model judge: ``model:NAME``, NAME as a person's name."""
    if not is_model_name(name) or not name[len(MODEL_PREFIX) :].strip():
        raise BadInput(f"{given_to} {name!r}: a model judge is named {MODEL_PREFIX}NAME")
    _check_name(name, given_to)
    _check_name(name[len(MODEL_PREFIX) :], given_to)
    return name


def _check_name(name: str, given_to: str) -> None:
    if not name.strip() or name != name.strip():
        raise BadInput(f"{given_to} {name!r}: use a name without leading or trailing spaces")
    _not_an_option(name, given_to)
    if any(not ch.isprintable() for ch in name) or len(name) > PERSON_NAME_MAX:
        raise BadInput(f"{given_to} {name!r}: use up to {PERSON_NAME_MAX} printable characters")


def param_list(value: Any, what: str) -> list[str]:
    """A list of names from a JSON list or a comma-separated string."""
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, list | tuple):
        items = [str(v).strip() for v in value]
    else:
        raise BadInput(f"{what}: expected a list of retriever names")
    items = [i for i in items if i]
    if not items:
        raise BadInput(f"{what}: name at least one retriever")
    return items


def _not_an_option(name: str, given_to: str) -> None:
    if name.startswith("-"):
        raise BadInput(f"{given_to} {name!r}: a name must not start with '-'")
