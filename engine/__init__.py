"""goldpan's engine: workspace, import, tokenizers, retrievers, pooling and metrics.

Its rooms: ``workspace/`` (all of its SQL), ``formats/``, ``retrieve/``, ``session/`` (the
labeling session), ``judging/`` (people's judging order and stopping), ``judges/`` (model
judges), ``analysis/``, ``ci/`` (the gate and its reports), ``team/``; the rules they
share are modules of their own here (``gold``, ``metrics``, ``scoring``, ``verdict``, ...).
CONTRIBUTING.md's layout says what each holds.

Pure Python with numpy (and scipy for the query-log and near-duplicate analyses); it
never imports the UI (``tui``, textual or rich). Heavy modules (Kiwi) load lazily, on
first use.
"""

__version__ = "0.1.0"
