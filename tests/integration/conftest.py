"""Fixtures shared by the integration tests."""

from __future__ import annotations

import pytest

from gateway.testing import running_upstream


@pytest.fixture(scope="module")
def upstream():  # type: ignore[no-untyped-def]
    """One scripted OpenAI-compatible upstream on loopback per test module: ``(scripted, base_url)``;
    tests ``scripted.reset()`` it before use."""
    with running_upstream() as (scripted, base_url):
        yield scripted, base_url
