"""Loading sentence-transformers models: from local files, unless the owner trusted the name.

A model name comes from a workspace (a ``dense`` or ``rerank`` retriever, a model judge,
a ``postgres`` retriever's ``--embed-model``), and a workspace is a file people send each
other. A name the machine's owner has not trusted for that workspace
(:meth:`engine.trust.TrustStore.hub_models`) loads only from a folder on this machine
(:func:`engine.trust.is_local_model`), with the Hugging Face hub switched off while it
loads; any other untrusted name is refused here, before sentence-transformers (and the
hub client with it) is imported. A trusted name loads as the library loads it, the hub
on: it may be downloaded.

The hub is switched by ``HF_HUB_OFFLINE`` (and ``TRANSFORMERS_OFFLINE``), and by
``huggingface_hub.constants.HF_HUB_OFFLINE`` once that module is imported: it reads the
variable once, at import, and every request asks it (``is_offline_mode``).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine.retrieve.base import RetrieverError
from engine.trust import is_local_model

INSTALL_HINT = (
    "dense and rerank retrievers need the optional extra: "
    "pip install torch 'goldpan[dense]' (on a CPU-only machine, a CPU build of torch)"
)

HUB_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
"""The environment variables that switch the Hugging Face hub off ("1")."""


def require_extra() -> None:
    """Raise :class:`RetrieverError` with the install command when the extra is missing."""
    if importlib.util.find_spec("sentence_transformers") is None:
        raise RetrieverError(INSTALL_HINT)


@contextmanager
def hub(*, online: bool) -> Iterator[None]:
    """The hub on (``online``) or off while the block runs; as it was afterwards.

    A hub the user switched off (``HF_HUB_OFFLINE=1`` in the environment) stays off.
    The libraries' own progress bars stay off: goldpan shows its own.
    """
    saved = {name: os.environ.get(name) for name in HUB_VARIABLES}
    was_off = any((value or "").upper() in ("1", "ON", "YES", "TRUE") for value in saved.values())
    online = online and not was_off
    constants = sys.modules.get("huggingface_hub.constants")
    before = getattr(constants, "HF_HUB_OFFLINE", None)
    for name in HUB_VARIABLES:
        os.environ[name] = "0" if online else "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if constants is not None:
        constants.HF_HUB_OFFLINE = not online  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        constants = sys.modules.get("huggingface_hub.constants")
        if constants is not None:  # imported in the block: it read the block's setting
            constants.HF_HUB_OFFLINE = (  # type: ignore[attr-defined]
                before if before is not None else was_off
            )


def check_loadable(name: str, *, online: bool) -> None:
    """Refuse, before any import, a model name that is not trusted and not a local folder.

    Raises:
        RetrieverError: the name is neither trusted for the hub nor a folder holding a model.
    """
    if online or is_local_model(name):
        return
    raise RetrieverError(
        f"model {name!r} is not a folder holding a model on this machine, and goldpan loads "
        "a workspace's model from the Hugging Face hub only once you have trusted that name "
        "for this workspace (`goldpan trust WS`); nothing was downloaded"
    )


def load_model(
    name: str, cache: dict[Any, Any], *, cross: bool = False, online: bool = False
) -> Any:
    """A SentenceTransformer (or CrossEncoder) for ``name``, loaded once per cache.

    ``online``: the owner trusted this name (:meth:`engine.trust.TrustStore.hub_models`):
    unless it is a local folder, the hub may be asked. Otherwise the name must be a local
    model folder. A folder always loads with the hub off.

    Raises:
        RetrieverError: the extra is missing, the name is refused (see
            :func:`check_loadable`), or the library cannot load it (its message kept).
    """
    key = ("model", "cross" if cross else "bi", name)
    model = cache.get(key)
    if model is not None:
        return model
    check_loadable(name, online=online)
    require_extra()
    with hub(online=online and not is_local_model(name)):  # a folder never needs the hub
        try:
            if cross:
                from sentence_transformers import CrossEncoder

                model = CrossEncoder(name)
            else:
                from sentence_transformers import SentenceTransformer

                model = SentenceTransformer(name)
        except Exception as exc:  # the library's errors name the model; keep its message
            raise RetrieverError(f"cannot load model {name!r}: {exc}") from exc
    cache[key] = model
    return model
