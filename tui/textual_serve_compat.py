"""Every use of a private textual-serve name, behind one door (``goldpan serve``).

The twin of :mod:`tui.textual_compat` for textual-serve, kept apart so that the server
process (which starts the tabs' apps but draws nothing) never imports Textual: textual-serve
does not, and this module imports only textual-serve, only inside its functions. Each use
says why and the version it was read in; ``tests/tui/test_textual_compat.py`` fails when a
textual-serve upgrade renames or removes one.
"""

from __future__ import annotations

from typing import Any

TEXTUAL_SERVE_CHECKED = "1.1.3"
"""The textual-serve version the names below were read in."""


def with_application(server_class: type[Any]) -> type[Any]:
    """``server_class`` whose web application is its public ``make_application()``.

    textual-serve 1.1.3 builds its aiohttp application in the private
    ``Server._make_app()`` (routes, templates, static files) and offers no hook to add a
    route or change the page; goldpan's server serves its own page and routes, so a
    subclass of the returned class defines ``make_application`` instead.
    """

    class WithApplication(server_class):  # type: ignore[misc]
        async def _make_app(self) -> Any:
            return await self.make_application()

    return WithApplication


def served_process(service: Any) -> Any:
    """The app process an ``AppService`` started (None before it has or after it ended).

    textual-serve 1.1.3 keeps it in ``AppService._process`` and offers no accessor; goldpan
    waits for it to end to tell the tab why it did.
    """
    return service._process


def tab_environment(debug: bool, width: int = 80, height: int = 24) -> dict[str, str]:
    """The environment textual-serve gives a tab's app process.

    textual-serve 1.1.3 builds it in ``AppService._build_environment`` (it reads only
    ``self.debug``): goldpan's preloader starts apps that a tab later adopts, so they need
    the same environment a tab's own start would have had.
    """
    from types import SimpleNamespace

    from textual_serve.app_service import AppService

    like_a_tab = SimpleNamespace(debug=debug)
    environment: dict[str, str] = AppService._build_environment(like_a_tab, width, height)  # type: ignore[arg-type]
    return environment
