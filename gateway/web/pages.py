"""The pages people use: the patient chat at ``/`` and the clinician view at ``/clinician``.

The patient page is static HTML plus a small script that calls ``POST /v1/chat/completions`` with
``stream: true`` and renders the SSE stream as it arrives. The clinician pages are rendered on the
server from the audit record and need a staff credential (see ``gateway.web.clinician_auth``).
``page_handlers(settings, access)`` returns everything to register in the app, each router with its
access rule (``gateway.web.auth.Access``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from litestar import Response, Router, get
from litestar.di import Provide
from litestar.static_files import create_static_files_router

from gateway.audit import AuditFilter
from gateway.audit.record import UnreadableRecord
from gateway.resources import bundled
from gateway.settings import Secret, Settings
from gateway.triage.contexts import OperatingContext
from gateway.web.audit_pages import (
    AuditRecords,
    audit_access,
    audit_detail,
    audit_list,
    audit_record_json,
    unreadable_page,
)
from gateway.web.auth import Access, provide_staff
from gateway.web.clinician_auth import Principal, login_page, login_submit, logout
from gateway.web.disclosure import Disclosure
from gateway.web.rendering import PageRenderer

RECENT_ANSWERS = 50


@dataclass(frozen=True)
class PatientPage:
    """What the patient page shows (handed through ``gateway.web.parts``): the model its script asks
    for, the key it sends (``GATEWAY_PAGE_API_KEY``), the operating context's emergency number and
    referral, and the tiers' short badge texts its script shows (read at start-up)."""

    model: str
    page_api_key: Secret
    context: OperatingContext
    tier_short: Mapping[str, str]


@get("/", summary="Patient chat page", include_in_schema=False)
async def patient_page(patient: PatientPage, pages: PageRenderer, disclosure: Disclosure) -> Response[str]:
    context = patient.context
    return pages.page(
        "patient",
        {
            "model": patient.model,
            "page_api_key": patient.page_api_key.reveal(),
            "emergency_number": context.emergency_number,
            "referral": context.referral,
            "tier_short": patient.tier_short,
            "disclosure": disclosure,
        },
    )


@get("/clinician", summary="Clinician view: recent answers", include_in_schema=False)
async def clinician_index(records: AuditRecords, pages: PageRenderer, staff: Principal) -> Response[str]:
    rows = await anyio.to_thread.run_sync(records.audit.list, AuditFilter(limit=RECENT_ANSWERS))
    await records.log_access(staff, "list:clinician", None)
    return pages.page("clinician_index", {"rows": rows, "staff": staff, "section": "clinician"})


@get("/clinician/requests/{request_id:str}", summary="Clinician view of one answer", include_in_schema=False)
async def clinician_request(
    request_id: str, records: AuditRecords, pages: PageRenderer, staff: Principal
) -> Response[str]:
    record = await records.stored(request_id)
    await records.log_access(staff, "view:clinician", request_id)
    if isinstance(record, UnreadableRecord):
        return unreadable_page(pages, record, staff, "clinician")
    view = records.view(record)
    return pages.page("clinician_request", {"view": view, "staff": staff, "section": "clinician"})


def page_handlers(settings: Settings, access: Access) -> list[Any]:
    """The routers to add to the app: public pages, staff pages (``access.staff``) and ``/static``."""
    renderer = PageRenderer(settings.templates_dir or bundled("templates"))

    def provide_pages() -> PageRenderer:
        return renderer

    pages_dependency = {"pages": Provide(provide_pages, sync_to_thread=False)}
    public = Router(
        path="/",
        route_handlers=[patient_page, login_page, login_submit, logout],
        dependencies=pages_dependency,
        guards=[access.public],
    )
    staff = Router(
        path="/",
        route_handlers=[
            clinician_index,
            clinician_request,
            audit_list,
            audit_access,
            audit_detail,
            audit_record_json,
        ],
        dependencies={**pages_dependency, "staff": Provide(provide_staff)},
        guards=[access.staff],
    )
    static = create_static_files_router(
        path="/static",
        directories=[renderer.static_dir],
        include_in_schema=False,
        name="static",
        guards=[access.public],
    )
    return [public, staff, static]
