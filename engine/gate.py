"""Rankings given for one scoring only: a run file or a command named on the command line.

``goldpan score WS --run FILE[=NAME]`` and ``--run-command "CMD"[=NAME]`` score the team's
code as it is now without storing anything: the rankings are made here, held in memory
(:class:`~engine.types.CachedRun` per question, as the workspace would hand them out) and
given to :func:`~engine.scoring.score_workspace` / :func:`~engine.score_snapshots.diff_against`.
The workspace is only read. A command typed by the user is theirs to trust: it runs
without the workspace trust record (which is for commands a workspace file names).
"""

from __future__ import annotations

import time
from pathlib import Path

from engine.formats.trec import read_trec_run, run_scores
from engine.ingest import _check_run_refs as check_run_refs
from engine.retrieve import DEFAULT_DEPTH, PrepareEnv, build_retriever, trec_order
from engine.trust import COMMAND_KIND
from engine.types import CachedRun, RetrieverSpec
from engine.workspace import Workspace

Given = dict[str, CachedRun]
"""Question id -> ranking, for one retriever."""


def rankings_from_file(ws: Workspace, path: Path, name: str) -> Given:
    """A TREC run file's rankings of the workspace's questions, as ``import run`` reads it.

    Every line is checked (ids unknown to the workspace are refused, file and line named);
    a question the file lacks gets an empty ranking (a miss).

    Raises:
        IngestError: a bad line or an unknown question or document.
    """
    lines = read_trec_run(path)
    check_run_refs(ws, path, lines)
    ranked = {qid: trec_order(s, len(s)) for qid, s in run_scores(lines).items()}
    out: Given = {}
    for qid in ws.question_ids():
        ids, scores = ranked.get(qid, ([], []))
        out[qid] = CachedRun(name, qid, tuple(ids), tuple(scores), 0.0, "", len(ids))
    return out


def rankings_from_command(
    ws: Workspace, command: str, name: str, *, depth: int = DEFAULT_DEPTH, timeout: float = 600.0
) -> Given:
    """Run ``command`` now, as a ``command`` retriever would be, over every question.

    Raises:
        BadInput: a command line that cannot be split.
        RetrieverError: it failed, timed out or printed a bad run (line named).
    """
    spec = RetrieverSpec(name, COMMAND_KIND, {"command": command, "timeout": timeout})
    retriever = build_retriever(spec)
    retriever.prepare(ws.docs(), {}, PrepareEnv())
    questions = ws.questions()
    started = time.perf_counter()
    rankings = retriever.rank(questions, depth, [{} for _ in questions])
    ms = (time.perf_counter() - started) * 1000.0 / max(1, len(questions))
    return {
        q.id: CachedRun(name, q.id, tuple(ids), tuple(scores), ms, "", depth)
        for q, (ids, scores) in zip(questions, rankings, strict=True)
    }
