"""A running gateway on loopback, built over test services."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from gateway.services import Services
from gateway.testing import serve_in_thread
from gateway.web.app import create_app

Start = Callable[..., tuple[Any, str, Any]]
"""A gateway fixture's starter (``policy_gateway``, ``start_gateway``): (scripted upstream, url, services)."""


@contextmanager
def running_gateway(services: Services, **options: Any) -> Iterator[str]:
    """Serve the gateway app over ``services`` (``options``: ``create_app``'s keywords); yields its URL."""
    app = create_app(services.settings, services=services, **options)
    with serve_in_thread(app) as url:
        yield url


def openai_client(base_url: str, **kwargs: Any) -> Any:
    import openai

    return openai.OpenAI(
        base_url=f"{base_url}/v1", api_key=kwargs.pop("api_key", "test-key"), max_retries=0, **kwargs
    )
