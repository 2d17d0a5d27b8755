"""Which questions each retriever has ranked: the one rule of "not ranked yet".

A cached ranking is made from inputs: the corpus, the retriever's kind and parameters,
the question's text and, for a kind that reads other retrievers' rankings (fusion,
rerank, id boost), those rankings. :func:`input_hashes` hashes them; the runner stores
the hash with each ranking it makes and ranks again what no longer matches.

A question is **not ranked** by a retriever when goldpan ranks for that retriever
(every kind but an imported run) and

* the retriever has no cached ranking of the question, or
* its cached ranking was made for other inputs than the question's now: the question's
  text changed (a re-import, an edit), or the corpus, the retriever's parameters or a
  base's ranking did. That is, the stored hash differs from :func:`input_hashes` now,
  which is what makes ``goldpan pool`` rank it again.

A kind whose rankings depend on something outside the workspace (the team's command, a
search engine: :func:`engine.trust.is_untrusted_kind`) folds a key into its hash that
only the outside can give (reading it may run a command); the rule never asks, so for
such a retriever only the first case applies. An imported run (``external``, or a
``--run`` file) is never "not ranked": it will never rank a question it lacks, so that
question is a miss, as trec_eval scores it.

What a score does with a question a retriever has not ranked depends on whether that
retriever **will** rank it (:func:`holding`):

* it will (it ranks here: it has a cached ranking of some question of the workspace, and
  the caller does not know it cannot rank now): the question is left out of *every*
  retriever's means (:func:`engine.gold.is_scored`) and counted as ``not_ranked`` until it
  is ranked. The means of one table, a comparison's pairs and a snapshot stay over the
  same questions;
* it cannot rank now (it has no cached ranking of any question: added and never pooled,
  a command never trusted; or the caller knows it cannot: not trusted on this machine,
  failed, skipped by the app): its questions are not held out of the others' means. It is
  the one that lacks rankings: its means are absent (never 0, never misses) until it has
  ranked every scored question.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from engine.names import param_list
from engine.trust import is_untrusted_kind
from engine.types import STORED_KINDS, Question, RetrieverSpec, TextHasher

if TYPE_CHECKING:
    from engine.workspace import Workspace

NotRanked = dict[str, set[str]]
"""Retriever name -> the ids of the questions it has not ranked (:func:`not_ranked`)."""


def bases_of(spec: RetrieverSpec) -> tuple[str, ...]:
    """The retrievers whose rankings ``spec`` reads (its ``of`` parameter)."""
    of = spec.params.get("of")
    return tuple(param_list(of, "of")) if of else ()


def input_hashes(
    corpus_hash: str,
    spec: RetrieverSpec,
    questions: Iterable[Question],
    bases: Mapping[str, Mapping[str, str]],
    key: str = "",
) -> dict[str, str]:
    """Per question, the hash of what ``spec``'s ranking of it is made from.

    The corpus, the retriever's kind and parameters, the question's text, and the stored
    input hash of each base's ranking of it (``bases``: base -> question -> hash; a base
    without one adds an empty part). ``key``: an outside retriever's key (see
    :class:`~engine.retrieve.base.OutsideRetriever`), which the runner folds in.
    """
    hasher = TextHasher(corpus_hash, spec.hash, *([key] if key else []))
    names = bases_of(spec)
    return {
        q.id: hasher(q.text, *[bases[b].get(q.id, "") if b in bases else "" for b in names])
        for q in questions
    }


def not_ranked(
    specs: Sequence[RetrieverSpec],
    corpus_hash: str,
    questions: Sequence[Question],
    stored: Mapping[str, Mapping[str, str]],
) -> NotRanked:
    """Per retriever of ``specs``, the ``questions`` it has not ranked (see the module doc).

    ``stored``: retriever -> question id -> the input hash of its cached ranking, for the
    retrievers of ``specs`` and every base they read. An imported run is never listed.
    """
    out: NotRanked = {}
    for spec in specs:
        if spec.kind in STORED_KINDS:
            continue
        mine = stored.get(spec.name, {})
        if is_untrusted_kind(spec.kind):
            out[spec.name] = {q.id for q in questions if q.id not in mine}
            continue
        now = input_hashes(corpus_hash, spec, questions, stored)
        out[spec.name] = {q for q, h in now.items() if mine.get(q) != h}
    return out


def workspace_not_ranked(
    ws: Workspace, names: Collection[str] | None = None, question_ids: Collection[str] | None = None
) -> NotRanked:
    """:func:`not_ranked` of the workspace's retrievers (``names`` only, if given).

    ``question_ids``: only these questions (default: all).
    """
    specs = [s for s in ws.retrievers() if names is None or s.name in names]
    wanted = None if question_ids is None else set(question_ids)
    questions = [q for q in ws.questions() if wanted is None or q.id in wanted]
    read = {s.name for s in specs} | {b for s in specs for b in bases_of(s)}
    stored = ws.input_hashes(sorted(read), None if wanted is None else sorted(wanted))
    return not_ranked(specs, ws.corpus_hash(), questions, stored)


def holding(
    not_ranked: Mapping[str, Collection[str]],
    with_rankings: Collection[str],
    cannot_rank: Collection[str] = (),
) -> set[str]:
    """The retrievers that will rank their unranked questions: those leave every mean.

    See the module doc. ``with_rankings``: the retrievers with a cached ranking of some
    question of the workspace, whatever its inputs (one with none has never ranked here:
    added and never pooled, a command never trusted). ``cannot_rank``: retrievers the
    caller knows cannot rank now (not trusted on this machine, failed, skipped). Callers:
    :func:`engine.scoring.scored_set` (every score, comparison, snapshot and analysis) and
    :class:`engine.live.LiveScores` (the review screen).
    """
    return {r for r, qs in not_ranked.items() if qs and r in with_rankings and r not in cannot_rank}


def workspace_holding(
    ws: Workspace, not_ranked: Mapping[str, Collection[str]], cannot_rank: Collection[str] = ()
) -> set[str]:
    """:func:`holding`, with the retrievers that have a cached ranking read from ``ws``."""
    unranked = sorted(r for r, qs in not_ranked.items() if qs and r not in cannot_rank)
    return holding(not_ranked, ws.with_rankings(unranked) if unranked else (), cannot_rank)


def left_out(not_ranked: Mapping[str, Collection[str]], holding: Collection[str]) -> set[str]:
    """What a score leaves out of every mean: the questions ``holding`` have not ranked yet.

    ``holding``: the retrievers that will rank theirs (:func:`holding`).
    """
    return {q for r in holding for q in not_ranked.get(r, ())}
