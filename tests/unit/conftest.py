"""The unit suite is fast and model-free (#34): a unit test loads neither MiniLM nor Chroma nor the full
services. The few that must are marked ``@pytest.mark.slow`` (``make test`` still runs them; ``pytest -m
"not slow" tests/unit`` is the fast run); whole files that do live in ``tests/integration``.

The guard: an unmarked unit test that asks for one of the heavy fixtures fails before they are built,
and one that builds an embedder or opens a Chroma store itself fails at that call, each naming what to
do instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

HEAVY_FIXTURES = frozenset({"embedder", "fixture_store", "make_services", "module_services"})
"""The shared fixtures (tests/conftest.py) that load MiniLM, fill a Chroma store or build the services."""

REMEDY = "mark it @pytest.mark.slow or move it to tests/integration (unit tests load no model)"


def _marked_slow(item: pytest.Item) -> bool:
    return item.get_closest_marker("slow") is not None


def pytest_runtest_setup(item: pytest.Item) -> None:
    heavy = HEAVY_FIXTURES & set(getattr(item, "fixturenames", ()))
    if heavy and not _marked_slow(item):
        pytest.fail(f"{item.nodeid} uses {', '.join(sorted(heavy))}: {REMEDY}", pytrace=False)


@pytest.fixture(autouse=True)
def _no_model_in_unit_tests(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    if _marked_slow(request.node):
        yield
        return
    from gateway.knowledge.store import ChromaStore
    from gateway.models.embedding import Embedder

    def refuse(what: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            pytest.fail(f"{request.node.nodeid} {what}: {REMEDY}", pytrace=False)

        return refused

    monkeypatch.setattr(Embedder, "__init__", refuse("loads the MiniLM embedder"))
    monkeypatch.setattr(ChromaStore, "open", refuse("opens a Chroma store"))
    yield
