"""goldpan from Python: score your own search function on a test set, as unit tests do.

::

    import goldpan

    result = goldpan.evaluate(search, "tests/retrieval.db", k=10)
    result.means["mrr"]                      # the numbers `goldpan score` prints
    worse = result.compare_to("tests/retrieval-snapshot.json")
    assert not worse.regressed, worse.report()

``search(text)`` returns the document ids it finds, best first, or ``(doc_id, score)``
pairs (ranked by score, ties by doc id descending, as trec_eval does). The workspace is
only read: nothing is stored, no command is run. A comparison that compared nothing (the
snapshot has no retriever of that name, or is of another test set) raises
:class:`GateRefused` rather than pass. This package imports the engine, never the
terminal UI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.ci.gate import GateRefused
    from goldpan.api import Comparison, Evaluation, Search, TestSet, evaluate, open

__all__ = ["Comparison", "Evaluation", "GateRefused", "Search", "TestSet", "evaluate", "open"]


def __getattr__(name: str) -> Any:
    """The API, imported on first use.

    The pytest plugin (``goldpan.pytest_plugin``) is loaded by every pytest run and must
    not pay for the engine's imports.
    """
    if name in __all__:
        from goldpan import api

        return getattr(api, name)
    raise AttributeError(f"module 'goldpan' has no attribute {name!r}")
