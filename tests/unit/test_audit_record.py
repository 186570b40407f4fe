"""The audit record's schema (``gateway.audit.record``): records stored before it still decode and render."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import msgspec
import numpy as np
import pytest

from gateway.audit.export import fhir_resources, rebuild
from gateway.audit.record import (
    UNFINISHED,
    AuditRecord,
    PassageRecord,
    TrustRecord,
    UnreadableRecord,
    encode_record,
    load_record,
)
from gateway.audit.sealed import clear_part
from gateway.domain import Passage, Span, TrustReport
from gateway.resources import bundled
from gateway.trust.badge import load_tier_badges
from gateway.trust.policy import TierPolicy
from gateway.validation import load_file
from gateway.vocabulary import RequestOutcome, VerdictCheck, VerifierFailure, VerifierMethod
from gateway.web.audit_pages import parse_filter
from gateway.web.views import pipeline_data, request_view

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "audit"
OLD_RECORDS = sorted(p.name for p in FIXTURES.glob("*.json"))
TODAY = dt.date(2026, 11, 23)


def old(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", OLD_RECORDS)
def test_a_record_written_before_the_schema_decodes_and_encodes_to_the_same_json(name: str) -> None:
    """The fixtures were written by the gateway before the schema existed (``json.dumps`` of dicts)."""
    record = load_record("req", old(name))
    assert isinstance(record, AuditRecord), record
    stored = json.loads(old(name))
    again = json.loads(encode_record(record))
    if "trust" in stored and "source_tiers" not in stored["trust"]:  # an addition: the tiers resolved
        # at badge time (none recorded then)
        assert again["trust"].pop("source_tiers") == []
    if "trust" in stored and "operating_point" not in stored["trust"]:  # an addition: the verifier's
        # operating point (none recorded then)
        assert again["trust"].pop("operating_point") == ""
    assert again == stored
    assert list(again) == list(stored)  # same fields, same order


def test_the_provisional_record_keeps_its_own_fields_only() -> None:
    record = load_record("req", old("incomplete.json"))
    assert isinstance(record, AuditRecord)
    assert not record.complete
    assert (record.status, record.stream, record.user) == ("incomplete", True, "patient-7")
    assert set(json.loads(encode_record(record))) == set(json.loads(old("incomplete.json")))


@pytest.mark.slow  # loads MiniLM, Chroma or the services
@pytest.mark.parametrize("name", OLD_RECORDS)
def test_an_old_record_renders_with_tiers_resolved_from_its_stored_passages(name: str, make_services) -> None:  # type: ignore[no-untyped-def]
    tiers = make_services().policy.tiers
    record = load_record("req", old(name))
    assert isinstance(record, AuditRecord)
    view = request_view(record, tiers, TODAY, load_tier_badges())
    stored = json.loads(old(name))
    assert view.request_id == stored["request_id"]
    assert view.question == stored["question"]
    assert len(view.claims) == len(stored.get("trust", {}).get("claims", []))
    assert set(pipeline_data(record)) == {
        "triage",
        "draft",
        "statements",
        "verdicts",
        "cleanup",
        "timings",
        "error",
    }
    if name == "rewritten_removed.json":
        assert [c.outcome for c in view.claims] == ["verified", "verified", "removed"]
        assert view.sources[0].badge.tier == "clinical_reference"  # resolved now from the stored passage
        assert view.claims[0].badge.tier == "clinical_reference"  # the stored badge
        assert view.claims[0].marked is not None


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("not json at all", "JSON"),
        ('{"request_id": "r", "created_at": "c", "question": 7}', "$.question"),
        (
            '{"request_id": "r", "created_at": "c", "question": "q", "messages": [], "model": "m", '
            '"user": null, "metadata": null, "trust": {"claims": "none"}}',
            "$.trust",
        ),
    ],
)
def test_a_record_that_does_not_match_is_unreadable_with_its_reason(text: str, where: str) -> None:
    record = load_record("req_bad", text)
    assert isinstance(record, UnreadableRecord)
    assert record.request_id == "req_bad"
    assert where in record.reason
    assert record.text == text


def test_unpaired_surrogates_are_replaced_so_the_record_can_be_stored() -> None:
    record = AuditRecord(
        request_id="r", created_at="c", question="q\ud800", messages=(), model="m", user=None, metadata=None
    )
    assert json.loads(encode_record(record))["question"] == "q\ufffd"


def test_an_unfinished_record_says_how_far_its_answer_got() -> None:
    """``incomplete``: nothing sent; ``delivering``: the text written ahead (or the whole record), its
    delivery not confirmed; ``client_disconnected``: what was handed over (docs/operations.md)."""
    import msgspec

    from gateway.web.views import delivery_note

    provisional = load_record("req", old("incomplete.json"))
    assert isinstance(provisional, AuditRecord)
    assert "before anything was sent" in (delivery_note(provisional) or "")
    ahead = msgspec.structs.replace(provisional, status="delivering", sent="Take 500 mg.")
    assert not ahead.complete
    assert (delivery_note(ahead) or "").startswith("Delivery not confirmed: the gateway stopped")
    finished = load_record("req", old("rewritten_removed.json"))
    assert isinstance(finished, AuditRecord)
    assert delivery_note(finished) is None
    whole = msgspec.structs.replace(finished, status="delivering")
    assert "answer was complete and recorded" in (delivery_note(whole) or "")
    gone = msgspec.structs.replace(finished, interruption="client_disconnected")
    assert (delivery_note(gone) or "").startswith("The client went away")


def test_values_no_vocabulary_names_still_decode_as_written() -> None:
    """``vocabulary_values.json`` was written before the vocabularies became enums: a verdict's method,
    check and failure were any string then (a test double's verifier, a failure kind never produced).
    Such a record still decodes, keeps each value as written and encodes back to the same JSON."""
    record = load_record("req", old("vocabulary_values.json"))
    assert isinstance(record, AuditRecord), record
    assert isinstance(record.verdicts, tuple)
    judged, entailed, unlisted = record.verdicts
    assert (judged.method, judged.check, judged.failure) == ("judge", "judge_error", "timeout")
    assert (entailed.method, entailed.check, entailed.failure) == ("nli", "nli_error", "invalid_output")
    assert (unlisted.method, unlisted.check, unlisted.failure) == ("substring", "substring", "quota_exceeded")
    assert json.loads(encode_record(record))["verdicts"][2]["failure"] == "quota_exceeded"
    assert judged.check is VerdictCheck.JUDGE_ERROR
    assert entailed.check is VerdictCheck.NLI_ERROR
    assert isinstance(unlisted.check, VerdictCheck)
    assert not unlisted.check.listed  # kept as written: an unlisted value (gateway.vocabulary)
    assert judged.method is VerifierMethod.JUDGE
    assert not unlisted.method.listed
    assert judged.failure is VerifierFailure.TIMEOUT
    assert unlisted.failure is not None
    assert not unlisted.failure.listed


@pytest.mark.parametrize(
    ("name", "outcome"),
    [
        ("emergency.json", "emergency"),
        ("rewritten_removed.json", "rewritten"),
        ("vocabulary_values.json", "error"),
    ],
)
def test_the_export_names_an_old_records_outcome_as_before(name: str, outcome: str) -> None:
    record = load_record("req", old(name))
    assert isinstance(record, AuditRecord)
    assert fhir_resources(record)[0]["outcomeDesc"] == outcome


def test_the_export_names_an_answer_stopped_early_as_the_audit_row_does() -> None:
    """An answer stopped after verified sentences were sent is ``ended_early`` in the audit row and its
    metric (``recording.request_outcome``); the export said "rewritten" with success."""
    record = load_record("req", old("rewritten_removed.json"))
    assert isinstance(record, AuditRecord)
    assert isinstance(record.trust, TrustRecord)
    summary = dataclasses.replace(record.trust.summary, ended_early=True)
    stopped = msgspec.structs.replace(record, trust=msgspec.structs.replace(record.trust, summary=summary))
    event = fhir_resources(stopped)[0]
    assert (event["outcomeDesc"], event["outcome"]) == (RequestOutcome.ENDED_EARLY, "4")
    assert fhir_resources(record)[0]["outcome"] == "0"


def test_a_stored_passage_keeps_every_field_of_the_retrieved_one_but_its_vectors() -> None:
    # PassageRecord restates Passage's fields by hand: a field added to one and not the other would be
    # lost from the audit record (or fail to build) without this check
    passage_fields = [f.name for f in dataclasses.fields(Passage)]
    assert list(PassageRecord.__struct_fields__) == passage_fields
    passage = Passage(
        id="p1",
        document_id="d1",
        text="Rest helps. Fluids help.",
        title="Colds",
        url="https://www.nhs.uk/c/",
        org="NHS",
        tier="clinical_reference",
        reviewed_on=dt.date(2024, 1, 2),
        score=0.75,
        doc_type="leaflet",
        sentence_spans=(Span(0, 11), Span(12, 24)),
        sentence_vectors=np.ones((2, 3), dtype=np.float32),
    )
    stored = msgspec.structs.asdict(PassageRecord.of(passage))
    kept = {name: getattr(passage, name) for name in passage_fields if name != "sentence_vectors"}
    assert stored == {**kept, "sentence_vectors": None}


POINT = (
    "cascade[local] support: check_support_probability 0.84 (check-only), quote binding (chat); "
    "contradiction: number,negation at similarity >= 0.8"
)


def test_a_record_written_before_the_operating_point_decodes_without_one() -> None:
    """Records written before the trust report named its verifier's operating point decode, with ``""``,
    and every reader says it was not recorded (the pages, the export) instead of failing."""
    stored = json.loads(old("rewritten_removed.json"))
    assert "operating_point" not in stored["trust"]  # an old-shaped record
    record = load_record("req", old("rewritten_removed.json"))
    assert isinstance(record, AuditRecord), record
    assert isinstance(record.trust, TrustRecord)
    assert record.trust.operating_point == record.operating_point == ""
    view = request_view(
        record, load_file(bundled("policies") / "tiers.yaml", TierPolicy), TODAY, load_tier_badges()
    )
    assert view.operating_point == ""
    assert rebuild(record)["operating_point"] is None
    details = {d["type"] for d in fhir_resources(record)[0]["entity"][0]["detail"]}
    assert "operating_point" not in details
    assert "verifier" in details  # the name was recorded before: it is still exported


def test_a_new_record_keeps_the_operating_point_of_its_trust_report() -> None:
    old_record = load_record("req", old("rewritten_removed.json"))
    assert isinstance(old_record, AuditRecord)
    assert isinstance(old_record.trust, TrustRecord)
    trust = old_record.trust
    report = TrustReport(
        claims=trust.claims,
        summary=trust.summary,
        sources=tuple(p.passage() for p in trust.sources),
        operating_point=POINT,
    )
    record = msgspec.structs.replace(old_record, trust=TrustRecord.of(report))
    written = json.loads(encode_record(record))
    assert written["trust"]["operating_point"] == POINT
    assert clear_part(written)["operating_point"] == POINT  # no patient text: readable without the key
    assert "operating_point" not in clear_part(json.loads(old("rewritten_removed.json")))
    again = load_record("req", encode_record(record))
    assert isinstance(again, AuditRecord)
    assert isinstance(again.trust, TrustRecord)
    assert again.trust.operating_point == again.operating_point == POINT
    assert rebuild(again)["operating_point"] == POINT
    details = {d["type"]: d["valueString"] for d in fhir_resources(again)[0]["entity"][0]["detail"]}
    assert details["operating_point"] == POINT


def test_the_stored_trust_record_keeps_every_field_of_the_trust_report() -> None:
    # TrustRecord restates TrustReport's fields by hand (its passages without vectors): a field added to
    # the report and not to the record would not be stored
    assert list(TrustRecord.__struct_fields__) == [f.name for f in dataclasses.fields(TrustReport)]


@pytest.mark.parametrize("outcome", [*(o.value for o in RequestOutcome), *UNFINISHED])
def test_the_audit_list_filters_by_every_outcome_a_record_can_hold(outcome: str) -> None:
    # the record stage writes request_outcome(...).value into the outcome column: each one, and the two of
    # an unfinished request, is a filter the list accepts ("ended_early" was refused as unknown)
    parsed = parse_filter({"outcome": outcome})
    assert parsed.errors == ()
    assert parsed.flt.outcome == outcome


def test_the_audit_list_refuses_an_unknown_outcome_naming_the_known_ones() -> None:
    parsed = parse_filter({"outcome": "lost"})
    assert parsed.flt.outcome is None
    assert parsed.errors == (f"'outcome' must be one of {', '.join([*RequestOutcome, *UNFINISHED])}.",)
