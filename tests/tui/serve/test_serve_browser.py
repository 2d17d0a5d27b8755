"""`goldpan serve` in a real headless browser: Debian's Chromium driven by Playwright.

Keys are pressed in the terminal the page draws (xterm.js): its input textarea is
focused and Playwright types on the page's keyboard, as a person would. What happened
is read from the workspace. No browser is downloaded: the system's ``chromium`` runs.
"""

from __future__ import annotations

import importlib.util
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.tui.conftest import until
from tests.tui.serve.test_serve_load import child_processes, children, is_tab, load_bench
from tests.tui.serve.test_served import unlabel

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="needs Chromium (Debian: apt-get install chromium); .ci/run installs it",
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("playwright") is None,
        reason="needs playwright (pip install -e '.[test]')",
    ),
    pytest.mark.timeout(240),
]


@pytest.fixture(scope="module")
def team(demo_master, tmp_path_factory) -> Iterator[tuple[object, Path]]:
    """A server for ara and bo (two per question) over an unlabeled demo copy."""
    bench = load_bench()
    folder = tmp_path_factory.mktemp("serve")
    ws = folder / "team.db"
    shutil.copy(demo_master, ws)
    unlabel(ws)
    served = bench.start_server(ws, ["--annotator", "ara", "--annotator", "bo"], folder)
    try:
        yield served, ws
    finally:
        served.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def settled(read: Callable[[], object], still: float, most: float = 30.0) -> None:
    """Poll ``read()`` until its value has not changed for ``still`` s (at most ``most`` s)."""
    last, since, end = read(), time.monotonic(), time.monotonic() + most
    while time.monotonic() < end:
        time.sleep(0.05)
        now = read()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= still:
            return


class Tab:
    """One person's browser tab on their link."""

    def __init__(self, browser, served, ws: Path, name: str) -> None:
        self.name = name
        self.db = sqlite3.connect(ws, timeout=30)
        self.context = browser.new_context(viewport={"width": 1200, "height": 800})
        self.page = self.context.new_page()
        url = f"http://127.0.0.1:{served.port}/?token={served.tokens[name]}"
        assert self.page.goto(url).status == 200
        self.page.wait_for_selector(".xterm-helper-textarea", state="attached")
        self.page.locator(".xterm-helper-textarea").focus()

    def lease(self) -> str | None:
        row = self.db.execute(
            "SELECT question_id FROM leases WHERE annotator = ?", (self.name,)
        ).fetchone()
        return None if row is None else row[0]

    def labels(self, qid: str) -> set[str]:
        rows = self.db.execute(
            "SELECT doc_id FROM labels WHERE annotator = ? AND question_id = ?", (self.name, qid)
        )
        return {r[0] for r in rows}

    def grade(self) -> str:
        """Press 1 on the handed-out question until it is saved; returns the question.

        The first press may land before the app listens, so it is pressed again, but only
        after 10 s without a label (a loaded machine can take seconds): a press retried
        sooner lands later, on the next candidate. Returns once the labels hold still.
        """
        qid = until(self.lease, what=f"{self.name}'s lease")
        before = self.labels(qid)
        for _ in range(6):
            self.page.keyboard.press("1")
            try:
                until(lambda: self.labels(qid) - before, 10.0)
            except AssertionError:
                continue
            settled(lambda: self.labels(qid), 1.0)
            return qid
        raise AssertionError(f"{self.name}: pressing 1 saved nothing on {qid}")

    def next(self) -> str | None:
        old = self.lease()
        self.page.keyboard.press("]")
        until(lambda: self.lease() != old, what=f"{self.name} to move on from {old}")
        return self.lease()

    def close(self) -> None:
        self.context.close()
        self.db.close()


def test_two_annotators_judge_what_is_handed_to_them_never_the_same_question(team, browser):
    served, ws = team
    ara = Tab(browser, served, ws, "ara")
    bo = Tab(browser, served, ws, "bo")
    judged: dict[str, list[str]] = {"ara": [], "bo": []}
    try:
        for _ in range(3):
            for tab in (ara, bo):
                assert until(ara.lease) != until(bo.lease)  # both held at this moment
                judged[tab.name].append(tab.grade())
                tab.next()
        assert ara.lease() != bo.lease()
    finally:
        ara.close()
        bo.close()
    db = sqlite3.connect(ws)
    try:
        for name, questions in judged.items():
            assert len(set(questions)) == 3
            rows = db.execute(
                "SELECT DISTINCT question_id FROM labels WHERE annotator = ?", (name,)
            ).fetchall()
            assert sorted(r[0] for r in rows) == sorted(questions)
            events = db.execute(
                "SELECT DISTINCT question_id FROM events WHERE kind = 'label' AND annotator = ?",
                (name,),
            ).fetchall()
            assert sorted(r[0] for r in events) == sorted(questions)
        # the tabs closed: both leases are free again
        until(lambda: not db.execute("SELECT count(*) FROM leases").fetchone()[0], 20)
    finally:
        db.close()


def test_a_tab_closed_mid_question_keeps_its_labels_and_frees_its_lease(team, browser):
    served, ws = team
    ara = Tab(browser, served, ws, "ara")
    qid = ara.grade()
    saved = ara.labels(qid)
    assert ara.lease() == qid
    db = sqlite3.connect(ws)
    try:
        ara.close()  # mid-question: no `]`, no quit
        until(
            lambda: (
                db.execute("SELECT count(*) FROM leases WHERE annotator = 'ara'").fetchone()[0] == 0
            ),
            20,
            "ara's lease to be released",
        )
        rows = db.execute(
            "SELECT doc_id FROM labels WHERE annotator = 'ara' AND question_id = ?", (qid,)
        ).fetchall()
        assert {r[0] for r in rows} == saved
    finally:
        db.close()
    until(lambda: not children(served.proc.pid), 20, "the app process to end")


def test_no_token_or_a_wrong_one_is_a_403_page_and_starts_nothing(team, browser):
    served, _ = team
    until(lambda: not children(served.proc.pid), 20, "earlier app processes to end")
    connected = served.output().count("connected")
    context = browser.new_context()
    page = context.new_page()
    try:
        for url in (
            f"http://127.0.0.1:{served.port}/",
            f"http://127.0.0.1:{served.port}/?token=not-a-token",
            f"http://127.0.0.1:{served.port}/?token={served.tokens['ara'][:-1]}",
        ):
            response = page.goto(url)
            assert response.status == 403
            assert "personal link" in page.content()
        time.sleep(0.5)
        assert children(served.proc.pid) == []
        assert served.output().count("connected") == connected
    finally:
        context.close()


def ended_line(page) -> str:
    """The line of the page's "Session ended." dialog, once the session has ended."""
    page.wait_for_selector("body.-closed", state="attached", timeout=60_000)
    return page.locator(".closed-dialog .message").text_content() or ""


def test_a_tab_says_why_its_session_ended_when_it_did_not_end_well(demo_master, tmp_path, browser):
    """Killed, or unable to start: the tab says so in words, not only "Session ended"."""
    import os
    import signal

    bench = load_bench()
    ws = tmp_path / "ended.db"
    shutil.copy(demo_master, ws)
    served = bench.start_server(ws, ["--annotator", "ara"], tmp_path)
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    try:
        page = context.new_page()
        url = f"http://127.0.0.1:{served.port}/?token={served.tokens['ara']}"
        assert page.goto(url).status == 200
        # the app runs (it holds a lease), then the machine kills it
        db = sqlite3.connect(ws, timeout=30)
        try:
            until(
                lambda: db.execute("SELECT count(*) FROM leases").fetchone()[0],
                what="the session's lease",
            )
        finally:
            db.close()
        tabs = until(
            lambda: [p for p, cmd in child_processes(served.proc.pid) if is_tab(cmd)],
            what="the tab's process",
        )
        app = bench.forked_app(tabs[0])
        assert app != tabs[0], "the preloader forked the app"
        os.kill(app, signal.SIGKILL)  # the app's end reaches the tab through its tab process
        line = ended_line(page)
        assert "stopped by signal 9" in line and "Reload" in line, line

        # a workspace that is no longer one: the next tab cannot start, and says why
        ws.write_bytes(b"this is not a goldpan workspace\n" * 64)
        page = context.new_page()
        assert page.goto(url).status == 200
        line = ended_line(page)
        assert line.startswith("goldpan: this session cannot start: "), line
        assert str(ws.name) in line or "workspace" in line, line
    finally:
        context.close()
        served.stop()
