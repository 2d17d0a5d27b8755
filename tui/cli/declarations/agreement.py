"""``goldpan agreement``."""

from __future__ import annotations

from engine.grades import GRADE_RANGE
from tui.cli.command import CliCommand

COMMAND = CliCommand(
    "agreement",
    "inter-annotator agreement: kappa, alpha, verdicts",
    "Cohen's kappa on relevant-or-not per annotator pair over the documents both judged, "
    f"Krippendorff's alpha (ordinal, grades {GRADE_RANGE}) and agreement on answerable vs no "
    "answer, among people; and each model judge against each person and the resolved gold "
    '(kept out of the people\'s figures). --json prints {"pairs": '
    '[{"a", "b", "n", "kappa"}], "alpha_ordinal", "units", "verdicts": [{"a", "b", "n", '
    '"agreement", "kappa"}], "models": [{"model", "against", "gold", "n", "kappa", '
    '"alpha_ordinal"}]}.',
    run="team:cmd_agreement",
    json=True,
)
