"""A pytest plugin: each question of a goldpan test set is a test case.

::

    pytest --goldpan tests/retrieval.db --goldpan-search mypkg.search:search
           [--goldpan-against tests/retrieval-snapshot.json] [--goldpan-k 10]

collects one item per scored question (``goldpan[q017]``). With ``--goldpan-against`` an
item fails when its question regressed against the snapshot; without, when no gold is in
the search's top k. The failure shows the question, the gold and what ranked first.

Registered through the ``pytest11`` entry point. Without ``--goldpan`` it adds its
options and nothing else: it imports no goldpan module and collects nothing.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from goldpan.api import Comparison, Evaluation

_STATE = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--goldpan`` options."""
    g = parser.getgroup("goldpan", "goldpan: a retrieval test set's questions as tests")
    g.addoption("--goldpan", metavar="WS", help="the test set (a goldpan workspace file)")
    g.addoption(
        "--goldpan-search",
        metavar="MODULE:FUNCTION",
        help="search(text) -> doc ids best first, or (doc_id, score) pairs",
    )
    g.addoption(
        "--goldpan-against",
        metavar="SNAPSHOT",
        help="fail the questions that got worse than this snapshot file",
    )
    g.addoption(
        "--goldpan-k",
        type=int,
        default=10,
        metavar="K",
        help="without --goldpan-against: fail a question whose gold is not in the top K "
        "(default 10)",
    )
    g.addoption(
        "--goldpan-name",
        metavar="NAME",
        help="the snapshot's retriever to compare with (default: the function's name)",
    )


def _load(spec: str) -> Any:
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise pytest.UsageError(f"--goldpan-search {spec!r}: expected MODULE:FUNCTION")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise pytest.UsageError(f"--goldpan-search {spec!r}: {exc}") from None
    if not callable(found):
        raise pytest.UsageError(f"--goldpan-search {spec!r} is not a function")
    return found


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add one item per scored question of the ``--goldpan`` test set."""
    path = config.getoption("goldpan")
    if not path:
        return
    if not config.getoption("goldpan_search"):
        raise pytest.UsageError("--goldpan needs --goldpan-search MODULE:FUNCTION")
    from engine.gold import scored_questions, workspace_golds
    from engine.workspace import Workspace

    with Workspace.open(Path(path), readonly=True) as ws:
        golds = workspace_golds(ws)
    # the search function ranks every question: none is left out as not ranked
    scored = scored_questions(golds)
    config.stash[_STATE] = {}
    items.extend(QuestionItem.from_parent(session, name=f"goldpan[{q}]", qid=q) for q in scored)


def _state(config: pytest.Config) -> dict[str, Any]:
    """The evaluation (made once, by the first item that runs) and the comparison."""
    state = config.stash[_STATE]
    if "evaluation" not in state:
        from goldpan.api import evaluate

        search = _load(config.getoption("goldpan_search"))
        name = config.getoption("goldpan_name") or getattr(search, "__name__", "search")
        evaluation = evaluate(search, config.getoption("goldpan"), name=name)
        state["evaluation"] = evaluation
        against = config.getoption("goldpan_against")
        state["comparison"] = evaluation.compare_to(against) if against else None
    return state


class QuestionFailed(Exception):
    """A question regressed or missed its gold; the message says how."""


class QuestionItem(pytest.Item):
    """One question of the test set."""

    def __init__(self, *, qid: str, **kwargs: Any) -> None:
        """Remember the question's id."""
        super().__init__(**kwargs)
        self.qid = qid

    def runtest(self) -> None:
        """Fail when the question regressed (or, without a snapshot, missed its gold)."""
        state = _state(self.config)
        evaluation: Evaluation = state["evaluation"]
        comparison: Comparison | None = state["comparison"]
        rank = evaluation.first_gold_rank()[self.qid]
        ranking = evaluation.rankings[self.qid].doc_ids
        gold = ", ".join(evaluation.board.golds[self.qid].gold) or "-"
        facts = (
            f"question {self.qid}: {evaluation.texts[self.qid]}\n"
            f"gold: {gold}\nranked first: {ranking[0] if ranking else '-'}"
        )
        if comparison is not None:
            moved = [m for m in comparison.regressed if m.question == self.qid]
            if moved:
                m = moved[0]
                raise QuestionFailed(
                    f"got worse since snapshot {comparison.diff.against}: first gold at rank "
                    f"{m.rank_then or '-'} then, {m.rank_now or '-'} now\n{facts}"
                )
            return
        k = int(self.config.getoption("goldpan_k"))
        if not 0 < rank <= k:
            raise QuestionFailed(
                f"no gold in the top {k} (first gold at rank {rank or '-'})\n{facts}"
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The question's facts, not a traceback."""
        if isinstance(excinfo.value, QuestionFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the item comes from: the test set file."""
        return Path(self.config.getoption("goldpan")), None, self.name
