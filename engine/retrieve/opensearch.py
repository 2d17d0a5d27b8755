"""An OpenSearch or Elasticsearch index as a retriever, asked with ``_msearch``.

The questions of a pool go in batches (``--batch``, 100 by default) to
``POST {url}/{index}/_msearch`` as NDJSON: a ``{}`` header line and a query body per
question. The body is ``--template`` (a JSON query body stored in the workspace, holding
``{{query}}`` and optionally ``{{size}}`` for the pool depth; see
:class:`~engine.retrieve.remote.Template`), or by default a ``match`` (one field) or
``multi_match`` (several) of the question on ``--fields``. A body that sets no ``size``
is given the pool depth, and one without ``_source`` asks for only the id field.

Scores are taken as the engine gives them (``_score``) and rankings re-derived from them
the trec_eval way (score descending, then doc id descending), as every goldpan ranking
is; the engine's own order among tied scores is not kept. The document id is the hit's
``_id``, or a field of its ``_source`` (``--id-field``, dots for nested objects).

Credentials come only from environment variables named by options: ``--api-key-env``
(sent as ``Authorization: ApiKey …``) or ``--user-env`` with ``--password-env`` (HTTP
basic); the workspace keeps the variables' names, never their values.

Errors name the retriever and what the engine answered: an unreachable engine, refused
credentials (401/403), an unknown index (404), an item of ``_msearch`` that failed, a
search that timed out or lost shards (its ranking would be partial), hits without a
score, and hits that break :func:`~engine.retrieve.checked.checked_ranking`'s rule
(documents the workspace lacks or listed twice, a score that is not a finite number).

The index can change while everything goldpan knows stays the same, so its identity is
read before each pool (:meth:`SearchIndexRetriever.cache_key`): for each index behind the
name (an alias may point to several), its name, uuid, document and deletion counts, the
indexing counters of its primaries, and hashes of its mappings and analysis settings.
The cached rankings are valid while that is unchanged; a re-indexed, updated or remapped
index is asked again.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from engine.errors import BadInput
from engine.retrieve.base import PrepareEnv, Ranking, RetrieverError
from engine.retrieve.checked import Hit, checked_ranking
from engine.retrieve.http import INSECURE, URL, request_timeout
from engine.retrieve.params import LIST, Param, resolve
from engine.retrieve.remote import (
    Answer,
    Template,
    check_env_name,
    check_url,
    encode,
    env_value,
    excerpt,
    fail,
    json_answer,
    send,
    status_error,
    transport_warnings,
)
from engine.types import Doc, Question, RetrieverSpec, canonical_json

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_BATCH = 100
_BAD_INDEX = re.compile(r'[\s/\\?#"<>|]')


def _engine_reason(error: Any) -> str:
    """``type: reason`` of an OpenSearch/Elasticsearch error object (its first root cause)."""
    if isinstance(error, dict):
        causes = error.get("root_cause")
        first = causes[0] if isinstance(causes, list) and causes else error
        if isinstance(first, dict):
            kind, reason = first.get("type"), first.get("reason")
            if kind or reason:
                return f"{kind}: {reason}"
    return excerpt(json.dumps(error, ensure_ascii=False).encode("utf-8"))


def _source_field(source: Any, dotted: str) -> Any:
    """A field of a hit's ``_source`` by its dotted path, or None."""
    value = source
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


class SearchIndexRetriever:
    """Ranks questions with an OpenSearch index's own search (``_msearch``)."""

    KIND = "opensearch"
    PARAMS: tuple[Param, ...] = (
        URL,
        Param(
            "index",
            str,
            None,
            "the index, alias or comma-separated indices to search",
            required=True,
            metavar="INDEX",
        ),
        Param(
            "template",
            str,
            None,
            "a JSON query body with {{query}} and {{size}} (the pool depth); its text is "
            "stored in the workspace (default: a match on --fields)",
            metavar="FILE",
            from_file=True,
        ),
        Param(
            "fields",
            LIST,
            None,
            "the index fields the default query matches (title^2 boosts); needed "
            "without --template",
            metavar="F1,F2",
        ),
        Param(
            "id_field",
            str,
            "_id",
            "where a hit's document id is: _id, or a field of its _source (dots for nested)",
            metavar="FIELD",
        ),
        Param(
            "api_key_env",
            str,
            None,
            "an environment variable holding an API key (sent as Authorization: ApiKey)",
            metavar="VAR",
        ),
        Param(
            "user_env", str, None, "an environment variable holding the user name", metavar="VAR"
        ),
        Param(
            "password_env", str, None, "an environment variable holding the password", metavar="VAR"
        ),
        request_timeout(DEFAULT_TIMEOUT_S),
        Param(
            "batch",
            int,
            DEFAULT_BATCH,
            "questions per _msearch request",
            check=lambda v: 1 <= v <= 10_000,
            must="between 1 and 10000",
        ),
        INSECURE,
    )
    """The parameters of the ``opensearch`` and ``elasticsearch`` kinds."""

    bases: tuple[str, ...] = ()
    base_depth: int | None = None
    key_words = "index identity"

    def __init__(self, spec: RetrieverSpec) -> None:
        """Check the address, index, template and credential options (nothing is sent)."""
        self.spec = spec
        p = resolve(self.PARAMS, spec.params, self.KIND)
        self.who = f"{self.KIND} retriever {spec.name}"
        self.url: str = p["url"].rstrip("/")
        parts = check_url(self.url, f"{self.who} --url")
        if parts.query:
            raise BadInput(f"{self.who} --url: the cluster's address, without a ?query")
        index: str = p["index"]
        if not index.strip() or _BAD_INDEX.search(index) or index.startswith(("_", "-", "+")):
            raise BadInput(
                f"{self.who} --index: expected an index name, alias or comma-separated "
                f"names, not {index!r}"
            )
        self.index = index
        self.id_field: str = p["id_field"].strip()
        if not self.id_field:
            raise BadInput(f"{self.who} --id-field: name a field, or _id")
        if p["template"]:
            template = Template.parse(p["template"], f"{self.who} --template")
            if "query" not in template.names:
                raise BadInput(
                    f"{self.who} --template: it holds no {{{{query}}}}: the question would "
                    'not be sent (put "{{query}}" where the question goes)'
                )
        elif p["fields"]:
            template = self._default_template(p["fields"])
        else:
            raise BadInput(
                f"{self.who}: give --fields (the index fields to match the question on) "
                "or --template FILE"
            )
        self.template = template
        self.api_key_env: str | None = p["api_key_env"]
        self.user_env: str | None = p["user_env"]
        self.password_env: str | None = p["password_env"]
        for option, var in (
            ("--api-key-env", self.api_key_env),
            ("--user-env", self.user_env),
            ("--password-env", self.password_env),
        ):
            if var is not None:
                check_env_name(var, f"{self.who} {option}")
        if (self.user_env is None) != (self.password_env is None):
            raise BadInput(f"{self.who}: --user-env and --password-env go together")
        if self.api_key_env and self.user_env:
            raise BadInput(f"{self.who}: --api-key-env or --user-env/--password-env, not both")
        self.timeout: float = p["timeout"]
        self.batch: int = p["batch"]
        self.insecure: bool = p["insecure"]
        self.warnings = transport_warnings(self.url, self.insecure, self.who)
        self._docs: set[str] | None = None

    @staticmethod
    def _default_template(fields: Sequence[str]) -> Template:
        if len(fields) == 1 and "^" not in fields[0]:
            query: Any = {"match": {fields[0]: {"query": "{{query}}"}}}
        else:
            query = {"multi_match": {"query": "{{query}}", "fields": list(fields)}}
        return Template({"size": "{{size}}", "query": query}, frozenset({"query", "size"}))

    @property
    def batch_size(self) -> int:
        """Questions per ``_msearch`` request."""
        return self.batch

    # -- requests ------------------------------------------------------------------------

    def _index_url(self, endpoint: str = "") -> str:
        path = f"{self.url}/{urllib.parse.quote(self.index, safe=',*')}"
        return f"{path}/{endpoint}" if endpoint else path

    def _credentials(self) -> list[str]:
        return [v for v in (self.api_key_env, self.user_env, self.password_env) if v]

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.api_key_env:
            key = env_value(self.api_key_env, "--api-key-env", self.who)
            headers["Authorization"] = f"ApiKey {key}"
        elif self.user_env and self.password_env:
            user = env_value(self.user_env, "--user-env", self.who)
            password = env_value(self.password_env, "--password-env", self.who)
            token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            headers["Authorization"] = f"Basic {token}"
        return headers

    def _ask(
        self, method: str, url: str, body: bytes | None = None, content_type: str = ""
    ) -> tuple[Answer, Any]:
        headers = self._headers()
        if content_type:
            headers["Content-Type"] = content_type
        answer = send(
            method,
            url,
            self.who,
            body=body,
            headers=headers,
            timeout=self.timeout,
            insecure=self.insecure,
        )
        if not 200 <= answer.status < 300:
            raise self._status_error(answer)
        return answer, json_answer(self.who, answer)

    def _status_error(self, answer: Answer) -> RetrieverError:
        """The error for a refused request, with the engine's own reason where it gives one."""
        if answer.status == 404:
            base = fail(
                self.who, answer, f"no index {self.index!r} there (check --url and --index)"
            )
        else:
            base = status_error(self.who, answer, self._credentials())
        try:
            error = json.loads(answer.body.decode("utf-8")).get("error")
        except (ValueError, AttributeError, RecursionError):
            return base
        if error is None:
            return base
        return RetrieverError(f"{base} ({_engine_reason(error)})")

    # -- the index's identity --------------------------------------------------------------

    def cache_key(self) -> str:
        """A hash of the index's identity now (see the module's docstring)."""
        _, stats = self._ask("GET", self._index_url("_stats/docs,indexing"))
        answer, described = self._ask("GET", self._index_url())
        indices = stats.get("indices") if isinstance(stats, dict) else None
        if not isinstance(indices, dict) or not isinstance(described, dict):
            raise fail(self.who, answer, "not an index description (is --url the cluster?)")
        rows = []
        for name in sorted(set(indices) | set(described)):
            stat, about = _dict(indices.get(name)), _dict(described.get(name))
            primaries = _dict(stat.get("primaries"))
            settings = _dict(_dict(about.get("settings")).get("index"))
            docs, indexing = _dict(primaries.get("docs")), _dict(primaries.get("indexing"))
            rows.append(
                {
                    "name": name,
                    "uuid": stat.get("uuid") or settings.get("uuid"),
                    "docs": docs.get("count"),
                    "deleted": docs.get("deleted"),
                    "indexed": indexing.get("index_total"),
                    "deletes": indexing.get("delete_total"),
                    "mappings": _digest(about.get("mappings")),
                    "analysis": _digest(settings.get("analysis")),
                }
            )
        return hashlib.sha256(canonical_json({"indices": rows}).encode()).hexdigest()

    # -- ranking ---------------------------------------------------------------------------

    def prepare(self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv) -> None:
        """Remember the corpus's doc ids (the hits are checked against them)."""
        self._docs = {d.id for d in docs}

    def body(self, query: str, depth: int) -> Any:
        """One question's query body."""
        body = self.template.render(query, depth)
        body.setdefault("size", depth)
        if "_source" not in body:
            body["_source"] = False if self.id_field == "_id" else [self.id_field]
        return body

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """One ``_msearch`` request for ``questions``."""
        if not questions:
            return []
        lines = []
        for q in questions:
            lines += ["{}", encode(self.body(q.text, depth)).decode("utf-8")]
        payload = ("\n".join(lines) + "\n").encode("utf-8")
        answer, doc = self._ask(
            "POST", self._index_url("_msearch"), payload, "application/x-ndjson"
        )
        responses = doc.get("responses") if isinstance(doc, dict) else None
        if not isinstance(responses, list) or len(responses) != len(questions):
            got = len(responses) if isinstance(responses, list) else "no"
            raise fail(self.who, answer, f"{got} responses to {len(questions)} searches (_msearch)")
        return [
            self._ranking(q, item, answer, depth)
            for q, item in zip(questions, responses, strict=True)
        ]

    def _ranking(self, q: Question, item: Any, answer: Answer, depth: int) -> Ranking:
        who = f"{self.who}, question {q.id}"
        if not isinstance(item, dict):
            raise fail(who, answer, "a response of _msearch is not an object")
        if "error" in item:
            status = item.get("status", "")
            raise RetrieverError(
                f"{who}: the engine failed this search ({status} "
                f"{_engine_reason(item['error'])}); request {answer.where}"
            )
        if item.get("timed_out") is True:
            raise RetrieverError(
                f"{who}: the engine timed out on this search (its ranking would be partial); "
                "give the engine more time, or ask fewer documents"
            )
        shards = item.get("_shards")
        if isinstance(shards, dict) and isinstance(shards.get("failed"), int) and shards["failed"]:
            raise RetrieverError(
                f"{who}: {shards['failed']} shard(s) failed on this search (its ranking would "
                "be partial)"
            )
        hits = _dict(item.get("hits")).get("hits")
        if not isinstance(hits, list):
            raise fail(who, answer, "a response without hits.hits")

        def hit(i: int, found: Any) -> Hit:
            if not isinstance(found, dict):
                raise fail(who, answer, f"hit {i} is not an object")
            raw = (
                found.get("_id")
                if self.id_field == "_id"
                else _source_field(found.get("_source"), self.id_field)
            )
            if raw is None:
                raise fail(
                    who, answer, f"hit {i} has no document id in {self.id_field} (--id-field)"
                )
            if found.get("_score") is None:
                raise fail(
                    who,
                    answer,
                    f"hit {i} ({raw!r}) has no _score (does the template sort by "
                    "something else, or turn scoring off?)",
                )
            return f"hit {i}", raw, found["_score"]

        return checked_ranking(
            (hit(i, found) for i, found in enumerate(hits)),
            depth,
            self._docs,
            lambda what: fail(who, answer, what),
        )


class ElasticsearchRetriever(SearchIndexRetriever):
    """The same for Elasticsearch (its ``_msearch``, ``_stats`` and index API are alike)."""

    KIND = "elasticsearch"


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (an answer's optional parts)."""
    return value if isinstance(value, dict) else {}


def _digest(value: Any) -> str | None:
    """A hash of a JSON value (None stays None)."""
    if value is None:
        return None
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()
