from engine.gold import Status, resolve, resolve_one
from engine.types import Adjudication, Label, Verdict


def one(labels=None, verdicts=None, adj=None):
    return resolve_one("q", labels or {}, verdicts or {}, adj)


def test_unlabeled_and_no_gold_yet():
    assert one().status is Status.UNLABELED
    assert one({"mina": {"d1": 0, "d2": 0}}).status is Status.NO_GOLD_YET
    assert one(verdicts={"mina": "skip"}).status is Status.UNLABELED


def test_single_annotator_is_gold():
    g = one({"mina": {"d1": 2, "d2": 0}})
    assert g.status is Status.LABELED
    assert g.gold == {"d1": 2}
    assert g.count_as == "scored"


def test_agreement_takes_the_lowest_grade():
    g = one({"mina": {"d1": 3, "d2": 1}, "jun": {"d1": 2, "d2": 2, "d3": 0}})
    assert g.status is Status.LABELED
    assert g.gold == {"d1": 2, "d2": 1}


def test_different_relevant_sets_are_disputed():
    g = one({"mina": {"d1": 1}, "jun": {"d2": 1}})
    assert g.status is Status.DISPUTED
    assert g.count_as == "disputed"


def test_explicit_zero_against_a_relevant_doc_is_a_dispute():
    assert one({"mina": {"d1": 1}, "jun": {"d1": 0}}).status is Status.DISPUTED
    # an annotator who judged other documents only does not dispute
    assert one({"mina": {"d1": 1}, "jun": {"d5": 0}}).status is Status.LABELED


def test_no_answer_agreement_and_disagreement():
    assert one(verdicts={"mina": "no_answer", "jun": "no_answer"}).status is Status.NO_ANSWER
    assert one({"jun": {"d1": 1}}, {"mina": "no_answer"}).status is Status.DISPUTED
    g = one({"jun": {"d1": 0}}, {"mina": "no_answer"})
    assert g.status is Status.NO_ANSWER and g.count_as == "no_answer"


def test_ambiguous_flag_and_skip():
    assert one({"mina": {"d1": 1}}, {"jun": "ambiguous"}).status is Status.AMBIGUOUS
    # a skipping annotator has no view; the other annotator's labels stand
    assert one({"mina": {"d1": 1}, "jun": {"d2": 1}}, {"jun": "skip"}).gold == {"d1": 1}


def test_adjudication_is_final():
    adj = Adjudication("q", False, {"d2": 3, "d9": 0}, "lee")
    g = one({"mina": {"d1": 1}, "jun": {"d2": 1}}, adj=adj)
    assert (g.status, g.gold, g.adjudicated) == (Status.LABELED, {"d2": 3}, True)
    g = one({"mina": {"d1": 1}}, adj=Adjudication("q", True, {}, "lee"))
    assert g.status is Status.NO_ANSWER


def test_resolve_covers_every_question():
    golds = resolve(
        ["q1", "q2", "q3"],
        [Label("q1", "d1", "mina", 1)],
        [Verdict("q2", "mina", "no_answer")],
    )
    assert [golds[q].status for q in ("q1", "q2", "q3")] == [
        Status.LABELED,
        Status.NO_ANSWER,
        Status.UNLABELED,
    ]


def test_judged_documents_are_every_persons_judgments_grade_0_included():
    g = one({"mina": {"d1": 2, "d2": 0}, "jun": {"d1": 1, "d3": 0}})
    assert g.judged == {"d1", "d2", "d3"}
    assert g.qrels == {"d1": 1, "d2": 0, "d3": 0}  # the gold grade, 0 for the rest


def test_a_skipping_annotators_labels_are_not_judgments():
    g = one({"mina": {"d1": 1}, "jun": {"d2": 3, "d4": 0}}, {"jun": "skip"})
    assert g.qrels == {"d1": 1}


def test_an_adjudication_judges_what_it_names_and_what_people_graded():
    adj = Adjudication("q", False, {"d2": 3, "d9": 0}, "lee")
    g = one({"mina": {"d1": 1}, "jun": {"d2": 1}}, adj=adj)
    # d1 was judged relevant by mina, and not by the adjudicator: judged, not relevant
    assert g.qrels == {"d1": 0, "d2": 3, "d9": 0}
