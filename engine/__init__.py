"""goldpan's engine: workspace, import, tokenizers, retrievers, pooling and metrics.

Pure Python with numpy and scipy; it never imports the UI (``tui``, textual or rich).
Heavy modules (Kiwi) load lazily, on first use.
"""

__version__ = "0.1.0"
