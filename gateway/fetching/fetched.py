"""What fetching one URL gave (``FetchResult``); why a URL gave no usable page is a ``FetchReason``
(``gateway.vocabulary``, where the metric labels read it)."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.vocabulary import FetchReason


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
