"""What the review screen offers: its commands (keys, palette) and its help page."""

from __future__ import annotations

from tui.actions import Command

REVIEW_HELP = """
## Review

The table scores every retriever on the **scored** questions (agreed gold): Hit@k, MRR,
Recall@5, nDCG@10, rescored (never re-run) at every label; **Judged@10**, the share of
its top 10 a person judged (under 80%, its lower scores are unknown, not worse); **ms
p50** / **p95** of one question ranked alone, **q/s** the pool's throughput.

The grid: the **rank of the first gold** per question and retriever (`-`: not in the
top 100; `not ranked`: not ranked yet, left out of every mean), hardest first, and the
rank-1 document that beat it.

`review.panel` cycles the panels; `review.a` / `review.b` choose retrievers A and B:

- **compare**: win / tie / loss, the bootstrap 95% interval, the randomization p-value
  and the verdict: real only when both agree, none when too few questions differ.
- **by tag**: two tags (`review.tag1`, `review.tag2` pick them), high vs low overlap.
- **failures**: where A misses rank 1, what won; **no-answer**: the best threshold.
- **sweep**: A's MRR over k1 x b, a check; **pool**: what only each retriever found.

`review.since`: changes since a snapshot (▼ worse ▲ better; coloured: a real change).
"""

REVIEW_ACTIONS = (
    Command(
        "t",
        "cycle_tag",
        "Tag filter",
        "Score only questions with one tag (cycles)",
        "review.tag",
        title="Review: filter by tag",
    ),
    Command(
        "enter",
        "judge",
        "Judge",
        "Judge the selected question",
        "review.judge",
        title="Review: judge selected question",
    ),
    Command(
        "p",
        "next_panel",
        "Panel",
        "Next panel: scores, compare, by tag, failures, no-answer, sweep, pool",
        "review.panel",
        title="Review: next analysis panel",
    ),
    Command(
        "a",
        "next_a",
        "A",
        "Choose retriever A (cycles)",
        "review.a",
        title="Review: choose retriever A",
    ),
    Command(
        "b",
        "next_b",
        "B",
        "Choose retriever B (cycles)",
        "review.b",
        title="Review: choose retriever B",
    ),
    Command(
        "1",
        "next_tag1",
        "Tag 1",
        "By tag: the first tag compared (cycles through every tag)",
        "review.tag1",
        title="Review: by tag, choose the first tag",
        when="on_tags_panel",
        show=False,
    ),
    Command(
        "2",
        "next_tag2",
        "Tag 2",
        "By tag: the second tag compared (cycles through every tag)",
        "review.tag2",
        title="Review: by tag, choose the second tag",
        when="on_tags_panel",
        show=False,
    ),
    Command(
        "s",
        "next_since",
        "Since",
        "Show changes since another snapshot (cycles: newest first, then none)",
        "review.since",
        title="Review: changes since a snapshot",
        when="has_snapshots",
    ),
)
