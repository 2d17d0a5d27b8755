"""The app with an outside retriever (``http``, ``opensearch``): a served session never sends
questions to a service or cluster this user has not trusted, and the app says once that TLS
is not checked. The kinds themselves are checked through the engine in
tests/engine/retrieve/test_http_retrievers.py and test_opensearch_retrievers.py (whose helpers these
tests use)."""

from __future__ import annotations

from engine.trust import TrustStore, config_dir
from engine.workspace import Workspace
from tests.engine.retrieve.test_http_retrievers import add_search
from tests.searchservers import rankings


async def test_a_served_session_never_sends_questions_to_an_untrusted_service(
    ws_path, api, body_file
):
    from tests.tui.conftest import APP_SIZE
    from tui.app import GoldpanApp
    from tui.screens.judge import JudgeScreen
    from tui.screens.modals import TrustScreen
    from tui.serve.served_app import Served

    add_search(ws_path, "svc", f"{api.url}/search", body_file, trust=False)
    start = len(api.seen)
    app = GoldpanApp(
        ws_path, annotator="ara", animations=False, blink=False, warm_indexes=False, served=Served()
    )
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge("q01")  # q01 has no ranking by svc: pooling it would ask the service
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, JudgeScreen)
        assert not any(isinstance(s, TrustScreen) for s in app.screen_stack)
    assert len(api.seen) == start
    assert not (config_dir() / "trusted-commands.json").exists()
    assert rankings(ws_path, "svc") == {}
    with Workspace.open(ws_path, readonly=True) as ws:
        assert TrustStore().untrusted(ws, ws.retrievers())[0].name == "svc"


async def test_the_app_says_once_that_tls_is_not_checked(ws_path, https_api, body_file):
    from tests.tui.conftest import APP_SIZE, wait_for
    from tests.tui.test_readonly import record_notifications
    from tui.app import GoldpanApp

    add_search(ws_path, "unchecked", f"{https_api.url}/search", body_file, insecure=True)
    app = GoldpanApp(ws_path, annotator="ara", animations=False, blink=False, warm_indexes=False)
    seen = record_notifications(app)
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge("q01")
        await pilot.pause()
        await app.workers.wait_for_complete()
        app.pooling.pool("q02")  # a second pool: no second notice
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()  # nor from ranking the rest behind the screen
        await wait_for(pilot, lambda: not app.session.live.unranked() and not app.ranking.ranking)
    said = [m for m in seen if "TLS certificates are not checked" in m]
    assert len(said) == 1 and "http retriever unchecked" in said[0], seen
    assert {"q01", "q02"} <= set(rankings(ws_path, "unchecked"))


async def test_a_served_session_never_sends_questions_to_an_untrusted_cluster(ws_path, gate):
    from tests.engine.retrieve.test_opensearch_retrievers import add
    from tests.tui.conftest import APP_SIZE
    from tui.app import GoldpanApp
    from tui.serve.served_app import Served

    _, service = gate
    add(ws_path, "os", url=service.url, index="docs", fields="text", trust=False)
    start = len(service.seen)
    app = GoldpanApp(
        ws_path, annotator="ara", animations=False, blink=False, warm_indexes=False, served=Served()
    )
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge("q01")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert len(service.seen) == start
    assert not (config_dir() / "trusted-commands.json").exists()
    assert rankings(ws_path, "os") == {}
