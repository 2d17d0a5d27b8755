"""`goldpan retriever add`: every parameter a retriever kind declares is an option."""

from __future__ import annotations

import pytest

from engine.retrieve import KIND_PARAMS


def test_every_declared_parameter_is_a_retriever_add_option(capsys):
    from tui.cli import main

    with pytest.raises(SystemExit):
        main(["retriever", "add", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for kind, params in KIND_PARAMS.items():
        assert kind in text
        for p in params:
            if p.cli:
                assert p.flag in text, (kind, p.name)
    assert "(default: 1.5)" in text and "(default: 0.75)" in text
