"""The CLI's defaults and lists are the engine's own constants, never restated by hand."""

from __future__ import annotations

import argparse

import pytest

from engine.analysis.analyses import SWEEP_B, SWEEP_K1
from engine.analysis.compare import DEFAULT_SAMPLES
from engine.analysis.fidelity import DEFAULT_K as FIDELITY_K
from engine.analysis.fusion_sweep import DEFAULT_FOLDS, DEFAULT_NORM
from engine.judging.queue import DEFAULT_K as QUEUE_K
from engine.metrics import DEFAULT_METRIC, METRIC_FAMILIES, parse_metric
from engine.retrieve.fusion import NORMS
from engine.scoring import DEFAULT_KS
from engine.verdict import LEVEL
from tui.cli import parse_args


def parse(*argv: str) -> argparse.Namespace:
    return parse_args(argv)


def test_defaults_are_the_engines() -> None:
    assert parse("queue", "ws").k == QUEUE_K
    assert parse("fidelity", "ws", "a", "b").k == FIDELITY_K
    assert [int(k) for k in parse("score", "ws").k.split(",")] == list(DEFAULT_KS)
    compare = parse("compare", "ws", "a", "b")
    # --metric is repeatable: no metric given reads as the engine's DEFAULT_METRIC
    assert (compare.samples, compare.metric, compare.level) == (DEFAULT_SAMPLES, None, LEVEL)
    sweep = parse("sweep", "ws", "--retriever", "bm25")
    assert (sweep.folds, sweep.samples, sweep.metric) == (
        DEFAULT_FOLDS,
        DEFAULT_SAMPLES,
        DEFAULT_METRIC,
    )
    assert parse("power", "ws", "a", "b").metric == DEFAULT_METRIC
    assert DEFAULT_NORM in NORMS
    parse_metric(DEFAULT_METRIC)  # a metric the engine takes


@pytest.mark.parametrize("command", ["compare", "power", "sweep"])
def test_metric_help_lists_every_family(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(command, "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert ", ".join(METRIC_FAMILIES) in text
    assert f"default: {DEFAULT_METRIC}" in text
    for family in METRIC_FAMILIES:  # each one is a metric the engine parses (M: any plain one)
        parse_metric(family.replace("@k", "@5").replace(":M", ":ndcg@5"))


def test_sweep_help_names_the_engines_grid_and_norms(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("sweep", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert f"default: {','.join(map(str, SWEEP_K1))}" in text
    assert f"default: {','.join(map(str, SWEEP_B))}" in text
    assert "{" + ",".join(NORMS) + "}" in text
