"""What a pool run reports, and what a retriever that cannot run raises.

:class:`RunReport` is what :func:`engine.retrieve.runner.refresh_runs` returns; it lives
here, below the runner's modules (the batched path, :mod:`engine.retrieve.batched`,
writes into it too), and :mod:`engine.retrieve.runner` exports it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from engine.errors import BadInput
from engine.pooling import TopDocs
from engine.retrieve import RetrieverError

Progress = Callable[[str, int, int], None]
"""progress(retriever name, questions done, questions to do)."""

CANNOT_RUN = (RetrieverError, BadInput)
"""What a retriever that cannot run raises (it is then skipped with ``keep_going``): its
kind's own error, or parameters it refuses. Never a built-in ``ValueError``: a bug in a
retriever is a crash with its log, not a notice. A full disk or a lock held while its
rankings are written is not the retriever's: it stops the pool."""


@dataclass
class RunReport:
    """What a pool run did, per retriever: questions run and questions still valid."""

    ran: dict[str, int] = field(default_factory=dict)
    cached: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    """Retrievers that could not run (with ``keep_going``), and why."""
    untrusted: dict[str, str] = field(default_factory=dict)
    """Retrievers skipped because this user has not trusted them: name -> what they run or
    send (:func:`engine.trust.what_runs`: a command retriever's command)."""
    untrusted_kinds: dict[str, str] = field(default_factory=dict)
    """The kind of each of :attr:`untrusted` (``engine.trust.not_trusted`` words it)."""
    warnings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """What retrievers asked in this run say every time (TLS certificates not checked,
    questions sent unencrypted): the front end shows them."""
    how: dict[str, str] = field(default_factory=dict)
    """Per retriever brought up to date, whether its rankings were made now or are cached
    and why that is valid (``ranked now (command, no cache key)``, ``cached, inputs
    unchanged``, ``cached, inputs and index identity unchanged``): what a gate says it
    scored."""
    top: dict[str, TopDocs] = field(default_factory=dict)
    """With ``keep_top`` k: per retriever, each question ranked in this call -> its top k
    doc ids (what a report of the pool reads without reading the rankings back)."""

    def cannot_rank(self) -> set[str]:
        """The retrievers this run could not rank with: not trusted here, or failed.

        Their unranked questions hold no other retriever's out of a score
        (:func:`engine.ranked.holding`).
        """
        return set(self.errors) | set(self.untrusted)

    def failed(self) -> dict[str, str]:
        """:attr:`errors` but those of retrievers skipped as not trusted (or reading one).

        What the app says failed: a skipped command is said once, by the trust flow.
        """
        return {n: e for n, e in self.errors.items() if "not trusted" not in e}
