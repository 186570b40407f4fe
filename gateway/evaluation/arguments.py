"""Command-line options of ``trust-gateway eval`` (kept light: imported whenever the CLI starts)."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples per metric."""
DEFAULT_SEED = 20250101
"""Bootstrap seed: the same records always give the same intervals."""

GATEWAY_KEY_VARIABLE = "GATEWAY_EVAL_API_KEY"
"""Environment variable holding the API key sent to a gateway evaluated over HTTP."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=("run", "generate"),
        default="run",
        help="run (default): evaluate; generate: write one question per knowledge-base document",
    )
    parser.add_argument("--questions", type=Path, help="question set (JSONL); default: the bundled set")
    parser.add_argument(
        "--replay", type=Path, help="evaluate recorded answers (JSONL) instead of asking a model"
    )
    parser.add_argument(
        "--systems",
        default="raw,gateway",
        help="comma-separated systems to run: raw (the upstream model alone) and/or gateway",
    )
    parser.add_argument(
        "--gateway-url", help=f"evaluate a running gateway over HTTP (API key from {GATEWAY_KEY_VARIABLE})"
    )
    parser.add_argument(
        "--raw-base-url", help="upstream for the raw system (default GATEWAY_UPSTREAM_BASE_URL)"
    )
    parser.add_argument("--raw-model", help="model for the raw system (default GATEWAY_UPSTREAM_MODEL)")
    parser.add_argument(
        "--out",
        type=Path,
        help="run: output directory (default var/eval/<question set>); generate: the JSONL file to write",
    )
    parser.add_argument("--limit", type=int, help="evaluate only the first N questions")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed")
    parser.add_argument(
        "--checker",
        choices=("local", "judge", "gateway"),
        default="local",
        help="the gateway's verifier (as behind /v1/verify) checking every claim: local (default; its local "
        "stages, support reported as ranges), judge (the configured judge decides the undecided claims "
        "only) or gateway (exactly as the gateway is configured)",
    )
    parser.add_argument(
        "--no-kb-urls",
        action="store_true",
        help="do not resolve cited URLs from the knowledge base's copies; fetch every URL",
    )
    parser.add_argument("--knowledge-dir", type=Path, help="corpus directory (generate, and URL resolution)")
    parser.add_argument("--context", help="operating context (GATEWAY_CONTEXT)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
