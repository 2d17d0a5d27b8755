"""A large BM25 batch ranked in a process of its own, beside the pool that asked for it.

A pool ranks one retriever on a worker thread while the calling thread counts the next
retriever's terms and stores the one before: but Python runs one thread at a time, and
each of the ranking's numpy calls waits for the lock back while the other thread runs
Python (a KorQuAD pool's ranking took two to three times as long beside the counting as
alone). The helper, ``python -m engine.retrieve.rank_worker``
(:class:`~engine.helper_process.HelperProcess`), ranks on the machine's other core instead:

* the pool's ranking thread finds the questions' terms
  (:meth:`~engine.retrieve.bm25.BM25Index.rank_flat`), sends them with the index's term
  counts and parameters, and waits for the rankings without holding Python's lock;
* the helper makes the same index from those counts and runs its
  :meth:`~engine.retrieve.bm25.BM25Index.rank_terms` (weighing, scoring, the top
  documents), the method that ranks in the parent otherwise, so the rankings are the
  same to the bit (the tests compare them);
* a batch of fewer than :data:`HELPER_CELLS` scores is ranked in the parent (sending it
  would cost more than it saves), and so is every batch after the helper failed (it
  could not start, ended, or answered rankings that do not hold together): the same
  rankings, later. :attr:`RankHelper.failure_message` says why.

Protocol, over the helper's standard input and output: a frame is one line of JSON, a
header with the dtype and length of each array that follows (``[["<i8", 5774], ...]``),
then each array's bytes in that order. A request's header also holds ``depth``, whether
a BM25+ bonus follows the questions, and, when the index follows (the helper keeps the
last one sent, so a retriever's later batches send only their questions), its
parameters and shape; an answer's holds either the three arrays of the rankings
(:data:`~engine.retrieve.order.Ranked`) or ``error``. The parent reads each array
straight into its own buffer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from engine.helper_process import HelperFailed, HelperProcess
from engine.retrieve.order import Ranked

if TYPE_CHECKING:
    from engine.retrieve.bm25 import BM25Index, QueryTerms

HELPER_CELLS = 1 << 22
"""Scores (questions x documents) from which a batch is ranked in the helper: about 4
million, some 50 ms of ranking alone (KorQuAD's 5,774 questions x 964 paragraphs are 5.6
million); below, sending the batch and its answer costs about what it saves."""

DTYPES = ("<i4", "<i8", "<f8")
"""The array types a frame may hold (little-endian, as numpy keeps them on this machine)."""


class RankHelperFailed(HelperFailed):
    """The ranking helper could not start, ended, or answered what it should not."""


def write_frame(
    stream: IO[bytes], header: dict[str, Any], arrays: Sequence[npt.NDArray[Any]]
) -> None:
    """One frame: ``header`` with the arrays' types and lengths, then their bytes."""
    arrays = [np.ascontiguousarray(a) for a in arrays]
    head = {**header, "arrays": [[a.dtype.str, int(a.size)] for a in arrays]}
    stream.write(json.dumps(head).encode("ascii") + b"\n")
    for a in arrays:
        stream.write(a.data.cast("B"))
    stream.flush()


def read_frame(
    stream: IO[bytes], max_bytes: int | None = None
) -> tuple[dict[str, Any], list[npt.NDArray[Any]]] | None:
    """The next frame's header and arrays; None when the stream ends before a frame.

    Raises:
        ValueError: the header is not a frame's, its arrays hold more than ``max_bytes``
            together, or the stream ends inside the frame.
    """
    line = stream.readline()
    if not line:
        return None
    head = json.loads(line)
    specs = head.get("arrays") if isinstance(head, dict) else None
    if not isinstance(specs, list):
        raise ValueError("a frame's header is a JSON object with its arrays")
    for spec in specs:
        if (
            not isinstance(spec, list)
            or len(spec) != 2
            or spec[0] not in DTYPES
            or type(spec[1]) is not int
            or spec[1] < 0
        ):
            raise ValueError(f"an array of a frame is given as {spec!r}")
    size = sum(np.dtype(dtype).itemsize * length for dtype, length in specs)
    if max_bytes is not None and size > max_bytes:
        raise ValueError(f"a frame of {size} bytes, where at most {max_bytes} can be an answer")
    arrays = []
    for dtype, length in specs:
        array = np.empty(length, dtype=dtype)
        view, got = array.data.cast("B"), 0
        while got < len(view):
            n = stream.readinto(view[got:])  # type: ignore[attr-defined]
            if not n:
                raise ValueError("the stream ended inside a frame")
            got += n
        arrays.append(array)
    return head, arrays


def _sound(ranked: list[npt.NDArray[Any]], n: int, n_docs: int, depth: int) -> bool:
    """Whether an answer's arrays are rankings of ``n`` questions over ``n_docs`` documents."""
    if len(ranked) != 3:
        return False
    cols, scores, ends = ranked
    if cols.dtype != np.int64 or scores.dtype != np.float64 or ends.dtype != np.int64:
        return False
    if ends.size != n or cols.size != scores.size:
        return False
    sizes = np.diff(ends, prepend=0)
    return (
        (n == 0 or int(ends[-1]) == cols.size)
        and bool(np.all(sizes >= 0))
        and bool(np.all(sizes <= depth))
        and (cols.size == 0 or (int(cols.min()) >= 0 and int(cols.max()) < n_docs))
    )


PIPE_BYTES = 1 << 20
"""What each of the helper's pipes holds, where the system lets it be set (Linux; the
default there is 64 KB): a pool's answer of 9 MB then crosses in 9 reads, not 144, and
the ranking thread waits for Python's lock after each read while the pool counts."""


def _widen_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Make the helper's input and output pipes hold :data:`PIPE_BYTES`, where possible."""
    try:
        import fcntl

        size = fcntl.F_SETPIPE_SZ  # type: ignore[attr-defined,unused-ignore]
    except (ImportError, AttributeError):  # not Linux: the pipes keep their size
        return
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):  # over the system's limit: left as it is
                fcntl.fcntl(stream.fileno(), size, PIPE_BYTES)


def runs_in_python() -> bool:
    """Whether ``sys.executable`` is a Python interpreter (``python``, ``python3.11.exe``)."""
    name = os.path.basename(sys.executable or "").lower()
    return name.startswith("python") and not getattr(sys, "frozen", False)


class RankHelper(HelperProcess):
    """The pool's side of the ranking helper: one request at a time, under a lock."""

    module = "engine.retrieve.rank_worker"
    env = {"OPENBLAS_NUM_THREADS": "1"}  # it ranks without BLAS: no thread pool to start
    label = "BM25's ranking helper process"
    failure = RankHelperFailed
    killed_when_closed = True  # it keeps nothing, and may still be loading numpy

    def __init__(self) -> None:
        """Nothing starts yet (:meth:`start` starts it)."""
        super().__init__()
        self._holds: BM25Index | None = None
        """The index the helper keeps (the last sent)."""
        self.failure_message: str | None = None
        """Why the helper is no longer asked (None while it is)."""
        self.served = 0
        """Batches the helper ranked."""

    def start(self) -> None:
        """Start the helper now, without waiting for it: it loads while the pool counts.

        Only where this process runs in a Python interpreter: a program that embeds
        Python (a server's, a frozen app) would be run with the helper's arguments.
        """
        with self._lock:
            if self.failure_message is None and not runs_in_python():
                self.failure_message = f"{self.label} not started: {sys.executable!r} is not Python"
            if self.failure_message is None:
                try:
                    proc, _ = self._spawn()
                except RankHelperFailed as exc:
                    self.failure_message = str(exc)
                else:
                    _widen_pipes(proc)

    def rank(
        self,
        index: BM25Index,
        q: QueryTerms,
        bonus: npt.NDArray[np.float64] | None,
        id_rank: npt.NDArray[np.int64],
        depth: int,
    ) -> Ranked | None:
        """``index``'s :meth:`~engine.retrieve.bm25.BM25Index.rank_terms`, by the helper.

        None when the helper failed, now or before (it could not start, ended, or
        answered what it should not): the caller ranks the batch itself. The helper is
        then ended and never asked again; :attr:`failure_message` says why.
        """
        with self._lock:
            if self.failure_message is not None:
                return None
            try:
                return self._ask(index, q, bonus, id_rank, depth)
            except RankHelperFailed as exc:
                self.failure_message = str(exc)
                self._holds = None
                return None

    def _ask(
        self,
        index: BM25Index,
        q: QueryTerms,
        bonus: npt.NDArray[np.float64] | None,
        id_rank: npt.NDArray[np.int64],
        depth: int,
    ) -> Ranked:
        proc = self._proc
        if proc is None:
            raise self.failure(f"{self.label} was not started")
        if proc.poll() is not None:  # it ended since its last answer: not started again
            raise self._failed("ended")
        assert proc.stdin is not None and proc.stdout is not None
        send_index = self._holds is not index
        arrays = [q.indptr, q.terms, q.mult]
        if bonus is not None:
            arrays.append(bonus)
        header: dict[str, Any] = {"depth": depth, "bonus": bonus is not None}
        if send_index:  # what the index is made of: its counts, as counted
            tf = index.counts.tf
            arrays += [tf.indptr, tf.indices, tf.data, index.doc_len, id_rank]
            header["index"] = {**dataclasses.asdict(index.params), "shape": list(tf.shape)}
        self._holds = None  # until the helper has answered with it
        try:
            write_frame(proc.stdin, header, arrays)
        except OSError:
            raise self._failed("stopped reading") from None
        n = q.indptr.size - 1
        try:  # at most depth documents a question: a number and a score each
            frame = read_frame(proc.stdout, max_bytes=16 * n * depth + 8 * n)
        except ValueError as exc:
            raise self._failed(f"answered something that is not a frame ({exc})") from None
        if frame is None:
            raise self._failed("ended")
        head, ranked = frame
        if "error" in head:
            raise self._failed(f"reported: {head['error']}")
        if not _sound(ranked, n, index.n_docs, depth):
            raise self._failed("answered rankings that do not hold together")
        self._holds = index
        self.served += 1
        return ranked[0], ranked[1], ranked[2]

    def close(self) -> None:
        """End the helper, if it runs (it is killed: it keeps nothing)."""
        with self._lock:
            self._holds = None
            self._close()
