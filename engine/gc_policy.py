"""goldpan's one policy for Python's cycle collector (``gc``): stated here, nowhere else.

goldpan's data (rankings, labels, term counts, screens' rows) holds no reference cycles
worth a collection: it dies by reference counting. The collector costs time only when it
walks, again and again, objects that are alive anyway. So:

* **A job that ends runs without collections** (:func:`pause` then :func:`resume`): ``goldpan pool``
  (``tui.cli.commands.workspace.cmd_pool``, its imports and report included) and every
  pool (:func:`engine.retrieve.runner.refresh_runs`, also the app's and the API's). A pool
  makes objects by the hundred thousand; each burst would start a collection that finds
  nothing.
* **A process that lives long freezes what is alive once started**
  (:func:`freeze_survivors`): the terminal app after its first screen
  (``tui.app.GoldpanApp``) and ``goldpan serve``'s preloaded parent before it forks
  (``tui.serve.preload``). Later collections walk only what was made since, and forks share the
  frozen pages.

No other module of goldpan calls ``gc`` (``tests/engine/test_gc_policy.py`` holds them to it).
"""

from __future__ import annotations

import gc


def freeze_survivors() -> None:
    """Collect once, then leave every object alive now out of all later collections."""
    gc.collect()
    gc.freeze()


def pause() -> bool:
    """Stop cycle collections (a job that ends); returns whether they ran, for :func:`resume`."""
    collecting = gc.isenabled()
    gc.disable()
    return collecting


def resume(collecting: bool) -> None:
    """Collections as they were before :func:`pause` (which returned ``collecting``)."""
    if collecting:
        gc.enable()
