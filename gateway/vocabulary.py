"""The bounded vocabularies of verification and of the request's stages, as ``StrEnum``s.

Each value is exactly the string the gateway always wrote, so metrics labels, the JSON of the APIs,
audit rows and the Prometheus rules read the same; code names a member and branches on members, never
on a string. The vocabularies of the pipeline's values (``Scope``, ``VerdictLabel``, ``ConflictKind``,
``RefusalReason``, ...) live beside those values in ``gateway.domain``; the ones here are:

- ``VerifierMethod``: which verifier (or what instead of one) decided a verdict (``Verdict.method``);
- ``VerdictCheck``: the check that decided it (``Verdict.check``), for every verifier;
- ``VerifierFailure``: how a model stage failed on a claim (``Verdict.failure``);
- ``StageName``: the stages of a request (``pipeline.stages.Stage.name``, ``StageError.stage``);
- ``FetchReason``: why a URL gave no usable page (``fetching.FetchResult.reason``);
- the values of the other bounded metric labels (``RequestOutcome``, ``AuditOperation``, ...,
  ``DraftLimit``, ``UpstreamErrorType``, ``Dependency``), which ``gateway.metric_labels`` lists for the
  series it declares.

Unlisted values. Before these were enums a verdict's method, check and failure were any string, and a
stored audit record may hold one no member names (a test double's verifier, a retired check). Such a
value is *unlisted*: an instance of the enum that keeps the stored string (``unlisted``), so that the
record decodes and encodes back to what was written, and metrics fold it into ``other`` as before.
Only two things make one: ``tolerant_decoding()`` (entered by ``gateway.audit.record.load_record``:
msgspec asks the enum for a value it does not know) and ``Vocabulary.unlisted`` (test doubles that
name themselves). Anywhere else an unknown value raises ``ValueError`` like any enum.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum
from typing import Any, Self

_TOLERANT: ContextVar[bool] = ContextVar("gateway_vocabulary_tolerant", default=False)


@contextmanager
def tolerant_decoding() -> Iterator[None]:
    """Inside: a value no member names decodes to an unlisted value (see the module docstring)."""
    token = _TOLERANT.set(True)
    try:
        yield
    finally:
        _TOLERANT.reset(token)


class Vocabulary(StrEnum):
    """A ``StrEnum`` that can carry an unlisted value (old audit records, test doubles)."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, str) and _TOLERANT.get():
            return cls.unlisted(value)
        return None

    @classmethod
    def unlisted(cls, value: str) -> Self:
        """``value`` as an instance of this vocabulary: the member when one has it, else an unlisted
        value keeping the string (equal to it, encoded as it; ``listed`` is False)."""
        if value in cls._value2member_map_:
            return cls(value)
        extra = str.__new__(cls, value)
        extra._name_ = value
        extra._value_ = value
        return extra

    @property
    def listed(self) -> bool:
        """A member of the vocabulary (False: an unlisted value)."""
        return self._value_ in type(self)._value2member_map_


class VerifierMethod(Vocabulary):
    """What decided a verdict (``Verdict.method``): a verifier's name, or how a verdict was given
    without one. ``gateway.metric_labels.VERIFIER_METHODS`` lists the ones counted under their own label."""

    ANCHORING = "anchoring"
    """``QuoteAnchoringVerifier``: the claim's quote occurs in a cited passage."""
    LOCAL = "local"
    """``LocalEntailmentVerifier`` (the cascade's verdicts on the chat path carry it too)."""
    NLI = "nli"
    """The entailment model (``GATEWAY_NLI_MODEL``)."""
    JUDGE = "judge"
    """The LLM judge."""
    WEB = "web"
    """Reserved metric label (``gateway_claim_verdicts_total{method}``) for a web verifier."""
    CASCADE = "cascade"
    """The cascade's own name (its verdicts carry the method of the stage that decided)."""
    REWRITE = "rewrite"
    """Reserved metric label (``gateway_claim_verdicts_total{method}``) for a rewriter's verdict."""
    SOURCE_REWRITE = "source_rewrite"
    """A rewrite to the cited source's own sentence (``cleanup.source_rewriter.SourceCleanup``)."""
    SOURCE_UNAVAILABLE = "source_unavailable"
    """Check-only: no cited source has text, so no verifier ran (``checkonly.service``)."""


WITHOUT_VERIFIER = frozenset({VerifierMethod.SOURCE_REWRITE, VerifierMethod.SOURCE_UNAVAILABLE})
"""Methods of verdicts given without a verifier deciding (metrics count them as ``other``)."""


class VerdictCheck(Vocabulary):
    """The check that decided a verdict (``Verdict.check``, ``ClaimReport.check``)."""

    # nothing to check against (final: no later stage can change the verdict)
    NO_SOURCE = "no_source"
    """The claim cites no source (or, check-only, no source has text)."""
    NO_EVIDENCE = "no_evidence"
    """The cited source has no text."""
    UNKNOWN_SOURCE = "unknown_source"
    """Check-only: the marker names no source."""
    SOURCE_NOT_FETCHED = "source_not_fetched"
    """Check-only: a cited URL could not be fetched (the claim stays ``not_verified``)."""
    # quote anchoring and binding (chat path)
    NO_QUOTE = "no_quote"
    QUOTE_NOT_FOUND = "quote_not_found"
    QUOTE_EXACT = "quote_exact"
    QUOTE_FUZZY = "quote_fuzzy"
    NO_ANCHORED_QUOTE = "no_anchored_quote"
    """The claim's quote is missing or not found: never supported locally (metrics: ``unanchored``)."""
    QUOTE_BOUND = "quote_bound"
    """The claim restates its anchored quote (``binding.restates``)."""
    QUOTE_BINDING = "quote_binding"
    """The claim has words its anchored quote does not contain."""
    RESTATEMENT = "restatement"
    """The claim restates its quote with a listed term, an inflection, a word order or an added hedge."""
    HEDGE_DROPPED = "hedge_dropped"
    """The claim drops or weakens a hedge of its source: a stronger claim, unsupported."""
    # the local verifier
    VERBATIM = "verbatim"
    """The claim is verbatim a sentence or a run of sentences of a cited passage."""
    SIMILARITY = "similarity"
    """Decided by similarity and coverage (no check failed)."""
    NUMBER_MISMATCH = "number_mismatch"
    NEGATION = "negation"
    ANTONYM = "antonym"
    QUANTIFIER = "quantifier"
    ENTITY_MISSING = "entity_missing"
    ROLE_ORDER = "role_order"
    INCOMPLETE_CLAIM = "incomplete_claim"
    """The explicit checks (``verification.checks.results.CheckName``: the same values);
    ``incomplete_claim``: the claim is no complete statement (``checks/form.py``), left undecided."""
    # model stages
    NLI_ENTAILMENT = "nli_entailment"
    NLI_ERROR = "nli_error"
    """The entailment model failed on the claim (``Verdict.failure`` set)."""
    JUDGE = "judge"
    JUDGE_QUOTE_NOT_FOUND = "judge_quote_not_found"
    """The judge's quote is not in any cited passage: its verdict is not trusted."""
    JUDGE_ERROR = "judge_error"
    """The judge failed on the claim (``Verdict.failure`` set)."""
    # cleanup
    PLANTED_INSTRUCTION = "planted_instruction"
    """The claim repeats or rests on an instruction planted in a source (removed, never rewritten)."""


class VerifierFailure(Vocabulary):
    """How a model stage (judge, entailment model) failed on a claim (``Verdict.failure``): the verdict
    is then a closed failure, ``not_verified``, counted in ``gateway_verifier_failures_total{kind}``."""

    TIMEOUT = "timeout"
    ERROR = "error"
    INVALID_OUTPUT = "invalid_output"


class StageName(StrEnum):
    """The stages of a request (``gateway_stage_errors_total{stage}``, ``StageError.stage``, the audit
    record's ``error.stage`` and the request's timings)."""

    TRIAGE = "triage"
    RETRIEVE = "retrieve"
    DRAFT = "draft"
    SPLIT = "split"
    VERIFY = "verify"
    CLEANUP = "cleanup"
    REWRITE = "rewrite"
    """One claim's rewrite inside cleanup (its failure removes that claim, no refusal)."""
    BADGE = "badge"
    RECORD = "record"


class FetchReason(StrEnum):
    """Why a URL gave no usable page. A bounded set: safe as a metric label."""

    INVALID_URL = "invalid_url"
    BLOCKED_ADDRESS = "blocked_address"
    DOMAIN_NOT_ALLOWED = "domain_not_allowed"
    TIMEOUT = "timeout"
    HTTP_STATUS = "http_status"
    TOO_LARGE = "too_large"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    UNSUPPORTED_TYPE = "unsupported_type"
    EMPTY_TEXT = "empty_text"
    CONNECTION = "connection"


# --- metric label vocabularies (``gateway.metric_labels`` lists their values for the series) ---------


class RequestOutcome(StrEnum):
    """Final outcome of a chat request (``gateway_requests_total{outcome}``, the audit row's ``outcome``,
    the log line's). ``CLIENT_DISCONNECTED`` and ``CANCELLED`` are also a run's ``interruption``: it was
    stopped from outside (its client went away, or the server stopped)."""

    ANSWERED = "answered"
    REWRITTEN = "rewritten"
    REFUSED = "refused"
    EMERGENCY = "emergency"
    ENDED_EARLY = "ended_early"
    ERROR = "error"
    CLIENT_DISCONNECTED = "client_disconnected"
    CANCELLED = "cancelled"


class AuditOperation(StrEnum):
    """Audit store operations that can fail (``gateway_audit_errors_total{operation}``)."""

    BEGIN = "begin"
    DELIVER = "deliver"
    COMPLETE = "complete"
    CHECK = "check"


class ModelCallPurpose(StrEnum):
    """Why the gateway called a model (``models.MeteredModel``: the holder of the model)."""

    DRAFT = "draft"
    REWRITE = "rewrite"
    JUDGE = "judge"
    QUERY = "query"


class CallResult(StrEnum):
    """How a model call ended (``gateway_model_calls_total{result}``)."""

    OK = "ok"
    ERROR = "error"


class RewriteSkipReason(StrEnum):
    """Why a failing claim was removed without a rewrite attempt finishing."""

    CAP = "cap"
    DEADLINE = "deadline"


class ToolCallOutcome(StrEnum):
    """What became of the model's tool calls (``gateway_tool_calls_total{outcome}``)."""

    RETURNED = "returned"
    WITHHELD = "withheld"
    """The request ended as an emergency or a failure."""


class CleanupResult(StrEnum):
    """What SourceCleanup did with a claim (``gateway_claim_results_total{outcome}``)."""

    KEPT = "kept"
    """Kept as written."""
    REWRITTEN_SOURCE = "rewritten_source"
    """Rewritten to the source's own sentence."""
    REWRITTEN_MODEL = "rewritten_model"
    """Rewritten by the model rewriter."""
    REMOVED = "removed"


class AuthFailure(StrEnum):
    """Why a request was turned away by authentication (401 missing/invalid, 403 forbidden)."""

    MISSING = "missing"
    INVALID = "invalid"
    FORBIDDEN = "forbidden"


class AccessArea(StrEnum):
    """Which credential a route needs: the area of its access rule (``gateway.web.auth.AccessRule``, a
    guard on its router). ``PUBLIC`` is open and never counted (``gateway_auth_failures_total{area}``
    counts the others)."""

    PUBLIC = "public"
    CLIENT = "client"
    STAFF = "staff"
    METRICS = "metrics"


class DraftLimit(StrEnum):
    """The bound on the model's reply it exceeded (``DraftLimitExceeded.limit``): refused as
    ``malformed_output`` (``gateway_draft_limit_exceeded_total{limit}``)."""

    REPLY_CHARS = "reply_chars"
    LINE_CHARS = "line_chars"
    REPEATED_SENTENCES = "repeated_sentences"
    STATEMENTS = "statements"


class UpstreamErrorType(StrEnum):
    """How a call to a model failed: ``UpstreamError.kind`` of every upstream failure class in
    ``gateway.errors`` (``gateway_upstream_errors_total{type}``)."""

    TIMEOUT = "timeout"
    CONNECTION = "connection"
    RATE_LIMITED = "rate_limited"
    HTTP_STATUS = "http_status"
    MALFORMED = "malformed"
    UPSTREAM_ERROR = "upstream_error"
    QUEUE_FULL = "queue_full"
    QUEUE_TIMEOUT = "queue_timeout"


class Dependency(StrEnum):
    """A shared service ``/readyz`` checks (``gateway_dependency_up{dependency}``, the response's
    ``checks`` and ``failed``)."""

    KNOWLEDGE_STORE = "knowledge_store"
    AUDIT_STORE = "audit_store"
    RATE_LIMITER = "rate_limiter"
