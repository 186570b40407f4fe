"""Opening the embedded Chroma store (PersistentClient) afresh.

``chromadb.PersistentClient(path)`` hands every caller of one process the same cached client, whose
vector indexes were loaded when it first opened them and never see what another process adds later
(an ``ingest`` run beside a serving gateway). ``open_embedded`` builds a new client over the same
directory, which loads the indexes as they are on disk now; ``chroma_index.ChromaIndex`` calls it
whenever it sees a commit made by another process. The new client replaces the cached one for later
``PersistentClient(path)`` calls of this process; clients already handed out keep working.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_embedded(path: Path) -> Any:
    """A new embedded Chroma client over ``path`` that does not share the process's cached one."""
    from chromadb.api import ServerAPI
    from chromadb.api.client import Client
    from chromadb.config import Settings as ChromaSettings
    from chromadb.config import System
    from chromadb.telemetry.product import ProductTelemetryClient

    settings = ChromaSettings(anonymized_telemetry=False, is_persistent=True, persist_directory=str(path))
    system = System(settings)
    system.instance(ProductTelemetryClient)  # type: ignore[type-abstract]
    system.instance(ServerAPI)  # type: ignore[type-abstract]
    system.start()
    return Client.from_system(system)
