"""Fixtures shared by the integration tests."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
import structlog

from gateway.logs import configure_logging
from gateway.testing import running_upstream


@pytest.fixture(scope="module")
def upstream():  # type: ignore[no-untyped-def]
    """One scripted OpenAI-compatible upstream on loopback per test module: ``(scripted, base_url)``;
    tests ``scripted.reset()`` it before use."""
    with running_upstream() as (scripted, base_url):
        yield scripted, base_url


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    """The gateway's real logging configuration, writing into a buffer; restored afterwards."""
    saved = structlog.get_config()
    stream = io.StringIO()
    configure_logging(stream=stream)
    try:
        yield stream
    finally:
        structlog.configure(**saved)
