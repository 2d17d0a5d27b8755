"""Issue 47's bigram-vs-word study as files: the test set the verdict tests run on.

31 questions whose gold is ``d0`` (grade 2) over 8 documents, and TREC runs that rank
``d0`` where the study's retrievers did. ``bigram`` ranks it first everywhere; ``word``
4th, 5th, 2nd and 6th on q00-q03 and first elsewhere (W/T/L 4/27/0: the interval
[+0.016, +0.186] beside p = 0.12); ``second`` 2nd everywhere (all 31 discordant); ``twin``
exactly as ``bigram`` (none discordant). The CLI tests import these files with ``goldpan``
processes, the Pilot tests with the engine's importers.
"""

from __future__ import annotations

import json
from pathlib import Path

QUESTIONS = 31
RANK_OF_GOLD = {
    "bigram": dict.fromkeys(range(QUESTIONS), 1),
    "word": {**dict.fromkeys(range(QUESTIONS), 1), 0: 4, 1: 5, 2: 2, 3: 6},
    "second": dict.fromkeys(range(QUESTIONS), 2),
    "twin": dict.fromkeys(range(QUESTIONS), 1),
}


def jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    """Write ``rows`` as JSON lines."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def study_files(folder: Path) -> tuple[Path, Path, dict[str, Path]]:
    """The documents, the questions (with gold) and one run file per retriever."""
    docs = [{"id": f"d{i}", "title": f"post {i}", "text": f"text {i}"} for i in range(8)]
    questions = [
        {"id": f"q{i:02d}", "text": f"question {i}", "gold": ["d0:2"]} for i in range(QUESTIONS)
    ]
    runs = {}
    for name, ranks in RANK_OF_GOLD.items():
        lines = []
        for q, rank in ranks.items():
            order = [f"d{j}" for j in range(1, 8)]
            order.insert(rank - 1, "d0")
            lines += [f"q{q:02d} Q0 {d} {k + 1} {100 - k} {name}" for k, d in enumerate(order)]
        runs[name] = folder / f"{name}.run"
        runs[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return jsonl(folder / "docs.jsonl", docs), jsonl(folder / "q.jsonl", questions), runs


def no_answer_questions(folder: Path, count: int) -> Path:
    """``count`` questions with no answer in the corpus (no run ranks them: top-1 score 0)."""
    rows: list[dict[str, object]] = [
        {"id": f"n{i}", "text": f"unanswerable {i}", "no_answer": True} for i in range(count)
    ]
    return jsonl(folder / f"no-answer-{count}.jsonl", rows)
