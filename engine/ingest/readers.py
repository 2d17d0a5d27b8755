"""File readers: corpus, questions and qrels files into plain records.

Readers only parse and validate one file; they never touch a workspace. Every problem is
an :class:`IngestError` naming the file, the line (where there is one) and what was
expected. Text is decoded as strict UTF-8; a byte-order mark and CRLF line ends are
accepted.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from engine.types import VERDICTS, Doc, Label, Question, Verdict


class IngestError(Exception):
    """Bad input: which file, which line, and what was expected."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        """Record where the problem is."""
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class QrelLine:
    """One qrels judgment with the line it came from."""

    question_id: str
    doc_id: str
    grade: int
    line: int


def read_text(path: Path) -> str:
    """The whole file as text: strict UTF-8, BOM dropped, line ends kept.

    Raises:
        IngestError: missing, a folder, empty, binary or not UTF-8.
    """
    if not path.exists():
        raise IngestError(path, None, "no such file")
    if path.is_dir():
        raise IngestError(path, None, "is a folder, expected a file")
    data = path.read_bytes()
    if not data.strip():
        raise IngestError(path, None, "the file is empty")
    if b"\0" in data[:8192]:
        raise IngestError(path, None, "looks like a binary file (NUL bytes); expected text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise IngestError(
            path, line, f"invalid UTF-8 (byte 0x{data[exc.start]:02x}); expected UTF-8 text"
        ) from None


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for each non-blank line; CRLF and CR line ends accepted."""
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield n, line


def _plain(value: Any) -> Any:
    """YAML / JSON values made JSON-safe (dates as ISO strings)."""
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _id_of(record: Mapping[str, Any], path: Path, line: int | None) -> str:
    raw = record.get("_id", record.get("id"))
    if raw is None or isinstance(raw, bool) or not isinstance(raw, str | int):
        raise IngestError(path, line, "record has no id; expected an `_id` or `id` field")
    ident = str(raw).strip()
    if not ident:
        raise IngestError(path, line, "record has an empty id")
    return ident


def _text_field(record: Mapping[str, Any], key: str, path: Path, line: int | None) -> str:
    value = record.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise IngestError(path, line, f"field `{key}` must be a string, got {type(value).__name__}")
    return value


def _check_unique(seen: dict[str, int], ident: str, path: Path, line: int, what: str) -> None:
    if ident in seen:
        raise IngestError(
            path, line, f"duplicate {what} id {ident!r} (first seen on line {seen[ident]})"
        )
    seen[ident] = line


def _jsonl_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for n, line in _lines(read_text(path)):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(
                path, n, f"malformed JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if not isinstance(record, dict):
            raise IngestError(path, n, f"expected a JSON object, got {type(record).__name__}")
        yield n, record


def _csv_records(path: Path, delimiter: str = ",") -> Iterator[tuple[int, dict[str, str]]]:
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        if not reader.fieldnames:
            raise IngestError(path, 1, "expected a header row")
        header = [h.strip() for h in reader.fieldnames]
        reader.fieldnames = header
        if "id" not in header and "_id" not in header:
            raise IngestError(path, 1, f"the header needs an `id` column; found {header}")
        for row in reader:
            n = reader.line_num
            if None in row:
                raise IngestError(path, n, f"more fields than the {len(header)} in the header")
            if any(v is None for v in row.values()):
                raise IngestError(path, n, f"fewer fields than the {len(header)} in the header")
            if not any((v or "").strip() for v in row.values()):
                continue
            yield n, row
    except csv.Error as exc:
        raise IngestError(path, reader.line_num, f"malformed CSV ({exc})") from None


# -- documents ---------------------------------------------------------------------------

DOC_FORMATS = ("auto", "markdown", "jsonl", "csv")


def detect_doc_format(path: Path) -> str:
    """``markdown`` for a folder, else by file suffix."""
    if path.is_dir():
        return "markdown"
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix in (".md", ".markdown"):
        return "markdown"
    raise IngestError(
        path, None, "cannot tell the format from the name; pass --format markdown|jsonl|csv"
    )


def read_docs(path: Path, fmt: str = "auto") -> list[Doc]:
    """Documents from a Markdown folder, a JSONL file or a CSV file."""
    if fmt not in DOC_FORMATS:
        raise IngestError(path, None, f"unknown format {fmt!r}; expected one of {DOC_FORMATS}")
    if fmt == "auto":
        if not path.exists():
            raise IngestError(path, None, "no such file or folder")
        fmt = detect_doc_format(path)
    if fmt == "markdown":
        return read_markdown_docs(path)
    if fmt == "jsonl":
        return read_jsonl_docs(path)
    return read_csv_docs(path)


def read_jsonl_docs(path: Path) -> list[Doc]:
    """BEIR corpus shape: ``_id``/``id``, ``title``, ``text``; other keys become fields."""
    docs: list[Doc] = []
    seen: dict[str, int] = {}
    for n, rec in _jsonl_records(path):
        ident = _id_of(rec, path, n)
        _check_unique(seen, ident, path, n, "document")
        fields = {k: _plain(v) for k, v in rec.items() if k not in ("_id", "id", "title", "text")}
        docs.append(
            Doc(
                ident, _text_field(rec, "title", path, n), _text_field(rec, "text", path, n), fields
            )
        )
    return docs


def read_csv_docs(path: Path) -> list[Doc]:
    """CSV (or TSV) with a header ``id,title,text,...``; other columns become fields."""
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    docs: list[Doc] = []
    seen: dict[str, int] = {}
    for n, row in _csv_records(path, delimiter):
        ident = _id_of(row, path, n)
        _check_unique(seen, ident, path, n, "document")
        fields = {k: v for k, v in row.items() if k not in ("_id", "id", "title", "text")}
        docs.append(Doc(ident, row.get("title", "") or "", row.get("text", "") or "", fields))
    return docs


_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")


def markdown_body(body: str) -> str:
    """The body without fenced code blocks and image links."""
    out: list[str] = []
    fence: str | None = None
    for line in body.splitlines():
        m = _FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(2)
                continue
            out.append(_IMAGE.sub("", line))
        elif m and m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence):
            fence = None
    return "\n".join(out).strip()


def read_markdown_doc(path: Path) -> Doc:
    """One Markdown file with optional YAML front matter."""
    text = read_text(path)
    meta: dict[str, Any] = {}
    body = text
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        if end is None:
            raise IngestError(path, 1, "front matter opened with `---` is never closed")
        try:
            loaded = yaml.safe_load("".join(lines[1:end]))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 2 if mark is not None else 1
            problem = getattr(exc, "problem", None) or str(exc)
            raise IngestError(path, line, f"bad YAML front matter: {problem}") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise IngestError(path, 2, "front matter must be a YAML mapping (key: value)")
        meta = {str(k): _plain(v) for k, v in loaded.items()}
        body = "".join(lines[end + 1 :])
    raw_id = meta.pop("id", None)
    ident = str(raw_id).strip() if raw_id is not None else path.stem
    if not ident:
        raise IngestError(path, 2, "front matter `id` is empty")
    title = meta.pop("title", None)
    if title is None:
        heading = next((ln for ln in body.splitlines() if ln.startswith("# ")), None)
        title = heading[2:].strip() if heading else path.stem
    fields = dict(meta)
    fields.setdefault("source", path.name)
    return Doc(ident, str(title), markdown_body(body), fields)


def read_markdown_docs(path: Path) -> list[Doc]:
    """Every ``*.md`` file under a folder (or one file), sorted by path."""
    if path.is_file():
        return [read_markdown_doc(path)]
    if not path.exists():
        raise IngestError(path, None, "no such folder")
    files = sorted(p for p in path.rglob("*") if p.suffix.lower() in (".md", ".markdown"))
    if not files:
        raise IngestError(path, None, "no Markdown files (*.md) in this folder")
    docs: list[Doc] = []
    seen: dict[str, Path] = {}
    for f in files:
        doc = read_markdown_doc(f)
        if doc.id in seen:
            raise IngestError(f, None, f"duplicate document id {doc.id!r} (also in {seen[doc.id]})")
        seen[doc.id] = f
        docs.append(doc)
    return docs


# -- questions ---------------------------------------------------------------------------


def _tags(value: Any, path: Path, line: int) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        parts = re.split(r"[,;|]", value)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        parts = value
    else:
        raise IngestError(
            path, line, "`tags` must be a list of strings or a comma-separated string"
        )
    out: list[str] = []
    for p in parts:
        t = p.strip()
        if t and t not in out:
            out.append(t)
    return tuple(out)


def read_questions(path: Path) -> list[Question]:
    """Questions from JSONL (``_id``/``id``, ``text``, optional ``tags``) or CSV."""
    suffix = path.suffix.lower()
    records: Iterator[tuple[int, Mapping[str, Any]]]
    if suffix in (".csv", ".tsv"):
        records = _csv_records(path, "\t" if suffix == ".tsv" else ",")
    else:
        records = _jsonl_records(path)
    out: list[Question] = []
    seen: dict[str, int] = {}
    for n, rec in records:
        ident = _id_of(rec, path, n)
        _check_unique(seen, ident, path, n, "question")
        text = _text_field(rec, "text", path, n).strip()
        if not text:
            raise IngestError(path, n, f"question {ident!r} has no text; expected a `text` field")
        out.append(Question(ident, text, _tags(rec.get("tags"), path, n), author="import"))
    return out


# -- qrels -------------------------------------------------------------------------------


def _grade(raw: str, path: Path, line: int) -> int:
    try:
        value = float(raw)
    except ValueError:
        raise IngestError(path, line, f"grade {raw!r} is not a number; expected 0-3") from None
    if value != int(value):
        raise IngestError(path, line, f"grade {raw!r} is not a whole number; expected 0-3")
    return int(value)


def read_qrels(path: Path) -> list[QrelLine]:
    """TREC qrels (``qid iter doc grade``) or a BEIR qrels TSV (``query-id corpus-id score``).

    A BEIR file is recognised by its header row. Grade -1 ("in the pool, unjudged" in
    TREC) lines are skipped; other grades must be 0-3. A (question, doc) pair may appear
    only once.
    """
    out: list[QrelLine] = []
    seen: dict[tuple[str, str], int] = {}
    first = True
    width = 0  # fields per line, fixed by the first judgment
    shapes = {4: "`qid iter doc grade` (TREC)", 3: "`qid doc grade` (BEIR)"}
    for n, line in _lines(read_text(path)):
        if line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in (line.split("\t") if "\t" in line else line.split())]
        if first:
            first = False
            if len(parts) == 3 and not re.fullmatch(r"-?\d+(\.0+)?", parts[2]):
                continue  # BEIR header: query-id, corpus-id, score
        if not width:
            if len(parts) not in shapes:
                raise IngestError(
                    path, n, f"expected {shapes[4]} or {shapes[3]}, got {len(parts)} fields"
                )
            width = len(parts)
        if len(parts) != width:
            raise IngestError(
                path, n, f"expected {shapes[width]} as on the first line, got {len(parts)} fields"
            )
        if width == 4:
            qid, _, doc, raw = parts
        else:
            qid, doc, raw = parts
        grade = _grade(raw, path, n)
        if grade == -1:
            continue
        if not 0 <= grade <= 3:
            raise IngestError(path, n, f"grade {grade} is out of range; expected 0-3")
        key = (qid, doc)
        if key in seen:
            raise IngestError(
                path,
                n,
                f"question {qid!r} and document {doc!r} are judged twice "
                f"(first on line {seen[key]})",
            )
        seen[key] = n
        out.append(QrelLine(qid, doc, grade, n))
    return out


# -- SQuAD -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SquadSet:
    """Documents, questions and each question's source document from a SQuAD file."""

    docs: list[Doc]
    questions: list[Question]
    gold: list[tuple[str, str]]
    """(question id, doc id) pairs."""


def read_squad(path: Path, level: str) -> SquadSet:
    """A SQuAD 1.1 JSON file (such as KorQuAD) at article or paragraph level.

    Article: doc id = ``title``, doc title = title with ``_`` as spaces, text = the title
    line then the paragraphs, joined by newlines. Paragraph: doc id = ``title#i`` (i the
    0-based paragraph index), text = the paragraph. Each question's source is its gold.
    """
    if level not in ("article", "paragraph"):
        raise IngestError(path, None, f"unknown level {level!r}; expected article or paragraph")
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(path, exc.lineno, f"malformed JSON ({exc.msg})") from None

    def shape(where: str, expected: str) -> IngestError:
        return IngestError(path, None, f"{where}: expected {expected} (SQuAD 1.1 shape)")

    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise shape("top level", 'an object with a "data" list')
    docs: list[Doc] = []
    questions: list[Question] = []
    gold: list[tuple[str, str]] = []
    seen_q: dict[str, str] = {}
    seen_doc: set[str] = set()
    for ai, article in enumerate(data["data"]):
        where = f"data[{ai}]"
        if not isinstance(article, dict) or not isinstance(article.get("title"), str):
            raise shape(where, 'an object with a "title" string')
        paragraphs = article.get("paragraphs")
        if not isinstance(paragraphs, list):
            raise shape(where, 'a "paragraphs" list')
        title = article["title"]
        if title in seen_doc:
            raise IngestError(path, None, f"{where}: duplicate article title {title!r}")
        seen_doc.add(title)
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
                    or not isinstance(qa.get("question"), str)
                ):
                    raise shape(qwhere, 'an object with "id" and "question"')
                qid = str(qa["id"])
                if qid in seen_q:
                    raise IngestError(
                        path, None, f"{qwhere}: duplicate question id {qid!r} (also {seen_q[qid]})"
                    )
                seen_q[qid] = qwhere
                questions.append(Question(qid, qa["question"].strip(), (), author="import"))
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
        raise IngestError(path, None, "no questions found (SQuAD 1.1 shape)")
    return SquadSet(docs, questions, gold)


# -- labels and verdicts (goldpan's own CSV) ---------------------------------------------


def _require_columns(path: Path, row: Mapping[str, Any], columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in row]
    if missing:
        raise IngestError(path, 1, f"the header needs the columns {', '.join(columns)}")


def read_labels_csv(path: Path) -> list[tuple[Label, int]]:
    """``question_id,doc_id,annotator,grade`` rows, each with its line number."""
    columns = ("question_id", "doc_id", "annotator", "grade")
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    out: list[tuple[Label, int]] = []
    seen: dict[tuple[str, str, str], int] = {}
    try:
        for row in reader:
            n = reader.line_num
            _require_columns(path, row, columns)
            if None in row or any(row.get(c) is None for c in columns):
                raise IngestError(path, n, f"expected the {len(row)} fields of the header")
            grade = _grade(row["grade"], path, n)
            if not 0 <= grade <= 3:
                raise IngestError(path, n, f"grade {grade} is out of range; expected 0-3")
            key = (row["question_id"], row["doc_id"], row["annotator"])
            if not all(k.strip() for k in key):
                raise IngestError(path, n, "question_id, doc_id and annotator must not be empty")
            if key in seen:
                raise IngestError(path, n, f"label repeated (first on line {seen[key]})")
            seen[key] = n
            out.append((Label(*key, grade), n))
    except csv.Error as exc:
        raise IngestError(path, reader.line_num, f"malformed CSV ({exc})") from None
    return out


def read_verdicts_csv(path: Path) -> list[tuple[Verdict, int]]:
    """``question_id,annotator,verdict,note`` rows, each with its line number."""
    columns = ("question_id", "annotator", "verdict")
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    out: list[tuple[Verdict, int]] = []
    try:
        for row in reader:
            n = reader.line_num
            _require_columns(path, row, columns)
            verdict = (row.get("verdict") or "").strip()
            if verdict not in VERDICTS:
                raise IngestError(
                    path, n, f"verdict {verdict!r} unknown; expected one of {', '.join(VERDICTS)}"
                )
            out.append(
                (Verdict(row["question_id"], row["annotator"], verdict, row.get("note") or ""), n)
            )
    except csv.Error as exc:
        raise IngestError(path, reader.line_num, f"malformed CSV ({exc})") from None
    return out


# -- TREC runs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunLine:
    """One ranked document of a TREC run file with the line it came from."""

    question_id: str
    doc_id: str
    score: float
    line: int


_RUN_SHAPE = "`qid Q0 doc rank score tag`"


def _run_score(raw: str, path: Path | str, line: int) -> float:
    """The score column: a finite decimal number (what trec_eval's ``atof`` reads)."""
    try:
        value = float(raw) if raw.isascii() and "_" not in raw else None
    except ValueError:
        value = None
    if value is None:
        raise IngestError(path, line, f"score {raw!r} is not a number; expected {_RUN_SHAPE}")
    if not math.isfinite(value):
        raise IngestError(path, line, f"score {raw!r} is not a finite number")
    return value


def read_trec_run(path: Path) -> list[RunLine]:
    """A TREC run file: ``qid Q0 doc rank score tag`` lines, whitespace separated.

    ``#`` comment lines and blank lines are skipped. The ``Q0``, rank and tag columns are
    not used: as in trec_eval, the ranking is derived from the score column (see
    :func:`rank_run`). A document listed twice for one question is an error, as it is in
    trec_eval.

    Raises:
        IngestError: naming the file and line of a line with the wrong number of
            columns, a score that is not a finite number, a repeated document, or a
            file without any ranking line.
    """
    return parse_trec_run(read_text(path), path)


def parse_trec_run(text: str, path: Path | str) -> list[RunLine]:
    """TREC run lines from ``text`` (a file's or a command's output), named ``path``.

    Raises:
        IngestError: as :func:`read_trec_run`.
    """
    out: list[RunLine] = []
    seen: dict[tuple[str, str], int] = {}
    for n, line in _lines(text):
        if line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 6:
            raise IngestError(path, n, f"expected 6 fields {_RUN_SHAPE}, got {len(parts)} fields")
        qid, _, doc, _, raw, _ = parts
        score = _run_score(raw, path, n)
        key = (qid, doc)
        if key in seen:
            raise IngestError(
                path,
                n,
                f"document {doc!r} is listed twice for question {qid!r} "
                f"(lines {seen[key]} and {n}); trec_eval rejects this too",
            )
        seen[key] = n
        out.append(RunLine(qid, doc, score, n))
    if not out:
        raise IngestError(path, None, f"no ranking lines ({_RUN_SHAPE}); only comments")
    return out


def rank_run(lines: Iterable[RunLine]) -> dict[str, list[tuple[str, float]]]:
    """Question id -> (doc id, score) in trec_eval's order: score desc, then doc id desc."""
    by_q: dict[str, list[tuple[str, float]]] = {}
    for r in lines:
        by_q.setdefault(r.question_id, []).append((r.doc_id, r.score))
    return {q: sorted(docs, key=lambda d: (d[1], d[0]), reverse=True) for q, docs in by_q.items()}


# -- gold given with questions -----------------------------------------------------------


@dataclass(frozen=True)
class QuestionExtras:
    """What a questions file may say besides id, text and tags."""

    question_id: str
    line: int
    gold: tuple[tuple[str, int], ...] = ()
    """(doc id, grade) pairs of the ``gold`` column or key."""
    no_answer: bool = False
    """The ``no_answer`` flag: nothing in the corpus answers the question."""
    metadata_tags: tuple[str, ...] | None = None
    """Tags under ``metadata`` (goldpan's BEIR ``queries.jsonl``); None when absent."""


_GOLD_SHAPE = "`doc:grade` entries (grade 0-3)"


def _gold_entry(raw: str, path: Path, line: int) -> tuple[str, int]:
    doc, sep, grade = raw.strip().rpartition(":")
    if not sep or not doc.strip():
        raise IngestError(path, line, f"gold entry {raw!r}: expected {_GOLD_SHAPE}")
    value = _grade(grade, path, line)
    if not 0 <= value <= 3:
        raise IngestError(path, line, f"gold entry {raw!r}: grade {value} is out of range (0-3)")
    return doc.strip(), value


def _gold(value: Any, path: Path, line: int) -> tuple[tuple[str, int], ...]:
    """A gold column or key: ``"d1:2 d3:1"``, ``["d1:2", "d3:1"]`` or ``{"d1": 2}``."""
    pairs: list[tuple[str, int]] = []
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        pairs = [_gold_entry(tok, path, line) for tok in value.split()]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        pairs = [_gold_entry(tok, path, line) for tok in value]
    elif isinstance(value, Mapping):
        for doc, grade in value.items():
            if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
                raise IngestError(path, line, f"gold {doc!r}: grade {grade!r} is not 0-3")
            pairs.append((str(doc), grade))
    else:
        raise IngestError(
            path, line, f"`gold` must be a list of {_GOLD_SHAPE} or an object doc -> grade"
        )
    seen: set[str] = set()
    for doc, _ in pairs:
        if doc in seen:
            raise IngestError(path, line, f"gold names document {doc!r} twice")
        seen.add(doc)
    return tuple(pairs)


_TRUE = ("1", "true", "yes", "y")
_FALSE = ("", "0", "false", "no", "n")


def _flag(value: Any, path: Path, line: int) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise IngestError(path, line, f"`no_answer` {value!r}: expected true or false")


def read_question_extras(path: Path) -> list[QuestionExtras]:
    """The ``gold`` and ``no_answer`` columns (CSV) or keys (JSONL) of a questions file.

    JSONL records may also carry them, and ``tags``, under a ``metadata`` object (the
    shape of goldpan's BEIR ``queries.jsonl``). Records with none of them give nothing,
    so a plain questions file gives an empty list.
    """
    suffix = path.suffix.lower()
    records: Iterator[tuple[int, Mapping[str, Any]]]
    if suffix in (".csv", ".tsv"):
        records = _csv_records(path, "\t" if suffix == ".tsv" else ",")
    else:
        records = _jsonl_records(path)
    out: list[QuestionExtras] = []
    for n, rec in records:
        meta = rec.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        keys = {"gold", "no_answer"}
        if not (keys & set(rec) or keys & set(meta) or "tags" in meta):
            continue
        ident = _id_of(rec, path, n)
        gold = _gold(rec.get("gold", meta.get("gold")), path, n)
        no_answer = _flag(rec.get("no_answer", meta.get("no_answer")), path, n)
        if no_answer and any(g >= 1 for _, g in gold):
            raise IngestError(
                path,
                n,
                f"question {ident!r} has relevant gold documents and no_answer; "
                "a question is one or the other",
            )
        tags = _tags(meta["tags"], path, n) if "tags" in meta else None
        out.append(QuestionExtras(ident, n, gold, no_answer, tags))
    return out
