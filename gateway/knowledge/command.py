"""``trust-gateway ingest``: load sources, ingest them with a progress bar, print a summary."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from gateway.knowledge.loaders import Fetch, FetchedPage
from gateway.settings import Settings
from gateway.validation import refuse

if TYPE_CHECKING:
    from gateway.knowledge.ingest import IngestReport
    from gateway.policies import Policy


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sources",
        nargs="*",
        help="corpus directories / manifest .yaml files / .jsonl files "
        "(default: GATEWAY_KNOWLEDGE_DIR or the bundled knowledge base)",
    )
    parser.add_argument(
        "--prune", action="store_true", help="delete indexed documents that are not among these sources"
    )
    parser.add_argument(
        "--delete", action="append", default=[], metavar="ID", help="delete this document id (repeatable)"
    )
    parser.add_argument(
        "--tier-map",
        action="append",
        default=[],
        metavar="ORG=TIER",
        help="tier for JSONL rows of this organisation that name no tier (repeatable)",
    )
    parser.add_argument("--batch", type=int, default=256, help="documents encoded and committed together")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _tier_map(pairs: list[str]) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for pair in pairs:
        org, sep, tier = pair.partition("=")
        if not sep or not org.strip() or not tier.strip():
            refuse("--tier-map", pair, "expected ORG=TIER")
        mapping[org.strip()] = tier.strip()
    return mapping


@contextlib.contextmanager
def safe_fetch(settings: Settings, policy: Policy | None = None) -> Iterator[Fetch]:
    """A synchronous ``Fetch`` over the SSRF-safe SafeFetcher ``policy`` describes (the configured policy
    when none is given)."""
    from gateway.fetching.fetcher import SafeFetcher
    from gateway.policies import load_configured_policy

    policy = policy or load_configured_policy(settings)
    fetcher = SafeFetcher.from_policy(policy.thresholds.verification, settings)
    with asyncio.Runner() as runner:

        def fetch(url: str) -> FetchedPage:
            result = runner.run(fetcher.fetch(url))
            return FetchedPage(result.final_url, result.content_type, result.text, result.title)

        yield fetch


def count_items(paths: list[Path]) -> int | None:
    """Rows of the JSONL sources (for the progress bar's total); None when manifests are involved."""
    total = 0
    for path in paths:
        if path.suffix.lower() != ".jsonl" or not path.is_file():
            return None
        with path.open("rb") as handle:
            total += sum(1 for line in handle if line.strip())
    return total


def run(args: argparse.Namespace, settings: Settings, out: TextIO = sys.stdout) -> int:
    """``trust-gateway ingest``; an embedded store is held for the whole run, and refused (exit 2)
    while a gateway serves it (``embedded.writing_store``)."""
    from gateway.knowledge.embedded import StoreServed, writing_store
    from gateway.resources import bundled

    paths = [Path(s) for s in args.sources]
    if not paths and not args.delete:
        paths = [settings.knowledge_dir or bundled("knowledge")]
    tiers_by_org = _tier_map(args.tier_map)
    with contextlib.ExitStack() as held:
        if not settings.chroma_url:
            try:
                held.enter_context(writing_store(settings.resolved_chroma_path))
            except StoreServed as err:
                print(f"ingest: {err}", file=sys.stderr)
                return 2
        return _ingest(args, settings, paths, tiers_by_org, out)


def _ingest(
    args: argparse.Namespace, settings: Settings, paths: list[Path], tiers_by_org: dict[str, str], out: TextIO
) -> int:
    from gateway.knowledge.ingest import Ingestor
    from gateway.knowledge.instructions import InstructionDetector
    from gateway.knowledge.loaders import iter_sources
    from gateway.knowledge.store import ChromaStore
    from gateway.models.embedding import Embedder
    from gateway.policies import load_configured_policy

    embedder = Embedder.from_settings(settings, bulk=True)
    policy = load_configured_policy(settings)
    planted = policy.thresholds.cleanup.planted_instruction
    store = ChromaStore.open(
        settings, embedder, instructions=InstructionDetector.configured(settings, planted, embedder)
    )
    ingestor = Ingestor(
        store,
        embedder,
        batch_documents=args.batch,
        progress=not args.no_progress,
        source=",".join(args.sources),
        detector=store.instructions,
    )
    with safe_fetch(settings, policy) as fetch:
        report = ingestor.run(
            iter_sources(paths, fetch, tiers_by_org),
            prune=args.prune,
            delete=args.delete,
            total=count_items(paths),
        )
    print_report(report, store.count_sync(), out)
    return 1 if report.failures else 0


def print_report(report: IngestReport, passages: int, out: TextIO) -> None:
    summary = report.summary
    print(
        f"ingested in {report.seconds:.1f}s: {summary.added} added, {summary.updated} updated, "
        f"{summary.unchanged} unchanged, {summary.deleted} deleted, {len(report.failures)} failed; "
        f"{summary.chunks_written} passages written ({report.sentences} sentences, "
        f"{report.texts_encoded} distinct sentences and headings encoded); {passages} passages in the index",
        file=out,
    )
    for failure in report.failures:
        print(f"  skipped {failure.name}: {failure.reason}", file=out)
    if report.instructions:
        print(
            f"{len(report.instructions)} sentences quarantined as instructions to a model or system "
            "(not indexed; remove them from the source):",
            file=out,
        )
    for document_id, sentence in report.instructions:
        print(f"  instruction in {document_id}: {sentence[:200]!r}", file=out)
