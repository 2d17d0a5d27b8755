"""SQuAD 1.1 / 2.0 JSON: paragraphs or articles as documents, questions with their gold."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.formats.errors import IngestError
from engine.formats.ids import _check_id, form_clash, nfc
from engine.formats.jsontext import load_json
from engine.formats.tabular import _SURROGATE_ESCAPE, _lone_surrogate, _surrogate_message, read_text
from engine.types import Doc, Question

# -- SQuAD -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SquadSet:
    """Documents, questions and each question's source document from a SQuAD file."""

    docs: list[Doc]
    questions: list[Question]
    gold: list[tuple[str, str]]
    """(question id, doc id) pairs of the answerable questions."""
    no_answer: list[str] = dataclasses.field(default_factory=list)
    """Ids of SQuAD 2.0 unanswerable questions (``is_impossible``): no gold."""


def read_squad(path: Path, level: str) -> SquadSet:
    """A SQuAD 1.1 or 2.0 JSON file (such as KorQuAD) at article or paragraph level.

    Article: doc id = ``title``, doc title = title with ``_`` as spaces, text = the title
    line then the paragraphs, joined by newlines. Paragraph: doc id = ``title#i`` (i the
    0-based paragraph index), text = the paragraph. Each question's source is its gold,
    but a SQuAD 2.0 unanswerable question (``"is_impossible": true``; its
    ``plausible_answers`` are a distractor, not an answer) has none: it is listed in
    :attr:`SquadSet.no_answer`.
    """
    if level not in ("article", "paragraph"):
        raise IngestError(path, None, f"unknown level {level!r}; expected article or paragraph")
    text = read_text(path)
    data = load_json(text, path)
    if _SURROGATE_ESCAPE.search(text):
        found = _lone_surrogate(data, "")
        if found:
            raise IngestError(path, None, _surrogate_message(*found))

    def shape(where: str, expected: str) -> IngestError:
        return IngestError(path, None, f"{where}: expected {expected} (SQuAD 1.1 / 2.0 shape)")

    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise shape("top level", 'an object with a "data" list')
    docs: list[Doc] = []
    questions: list[Question] = []
    gold: list[tuple[str, str]] = []
    no_answer: list[str] = []
    seen_q: dict[str, tuple[str, str]] = {}
    seen_doc: dict[str, str] = {}
    for ai, article in enumerate(data["data"]):
        where = f"data[{ai}]"
        if not isinstance(article, dict) or not isinstance(article.get("title"), str):
            raise shape(where, 'an object with a "title" string')
        paragraphs = article.get("paragraphs")
        if not isinstance(paragraphs, list):
            raise shape(where, 'a "paragraphs" list')
        title = article["title"]
        if not title.strip():
            raise shape(where, 'a non-empty "title"')
        title = _check_id(title, path, None, f"{where}: title")
        if nfc(title) in seen_doc:
            first = seen_doc[nfc(title)]
            if first != title:
                raise IngestError(path, None, f"{where}: " + form_clash(title, first, "article"))
            raise IngestError(path, None, f"{where}: duplicate article title {title!r}")
        seen_doc[nfc(title)] = title
        contexts: list[str] = []
        for pi, para in enumerate(paragraphs):
            pwhere = f"{where}.paragraphs[{pi}]"
            if not isinstance(para, dict) or not isinstance(para.get("context"), str):
                raise shape(pwhere, 'an object with a "context" string')
            if not isinstance(para.get("qas"), list):
                raise shape(pwhere, 'a "qas" list')
            contexts.append(para["context"])
            doc_id = title if level == "article" else f"{title}#{pi}"
            for qi, qa in enumerate(para["qas"]):
                qwhere = f"{pwhere}.qas[{qi}]"
                if (
                    not isinstance(qa, dict)
                    or not isinstance(qa.get("id"), str | int)
                    or isinstance(qa.get("id"), bool)
                    or not isinstance(qa.get("question"), str)
                ):
                    raise shape(qwhere, 'an object with "id" and "question"')
                qid = str(qa["id"])
                if not qid.strip():
                    raise shape(qwhere, 'a non-empty "id"')
                qid = _check_id(qid, path, None, f"{qwhere}: id")
                if not qa["question"].strip():
                    raise IngestError(path, None, f"{qwhere}: question {qid!r} has no text")
                if nfc(qid) in seen_q:
                    first, also = seen_q[nfc(qid)]
                    if first != qid:
                        raise IngestError(
                            path, None, f"{qwhere}: " + form_clash(qid, first, "question")
                        )
                    raise IngestError(
                        path, None, f"{qwhere}: duplicate question id {qid!r} (also {also})"
                    )
                seen_q[nfc(qid)] = (qid, qwhere)
                questions.append(Question(qid, qa["question"].strip(), (), author="import"))
                if _squad_impossible(qa, qwhere, path):
                    no_answer.append(qid)
                else:
                    gold.append((qid, doc_id))
            if level == "paragraph":
                docs.append(
                    Doc(
                        doc_id,
                        title.replace("_", " "),
                        para["context"],
                        {"article": title, "paragraph": pi},
                    )
                )
        if level == "article":
            display = title.replace("_", " ")
            docs.append(Doc(title, display, "\n".join([display, *contexts]), {}))
    if not questions:
        raise IngestError(path, None, "no questions found (SQuAD 1.1 / 2.0 shape)")
    return SquadSet(docs, questions, gold, no_answer)


def _squad_impossible(qa: Mapping[str, Any], where: str, path: Path) -> bool:
    """True for a SQuAD 2.0 unanswerable question.

    That is ``"is_impossible": true``, or (a 2.0 file without the flag) an empty
    ``answers`` list next to ``plausible_answers``.
    """
    flag = qa.get("is_impossible")
    if flag is not None and not isinstance(flag, bool):
        raise IngestError(
            path, None, f'{where}: "is_impossible" must be true or false (SQuAD 2.0 shape)'
        )
    if flag is not None:
        return flag
    return "plausible_answers" in qa and not qa.get("answers")
