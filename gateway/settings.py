"""Settings: one pydantic-settings model, read from environment variables prefixed ``GATEWAY_``.

Every field has a default that runs the embedded configuration (bundled knowledge base, built-in
extractive responder, no key). ``Settings(...)`` takes only its arguments; ``Settings.from_env`` reads
the environment (lists are comma separated, an empty value unsets an optional path). Bounds are pydantic
constraints on the fields; a bad value, however the settings are built, raises the ConfigurationError
naming the variable and the reason (``gateway.validation.configuration_error``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    Field,
    ModelWrapValidatorHandler,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from gateway.validation import configuration_error, field_error

ENV_PREFIX = "GATEWAY_"
_HTTP = ("http://", "https://"), "must start with http:// or https://"
_URL_SCHEMES = {
    "chroma_url": _HTTP,
    "upstream_base_url": _HTTP,
    "audit_url": (("postgresql://", "postgres://"), "must start with postgresql:// (or be empty for SQLite)"),
    "redis_url": (("redis://", "rediss://", "unix://"), "must start with redis://, rediss:// or unix://"),
}
"""The schemes a URL setting may start with, and the reason when it does not."""


class Secret(SecretStr):
    """A value that never shows itself in a repr, a log line or an error message."""

    def reveal(self) -> str:
        return self.get_secret_value()


def _no_secret() -> Secret:
    return Secret("")


Secrets = Annotated[tuple[Secret, ...], NoDecode]
"""A comma-separated list of secrets in the environment."""

ResponseFormat = Literal["json_schema", "json_object", "text"]
RetrievalMode = Literal["hybrid", "dense", "lexical"]
EmbeddingPrecision = Literal["auto", "bf16", "fp32"]
OnnxWeightsSetting = Literal["auto", "int8", "fp32"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, frozen=True, extra="ignore", use_attribute_docstrings=True
    )

    host: str = "127.0.0.1"
    """Interface the HTTP server binds to."""
    port: Annotated[int, Field(ge=1, le=65535)] = 8000
    """TCP port the HTTP server listens on."""
    data_dir: Path = Path("var")
    """Directory for the embedded index, the audit database and caches."""
    knowledge_dir: Path | None = None
    """Corpus to ingest when the index is missing (default: the bundled knowledge base)."""
    policy_dir: Path | None = None
    """Directory of policy YAML files (default: the bundled policies)."""
    context: str = "general"
    """Operating context to load from ``<policy_dir>/contexts/<context>.yaml``."""
    templates_dir: Path | None = None
    """Directory of Jinja2 templates (default: the bundled templates)."""
    chroma_path: Path | None = None
    """Embedded Chroma directory (default: ``<data_dir>/chroma``)."""
    model_cache_dir: Path | None = None
    """Directory of the exported ONNX graphs of MiniLM (default: ``<data_dir>/cache``). A directory
    kept across restarts or shared by replicas spares each start the export (about 10 s)."""
    chroma_url: str = ""
    """URL of a Chroma server (``http://host:port``); empty means the embedded store."""
    collection: str = "vetted_passages"
    """Chroma collection holding the passages."""
    index_refresh_seconds: Annotated[float, Field(ge=0, le=60)] = 1.0
    """How often a search re-reads the index version to see another process's commits; 0: every search."""
    build_index_if_missing: bool = True
    """Ingest the knowledge directory at start-up when the collection is empty."""
    upstream_base_url: str = ""
    """OpenAI-compatible base URL of the chat model; empty selects the built-in extractive responder."""
    upstream_api_key: Secret = Field(default_factory=_no_secret)
    """API key sent to the upstream."""
    upstream_model: str = "gpt-4o-mini"
    """Model name sent to the upstream."""
    upstream_timeout: PositiveFloat = 30.0
    """Seconds before an upstream call is abandoned."""
    upstream_retries: NonNegativeInt = 1
    """Retries the openai SDK makes on connection errors, 429 and 5xx."""
    upstream_response_format: ResponseFormat = "json_schema"
    """How the upstream's JSON answers (the rewriter's) are requested: json_schema, json_object or text.
    The draft streams JSON Lines and asks for no schema (docs/contract.md)."""
    judge_base_url: str = ""
    """OpenAI-compatible base URL of an LLM judge; empty disables the judge."""
    judge_api_key: Secret = Field(default_factory=_no_secret)
    """API key sent to the judge."""
    judge_model: str = "gpt-4o-mini"
    """Model name sent to the judge."""
    judge_timeout: PositiveFloat = 20.0
    """Seconds before a judge call is abandoned (the claim then fails closed)."""
    nli_model: Path | None = None
    """Local directory of an NLI model (Hugging Face sequence classification or CrossEncoder) that
    decides claims the local checks cannot; unset disables it (docs/verification.md)."""
    nli_timeout: PositiveFloat = 10.0
    """Seconds before an entailment-model call is abandoned (its claims then fail closed)."""
    max_body_bytes: Annotated[int, Field(ge=1024)] = 1_000_000
    """Largest request body accepted, in bytes."""
    audit_path: Path | None = None
    """SQLite audit database (default: ``<data_dir>/audit.sqlite3``)."""
    audit_url: Secret = Field(default_factory=_no_secret)
    """PostgreSQL audit trail shared by replicas (``postgresql://user:pass@host/db``); empty: SQLite."""
    audit_pool_size: Annotated[int, Field(ge=1, le=200)] = 10
    """Most PostgreSQL connections one process keeps for the audit trail."""
    audit_timeout: Annotated[float, Field(gt=0, le=60)] = 5.0
    """Seconds an audit write or read may wait (connection and statement); then the request is refused."""
    audit_key: Secret = Field(default_factory=_no_secret)
    """Audit encryption keys ``KEYID:BASE64``, comma separated; the last encrypts (``audit keygen``)."""
    audit_key_file: Path | None = None
    """File of audit encryption keys, one ``KEYID:BASE64`` per line (the last encrypts)."""
    audit_retention_days: NonNegativeInt = 0
    """Days an audit record is kept before ``trust-gateway audit prune`` deletes it; 0: kept forever."""
    audit_chain_log_seconds: NonNegativeFloat = 300.0
    """Seconds between the audit chain head's log line and metric update; 0 turns them off."""
    store_patient_identifiers: bool = False
    """Keep the request's ``user`` field and metadata in the audit record."""
    log_patient_text: bool = False
    """Include question and answer text in the structured log line."""
    api_keys: Secrets = ()
    """Client API keys (comma separated). Empty: no key needed (allowed on loopback only)."""
    clinician_keys: Secrets = ()
    """Credentials for the clinician view, audit pages and ingestion (comma separated)."""
    admin_keys: Secrets = ()
    """Administrator credentials: everything a clinician key opens, plus the audit access log."""
    allow_loopback_fetch: bool = False
    """Let the URL fetcher reach loopback addresses. For tests only."""
    model_name: str = "trust-gateway"
    """Model id the gateway advertises at /v1/models."""
    page_api_key: Secret = Field(default_factory=_no_secret)
    """API key the patient page at / sends with its chat calls (page users can see it; keep it low-limit)."""
    clinician_session_hours: Annotated[float, Field(gt=0, le=24 * 30)] = 8.0
    """Lifetime of a clinician's signed login cookie, in hours."""
    api_keys_file: Path | None = None
    """File of hashed client API keys, one ``name:sha256hex`` per line (``trust-gateway keys hash``)."""
    metrics_token: Secret = Field(default_factory=_no_secret)
    """Bearer token /metrics requires when set; empty leaves /metrics open (network-restrict it)."""
    max_messages: PositiveInt = 64
    """Most messages one chat request may carry."""
    max_message_chars: PositiveInt = 16_000
    """Longest message content accepted, in characters."""
    max_tokens_cap: PositiveInt = 4096
    """Largest max_tokens / max_completion_tokens accepted; larger values get a 400."""
    rate_limit_per_minute: NonNegativeFloat = 120.0
    """Requests per minute each client key may make to /v1/* (token bucket); 0 disables the limit."""
    rate_limit_burst: PositiveInt = 30
    """Requests a client key may make at once before the per-minute rate applies."""
    redis_url: Secret = Field(default_factory=_no_secret)
    """Redis for rate limits shared by replicas (``redis://host:6379/0``); empty: per process."""
    redis_timeout: Annotated[float, Field(gt=0, le=60)] = 0.5
    """Seconds a rate-limit call to Redis may take; then the request is refused with a 503."""
    upstream_max_concurrency: PositiveInt = 16
    """Upstream calls in flight at once; further calls wait in a bounded queue."""
    upstream_queue_size: NonNegativeInt = 64
    """Calls that may wait for an upstream slot; beyond that a request is refused at once."""
    upstream_queue_timeout: PositiveFloat = 10.0
    """Seconds a call may wait for an upstream slot before the request is refused."""
    upstream_deadline: PositiveFloat = 60.0
    """Total seconds of one request's model calls (draft, rewrites, judge), retries and slow bodies in."""
    verify_max_sources: Annotated[int, Field(ge=1, le=1000)] = 20
    """Most sources one /v1/verify request (or ``verify`` CLI row) may carry; bounds its URL fetches."""
    retrieval_mode: RetrievalMode = "hybrid"
    """Retriever: hybrid (dense + BM25 fused), dense or lexical."""
    retrieval_rerank: bool = False
    """Re-order fused candidates by MiniLM cosine on sentence windows (off: it lost on MedQuAD)."""
    retrieve_max_k: Annotated[int, Field(ge=1, le=500)] = 50
    """Largest ``k`` one /v1/retrieve request may ask for."""
    query_rewrite: bool = False
    """Before retrieval, ask the upstream model to restate the patient's message as a search query (one
    short call, added to the message, never replacing it; needs ``upstream_base_url``)."""
    query_rewrite_deadline: PositiveFloat = 2.0
    """Seconds the query rewrite may take; past that retrieval goes on with the message as it is."""
    embedding_precision: EmbeddingPrecision = "auto"
    """MiniLM arithmetic in torch: auto (bf16 where the CPU has native bfloat16, else fp32), bf16 or fp32."""
    embedding_onnx_weights: OnnxWeightsSetting = "auto"
    """Weights of the ONNX Runtime encoder of small serving calls: auto (int8 where the CPU has int8 dot
    products, else fp32), int8 or fp32."""
    upstream_max_reply_chars: PositiveInt = 200_000
    """Longest model reply accepted, in characters; a longer one is refused as malformed_output."""
    upstream_max_line_chars: PositiveInt = 4_000
    """Longest line (one sentence of the streamed citation contract) accepted, in characters; a longer
    one ends the answer as malformed_output (docs/contract.md)."""
    max_repeated_sentences: PositiveInt = 3
    """Times one sentence may recur in a model reply; more is refused as malformed_output."""
    max_draft_statements: PositiveInt = 300
    """Most statements one model reply may split into; more is refused as malformed_output."""
    max_rewrites_per_request: NonNegativeInt = 8
    """Most model rewrite calls one request may make; further failing claims get only the source rewrite."""
    trust_include_removed_text: bool = False
    """Put the text of removed claims in the client's trust object. Clinician-facing clients only."""
    auth_failures_per_minute: NonNegativeFloat = 10.0
    """Failed authentications per minute a client address may make before it gets 429s; 0 disables."""
    auth_failures_burst: PositiveInt = 10
    """Failed authentications a client address may make at once before the per-minute rate applies."""
    embedding_threads: Annotated[int, Field(ge=0, le=256)] = 0
    """MiniLM threads per process; 0: one per four cores when serving, every core when ingesting."""
    embedding_cache_size: Annotated[int, Field(ge=0, le=1_000_000)] = 4096
    """Query-sized texts whose embeddings are kept (LRU, about 1.5 KB each); 0 disables the cache."""
    otel_capture_content: bool = False
    """Put patient text (the conversation and the model's draft) on OpenTelemetry spans. PHI: off by
    default; turn on only when the trace backend may hold patient data (docs/observability.md)."""

    @field_validator("api_keys", "clinician_keys", "admin_keys", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        """A list from the environment is comma separated."""
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator(
        "data_dir",
        "knowledge_dir",
        "policy_dir",
        "templates_dir",
        "chroma_path",
        "model_cache_dir",
        "nli_model",
        "audit_path",
        "audit_key_file",
        "api_keys_file",
        mode="after",
    )
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @field_validator(*_URL_SCHEMES, mode="after")
    @classmethod
    def _url_scheme(cls, value: str | Secret, info: ValidationInfo) -> str | Secret:
        """A URL setting, when set, starts with one of its schemes (a secret's value is never shown)."""
        text = value.reveal() if isinstance(value, Secret) else value
        schemes, reason = _URL_SCHEMES[str(info.field_name)]
        if text and not text.startswith(schemes):
            raise ValueError(reason)
        return value

    @model_validator(mode="after")
    def _check(self) -> Self:
        """The one check that spans two settings (the bounds are on the fields)."""
        if self.query_rewrite and not self.upstream_base_url:
            raise field_error(self, "query_rewrite", "needs an upstream model (GATEWAY_UPSTREAM_BASE_URL)")
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _as_configuration_error(cls, values: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        """An invalid value, however the settings are built, is the ConfigurationError naming the variable."""
        try:
            return handler(values)
        except ValidationError as err:
            raise configuration_error(err, cls, ENV_PREFIX, env_prefix=ENV_PREFIX) from None

    @property
    def resolved_chroma_path(self) -> Path:
        return self.chroma_path or self.data_dir / "chroma"

    @property
    def resolved_model_cache_dir(self) -> Path:
        return self.model_cache_dir or self.data_dir / "cache"

    @property
    def resolved_audit_path(self) -> Path:
        return self.audit_path or self.data_dir / "audit.sqlite3"

    def with_changes(self, **changes: Any) -> Settings:
        return self._build({**{name: getattr(self, name) for name in type(self).model_fields}, **changes})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from ``GATEWAY_*`` variables; keyword overrides win (the CLI's flags)."""
        values = _Environment(cls, os.environ if environ is None else environ)()
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls._build(values)

    @classmethod
    def _build(cls, values: dict[str, Any]) -> Settings:
        return cls(**values)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the arguments: the environment is read by ``from_env``, never by ``Settings()``."""
        return (init_settings,)

    @classmethod
    def documented_variables(cls) -> list[tuple[str, str, str]]:
        """(variable, default, description) for every setting, for the README and ``--help``."""
        defaults = cls()
        rows = []
        for name, info in cls.model_fields.items():
            value = getattr(defaults, name)
            shown = "" if value is None or value == () or isinstance(value, Secret) else str(value)
            bounds = _bounds(info)
            description = f"{info.description or ''} Bounds: {bounds}." if bounds else info.description or ""
            rows.append((ENV_PREFIX + name.upper(), shown, description))
        return rows


class _Environment(EnvSettingsSource):
    """``GATEWAY_*`` variables of a given mapping (``os.environ``, or a test's dict)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {key.lower(): value for key, value in self._environ.items() if key.startswith(ENV_PREFIX)}

    def prepare_field_value(
        self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool
    ) -> Any:
        """An empty variable unsets an optional setting and turns a switch off, as it always has."""
        if value == "":
            if field.annotation is bool:
                return False
            if not field.is_required() and field.default is None:
                return None
        return super().prepare_field_value(field_name, field, value, value_is_complex)


def _bounds(info: FieldInfo) -> str:
    """A field's numeric bounds as an operator reads them (``1..65535``, ``> 0``, ``> 0, <= 60``)."""
    found = {
        op: getattr(item, op)
        for item in info.metadata
        for op in ("ge", "gt", "le", "lt")
        if getattr(item, op, None) is not None
    }
    if "ge" in found and "le" in found:
        return f"{found['ge']}..{found['le']}"
    symbols = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    return ", ".join(f"{symbols[op]} {value}" for op, value in found.items())
