"""Structured logging: one JSON object per line, through structlog.

Two guards run on every event, whoever logs it:

* secrets: a ``Secret`` renders as ``**********`` anyway; in addition any field whose name looks like a
  credential (``api_key``, ``authorization``, ``token``, ``password``, ``secret``) is masked, and a
  ``Bearer ...`` token inside any string is masked;
* patient text: the fields that carry it (``question``, ``answer``, ``messages``, ``content``,
  ``prompt``) are dropped from every event that does not opt in with ``PATIENT_TEXT_OPT_IN=True``; the
  request log line opts in only when the operator turned ``GATEWAY_LOG_PATIENT_TEXT`` on.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

from gateway.telemetry.ids import current_trace_id

MASK = "**********"
PATIENT_TEXT_KEYS = frozenset({"question", "answer", "messages", "content", "prompt", "completion"})
"""Event fields that may hold patient text."""
PATIENT_TEXT_OPT_IN = "_patient_text"
"""Event key (removed before rendering) that lets one event keep its patient-text fields."""
_SECRET_KEY = re.compile(
    r"(?i)(^|[_-])(api[_-]?keys?|authorization|password|passwd|secrets?|token|credentials?|cookie)$"
)
"""Field names of credentials: ``api_key``, ``metrics_token``, ``authorization``; not ``max_tokens``."""
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}")
_NOISY_LOGGERS = (
    "sentence_transformers",
    "httpx",
    "httpcore",
    "httpx2",  # the openai SDK's own httpx fork: an INFO line per upstream call otherwise
    "httpcore2",
    "chromadb",
    "transformers",
    "openai",
)

EventDict = MutableMapping[str, Any]


def mask_secrets(_: Any, __: str, event: EventDict) -> EventDict:
    """structlog processor: mask credential-named fields and bearer tokens in string values."""
    for key, value in list(event.items()):
        if key != "event" and _SECRET_KEY.search(key) and value not in (None, "", False):
            event[key] = MASK
        elif isinstance(value, str) and _BEARER.search(value):
            event[key] = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", value)
    return event


def drop_patient_text(_: Any, __: str, event: EventDict) -> EventDict:
    """structlog processor: drop patient-text fields unless the event opted in."""
    if not event.pop(PATIENT_TEXT_OPT_IN, False):
        for key in PATIENT_TEXT_KEYS.intersection(event):
            del event[key]
    return event


def add_trace_id(_: Any, __: str, event: EventDict) -> EventDict:
    """structlog processor: the OpenTelemetry trace id of the running request, when it is traced."""
    trace_id = current_trace_id()
    if trace_id is not None:
        event.setdefault("trace_id", trace_id)
    return event


def _current_stderr(*_: Any) -> structlog.PrintLogger:
    """A logger on ``sys.stderr`` as it is now, not as it was when logging was configured (a CLI run
    inside a test configures logging while stderr is that test's capture, closed after it)."""
    return structlog.PrintLogger(file=sys.stderr)


def configure_logging(level: str = "INFO", *, stream: TextIO | None = None) -> None:
    """JSON lines on ``stream`` (default stderr), secrets masked, patient text only where opted in."""
    out = stream or sys.stderr
    logging.basicConfig(format="%(message)s", stream=out, level=level)
    factory = structlog.PrintLoggerFactory(file=stream) if stream is not None else _current_stderr
    for noisy in _NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            add_trace_id,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            drop_patient_text,
            mask_secrets,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(default=repr),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        logger_factory=factory,
        cache_logger_on_first_use=False,
    )
