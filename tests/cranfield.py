"""Cranfield 1400 (../shared/data/cranfield) as a BEIR folder, built at run time.

The SMART files (``.I``/``.T``/``.A``/``.B``/``.W``, CRLF line ends) are read here, not
by goldpan: a document is its title (``.T``) and abstract (``.W``); a query's id is its
position in ``cran.qry`` (1..225), which is how ``cranqrel`` numbers them (the ``.I``
numbers skip). Cleverdon's codes become grades: 1 (a complete answer) -> 3, 2 -> 2, 3 and
4 (background, minimal interest) -> 1; -1 (no interest) is left out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

GRADES = {1: 3, 2: 2, 3: 1, 4: 1}


def read_smart(path: Path) -> list[dict[str, str]]:
    """Records of a SMART file: ``{"I": id, "T": ..., "W": ...}`` in file order."""
    records: list[dict[str, str]] = []
    field = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\.([ITABW])(?:\s+(\S+))?\s*$", line)
        if m:
            if m.group(1) == "I":
                records.append({"I": m.group(2) or ""})
                field = None
            else:
                field = m.group(1)
                records[-1].setdefault(field, "")
        elif field is not None:
            records[-1][field] += line.strip() + "\n"
    return records


def cranfield_beir(src: Path, dest: Path) -> Path:
    """Write Cranfield as a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)."""
    dest.mkdir(parents=True, exist_ok=True)
    with (dest / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for r in read_smart(src / "cran.all.1400"):
            doc = {"_id": r["I"], "title": r.get("T", "").strip(), "text": r.get("W", "").strip()}
            f.write(json.dumps(doc) + "\n")
    with (dest / "queries.jsonl").open("w", encoding="utf-8") as f:
        for i, r in enumerate(read_smart(src / "cran.qry"), start=1):
            f.write(json.dumps({"_id": str(i), "text": " ".join(r["W"].split())}) + "\n")
    (dest / "qrels").mkdir(exist_ok=True)
    with (dest / "qrels" / "test.tsv").open("w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for line in (src / "cranqrel").read_text(encoding="utf-8").splitlines():
            if line.strip():
                qid, doc, code = line.split()
                if int(code) in GRADES:
                    f.write(f"{qid}\t{doc}\t{GRADES[int(code)]}\n")
    return dest
