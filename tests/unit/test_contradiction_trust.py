"""Contradictions the local checker may report (#35 item 2): a negation cue is the conflict itself, an
opposite word counts only when the claim states it one way, a number only when it is apart from every
evidence number of its kind (ranges overlapping are not), and a candidate other than the best may show
the conflict when the whole passage still clashes with the claim."""

from __future__ import annotations

from gateway.domain import Conflict, ConflictKind, VerdictLabel
from gateway.text import passage_from_text
from gateway.verification.binding import unshared_words
from gateway.verification.candidates import Candidate, candidate, passage_sentences
from gateway.verification.checks.form import FormCheck
from gateway.verification.checks.polarity import one_sided
from gateway.verification.evidence_judge import EvidenceJudge
from gateway.verification.policy import VerificationPolicy
from tests.support.checks import CHECK_DATA, analysed, analyses

NEGATION = Conflict(ConflictKind.NEGATION, "", "not apparent, efficacy", "apparent, efficacy")


def test_a_negation_cue_of_the_claim_is_the_conflict_not_an_unshared_word() -> None:
    claim = analysed("Chloroquine has no apparent efficacy against pneumonia.")
    evidence = analysed("Chloroquine has apparent efficacy against pneumonia.")
    assert unshared_words(claim, evidence, NEGATION) == []
    assert unshared_words(claim, evidence) == ["no"]  # without a negation conflict it is a word like any


def test_an_opposite_word_stated_one_way_is_one_sided() -> None:
    conflict = Conflict(ConflictKind.OPPOSITE, "", "decreases", "increased")
    assert one_sided(conflict, analysed("DUSP4 decreases apoptosis."))


def test_a_claim_using_both_sides_of_an_antonym_pair_is_not_one_sided() -> None:
    conflict = Conflict(ConflictKind.OPPOSITE, "", "increased", "decrease")
    claim = analysed("Growth rates may decrease in the summer due to increased ultraviolet light.")
    assert not one_sided(conflict, claim)


def test_an_unlisted_opposite_is_not_one_sided_and_an_effect_clash_is() -> None:
    unlisted = Conflict(ConflictKind.OPPOSITE, "", "purple", "green")
    assert not one_sided(unlisted, analysed("The rash was purple."))
    # no difference against a difference (polarity._effect_clash) states one side by construction; on
    # the dev sets none reaches the contradiction bar (bench_verifier: every figure unchanged)
    effect = Conflict(ConflictKind.OPPOSITE, "", "a difference", "no difference")
    assert one_sided(effect, analysed("The drug made a difference to survival."))


def best_of(claim: str, text: str, similarities: list[float]) -> tuple[VerdictLabel, Candidate | None]:
    """The local judge's verdict on ``claim`` against each sentence of ``text``, at the given cosines."""
    passage = passage_from_text(text, "leaflet")
    found = [
        (candidate(1, passage, span, sentence, analyses()), similarity)
        for (span, sentence), similarity in zip(passage_sentences(passage), similarities, strict=True)
    ]
    judge = EvidenceJudge(VerificationPolicy(), FormCheck.of(CHECK_DATA.words.lexicon), None)
    chosen = judge.best(analysed(claim), found, max(similarities))
    return chosen.label, chosen.candidate


def test_a_contradiction_in_a_candidate_other_than_the_best_is_reported() -> None:
    label, chosen = best_of(
        "Adults take 8 g of paracetamol a day.",
        "Adults take 4 g of paracetamol a day. Paracetamol relieves pain and fever.",
        [0.9, 0.95],
    )
    assert label is VerdictLabel.CONTRADICTED
    assert chosen is not None
    assert chosen.text == "Adults take 4 g of paracetamol a day."


def test_a_clashing_sentence_is_no_contradiction_when_the_passage_states_the_claim_elsewhere() -> None:
    label, _ = best_of(
        "Adults take 8 g of paracetamol a day.",
        "Adults take 4 g of paracetamol a day. In hospital a dose of 8 g is sometimes given.",
        [0.9, 0.6],
    )
    assert label is VerdictLabel.UNSUPPORTED


def test_a_number_apart_from_every_evidence_number_is_a_contradiction() -> None:
    label, _ = best_of(
        "Adults take 8 g of paracetamol a day.", "Adults take 4 g of paracetamol a day.", [0.9]
    )
    assert label is VerdictLabel.CONTRADICTED


def test_a_range_overlapping_the_evidence_range_is_no_contradiction() -> None:
    label, _ = best_of(
        "The prevalence of diabetes in adults aged 65 years or older is 20-25%.",
        "The prevalence of diabetes in adults aged 65 years or older is from 22 to 33%.",
        [0.95],
    )
    assert label is VerdictLabel.UNSUPPORTED


def test_a_different_limit_is_a_contradiction_though_both_are_bounds() -> None:
    label, _ = best_of(
        "Do not take more than 8 g of paracetamol in 24 hours.",
        "Do not take more than 4 g of paracetamol in 24 hours.",
        [0.95],
    )
    assert label is VerdictLabel.CONTRADICTED
