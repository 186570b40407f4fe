"""The scripted answer most chat-endpoint tests start from: two paracetamol sentences, each quoting the
fixture leaflet (passage [1] for "How much paracetamol can an adult take?")."""

from __future__ import annotations

from gateway.testing import contract_answer

PARACETAMOL_DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."
PARACETAMOL_MAX = "Do not take more than 4 g of paracetamol in 24 hours."


def supported_answer() -> str:
    return contract_answer(
        f"{PARACETAMOL_DOSE[:-1]} [1]. {PARACETAMOL_MAX[:-1]} [1].",
        [(PARACETAMOL_DOSE, [1], PARACETAMOL_DOSE), (PARACETAMOL_MAX, [1], PARACETAMOL_MAX)],
    )
