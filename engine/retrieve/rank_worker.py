"""BM25's ranking helper process itself: ``python -m engine.retrieve.rank_worker``.

It answers :class:`~engine.retrieve.rank_helper.RankHelper`'s requests (the protocol is
there): each makes the pool's index from its term counts, or keeps the last one, and
ranks the questions with the code the pool ranks with in-process
(:meth:`~engine.retrieve.bm25.BM25Index.rank_terms`). A module of its own, imported by
nothing else: run as ``__main__``, it is not also imported under its name.
"""

from __future__ import annotations

import os
import sys
from typing import IO

import numpy as np
import numpy.typing as npt

from engine.helper_process import answer_stream
from engine.retrieve.bm25 import BM25Index, BM25Params, QueryTerms, TermCounts, TermRows
from engine.retrieve.rank_helper import read_frame, write_frame


def serve(requests: IO[bytes], out: IO[bytes]) -> None:
    """Answer each request of ``requests`` until it ends.

    The protocol is :mod:`engine.retrieve.rank_helper`'s.
    """
    index: BM25Index | None = None
    id_rank: npt.NDArray[np.int64] | None = None
    while True:
        frame = read_frame(requests)  # a broken frame ends the helper: the parent says so
        if frame is None:
            return
        head, arrays = frame
        try:
            q = QueryTerms(arrays[0], arrays[1], arrays[2])
            rest = arrays[3:]
            bonus = rest.pop(0) if head["bonus"] else None
            made = head.get("index")
            if made is not None:
                indptr, indices, tf, doc_len, id_rank = rest
                params = {k: v for k, v in made.items() if k != "shape"}
                counts = TermCounts(
                    {}, TermRows(indptr, indices, tf, tuple(made["shape"])), doc_len
                )
                index = BM25Index(None, BM25Params(**params), counts=counts)
            if index is None or id_rank is None:
                raise ValueError("a request without an index came first")
            write_frame(out, {}, index.rank_terms(q, bonus, id_rank, int(head["depth"])))
        except Exception as exc:  # answered: the parent ranks the batch itself
            write_frame(out, {"error": f"{type(exc).__name__}: {exc}"}, [])


def main() -> int:
    """The helper's side: answer requests until the input ends, then exit at once."""
    out = answer_stream()
    serve(sys.stdin.buffer, out)
    out.flush()
    os._exit(0)  # nothing to close: Python's teardown would only keep the parent waiting


if __name__ == "__main__":
    sys.exit(main())
