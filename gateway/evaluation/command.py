"""``trust-gateway eval``: wiring from command-line options to the harness.

trust-gateway eval [--questions Q.jsonl] [--systems raw,gateway] [--gateway-url URL] [--out DIR]
trust-gateway eval --replay ANSWERS.jsonl [--out DIR]
trust-gateway eval generate --out Q.jsonl [--knowledge-dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gateway.bootstrap import build_services, build_verifier
from gateway.errors import ConfigurationError
from gateway.evaluation.arguments import GATEWAY_KEY_VARIABLE
from gateway.evaluation.intervals import BootstrapSpec
from gateway.evaluation.metrics import RANGES, MetricContext
from gateway.evaluation.questions import (
    BUNDLED_QUESTIONS,
    generate_questions,
    load_questions,
    write_questions,
)
from gateway.evaluation.records import Question, UrlStatus
from gateway.evaluation.report import render_report
from gateway.evaluation.runner import RunPaths, collect, open_run, records_by_system, summarise, write_results
from gateway.evaluation.scoring import AnswerChecker, KnowledgeBaseFirst, OperatingPoint, StatementChecker
from gateway.evaluation.systems import HttpGateway, InProcessGateway, RawModelSystem, System, load_replay
from gateway.fetching.fetcher import SafeFetcher
from gateway.knowledge.corpus import SourceDocument
from gateway.knowledge.loaders import load_manifest
from gateway.models import ChatModel, Endpoint, ModelPool
from gateway.models.embedding import Embedder
from gateway.policies import Policy, load_configured_policy
from gateway.resources import bundled
from gateway.services import Services
from gateway.settings import Settings
from gateway.validation import refuse
from gateway.verification.verifier import Verifier
from gateway.vocabulary import ModelCallPurpose


def run_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "generate":
        return asyncio.run(_generate(args, settings))
    return asyncio.run(_run(args, settings))


# ---- generate -------------------------------------------------------------------------------------


async def _generate(args: argparse.Namespace, settings: Settings) -> int:
    if args.out is None:
        refuse("trust-gateway eval generate", "--out", "name the JSONL file to write")
    models = ModelPool(settings)
    model = _raw_model(args, settings, models)
    if model is None:
        refuse(
            "trust-gateway eval generate",
            "GATEWAY_UPSTREAM_BASE_URL",
            "question generation needs an upstream model (set it or pass --raw-base-url)",
        )
    directory = args.knowledge_dir or settings.knowledge_dir or bundled("knowledge")
    documents = load_manifest(directory)
    try:
        questions, failures = await generate_questions(documents, model)
    finally:
        await models.aclose()
    written = write_questions(questions, args.out)
    print(f"wrote {written} questions for {len(documents)} documents to {args.out}")
    for failure in failures:
        print(f"  skipped {failure.document_id}: {failure.reason}")
    return 0 if written else 1


# ---- run ------------------------------------------------------------------------------------------


@dataclass
class _Wiring:
    systems: list[System] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    closers: list[Any] = field(default_factory=list)


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    policy = load_configured_policy(settings)
    wiring = _Wiring()
    if args.replay:
        questions, replay = load_replay(args.replay)
        wiring.systems.append(replay)
        wiring.descriptions[replay.name] = f"recorded answers from {args.replay}"
        source_name = str(args.replay)
    else:
        path = args.questions or BUNDLED_QUESTIONS
        questions = load_questions(path)
        source_name = str(path)
    if args.limit is not None:
        questions = questions[: max(args.limit, 0)]
    embedder = Embedder.from_settings(settings)
    models = ModelPool(settings)  # the raw model's and the checker's judge's (services have their own)
    wiring.closers.append(models.aclose)
    services: Services | None = None
    if not args.replay:
        services = _wire_systems(args, settings, embedder, wiring, models)
    documents = _documents(args, settings, wiring.notes)
    fetcher = SafeFetcher.from_policy(policy.thresholds.verification, settings)
    verifier, point = checker_verifier(args.checker, policy, embedder, services, settings, models)
    urls = KnowledgeBaseFirst(documents, fetcher, enabled=not args.no_kb_urls)
    checker: AnswerChecker = StatementChecker(verifier, urls, point)
    if not wiring.systems:
        refuse("trust-gateway eval", "--systems", "no system left to evaluate")
    out_dir = args.out or settings.data_dir / "eval" / Path(source_name).stem
    paths = RunPaths(out_dir)
    log = open_run(paths, questions, checker)
    try:
        computed = await collect(questions, wiring.systems, checker, log, progress=not args.no_progress)
    finally:
        for close in wiring.closers:
            await close()
        if services is not None:
            services.audit.close()
    grouped = records_by_system(log, questions, [s.name for s in wiring.systems])
    results = evaluation_results(
        grouped, questions, source_name, checker.name, wiring.descriptions, wiring.notes, policy, args, point
    )
    write_results(paths, results)
    paths.report.write_text(
        render_report(settings.templates_dir or bundled("templates"), results, grouped), encoding="utf-8"
    )
    print(
        f"{computed} answers computed, {len(questions) * len(wiring.systems) - computed} resumed from the log"
    )
    print(f"checker: {checker.name} (--checker {point.checker})")
    print(format_summary(results))
    for note in results["notes"]:
        print(f"note: {note}")
    print(f"results: {paths.results}\nreport:  {paths.report}")
    return 0


def evaluation_results(
    grouped: dict[str, Any],
    questions: list[Question],
    source_name: str,
    checker_name: str,
    descriptions: dict[str, str],
    notes: list[str],
    policy: Policy,
    args: argparse.Namespace,
    point: OperatingPoint,
) -> dict[str, Any]:
    notes = list(notes)
    kb_resolved = sum(
        1
        for records in grouped.values()
        for r in records
        for u in r.check.urls
        if u.status is UrlStatus.KNOWLEDGE_BASE
    )
    if kb_resolved:
        notes.append(
            f"{kb_resolved} cited URLs were resolved from the vetted knowledge base's copy of the page, not "
            "fetched; they count as valid (run with --no-kb-urls to fetch every URL)."
        )
    fetched = [
        u
        for records in grouped.values()
        for r in records
        for u in r.check.urls
        if u.status is not UrlStatus.KNOWLEDGE_BASE
    ]
    if fetched and not any(u.valid for u in fetched):
        notes.append(
            f"None of the {len(fetched)} cited URLs outside the knowledge base could be fetched (SSRF-safe "
            "fetcher, allow-listed domains only). Without network access every such URL counts invalid; "
            "run on a machine with internet access for a real URL-validity figure."
        )
    notes.append(
        f"Claims were checked by the gateway's own verifier, the one behind /v1/verify and the chat path, "
        f"at this operating point: {point.describe()}."
    )
    run = {
        "questions_file": source_name,
        "questions": len(questions),
        "systems": descriptions,
        "checker": checker_name,
        "operating_point": point.to_json(),
    }
    results = summarise(
        grouped,
        MetricContext(relevance_gate=policy.thresholds.retrieval.min_relevance),
        BootstrapSpec(resamples=args.resamples, seed=args.seed),
        run,
        notes,
    )
    results["notes"].extend(range_notes(results, point))
    return results


def range_notes(results: dict[str, Any], point: OperatingPoint) -> list[str]:
    """What the support ranges mean for this run: undecided claims make them ranges, not figures."""
    undecided = {
        name: system["support_ranges"]["statement_support"]["undecided"]
        for name, system in results["systems"].items()
        if system["support_ranges"]["statement_support"]["undecided"]
    }
    if not undecided:
        return []
    shares = ", ".join(f"{name} {share:.1%}" for name, share in undecided.items())
    if point.judge:
        why = (
            "the judge left them undecided (its budget per answer, verification.judge_budget_per_request, "
            "was spent, or it failed on them: failures are never counted as a decision)"
        )
    else:
        why = "no judge was used; a judge is needed for a point figure (--checker judge)"
    return [
        f"Statement- and response-level support are ranges, not point figures: the checker left claims "
        f"undecided ({shares}) and {why}. The low end counts only verified claims, the high end counts "
        "the undecided claims as supported too; the truth lies in between."
    ]


def _wire_systems(
    args: argparse.Namespace, settings: Settings, embedder: Embedder, wiring: _Wiring, models: ModelPool
) -> Services | None:
    wanted = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = sorted(set(wanted) - {"raw", "gateway"})
    if unknown:
        refuse("trust-gateway eval", "--systems", f"unknown system(s): {', '.join(unknown)}")
    services: Services | None = None
    if "raw" in wanted:
        raw = _raw_model(args, settings, models)
        if raw is None:
            wiring.notes.append(
                "The raw system was skipped: it needs an upstream model (GATEWAY_UPSTREAM_BASE_URL or "
                "--raw-base-url) and none is configured."
            )
        else:
            wiring.systems.append(RawModelSystem(raw))
            model = args.raw_model or settings.upstream_model
            wiring.descriptions["raw"] = (
                f"{model} at {args.raw_base_url or settings.upstream_base_url}, no gateway"
            )
    if "gateway" in wanted:
        if args.gateway_url:
            http = HttpGateway(args.gateway_url, os.environ.get(GATEWAY_KEY_VARIABLE, ""))
            wiring.systems.append(http)
            wiring.closers.append(http.aclose)
            wiring.descriptions["gateway"] = f"running gateway at {args.gateway_url} (HTTP)"
        else:
            services = build_services(settings, embedder=embedder)
            wiring.systems.append(InProcessGateway(services))
            wiring.closers.append(services.aclose_models)
            wiring.descriptions["gateway"] = (
                f"in-process pipeline, upstream {services.drafter.name}, verifier {services.verifier.name}"
            )
    return services


def _raw_model(args: argparse.Namespace, settings: Settings, models: ModelPool) -> ChatModel | None:
    """The upstream endpoint's model (or ``--raw-base-url`` / ``--raw-model``), under its limits."""
    base_url = args.raw_base_url or settings.upstream_base_url
    if not base_url:
        return None
    endpoint = replace(
        Endpoint.upstream(settings), base_url=base_url, model=args.raw_model or settings.upstream_model
    )
    return models.model(endpoint, ModelCallPurpose.DRAFT)


def _documents(args: argparse.Namespace, settings: Settings, notes: list[str]) -> list[SourceDocument]:
    directory = args.knowledge_dir or settings.knowledge_dir or bundled("knowledge")
    try:
        return load_manifest(directory)
    except ConfigurationError as err:
        notes.append(f"Knowledge-base URLs could not be loaded ({err}); every cited URL had to be fetched.")
        return []


def checker_verifier(
    choice: str,
    policy: Policy,
    embedder: Embedder,
    services: Services | None,
    settings: Settings,
    models: ModelPool,
) -> tuple[Verifier, OperatingPoint]:
    """The product verifier (the construction behind ``/v1/verify``) at the operating point ``choice``
    names: ``local`` without the judge, ``judge`` with the configured judge deciding only the claims the
    local stages leave undecided, ``gateway`` exactly as the gateway is configured."""
    thresholds = policy.thresholds.verification
    if choice == "judge" and not settings.judge_base_url:
        refuse(
            "trust-gateway eval",
            "--checker",
            "'judge' needs a configured judge: set GATEWAY_JUDGE_BASE_URL (and GATEWAY_JUDGE_MODEL, "
            "GATEWAY_JUDGE_API_KEY)",
        )
    if choice == "gateway" and services is not None:
        verifier = services.verifier
    elif choice == "local":
        local_only = settings.model_copy(update={"judge_base_url": ""})
        verifier = build_verifier(local_only, policy, embedder, models)
    else:
        verifier = build_verifier(settings, policy, embedder, models)
    judged = choice != "local" and bool(settings.judge_base_url)
    return verifier, OperatingPoint.of(choice, verifier, thresholds, judged)


_SUMMARY_METRICS = (
    "url_validity",
    "statement_support",
    "response_support",
    "conversational_faithfulness",
    "refusal_accuracy",
    "context_relevance",
    "supported_answer_rate",
    "in_scope_refusal_rate",
    "latency_median",
    "latency_p95",
)


def format_summary(results: dict[str, Any]) -> str:
    from gateway.evaluation.report import fmt_estimate, fmt_range

    systems = list(results["systems"])
    point = results.get("run", {}).get("operating_point")
    lines = [f"operating point: {point['description']}"] if point else []
    lines.append(f"{'metric':32}" + "".join(f"{s:>34}" for s in systems))
    for metric_id in _SUMMARY_METRICS:
        label = results["definitions"][metric_id]["label"]
        cells = [
            fmt_estimate(results["systems"][s]["metrics"][metric_id], not metric_id.startswith("latency"))
            for s in systems
        ]
        lines.append(f"{label:32}" + "".join(f"{c:>34}" for c in cells))
        if metric_id in RANGES:
            ranged = [fmt_range(results["systems"][s]["support_ranges"][metric_id]) for s in systems]
            lines.append(f"{'  range (verified .. +undecided)':32}" + "".join(f"{c:>34}" for c in ranged))
    for name in systems:
        measured = results["systems"][name].get("agreement")
        if measured:
            lines.append(format_agreement(name, measured))
    return "\n".join(lines)


def format_agreement(system: str, measured: dict[str, Any]) -> str:
    """The harness against the human labels, in two lines."""
    decided, forced = measured["where_decided"], measured["forced"]

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1%}"

    def num(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    inside = {True: "inside", False: "OUTSIDE", None: "n/a"}
    return (
        f"{system}: against {measured['labelled_claims']} human-labelled claims: decides "
        f"{pct(measured['decided_share'])}; where it decides, agreement {pct(decided['agreement'])}, "
        f"balanced accuracy {num(decided['balanced_accuracy'])} "
        f"(forced yes/no: {pct(forced['agreement'])}, {num(forced['balanced_accuracy'])})\n"
        f"{system}: human statement-level support {pct(measured['human_statement_support'])} "
        f"({inside[measured['statement_support_inside_range']]} the range), response-level "
        f"{pct(measured['human_response_support'])} "
        f"({inside[measured['response_support_inside_range']]} the range)"
    )
