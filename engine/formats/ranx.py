"""ranx folders: ``qrels.json`` and one ``run-<retriever>.json`` per retriever."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import BadInput
from engine.formats.outfiles import NAME_MAX
from engine.types import CachedRun

# -- ranx ----------------------------------------------------------------------------------


def tie_free_scores(scores: Sequence[float]) -> list[float]:
    """The scores made strictly decreasing in the given (ranking) order, by the least steps.

    Walking up from the last document, a score not above the one below it is raised to
    the next representable double above that one (``math.nextafter``). Tied documents
    thus keep their order (goldpan's and trec_eval's: doc id descending) and move by a few
    units in the last place; distinct scores are unchanged unless a raised one reaches
    them.
    """
    out = [float(s) for s in scores]
    for i in range(len(out) - 2, -1, -1):
        if out[i] <= out[i + 1]:
            out[i] = math.nextafter(out[i + 1], math.inf)
    return out


def ranx_file_name(retriever: str) -> str:
    """``run-<name>.json``, with characters unsafe in a file name replaced by ``_``."""
    safe = "".join(c if c.isalnum() or c in "+-._@" else "_" for c in retriever)
    return f"run-{safe}.json"


@dataclass
class RanxExport:
    """What :func:`write_ranx` wrote."""

    qrels: Path
    runs: dict[str, Path] = field(default_factory=dict)
    """retriever -> its run file."""
    skipped: list[str] = field(default_factory=list)
    """Retrievers without a ranking for any scored question (ranx cannot load those)."""


def write_ranx(
    folder: Path,
    gold: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Mapping[str, CachedRun]],
) -> RanxExport:
    """``qrels.json`` and one ``run-<retriever>.json`` per retriever, as ranx loads them.

    Two choices make ranx's numbers goldpan's (and trec_eval's):

    * Each run holds exactly the questions of ``qrels.json``, a question without a
      ranking as ``{}``: ``ranx.evaluate(qrels, run)`` then needs no
      ``make_comparable`` and averages over the same questions as ``goldpan score``.
    * ranx orders tied scores arbitrarily (ranx#9), so scores go through
      :func:`tie_free_scores` in the cached order.

    Raises:
        BadInput: there is no gold to write (ranx cannot load an empty qrels).
    """
    if not any(gold.values()):
        raise BadInput("no question has a gold document yet; there is nothing to evaluate")
    folder.mkdir(parents=True, exist_ok=True)
    qids = sorted(q for q, g in gold.items() if g)
    export = RanxExport(folder / "qrels.json")
    qrels = {q: dict(sorted(gold[q].items())) for q in qids}
    export.qrels.write_text(json.dumps(qrels, ensure_ascii=False) + "\n", encoding="utf-8")
    names: dict[str, str] = {}
    for name, cached in runs.items():
        body: dict[str, dict[str, float]] = {}
        for q in qids:
            r = cached.get(q)
            body[q] = dict(zip(r.doc_ids, tie_free_scores(r.scores), strict=True)) if r else {}
        if not any(body.values()):
            export.skipped.append(name)
            continue
        file_name = ranx_file_name(name)
        if len(file_name.encode("utf-8")) > NAME_MAX:
            raise BadInput(
                f"retriever {name[:40]!r}... gives a run file name of "
                f"{len(file_name.encode('utf-8'))} bytes; file systems allow {NAME_MAX}: "
                "export the others with --retriever NAME, or add it again under a shorter name"
            )
        if file_name in names:
            raise BadInput(f"retrievers {names[file_name]!r} and {name!r} both map to {file_name}")
        names[file_name] = name
        path = folder / file_name
        path.write_text(json.dumps(body, ensure_ascii=False) + "\n", encoding="utf-8")
        export.runs[name] = path
    return export
