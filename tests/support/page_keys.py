"""The keys, scripted answer and request of the page and audit-page tests (``test_pages_and_audit``,
``test_audit_record_pages``)."""

from __future__ import annotations

import httpx

from gateway.testing import contract_answer

CLINICIAN_KEY = "clin-key-for-tests-1"
CLIENT_KEY = "client-key-for-tests"
DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."
MAXIMUM = "Do not take more than 4 g of paracetamol in 24 hours."
FABRICATED = "Paracetamol cures migraines within ten minutes."
STAFF = {"authorization": f"Bearer {CLINICIAN_KEY}"}
PAGE_KEY = "page-key-123"
CLIENT = {"authorization": f"Bearer {PAGE_KEY}"}


def answer_with_removed_claim() -> str:
    return contract_answer(
        f"{DOSE[:-1]} [1]. {MAXIMUM[:-1]} [1]. {FABRICATED[:-1]} [1].",
        [
            (DOSE, [1], DOSE),
            (MAXIMUM, [1], MAXIMUM),
            (FABRICATED, [1], "paracetamol cures migraines within ten minutes"),
        ],
    )


def ask(url: str, question: str, **extra: object) -> dict:  # type: ignore[type-arg]
    response = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": question}], **extra},
        headers=CLIENT,
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]
