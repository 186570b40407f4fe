"""Fetch a cited web page safely: allow-listed domains only, SSRF-proof, bounded in time and size.

``SafeFetcher`` is the one way the gateway reads a URL from the web (cited URLs of ``/v1/verify``,
URL ingestion). Every request, and every redirect hop, goes through the same gate:

1. The URL is parsed by us (``http``/``https`` only, no user-info, a host). A host that is an IP
   address in *any* spelling an OS resolver would accept ("2130706433", "0177.0.0.1", "0x7f.1",
   "127.1", "[::ffff:127.0.0.1]") is checked as an address; non-canonical IPv4 spellings are refused
   outright, since parsers disagree about them.
2. The host must be an allow-listed domain or one of its subdomains (``url_allowed_domains``).
3. The name is resolved (``socket.getaddrinfo`` in a worker thread, or an injected ``Resolver``) and
   *every* address must be public: loopback, RFC 1918, link-local (cloud metadata 169.254.169.254),
   CGNAT 100.64/10, unspecified, multicast, reserved and documentation ranges, IPv6 loopback, ULA,
   link-local, site-local and IPv4-mapped/NAT64/6to4 forms of the former are refused.
4. The connection goes to the vetted address itself (the URL's host is replaced by the IP; the
   ``Host`` header and TLS SNI/certificate check keep the name), so a DNS answer that changes between
   the check and the connection (rebinding) cannot move the request elsewhere.
5. Redirects are followed by hand, at most ``url_max_redirects``, each hop re-checked from step 1.
6. The body is streamed and abandoned past ``url_max_bytes``; the whole fetch, DNS and redirects
   included, must finish within ``url_fetch_timeout`` (a slow drip cannot hold it open).

The text is extracted with trafilatura (HTML) or decoded (text/plain). Results are cached per
fetcher in a small LRU with a TTL.

Two calls, one result type:

- ``await fetcher.check(url) -> FetchResult`` never raises for a page that cannot be had: the result
  says ``valid`` (SourceCheckup's URL validity: HTTP 200 with non-empty text) and, when not, a
  bounded ``reason``. Use it to measure and report.
- ``await fetcher.fetch(url) -> FetchResult`` returns a valid result or raises ``FetchError`` whose
  ``reason`` is the same bounded label. Use it where a page is required (ingestion).

Reasons: ``invalid_url``, ``blocked_address``, ``domain_not_allowed``, ``timeout``, ``http_status``,
``too_large``, ``too_many_redirects``, ``unsupported_type``, ``empty_text``, ``connection``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

import anyio
import httpx

from gateway.errors import FetchError
from gateway.fetching.addresses import (
    IPAddress,
    Resolver,
    blocked_reason,
    domain_allowed,
    normalise_domains,
    parse_ip_host,
    system_resolver,
)
from gateway.fetching.cache import CACHEABLE_FAILURES, FetchCache
from gateway.fetching.extraction import HTML_TYPES, TEXT_TYPES, extract_text
from gateway.fetching.fetched import FetchResult
from gateway.vocabulary import FetchReason

if TYPE_CHECKING:
    from gateway.settings import Settings
    from gateway.verification.policy import VerificationPolicy

USER_AGENT = "clinical-trust-gateway/0.1 (+source verification)"
"""Sent with every fetch, so site operators can tell who reads their pages."""

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class _Refused(Exception):  # private control flow, never leaves this module: outside the error tree
    """Internal: a fetch stopped for a bounded reason (turned into a FetchResult or a FetchError)."""

    def __init__(
        self, reason: FetchReason, detail: str, status: int | None = None, final_url: str = ""
    ) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.status = status
        self.final_url = final_url


@dataclass(frozen=True)
class _Target:
    """One vetted hop: the URL as written, its host, and the addresses it may connect to."""

    url: str
    host: str
    port: int
    addresses: tuple[IPAddress, ...]


class SafeFetcher:
    """Fetches allow-listed web pages with SSRF protection, limits and a per-instance cache.

    Build one per process (``SafeFetcher.from_policy``) and share it; it holds no open connections
    between calls, so it needs no closing. Safe to call concurrently; at most ``max_concurrency``
    fetches run at once.
    """

    def __init__(
        self,
        *,
        allowed_domains: Sequence[str],
        timeout: float = 5.0,
        max_bytes: int = 2_000_000,
        max_redirects: int = 3,
        cache_ttl_seconds: float = 3600.0,
        cache_entries: int = 256,
        allow_loopback: bool = False,
        resolver: Resolver = system_resolver,
        max_concurrency: int = 4,
        clock: Callable[[], float] = time.monotonic,
        user_agent: str = USER_AGENT,
    ) -> None:
        if timeout <= 0 or max_bytes <= 0 or max_redirects < 0 or max_concurrency < 1:
            raise ValueError("timeout, max_bytes and max_concurrency must be positive, max_redirects >= 0")
        self.allowed_domains = normalise_domains(allowed_domains)
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.allow_loopback = allow_loopback
        self._resolver = resolver
        self._cache = FetchCache(cache_entries, cache_ttl_seconds, clock)
        self._slots = asyncio.Semaphore(max_concurrency)
        self._user_agent = user_agent

    @classmethod
    def from_policy(
        cls,
        policy: VerificationPolicy,
        settings: Settings | None = None,
        *,
        resolver: Resolver = system_resolver,
    ) -> SafeFetcher:
        """The fetcher the policy's ``url_*`` thresholds describe (loopback only if settings allow it)."""
        return cls(
            allowed_domains=policy.url_allowed_domains,
            timeout=policy.url_fetch_timeout,
            max_bytes=policy.url_max_bytes,
            max_redirects=policy.url_max_redirects,
            cache_ttl_seconds=policy.url_cache_ttl_seconds,
            allow_loopback=bool(settings and settings.allow_loopback_fetch),
            resolver=resolver,
        )

    # --- public API

    async def fetch(self, url: str) -> FetchResult:
        """A valid page for ``url``, or FetchError(reason=...) saying why there is none."""
        result = await self.check(url)
        if not result.valid:
            reason = result.reason or FetchReason.CONNECTION
            status = f" (HTTP {result.status})" if result.status is not None else ""
            raise FetchError(f"could not fetch {url!r}: {reason.value}{status}", reason=reason.value)
        return result

    async def fetch_text(self, url: str) -> str:
        """The page's text, or FetchError (the ``PageFetcher`` protocol of ``gateway.evaluation``)."""
        return (await self.fetch(url)).text

    async def check(self, url: str) -> FetchResult:
        """Fetch ``url`` and report; never raises FetchError (an unusable page is ``valid=False``)."""
        cached = self._cache.get(url)
        if cached is not None:
            return cached
        async with self._slots:
            try:
                with anyio.fail_after(self.timeout):
                    result = await self._fetch(url)
            except _Refused as refused:
                result = FetchResult(url, refused.final_url or url, refused.status, "", False, refused.reason)
            except TimeoutError:
                result = FetchResult(url, url, None, "", False, FetchReason.TIMEOUT)
        if result.valid or result.reason in CACHEABLE_FAILURES:
            self._cache.put(url, result)
        return result

    def vet_url(self, url: str) -> str | None:
        """Why ``url`` would be refused before any network access (a FetchReason value), or None.

        Checks the scheme, the host's IP spelling and address, and the allow-list; DNS answers are
        checked only when fetching.
        """
        try:
            self._parse(url)
        except _Refused as refused:
            return refused.reason.value
        return None

    def clear_cache(self) -> None:
        self._cache.clear()

    @property
    def cached_urls(self) -> int:
        return len(self._cache)

    # --- internals

    async def _fetch(self, url: str) -> FetchResult:
        current = url
        for _hop in range(self.max_redirects + 1):
            try:
                target = await self._vet(current)
            except _Refused as refused:
                refused.final_url = refused.final_url or current
                raise
            response = await self._request(target)
            if response.status in _REDIRECT_STATUSES:
                location = response.location
                if not location:
                    raise _Refused(
                        FetchReason.HTTP_STATUS, "redirect without Location", response.status, current
                    )
                current = urljoin(current, location)
                continue
            if response.status != 200:
                raise _Refused(FetchReason.HTTP_STATUS, f"HTTP {response.status}", response.status, current)
            text, title = await extract_text(response.content_type, response.body, response.charset)
            if not text.strip():
                raise _Refused(FetchReason.EMPTY_TEXT, "no text on the page", response.status, current)
            return FetchResult(url, current, 200, text, True, None, response.content_type, title)
        raise _Refused(FetchReason.TOO_MANY_REDIRECTS, "too many redirects", None, current)

    def _parse(self, url: str) -> tuple[str, str, int, IPAddress | None]:
        """(scheme, host, port, address-if-literal); refuses bad URLs, odd IPs and unlisted domains."""
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError:
            raise _Refused(FetchReason.INVALID_URL, "unparsable URL") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise _Refused(FetchReason.INVALID_URL, "only http and https URLs are fetched")
        if parts.username is not None or parts.password is not None:
            raise _Refused(FetchReason.INVALID_URL, "URLs with user-info are not fetched")
        host = (parts.hostname or "").rstrip(".")
        if not host:
            raise _Refused(FetchReason.INVALID_URL, "URL has no host")
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            raise _Refused(FetchReason.INVALID_URL, "host is not a valid domain name") from None
        literal = parse_ip_host(host)
        address: IPAddress | None = None
        if literal is not None:
            address, canonical = literal
            if not canonical:
                raise _Refused(FetchReason.BLOCKED_ADDRESS, "non-canonical IPv4 spelling")
            reason = blocked_reason(address, self.allow_loopback)
            if reason:
                raise _Refused(FetchReason.BLOCKED_ADDRESS, reason)
            host = str(address)
        if not domain_allowed(host, self.allowed_domains):
            raise _Refused(FetchReason.DOMAIN_NOT_ALLOWED, "host is not allow-listed")
        return scheme, host, port or (443 if scheme == "https" else 80), address

    async def _vet(self, url: str) -> _Target:
        _scheme, host, port, address = self._parse(url)
        if address is not None:
            return _Target(url, host, port, (address,))
        try:
            answers = await self._resolver(host, port)
        except OSError:
            raise _Refused(FetchReason.CONNECTION, "name does not resolve") from None
        addresses: list[IPAddress] = []
        for answer in answers:
            try:
                resolved = ipaddress.ip_address(answer.split("%", 1)[0])
            except ValueError:
                raise _Refused(FetchReason.BLOCKED_ADDRESS, "resolver returned a non-address") from None
            if blocked_reason(resolved, self.allow_loopback):
                raise _Refused(FetchReason.BLOCKED_ADDRESS, "name resolves to a non-public address")
            addresses.append(resolved)
        if not addresses:
            raise _Refused(FetchReason.CONNECTION, "name has no address")
        return _Target(url, host, port, tuple(addresses))

    async def _request(self, target: _Target) -> _Response:
        """One HTTP GET to the vetted addresses (first that connects), body capped at max_bytes."""
        last_error = "no address"
        for address in target.addresses:
            try:
                return await self._request_one(target, address)
            except httpx.ConnectError as err:
                last_error = type(err).__name__
                continue
        raise _Refused(FetchReason.CONNECTION, f"could not connect: {last_error}", None, target.url)

    async def _request_one(self, target: _Target, address: IPAddress) -> _Response:
        try:
            pinned = httpx.URL(target.url).copy_with(host=str(address))
        except httpx.InvalidURL:
            raise _Refused(
                FetchReason.INVALID_URL, "URL rejected by the HTTP client", None, target.url
            ) from None
        default_port = 443 if pinned.scheme == "https" else 80
        host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
        if ":" in target.host and target.port == default_port:
            host_header = f"[{target.host}]"
        elif ":" in target.host:
            host_header = f"[{target.host}]:{target.port}"
        headers = {
            "Host": host_header,
            "User-Agent": self._user_agent,
            "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1",
            "Accept-Encoding": "identity",
        }
        extensions = {"sni_hostname": target.host} if pinned.scheme == "https" else {}
        timeout = httpx.Timeout(self.timeout)
        try:
            async with (
                httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as client,
                client.stream("GET", pinned, headers=headers, extensions=extensions) as response,
            ):
                return await self._read(target, response)
        except httpx.TimeoutException:
            raise TimeoutError from None
        except httpx.ConnectError:
            raise
        except httpx.HTTPError as err:
            raise _Refused(FetchReason.CONNECTION, type(err).__name__, None, target.url) from None

    async def _read(self, target: _Target, response: httpx.Response) -> _Response:
        status = response.status_code
        content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if status != 200:
            return _Response(status, response.headers.get("location"), content_type, b"", None)
        if content_type not in HTML_TYPES and content_type not in TEXT_TYPES:
            raise _Refused(FetchReason.UNSUPPORTED_TYPE, f"content type {content_type!r}", status, target.url)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise _Refused(FetchReason.TOO_LARGE, "declared body too large", status, target.url)
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body.extend(chunk)
            if len(body) > self.max_bytes:
                raise _Refused(FetchReason.TOO_LARGE, "body too large", status, target.url)
        return _Response(status, None, content_type, bytes(body), response.charset_encoding)


@dataclass(frozen=True)
class _Response:
    status: int
    location: str | None
    content_type: str
    body: bytes
    charset: str | None
