"""``goldpan info``."""

from __future__ import annotations

from tui.cli.command import CliCommand

COMMAND = CliCommand(
    "info",
    "counts, annotators and schema version",
    "Counts of documents, questions, labels, verdicts, retrievers and cached runs, the "
    "annotators, the question status (recheck: judged only for an older text), the "
    "questions that need an adjudicator (disputed: the TUI's and the browser's count, "
    "status disputed or ambiguous), how many questions each annotator judged (a verdict, "
    "a stop, every candidate graded, or the gold of a qrels, questions, BEIR or SQuAD "
    "import), the number of judgments made for an older text, the stopped questions and "
    "their candidates not judged (stopped), and the schema version. --json prints "
    '{"workspace", '
    '"schema_version", "goldpan_version", "docs", "questions", "labels", "verdicts", '
    '"retrievers", "cached_runs", "annotators", "question_status", "disputed", '
    '"judged_by", "judgments_for_an_old_text", "stopped": {"questions", "candidates"}}.',
    run="workspace:cmd_info",
    json=True,
)
