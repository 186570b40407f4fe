"""What fetching one URL gave (``FetchResult``) and why a URL gave no usable page (``FetchReason``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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


@dataclass(frozen=True)
class FetchResult:
    """What fetching one URL gave.

    ``valid`` is SourceCheckup's URL validity: the final response was HTTP 200 and yielded non-empty
    text. When not valid, ``reason`` says why and ``text`` is empty; ``status`` is the last HTTP
    status received (None when no response was received, e.g. a refused address).
    """

    url: str
    """The URL as asked for."""
    final_url: str
    """The URL of the last hop (after redirects); equals ``url`` when nothing was fetched."""
    status: int | None
    text: str
    valid: bool
    reason: FetchReason | None = None
    content_type: str = ""
    """The media type of the final response (``text/html``), without parameters."""
    title: str = ""
    """The page title trafilatura found (HTML only); may be empty."""
