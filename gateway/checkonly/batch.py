"""``trust-gateway verify FILE.jsonl``: the check-only service over a file, one answer per line.

Each input line is a JSON object shaped like a ``/v1/verify`` body, optionally with an ``id``::

    {"id": "q17", "answer": "Flu lasts a week [1].", "sources": [{"id": "1", "url": "https://..."}]}

Each checked row becomes one output line: ``{"line": n, "id": ..., **the /v1/verify response}``. A bad
row (not JSON, a field missing or of the wrong type) or a row the verifier could not decide is
reported on stderr by line number and skipped; blank lines are ignored.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from tqdm import tqdm

from gateway.checkonly.inputs import parse_check_input
from gateway.checkonly.rendering import report_json
from gateway.checkonly.service import UrlChecker, check_answer
from gateway.errors import RequestError, StageError
from gateway.fetching.fetcher import SafeFetcher
from gateway.models.pool import ModelPool
from gateway.settings import Settings
from gateway.verification.verifier import Verifier

if TYPE_CHECKING:
    from gateway.models.embedding import Embedder

Components = Callable[[Settings, ModelPool], tuple[Verifier, SafeFetcher]]
"""Builds ``trust-gateway verify``'s verifier and web fetcher (``build_components``, or a test's)."""


def build_components(
    settings: Settings, models: ModelPool, *, embedder: Embedder | None = None
) -> tuple[Verifier, SafeFetcher]:
    """The configured verifier (its judge's model from ``models``) and web fetcher, without opening the
    knowledge store. ``embedder``: one already loaded (a test's), instead of the configured bulk one."""
    from gateway.bootstrap import build_fetcher, build_verifier
    from gateway.models.embedding import Embedder
    from gateway.policies import load_configured_policy

    policy = load_configured_policy(settings)
    embedder = embedder or Embedder.from_settings(settings, bulk=True)
    return build_verifier(settings, policy, embedder, models), build_fetcher(settings, policy)


@dataclass
class BatchSummary:
    rows: int = 0
    """Non-blank input lines."""
    checked: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)
    """(line number, why) for every row that was not checked."""


async def verify_lines(
    lines: Sequence[str],
    write: Callable[[dict[str, Any]], None],
    verifier: Verifier,
    fetcher: UrlChecker,
    *,
    max_sources: int,
    progress: bool = True,
) -> BatchSummary:
    """Check every row of ``lines`` (1-based line numbers), handing each result to ``write``."""
    summary = BatchSummary()
    with tqdm(total=len(lines), unit="row", desc="verify", disable=not progress) as bar:
        for number, line in enumerate(lines, start=1):
            bar.update(1)
            if not line.strip():
                continue
            summary.rows += 1
            try:
                data = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as err:
                summary.skipped.append((number, f"not valid JSON: {err}"))
                continue
            try:
                row = parse_check_input(data, max_sources=max_sources)
                report = await check_answer(row.answer, row.sources, verifier, fetcher)
            except RequestError as err:
                summary.skipped.append((number, err.message))
                continue
            except StageError as err:
                summary.skipped.append((number, f"the verifier could not decide: {type(err).__name__}"))
                continue
            write({"line": number, "id": row.id, **report_json(report)})
            summary.checked += 1
    return summary


def run_file(
    source: Path,
    out: TextIO,
    errors: TextIO,
    verifier: Verifier,
    fetcher: UrlChecker,
    *,
    max_sources: int,
    progress: bool = True,
    models: ModelPool | None = None,
) -> BatchSummary:
    """Read ``source`` (JSONL), write results as JSONL to ``out``, report skipped rows to ``errors``;
    close ``models`` (the verifier's) when done."""
    lines = source.read_text(encoding="utf-8").splitlines()

    def write(result: dict[str, Any]) -> None:
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
        out.flush()

    async def run() -> BatchSummary:
        try:
            return await verify_lines(
                lines, write, verifier, fetcher, max_sources=max_sources, progress=progress
            )
        finally:
            if models is not None:
                await models.aclose()

    summary = asyncio.run(run())
    for number, why in summary.skipped:
        errors.write(f"{source}:{number}: skipped: {why}\n")
    return summary
