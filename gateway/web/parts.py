"""What each group of handlers is handed, built once from the Services when they are ready.

A handler names the part it uses (``chat_parts: ChatParts``, ``verification: Verification``, ...) and
Litestar injects it (``Provide``, ``app.py``); no handler receives the whole ``Services``. Each part's
type lives beside the handlers that use it. A test that wants another component builds other
``Services`` with it (``tests.support.components``) and hands them to ``create_app``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.metrics import GatewayMetrics
from gateway.services import Services
from gateway.trust.policy import TierBadgeTexts
from gateway.web.audit_pages import AuditRecords
from gateway.web.auth_state import FailedAuthThrottle
from gateway.web.chat import ChatParts
from gateway.web.chat_schema import RequestLimits
from gateway.web.clinician_auth import StaffAuth, StaffLogin
from gateway.web.ops import Readiness
from gateway.web.pages import PatientPage
from gateway.web.retrieve_api import Search
from gateway.web.serializers import TrustView
from gateway.web.verify_api import Verification


@dataclass(frozen=True)
class WebParts:
    """The parts of the running Services the handlers use, one per group of handlers."""

    chat: ChatParts
    verification: Verification
    search: Search
    readiness: Readiness
    records: AuditRecords
    patient: PatientPage
    login: StaffLogin
    metrics: GatewayMetrics

    @classmethod
    def of(
        cls, services: Services, staff: StaffAuth, throttle: FailedAuthThrottle, badges: TierBadgeTexts
    ) -> WebParts:
        """``staff``, ``throttle`` and ``badges`` (the tiers' badge texts) are the app's (built, or read,
        at start-up before the Services)."""
        settings, policy, metrics = services.settings, services.policy, services.metrics
        trust = TrustView(policy.tiers, services.today, settings.trust_include_removed_text)
        return cls(
            chat=ChatParts(
                services.answer_parts, RequestLimits.from_settings(settings), trust, settings.model_name
            ),
            verification=Verification(
                services.verifier, services.fetcher, metrics, settings.verify_max_sources
            ),
            search=Search(services.store, metrics, settings.retrieve_max_k, settings.max_message_chars),
            readiness=Readiness(
                store=services.store,
                audit=services.audit,
                metrics=metrics,
                upstream=services.drafter.name,
                verifier=services.verifier.name,
                context=policy.context.name,
                rate_limits="redis" if settings.redis_url else "process",
            ),
            records=AuditRecords(services.audit, policy.tiers, services.today, badges),
            patient=PatientPage(settings.model_name, settings.page_api_key, policy.context, badges.short),
            login=StaffLogin(staff, throttle, metrics),
            metrics=metrics,
        )
