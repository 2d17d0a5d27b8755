"""Model judges: a local model, or a team's own command, grades the pooled candidates.

``goldpan judge`` grades each question's candidates (every retriever's top 10 and every
document a person graded: what the Label screen lists) with one of three kinds:

* ``dense``: the cosine of a sentence-transformers bi-encoder's embeddings of question
  and document (documents embedded once and kept, shared with a ``dense`` retriever of
  the same model and fields);
* ``cross-encoder``: a sentence-transformers CrossEncoder's score of the pair;
* ``command``: the team's own judge (an LLM behind a script), JSON lines in and a grade
  per line out (:mod:`engine.judges.command`). Like a ``command`` retriever it runs only
  once this user trusted it for this workspace (:mod:`engine.trust`): a command typed on
  the command line is trusted by being typed (and recorded so), one read from the
  workspace is not run unless trusted.

The model kinds load a model as the retrievers do (:mod:`engine.retrieve.models`): a local
folder with the hub off; a name from the hub only when it was typed now (``--model``,
trusted by being typed, and recorded so) or the owner trusted it for this workspace; a
stored judge's hub name that is not trusted is refused before anything is imported.

A score becomes a grade by thresholds calibrated on what people graded
(:mod:`engine.judges.calibration`); the grades are stored as the judge's own annotator,
``model:NAME``, apart from people's labels, and never become gold by themselves.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.counters import candidate_ids
from engine.errors import BadInput, Refused, UnknownName
from engine.grades import GRADES
from engine.judges.calibration import (
    Calibration,
    Item,
    Thresholds,
    calibrate,
    compare_grades,
    grade_of,
)
from engine.judges.command import COMMAND_TIMEOUT_S, command_argv, command_grades
from engine.names import MODEL_PREFIX, check_model_name, unknown_name
from engine.retrieve.base import RetrieverError, check_fields, doc_text
from engine.retrieve.dense import DenseRetriever, encode
from engine.retrieve.embeddings import document_vectors
from engine.retrieve.models import load_model, require_extra
from engine.trust import COMMAND_KIND, TrustStore, is_local_model, what_runs
from engine.types import MODEL_JUDGE_KINDS, Doc, ModelJudge, ModelLabel, Question, RetrieverSpec
from engine.workspace import Workspace

Progress = Callable[[str, int, int], None]
"""``(what, done, total)``, as the CLI's progress bar takes it."""

DEFAULT_FIELDS = ("title", "text")
"""The document fields a model reads (as the dense and rerank retrievers do)."""
CROSS_BATCH = 32


@dataclass(frozen=True)
class JudgeReport:
    """What a judging run did."""

    judge: ModelJudge
    questions: int
    """Questions judged."""
    grades: int
    """Grades written."""
    counts: tuple[int, int, int, int]
    """How many grades 0, 1, 2, 3 the judge gave."""
    calibration: Calibration
    unpooled: tuple[str, ...] = ()
    """Judged questions with no candidate at all (no cached ranking, nothing graded)."""


def default_annotator(kind: str, model: str) -> str:
    """``model:`` and the model folder's name; ``model:command`` for a command judge."""
    if kind == COMMAND_KIND:
        return f"{MODEL_PREFIX}command"
    path = Path(model.rstrip("/"))
    name = path.parent.name if path.name in ("model", "models") and path.parent.name else path.name
    return MODEL_PREFIX + (name or model)


def command_spec(judge: ModelJudge) -> RetrieverSpec:
    """A command judge as the trust record knows commands (by their exact text)."""
    return RetrieverSpec(judge.annotator, COMMAND_KIND, {"command": judge.model})


def model_spec(judge: ModelJudge) -> RetrieverSpec:
    """A model judge as the trust record knows models (by their exact name)."""
    return RetrieverSpec(judge.annotator, judge.kind, {"model": judge.model})


def make_judge(
    kind: str, model: str, annotator: str | None, fields: Sequence[str] | None = None
) -> ModelJudge:
    """A judge from the command line's words, every one checked."""
    if kind not in MODEL_JUDGE_KINDS:
        raise unknown_name("judge kind", kind, MODEL_JUDGE_KINDS, given_to="--kind")
    if not model.strip():
        what = '--command "CMD"' if kind == COMMAND_KIND else "--model NAME_OR_PATH"
        raise BadInput(f"a {kind} judge needs {what}")
    if kind == COMMAND_KIND:
        command_argv(model)
    check_model_kind(kind, model)
    name = check_model_name(annotator or default_annotator(kind, model))
    params: dict[str, Any] = {}
    if kind != COMMAND_KIND:
        params["fields"] = list(check_fields(fields or DEFAULT_FIELDS))
    return ModelJudge(name, kind, model, params)


def check_model_kind(kind: str, model: str) -> None:
    """Refuse a local model folder that is plainly of the other kind.

    A bi-encoder loaded as a CrossEncoder gets a new, random scoring head (and a
    cross-encoder loaded as a bi-encoder is mean-pooled): both load without an error and
    grade at random. sentence-transformers' bi-encoder folders hold ``modules.json``;
    a cross-encoder's ``config.json`` names a ``...ForSequenceClassification``.
    """
    folder = Path(model)
    if kind == COMMAND_KIND or not folder.is_dir():
        return
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    arch = config.get("architectures") if isinstance(config, dict) else None
    names = [a for a in arch if isinstance(a, str)] if isinstance(arch, list) else []
    heads = [a for a in names if a.endswith("ForSequenceClassification")]
    classifier = bool(heads)
    bi = (folder / "modules.json").is_file()
    if kind == "dense" and classifier and not bi:
        raise BadInput(
            f"--model {model}: a cross-encoder (config.json names {heads[0]}); give "
            "--kind cross-encoder"
        )
    if kind == "cross-encoder" and bi and not classifier:
        raise BadInput(
            f"--model {model}: a sentence-transformers bi-encoder (it has modules.json) "
            "would get a random scoring head as a cross-encoder; give --kind dense"
        )


# -- scoring --------------------------------------------------------------------------------


def _say(progress: Progress | None, what: str, done: int, total: int) -> None:
    if progress is not None:
        progress(what, done, total)


def dense_scores(
    ws: Workspace,
    judge: ModelJudge,
    pairs: Sequence[tuple[Question, Doc]],
    cache: dict[Any, Any],
    progress: Progress | None = None,
    *,
    online: bool = False,
) -> list[float]:
    """The cosine of each pair's embeddings (documents' vectors kept in the workspace).

    ``online``: the model's name may be looked up on the hub (:func:`model_online`).
    """
    import numpy as np

    fields = tuple(judge.params.get("fields", DEFAULT_FIELDS))
    require_extra()
    spec = RetrieverSpec(judge.annotator, "dense", {"model": judge.model, "fields": list(fields)})
    key = DenseRetriever(spec).store_key  # the same vectors as a dense retriever's
    _say(progress, f"{judge.annotator}: loading the model", 0, 1)
    model = load_model(judge.model, cache, online=online)
    docs = {d.id: d for _, d in pairs}
    vectors = document_vectors(
        list(docs.values()),
        key,
        lambda d: doc_text(d, fields),
        lambda texts: encode(model, texts),
        ws,
        progress=progress,
        label=f"{judge.annotator}: embedding documents",
    )
    texts = sorted({q.text for q, _ in pairs})
    _say(progress, f"{judge.annotator}: embedding questions", 0, len(texts))
    qvec = dict(zip(texts, encode(model, texts), strict=True)) if texts else {}
    _say(progress, f"{judge.annotator}: embedding questions", len(texts), len(texts))
    return [
        float(qvec[q.text].astype(np.float64) @ vectors[d.id].astype(np.float64)) for q, d in pairs
    ]


def cross_scores(
    judge: ModelJudge,
    pairs: Sequence[tuple[Question, Doc]],
    cache: dict[Any, Any],
    progress: Progress | None = None,
    *,
    online: bool = False,
) -> list[float]:
    """The CrossEncoder's score of each (question, document) pair."""
    import numpy as np

    fields = tuple(judge.params.get("fields", DEFAULT_FIELDS))
    require_extra()
    _say(progress, f"{judge.annotator}: loading the model", 0, 1)
    model = load_model(judge.model, cache, cross=True, online=online)
    label = f"{judge.annotator}: scoring pairs"
    out: list[float] = []
    for start in range(0, len(pairs), CROSS_BATCH):
        _say(progress, label, start, len(pairs))
        batch = [(q.text, doc_text(d, fields)) for q, d in pairs[start : start + CROSS_BATCH]]
        raw = model.predict(batch, batch_size=CROSS_BATCH, show_progress_bar=False)
        out += np.asarray(raw, dtype=np.float64).reshape(-1).tolist()
    _say(progress, label, len(pairs), len(pairs))
    return out


# -- a judging run ------------------------------------------------------------------------


def judged_questions(ws: Workspace, questions: Sequence[str] | None) -> list[str]:
    """The questions to judge: those named (each one the workspace has), else all."""
    known = ws.question_ids()
    if not questions:
        return known
    have = set(known)
    for q in questions:
        if q not in have:
            raise unknown_name("question", q, known, given_to="--questions")
    return list(dict.fromkeys(questions))


def check_runnable(
    ws: Workspace, judge: ModelJudge, *, typed: bool, trust: TrustStore | None
) -> None:
    """Refuse a command judge this user has not trusted (typed on the command line: trusted).

    Raises:
        Refused: a command read from the workspace that is not trusted here.
    """
    if judge.kind != COMMAND_KIND or typed:
        return
    store = trust if trust is not None else TrustStore()
    if not store.trusts(ws, command_spec(judge)):
        raise Refused(
            f"{judge.annotator} runs the command {judge.model!r}, stored in {ws.path}, and "
            "goldpan runs a workspace's commands only once you have trusted them on this "
            "machine. Read it, then give it with --command to run (and trust) it"
        )


def model_online(
    ws: Workspace, judge: ModelJudge, *, typed: bool, trust: TrustStore | None
) -> bool:
    """Whether a model judge's name may be looked up on the hub; refuse it if it may not.

    A local folder loads with the hub off, trusted or not. A hub name typed now is trusted
    by being typed, and recorded so (the stored judge then runs again); one read from the
    workspace loads only once this user trusted that name for it.

    Raises:
        Refused: a hub name read from the workspace that is not trusted here.
    """
    if is_local_model(judge.model):
        return False
    store = trust if trust is not None else TrustStore()
    spec = model_spec(judge)
    if typed:
        store.trust(ws, [spec])
        return True
    if not store.trusts(ws, spec):
        raise Refused(
            f"{judge.annotator} loads {what_runs(spec)!r}, stored in {ws.path}: not a folder "
            "holding a model on this machine, so it would come from the Hugging Face hub, "
            "and goldpan loads a workspace's model from the hub only once you have trusted "
            "that name. Give it with --model to load (and trust) it"
        )
    return True


def run_judge(
    ws: Workspace,
    judge: ModelJudge,
    *,
    questions: Sequence[str] | None = None,
    thresholds: Thresholds | None = None,
    progress: Progress | None = None,
    typed: bool = True,
    trust: TrustStore | None = None,
    cache: dict[Any, Any] | None = None,
    timeout: float = COMMAND_TIMEOUT_S,
) -> JudgeReport:
    """Grade the candidates of ``questions`` (all by default) with ``judge``; store them.

    A score judge's thresholds are fitted on every grade people gave in the workspace
    (all questions, not only those judged now) unless ``thresholds`` are given. ``typed``:
    the judge (its command) was given by the user now, not read from the workspace.

    Raises:
        BadInput: a person already has the judge's name, an unknown question, or too few
            people's grades to calibrate on (and no thresholds given).
        Refused: a command judge, or a hub model name, from the workspace that is not
            trusted here.
        RetrieverError: the model cannot be loaded or the command failed.
    """
    if ws.readonly:  # before any model is loaded: its grades could not be kept
        raise Refused(
            f"{ws.path} is open read-only ({ws.readonly_reason}); a judge's grades cannot "
            "be stored there"
        )
    if judge.annotator in ws.annotators():
        raise BadInput(
            f"{judge.annotator} labels as a person in {ws.path}; give the model judge "
            "another --annotator model:NAME"
        )
    check_runnable(ws, judge, typed=typed, trust=trust)
    qids = judged_questions(ws, questions)  # an unknown question: before any trust is kept
    online = judge.kind != COMMAND_KIND and model_online(ws, judge, typed=typed, trust=trust)
    people = ws.labels()
    graded: dict[str, set[str]] = {}
    for lab in people:
        graded.setdefault(lab.question_id, set()).add(lab.doc_id)
    rankings = ws.all_runs()
    wanted: dict[str, list[str]] = {
        q: sorted(candidate_ids(q, rankings, graded.get(q, ()))) for q in qids
    }
    unpooled = tuple(q for q in qids if not wanted[q])
    pairs: dict[tuple[str, str], None] = {(q, d): None for q in qids for d in wanted[q]}
    if judge.kind != COMMAND_KIND:  # what people graded anywhere: the calibration's pairs
        pairs.update({(lab.question_id, lab.doc_id): None for lab in people})
    keys = list(pairs)
    question_of = {q.id: q for q in ws.questions()}
    doc_of = _docs(ws, {d for _, d in keys})
    resolved = [(question_of[q], doc_of[d]) for q, d in keys]
    cache = cache if cache is not None else {}
    if judge.kind == COMMAND_KIND:
        raw = command_grades(judge, resolved, progress, timeout)
        by_pair = dict(zip(keys, raw, strict=True))
        compared = [
            (lab.question_id, by_pair[(lab.question_id, lab.doc_id)], lab.grade)
            for lab in people
            if (lab.question_id, lab.doc_id) in by_pair
        ]
        calibration = compare_grades(compared)
        labels = [
            ModelLabel(q, d, judge.annotator, by_pair[(q, d)]) for q in qids for d in wanted[q]
        ]
        params: dict[str, Any] = dict(judge.params)
    else:
        if judge.kind == "dense":
            scores = dense_scores(ws, judge, resolved, cache, progress, online=online)
        else:
            scores = cross_scores(judge, resolved, cache, progress, online=online)
        score_of = dict(zip(keys, scores, strict=True))
        items = [
            Item(lab.question_id, score_of[(lab.question_id, lab.doc_id)], lab.grade)
            for lab in people
        ]
        calibration = calibrate(items, thresholds)
        t = calibration.thresholds
        assert t is not None
        labels = [
            ModelLabel(q, d, judge.annotator, grade_of(score_of[(q, d)], t), score_of[(q, d)])
            for q in qids
            for d in wanted[q]
        ]
        params = dict(judge.params)
    params["calibration"] = calibration.to_json()
    stored = ModelJudge(judge.annotator, judge.kind, judge.model, params)
    n = ws.write_model_judgment(stored, labels, set(qids))
    if judge.kind == COMMAND_KIND and typed:
        store = trust if trust is not None else TrustStore()
        store.trust(ws, [command_spec(judge)])  # typed here: run again from the workspace
    counts = [sum(1 for lab in labels if lab.grade == g) for g in GRADES]
    return JudgeReport(
        stored, len(qids), n, (counts[0], counts[1], counts[2], counts[3]), calibration, unpooled
    )


def _docs(ws: Workspace, ids: Collection[str]) -> dict[str, Doc]:
    out: dict[str, Doc] = {}
    for d in sorted(ids):
        doc = ws.doc(d)
        if doc is not None:
            out[d] = doc
    missing = [d for d in ids if d not in out]
    if missing:  # a label or ranking naming a document that is gone: damage, not input
        raise RetrieverError(f"{ws.path}: document {missing[0]!r} is named but not stored")
    return out


def remove_judge(ws: Workspace, annotator: str) -> int:
    """Remove a model judge and its grades; how many grades went.

    Raises:
        UnknownName: no model judge of that name (the known ones are listed).
    """
    removed = ws.remove_model_judge(annotator)
    if removed is None:
        raise _unknown_judge(ws, annotator, "--remove")
    return removed


def stored_judge(ws: Workspace, annotator: str) -> ModelJudge:
    """A judge the workspace holds, to run again (the known ones listed when not)."""
    judge = ws.model_judge(annotator)
    if judge is None:
        raise _unknown_judge(ws, annotator, "--annotator")
    return judge


def _unknown_judge(ws: Workspace, annotator: str, given_to: str) -> UnknownName:
    """The error for a model judge the workspace does not hold, naming those it does."""
    return unknown_name(
        "model judge", annotator, [j.annotator for j in ws.model_judges()], given_to=given_to
    )
