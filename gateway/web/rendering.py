"""HTML pages: one autoescaping Jinja2 environment over ``templates/pages`` and the response helper.

Every page response carries a strict Content-Security-Policy (scripts and styles only from
``/static``; no inline script), ``no-store`` caching (pages can show patient questions) and the
usual hardening headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from litestar import MediaType, Response

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class PageRenderer:
    """Renders ``templates/pages/<name>.html.j2``; autoescape is always on."""

    def __init__(self, templates_dir: Path) -> None:
        self.templates_dir = templates_dir
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(templates_dir)),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._env.filters["pct"] = _pct
        self._env.tests["http_url"] = is_http_url

    @property
    def static_dir(self) -> Path:
        return self.templates_dir / "static"

    def render(self, name: str, values: Mapping[str, Any]) -> str:
        return self._env.get_template(f"pages/{name}.html.j2").render(**values)

    def page(
        self,
        name: str,
        values: Mapping[str, Any],
        *,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> Response[str]:
        return Response(
            self.render(name, values),
            status_code=status_code,
            media_type=MediaType.HTML,
            headers={**SECURITY_HEADERS, **(headers or {})},
        )


def is_http_url(value: object) -> bool:
    """Only ``http(s)://`` URLs are rendered as links (never ``javascript:``, ``data:``, ...)."""
    if not isinstance(value, str):
        return False
    return value.strip().lower().startswith(("http://", "https://"))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{round(value * 100)}%"
