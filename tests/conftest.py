"""Shared fixtures: small workspaces built through the engine, the shared data folder."""

from __future__ import annotations

import gc
import json
import os
import sqlite3
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# Set before anything imports numba or torch (here and in every goldpan process a test starts).
# ranx, a reference in the metric tests, compiles its numba functions and typed containers in
# every process that uses it: about 10 s of CPU with a warm numba cache and 45 s on a fresh
# virtual environment, to score a few dozen questions. Without the JIT it runs the same
# functions as plain Python, in milliseconds; nothing in goldpan uses numba.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")
# One OpenMP thread for torch (the dense and model-judge tests): the test workers already use
# every core, and OpenMP's spinning threads took a quarter of those tests' CPU time.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from engine.types import Doc, Label, Question  # noqa: E402
from engine.workspace import Workspace  # noqa: E402
from engine.workspace_setup import new_workspace  # noqa: E402

pytest_plugins = ["tests.searchservers"]
"""The search-engine tests' shared fixtures (a BM25 service over the demo, its body file)."""

if TYPE_CHECKING:
    from engine.retrieve.runner import RunReport

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

MAX_WORKERS = 4
"""The most test processes ``-n auto`` starts (pyproject's addopts): each loads Kiwi (about
0.5 GB) and torch once, so one per core on a big machine would cost memory, not time."""


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per CPU this process may use, at most :data:`MAX_WORKERS`."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_WORKERS, cpus or 1))


def pytest_configure(config: pytest.Config) -> None:
    """Where PYTHONDONTWRITEBYTECODE is set, the test workers and every goldpan process a
    test starts would compile goldpan's modules again each time (about 0.5 s of CPU per
    process, 45 s over the suite): their bytecode goes to a folder of this session instead,
    never beside the sources. Set here, before the workers start, so they inherit it."""
    if hasattr(config, "workerinput") or "PYTHONPYCACHEPREFIX" in os.environ:
        return
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return  # Python writes __pycache__ as usual
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="goldpan-tests-pycache-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    del os.environ["PYTHONDONTWRITEBYTECODE"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow layer (tests/slow.py): ``pytest -m "not slow"`` is the fast one."""
    from tests.slow import mark_slow

    mark_slow(items)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a module's last test (its module fixtures are torn down by then): collect what
    it left, then freeze what is still alive, so Python's collector no longer walks it.

    What lives on is what lives for the session (imported modules, torch, Kiwi, session
    fixtures); once a worker has imported torch, each full collection walked some 700,000
    objects for 0.5 s of CPU, and the collector took a fifth of the TUI and dense tests' CPU
    time. Objects still die by reference counting as before; the collector checks only
    what was made since.
    """
    if nextitem is None or getattr(nextitem, "module", None) is not getattr(item, "module", None):
        gc.collect()
        gc.freeze()


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [
        f"textual {version('textual')}, sqlite-utils {version('sqlite-utils')}, "
        f"SQLite {sqlite3.sqlite_version}"
    ]


PYTREC_MEASURES = {
    "hit@1": "success_1",
    "hit@3": "success_3",
    "hit@5": "success_5",
    "hit@10": "success_10",
    "mrr": "recip_rank",
    "recall@5": "recall_5",
    "recall@10": "recall_10",
    "ndcg@10": "ndcg_cut_10",
}
"""goldpan metric -> the pytrec_eval (trec_eval) measure it must equal."""


def plain_qrels(path: Path) -> dict[str, dict[str, int]]:
    """TREC qrels read the plain way, without goldpan's reader (an independent check)."""
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            qid, _, doc, grade = line.split()
            out.setdefault(qid, {})[doc] = int(grade)
    return out


def plain_run(path: Path) -> dict[str, dict[str, float]]:
    """A TREC run read the plain way, without goldpan's reader (an independent check)."""
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            qid, _, doc, _, score, _ = line.split()
            out.setdefault(qid, {})[doc] = float(score)
    return out


QUERYLOG_KEYS = ("id", "text", "norm", "count", "band", "variants", "status", "question_id")


def querylog_rows(ws: Workspace) -> list[dict[str, object]]:
    """Every stored query group, most frequent first: what the tests look at.

    goldpan itself reads the log one pending query at a time (``next_log_query``).
    """
    rows = ws.conn.execute(
        f"SELECT {', '.join(QUERYLOG_KEYS)} FROM querylog ORDER BY count DESC, id"
    )
    return [
        {**dict(zip(QUERYLOG_KEYS, r, strict=True)), "variants": json.loads(r[5])} for r in rows
    ]


def question_history(ws: Workspace, question_id: str) -> list[tuple[str, str, str]]:
    """(when, who, text) of every earlier text of a question, oldest first (its events)."""
    return [
        (e["at"], e["annotator"], e["old"])
        for e in reversed(ws.events())
        if e["kind"] == "question" and e["question_id"] == question_id and e["old"] is not None
    ]


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs the public test collections in ../shared/data ({path.name} absent)")
    return path


TINY_DOCS = [
    Doc("d1", "감쇠 보정 원리", "감쇠 보정은 CT 영상으로 감쇠 계수를 구한다.", {"series": "ac"}),
    Doc(
        "d2",
        "감쇠 보정 금속",
        "금속 인공물이 감쇠 보정을 망친다. 금속 보정 방법.",
        {"series": "ac"},
    ),
    Doc("d3", "TD-2024-0137", "문서번호 TD-2024-0137 팬텀 점검 절차.", {"number": "TD-2024-0137"}),
    Doc("d4", "notice", "점검 공지.", {}),
]
TINY_QUESTIONS = [
    Question("q1", "감쇠 보정은 어떻게 하나", ("easy",)),
    Question("q2", "금속 때문에 생기는 문제", ("hard",)),
    Question("q3", "0137 문서의 점검 절차", ("partial-id",)),
    Question("q4", "화성 탐사선 일정", ("no-answer",)),
]


TINY_LABELS = [
    Label("q1", "d1", "mina", 2),
    Label("q1", "d2", "mina", 0),
    Label("q2", "d2", "mina", 1),
    Label("q3", "d3", "mina", 3),
]
"""tiny_ws's labels."""


@pytest.fixture(autouse=True)
def user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own user config and state folders: the trust record of command
    retrievers and crash logs never touch the real user's."""
    base = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "state"))
    return base


@pytest.fixture
def tiny_ws(tmp_path: Path) -> Path:
    """A workspace with 4 docs, 4 questions and a few labels (not pooled)."""
    path = tmp_path / "tiny.db"
    ws = new_workspace(path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.write_labels(TINY_LABELS)
    ws.close()
    return path


def add_retriever(path: Path, name: str, kind: str, **values: object) -> None:
    """Add a retriever to the workspace at ``path`` through the engine: the spec from its
    kind's declared parameters (``goldpan retriever add``'s options, as text or values),
    checked against the workspace's retrievers, then stored."""
    from engine.retrieve import check_spec, new_spec

    with Workspace.open(path) as ws:
        spec = new_spec(name, kind, values)
        check_spec(spec, ws.retrievers())
        ws.add_retriever(spec)


def pool(path: Path, names: Sequence[str] | None = None) -> RunReport:
    """Rank every question with the named retrievers (all by default), as ``goldpan pool``
    does through the engine: the run cache brought up to date, the pool's top kept."""
    from engine.pooling import DEFAULT_POOL_DEPTH
    from engine.retrieve.runner import refresh_runs

    with Workspace.open(path) as ws:
        return refresh_runs(ws, names, keep_top=DEFAULT_POOL_DEPTH)


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


def copy_workspace(src: Path, dst: Path) -> Path:
    """A fresh copy of a workspace file (SQLite's backup: pages still in the WAL included)."""
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    a.close()
    b.close()
    return dst


def snapshot(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every goldpan table: compare before and after a failed import."""
    ws = Workspace.open(path, readonly=True)
    try:
        tables = [
            r[0]
            for r in ws.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY name"
            )
        ]
        return {
            t: sorted(ws.conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables
        }
    finally:
        ws.close()


@pytest.fixture(scope="session")
def kiwi() -> object:
    """The Kiwi tokenizer, loaded once for the whole session (about 2.5 s, 0.5 GB)."""
    from engine.tokenize import KiwiTokenizer

    tok = KiwiTokenizer()
    tok("준비")  # load the model now, not inside the first test's timing
    return tok


def run_cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """Run goldpan in-process: (exit code, stdout, stderr)."""
    from tui.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse refused an option (tui/cli/values.py): exit 2
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def import_hostile_workspace(
    capsys: pytest.CaptureFixture[str], ws: Path, files: Sequence[tuple[str, Path]], retriever: str
) -> Path:
    """Import each (kind, file) into ``ws`` as a received workspace's author would, then add a
    bigram BM25 retriever named ``retriever``: the hostile-output tests' one set-up."""
    for what, path in files:
        code, _, err = run_cli(capsys, "import", what, ws, path)
        assert code == 0, err
    assert run_cli(capsys, "retriever", "add", ws, retriever, "--tokenizer", "bigram")[0] == 0
    return ws


def file_hashes(*roots: Path) -> dict[str, str]:
    """sha256 of every file under the given folders (and of the given files)."""
    import hashlib

    out: dict[str, str] = {}
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for f in files:
            out[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out
