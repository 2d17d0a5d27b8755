"""goldpan's engine: workspace, import, tokenizers, retrievers, pooling and metrics.

Pure Python with numpy (and scipy for the query-log and near-duplicate analyses); it
never imports the UI (``tui``, textual or rich). Heavy modules (Kiwi) load lazily, on
first use.
"""

__version__ = "0.1.0"
