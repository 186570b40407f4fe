"""Fixtures of the security suite: services and gateways built once per module where possible."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    """The CLI's ``main`` configures structlog to the (captured, then closed) stderr: undo it."""
    yield
    import structlog

    structlog.reset_defaults()
