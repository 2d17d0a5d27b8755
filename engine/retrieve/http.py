"""Any JSON search API as a retriever: Qdrant, Weaviate, Vespa, Milvus, a team's own service.

One request per question, made from a template: ``--http-method``, ``--url`` and a JSON
``--body`` (stored in the workspace) holding ``{{query}}`` (the question's text) and
``{{size}}`` (the ranking depth asked for). In the URL they are percent-encoded; in the
body the template is parsed as JSON and the values put in as JSON values (see
:class:`~engine.retrieve.remote.Template`). Headers come from environment variables
named by ``--header-env HEADER=VAR``: read at each run, never stored.

The answer is read with JSON Pointers (RFC 6901): ``--hits-pointer`` to the array of
hits, ``--id-pointer`` and ``--score-pointer`` inside each hit. Rankings are re-derived
from the scores the trec_eval way (score descending, then doc id descending), as every
goldpan ranking is. An answer that is not 2xx, not JSON, without the pointed-to values,
or whose hits break the rule of :func:`~engine.retrieve.checked.checked_ranking` (a
document the workspace lacks or listed twice, a score that is not a finite number) is an
error naming the retriever, the question, the request and the answer (its status and
first characters).

The service's output can change while everything goldpan knows stays the same, so its
rankings are made again on every pool (as a ``command`` without a cache key). It is
trusted like a command (``engine.trust``): the method, URL, body and header variable
names are what a user trusts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.errors import BadInput
from engine.retrieve.base import PrepareEnv, Ranking
from engine.retrieve.checked import Hit, checked_ranking
from engine.retrieve.params import LIST, Param, resolve, timeout
from engine.retrieve.remote import (
    MISSING,
    Template,
    check_env_name,
    check_header_name,
    check_url,
    encode,
    env_value,
    fail,
    json_answer,
    parse_pointer,
    render_url,
    send,
    status_error,
    transport_warnings,
    url_placeholders,
)
from engine.retrieve.remote import resolve as point
from engine.types import Doc, Question, RetrieverSpec

DEFAULT_TIMEOUT_S = 30.0
METHODS = ("POST", "GET", "PUT")

URL = Param(
    "url",
    str,
    None,
    "http: the search endpoint ({{query}} and {{size}} in it are percent-encoded); "
    "opensearch, elasticsearch: the cluster's address",
    required=True,
    metavar="URL",
)
"""The address (shared by the engine kinds: one ``--url`` option)."""
INSECURE = Param(
    "insecure",
    bool,
    False,
    "do not check the engine's TLS certificate (said on every run)",
)
"""TLS without certificate checks (shared by the engine kinds)."""


def request_timeout(default: float) -> Param:
    """``--timeout``: each request's deadline, connecting and the whole answer together."""
    return timeout(default, "a request may take (connecting and the whole answer)")


class HttpRetriever:
    """Asks a JSON search API once per question."""

    KIND = "http"
    PARAMS: tuple[Param, ...] = (
        URL,
        Param("http_method", str, "POST", "the HTTP method", choices=METHODS),
        Param(
            "body",
            str,
            None,
            "a JSON request body with {{query}} and {{size}} (the pool depth); its text is "
            "stored in the workspace",
            metavar="FILE",
            from_file=True,
        ),
        Param(
            "header_env",
            LIST,
            None,
            "request headers taken from environment variables (HEADER=VAR,...): read on "
            "each run, never stored",
            metavar="HEADER=VAR",
        ),
        Param(
            "hits_pointer",
            str,
            None,
            "JSON Pointer to the array of hits in the answer (e.g. /result)",
            required=True,
            metavar="POINTER",
        ),
        Param("id_pointer", str, "/id", "JSON Pointer to a hit's document id", metavar="POINTER"),
        Param("score_pointer", str, "/score", "JSON Pointer to a hit's score", metavar="POINTER"),
        request_timeout(DEFAULT_TIMEOUT_S),
        INSECURE,
    )
    """The parameters of the ``http`` kind."""

    bases: tuple[str, ...] = ()
    base_depth: int | None = None
    batch_size = 1
    key_words = "cache key"

    def __init__(self, spec: RetrieverSpec) -> None:
        """Check the request template and the pointers (nothing is sent here)."""
        self.spec = spec
        p = resolve(self.PARAMS, spec.params, self.KIND)
        self.who = f"{self.KIND} retriever {spec.name}"
        self.url: str = p["url"]
        check_url(self.url, f"{self.who} --url")
        self.method: str = p["http_method"]
        self.body = Template.parse(p["body"], f"{self.who} --body") if p["body"] else None
        names = url_placeholders(self.url) | (self.body.names if self.body else set())
        unknown = sorted(url_placeholders(self.url) - {"query", "size"})
        if unknown:
            raise BadInput(f"{self.who} --url: unknown placeholder {{{{{unknown[0]}}}}}")
        if "query" not in names:
            raise BadInput(
                f"{self.who}: neither --url nor --body holds {{{{query}}}}: the question "
                "would not be sent"
            )
        self.headers: list[tuple[str, str]] = []
        for item in p["header_env"] or []:
            header, eq, var = item.partition("=")
            if not eq:
                raise BadInput(f"{self.who} --header-env: expected HEADER=VAR, not {item!r}")
            self.headers.append(
                (
                    check_header_name(header.strip(), f"{self.who} --header-env"),
                    check_env_name(var.strip(), f"{self.who} --header-env"),
                )
            )
        self.hits = parse_pointer(p["hits_pointer"], f"{self.who} --hits-pointer")
        self.id_pointer = parse_pointer(p["id_pointer"], f"{self.who} --id-pointer")
        self.score_pointer = parse_pointer(p["score_pointer"], f"{self.who} --score-pointer")
        self.texts = (p["hits_pointer"], p["id_pointer"], p["score_pointer"])
        self.timeout: float = p["timeout"]
        self.insecure: bool = p["insecure"]
        self.warnings = transport_warnings(self.url, self.insecure, self.who)
        self._docs: set[str] | None = None

    def cache_key(self) -> str | None:
        """None: a service's answers cannot be vouched for; ranked again on every pool."""
        return None

    def prepare(self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv) -> None:
        """Remember the corpus's doc ids (the answers are checked against them)."""
        self._docs = {d.id for d in docs}

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """One request per question."""
        headers = {"Accept": "application/json"}
        for header, var in self.headers:
            headers[header] = env_value(var, f"--header-env {header}={var}", self.who)
        if self.body is not None:
            headers.setdefault("Content-Type", "application/json")
        return [self._one(q, depth, headers) for q in questions]

    def _one(self, q: Question, depth: int, headers: dict[str, str]) -> Ranking:
        who = f"{self.who}, question {q.id}"
        body = encode(self.body.render(q.text, depth)) if self.body is not None else None
        answer = send(
            self.method,
            render_url(self.url, q.text, depth),
            who,
            body=body,
            headers=headers,
            timeout=self.timeout,
            insecure=self.insecure,
        )
        if not 200 <= answer.status < 300:
            raise status_error(who, answer, [var for _, var in self.headers])
        doc = json_answer(who, answer)
        hits_text, id_text, score_text = self.texts
        hits = point(doc, self.hits)
        if hits is MISSING:
            raise fail(who, answer, f"nothing at {hits_text!r} (--hits-pointer)")
        if not isinstance(hits, list):
            raise fail(who, answer, f"{hits_text!r} (--hits-pointer) is not an array of hits")

        def hit(i: int, found: Any) -> Hit:
            raw_id = point(found, self.id_pointer)
            if raw_id is MISSING:
                raise fail(who, answer, f"hit {i} has nothing at {id_text!r} (--id-pointer)")
            raw_score = point(found, self.score_pointer)
            if raw_score is MISSING:
                raise fail(who, answer, f"hit {i} has nothing at {score_text!r} (--score-pointer)")
            return f"hit {i}", raw_id, raw_score

        return checked_ranking(
            (hit(i, found) for i, found in enumerate(hits)),
            depth,
            self._docs,
            lambda what: fail(who, answer, what),
        )
