"""Array helpers every layer may use (numpy; imported only where arrays are made)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def spans(starts: IntArray, sizes: IntArray) -> IntArray:
    """The positions of several slices of a flat array, in order and end to end.

    Span ``i`` is ``starts[i]`` up to ``starts[i] + sizes[i]`` (excluded): ``array[spans(starts,
    sizes)]`` is the slices joined, without a loop.
    """
    ends = np.cumsum(sizes, dtype=np.int64)
    total = int(ends[-1]) if ends.size else 0
    return np.repeat(starts - (ends - sizes), sizes) + np.arange(total, dtype=np.int64)
