"""A stand-in for the ranking helper that answers wrongly, for the parent's checks.

``python -m tests.engine.fake_rank_helper`` reads one request frame, then answers as the
environment's ``FAKE_RANK_HELPER`` says: ``far`` (a document number past the corpus),
``short`` (one question too few), ``deep`` (a question with more documents than the
depth asked), ``garbage`` (a line that is no frame), ``huge`` (a frame announcing a
petabyte), ``silent`` (ends without answering). The parent must rank the batch itself
each time.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from engine.helper_process import answer_stream
from engine.retrieve.rank_helper import read_frame, write_frame


def main() -> None:
    mode = os.environ.get("FAKE_RANK_HELPER", "far")
    out = answer_stream()
    frame = read_frame(sys.stdin.buffer)
    assert frame is not None
    head, arrays = frame
    n = arrays[0].size - 1
    n_docs = head["index"]["shape"][1]
    depth = int(head["depth"])
    ends = np.arange(1, n + 1, dtype=np.int64)
    cols = np.zeros(n, dtype=np.int64)
    if mode == "far":
        cols[-1] = n_docs
    elif mode == "short":
        ends = ends[:-1]
        cols = cols[:-1]
    elif mode == "deep":  # the first question has one document more than the depth
        ends = ends + depth
        cols = np.zeros(int(ends[-1]), dtype=np.int64)
    elif mode == "garbage":
        out.write(b"not a frame\n")
        out.flush()
        return
    elif mode == "huge":
        out.write(b'{"arrays": [["<f8", 125000000000000]]}\n')
        out.flush()
        return
    elif mode == "silent":
        return
    write_frame(out, {}, [cols, np.ones(cols.size), ends])


if __name__ == "__main__":
    main()
