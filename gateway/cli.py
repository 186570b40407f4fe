"""The ``trust-gateway`` command: serve, ingest, ask, settings."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from gateway.errors import ConfigurationError, GatewayError
from gateway.logs import configure_logging
from gateway.settings import Settings

if TYPE_CHECKING:
    from gateway.checkonly.batch import Components


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        host=getattr(args, "host", None),
        port=getattr(args, "port", None),
        context=getattr(args, "context", None),
    )


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from gateway.knowledge.embedded import serve_store
    from gateway.telemetry.exporter import tracer_provider_from_env
    from gateway.web.app import create_app

    settings = _settings(args)
    if not settings.chroma_url:  # an ingest refuses to write the embedded store while it is served
        serve_store(settings.resolved_chroma_path)
    tracer_provider = tracer_provider_from_env(os.environ)  # None unless OTEL_* names an endpoint
    app = create_app(settings, tracer_provider=tracer_provider)
    try:
        uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", access_log=False)
    finally:
        if tracer_provider is not None:
            tracer_provider.shutdown()  # flush the spans still batched
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from gateway.knowledge import command

    return command.run(args, _settings(args))


def cmd_ask(args: argparse.Namespace) -> int:
    from gateway.bootstrap import build_services
    from gateway.domain import ChatRequest, Message, Role
    from gateway.pipeline.run import answer
    from gateway.web.serializers import trust_json

    settings = _settings(args)
    services = build_services(settings)
    request = ChatRequest(messages=(Message(Role.USER, args.question),), model=settings.model_name)
    result = asyncio.run(answer(request, services.answer_parts))
    if args.json:
        print(
            json.dumps(
                {
                    "answer": result.answer,
                    "trust": trust_json(
                        result, services.policy.tiers, services.today(), settings.trust_include_removed_text
                    ),
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


def cmd_eval(args: argparse.Namespace) -> int:
    from gateway.evaluation.command import run_command

    return run_command(args, _settings(args))


def cmd_verify(args: argparse.Namespace, components: Components | None = None) -> int:
    """``components`` builds the verifier and fetcher (default: the configured ones,
    ``checkonly.batch.build_components``)."""
    from gateway.checkonly import batch as verify_batch
    from gateway.models import ModelPool

    settings = _settings(args)
    source = Path(args.file)
    if not source.is_file():
        print(f"trust-gateway: no such file: {source}", file=sys.stderr)
        return 2
    models = ModelPool(settings)
    verifier, fetcher = (components or verify_batch.build_components)(settings, models)
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(Path(args.out).open("w", encoding="utf-8")) if args.out else sys.stdout
        summary = verify_batch.run_file(
            source,
            out,
            sys.stderr,
            verifier,
            fetcher,
            max_sources=settings.verify_max_sources,
            progress=not args.no_progress,
            models=models,
        )
    print(
        f"verified {summary.checked} of {summary.rows} rows; {len(summary.skipped)} skipped",
        file=sys.stderr,
    )
    return 1 if summary.skipped else 0


def cmd_settings(_: argparse.Namespace) -> int:
    for variable, default, description in Settings.documented_variables():
        print(f"{variable}={default}\n    {description}")
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    """``keys hash``: read a key on stdin, print its keys-file line; ``keys generate``: make a new key."""
    import secrets

    from gateway.web.client_keys import hash_key

    if args.keys_command == "generate":
        key = f"tg-{secrets.token_urlsafe(32)}"
        print(f"key (give it to the client application; it is not stored anywhere): {key}")
        print(f"line for GATEWAY_API_KEYS_FILE: {args.name}:{hash_key(key)}")
        return 0
    key = sys.stdin.readline().rstrip("\r\n")
    if not key:
        print("trust-gateway: keys hash: give the key on standard input", file=sys.stderr)
        return 2
    print(f"{args.name}:{hash_key(key)}")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from gateway.audit import command

    return command.run(args, _settings(args))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trust-gateway", description="Clinical trust gateway")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the OpenAI-compatible API")
    serve.add_argument("--host", help="interface to bind (GATEWAY_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (GATEWAY_PORT, default 8000)")
    serve.add_argument("--context", help="operating context in the policy directory (GATEWAY_CONTEXT)")
    serve.set_defaults(func=cmd_serve)

    ingest = sub.add_parser(
        "ingest", help="ingest Markdown/HTML/PDF/URL manifests and JSONL rows into the knowledge index"
    )
    from gateway.knowledge.command import add_arguments as add_ingest_arguments

    add_ingest_arguments(ingest)
    ingest.set_defaults(func=cmd_ingest)

    ask = sub.add_parser("ask", help="answer one question through the whole pipeline")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print the answer and trust report as JSON")
    ask.add_argument("--context", help="operating context (GATEWAY_CONTEXT)")
    ask.set_defaults(func=cmd_ask)

    evaluate = sub.add_parser(
        "eval", help="SourceCheckup/ASTRID metrics for the raw model and the gateway (or replayed answers)"
    )
    from gateway.evaluation.arguments import add_arguments as add_eval_arguments

    add_eval_arguments(evaluate)
    evaluate.set_defaults(func=cmd_eval)

    keys = sub.add_parser("keys", help="client API keys: hash one for the keys file, or generate one")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    keys_hash = keys_sub.add_parser("hash", help="read a key on stdin; print 'name:sha256hex'")
    keys_hash.add_argument("--name", default="client", help="the key's name in logs and limits")
    keys_generate = keys_sub.add_parser("generate", help="make a random key and its keys-file line")
    keys_generate.add_argument("--name", default="client", help="the key's name in logs and limits")
    keys.set_defaults(func=cmd_keys)

    verify = sub.add_parser(
        "verify", help="check answers against their sources (JSONL rows shaped like /v1/verify bodies)"
    )
    verify.add_argument("file", help="input JSONL: one {answer, sources, id?} object per line")
    verify.add_argument("--out", help="write results as JSONL here (default: stdout)")
    verify.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    verify.add_argument("--context", help="operating context (GATEWAY_CONTEXT)")
    verify.set_defaults(func=cmd_verify)

    audit = sub.add_parser(
        "audit", help="audit trail: verify the chain, keys, retention, holds, export, access"
    )
    from gateway.audit.command import add_arguments as add_audit_arguments

    add_audit_arguments(audit)
    audit.set_defaults(func=cmd_audit)

    settings = sub.add_parser("settings", help="list every GATEWAY_* variable with its default")
    settings.set_defaults(func=cmd_settings)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    configure: Callable[[], None] = configure_logging,
    verify_components: Components | None = None,
) -> int:
    """Run one command. ``configure`` sets up logging (structlog onto the current stderr);
    ``verify_components`` builds ``verify``'s verifier and fetcher instead of the configured ones."""
    args = build_parser().parse_args(argv)
    configure()
    command = args.func
    if command is cmd_verify and verify_components is not None:
        command = partial(cmd_verify, components=verify_components)
    try:
        return int(command(args))
    except ConfigurationError as err:
        print(f"trust-gateway: configuration error: {err}", file=sys.stderr)
        return 2
    except GatewayError as err:
        print(f"trust-gateway: {type(err).__name__}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
