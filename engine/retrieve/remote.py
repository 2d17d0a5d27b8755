"""What the retrievers that ask a search engine over HTTP share (``http``, ``opensearch``).

- :class:`Template`: a JSON request body with ``{{query}}`` and ``{{size}}`` placeholders.
  The template is parsed as JSON once (a bare ``{{size}}`` may stand where a number
  goes); each request is the parsed value with the placeholders replaced by values, then
  encoded with :func:`json.dumps`. The question is never pasted into JSON text, so a
  question with quotes, backslashes or newlines stays one string.
- :func:`send`: one request with :mod:`urllib` (no dependency): TLS certificates checked
  unless ``insecure``, no redirect followed (a redirect would carry the credentials to an
  address nobody trusted), one deadline for the whole exchange, a cap on the answer's
  size, an answer that is not HTTP refused as such, and every failure a
  :class:`~engine.retrieve.base.RetrieverError` naming the retriever, the request and
  the answer (its status and a short excerpt, shown as data).
- :func:`env_value`: credentials come only from environment variables whose *names* the
  workspace holds; their values are read when a request is made and never stored.
- :func:`parse_pointer` and :func:`resolve`: JSON Pointers (RFC 6901) into an answer.
"""

from __future__ import annotations

import functools
import json
import os
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import BadInput
from engine.formats.errors import IngestError
from engine.formats.jsontext import load_json
from engine.retrieve.base import RetrieverError
from engine.retrieve.deadline import Deadline, watch

if TYPE_CHECKING:
    import urllib.request

PLACEHOLDERS = ("query", "size")
"""What a template may hold: the question's text and the ranking depth asked for."""

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

MAX_ANSWER_BYTES = 64 << 20
"""The largest answer read from an engine (a ranking, not a corpus)."""
EXCERPT_CHARS = 200
"""How much of an answer an error message quotes."""

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def _placeholder_scan(text: str) -> str:
    """``text`` with each placeholder that stands outside a JSON string quoted.

    ``"size": {{size}}`` is not JSON; ``"size": "{{size}}"`` is, and renders the same
    (a value that is exactly one placeholder becomes that value, a number for size).
    """
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
            continue
        if c == '"':
            in_string = True
            out.append(c)
            i += 1
            continue
        found = _PLACEHOLDER.match(text, i) if c == "{" else None
        if found is not None:
            out.append('"{{' + found.group(1) + '}}"')
            i = found.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _strings(value: Any) -> list[str]:
    """Every string value (not key) inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


@dataclass(frozen=True)
class Template:
    """A JSON request body with placeholders, parsed once."""

    value: Any
    """The parsed body; placeholders are strings ``{{name}}`` inside it."""
    names: frozenset[str]
    """The placeholders it holds."""

    @classmethod
    def parse(cls, text: str, what: str) -> Template:
        """The template in ``text`` (``what``: the option it came from, for messages).

        Raises:
            BadInput: not JSON (line named), not a JSON object, or a placeholder other
                than ``{{query}}`` and ``{{size}}``.
        """
        try:
            value = load_json(_placeholder_scan(text), what)
        except IngestError as exc:
            raise BadInput(str(exc)) from None
        if not isinstance(value, dict):
            raise BadInput(f"{what}: a request template is a JSON object ({{...}})")
        names = {m.group(1) for s in _strings(value) for m in _PLACEHOLDER.finditer(s)}
        unknown = sorted(names - set(PLACEHOLDERS))
        if unknown:
            known = ", ".join("{{" + p + "}}" for p in PLACEHOLDERS)
            raise BadInput(f"{what}: unknown placeholder {{{{{unknown[0]}}}}}; known: {known}")
        return cls(value, frozenset(names))

    def render(self, query: str, size: int) -> Any:
        """The body for one question, as a JSON value (encode it with ``json.dumps``)."""
        values = {"query": query, "size": size}

        def fill(v: Any) -> Any:
            if isinstance(v, str):
                whole = _PLACEHOLDER.fullmatch(v)
                if whole is not None:
                    return values[whole.group(1)]
                return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), v)
            if isinstance(v, list):
                return [fill(x) for x in v]
            if isinstance(v, dict):
                return {k: fill(x) for k, x in v.items()}
            return v

        return fill(self.value)


def url_placeholders(url: str) -> set[str]:
    """The placeholders in a URL."""
    return {m.group(1) for m in _PLACEHOLDER.finditer(url)}


def render_url(url: str, query: str, size: int) -> str:
    """``url`` with its placeholders replaced, each value percent-encoded."""
    values = {"query": query, "size": str(size)}
    return _PLACEHOLDER.sub(lambda m: urllib.parse.quote(values[m.group(1)], safe=""), url)


def check_url(url: str, what: str) -> urllib.parse.SplitResult:
    """An ``http://`` or ``https://`` address with a host and no credentials in it.

    Raises:
        BadInput: naming the option and what is wrong.
    """
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        raise BadInput(f"{what}: an address has no spaces or control characters: {url!r}")
    if not url.isascii():  # HTTP sends the address as ASCII
        raise BadInput(
            f"{what}: write the address in ASCII, its other characters percent-encoded "
            f"(%EA%B2%80 for 검): {url!r}"
        )
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput(f"{what}: expected an http:// or https:// address with a host, not {url!r}")
    if parts.username is not None or parts.password is not None:
        raise BadInput(
            f"{what}: no user or password in the address (the workspace would keep them); "
            "name environment variables that hold them instead"
        )
    if parts.fragment:
        raise BadInput(f"{what}: an address without a #fragment, not {url!r}")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise BadInput(f"{what}: bad port in {url!r}") from None
    return parts


def check_env_name(name: str, what: str) -> str:
    """An environment variable's name (letters, digits, ``_``; not starting with a digit)."""
    if not _ENV_NAME.match(name):
        raise BadInput(f"{what}: expected the name of an environment variable, not {name!r}")
    return name


def check_header_name(name: str, what: str) -> str:
    """An HTTP header's name (RFC 9110 token characters)."""
    if not _HEADER_NAME.match(name):
        raise BadInput(f"{what}: {name!r} is not an HTTP header name")
    return name


def env_value(var: str, option: str, who: str) -> str:
    """The value of environment variable ``var``, read now and never kept.

    Raises:
        RetrieverError: it is not set, is empty, or holds a line break or another
            character an HTTP header cannot carry.
    """
    value = os.environ.get(var)
    if not value:
        raise RetrieverError(
            f"{who}: environment variable {var} ({option}) is not set; set it to the "
            "credential this engine expects (goldpan never stores it)"
        )
    if "\r" in value or "\n" in value or "\0" in value:
        raise RetrieverError(f"{who}: environment variable {var} ({option}) holds a line break")
    if any(ord(c) > 0xFF or (ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value):
        raise RetrieverError(
            f"{who}: environment variable {var} ({option}) holds a character an HTTP header "
            "cannot carry (a control character, or one beyond Latin-1)"
        )
    return value


def transport_warnings(url: str, insecure: bool, who: str) -> tuple[str, ...]:
    """What a run must say about how questions travel to ``url``."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" and insecure:
        return (
            f"{who}: TLS certificates are not checked (--insecure): anyone on the way to "
            f"{parts.hostname} can read the questions and credentials",
        )
    if parts.scheme == "http" and (parts.hostname or "") not in LOOPBACK:
        return (f"{who}: questions and credentials go to {parts.hostname} unencrypted (http://)",)
    return ()


def excerpt(body: bytes) -> str:
    """The start of an answer, quoted as data (``repr``: escapes stay escapes)."""
    text = body[: EXCERPT_CHARS * 4].decode("utf-8", "replace")
    cut = text[:EXCERPT_CHARS]
    return repr(cut) + ("…" if len(text) > EXCERPT_CHARS or len(body) > EXCERPT_CHARS * 4 else "")


@dataclass(frozen=True)
class Answer:
    """An engine's answer to one request."""

    status: int
    body: bytes
    where: str
    """``METHOD URL``, for messages."""


def send(
    method: str,
    url: str,
    who: str,
    *,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float,
    insecure: bool = False,
) -> Answer:
    """Send one request and read the whole answer, whatever its status, within ``timeout``.

    ``timeout`` is the whole exchange's deadline (:class:`~engine.retrieve.deadline.Deadline`):
    connecting, the headers and the body together, however slowly the engine sends them.

    Raises:
        RetrieverError: the engine cannot be reached (refused, unknown host, TLS), gave no
            whole answer within ``timeout``, answered something that is not HTTP (a status
            line that is not one, more than 100 headers, broken chunks), or more than
            :data:`MAX_ANSWER_BYTES`; naming ``who`` and the request.
    """
    import http.client  # with urllib.request, ssl: only a request needs them
    import urllib.error
    import urllib.request

    where = f"{method} {url}"
    late = f"{who}: {where}: no whole answer within {timeout:g} s (connecting, headers and body)"
    opener = _opener(insecure)
    request = urllib.request.Request(url, data=body, method=method, headers=dict(headers or {}))
    with Deadline(timeout) as deadline:
        try:
            try:
                response = opener.open(request, timeout=timeout)
            except urllib.error.HTTPError as exc:
                response = exc
            with response:
                data = response.read(MAX_ANSWER_BYTES + 1)
                status = int(response.status if response.status is not None else 0)
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            if deadline.passed or isinstance(exc, TimeoutError):
                raise RetrieverError(late) from None
            raise _failure(who, where, exc) from None
        if deadline.passed:  # the body was cut off where the deadline found it
            raise RetrieverError(late)
    if len(data) > MAX_ANSWER_BYTES:
        raise RetrieverError(
            f"{who}: {where} answered more than {MAX_ANSWER_BYTES >> 20} MiB (a ranking is "
            "far smaller: is this the search endpoint?)"
        )
    return Answer(status, data, where)


def _failure(who: str, where: str, exc: BaseException) -> RetrieverError:
    """The error for a request that failed before its deadline."""
    import http.client
    import urllib.error

    if isinstance(exc, urllib.error.URLError):
        return RetrieverError(f"{who}: cannot reach {where}: {_reason(exc.reason)}")
    if isinstance(exc, http.client.HTTPException) and not isinstance(exc, ConnectionError):
        return RetrieverError(f"{who}: {where}: the answer is not HTTP: {_malformed(exc)}")
    return RetrieverError(f"{who}: {where}: the answer broke off: {_reason(exc)}")


def _malformed(exc: BaseException) -> str:
    """What was wrong with an answer that is not HTTP (what the engine sent, as data)."""
    import http.client

    if isinstance(exc, http.client.BadStatusLine):
        line = str(exc.args[0] if exc.args else "").encode("latin-1", "replace")
        return f"its first line is {excerpt(line)}, not a status line"
    if isinstance(exc, http.client.IncompleteRead):
        return f"its body ended after {len(exc.partial)} bytes, before its length or last chunk"
    return str(exc)  # http.client's own words: "got more than 100 headers"


@functools.cache
def _opener(insecure: bool) -> urllib.request.OpenerDirector:
    """The one opener per TLS setting (loading the system's CA certificates takes a while).

    It follows no redirect; with ``insecure`` it checks no certificate. Its connections'
    sockets are watched by the :class:`~engine.retrieve.deadline.Deadline` active on the
    requesting thread: a plain one once connected, a TLS one from its handshake on.
    """
    import http.client
    import ssl
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        """Hand a redirect back as the answer it is: never follow it."""

        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    class Watched(http.client.HTTPConnection):
        """A connection whose socket the thread's deadline watches once connected."""

        def connect(self) -> None:
            super().connect()
            watch(self.sock)

    class WatchedTLS(http.client.HTTPSConnection, Watched):
        """The same over TLS.

        The plain socket while it connects (and through a proxy), then the TLS socket
        (:class:`WatchedSocket`) for the handshake and after.
        """

    class WatchedSocket(ssl.SSLSocket):
        """A TLS socket the thread's deadline watches before its handshake starts."""

        def do_handshake(self, block: bool = False) -> None:
            watch(self)
            super().do_handshake(block)

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Watched, req)

    class TLS(urllib.request.HTTPSHandler):
        def __init__(self, context: ssl.SSLContext) -> None:
            super().__init__(context=context)
            self.tls = context

        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(WatchedTLS, req, context=self.tls)

    context = ssl.create_default_context()
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    context.sslsocket_class = WatchedSocket  # a public hook: wrap_socket makes these
    return urllib.request.build_opener(NoRedirect(), Plain(), TLS(context))


def _reason(reason: object) -> str:
    """A connection failure in words."""
    import socket
    import ssl

    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (is the engine running, and on that port?)"
    if isinstance(reason, socket.gaierror):
        return f"unknown host ({reason.strerror or reason})"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return (
            f"its TLS certificate cannot be verified ({reason.verify_message}); give the "
            "engine a certificate this machine trusts, or --insecure to skip the check"
        )
    if isinstance(reason, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__


def fail(who: str, answer: Answer, what: str) -> RetrieverError:
    """An error about an answer: ``who``, the request, its status and an excerpt."""
    return RetrieverError(
        f"{who}: {answer.where} answered {answer.status}: {what}; the answer starts "
        f"{excerpt(answer.body)}"
    )


def status_error(who: str, answer: Answer, credentials: Sequence[str] = ()) -> RetrieverError:
    """The error for an answer whose status is not 2xx (``credentials``: the env vars used)."""
    status = answer.status
    if status in (401, 403):
        names = ", ".join(credentials)
        hint = (
            f"check the credentials in {names}"
            if credentials
            else "the engine wants credentials: name the environment variables that hold them"
        )
        what = "not allowed" if status == 403 else "credentials refused or missing"
        return fail(who, answer, f"{what} ({hint})")
    if status == 404:
        return fail(who, answer, "not found (check the address and the index or collection)")
    if 300 <= status < 400:
        return fail(who, answer, "a redirect, not followed: give the address it points to")
    if status >= 500:
        return fail(who, answer, "the engine failed")
    return fail(who, answer, "refused")


def json_answer(who: str, answer: Answer) -> Any:
    """An answer's JSON body.

    Raises:
        RetrieverError: not 2xx (see :func:`status_error`), or not well-formed JSON.
    """
    try:
        text = answer.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(who, answer, f"not UTF-8 (byte {exc.start})") from None
    try:
        return load_json(text, answer.where, None)
    except IngestError as exc:
        raise fail(who, answer, exc.message.replace("malformed JSON", "not JSON")) from None


Pointer = tuple[str, ...]


def parse_pointer(text: str, what: str) -> Pointer:
    """A JSON Pointer (RFC 6901): ``""`` (the whole document) or ``/a/0/b``.

    Raises:
        BadInput: not starting with ``/``, or a ``~`` not followed by ``0`` or ``1``.
    """
    if text == "":
        return ()
    if not text.startswith("/"):
        raise BadInput(f"{what}: a JSON Pointer starts with '/', as in /hits/0, not {text!r}")
    tokens = text[1:].split("/")
    for t in tokens:
        if re.search(r"~(?![01])", t):
            raise BadInput(f"{what}: in a JSON Pointer '~' is written ~0 and '/' ~1: {text!r}")
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in tokens)


MISSING = object()
"""What :func:`resolve` gives for a pointer that leads nowhere."""


def resolve(doc: Any, pointer: Pointer) -> Any:
    """The value ``pointer`` points to in ``doc``, or :data:`MISSING`."""
    value = doc
    for token in pointer:
        if isinstance(value, dict):
            if token not in value:
                return MISSING
            value = value[token]
        elif isinstance(value, list):
            if not re.fullmatch(r"0|[1-9][0-9]*", token) or int(token) >= len(value):
                return MISSING
            value = value[int(token)]
        else:
            return MISSING
    return value


def pointer_text(pointer: Pointer) -> str:
    """A pointer as written."""
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in pointer)


def encode(value: Any) -> bytes:
    """A JSON value as a request body (UTF-8, the question's characters as written)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8")
