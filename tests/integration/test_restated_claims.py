"""Restatement through chat (#35 item 5): the openai SDK -> gateway (the product's verifier) -> scripted
upstream. A claim that restates its quote in other listed words reaches the patient as the model wrote
it, badged as verified with the check that kept it (a claim dropping its source's hedge is refused by
the same check: tests/unit/test_restatement.py)."""

from __future__ import annotations

from typing import Any

from gateway.testing import contract_answer
from gateway.web.disclosure import Disclosure
from tests.support.stack import openai_client, running_gateway

QUOTE = "Taking too much paracetamol can cause serious liver damage"
RESTATED = "Taking too much paracetamol can lead to serious liver damage, sometimes days later."


def ask(url: str) -> tuple[str, dict[str, Any]]:
    completion = openai_client(url).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Is too much paracetamol dangerous?"}]
    )
    content = completion.choices[0].message.content
    assert content is not None
    return content.removesuffix(Disclosure().suffix), completion.model_extra["trust"]


def test_a_restated_claim_is_delivered_as_written_with_its_badge(upstream, make_services) -> None:  # type: ignore[no-untyped-def]
    scripted, base_url = upstream
    scripted.reset()
    scripted.queue(
        contract_answer(
            f"{RESTATED[:-1]} [1].",
            [(RESTATED, [1], QUOTE)],
        )
    )
    services = make_services(upstream_base_url=base_url, upstream_retries=0, upstream_timeout=5.0)
    with running_gateway(services) as url:
        text, trust = ask(url)
    [restated] = trust["claims"]
    # the model's own sentence, kept: supported by the restatement check, its badge naming the source;
    # "too much paracetamol" asks about an overdose, so the answer ends with the safety note (#31 item 2)
    answer, _, note = text.partition(" If you")
    assert answer == f"{RESTATED[:-1]} [1]."
    assert "call your local emergency number" in note
    assert (restated["outcome"], restated["verdict"], restated["check"]) == (
        "verified",
        "supported",
        "restatement",
    )
    assert restated["original_text"] == restated["text"] == RESTATED
    badge = restated["badges"][0]
    assert trust["sources"][int(badge["source_id"]) - 1]["document_id"] == "paracetamol"
    assert badge["evidence_quote"] is not None
    assert trust["summary"]["refused"] is False
