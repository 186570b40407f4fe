"""``trust-gateway audit export``: the records created in ``[since, until)``, oldest first, decrypted.

- ``jsonl``: one line per record: ``{"record": <the stored record>, "rebuild": {...}}`` where
  ``rebuild`` gathers what is needed to rebuild the answer: the gateway version and the policy files'
  hash (``provenance``, recorded with the answer; ``null`` in records written before it existed), the
  model, upstream, verifier, its operating point (``trust.operating_point``; ``null`` in records
  written before it) and operating context, each passage's id, document id and version, and
  each claim's verdict, score, method and outcome.
- ``fhir``: FHIR NDJSON, two resources per record, each validated by ``fhir.resources`` (the R4B
  models; ``AuditEvent`` and ``Provenance`` are the same in R4 and R4B): an ``AuditEvent`` (the
  request: when, outcome, the gateway and model as agents, the rebuild details as entity details) and
  a ``Provenance`` (the answer's target, the passages it was built from as source entities with their
  versions).

A record that does not decode (``UnreadableRecord``) is exported as its stored text with the reason.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from typing import Any, TextIO

from msgspec import UNSET

from gateway.audit.provenance import passage_version
from gateway.audit.record import AuditRecord, UnreadableRecord, builtins, load_record
from gateway.audit.store import AuditStore
from gateway.domain import RefusalReason
from gateway.settings import Settings
from gateway.vocabulary import RequestOutcome

GATEWAY_SYSTEM = "urn:trust-gateway"
"""Identifier system of the gateway's request ids and passage ids in FHIR resources."""
_FHIR_ID = re.compile(r"[^A-Za-z0-9\-.]")
_OUTCOME_CODE: dict[str, str] = {
    RequestOutcome.ANSWERED: "0",
    RequestOutcome.REWRITTEN: "0",
    RequestOutcome.REFUSED: "4",
    RequestOutcome.ENDED_EARLY: "4",
    RequestOutcome.EMERGENCY: "0",
}
"""FHIR AuditEvent.outcome: 0 success, 4 minor failure (refused, or an answer stopped after verified
sentences were sent), 8 serious failure (everything else)."""


def rebuild(record: AuditRecord) -> dict[str, Any]:
    """What is needed to rebuild the record's answer."""
    provenance = None if record.provenance is UNSET else builtins(record.provenance)
    passages = record.passages if record.passages is not UNSET else ()
    verdicts = record.verdicts if record.verdicts is not UNSET else ()
    cleanup = record.cleanup if record.cleanup is not UNSET else ()
    outcomes = [c.outcome.value for c in cleanup]
    return {
        "request_id": record.request_id,
        "created_at": record.created_at,
        "gateway_version": provenance["gateway_version"] if provenance else None,
        "policy_hash": provenance["policy_hash"] if provenance else None,
        "model": record.model,
        "upstream": _text(record.upstream),
        "verifier": _text(record.verifier),
        "operating_point": record.operating_point or None,  # null when it names none
        "context": _text(record.context),
        "passages": [
            {"id": p.id, "document_id": p.document_id, "version": passage_version(p.text), "title": p.title}
            for p in passages
        ],
        "claims": [
            {
                "verdict": v.label.value,
                "score": v.score,
                "method": v.method,
                "check": v.check,
                "outcome": outcomes[i] if i < len(outcomes) else None,
                "evidence_passage": v.evidence.passage_id if v.evidence else None,
            }
            for i, v in enumerate(verdicts)
        ],
    }


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _records(
    store: AuditStore, since: dt.datetime, until: dt.datetime
) -> Iterator[AuditRecord | UnreadableRecord]:
    for request_id, text in store.records_between(since, until):
        yield load_record(request_id, text)


def write_export(
    store: AuditStore, settings: Settings, since: dt.datetime, until: dt.datetime, fmt: str, out: TextIO
) -> int:
    del settings
    count = 0
    for record in _records(store, since, until):
        count += 1
        if isinstance(record, UnreadableRecord):
            line = {"request_id": record.request_id, "unreadable": record.reason, "stored": record.text}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            continue
        if fmt == "jsonl":
            out.write(
                json.dumps({"record": builtins(record), "rebuild": rebuild(record)}, ensure_ascii=False)
                + "\n"
            )
        else:
            for resource in fhir_resources(record):
                out.write(json.dumps(resource, ensure_ascii=False) + "\n")
    return count


def _fhir_id(request_id: str, suffix: str) -> str:
    return (_FHIR_ID.sub("-", request_id) + suffix)[:64]


def _instant(moment: str) -> str:
    value = dt.datetime.fromisoformat(moment)
    return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).isoformat()


def fhir_resources(record: AuditRecord) -> list[dict[str, Any]]:
    """An AuditEvent and a Provenance for one record, validated by ``fhir.resources`` (R4B models)."""
    from fhir.resources.R4B.auditevent import AuditEvent
    from fhir.resources.R4B.provenance import Provenance

    details = rebuild(record)
    # an unfinished record's status (incomplete, delivering), else its outcome's plain text
    outcome = str(record.status) if not record.complete else str(_outcome_label(record))
    gateway = {"display": f"clinical trust gateway {details['gateway_version'] or ''}".strip()}
    entity_details = [
        {"type": key, "valueString": str(details[key])}
        for key in (
            "gateway_version",
            "policy_hash",
            "model",
            "upstream",
            "verifier",
            "operating_point",
            "context",
        )
        if details[key]
    ]
    entity_details += [
        {
            "type": f"claim[{number}]",
            "valueString": f"verdict={c['verdict']}; score={c['score']:.3f}; method={c['method']}; "
            f"outcome={c['outcome']}; evidence={c['evidence_passage']}",
        }
        for number, c in enumerate(details["claims"], start=1)
    ]
    request = {"identifier": {"system": GATEWAY_SYSTEM + ":request", "value": record.request_id}}
    event = AuditEvent.model_validate(
        {
            "resourceType": "AuditEvent",
            "id": _fhir_id(record.request_id, ""),
            "type": {
                "system": "http://terminology.hl7.org/CodeSystem/audit-event-type",
                "code": "rest",
                "display": "RESTful Operation",
            },
            "action": "E",
            "recorded": _instant(record.created_at),
            "outcome": _OUTCOME_CODE.get(outcome, "8"),
            "outcomeDesc": outcome,
            "agent": [
                {"who": gateway, "requestor": False},
                {"who": {"display": f"model {record.model}"}, "requestor": False},
            ],
            "source": {"observer": gateway},
            "entity": [{"what": request, "detail": entity_details}],
        }
    )
    provenance = Provenance.model_validate(
        {
            "resourceType": "Provenance",
            "id": _fhir_id(record.request_id, "-prov"),
            "target": [request],
            "recorded": _instant(record.created_at),
            "agent": [{"who": gateway}, {"who": {"display": f"model {record.model}"}}],
            "entity": [
                {
                    "role": "source",
                    "what": {
                        "identifier": {
                            "system": GATEWAY_SYSTEM + ":passage",
                            "value": f"{p['id']}@{p['version']}",
                        },
                        "display": p["title"],
                    },
                }
                for p in details["passages"]
            ]
            or None,
        }
    )
    return [
        json.loads(event.model_dump_json(exclude_none=True)),
        json.loads(provenance.model_dump_json(exclude_none=True)),
    ]


def _outcome_label(record: AuditRecord) -> str:
    if record.interruption not in (UNSET, None):
        return str(record.interruption)
    if record.error not in (UNSET, None):
        return RequestOutcome.ERROR
    trust = record.trust
    if trust is UNSET:
        return RequestOutcome.ERROR
    summary = trust.summary
    if summary.reason is RefusalReason.EMERGENCY:
        return RequestOutcome.EMERGENCY
    if summary.ended_early:
        return RequestOutcome.ENDED_EARLY
    if summary.refused:
        return RequestOutcome.REFUSED
    return RequestOutcome.REWRITTEN if summary.rewritten or summary.removed else RequestOutcome.ANSWERED
