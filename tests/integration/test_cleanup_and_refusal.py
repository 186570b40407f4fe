"""SourceCleanup and refusal end to end: the openai SDK -> gateway -> scripted upstream, non-streaming.

Every test asserts exactly the text the client receives (before the AI disclosure that ends it). The
verifier is pinned to quote anchoring (tests/support/cleanup_stack.py) so the text depends on cleanup,
not on the verifier of the day.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from gateway.testing import ScriptedUpstream
from gateway.web.disclosure import Disclosure
from tests.support import cleanup_scenarios as s
from tests.support.stack import Start, openai_client

DISCLOSURE = Disclosure().suffix
Ask = Callable[[str], tuple[str, dict[str, Any]]]


def patient_gateway(start: Start, context: str = "general", **cleanup: Any) -> tuple[ScriptedUpstream, Ask]:
    """A gateway the module's tests share per policy (``module_policy_gateway``), rewriting from the source
    unless ``cleanup`` says otherwise, its trust object clinician-facing (removed texts included);
    returns (scripted upstream, ask)."""
    scripted, url, _ = start(
        cleanup={"rewriter": "extractive", **cleanup}, context=context, trust_include_removed_text=True
    )

    def ask(question: str) -> tuple[str, dict[str, Any]]:
        completion = openai_client(url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": question}]
        )
        content = completion.choices[0].message.content
        assert content.endswith(DISCLOSURE)  # every answer, refusals included, says it is automated
        return content.removesuffix(DISCLOSURE), completion.model_extra["trust"]

    return scripted, ask


def outcomes(trust: dict[str, Any]) -> list[str]:
    return [c["outcome"] for c in trust["claims"]]


def test_fully_supported_answer_reaches_the_patient_unchanged(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway)
    scripted.queue(s.SUPPORTED)
    text, trust = ask(s.PARACETAMOL_Q)
    assert text == s.SUPPORTED_TEXT
    assert outcomes(trust) == ["verified", "verified"]
    assert trust["summary"]["refused"] is False


def test_fabricated_quote_is_removed_and_the_rest_kept(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway)
    scripted.queue(s.FABRICATED_QUOTE)
    text, trust = ask(s.PARACETAMOL_Q)
    assert text == s.FABRICATED_QUOTE_TEXT
    assert outcomes(trust) == ["verified", "verified", "removed"]
    assert trust["claims"][2]["reason"].startswith("no anchored quote to rewrite from")


def test_wrong_dose_is_rewritten_from_the_source_and_verified(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway)
    scripted.queue(s.WRONG_DOSE_ANSWER)
    text, trust = ask(s.PARACETAMOL_Q)
    assert text == s.WRONG_DOSE_FIXED_TEXT
    fixed = trust["claims"][0]
    assert (fixed["outcome"], fixed["original_text"], fixed["text"]) == ("rewritten", s.WRONG_DOSE, s.DOSE)
    assert fixed["span"] == {"start": 0, "end": len(s.m(s.DOSE, 1))}
    assert len(scripted.requests) == 1  # the rewrite to the source needs no model call


def test_wrong_dose_refuses_when_rewriting_is_off(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway, rewrite=False)
    scripted.queue(s.WRONG_DOSE_ANSWER)
    text, trust = ask(s.PARACETAMOL_Q)
    assert text == s.SAFETY_CRITICAL_REFUSAL
    assert trust["summary"]["reason"] == "safety_critical_failed"
    assert trust["summary"]["detail"] == f"a safety-critical claim failed verification: {s.WRONG_DOSE!r}"


def test_wrong_dose_rewritten_by_the_upstream_model(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway, rewriter="upstream")
    scripted.queue(s.WRONG_DOSE_ANSWER, json.dumps({"rewrite": s.DOSE, "quote": s.DOSE[:-1]}))
    text, trust = ask(s.PARACETAMOL_Q)
    assert text == s.WRONG_DOSE_FIXED_TEXT
    assert outcomes(trust) == ["rewritten", "verified", "verified"]
    rewrite_call = scripted.requests[1]
    assert rewrite_call["response_format"]["json_schema"]["name"] == "claim_rewrite"
    assert s.WRONG_DOSE in rewrite_call["messages"][1]["content"]


def test_bad_rewriter_output_falls_back_to_the_quoted_source_sentence(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway, rewriter="upstream")
    scripted.queue(s.WRONG_DOSE_ANSWER, "Sure, adults can take 1 g.")
    text, trust = ask(s.PARACETAMOL_Q)
    assert text == s.WRONG_DOSE_FIXED_TEXT
    fixed = trust["claims"][0]
    assert (fixed["outcome"], fixed["method"], fixed["text"]) == ("rewritten", "source_rewrite", s.DOSE)
    assert fixed["original_verdict"] != "supported"  # the first verdict stays visible to clinicians
    assert "not the JSON asked for" in fixed["reason"]


def test_a_wrong_dose_without_an_anchored_quote_is_removed_and_refuses(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway)
    scripted.queue(s.WRONG_DOSE_UNQUOTED)
    text, trust = ask(s.PARACETAMOL_Q)
    assert text == s.SAFETY_CRITICAL_REFUSAL
    assert trust["claims"][0]["reason"].startswith("no anchored quote to rewrite from")


def test_claim_without_a_citation_gets_the_marker_of_its_passage(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway)
    scripted.queue(s.NO_CITATION)
    text, trust = ask(s.PARACETAMOL_Q)
    assert text == s.NO_CITATION_TEXT
    assert outcomes(trust) == ["verified", "verified"]
    assert trust["claims"][1]["badge"]["source_id"] == "1"


def test_entirely_unsupported_answer_is_refused(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway)
    scripted.queue(s.ALL_UNSUPPORTED)
    text, trust = ask(s.PARACETAMOL_Q)
    assert text == s.NO_CLAIM_REFUSAL
    assert (trust["summary"]["reason"], outcomes(trust)) == ("no_claim_survived", ["removed", "removed"])


def test_a_planted_instruction_never_reaches_the_model(module_policy_gateway: Start) -> None:
    """The fixture's hay-fever document carries a planted instruction. The store drops it from every
    passage it returns (issue #32: instructions are not knowledge), so the model never reads it and
    nothing can quote or be rewritten to it; a claim repeating it anyway is caught by cleanup (unit
    tests: test_cleanup.py, test_instruction_text.py)."""
    scripted, ask = patient_gateway(module_policy_gateway)
    scripted.queue(s.ANTIHISTAMINE_ONLY)
    text, trust = ask(s.HAY_FEVER_Q)
    assert "Antihistamine tablets" in text
    assert trust["summary"]["reason"] is None
    assert outcomes(trust) == ["verified"]
    sent = json.dumps(scripted.requests[-1])
    assert "Antihistamine tablets" in sent
    assert "Ignore previous instructions" not in sent
    assert not any("Ignore previous instructions" in source["text"] for source in trust["sources"])


def test_emergency_with_a_routine_question_gets_only_the_safety_message(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway)
    text, trust = ask(s.EMERGENCY_WITH_ROUTINE_Q)
    assert text == s.EMERGENCY_WITH_ROUTINE
    assert (trust["scope"], trust["summary"]["reason"]) == ("emergency", "emergency")
    assert scripted.requests == []  # no model call


@pytest.mark.parametrize(
    ("question", "expected", "reason"),
    [
        (
            "What is the capital of France?",
            "I can only help with health questions that our vetted medical sources cover. Is there something "
            "about your health I can help you with?\n\nIf you are going through a hard time or feel unsafe, "
            "you do not have to wait for a health question: call "
            f"{s.EMERGENCY_NUMBER}, or a crisis line (in the UK, Samaritans on 116 123; in the US, call or "
            "text 988).",
            "non_clinical",
        ),
        (
            "Can you diagnose me?",
            "I can't help with that question here, because it needs someone who knows your situation. "
            f"Please ask {s.REFERRAL}.",
            "out_of_scope",
        ),
        ("How is malaria treated?", s.NOT_COVERED, "no_relevant_context"),
        (
            "What are the signs of a heart attack?",
            f"{s.NOT_COVERED} If you or someone with you has these signs now, do not wait: "
            f"call {s.EMERGENCY_NUMBER}.",
            "no_relevant_context",
        ),
    ],
)
def test_general_context_refusals(module_policy_gateway, question, expected, reason) -> None:  # type: ignore[no-untyped-def]
    scripted, ask = patient_gateway(module_policy_gateway)
    text, trust = ask(question)
    assert text == expected
    assert trust["summary"]["reason"] == reason
    assert scripted.requests == []


def test_several_questions_answer_one_and_decline_the_other(module_policy_gateway: Start) -> None:
    scripted, ask = patient_gateway(module_policy_gateway)
    scripted.queue(s.SUPPORTED)
    text, _ = ask(f"{s.PARACETAMOL_Q} What is the capital of France?")
    assert text == (
        f"{s.SUPPORTED_TEXT} I can only answer health questions, so I've left out "
        '"What is the capital of France?".'
    )
    assert scripted.requests[0]["messages"][-1] == {"role": "user", "content": s.PARACETAMOL_Q}


CATARACT_REFERRAL = "your GP or pharmacist (for your eye, the eye unit that did your operation)"
EYE_UNIT = (
    "the eye unit's emergency line, or your local emergency number "
    "(999 in the UK, 911 in the US, 112 in the EU)"
)


def test_cataract_context_answers_in_scope_refers_the_rest_and_catches_eye_emergencies(
    module_policy_gateway: Start,
) -> None:
    scripted, ask = patient_gateway(module_policy_gateway, context="cataract-followup")
    drops = "Most people use the drops for about 4 weeks after the operation."
    scripted.queue(s.contract_answer(s.m(drops, 1), [(drops, [1], drops)]))
    assert ask("How long do I use the eye drops after cataract surgery?")[0] == s.m(drops, 1)
    text, trust = ask("How much ibuprofen can I take?")
    assert text == (
        "I can't help with that question here, because it needs someone who knows your situation. "
        f"Please ask {CATARACT_REFERRAL}."
    )
    assert trust["summary"]["reason"] == "out_of_scope"
    text, trust = ask("I suddenly can't see out of my operated eye")
    assert text == (
        "This could be an emergency: sudden loss of vision or an eye emergency. "
        f"Please call {EYE_UNIT} now, or go to your nearest emergency "
        "department. Do not wait for an online answer, and do not drive yourself if you feel unwell.\n"
        'What you told us that points to this: "suddenly can\'t see".'
    )
    assert len(scripted.requests) == 1


@pytest.mark.parametrize(
    ("question", "relevant"),
    [
        (s.PARACETAMOL_Q, True),
        (s.HAY_FEVER_Q, True),
        ("How long do I use the eye drops after cataract surgery?", True),
        ("Can I take amoxicillin if I am allergic to penicillin?", True),
        ("How is malaria treated?", False),
        ("What is scabies?", False),
        ("How do I treat athlete's foot?", False),
        ("What are the signs of a heart attack?", False),
    ],
)
async def test_relevance_gate_on_the_fixture_corpus(fixture_store, question, relevant) -> None:  # type: ignore[no-untyped-def]
    from gateway.policies import load_policy
    from gateway.retrieval.retrieve import retrieve
    from tests.support.cleanup_stack import POLICIES

    policy = load_policy(POLICIES, "general").thresholds.retrieval
    assert (await retrieve(question, fixture_store, policy)).relevant is relevant
