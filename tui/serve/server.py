"""``goldpan serve``: the app in a browser for a team, one link (one token) per person.

Built on Textual's ``textual-serve``: the browser page runs xterm.js, and every websocket
connection starts its own app process (:mod:`tui.serve.served_app`). This server adds who may
connect: each person's link carries a random token; without a valid one the page is an
HTTP 403 and nothing is started. The token decides the name on every label: the app
process gets the name and role, never the token.

Its neighbours, one idea each: the links and their file (:mod:`tui.serve.tokens`), the
terminal log, one redacted line per event (:mod:`tui.serve.log`), and the gate that starts
the tabs' app processes a few at a time (:mod:`tui.serve.starts`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from engine.helper_process import helper_env, python_argv, python_shell_command
from tui.literal import visible
from tui.serve.log import OneLineFormatter, reason_line, redact
from tui.serve.served_app import ENDED_META, STARTED_META, Served
from tui.serve.starts import StartGate, start_limit, waiting_line
from tui.serve.tab_messages import TERMINAL_HEIGHTS, TERMINAL_WIDTHS, relay
from tui.serve.tokens import Person

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
FONT_SIZES = range(6, 73)
"""The ``?fontsize=`` values the page accepts (xterm.js pixels)."""

log = logging.getLogger("goldpan.serve")


# -- the server --------------------------------------------------------------------------

FORBIDDEN_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>goldpan: no access</title></head>
<body style="font-family: sans-serif; margin: 3em">
<h1>403: no access</h1>
<p>This labeling session needs your personal link (it ends in <code>?token=…</code>).
Ask whoever runs <code>goldpan serve</code> to send it to you again.</p>
</body></html>
"""


PRELOAD_SOCKET = "preload.sock"
"""The preloader's socket, in a folder of its own (:meth:`GoldpanServer.start_preloader`)."""
PRELOAD_STOP_S = 5.0
"""How long the server waits for the preloader to end before it kills it."""


def _server_class() -> type[Any]:
    """The server class (textual-serve and aiohttp are imported only when serving)."""
    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from aiohttp.abc import AbstractAccessLogger
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    from tui import textual_serve_compat  # textual-serve's private names, behind its door

    template_dir = Path(Server.__init__.__code__.co_filename).parent / "templates"

    class SessionService(AppService):
        """One app process whose tab is told why it ended, when it did not end well.

        textual-serve closes the websocket as soon as the app says it is exiting, so a
        failing session's tab showed only "Session ended". Here the websocket stays open
        until the process is gone; then it is closed with a reason that the page shows
        in place of that line: the app's own one-line message (an :data:`ENDED_META`
        packet, :func:`tui.serve.served_app.tell_server`), else the exit code or signal.
        """

        def __init__(
            self,
            *args: Any,
            who: str,
            closer: Callable[[str], Awaitable[None]],
            started: Callable[[], None],
            **kw: Any,
        ):
            super().__init__(*args, close=_no_close, **kw)
            self.who = who
            self.closer = closer
            self.started = started
            """Gives back this start's place in the :class:`StartGate` (idempotent)."""
            self.ended = ""
            self.watchdog: asyncio.TimerHandle | None = None

        async def on_meta(self, data: bytes) -> None:
            try:
                meta = json.loads(data)
            except ValueError:
                meta = None
            if not isinstance(meta, dict):
                meta = {}
            if meta.get("type") == "exit":
                # closed once the process is gone (see run), or soon whatever it does
                self.watchdog = asyncio.get_running_loop().call_later(
                    ENDING_WAIT_S,
                    lambda: asyncio.ensure_future(self.closer(endedreason_line(self.ended, None))),
                )
                return
            if meta.get("type") == STARTED_META:
                self.started()
                return
            if meta.get("type") == ENDED_META:
                self.ended = str(meta.get("message", ""))[:2000]
                return
            await super().on_meta(data)

        async def run(self) -> None:
            try:
                await super().run()
            finally:
                self.started()
                process = textual_serve_compat.served_process(self)
                code = None
                if process is not None:
                    with contextlib.suppress(asyncio.TimeoutError, ProcessLookupError):
                        code = await asyncio.wait_for(process.wait(), ENDING_WAIT_S)
                if self.watchdog is not None:
                    self.watchdog.cancel()
                reason = endedreason_line(self.ended, code)
                if reason:
                    log.warning("goldpan: %s's session ended: %s", self.who, reason)
                await self.closer(reason)

    class RefusalLog(AbstractAccessLogger):
        """One line per refused request (status 400 and up), its URL redacted.

        Nothing for the pages and files served.
        """

        def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
            # "UNKNOWN" is aiohttp's stand-in for a request it could not parse: the
            # formatter already wrote that one's line, with the reason
            if response.status < 400 or request.method == "UNKNOWN":
                return
            self.logger.info(
                "goldpan: %s %s from %s: %s %s",
                request.method,
                redact(request.raw_path),
                request.remote,
                response.status,
                response.reason,
            )

    class GoldpanServer(textual_serve_compat.with_application(Server)):  # type: ignore[misc]
        """textual-serve with a token per person and one app command per connection."""

        access_log_class = RefusalLog

        def __init__(
            self,
            workspace: Path,
            people: list[Person],
            *,
            host: str,
            port: int,
            served: Served,
            public_url: str | None = None,
            start_at_once: int | None = None,
        ) -> None:
            super().__init__(
                "goldpan", host=host, port=port, title="goldpan", public_url=public_url
            )
            self.workspace = workspace
            self.by_token = {p.token: p for p in people}
            self.served = served
            self.spawned = 0
            """App processes started since the server started (the tests read it)."""
            self.gate = StartGate(start_limit() if start_at_once is None else start_at_once)
            """How many app processes start at once (:class:`StartGate`)."""
            self.open_sessions: dict[str, str] = {}
            """App service id -> the person's name, while connected."""
            self.preloader: subprocess.Popen[bytes] | None = None
            """The process the tabs' apps are forked from (:mod:`tui.serve.preload`)."""
            self.preload_dir: Path | None = None
            """The private folder of its socket."""

        def person(self, token: str | None) -> Person | None:
            """Whose token this is (compared in constant time), or None."""
            if not token:
                return None
            found = None
            for known, who in self.by_token.items():
                if secrets.compare_digest(known.encode(), token.encode()):
                    found = who
            return found

        def app_command(self, person: Person) -> str:
            """The app command for one connection: the name and role, never the token.

            textual-serve runs it through a shell: ``exec`` makes the app the process it
            watches (its exit code and signal are the app's, not a shell's). With the
            preloader running it is ``tui.serve.tab``, which has the preloader fork the app (or
            runs it itself when the preloader cannot). Either is started as every Python
            of goldpan's own is (:func:`~engine.helper_process.python_shell_command`):
            never with the folder the server runs in first on its path.
            """
            start = ["tui.serve.served_app"]
            if self.preload_dir is not None and self.preloader and self.preloader.poll() is None:
                start = ["tui.serve.tab", str(self.preload_dir / PRELOAD_SOCKET)]
            return python_shell_command(
                *start,
                str(self.workspace),
                # one word: a name is never read as an option, whatever it starts with
                f"--annotator={person.name}",
                "--role",
                person.role,
                "--per-question",
                str(self.served.per_question),
                "--lease-seconds",
                str(self.served.lease_seconds),
            )

        def initialize_logging(self) -> None:
            """One line per record on the console: no token, no traceback (see the module)."""
            handler = logging.StreamHandler()
            handler.setFormatter(OneLineFormatter(lambda: tuple(self.by_token), self.crash_log))
            root = logging.getLogger()
            root.handlers[:] = [handler]
            root.setLevel(logging.INFO)
            # aiohttp logs a request that is not HTTP at all at debug level: one line too
            logging.getLogger("aiohttp.server").setLevel(logging.DEBUG)

        def crash_log(self, exc: BaseException) -> Path | None:
            """Write an unexpected exception's traceback to a crash log; its path."""
            from tui.cli.commands.common import write_crash_log

            return write_crash_log(exc, ["serve", str(self.workspace)])

        def bad_request(self, why: str) -> web.Response:
            """A 400 saying what was wrong; it ends the connection.

            The access log writes its one line.
            """
            response = web.Response(status=400, text=f"goldpan: {why}\n")
            response.force_close()
            return response

        async def make_application(self) -> web.Application:
            app = web.Application()
            # The page as textual-serve ships it, less the web font fetched from Google
            # (annotators' browsers need not reach a third party; the font is in /static).
            page = (template_dir / "app_index.html").read_text(encoding="utf-8")
            page = re.sub(r"<link[^>]*fonts\.googleapis\.com[^>]*>", "", page)
            page = page.replace("</head>", CLOSED_PAGE_SCRIPT + "</head>", 1)
            aiohttp_jinja2.setup(app, loader=jinja2.DictLoader({"app_index.html": page}))
            app.add_routes(
                [
                    web.get("/", self.handle_index, name="index"),
                    web.get("/ws/{token}", self.handle_websocket, name="websocket"),
                    web.get("/download/{key}", self.handle_download, name="download"),
                    web.static("/static", self.statics_path, name="static"),
                ]
            )
            app.on_startup.append(self.on_startup)
            app.on_cleanup.append(self.on_cleanup)
            return app

        async def on_startup(self, app: web.Application) -> None:
            self.start_preloader()
            log.info("goldpan: serving %s on %s (ctrl+c stops)", self.workspace, self.public_url)

        def start_preloader(self) -> None:
            """Start the process the tabs' apps are forked from (see :mod:`tui.serve.preload`).

            With the environment textual-serve gives each app (Textual reads it as it is
            imported). A tab that comes before it is ready, or finds it gone, runs its app
            itself; so does every tab when it cannot start at all.
            """
            import socket

            if not hasattr(os, "fork") or not hasattr(socket, "AF_UNIX"):
                return  # no fork, or no Unix socket to pass pipes through (Windows)
            # textual-serve's own recipe of an app's environment (it reads only ``debug``)
            env = textual_serve_compat.tab_environment(self.debug, 80, 24)
            try:
                folder = Path(tempfile.mkdtemp(prefix="goldpan-serve-"))  # 0700: ours alone
            except OSError as exc:  # a full or unwritable TMPDIR: tabs start their own apps
                log.warning("goldpan: each tab starts its app afresh: %s", reason_line(exc))
                return
            try:
                self.preloader = subprocess.Popen(
                    python_argv("tui.serve.preload", str(folder / PRELOAD_SOCKET)),
                    stdin=subprocess.PIPE,  # it ends when this closes, however the server ends
                    stdout=subprocess.DEVNULL,
                    env=helper_env(env),  # PYTHONPATH as the tabs' (see python_shell_command)
                )
            except OSError as exc:
                log.warning("goldpan: each tab starts its app afresh: %s", reason_line(exc))
                shutil.rmtree(folder, ignore_errors=True)
                return
            self.preload_dir = folder

        async def on_cleanup(self, app: web.Application) -> None:
            self.stop_preloader()

        def stop_preloader(self) -> None:
            """End the preloader (apps it forked go on until their tabs close)."""
            process, self.preloader = self.preloader, None
            folder, self.preload_dir = self.preload_dir, None
            if process is not None:
                if process.stdin is not None:
                    with contextlib.suppress(OSError):
                        process.stdin.close()
                try:
                    process.wait(PRELOAD_STOP_S)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

        def forbidden(self) -> web.Response:
            return web.Response(status=403, text=FORBIDDEN_PAGE, content_type="text/html")

        async def handle_index(self, request: web.Request) -> web.StreamResponse:
            """The page for a valid token; 403 otherwise."""
            person = self.person(request.query.get("token"))
            if person is None:
                return self.forbidden()
            font_size = _number(request.query.get("fontsize"), 16, FONT_SIZES)
            if font_size is None:
                return self.bad_request(
                    f"fontsize: expected a whole number from {FONT_SIZES[0]} to {FONT_SIZES[-1]}"
                )
            ws_url = f"{self.public_url}/ws/{person.token}"
            scheme = "wss:" if self.public_url.startswith("https") else "ws:"
            context = {
                "font_size": font_size,
                "app_websocket_url": scheme + ws_url.split(":", 1)[1],
                "config": {"static": {"url": f"{self.public_url}/static/"}},
                "application": {"name": f"goldpan · {person.name}"},
            }
            response = aiohttp_jinja2.render_template("app_index.html", request, context)
            response.headers["Cache-Control"] = "no-store"
            response.headers["Referrer-Policy"] = "no-referrer"
            return response

        async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
            """Start one app process for a valid token; 403 (nothing started) otherwise."""
            person = self.person(request.match_info.get("token"))
            if person is None:
                return self.forbidden()
            websocket = web.WebSocketResponse(heartbeat=15)
            if not websocket.can_prepare(request).ok:  # a plain GET: no Upgrade headers
                return self.bad_request("this address takes the app's websocket only")
            width = _number(request.query.get("width"), 80, TERMINAL_WIDTHS)
            height = _number(request.query.get("height"), 24, TERMINAL_HEIGHTS)
            if width is None or height is None:
                return self.bad_request(
                    f"width and height: expected up to {TERMINAL_WIDTHS[-1]} by "
                    f"{TERMINAL_HEIGHTS[-1]} cells"
                )
            service: AppService | None = None
            started: Callable[[], None] | None = None
            try:
                await websocket.prepare(request)
                if self.gate.full:
                    await websocket.send_bytes(waiting_line(self.gate.starting + self.gate.queued))
                started = await self.gate.enter()
                service = SessionService(
                    self.app_command(person),
                    write_bytes=websocket.send_bytes,
                    write_str=websocket.send_str,
                    who=person.name,
                    closer=_closer(websocket),
                    started=started,
                    download_manager=self.download_manager,
                    debug=False,
                )
                self.spawned += 1
                self.open_sessions[service.app_service_id] = person.name
                log.info("goldpan: %s connected (%s)", person.name, person.role)
                await service.start(width, height)
                await relay(websocket, service, person.name)
            except Exception as exc:  # one session failing never stops the others
                log.error("goldpan: %s's session failed: %s", person.name, exc)
            finally:
                if started is not None:
                    started()  # a start that failed, or a tab closed while its app started
                if service is not None:
                    with contextlib.suppress(Exception):
                        await service.stop()
                    self.open_sessions.pop(service.app_service_id, None)
                    log.info("goldpan: %s left", person.name)
            return websocket

    return GoldpanServer


ENDING_WAIT_S = 10.0
"""How long the server waits for an ending app process's exit code."""
CLOSE_REASON_BYTES = 123
"""A websocket close frame's reason is at most 123 bytes of UTF-8 (RFC 6455 §5.5)."""
CLOSED_PAGE_SCRIPT = """<script>
  // goldpan: show why the session ended (the websocket close reason) in the page's
  // "Session ended." dialog, as text.
  (function () {
    const Native = window.WebSocket;
    function Socket(url, protocols) {
      const socket = protocols === undefined ? new Native(url) : new Native(url, protocols);
      socket.addEventListener("close", function (event) {
        const line = document.querySelector(".closed-dialog .message");
        if (line && event.reason) { line.textContent = event.reason; }
      });
      return socket;
    }
    Socket.prototype = Native.prototype;
    Object.assign(Socket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
    window.WebSocket = Socket;
  })();
</script>
"""


def endedreason_line(message: str, code: int | None) -> str:
    """The line a tab shows when its session ended ("" for an ordinary end).

    ``message`` is what the app said (may be ""); ``code`` its exit code (negative: the
    signal that ended it; None: unknown).
    """
    if message:
        line = message
    elif code is None or code == 0:
        return ""
    elif code < 0:
        line = (
            f"goldpan: this session was stopped by signal {-code}; labels shown as saved "
            "are saved. Reload to go on."
        )
    else:
        line = (
            f"goldpan: this session stopped (exit code {code}); whoever runs goldpan serve "
            "has the details. Reload to go on."
        )
    return clip_utf8(" ".join(visible(line).split()), CLOSE_REASON_BYTES)


def clip_utf8(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, on a character boundary, with "…"."""
    if len(text.encode("utf-8")) <= limit:
        return text
    room = limit - len("…".encode())
    return text.encode("utf-8")[:room].decode("utf-8", "ignore") + "…"


async def _no_close() -> None:
    """textual-serve's close callback: the :class:`SessionService` closes, later."""


def _closer(websocket: Any) -> Callable[[str], Awaitable[None]]:
    async def close(reason: str) -> None:
        from aiohttp import WSCloseCode

        if reason:
            await websocket.close(code=WSCloseCode.INTERNAL_ERROR, message=reason.encode())
        else:
            await websocket.close()

    return close


def _number(value: str | None, default: int, allowed: range) -> int | None:
    """A query value as a number in ``allowed`` (``default`` when absent), or None.

    Only ASCII digits: ``str.isdigit`` and ``int`` also take ``²`` or Arabic-Indic digits.
    """
    if value is None:
        return default
    if not re.fullmatch(r"[0-9]{1,6}", value):
        return None
    number = int(value)
    return number if number in allowed else None


def make_server(
    workspace: Path,
    people: list[Person],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    served: Served | None = None,
    public_url: str | None = None,
    start_at_once: int | None = None,
) -> Any:
    """A server for these people over one workspace (``.serve()`` runs it).

    ``start_at_once``: how many tabs' app processes start at once (default
    :func:`start_limit`).
    """
    cls = _server_class()
    return cls(
        workspace,
        people,
        host=host,
        port=port,
        served=served or Served(),
        public_url=public_url,
        start_at_once=start_at_once,
    )


def run(server: Any) -> None:
    """Serve until ctrl+c or SIGTERM (every open app is told to quit first)."""
    import signal

    from aiohttp import web

    server.initialize_logging()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, server.request_exit)
    web.run_app(
        server.make_application(),
        host=server.host,
        port=server.port,
        handle_signals=False,
        loop=loop,
        access_log=logging.getLogger("goldpan.access"),
        access_log_class=server.access_log_class,  # refusals only, redacted
        print=lambda *_: None,
    )
