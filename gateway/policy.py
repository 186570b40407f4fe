"""Policies: the YAML an operator edits, loaded into typed, validated dataclasses.

Layout of a policy directory::

    thresholds.yaml           retrieval, verification, cleanup and refusal thresholds
    tiers.yaml                source tiers, their base trust scores, age decay and matching rules
    contexts/<name>.yaml      an operating context: scope and triage rules
    triage/                   semantic triage: exemplar banks, classifier, thresholds (triage_policy)

Any unknown key, wrong type or out-of-range value stops start-up with a ConfigurationError naming the
file, the dotted key and the reason.
"""

from __future__ import annotations

import dataclasses
import re
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import yaml

from gateway.errors import ConfigurationError
from gateway.triage_policy import TriagePolicy, load_triage_policy


@dataclass(frozen=True)
class RetrievalPolicy:
    top_k: int = 5
    """Passages handed to the model."""
    candidates: int = 30
    """Candidates fetched from each retriever before fusion."""
    min_relevance: float = 0.35
    """Relevance gate: refuse when the best passage's relevance is below this (0..1)."""
    min_passage_relevance: float = 0.2
    """Passages below this relevance are dropped from the context even when others pass."""

    def __post_init__(self) -> None:
        _check_range(self, "top_k", 1, 50)
        _check_range(self, "candidates", 1, 500)
        _check_range(self, "min_relevance", 0.0, 1.0)
        _check_range(self, "min_passage_relevance", 0.0, 1.0)


@dataclass(frozen=True)
class VerificationPolicy:
    quote_fuzzy_threshold: float = 0.85
    """Fuzzy quote anchoring: minimum rapidfuzz partial ratio (0..1) for a quote to count as found."""
    quote_min_chars: int = 12
    """Quotes shorter than this are ignored (too short to anchor anything)."""
    support_threshold: float = 0.5
    """Local verifier: score at or above which a claim is supported."""
    uncertain_band: tuple[float, float] = (0.35, 0.65)
    """Scores in this band are escalated to the LLM judge, when one is configured."""
    judge_budget_per_request: int = 6
    """Most judge calls one request may make; claims past the budget keep the local verdict."""
    local_similarity_floor: float = 0.25
    """Local verifier: MiniLM cosine mapped to 0 in the score (unrelated sentences score about this)."""
    local_similarity_ceiling: float = 0.75
    """Local verifier: MiniLM cosine mapped to 1 in the score (near paraphrases)."""
    local_similarity_weight: float = 0.5
    """Local verifier: weight of similarity in the base score; the rest is content-word coverage."""
    local_candidates: int = 3
    """Local verifier: best-by-cosine evidence spans (sentences, windows) on which the checks run."""
    local_window_sentences: int = 3
    """Local verifier: longest window of consecutive sentences tried as evidence."""
    missing_number_penalty: float = 0.5
    """Local verifier: score multiplier when a claim number is absent from the evidence."""
    missing_entity_penalty: float = 0.8
    """Local verifier: score multiplier when a named entity of the claim is absent from the evidence."""
    missing_quantifier_penalty: float = 0.7
    """Local verifier: score multiplier when a universal claim ("always") meets unqualified evidence."""
    clash_score: float = 0.1
    """Local verifier: score given when a check finds a clash (below any uncertain band: not escalated)."""
    contradiction_similarity: float = 0.6
    """Local verifier: a clash is a contradiction when the evidence is at least this similar (cosine)."""
    unanchored_support_threshold: float = 0.6
    """Unused since quote binding (a chat claim without an anchored quote is never supported locally);
    kept so existing policy files still load."""
    local_combiner: Literal["rules", "learned"] = "rules"
    """Local verifier: "rules" (similarity/coverage mix with penalties) or "learned" (logistic regression)."""
    check_support_probability: float = 0.84
    """Check-only (``/v1/verify``): calibrated probability of support at or above which a claim without
    a quote is supported (leak-calibrated on the dev sets: docs/verification.md)."""
    nli_entailment_threshold: float = 0.9
    """Entailment model (``GATEWAY_NLI_MODEL``): probability of entailment at which a claim is supported."""
    url_fetch_timeout: float = 5.0
    """Seconds allowed to fetch a cited URL."""
    url_max_bytes: int = 2_000_000
    """Largest page body read from a cited URL."""
    url_max_redirects: int = 3
    """Redirects followed when fetching a cited URL."""
    url_cache_ttl_seconds: int = 3600
    """How long a fetched page is reused."""
    url_allowed_domains: tuple[str, ...] = ()
    """Domains (and their subdomains) whose pages may be fetched; empty allows none."""

    def __post_init__(self) -> None:
        _check_range(self, "quote_fuzzy_threshold", 0.0, 1.0)
        _check_range(self, "support_threshold", 0.0, 1.0)
        _check_range(self, "local_similarity_floor", -1.0, 1.0)
        _check_range(self, "local_similarity_ceiling", -1.0, 1.0)
        if self.local_similarity_ceiling <= self.local_similarity_floor:
            raise _field_error(self, "local_similarity_ceiling", "must be above local_similarity_floor")
        for name in (
            "local_similarity_weight",
            "missing_number_penalty",
            "missing_entity_penalty",
            "missing_quantifier_penalty",
            "clash_score",
            "contradiction_similarity",
            "unanchored_support_threshold",
            "check_support_probability",
            "nli_entailment_threshold",
        ):
            _check_range(self, name, 0.0, 1.0)
        _check_range(self, "local_candidates", 1, 50)
        _check_range(self, "local_window_sentences", 1, 10)
        _check_range(self, "judge_budget_per_request", 0, 1000)
        lo, hi = self.uncertain_band
        if not 0.0 <= lo <= hi <= 1.0:
            raise _field_error(self, "uncertain_band", "must be [low, high] with 0 <= low <= high <= 1")


@dataclass(frozen=True)
class SafetyRule:
    id: str
    """Name of the rule, recorded when it fires."""
    patterns: tuple[str, ...]
    """Case-insensitive regular expressions; a claim matching any is safety-critical."""


@dataclass(frozen=True)
class CleanupPolicy:
    rewrite: bool = True
    """Try to rewrite an unsupported claim before removing it."""
    max_removed_share: float = 0.5
    """Refuse the whole answer when more than this share of claims is removed."""
    safety_critical: tuple[SafetyRule, ...] = ()
    """Claims matching these rules refuse the whole answer when they fail verification."""
    rewriter: Literal["auto", "upstream", "extractive"] = "auto"
    """Who rewrites first: the upstream model (``auto`` when one is configured); the fallback, and the
    only rewriter with ``extractive``, is the source's own sentence(s) holding the claim's quote."""
    rewrite_min_similarity: float = 0.8
    """Unused since rewrites are bound to the claim's anchored quote; kept so policy files still load."""
    allow_rewritten_safety_critical: bool = True
    """A failing safety-critical claim whose rewrite passes verification is shown instead of refusing."""
    planted_instruction: tuple[str, ...] = ()
    """Patterns of instructions planted in sources: never evidence; a claim resting on one refuses."""

    def __post_init__(self) -> None:
        _check_range(self, "max_removed_share", 0.0, 1.0)
        _check_range(self, "rewrite_min_similarity", -1.0, 1.0)
        for rule in self.safety_critical:
            _compile_all(rule.patterns, f"cleanup.safety_critical[{rule.id}]")
        _compile_all(self.planted_instruction, "cleanup.planted_instruction")


@dataclass(frozen=True)
class Thresholds:
    retrieval: RetrievalPolicy = field(default_factory=RetrievalPolicy)
    verification: VerificationPolicy = field(default_factory=VerificationPolicy)
    cleanup: CleanupPolicy = field(default_factory=CleanupPolicy)


@dataclass(frozen=True)
class Tier:
    id: str
    label: str
    base_score: float

    def __post_init__(self) -> None:
        _check_range(self, "base_score", 0.0, 1.0)


@dataclass(frozen=True)
class AgeStep:
    older_than_years: float
    """Applies when the source was last reviewed more than this many years ago."""
    penalty: float
    """Subtracted from the base score (the largest matching step applies)."""

    def __post_init__(self) -> None:
        _check_range(self, "older_than_years", 0.0, 200.0)
        _check_range(self, "penalty", 0.0, 1.0)


@dataclass(frozen=True)
class TierRule:
    tier: str
    domains: tuple[str, ...] = ()
    orgs: tuple[str, ...] = ()
    doc_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class TierPolicy:
    tiers: tuple[Tier, ...]
    default_tier: str = "unknown"
    age_steps: tuple[AgeStep, ...] = ()
    undated_penalty: float = 0.0
    """Subtracted when a source carries no date."""
    rules: tuple[TierRule, ...] = ()

    def __post_init__(self) -> None:
        ids = {t.id for t in self.tiers}
        if len(ids) != len(self.tiers):
            raise _field_error(self, "tiers", "tier ids must be unique")
        _check_range(self, "undated_penalty", 0.0, 1.0)
        if self.default_tier not in ids:
            raise _field_error(self, "default_tier", f"{self.default_tier!r} is not a declared tier")
        for rule in self.rules:
            if rule.tier not in ids:
                raise _field_error(self, "rules", f"tier {rule.tier!r} is not declared")

    def tier(self, tier_id: str) -> Tier:
        for t in self.tiers:
            if t.id == tier_id:
                return t
        return self.tier(self.default_tier)


@dataclass(frozen=True)
class TriageRule:
    id: str
    """Name of the rule, recorded in the trust report and the audit."""
    patterns: tuple[str, ...]
    """Case-insensitive regular expressions matched against the question."""
    message: str = ""
    """Template name of the message sent when this rule decides (default by category)."""
    information_exempt: bool = False
    """Emergency rules only: a general question about this red flag that reports nothing personal is
    answered (with the emergency safety note) instead of getting the emergency message."""
    negatable: bool = True
    """Emergency rules only: a negated match ("no chest pain", "denies") does not fire. Set false for
    red flags where a denial must not be trusted (suicidal intent)."""


@dataclass(frozen=True)
class OperatingContext:
    name: str
    description: str
    clinical_terms: tuple[str, ...] = ()
    """Optional patterns that mark a question as clinical even when the semantic health recognition
    would call it non-clinical (a hint that can only keep a question clinical, never a gate)."""
    in_scope: tuple[str, ...] = ()
    """Patterns a clinical question must match to be in scope; empty means every clinical question is."""
    emergency: tuple[TriageRule, ...] = ()
    non_clinical: tuple[TriageRule, ...] = ()
    out_of_scope: tuple[TriageRule, ...] = ()
    referral: str = "your clinician"
    """Who the patient is told to ask about out-of-scope questions."""
    emergency_number: str = "your local emergency number"
    information_questions: tuple[str, ...] = ()
    """Patterns of general information questions ("what are the signs of ...")."""
    personal_report: tuple[str, ...] = ()
    """Patterns that make a question a report about someone's situation now ("I have", "my dad is")."""

    def __post_init__(self) -> None:
        _compile_all(self.clinical_terms, "clinical_terms")
        _compile_all(self.in_scope, "in_scope")
        _compile_all(self.information_questions, "information_questions")
        _compile_all(self.personal_report, "personal_report")
        for group in ("emergency", "non_clinical", "out_of_scope"):
            for rule in getattr(self, group):
                _compile_all(rule.patterns, f"{group}[{rule.id}]")


@dataclass(frozen=True)
class Policy:
    thresholds: Thresholds
    tiers: TierPolicy
    context: OperatingContext
    directory: Path
    triage: TriagePolicy


def load_policy(directory: Path, context: str) -> Policy:
    thresholds = load_file(directory / "thresholds.yaml", Thresholds)
    tiers = load_file(directory / "tiers.yaml", TierPolicy)
    context_file = directory / "contexts" / f"{context}.yaml"
    if not context_file.is_file():
        available = sorted(p.stem for p in (directory / "contexts").glob("*.yaml"))
        raise ConfigurationError(
            str(context_file), "context", f"no such operating context; available: {', '.join(available)}"
        )
    operating_context = load_file(context_file, OperatingContext)
    return Policy(
        thresholds=thresholds,
        tiers=tiers,
        context=operating_context,
        directory=directory,
        triage=load_triage_policy(directory / "triage"),
    )


T = TypeVar("T")


def load_file(path: Path, cls: type[T]) -> T:
    if not path.is_file():
        raise ConfigurationError(str(path), "-", "file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ConfigurationError(str(path), "-", f"not valid YAML: {err}") from None
    return build(cls, data or {}, str(path), "")


def build(cls: type[T], data: Any, source: str, path: str) -> T:
    """Build dataclass ``cls`` from parsed YAML, checking every key and type."""
    if not isinstance(data, dict):
        raise ConfigurationError(source, path or "-", f"expected a mapping, got {type(data).__name__}")
    hints = get_type_hints(cls)
    known = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = set(data) - set(known)
    if unknown:
        key = _join(path, sorted(unknown)[0])
        raise ConfigurationError(source, key, f"unknown key; expected one of {', '.join(known)}")
    values = {name: _coerce(hints[name], data[name], source, _join(path, name)) for name in data}
    try:
        return cls(**values)
    except ConfigurationError as err:
        raise ConfigurationError(source, _join(path, err.key), err.reason) from None
    except TypeError as err:
        raise ConfigurationError(source, path or "-", str(err)) from None


def _coerce(hint: Any, value: Any, source: str, path: str) -> Any:
    origin = get_origin(hint)
    args = get_args(hint)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        return _coerce(next(a for a in args if a is not type(None)), value, source, path)
    if dataclasses.is_dataclass(hint):
        return build(hint, value, source, path)  # type: ignore[arg-type]
    if origin is tuple:
        if not isinstance(value, list):
            raise ConfigurationError(source, path, f"expected a list, got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(args[0], v, source, f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise ConfigurationError(source, path, f"expected a list of {len(args)} items")
        return tuple(
            _coerce(a, v, source, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if origin is Literal:
        if value not in args:
            raise ConfigurationError(source, path, f"must be one of {', '.join(map(str, args))}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigurationError(source, path, f"expected a number, got {value!r}")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigurationError(source, path, f"expected an integer, got {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigurationError(source, path, f"expected true or false, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise ConfigurationError(source, path, f"expected text, got {value!r}")
        return str(value)
    if hint is Path:
        return Path(str(value))
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check_range(obj: object, name: str, lo: float, hi: float) -> None:
    value = getattr(obj, name)
    if not lo <= value <= hi:
        raise _field_error(obj, name, f"must be between {lo} and {hi}, got {value}")


def _field_error(obj: object, name: str, reason: str) -> ConfigurationError:
    return ConfigurationError(type(obj).__name__, name, reason)


def _compile_all(patterns: tuple[str, ...], key: str) -> None:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as err:
            raise ConfigurationError("policy", key, f"bad regular expression {pattern!r}: {err}") from None
