"""Staff credentials for the clinician view and the audit pages (and, later, ingestion).

Two ways to present a credential, checked in this order:

* ``Authorization: Bearer <key>``: for API calls and scripts. When the header is present it decides,
  whatever cookie the request also carries.
* The ``gateway_staff`` cookie, set by the login form at ``/clinician/login``: signed with
  HMAC-SHA256 under a key derived from the clinician key that logged in, carries the role and an
  expiry, and is ``HttpOnly; SameSite=Strict; Path=/`` (plus ``Secure`` behind HTTPS). Removing a key
  from the settings invalidates every session it opened; logging out revokes that session on the
  server (``SessionRevocations``), so a copy of the cookie stops working too.

Failed logins and failed staff credentials count against the client address's failed-authentication
bucket (``FailedAuthThrottle``); an address over it gets 429 whatever it presents.

Keys come from ``settings.clinician_keys`` (role ``clinician``); every comparison runs in constant time
over all configured keys. With no key configured the staff pages are closed (fail closed).

Failures: for a browser (``Accept: text/html``) an unauthenticated request is redirected to the login
page; for anything else it gets OpenAI's error JSON: 401 ``authentication_error`` for a missing or
wrong credential, 403 ``permission_error`` for a valid client API key that is not a staff credential
or when no staff key is configured.

Reuse: ``StaffAuth.from_settings(settings).authenticate(request)`` returns a ``Principal`` or ``None``;
``require`` returns it or raises as described above. The staff access rule (``gateway.web.auth``) calls
``require`` once per request, and ``gateway.web.auth.provide_staff`` hands the Principal it found to
the staff pages.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import math
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from litestar import Request, Response, get, post
from litestar.datastructures import Cookie
from litestar.params import Parameter
from litestar.response import Redirect

from gateway.errors import AuthenticationError, LoginRequired, PermissionDeniedError
from gateway.metrics import GatewayMetrics
from gateway.settings import Secret, Settings
from gateway.vocabulary import AccessArea, AuthFailure
from gateway.web.auth_state import FailedAuthThrottle, SessionRevocations
from gateway.web.rendering import PageRenderer

SESSION_COOKIE = "gateway_staff"
LOGIN_PATH = "/clinician/login"
CLINICIAN = "clinician"
ADMIN = "admin"
STAFF_ROLES = frozenset({CLINICIAN, ADMIN})
_TOKEN_VERSION = "v1"  # noqa: S105 - a format tag, not a secret
_DERIVATION_LABEL = b"trust-gateway staff session v1"


@dataclass(frozen=True)
class Principal:
    """Who is asking: a role and a non-secret label of the key used (``clinician#1``), for logs."""

    role: str
    key_id: str


@dataclass(frozen=True)
class _Key:
    role: str
    key_id: str
    secret: bytes
    signing_key: bytes


class StaffAuth:
    """Checks staff keys and issues/verifies signed session tokens."""

    def __init__(
        self,
        keys_by_role: Mapping[str, Sequence[Secret]],
        session_ttl: dt.timedelta,
        client_keys: Sequence[Secret] = (),
        revocations: SessionRevocations | None = None,
    ) -> None:
        self._revocations = revocations or SessionRevocations()
        self._keys: list[_Key] = []
        for role, keys in keys_by_role.items():
            for index, key in enumerate(k for k in keys if k):
                raw = key.reveal().encode("utf-8")
                derived = hmac.new(raw, _DERIVATION_LABEL, hashlib.sha256).digest()
                self._keys.append(_Key(role, f"{role}#{index + 1}", raw, derived))
        self._client_keys = [k.reveal().encode("utf-8") for k in client_keys if k]
        self.session_ttl = session_ttl

    @classmethod
    def from_settings(cls, settings: Settings, revocations: SessionRevocations | None = None) -> StaffAuth:
        return cls(
            {CLINICIAN: settings.clinician_keys, ADMIN: settings.admin_keys},
            dt.timedelta(hours=settings.clinician_session_hours),
            client_keys=(*settings.api_keys, settings.page_api_key),
            revocations=revocations,
        )

    @property
    def configured(self) -> bool:
        return bool(self._keys)

    def verify_key(self, candidate: str) -> Principal | None:
        """The principal whose key equals ``candidate``; compares against every key (constant time)."""
        given = candidate.encode("utf-8")
        found: _Key | None = None
        for key in self._keys:
            if hmac.compare_digest(key.secret, given) and found is None:
                found = key
        return Principal(found.role, found.key_id) if found else None

    def is_client_key(self, candidate: str) -> bool:
        given = candidate.encode("utf-8")
        return _any_equal(self._client_keys, given)

    def issue_session(self, principal: Principal, now: dt.datetime) -> str:
        key = next(k for k in self._keys if k.key_id == principal.key_id)
        expires = int((now + self.session_ttl).timestamp())
        payload = f"{_TOKEN_VERSION}.{key.role}.{expires}.{secrets.token_urlsafe(12)}"
        return f"{payload}.{_sign(key.signing_key, payload)}"

    def verify_session(self, token: str, now: dt.datetime) -> Principal | None:
        if not token.isascii():  # a valid token is ASCII; other bytes would break the comparisons
            return None
        parts = token.split(".")
        if len(parts) != 5 or parts[0] != _TOKEN_VERSION:
            return None
        payload, signature = ".".join(parts[:4]), parts[4]
        role, expires = parts[1], parts[2]
        if not expires.isdigit() or int(expires) < now.timestamp():
            return None
        found: _Key | None = None
        for key in self._keys:
            ok = hmac.compare_digest(_sign(key.signing_key, payload), signature)
            if ok and key.role == role and found is None:
                found = key
        if found is None or self._revocations.is_revoked(parts[3]):
            return None
        return Principal(found.role, found.key_id)

    def revoke_session(self, token: str, now: dt.datetime) -> bool:
        """Revoke a valid session token until its expiry (logout); False when it was not valid."""
        if self.verify_session(token, now) is None:
            return False
        parts = token.split(".")
        self._revocations.revoke(parts[3], float(parts[2]))
        return True

    def authenticate(
        self, request: Request[Any, Any, Any], now: dt.datetime | None = None
    ) -> Principal | None:
        """The staff principal of the request (Bearer header first, else the session cookie)."""
        bearer = bearer_token(request)
        if bearer is not None:
            return self.verify_key(bearer)
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            return self.verify_session(token, now or dt.datetime.now(dt.UTC))
        return None

    def require(self, request: Request[Any, Any, Any], roles: Iterable[str] = STAFF_ROLES) -> Principal:
        """The principal, or raise: LoginRequired for browsers, 401/403 RequestErrors for API calls."""
        allowed = frozenset(roles)
        browser = wants_html(request)
        if not self.configured:
            if browser:
                raise LoginRequired(_local_path(request))
            raise PermissionDeniedError(
                "Clinician access is not configured on this gateway (set GATEWAY_CLINICIAN_KEYS).",
                code="clinician_access_not_configured",
            )
        principal = self.authenticate(request)
        if principal is not None and principal.role in allowed:
            return principal
        bearer = bearer_token(request)
        if browser and bearer is None:
            raise LoginRequired(_local_path(request))
        if principal is not None or (bearer is not None and self.is_client_key(bearer)):
            raise PermissionDeniedError(
                "This credential does not give access to clinician pages.", code="insufficient_role"
            )
        if bearer is None and not request.cookies.get(SESSION_COOKIE):
            raise AuthenticationError(
                "A clinician credential is required (Authorization: Bearer <key>).",
                code="missing_clinician_credential",
            )
        raise AuthenticationError(
            "The clinician credential is invalid or the session has expired.",
            code="invalid_clinician_credential",
        )

    def session_cookie(self, token: str, request: Request[Any, Any, Any]) -> Cookie:
        return Cookie(
            key=SESSION_COOKIE,
            value=token,
            max_age=int(self.session_ttl.total_seconds()),
            path="/",
            httponly=True,
            samesite="strict",
            secure=is_https(request),
        )


def _sign(key: bytes, payload: str) -> str:
    digest = hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _any_equal(keys: Sequence[bytes], given: bytes) -> bool:
    found = False
    for key in keys:
        found = hmac.compare_digest(key, given) or found
    return found


def _cookie(request: Request[Any, Any, Any]) -> str | None:
    return request.cookies.get(SESSION_COOKIE)


def bearer_token(request: Request[Any, Any, Any]) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


def wants_html(request: Request[Any, Any, Any]) -> bool:
    return "text/html" in request.headers.get("accept", "")


def is_https(request: Request[Any, Any, Any]) -> bool:
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def safe_next(value: str | None) -> str:
    """A local path to go back to after login (never another site)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/clinician"
    return value


def _local_path(request: Request[Any, Any, Any]) -> str:
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")


def login_location(next_path: str) -> str:
    """Where a browser without a staff session is sent (``LoginRequired``): the login form, then back."""
    return f"{LOGIN_PATH}?next={quote(next_path, safe='/')}"


@dataclass(frozen=True)
class StaffLogin:
    """What the login and logout handlers use (handed through ``gateway.web.parts``): the staff keys and
    sessions (a ``StaffAuth`` sharing the access rules' session revocations), the failed-authentication
    throttle the access rules share, and the metrics that count failures."""

    auth: StaffAuth
    throttle: FailedAuthThrottle
    metrics: GatewayMetrics


@get(LOGIN_PATH, summary="Clinician login form", include_in_schema=False)
async def login_page(
    login: StaffLogin,
    pages: PageRenderer,
    next_path: Annotated[str | None, Parameter(query="next")] = None,
) -> Response[str]:
    configured = login.auth.configured
    return pages.page(
        "login",
        {"next": safe_next(next_path), "error": None, "configured": configured},
        status_code=200 if configured else 403,
    )


@post(LOGIN_PATH, summary="Clinician login", include_in_schema=False, status_code=303)
async def login_submit(
    request: Request[Any, Any, Any], login: StaffLogin, pages: PageRenderer
) -> Response[Any]:
    form = await request.form()
    auth, auth_throttle = login.auth, login.throttle
    next_path = safe_next(str(form.get("next") or ""))
    address = request.client.host if request.client is not None else "unknown"
    wait = auth_throttle.blocked_for(address)
    if wait > 0:
        return _throttled_login(pages, next_path, auth.configured, wait, login.metrics)
    principal = auth.verify_key(str(form.get("key") or "")) if auth.configured else None
    if principal is None or principal.role not in STAFF_ROLES:
        if auth.configured:
            login.metrics.auth_failures.labels(area=AccessArea.STAFF, reason=AuthFailure.INVALID).inc()
            wait = auth_throttle.failed(address)
            if wait > 0:
                return _throttled_login(pages, next_path, auth.configured, wait, login.metrics)
        return pages.page(
            "login",
            {
                "next": next_path,
                "configured": auth.configured,
                "error": "That key was not recognised." if auth.configured else None,
            },
            status_code=401 if auth.configured else 403,
        )
    token = auth.issue_session(principal, dt.datetime.now(dt.UTC))
    return Redirect(next_path, status_code=303, cookies=[auth.session_cookie(token, request)])


def _throttled_login(
    pages: PageRenderer, next_path: str, configured: bool, wait: float, metrics: GatewayMetrics
) -> Response[Any]:
    seconds = max(1, math.ceil(wait))
    metrics.auth_throttled.inc()
    return pages.page(
        "login",
        {
            "next": next_path,
            "configured": configured,
            "error": f"Too many failed attempts from this address; try again in {seconds} seconds.",
        },
        status_code=429,
        headers={"Retry-After": str(seconds)},
    )


@post("/clinician/logout", summary="Clinician logout", include_in_schema=False, status_code=303)
async def logout(request: Request[Any, Any, Any], login: StaffLogin) -> Response[Any]:
    """Revoke the session on the server (a copied cookie stops working), then clear the cookie."""
    token = _cookie(request)
    if token:
        login.auth.revoke_session(token, dt.datetime.now(dt.UTC))
    cookie = Cookie(
        key=SESSION_COOKIE,
        value="",
        max_age=0,
        path="/",
        httponly=True,
        samesite="strict",
        secure=is_https(request),
    )
    return Redirect(LOGIN_PATH, status_code=303, cookies=[cookie])
