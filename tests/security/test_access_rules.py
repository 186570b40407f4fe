"""Access is decided by Litestar guards on the routers (``gateway.web.auth.Access``): every route has
exactly one access rule, and an app where a route has none or two does not start. Which rule each route
has is stated here, route by route (``ROUTE_RULES``): a new route fails the first test until it is
listed, so a staff page put on a public router is caught by review of this table. These tests build
apps without services: a guard runs before any handler or dependency."""

from __future__ import annotations

from pathlib import Path

import pytest
from litestar import Litestar, Router, get
from litestar.di import Provide
from litestar.exceptions import ImproperlyConfiguredException
from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from gateway.settings import Secret, Settings
from gateway.web.app import create_app
from gateway.web.auth import Access, access_rules, provide_staff
from gateway.web.clinician_auth import Principal
from gateway.web.errors import exception_handlers

CLIENT_KEY = "tg-rules-client-6a1d"
CLINICIAN_KEY = "clin-rules-key-2f90"


def settings_for(tmp_path: Path, **overrides: object) -> Settings:
    return Settings(
        data_dir=tmp_path,
        upstream_base_url="http://127.0.0.1:9/v1",
        api_keys=(Secret(CLIENT_KEY),),
        clinician_keys=(Secret(CLINICIAN_KEY),),
        **overrides,  # type: ignore[arg-type]
    )


SCHEMA_PAGES = (
    "/schema",
    "/schema/openapi.json",
    "/schema/openapi.yaml",
    "/schema/openapi.yml",
    "/schema/swagger",
    "/schema/redoc",
    "/schema/rapidoc",
    "/schema/elements",
    "/schema/oauth2-redirect.html",
    "/schema/{path:str}",
)

ROUTE_RULES: dict[str, str] = {
    # the JSON API: a client API key
    "/v1/chat/completions": "client",
    "/v1/models": "client",
    "/v1/verify": "client",
    "/v1/retrieve": "client",
    "/v1/responses": "client",
    # clinician and audit pages: a staff credential
    "/clinician": "staff",
    "/clinician/requests/{request_id:str}": "staff",
    "/audit": "staff",
    "/audit/access": "staff",
    "/audit/{request_id:str}": "staff",
    "/audit/{request_id:str}/record.json": "staff",
    # the metrics token when set
    "/metrics": "metrics",
    # open
    "/": "public",
    "/healthz": "public",
    "/readyz": "public",
    "/clinician/login": "public",
    "/clinician/logout": "public",
    "/static/{file_path:path}": "public",
    **dict.fromkeys(SCHEMA_PAGES, "public"),
}
"""Every route of the gateway and the access rule it must have. A route added to the app, or a rule
changed, fails ``test_every_route_has_exactly_one_rule_the_one_listed`` until listed here."""


def route_rules(app: Litestar) -> dict[str, str]:
    """Each route path of ``app`` and its one access rule (every method of a path has the same one)."""
    found: dict[str, set[str]] = {}
    for route in app.routes:
        assert isinstance(route, HTTPRoute), route.path  # no websocket or ASGI route escapes the rules
        for handler in route.route_handlers:
            rules = access_rules(handler)
            assert len(rules) == 1, (route.path, handler.http_methods)
            found.setdefault(route.path, set()).add(rules[0].area)
    assert all(len(areas) == 1 for areas in found.values()), found
    return {path: next(iter(areas)) for path, areas in found.items()}


def test_every_route_has_exactly_one_rule_the_one_listed(tmp_path: Path) -> None:
    assert route_rules(create_app(settings_for(tmp_path))) == ROUTE_RULES


@get("/v1/forgotten", sync_to_thread=False)
def forgotten() -> str:
    return "no rule"


@get("/audit/export", sync_to_thread=False)
def export() -> str:
    return "a staff page"


def test_a_route_without_a_rule_stops_the_app(tmp_path: Path) -> None:
    access = Access(settings_for(tmp_path))
    app = Litestar(
        route_handlers=[Router(path="/", route_handlers=[export], guards=[access.staff]), forgotten]
    )
    with pytest.raises(ImproperlyConfiguredException, match="/v1/forgotten has 0 access rules"):
        access.check_routes(app)


def test_two_rules_on_one_route_stop_the_app(tmp_path: Path) -> None:
    access = Access(settings_for(tmp_path))
    inner = Router(path="/", route_handlers=[forgotten], guards=[access.client])
    app = Litestar(route_handlers=[Router(path="/", route_handlers=[inner], guards=[access.public])])
    with pytest.raises(ImproperlyConfiguredException, match="has 2 access rules"):
        access.check_routes(app)


def test_a_staff_page_under_the_public_rule_fails_the_route_table(tmp_path: Path) -> None:
    """Start-up checks only that a rule is there; comparing with the table is what catches the wrong one."""
    access = Access(settings_for(tmp_path))
    staff_page = Router(path="/", route_handlers=[export], guards=[access.public])
    app = Litestar(route_handlers=[staff_page], openapi_config=None)
    access.check_routes(app)  # one rule: it starts
    assert route_rules(app) == {"/audit/export": "public"} != {"/audit/export": "staff"}


def test_the_routes_of_one_rule_draw_from_one_bucket_per_key(tmp_path: Path) -> None:
    """Litestar copies each router it registers; the rule's limiter is still the app's one."""
    app = create_app(settings_for(tmp_path, rate_limit_burst=1, rate_limit_per_minute=1.0))
    client = TestClient(app)  # not entered: no services, so a request that passes its guard is a 503
    key = {"Authorization": f"Bearer {CLIENT_KEY}"}
    assert client.get("/v1/models", headers=key).status_code == 503  # passed the guard: not ready
    limited = client.post("/v1/verify", headers=key, json={})
    assert limited.status_code == 429
    assert limited.json()["error"]["type"] == "rate_limit_error"
    assert int(limited.headers["retry-after"]) >= 1


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("OPTIONS", "/v1/chat/completions", {}, 401),  # the automatic OPTIONS route keeps its router's rule
        ("OPTIONS", "/audit", {"Authorization": f"Bearer {CLIENT_KEY}"}, 403),
        ("GET", "/clinician", {"Authorization": f"Bearer {CLIENT_KEY}"}, 403),
        ("GET", "/v1/models", {"Authorization": f"Bearer {CLINICIAN_KEY}"}, 403),
        ("GET", "/healthz", {}, 200),
    ],
)
def test_each_group_of_routes_asks_for_its_credential(
    tmp_path: Path, method: str, path: str, headers: dict[str, str], status: int
) -> None:
    client = TestClient(create_app(settings_for(tmp_path)))
    response = client.request(method, path, headers=headers)
    assert response.status_code == status, response.text
    if status >= 400:
        assert set(response.json()["error"]) == {"message", "type", "param", "code"}


def test_a_browser_is_sent_to_the_login_form_by_the_staff_rule(tmp_path: Path) -> None:
    client = TestClient(create_app(settings_for(tmp_path)))
    response = client.get("/audit?outcome=refused", headers={"Accept": "text/html"}, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/clinician/login?next=/audit%3Foutcome%3Drefused"


@get("/clinician/whoami", sync_to_thread=False)
def whoami(staff: Principal) -> str:
    return f"{staff.role} {staff.key_id}"


@pytest.mark.parametrize(
    ("rule", "status", "body"), [("staff", 200, "clinician clinician#1"), ("public", 403, None)]
)
def test_the_staff_pages_get_the_principal_the_staff_rule_found(
    tmp_path: Path, rule: str, status: int, body: str | None
) -> None:
    """``provide_staff`` hands over the rule's Principal; a route without the staff rule gets none (403)."""
    access = Access(settings_for(tmp_path))
    router = Router(
        path="/",
        route_handlers=[whoami],
        guards=[getattr(access, rule)],
        dependencies={"staff": Provide(provide_staff)},
    )
    app = Litestar(route_handlers=[router], exception_handlers=exception_handlers(lambda: None))
    with TestClient(app) as client:
        response = client.get("/clinician/whoami", headers={"Authorization": f"Bearer {CLINICIAN_KEY}"})
    assert response.status_code == status, response.text
    if body is not None:
        assert response.text == body
    else:
        assert response.json()["error"]["type"] == "permission_error"


@pytest.mark.parametrize(
    ("headers", "status"),
    [({"Authorization": f"Bearer {CLIENT_KEY}"}, 415), ({}, 401)],
)
def test_the_json_api_router_refuses_a_body_not_json_after_its_access_rule(
    tmp_path: Path, headers: dict[str, str], status: int
) -> None:
    """The 415 is the client router's before_request hook: it runs after the client rule (a caller
    without a key learns nothing of the body rules) and before the body or any dependency is read."""
    client = TestClient(create_app(settings_for(tmp_path)))  # no services: a passing request is a 503
    for path in ("/v1/chat/completions", "/v1/verify", "/v1/retrieve", "/v1/responses"):
        response = client.post(path, headers={**headers, "Content-Type": "text/plain"}, content=b"{}")
        assert response.status_code == status, (path, response.text)
    assert client.post("/v1/verify", headers=headers, json={}).status_code == (503 if status == 415 else 401)
