"""The CLI as a package: `score --metric`, every subcommand's help and its line in the docs."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.demo import build_demo
from engine.formats import EXPORT_FORMATS
from engine.metrics import METRIC_FAMILIES
from engine.retrieve.runner import refresh_runs
from tests.conftest import ROOT, plain_qrels, plain_run
from tests.conftest import run_cli as run
from tui.cli import build_parser, parse_args
from tui.cli.declarations import commands, declaration


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    ws = build_demo(path, pool=False, models=False)
    refresh_runs(ws, ["bm25-word"])
    ws.close()
    return path


# -- score --metric -------------------------------------------------------------------------


def test_score_metric_reports_p_at_k_as_pytrec_eval(demo, tmp_path, capsys):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels_path, run_path = tmp_path / "gold.qrels", tmp_path / "word.run"
    assert run(capsys, "export", demo, "--format", "trec-qrels", "--out", qrels_path)[0] == 0
    argv = ["export", demo, "--format", "trec-run", "--out", run_path, "--retriever", "bm25-word"]
    assert run(capsys, *argv)[0] == 0
    argv = ["score", demo, "--retriever", "bm25-word", "--no-pool", "--json"]
    code, out, err = run(capsys, *argv, "--metric", "p@5", "--metric", "P@10", "--metric", "p@5")
    assert code == 0, err
    means = json.loads(out)["retrievers"]["bm25-word"]
    assert "hit@1" in means and "ndcg@10" in means  # the default metrics stay
    qrels = plain_qrels(qrels_path)
    per_q = pytrec_eval.RelevanceEvaluator(qrels, {"P.5,10"}).evaluate(plain_run(run_path))
    for metric, measure in (("p@5", "P_5"), ("p@10", "P_10")):
        want = sum(per_q[q][measure] if q in per_q else 0.0 for q in qrels) / len(qrels)
        assert means[metric] == pytest.approx(want, abs=1e-9, rel=0)
    assert 0 < means["p@5"] < means["hit@5"]  # not a copy of another column


def test_score_table_shows_asked_metrics_under_their_headers(demo, capsys):
    argv = ["score", demo, "--retriever", "bm25-word", "--no-pool", "--quiet"]
    code, out, err = run(capsys, *argv, "--metric", "p@3", "--metric", "recall@1")
    assert code == 0, err
    header = next(line for line in out.splitlines() if "retriever" in line)
    # asked: P@3 and R@1 (R@1 is otherwise left out of the table); defaults kept
    for label in ("P@3", "R@1", "Hit@1", "MRR", "nDCG@10"):
        assert f" {label} " in header, (label, header)
    assert " R@3 " not in header


def test_score_unknown_metric_is_bad_usage_naming_the_known_ones(tmp_path, capsys):
    # checked before the workspace is opened: the missing file is not what is reported
    code, out, err = run(capsys, "score", tmp_path / "absent.db", "--metric", "map@5")
    assert code == 2 and out == ""
    assert "--metric" in err and "'map@5'" in err
    for family in METRIC_FAMILIES:
        assert family in err


def test_fail_under_gates_an_asked_metric(demo, capsys):
    argv = ["score", demo, "--retriever", "bm25-word", "--no-pool", "--quiet"]
    code, _, err = run(capsys, *argv, "--fail-under", "p@5=0.01")
    assert code == 2 and "--metric" in err  # not reported unless asked
    code, _, err = run(capsys, *argv, "--metric", "p@5", "--fail-under", "p@5=0.99")
    assert code == 1 and "bm25-word p@5" in err
    assert run(capsys, *argv, "--metric", "p@5", "--fail-under", "p@5=0.01")[0] == 0


# -- every subcommand: its help and its line in docs/cli.md -------------------------------------


def subcommands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(command path, parser) of every subcommand, nested ones included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from subcommands(sub, (*path, name))


def leaves() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    all_ = list(subcommands(build_parser()))
    parents = {p[:-1] for p, _ in all_}
    return [(p, s) for p, s in all_ if p not in parents]


def test_the_parser_walk_finds_every_command():
    names = {" ".join(p) for p, _ in leaves()}
    assert {"new", "import docs", "import squad", "retriever add", "score", "open"} <= names
    assert len(names) >= 25


@pytest.mark.parametrize("path", [" ".join(p) for p, _ in leaves()])
def test_every_subcommand_is_in_the_docs(path):
    """sqlite-utils' test_docs habit: a command without a line in docs/cli.md fails here."""
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    *parent, name = path.split()
    if not parent:
        assert f"`goldpan {name}" in page, f"docs/cli.md has no `goldpan {name} ...`"
        return
    # a nested command: `goldpan import docs ...`, or `import verdicts` beside `goldpan import`
    lines = [line for line in page.splitlines() if f"goldpan {' '.join(parent)}" in line]
    assert any(re.search(rf"\b{re.escape(name)}\b", line) for line in lines), (
        f"docs/cli.md has no line for `goldpan {path}`"
    )


def test_every_command_has_a_description_and_no_stale_one_is_kept():
    from tui.cli.declarations import commands

    declared = {" ".join(path) for command in commands() for path, _ in command.walk()}
    paths = {" ".join(p) for p, _ in subcommands(build_parser())}
    assert declared == paths
    for path, parser in leaves():
        text = parser.format_help()
        assert parser.description and len(parser.description) > 20, path
        assert parser.description.split()[0] in text, path


# What each command that reads or writes files must say of their shape in its --help.
FORMATS = {
    "import docs": ["Markdown", "front matter", '"_id" or "id"', '"title"', "id,title,text"],
    "import questions": ['"text"', '"tags"', '"gold"', "doc:grade", "no_answer", "id,text"],
    "import run": ["qid Q0 doc rank score tag", "#"],
    "import qrels": ["qid iter doc grade", "query-id", "corpus-id", "score", "0-3"],
    "import labels": ["question_id,doc_id,annotator,grade", "0-3"],
    "import verdicts": ["question_id,annotator,verdict,note", "no_answer", "ambiguous"],
    "import beir": ["corpus.jsonl", "queries.jsonl", "qrels/SPLIT.tsv"],
    "import squad": ['"data"', '"paragraphs"', '"context"', '"qas"', '"question"'],
    "retriever add": ['{"id", "text"}', "qid Q0 doc rank score tag"],
    "export": ["qid Q0 doc rank score tag", "question_id,doc_id,annotator,grade", "qrels.json"],
    "score": ['"scored"', '"ms_p95"'],
    "info": ['"schema_version"', '"question_status"'],
}


@pytest.mark.parametrize("path", sorted(FORMATS))
def test_help_describes_the_file_format(path):
    parser = dict(leaves())[tuple(path.split())]
    # argparse rewraps the description: compare with the line breaks taken out
    text = " ".join(parser.format_help().split())
    for phrase in FORMATS[path]:
        assert phrase in text, (path, phrase)
    if path == "export":
        for fmt in EXPORT_FORMATS:
            assert fmt in text, fmt


# -- parsing a command line: one level at a time -----------------------------------------


@pytest.mark.parametrize(
    ("argv", "usage", "said"),
    [
        (
            [],
            "goldpan [-h] [--version] COMMAND ...",
            "the following arguments are required: COMMAND",
        ),
        (
            ["bogus"],
            "goldpan [-h] [--version] COMMAND ...",
            "invalid choice: 'bogus' (choose from 'new', 'import', 'pool', 'retriever'",
        ),
        (
            ["retriever"],
            "goldpan retriever [-h] ACTION ...",
            "the following arguments are required: ACTION",
        ),
        (
            ["retriever", "lis"],
            "goldpan retriever [-h] ACTION ...",
            "argument ACTION: invalid choice: 'lis' (choose from 'list', 'add', 'remove')",
        ),
        (
            ["--json", "info", "ws.db"],
            "goldpan info [-h] [--json] WS",
            "unrecognized arguments: --json",
        ),
    ],
)
def test_a_command_line_without_a_known_command_is_refused_with_the_names(
    argv, usage, said, capsys
):
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"usage: {usage}\n") and said in err, err


@pytest.mark.parametrize("group", ["", "retriever", "import"])
def test_a_groups_help_lists_each_of_its_commands_with_its_summary(group, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "10000")  # no line breaks (argparse would break at "-")
    below = declaration(group).subcommands if group else commands()
    code, out, _ = run(capsys, *group.split(), "--help")
    text = " ".join(out.split())
    assert code == 0 and len(below) >= 3
    for command in below:
        assert f"{command.name} {' '.join(command.summary.split())}" in text, command.name


def test_the_rest_of_the_line_reaches_the_command_as_typed():
    # a workspace named like an option, after `--`: the command's parser sees the `--`
    assert parse_args(["info", "--", "-odd.db"]).workspace == "-odd.db"
    args = parse_args(["retriever", "add", "ws.db", "r", "--command", "grep x"])
    assert (args.action, args.command, args.workspace) == ("add", "grep x", "ws.db")


def test_a_command_line_reads_only_the_declaration_it_names():
    """The start of a command pays for its own declaration, never for all 29 (15-30 ms)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from tui.cli import parse_args\n"
        "args = parse_args(['retriever', 'list', 'ws.db'])\n"
        "print(args.func, sorted(m for m in sys.modules if m.startswith('tui.cli.declarations.')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.split() == [
        "workspace:cmd_retriever",
        "['tui.cli.declarations.retriever']",
    ]


def test_python_dash_m_tui_cli_runs_the_command():
    import subprocess
    import sys

    from engine import __version__

    result = subprocess.run(
        [sys.executable, "-m", "tui.cli", "--version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert (result.returncode, result.stdout.strip()) == (0, f"goldpan {__version__}")


def test_cli_modules_import_no_private_names_of_each_other():
    """Helpers shared by commands are public (tui.cli.commands.common), never `_name`s."""
    import ast

    found = []
    for path in sorted((ROOT / "tui" / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tui."):
                found += [
                    f"{path.name}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
    assert found == []
