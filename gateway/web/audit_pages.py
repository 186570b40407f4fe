"""The audit trail pages: ``/audit`` (filtered list), ``/audit/{id}`` (one record), and
``/audit/{id}/record.json`` (the stored record as JSON, for scripts). All need a staff credential.
A stored record that does not match the schema (``gateway.audit.record``) is shown as such, with the
reason and its stored text, on the pages of that request (``record_unreadable``); the list is unaffected.

Filters (query parameters): ``refused``, ``rewritten``, ``removed``, ``emergency`` (``yes`` / ``no``;
empty means either), ``outcome`` (``OUTCOMES``: a ``RequestOutcome``, or ``incomplete`` and
``delivering``), ``from`` and ``to`` (ISO dates, inclusive, UTC), ``offset`` (paging). An unfinished
request (``incomplete``, ``delivering``) says on its page how far its answer got (``views.delivery_note``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import anyio.to_thread
import structlog
from litestar import MediaType, Request, Response, get

from gateway.audit import AuditFilter, AuditStore
from gateway.audit.ledger import access_now
from gateway.audit.record import UNFINISHED, AuditRecord, UnreadableRecord, load_record
from gateway.errors import NotFoundError, PermissionDeniedError
from gateway.trust.policy import TierBadgeTexts, TierPolicy
from gateway.vocabulary import RequestOutcome
from gateway.web.clinician_auth import ADMIN, Principal
from gateway.web.rendering import SECURITY_HEADERS, PageRenderer
from gateway.web.views import RequestView, pipeline_data, request_view

log = structlog.get_logger("gateway.audit")

PAGE_SIZE = 50
MAX_OFFSET = 1_000_000_000
"""Largest paging offset accepted (SQLite integers are 64-bit; a larger one would be a 500)."""
OUTCOMES: tuple[str, ...] = (*(o.value for o in RequestOutcome), *UNFINISHED)
"""The values of the ``outcome`` column a filter may ask for: every request outcome the record stage
writes (``RequestOutcome``) and the two of a request that never finished."""
_YES_NO = {"yes": True, "no": False, "": None}


@dataclass(frozen=True)
class ParsedFilter:
    flt: AuditFilter
    values: dict[str, str]
    errors: tuple[str, ...]


def parse_filter(query: dict[str, str]) -> ParsedFilter:
    """Turn the list page's query string into an AuditFilter; bad values are reported, not applied."""
    errors: list[str] = []
    values = {
        k: query.get(k, "").strip()
        for k in ("refused", "rewritten", "removed", "emergency", "outcome", "from", "to")
    }
    flags: dict[str, bool | None] = {}
    for name in ("refused", "rewritten", "removed", "emergency"):
        if values[name].lower() not in _YES_NO:
            errors.append(f"'{name}' must be yes or no.")
            values[name] = ""
        flags[name] = _YES_NO[values[name].lower()]
    outcome = values["outcome"]
    if outcome and outcome not in OUTCOMES:
        errors.append(f"'outcome' must be one of {', '.join(OUTCOMES)}.")
        values["outcome"] = outcome = ""
    since = _date(values, "from", errors)
    until = _date(values, "to", errors)
    try:
        offset = max(0, int(query.get("offset") or 0))
    except ValueError:
        errors.append("'offset' must be a whole number.")
        offset = 0
    if offset > MAX_OFFSET:
        errors.append(f"'offset' must be at most {MAX_OFFSET}.")
        offset = 0
    flt = AuditFilter(
        outcome=outcome or None,
        refused=flags["refused"],
        rewritten=flags["rewritten"],
        removed=flags["removed"],
        emergency=flags["emergency"],
        since=dt.datetime.combine(since, dt.time.min, dt.UTC) if since else None,
        until=dt.datetime.combine(until, dt.time.max, dt.UTC) if until else None,
        limit=PAGE_SIZE + 1,
        offset=offset,
    )
    return ParsedFilter(flt, values, tuple(errors))


def _date(values: dict[str, str], key: str, errors: list[str]) -> dt.date | None:
    if not values[key]:
        return None
    try:
        return dt.date.fromisoformat(values[key])
    except ValueError:
        errors.append(f"'{key}' must be a date (YYYY-MM-DD).")
        values[key] = ""
        return None


@dataclass(frozen=True)
class AuditRecords:
    """What the clinician and audit pages use (handed through ``gateway.web.parts``): the audit store,
    and the tiers policy, clock and badge texts (read at start-up) a record's view is drawn with."""

    audit: AuditStore
    tiers: TierPolicy
    today: Callable[[], dt.date]
    badges: TierBadgeTexts

    async def log_access(self, staff: Principal, action: str, request_id: str | None) -> None:
        """Record one view (or export) before it is shown: who, which credential, which record, when.
        AuditError when it cannot be recorded, so nothing is shown without its trace (a 503)."""
        entry = access_now(staff.role, staff.key_id, action, request_id)
        await anyio.to_thread.run_sync(self.audit.log_access, entry)

    async def text(self, request_id: str) -> str:
        """The stored text of the request's record (404 when there is none)."""
        text = await anyio.to_thread.run_sync(self.audit.get_text, request_id)
        if text is None:
            raise NotFoundError(f"No request {request_id!r} in the audit trail.", code="request_not_found")
        return text

    async def stored(self, request_id: str) -> AuditRecord | UnreadableRecord:
        """The request's typed record (404 when there is none), or what makes it unreadable (logged)."""
        record = load_record(request_id, await self.text(request_id))
        if isinstance(record, UnreadableRecord):
            log.warning("audit_record_unreadable", request_id=request_id, reason=record.reason)
        return record

    def view(self, record: AuditRecord) -> RequestView:
        """The record as the pages show it, its sources' tiers as of today."""
        return request_view(record, self.tiers, self.today(), self.badges)


@get("/audit", summary="Audit trail: list of requests", include_in_schema=False)
async def audit_list(
    request: Request[Any, Any, Any], records: AuditRecords, pages: PageRenderer, staff: Principal
) -> Response[str]:
    parsed = parse_filter(dict(request.query_params))
    await records.log_access(staff, "list:audit", None)
    rows = await anyio.to_thread.run_sync(records.audit.list, parsed.flt)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    active = {k: v for k, v in parsed.values.items() if v}
    offset = parsed.flt.offset
    return pages.page(
        "audit_list",
        {
            "rows": rows,
            "values": parsed.values,
            "errors": parsed.errors,
            "outcomes": OUTCOMES,
            "staff": staff,
            "section": "audit",
            "offset": offset,
            "newer": urlencode({**active, "offset": max(0, offset - PAGE_SIZE)}) if offset else None,
            "older": urlencode({**active, "offset": offset + PAGE_SIZE}) if more else None,
        },
        status_code=400 if parsed.errors else 200,
    )


def unreadable_page(
    pages: PageRenderer, unreadable: UnreadableRecord, staff: Principal, section: str
) -> Response[str]:
    """The page of a request whose stored record does not decode: the reason and the text as stored."""
    return pages.page("record_unreadable", {"unreadable": unreadable, "staff": staff, "section": section})


@get("/audit/{request_id:str}", summary="Audit trail: one request", include_in_schema=False)
async def audit_detail(
    request_id: str, records: AuditRecords, pages: PageRenderer, staff: Principal
) -> Response[str]:
    record = await records.stored(request_id)
    await records.log_access(staff, "view:audit", request_id)
    if isinstance(record, UnreadableRecord):
        return unreadable_page(pages, record, staff, "audit")
    view = records.view(record)
    return pages.page(
        "audit_detail",
        {"view": view, "pretty": pipeline_data(record), "staff": staff, "section": "audit"},
    )


@get("/audit/{request_id:str}/record.json", summary="Audit trail: one stored record", include_in_schema=False)
async def audit_record_json(request_id: str, records: AuditRecords, staff: Principal) -> Response[str]:
    """The stored text as written, decrypted (also for a record the pages cannot read)."""
    text = await records.text(request_id)
    await records.log_access(staff, "view:record.json", request_id)
    return Response(
        text, media_type=MediaType.JSON, headers={"Cache-Control": SECURITY_HEADERS["Cache-Control"]}
    )


ACCESS_PAGE_SIZE = 100


@get("/audit/access", summary="Audit trail: who viewed which record", include_in_schema=False)
async def audit_access(
    request: Request[Any, Any, Any], records: AuditRecords, pages: PageRenderer, staff: Principal
) -> Response[str]:
    """The access log, for administrators only (``GATEWAY_ADMIN_KEYS``)."""
    if staff.role != ADMIN:
        raise PermissionDeniedError(
            "The access log is for administrators (GATEWAY_ADMIN_KEYS).", code="admin_only"
        )
    try:
        offset = min(MAX_OFFSET, max(0, int(request.query_params.get("offset") or 0)))
    except ValueError:
        offset = 0
    entries = await anyio.to_thread.run_sync(records.audit.access_log, ACCESS_PAGE_SIZE + 1, offset)
    more = len(entries) > ACCESS_PAGE_SIZE
    return pages.page(
        "audit_access",
        {
            "entries": entries[:ACCESS_PAGE_SIZE],
            "staff": staff,
            "section": "audit",
            "older": urlencode({"offset": offset + ACCESS_PAGE_SIZE}) if more else None,
        },
    )
