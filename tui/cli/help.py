"""What each command's ``--help`` says above its options.

That is the files it reads or writes (their columns and fields) and what ``--json``
prints. Keyed by the command's path (``"import docs"``; ``""`` is ``goldpan`` itself); the parser
(:mod:`tui.cli`) gives each subcommand its text from here. A test checks that every
command has one and that the file-reading ones name their columns.
"""

from __future__ import annotations

from engine.grades import GRADE_RANGE, MAX_GRADE, NOT_RELEVANT, RELEVANT
from engine.types import VERDICTS

ABOUT: dict[str, str] = {
    "": (
        "Make retrieval test sets that are hard and honest, and score retrievers on them."
        " Exit codes: see below."
    ),
    "new": (
        "Create the workspace file WS (SQLite; it must not exist yet) with one BM25 "
        "retriever per tokenizer; `goldpan retriever list WS` shows them."
    ),
    "import": (
        "Import one file into a workspace, in one transaction: a bad line is refused with"
        " its file and line number, and the workspace is left as it was."
    ),
    "import docs": (
        "PATH is one of: a folder of Markdown files (.md; optional YAML front matter with"
        " `title`, `id` and any other keys, kept as fields); a JSONL file, one document "
        'per line ({"_id" or "id", "title", "text", other keys kept as fields}: the BEIR '
        "corpus shape); a CSV (or TSV) file with a header row id,title,text[,other "
        "columns kept as fields]. UTF-8; the format is told by the name (a folder, "
        ".jsonl/.json/.ndjson, .csv/.tsv, .md) unless --format says it."
    ),
    "import questions": (
        'PATH is JSONL, one question per line: {"_id" or "id", "text", "tags": [..] or '
        '"a,b", "gold": ["doc:grade", ..], "no_answer": true}; or CSV (TSV) with a header'
        " row id,text[,tags][,gold][,no_answer] (tags comma-separated, gold "
        f"space-separated doc:grade entries, grade {GRADE_RANGE}). The gold becomes labels of "
        "--annotator, a true no_answer their no-answer verdict."
    ),
    "import run": (
        "FILE is a TREC run: one ranked document per line, `qid Q0 doc rank score tag` "
        "separated by spaces or tabs; `#` comment lines and blank lines are skipped. Each"
        " question's ranking is the score descending, then the doc id descending, as "
        "trec_eval does (the rank column is ignored); a document listed twice for a "
        "question is refused. The run becomes an `external` retriever: questions it lacks"
        " score as misses, and `goldpan pool` never runs it."
    ),
    "import qrels": (
        "PATH is TREC qrels, `qid iter doc grade` per line, or a BEIR qrels TSV with the "
        f"header query-id, corpus-id, score. Grades are {GRADE_RANGE}; grade -1 lines "
        "(TREC: pooled, unjudged) are skipped."
    ),
    "import labels": (
        "PATH is a CSV file with the header row question_id,doc_id,annotator,grade (grade"
        f" {GRADE_RANGE}), as `goldpan export --format labels` writes it."
    ),
    "import verdicts": (
        "PATH is a CSV file with the header row question_id,annotator,verdict,note "
        f"(verdict: {', '.join(VERDICTS)}; note may be empty)."
    ),
    "import beir": (
        'DIR is a BEIR dataset: corpus.jsonl ({"_id", "title", "text", "metadata"}), '
        'queries.jsonl ({"_id", "text", "metadata"}; metadata may give "tags" and '
        '"no_answer") and qrels/SPLIT.tsv (query-id, corpus-id, score). Queries without '
        "qrels stay unlabeled."
    ),
    "import squad": (
        'FILE is SQuAD 1.1 JSON (e.g. KorQuAD 1.0): {"data": [{"title", "paragraphs": '
        '[{"context", "qas": [{"id", "question"}]}]}]}. Each article (--level article) or'
        f" paragraph (--level paragraph) becomes a document, and it is the gold (grade {RELEVANT}) "
        "of the questions asked on it."
    ),
    "pool": (
        "Run retrievers over every question and keep their rankings in WS; a question "
        "runs again only when its inputs changed. The table shows, per retriever, the "
        "pooled documents no other first-stage retriever found, and how many are gold."
    ),
    "retriever": ("Add, list or remove the retrievers a workspace pools and scores."),
    "retriever list": (
        'The configured retrievers: name, kind and parameters; --json prints [{"name", '
        '"kind", "params"}].'
    ),
    "retriever add": (
        'A command retriever\'s CMD reads the questions as JSON lines {"id", "text"} '
        "on stdin and prints a TREC run (qid Q0 doc rank score tag) on stdout. Imported "
        "run files are added by `goldpan import run`."
    ),
    "retriever remove": (
        "Remove a retriever and its cached rankings (a retriever another one reads cannot"
        " be removed first)."
    ),
    "score": (
        "Score every retriever on the resolved gold: Hit@k, MRR, Recall@k, nDCG@10 (and "
        "any --metric), the time of one question ranked alone (ms p50, ms p95) and the "
        "pool's throughput (q/s). --json prints "
        '{"questions": {"scored", "no_answer", '
        '"disputed", "unlabeled"}, "retrievers": {NAME: {METRIC: mean, "ms_p50", "ms_p95", '
        '"ms_max", "timed_alone", "questions_per_s"}}} (null: not measured). Exit 1 when a '
        "--fail-under floor is missed."
    ),
    "label": (
        f"Grade a document for a question: {GRADE_RANGE} ({NOT_RELEVANT} not relevant, "
        f"{MAX_GRADE} the perfect answer), as the judge screen's keys do; committed at once, "
        "safe while others label the same workspace."
    ),
    "verdict": ("Answerable, no_answer, ambiguous or skip for a question."),
    "merge": (
        "Bring workspaces labeled separately together: every IN must hold the same corpus"
        " (the first differing document is named); questions are matched by id, labels "
        "keep their annotators. Merging the same input twice changes nothing."
    ),
    "agreement": (
        "Cohen's kappa on relevant-or-not per annotator pair, Krippendorff's alpha "
        f"(ordinal, grades {GRADE_RANGE}) and agreement on answerable vs no answer, among "
        "people; and each model judge against each person and the resolved gold. --json "
        'prints {"pairs": [{"a", "b", "n", "kappa"}], "alpha_ordinal", "units", "verdicts": '
        '[{"a", "b", "n", "agreement", "kappa"}], "models": [{"model", "against", "gold", '
        '"n", "kappa", "alpha_ordinal"}]}.'
    ),
    "queue": (
        "The judging queue (questions whose pooled top-k documents are least judged "
        'first, then disputes) and coverage@k per retriever. --json prints {"k", '
        '"coverage": {NAME: share}, "queue": [{"question", "status", "unjudged", '
        '"reason"}]}; with --model also "model", "disagree" and "holes": [{"question", '
        '"status", "docs", "distance"}].'
    ),
    "judge": (
        "A model judge grades each question's candidates (every retriever's top 10 and "
        "what people graded) as its own annotator model:NAME: a local sentence-transformers"
        " model (dense or cross-encoder; nothing is downloaded), its scores turned into "
        f"grades {GRADE_RANGE} by thresholds fitted on the grades people gave (the table "
        "shows, per grade, the score range and how many of their grades agree; too few "
        "grades are refused unless --thresholds is given), or your own command (JSON "
        "lines in, a grade per line out; run only once trusted: typed here, it is). The "
        "grades never become gold by themselves: Adjudicate shows them beside the people, "
        'for a person to adopt. --json prints {"annotator", "kind", "model", "questions",'
        ' "grades", "counts", "unpooled", "calibration": {"thresholds", "fitted", '
        '"items", "questions", "people", "kappa", "held_out_kappa", "folds", "grades": '
        '[{"grade", "low", "high", "never", "people", "agree"}]}}.'
    ),
    "compare": (
        "Per-question win / tie / loss of A against B, both means, the difference with a "
        "paired bootstrap 95% interval and a paired randomization p-value."
    ),
    "fidelity": (
        "How alike retrievers A and B rank the same questions (does goldpan's BM25 predict "
        "the engine's ranking?): the share of questions whose top 1 agrees (also counting a "
        "tie at the top as agreement), the mean Kendall tau-b and Spearman rho per question "
        "over the union of both top-k lists (a document outside one's top k ranked below "
        "it, tied with the others left out; tied scores tied), and the share of each one's "
        "top-k rows in tied score groups, with a warning when that is most of them. --json "
        'prints {"top1_agreement", "kendall_tau_b", "spearman_rho", "tie_share", '
        '"warnings", "per_question", ...}.'
    ),
    "failures": (
        "Each question whose gold is not at rank 1: the gold rank, the rank-1 document "
        'and how it relates to the gold. --json prints [{"question", "gold", "gold_rank",'
        ' "top_doc", "relation"}].'
    ),
    "noanswer": (
        "Top-1 scores of answerable vs no-answer questions: a table of thresholds "
        "(answerable wrongly rejected, no-answer caught) and the best by balanced "
        "accuracy."
    ),
    "sweep": (
        "A BM25 retriever's metric over a k1 x b grid; the cell at its own parameters "
        'equals `goldpan score`. --json prints {"retriever", "metric", "grid": [{"k1", '
        '"b", "value"}], "note"}.'
    ),
    "overlap": (
        "Each question's share of words in the nearest document title and in its gold "
        'documents\' text (likely easy questions). --json prints [{"question", "title", '
        '"gold", "high"}].'
    ),
    "export": (
        "Formats: trec-qrels (`qid 0 doc grade`: the resolved gold); trec-run (`qid Q0 "
        "doc rank score tag`: cached rankings, tag = retriever); labels or labels-csv "
        "(CSV question_id,doc_id,annotator,grade: every annotator's labels); "
        'questions-jsonl ({"id", "text", "tags", "gold": ["doc:grade"], "no_answer"}) or '
        "questions-csv (id,text,tags,gold,no_answer), read back by `import questions`; "
        "beir (a folder: corpus.jsonl, queries.jsonl, qrels/test.tsv, read back by "
        "`import beir`); ranx (a folder: qrels.json, {qid: {doc: grade}}, and "
        "run-NAME.json, {qid: {doc: score}}, per retriever). The output is written to a "
        "temporary file (or folder) beside OUT and renamed into place, so a failed write "
        "leaves no partial file and an older OUT intact. An existing OUT is replaced only "
        "with --force."
    ),
    "info": (
        "Counts of documents, questions, labels, verdicts, retrievers and cached runs, "
        "the annotators, the question status and the schema version. --json prints "
        '{"workspace", "schema_version", "goldpan_version", "docs", "questions", '
        '"labels", "verdicts", "retrievers", "cached_runs", "annotators", '
        '"question_status"}.'
    ),
    "demo": (
        "Build the demo workspace from the bundled Korean corpus (once), pool it, and "
        "open it in the terminal UI."
    ),
    "open": ("Open a workspace in the terminal UI."),
    "serve": (
        "Serve the labeling app over HTTP (textual-serve). Each person gets a link with a "
        "private token; the token decides the name on their labels. Questions are handed "
        "out so that nobody judges a question someone else has open. Links are kept "
        "(outside the workspace) across restarts; `--links` prints them again."
    ),
    "snapshot": (
        "Store, for every retriever, each scored question's first-gold rank and metric "
        "values with the gold they were computed on; list, show, remove or export them. "
        "`export --out FILE` writes the snapshot as one JSON document, which `score "
        "--against FILE` reads (keep it in the repository for a CI gate)."
    ),
    "power": (
        "How many questions are enough to tell retrievers A and B apart on one metric: "
        "the smallest difference the current questions can detect (80% power, two-sided "
        "5%) and the questions needed to confirm the observed difference. --json prints "
        '{"a", "b", "metric", "n", "diff", "sd", "mde", "n_needed"}.'
    ),
    "import querylog": (
        'FILE is a query log: plain text (one query a line), JSONL ({"query", optional '
        '"count", "timestamp"}) or CSV with a header row query[,count][,timestamp]. Queries '
        "are de-duplicated (NFKC, whitespace collapsed, case-folded), near-duplicates "
        "grouped, and either sampled by frequency band (--sample N: questions tagged "
        "from-log and head/torso/tail) or stored for the Write screen's ctrl+n."
    ),
    "check": (
        "Check a workspace file, reading only: that it is goldpan's and its schema is whole, "
        "SQLite's integrity_check and foreign_key_check, and every row decoded as the "
        "commands decode it (JSON shapes, score blobs, grades, retriever kinds and "
        "parameters). Exit 0 when sound, 2 with each problem listed by table and row. "
        '--json prints {"ok", "file", "integrity", "foreign_keys", "rows"}.'
    ),
    "trust": (
        "A command retriever runs a program on this machine, with your rights, each time "
        "goldpan pools questions; an opensearch, elasticsearch or http retriever sends every "
        "question to the address it names, a postgres retriever runs the workspace's SQL on "
        "the database its environment variable connects to. goldpan runs them only once you "
        "trusted them here: each command, or each engine's address, index, credential variable "
        "names and template hash, is shown and you answer y/N (--yes for scripts). Trust is "
        "recorded in your config folder ($XDG_CONFIG_HOME/goldpan, else ~/.config/goldpan), "
        "never in the workspace, for exactly that text, this workspace's id and its path: a "
        "copied or moved workspace, or a changed command, address or template, is asked about "
        "again."
    ),
}
