"""The typed audit record through the pages: one tier per source, and an unreadable row shown as such."""

from __future__ import annotations

import re

import httpx

from gateway.audit import AuditFilter
from gateway.settings import Secret
from tests.support.page_keys import (
    CLINICIAN_KEY,
    PAGE_KEY,
    STAFF,
    answer_with_removed_claim,
    ask,
)

GATEWAY_SETTINGS = {
    "upstream_timeout": 5.0,
    "clinician_keys": (Secret(CLINICIAN_KEY),),
    "page_api_key": Secret(PAGE_KEY),
}


def test_the_api_the_clinician_view_and_the_audit_record_show_the_same_tier(gateway) -> None:  # type: ignore[no-untyped-def]
    scripted, url, services = gateway
    scripted.queue(answer_with_removed_claim())
    body = ask(url, "How much paracetamol can an adult take?")
    trust = body["trust"]
    request_id = trust["request_id"]
    record = services.audit.get(request_id)
    recorded = record["trust"]["source_tiers"]
    assert len(recorded) == len(trust["sources"]) == len(record["trust"]["sources"]) > 0
    for source, tier in zip(trust["sources"], recorded, strict=True):
        assert (source["tier"], source["tier_label"], source["trust_score"]) == (
            tier["tier"],
            tier["tier_label"],
            tier["trust_score"],
        )
    claim = trust["claims"][0]
    first_source = recorded[int(claim["badge"]["source_id"]) - 1]
    assert claim["badge"]["tier"] == first_source["tier"] == record["trust"]["claims"][0]["badges"][0]["tier"]
    page = httpx.get(f"{url}/clinician/requests/{request_id}", headers=STAFF).text
    assert f'class="claim outcome-verified tier-{first_source["tier"]}" href="#claim-1"' in page
    audit = httpx.get(f"{url}/audit/{request_id}", headers=STAFF).text
    shown = re.findall(r'<span class="tier tier-([a-z_]+)">', audit)
    assert shown == [t["tier"] for t in recorded]


def test_a_row_whose_record_does_not_match_is_shown_as_unreadable(gateway) -> None:  # type: ignore[no-untyped-def]
    _, url, services = gateway
    ask(url, "How much paracetamol can an adult take?")
    (row,) = services.audit.list(AuditFilter())
    columns = {name: getattr(row, name) for name in ("id", "created_at", "outcome", "scope", "reason")}
    counts = {name: getattr(row, name) for name in ("claims", "rewritten", "removed", "question", "answer")}
    corrupt = b'{"request_id": "x", "trust": {"claims": 3}}'
    services.audit.write_sync({**columns, **counts, "refused": int(row.refused)}, corrupt)
    for path in (f"/audit/{row.id}", f"/clinician/requests/{row.id}"):
        page = httpx.get(f"{url}{path}", headers=STAFF)
        assert page.status_code == 200, path
        assert "does not match the audit record schema" in page.text
        assert "at `$.trust.claims`" in page.text  # msgspec's reason, naming the field
        assert "&#34;trust&#34;" in page.text or "&quot;trust&quot;" in page.text  # the stored text, escaped
    listing = httpx.get(f"{url}/audit", headers=STAFF)
    assert listing.status_code == 200
    assert row.id in listing.text  # the list is unaffected
    exported = httpx.get(f"{url}/audit/{row.id}/record.json", headers=STAFF)
    assert exported.status_code == 200
    assert exported.content == corrupt  # exported exactly as stored
