"""Issue 21, item 4: CI reports of a gate (JUnit XML per question, a Markdown summary).

The project and its real search program are those of ``test_gate_fresh``: the program's
config makes chosen golds drop from rank 1 to rank 2 while its command stays the same.
Question q5's text holds markup (``<b>``, ``&amp;``, ``|``, backticks, ``]]>``, a line
break) that both reports must carry as text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tests.cli.test_gate_fresh import QUESTIONS, make_project, snapshot_file


def failed_cases(path) -> dict[str, str]:
    """Test case name -> failure message, for the failed cases of a JUnit XML file."""
    root = ET.parse(path).getroot()
    return {
        tc.get("name", ""): f.get("message", "")
        for tc in root.iter("testcase")
        if (f := tc.find("failure")) is not None
    }


def test_junit_xml_fails_exactly_the_regressed_questions(tmp_path):
    project = make_project(tmp_path)
    snap = snapshot_file(project)
    project.demote("q1", "q5")
    junit = project.root / "reports" / "retrieval.xml"
    junit.parent.mkdir()
    md = project.root / "summary.md"
    code, _, err = project.goldpan(
        "score", project.ws, "--against", snap, "--fail-on-regression",
        "--junit-xml", junit, "--markdown", md,
    )  # fmt: skip
    assert code == 1, err
    root = ET.parse(junit).getroot()
    names = sorted(tc.get("name", "") for tc in root.iter("testcase"))
    assert names == sorted(f"{r}::{q.id}" for r in ("bm25-word", "mysearch") for q in QUESTIONS)
    failed = failed_cases(junit)
    assert set(failed) == {"mysearch::q1", "mysearch::q5"}
    assert failed["mysearch::q1"].startswith("first gold at rank 1 then, 2 now; ranked first now:")
    assert "question: 감쇠 보정은 어떻게 하나" in failed["mysearch::q1"]
    # markup kept as text, not parsed; the line break shown, so it starts no line
    assert QUESTIONS[3].text.replace("\n", "\u240a") in failed["mysearch::q5"]
    text = md.read_text(encoding="utf-8")
    assert "### Questions that got worse (2)" in text
    assert "| mysearch | q1 | 1 | 2 |" in text
    assert "mysearch: ranked now (command, no cache key)" in text
    assert "<b>" not in text and "&lt;b&gt;" in text and "\\|" in text and "\\`tick\\`" in text
    assert 'quote"\u240asecond line' in text  # one table row, the line break shown
    rows = [line for line in text.splitlines() if line.startswith("| mysearch | q5 |")]
    assert len(rows) == 1 and rows[0].count(" | ") == 6  # no cell split by the text's `|`


def test_without_a_snapshot_a_case_fails_when_its_gold_is_not_in_the_top_k(tmp_path):
    project = make_project(tmp_path)
    project.demote("q2")
    junit = project.root / "at-k.xml"
    code, out, err = project.goldpan(
        "score", project.ws, "--retriever", "mysearch", "--k", "1", "--junit-xml", junit,
        "--markdown", "-",
    )  # fmt: skip
    assert code == 0, err
    assert set(failed_cases(junit)) == {"mysearch::q2"}
    assert "(needs 1-1)" in failed_cases(junit)["mysearch::q2"]
    assert out.startswith("## goldpan score")  # Markdown on stdout instead of the table
    assert "### Questions without a gold in the top 1 (1)" in out
    assert "| mysearch | q2 |  | 2 | d1 |" in out
    code, _, _ = project.goldpan("score", project.ws, "--junit-xml", project.ws)
    assert code == 2  # never written over the workspace
