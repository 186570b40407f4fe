"""The ``trust-gateway`` command: serve, ingest, ask, settings."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from gateway.errors import ConfigurationError, GatewayError
from gateway.logs import configure_logging
from gateway.settings import Settings


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        host=getattr(args, "host", None),
        port=getattr(args, "port", None),
        context=getattr(args, "context", None),
    )


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from gateway.web.app import create_app

    settings = _settings(args)
    app = create_app(settings)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", access_log=False)
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from gateway.knowledge.corpus import load_manifest
    from gateway.knowledge.embedding import Embedder
    from gateway.knowledge.store import ChromaStore
    from gateway.resources import bundled

    settings = _settings(args)
    directory = Path(args.directory) if args.directory else settings.knowledge_dir or bundled("knowledge")
    documents = load_manifest(directory)
    store = ChromaStore.open(settings, Embedder())
    summary = store.upsert_documents(documents)
    print(
        f"ingested {directory}: {summary.added} added, {summary.updated} updated, "
        f"{summary.unchanged} unchanged, {summary.chunks_written} passages written; "
        f"{store.count_sync()} passages in the store"
    )
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from gateway.bootstrap import build_services
    from gateway.domain import ChatRequest, Message, Role
    from gateway.pipeline.run import answer
    from gateway.web.serializers import trust_json

    settings = _settings(args)
    services = build_services(settings)
    request = ChatRequest(messages=(Message(Role.USER, args.question),), model=settings.model_name)
    result = asyncio.run(answer(request, services))
    if args.json:
        print(
            json.dumps(
                {
                    "answer": result.answer,
                    "trust": trust_json(result, services.policy.tiers, services.today()),
                },
                indent=2,
            )
        )
    else:
        print(result.answer)
        summary = result.report.summary
        print(
            f"\n[{summary.claims} claims: {summary.supported} supported, {summary.rewritten} rewritten, "
            f"{summary.removed} removed; refused={summary.refused} {summary.reason or ''}]"
        )
        for number, passage in enumerate(result.passages, start=1):
            print(f"[{number}] {passage.title} - {passage.org} - {passage.url}")
    return 0


def cmd_settings(_: argparse.Namespace) -> int:
    for variable, default, description in Settings.documented_variables():
        print(f"{variable}={default}\n    {description}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trust-gateway", description="Clinical trust gateway")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the OpenAI-compatible API")
    serve.add_argument("--host", help="interface to bind (GATEWAY_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (GATEWAY_PORT, default 8000)")
    serve.add_argument("--context", help="operating context in the policy directory (GATEWAY_CONTEXT)")
    serve.set_defaults(func=cmd_serve)

    ingest = sub.add_parser("ingest", help="ingest a corpus directory (manifest.yaml + documents)")
    ingest.add_argument(
        "directory", nargs="?", help="corpus directory (default: GATEWAY_KNOWLEDGE_DIR or bundled)"
    )
    ingest.set_defaults(func=cmd_ingest)

    ask = sub.add_parser("ask", help="answer one question through the whole pipeline")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print the answer and trust report as JSON")
    ask.add_argument("--context", help="operating context (GATEWAY_CONTEXT)")
    ask.set_defaults(func=cmd_ask)

    settings = sub.add_parser("settings", help="list every GATEWAY_* variable with its default")
    settings.set_defaults(func=cmd_settings)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging()
    try:
        return int(args.func(args))
    except ConfigurationError as err:
        print(f"trust-gateway: configuration error: {err}", file=sys.stderr)
        return 2
    except GatewayError as err:
        print(f"trust-gateway: {type(err).__name__}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
