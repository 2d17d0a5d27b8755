"""Commands about judging itself: judging (the settings) and simulate.

Each command imports the engine modules it uses when it runs (see :mod:`tui.cli`).
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from tui.cli.commands.common import (
    UsageError,
    annotator_name,
    open_workspace,
    out,
    print_json,
)
from tui.literal import literal

if TYPE_CHECKING:
    from engine.judging.settings import JudgingSettings
    from engine.judging.stopping import StopRule


def cmd_judging(args: argparse.Namespace) -> None:
    """Show (and change) the workspace's judging order and stopping rule."""
    from engine.judging.settings import set_judging, workspace_judging

    change = any(v is not None for v in (args.order, args.stop_after, args.stop_below))
    with open_workspace(args.workspace) as ws:
        if change:
            settings = set_judging(
                ws,
                order=args.order,
                stop_after=args.stop_after,
                stop_below=args.stop_below,
                by=annotator_name(None),
            )
        else:
            settings = workspace_judging(ws)
    if args.json:
        print_json(_settings_json(settings))
        return
    out.print(Text(f"{args.workspace}: ") + literal(settings.describe()))


def _settings_json(settings: JudgingSettings) -> dict[str, Any]:
    return {
        "order": settings.order,
        "stop_after": settings.rule.after,
        "stop_below": settings.rule.below,
        "rule": settings.rule.describe(),
    }


def parse_stop(raw: str) -> StopRule:
    """``--stop AFTER[,BELOW]``: the rule it names."""
    from tui.cli import values

    parts = raw.split(",")
    if len(parts) > 2:
        raise UsageError(f"--stop {raw!r}: expected AFTER or AFTER,BELOW")
    try:
        after = values.whole_value(parts[0], 0, 10_000)
        below = values.finite_value(parts[1], 0) if len(parts) == 2 else 0.0
    except ValueError as exc:
        raise UsageError(f"--stop: {exc}") from None
    from engine.judging.stopping import StopRule

    return StopRule(after, below)


def cmd_simulate(args: argparse.Namespace) -> None:
    """Replay judging with one annotator's labels as the assessor."""
    from engine.judging.order import ORDERS
    from engine.judging.settings import workspace_judging
    from engine.simulate import load, simulate

    rule = None
    if args.stop is not None and args.stop != "workspace":
        rule = parse_stop(args.stop)
    with open_workspace(args.workspace) as ws:  # an older workspace is upgraded, as by score
        if args.stop == "workspace":
            rule = workspace_judging(ws).rule
        setup = load(ws, args.assessor, args.depth)
        propose = method = None
        if args.beyond_pool is not None:
            from engine.judging.feedback import load_feedback

            feedback = load_feedback(ws, [q.id for q in setup.questions])
            propose, method = feedback.propose, feedback.method
    report = simulate(
        setup,
        args.order or ORDERS,
        rule,
        beyond=args.beyond_pool,
        propose=propose,
        feedback=method,
        seeds=args.seeds,
        samples=args.samples,
    )
    data = report.to_json()
    if args.json:
        print_json(data)
        return
    _print_report(data)


def _f(value: float | None, digits: int = 2) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{100 * value:.1f}%"


def _print_report(data: dict[str, Any]) -> None:
    """The two tables of ``goldpan simulate`` and the lines around them."""
    pool = data["pool"]
    out.print(
        literal(
            f"{data['questions']} questions judged by {data['assessor']} "
            f"({data['questions_with_pooled_relevant']} with a relevant document in the pool); "
            f"pool depth {data['depth']}: {_f(pool['candidates'], 1)} candidates a question, "
            f"{_f(pool['relevant'])} of them relevant, {_pct(pool['relevant_share'])} of "
            f"{data['assessor']}'s relevant documents"
        )
    )
    order = Table(
        title="judging order: judgments until the first relevant document and until all "
        "pooled ones (gap closed: between random and perfect)",
        title_justify="left",
    )
    for col in ("policy", "first: mean", "median", "gap closed", "all found: share", "gap closed"):
        order.add_column(col, justify="left" if col == "policy" else "right")
    for p in data["policies"]:
        if p["order"] == "deeper":
            continue
        first, every = p["first_relevant"], p["all_found"]
        order.add_row(
            literal(p["name"]),
            _f(first["mean"]),
            _f(first["median"], 0),
            _pct(first["gap_closed"]),
            _pct(every["share"]),
            _pct(every["gap_closed"]),
        )
    out.print(order)
    stop = data["stop"]
    said = "no stopping rule" if stop is None else f"stop after {stop['after']} not relevant"
    if stop is not None and stop["below"]:
        said += f" or below {stop['below']:g} estimated left"
    effort = Table(
        title=literal(
            f"what is judged and found ({said}); tau: the retrievers' order by MRR and "
            "nDCG@10 against the full judgments, 95% interval"
        ),
        title_justify="left",
    )
    heads = ("policy", "judged", "pooled relevant found", "found@10", "found@20", "found@50")
    for col in (*heads, "tau MRR", "tau nDCG@10", "real pairs swapped"):
        effort.add_column(col, justify="left" if col == "policy" else "right")
    for p in data["policies"]:
        at = p["found_at"]
        taus = []
        for metric in ("mrr", "ndcg@10"):
            t = p["tau"][metric]
            taus.append(
                _f(t["tau"]) + ("" if t["low"] is None else f" [{_f(t['low'])}, {_f(t['high'])}]")
            )
        swapped = p["real_pairs_swapped"]
        effort.add_row(
            literal(p["name"]),
            _pct(p["judged_share"]) if p["order"] != "deeper" else "-",
            _pct(p["pooled_relevant_found"]) if p["order"] != "deeper" else "-",
            _pct(at["10"]),
            _pct(at["20"]),
            _pct(at["50"]),
            *taus,
            f"{swapped['mrr']} / {swapped['ndcg@10']}",
        )
    out.print(effort)
    unique = ", ".join(f"{k} {v}" for k, v in data["unique_relevant"].items()) or "-"
    out.print(literal(f"relevant documents only one retriever pooled: {unique}"))
    for metric, pairs in data["real_pairs"].items():
        said = ", ".join(f"{a} / {b}" for a, b in pairs) or "none"
        out.print(literal(f"real differences under the full judgments ({metric}): {said}"))
    if data["feedback"]:
        out.print(literal(f"beyond the pool: {data['feedback']}"))
        for p in data["policies"]:
            left = p.get("relevant_left")
            if left:
                out.print(
                    literal(
                        f"relevant left after {p['beyond_pool']} judgments: estimated "
                        f"{_f(left['estimate'])} a question, truly {_f(left['true'])} "
                        f"(mean error {_f(left['mean_abs_error'])})"
                    )
                )
    out.print(Text(f"{data['random_seeds']} random orders; {data['seconds']:.1f} s"))
