"""What both rewriters share: the sources a claim may be rewritten from, and the re-verification."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gateway.domain import ClaimOutcome, ClaimResult, ClaimToCheck, Passage, Statement
from gateway.errors import VerifierError
from gateway.verification.verifier import Verifier
from gateway.vocabulary import VerifierMethod

Sources = tuple[tuple[int, Passage], ...]


def cited_sources(statement: Statement, passages: Sequence[Passage]) -> Sources:
    """The passages the claim cites (numbered from 1), or every passage when it cites none."""
    numbered = tuple(enumerate(passages, start=1))
    cited = tuple((n, p) for n, p in numbered if n in statement.source_numbers)
    return cited or numbered


def removed(failed: ClaimResult, reason: str) -> ClaimResult:
    return replace(failed, outcome=ClaimOutcome.REMOVED, final_text=None, reason=reason)


async def verified_rewrite(
    failed: ClaimResult,
    text: str,
    quote: str | None,
    sources: Sources,
    verifier: Verifier,
    method: str,
    verdict_method: VerifierMethod | None = None,
) -> ClaimResult:
    """The rewrite as ``rewritten`` when ``verifier`` finds it supported by ``sources``, else removed.

    ``verdict_method`` (e.g. ``source_rewrite``) replaces the method of the rewrite's verdict, so the
    clinician view says how the shown text came to be."""
    check = ClaimToCheck(text=text, quote=quote, sources=sources)
    try:
        verdicts = await verifier.verify([check])
    except VerifierError as err:
        return removed(failed, f"{method} rewrite could not be verified: {err}")
    if len(verdicts) != 1:
        return removed(failed, f"{method} rewrite could not be verified: {len(verdicts)} verdicts for 1")
    verdict = verdicts[0]
    if not verdict.supported:
        detail = verdict.reason or verdict.check
        return removed(failed, f"{method} rewrite failed verification ({detail}); original: {failed.reason}")
    if verdict_method is not None:
        verdict = replace(verdict, method=verdict_method)
    return replace(
        failed,
        outcome=ClaimOutcome.REWRITTEN,
        final_text=text,
        rewrite_verdict=verdict,
        reason=f"rewritten by the {method} rewriter; original: {failed.reason}",
    )
