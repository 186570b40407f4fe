"""Fixtures shared by the integration tests."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
import structlog

from gateway.logs import configure_logging


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
