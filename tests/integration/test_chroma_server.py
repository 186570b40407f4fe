"""Chroma server mode: a real ``chroma run`` on loopback, ingestion through it, two gateways on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from gateway.bootstrap import open_store
from gateway.testing import serve_in_thread
from tests.conftest import FIXTURE_KB, REPO
from tests.support.clock import ManualClock, services_on_clock
from tests.support.replicas import running_chroma

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_chroma(tmp_path_factory.mktemp("chroma-server")) as chroma:
        yield chroma.url


def test_ingest_cli_and_two_gateways_share_one_chroma_server(
    chroma_url: str,
    embedder,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    from gateway.settings import Settings
    from gateway.web.app import create_app

    # 1. The real CLI ingests into the server (a separate process, as an operator would run it).
    env = {
        **os.environ,
        "GATEWAY_CHROMA_URL": chroma_url,
        "GATEWAY_DATA_DIR": str(tmp_path / "cli"),
        "HF_HUB_OFFLINE": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "ingest", str(FIXTURE_KB), "--no-progress"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "5 added" in done.stdout

    # 2. Two gateways, each with its own Services and store client (and its own BM25 cache dir),
    #    serve /v1/retrieve from that one server.
    body = {"query": "How long do I use eye drops after cataract surgery?", "k": 4}
    answers = []
    clock = ManualClock()  # the gateways' index refresh is timed on it
    with ExitStack() as stack:
        urls = []
        for name in ("a", "b"):
            settings = Settings(
                data_dir=tmp_path / name,
                chroma_url=chroma_url,
                knowledge_dir=FIXTURE_KB,
                build_index_if_missing=False,
            )
            services = services_on_clock(settings, embedder, clock)
            stack.callback(services.audit.close)
            urls.append(stack.enter_context(serve_in_thread(create_app(settings, services=services))))
        for url in urls:
            response = httpx.post(f"{url}/v1/retrieve", json=body, timeout=30)
            assert response.status_code == 200
            answers.append(response.json()["passages"])
        assert answers[0] == answers[1]
        assert answers[0][0]["document_id"] == "cataract-recovery"
        # the embedded default was not used: nothing was written under either data_dir/chroma
        assert not (tmp_path / "a" / "chroma").exists()

        # 3. A change ingested through the server is seen by both running gateways, within their
        #    GATEWAY_INDEX_REFRESH_SECONDS (1 s by default) of the commit.
        changed = tmp_path / "kb2"
        changed.mkdir()
        (changed / "note.md").write_text("Tranexamic acid mouthwash is used after dental extraction.\n")
        (changed / "manifest.yaml").write_text(
            json.dumps(
                {
                    "documents": [
                        {
                            "id": "mouthwash",
                            "file": "note.md",
                            "title": "Mouthwash",
                            "org": "NHS",
                            "url": "https://www.nhs.uk/mouthwash",
                            "tier": "clinical_reference",
                        }
                    ]
                }
            )
        )
        from gateway.knowledge.ingest import Ingestor
        from gateway.knowledge.loaders import iter_manifest

        writer = open_store(Settings(data_dir=tmp_path / "w", chroma_url=chroma_url), embedder)
        assert Ingestor(writer, embedder).run(iter_manifest(changed)).summary.added == 1

        def top(url: str) -> str:
            found = httpx.post(f"{url}/v1/retrieve", json={"query": "tranexamic acid", "k": 1}, timeout=30)
            return str(found.json()["passages"][0]["document_id"])

        # until the refresh interval has passed on the gateways' clock, each searches the version it
        # read; once it has, the next search reads the new version
        assert "mouthwash" not in [top(url) for url in urls]
        clock.advance(Settings().index_refresh_seconds)
        assert [top(url) for url in urls] == ["mouthwash", "mouthwash"]
