"""The team's own search engine as a retriever: a command that answers with a TREC run.

Once per pool run the command is started (not through a shell: wrap it in ``sh -c '…'``
for pipes or variables), is sent the questions to rank as JSON lines ``{"id", "text"}``
on its standard input, and must print TREC run lines ``qid Q0 docno rank score tag`` on
its standard output (blank lines and ``#`` comments are skipped). Rankings are re-derived
from the score column the trec_eval way (score descending, then doc id descending); the
rank column is ignored. A question the command does not answer gets an empty ranking.

Bad output is an error that names the output line and what was expected; so are a
non-zero exit (with the end of its standard error), a timeout, a question id that was not
asked, a document unknown to the workspace and a document listed twice for one question.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from engine.errors import BadInput
from engine.formats.errors import IngestError
from engine.formats.trec import parse_trec_run, run_scores
from engine.retrieve.base import PrepareEnv, Ranking, RetrieverError, trec_order
from engine.retrieve.params import Param, default_of
from engine.types import Doc, Question, RetrieverSpec

DEFAULT_TIMEOUT_S = 600.0


def parse_run_output(
    text: str, questions: set[str], docs: set[str] | None, source: str
) -> dict[str, dict[str, float]]:
    """Question id -> doc id -> score from a command's TREC run output, every line checked.

    Raises:
        RetrieverError: the first bad line, named as ``source line N``.
    """
    if not text.strip():
        return {}
    try:
        lines = parse_trec_run(text, source)
    except IngestError as exc:
        where = f"{source} line {exc.line}" if exc.line is not None else source
        raise RetrieverError(f"{where}: {exc.message}") from None
    for r in lines:
        if r.question_id not in questions:
            raise RetrieverError(
                f"{source} line {r.line}: question {r.question_id!r} was not asked"
            )
        if docs is not None and r.doc_id not in docs:
            raise RetrieverError(
                f"{source} line {r.line}: document {r.doc_id!r} is not in the workspace"
            )
    return run_scores(lines)


class CommandRetriever:
    """Runs a command once per pool; it answers every question with a TREC run."""

    PARAMS: tuple[Param, ...] = (
        Param(
            "command",
            str,
            None,
            "reads JSON lines, prints a TREC run",
            required=True,
            metavar="CMD",
        ),
        Param("timeout", float, DEFAULT_TIMEOUT_S, "seconds per pool run"),
    )
    """The parameters of the ``command`` kind."""

    bases: tuple[str, ...] = ()
    base_depth: int | None = None
    batch_size = 1_000_000

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the command line and the timeout."""
        self.spec = spec
        command = str(spec.params.get("command") or "").strip()
        if not command:
            raise BadInput('a command retriever needs --command "CMD"')
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise BadInput(f"cannot split the command {command!r}: {exc}") from None
        self.timeout = float(spec.params.get("timeout", default_of(self.PARAMS, "timeout")))
        if not self.timeout > 0:
            raise BadInput("a command retriever's --timeout must be positive")
        self._docs: set[str] | None = None

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Remember the corpus's doc ids (the command's answers are checked against them)."""
        self._docs = {d.id for d in docs}

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Run the command once for all ``questions``."""
        if not questions:
            return []
        stdin = "".join(
            json.dumps({"id": q.id, "text": q.text}, ensure_ascii=False) + "\n" for q in questions
        )
        name = f"command retriever {self.spec.name}"
        try:
            done = subprocess.run(
                self.argv,
                input=stdin,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError:
            raise RetrieverError(f"{name}: no such program {self.argv[0]!r}") from None
        except PermissionError:
            raise RetrieverError(f"{name}: {self.argv[0]!r} is not executable") from None
        except subprocess.TimeoutExpired:
            raise RetrieverError(
                f"{name}: no answer within {self.timeout:g} s (set --timeout)"
            ) from None
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            raise RetrieverError(
                f"{name} exited with status {done.returncode}" + (f":\n{tail}" if tail else "")
            )
        runs = parse_run_output(
            done.stdout, {q.id for q in questions}, self._docs, f"{name} output"
        )
        return [trec_order(runs.get(q.id, {}), depth) for q in questions]
