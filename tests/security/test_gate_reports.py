"""CI reports (``--junit-xml``, ``--markdown``) are outputs like any other.

Real ``goldpan score`` processes on ``test_gate_fresh``'s project. A report is refused
over an existing file without ``--force`` and never written through a symbolic link onto
its target; its texts are escaped, with line breaks and control characters made visible;
it is written once the verdict is known and lists only what ran.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from engine.types import Question
from engine.workspace import Workspace
from tests.cli.test_gate_fresh import Project, make_project, snapshot_file

ESCAPES = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[31m\x9b1m"
"""OSC 52 (a clipboard write), BEL, CSI erase-screen, a colour, and a one-byte C1 CSI."""


def cases(path: Path) -> dict[str, ET.Element]:
    """Test case name -> element, of a JUnit XML file."""
    return {tc.get("name", ""): tc for tc in ET.parse(path).getroot().iter("testcase")}


def ask(project: Project, *argv: object) -> tuple[int, str, str]:
    return project.goldpan("score", project.ws, "--quiet", *argv)


def test_a_report_over_an_existing_file_is_refused_without_force(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    code_file = project.root / "search.py"
    before = code_file.read_bytes(), snap.read_bytes()
    for option, target in (("--junit-xml", code_file), ("--markdown", snap)):
        code, _, err = ask(project, "--against", snap, option, target)
        assert code == 2, err
        assert f"{target}: already exists; pass --force to replace it" in err
        assert "rankings scored" not in err  # refused before anything ran
    assert (code_file.read_bytes(), snap.read_bytes()) == before
    report = project.root / "report.xml"
    report.write_text("yesterday's report", encoding="utf-8")
    code, _, err = ask(project, "--junit-xml", report, "--force")
    assert code == 0, err
    assert ET.parse(report).getroot().tag == "testsuites"


def test_a_symlinked_report_path_is_never_written_through(tmp_path):
    project = make_project(tmp_path)
    target = project.root / "search.py"
    before = target.read_bytes()
    link = project.root / "reports.md"
    link.symlink_to(target)
    code, _, err = ask(project, "--markdown", link)
    assert code == 2, err
    assert "a symbolic link to" in err and "--force" in err
    code, _, err = ask(project, "--markdown", link, "--force")
    assert code == 0, err
    assert target.read_bytes() == before  # the link's target is untouched
    assert not link.is_symlink() and link.read_text(encoding="utf-8").startswith("## goldpan")
    dangling = project.root / "new.xml"
    dangling.symlink_to(project.root / "created-through-the-link.py")
    code, _, err = ask(project, "--junit-xml", dangling, "--force")
    assert code == 0, err
    assert not (project.root / "created-through-the-link.py").exists()


def test_a_question_line_break_starts_no_line_of_its_own_in_a_report(tmp_path):
    project = make_project(tmp_path)
    planted = "fine\nimport os; os.system('touch pwned')  #"
    with Workspace.open(project.ws) as ws:
        ws.write_questions([Question("q2", planted, ())])
    project.demote("q2")
    junit, md = project.root / "r.xml", project.root / "r.md"
    code, _, err = ask(project, "--retriever", "mysearch", "--k", "1",
                       "--junit-xml", junit, "--markdown", md)  # fmt: skip
    assert code == 0, err
    for text in (junit.read_text(encoding="utf-8"), md.read_text(encoding="utf-8")):
        assert not any(line.lstrip().startswith("import os") for line in text.splitlines())
        assert "fine\u240aimport os" in text
    failure = cases(junit)["mysearch::q2"].find("failure")
    assert failure is not None and "\n" not in (failure.text or "")


def test_markdown_on_stdout_sends_no_escape_sequence_to_the_terminal(tmp_path):
    project = make_project(tmp_path)
    with Workspace.open(project.ws) as ws:
        ws.write_questions([Question("q2", f"metal {ESCAPES} problem", ())])
    project.demote("q2")
    code, out, err = ask(project, "--retriever", "mysearch", "--k", "1", "--markdown", "-")
    assert code == 0, err
    assert not any(c in out for c in "\x1b\x07\x9b"), repr(out)
    assert "\u241b\\]52;c;ZXZpbA==\u2407" in out  # control pictures (and `]` escaped)


def test_reports_list_only_the_retrievers_that_ran(tmp_path):
    project = make_project(tmp_path)
    junit, md = project.root / "r.xml", project.root / "r.md"
    code, _, err = project.goldpan(
        "score", project.ws, "--fail-under", "mrr=0.1", "--junit-xml", junit,
        "--markdown", md, store=project.empty,
    )  # fmt: skip
    assert code == 2, err  # mysearch is not trusted on this machine: it did not run
    names = set(cases(junit))
    assert not any(n.startswith("mysearch::") or n.endswith(":mysearch:mrr") for n in names)
    assert {"bm25-word::q1", "goldpan::gate"} <= names
    # mysearch ranked none of them and cannot rank here: it holds none of them out
    assert cases(junit)["bm25-word::q1"].find("skipped") is None
    error = cases(junit)["goldpan::gate"].find("error")
    assert error is not None and "the gate covers mysearch, which did not run here" in (
        error.get("message") or ""
    )
    assert "| mysearch |" not in md.read_text(encoding="utf-8")


def test_a_refused_gate_is_an_error_case_not_a_passing_report(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    project.goldpan("retriever", "remove", project.ws, "mysearch")
    junit = project.root / "r.xml"
    code, _, err = ask(project, "--against", snap, "--fail-on-regression", "--junit-xml", junit)
    assert code == 2, err
    root = ET.parse(junit).getroot()
    assert root.get("errors") == "1"
    assert "no retriever mysearch now" in (
        cases(junit)["goldpan::gate"].find("error").get("message") or ""
    )


def test_a_question_scored_only_now_is_a_skipped_case(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    from engine.types import Label

    with Workspace.open(project.ws) as ws:
        ws.write_questions([Question("q9", "감쇠 계수", ())])
        ws.write_labels([Label("q9", "d1", "mina", 2)])
    junit = project.root / "r.xml"
    code, _, err = ask(project, "--against", snap, "--fail-on-regression", "--junit-xml", junit)
    assert code == 0, err
    skipped = cases(junit)["mysearch::q9"].find("skipped")
    assert (
        skipped is not None and skipped.get("message") == "not compared: not in snapshot accepted"
    )
    assert os.path.getsize(junit) > 0
