"""A pytest plugin: each question of a goldpan test set is a test case.

::

    pytest --goldpan tests/retrieval.db --goldpan-search mypkg.search:search
           [--goldpan-against tests/retrieval-snapshot.json] [--goldpan-k 10]

collects the gate's own item (``goldpan``) and one item per scored question
(``goldpan[q017]``), and presents the gate's verdict (:mod:`engine.ci.gate`). With
``--goldpan-against`` an item fails when its question regressed against the snapshot
(and is skipped when it was not compared: scored only now); without, when no gold is in
the search's top k. The failure shows the question, the gold and what ranked first.
Compared nothing is never a pass: when the gate is refused (no scored question, the
snapshot has no retriever of the search's name, a snapshot of another test set), the
``goldpan`` item fails with the reason and every question item with "not compared".

Registered through the ``pytest11`` entry point. Without ``--goldpan`` it adds its
options and nothing else: it imports no goldpan module and collects nothing.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from engine.ci.gate import QuestionResult, Verdict
    from goldpan.api import Evaluation

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
    """Add the gate's item and one item per scored question of the ``--goldpan`` test set."""
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
    items.append(GateItem.from_parent(session, name="goldpan"))
    items.extend(QuestionItem.from_parent(session, name=f"goldpan[{q}]", qid=q) for q in scored)


def _state(config: pytest.Config) -> dict[str, Any]:
    """The evaluation and the gate's verdict, made once (by the first item that runs).

    An error (the search failed, returned a document the test set lacks, a bad snapshot)
    is kept too: every item reports it, and the search is not run again for each.
    """
    state = config.stash[_STATE]
    if "verdict" not in state and "error" not in state:
        from engine.errors import GoldpanError
        from goldpan.api import evaluate

        search = _load(config.getoption("goldpan_search"))
        name = config.getoption("goldpan_name") or getattr(search, "__name__", "search")
        try:
            evaluation = evaluate(search, config.getoption("goldpan"), name=name)
            state["evaluation"] = evaluation
            verdict = evaluation.verdict(
                config.getoption("goldpan_against"), k=int(config.getoption("goldpan_k"))
            )
            state["verdict"] = verdict
            state["results"] = {q.question: q for q in verdict.questions}
        except GoldpanError as exc:
            state["error"] = str(exc)
    return state


def _compared(config: pytest.Config, why: str) -> dict[str, Any]:
    """The state, when the gate compared something; else fail, ``why`` heading the reason."""
    state = _state(config)
    if "error" in state:
        raise GateFailed(why + state["error"])
    if state["verdict"].refusals:
        raise GateFailed(why + state["verdict"].refusal_message())
    return state


class GateFailed(Exception):
    """A question regressed or missed its gold, or the gate was refused; the message says how."""


class GateItem(pytest.Item):
    """The gate itself: fails when it cannot vouch for what it compared (or compared nothing).

    Without it, a test set with no scored question would collect nothing and pass.
    """

    def runtest(self) -> None:
        """Fail with the refusals (or the error) that keep the gate from passing."""
        _compared(self.config, "goldpan: the gate cannot pass: ")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The reason, not a traceback."""
        if isinstance(excinfo.value, GateFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the item comes from: the test set file."""
        return Path(self.config.getoption("goldpan")), None, self.name


class QuestionItem(GateItem):
    """One question of the test set."""

    def __init__(self, *, qid: str, **kwargs: Any) -> None:
        """Remember the question's id."""
        super().__init__(**kwargs)
        self.qid = qid

    def runtest(self) -> None:
        """Fail when the question regressed (or, without a snapshot, missed its gold).

        A question the gate did not compare (scored only now) is skipped with the reason;
        when the gate is refused, every question fails with it: none was compared.
        """
        state = _compared(self.config, "not compared: ")
        verdict: Verdict = state["verdict"]
        evaluation: Evaluation = state["evaluation"]
        result: QuestionResult = state["results"][self.qid]
        if result.not_compared is not None:
            pytest.skip(f"not compared: {result.not_compared}")
        if not result.failed:
            return
        from engine.visible import visible_line  # a question never drives the terminal

        ranking = evaluation.rankings[self.qid].doc_ids
        gold = ", ".join(evaluation.board.golds[self.qid].gold) or "-"
        facts = visible_line(f"question {self.qid}: {evaluation.texts[self.qid]}") + (
            f"\ngold: {visible_line(gold)}"
            f"\nranked first: {visible_line(ranking[0]) if ranking else '-'}"
        )
        if result.rank_then is not None:
            raise GateFailed(
                f"got worse since snapshot {verdict.against}: first gold at rank "
                f"{result.rank_then or '-'} then, {result.rank_now or '-'} now\n{facts}"
            )
        raise GateFailed(
            f"no gold in the top {verdict.k} (first gold at rank {result.rank_now or '-'})\n{facts}"
        )
