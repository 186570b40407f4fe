"""A real Prometheus server (Debian's /usr/bin/prometheus) on loopback, and promtool.

Both binaries come from ``make system-deps``. Outside CI a missing binary skips the test; under CI
(``CI`` set) it fails, so the check cannot silently disappear.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.ports import on_fresh_port, serving, stop_process
from tests.support.waiting import DEADLINE_SECONDS, answers_ok, wait_until

REPO = Path(__file__).resolve().parents[2]
PROMETHEUS_DIR = REPO / "deploy" / "prometheus"
RULES_FILE = PROMETHEUS_DIR / "rules" / "gateway.rules.yml"
GATEWAY_JOB = "trust-gateway"


def require_binary(name: str) -> str:
    found = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
    if found is None:
        message = f"{name} is not installed (make system-deps installs Debian's prometheus package)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


class PrometheusServer:
    def __init__(self, url: str) -> None:
        self.url = url
        self._http = httpx.Client(base_url=url, timeout=5.0)

    def query(self, expr: str) -> list[dict[str, Any]]:
        response = self._http.get("/api/v1/query", params={"query": expr})
        response.raise_for_status()
        body = response.json()
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def scalar(self, expr: str) -> float | None:
        """The value of a query that returns at most one series (None when it returns none)."""
        result = self.query(expr)
        assert len(result) <= 1, result
        return float(result[0]["value"][1]) if result else None

    def wait_for(self, expr: str, predicate: Any, timeout: float = DEADLINE_SECONDS) -> float:
        """Poll ``expr`` until ``predicate(value)`` holds; returns the value (fails on timeout)."""
        last: list[float | None] = [None]

        def holds() -> bool:
            last[0] = self.scalar(expr)
            return last[0] is not None and bool(predicate(last[0]))

        wait_until(holds, lambda: f"{expr} satisfies the condition (last value {last[0]})", timeout, 0.25)
        assert last[0] is not None
        return last[0]

    def get(self, path: str) -> Any:
        response = self._http.get(path)
        response.raise_for_status()
        return response.json()

    def close(self) -> None:
        self._http.close()


@contextmanager
def running_prometheus(
    tmp_path: Path, targets: list[str], rules: Path = RULES_FILE, interval: str = "1s"
) -> Iterator[PrometheusServer]:
    """Start Prometheus scraping ``targets`` (host:port) as job ``trust-gateway``; stop it on exit."""
    binary = require_binary("prometheus")
    config = {
        "global": {"scrape_interval": interval, "evaluation_interval": interval, "scrape_timeout": interval},
        "rule_files": [str(rules)],
        "scrape_configs": [
            {"job_name": GATEWAY_JOB, "metrics_path": "/metrics", "static_configs": [{"targets": targets}]}
        ],
    }
    config_file = tmp_path / "prometheus.yml"
    config_file.write_text(yaml.safe_dump(config))
    log_file = tmp_path / "prometheus.log"

    def start(port: int) -> tuple[subprocess.Popen[bytes], PrometheusServer]:
        with log_file.open("wb") as log:
            process = subprocess.Popen(
                [
                    binary,
                    f"--config.file={config_file}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        server = PrometheusServer(f"http://127.0.0.1:{port}")

        def log_text() -> str:
            return log_file.read_text(errors="replace")

        def ready() -> bool:
            return serving(process, port, "prometheus", log_text) and answers_ok(f"{server.url}/-/ready", 1.0)

        try:
            wait_until(ready, lambda: f"prometheus ready:\n{log_text()[-3000:]}", DEADLINE_SECONDS, 0.2)
        except BaseException:
            server.close()
            stop_process(process, grace=10)
            raise
        return process, server

    process, server = on_fresh_port(start)
    try:
        yield server
    finally:
        server.close()
        stop_process(process, grace=10)
