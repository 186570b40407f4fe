"""SafeFetcher against a real loopback web site, plus every refused address form (no server needed)."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import pytest

from gateway.errors import FetchError
from gateway.fetching.addresses import blocked_reason, domain_allowed, normalise_domains, parse_ip_host
from gateway.fetching.fetcher import SafeFetcher
from gateway.settings import Settings
from gateway.verification.policy import VerificationPolicy
from gateway.vocabulary import FetchReason


class FakeDNS:
    """An injected resolver: a fixed answer per name; records every lookup."""

    def __init__(self, answers: dict[str, list[str]] | None = None) -> None:
        self.answers = answers or {}
        self.lookups: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.lookups.append(host)
        if host not in self.answers:
            raise OSError(f"no such name {host}")
        return self.answers[host]


def loopback_fetcher(**overrides) -> SafeFetcher:  # type: ignore[no-untyped-def]
    options = {
        "allowed_domains": ["127.0.0.1"],
        "allow_loopback": True,
        "timeout": 5.0,
        "max_bytes": 50_000,
        "max_redirects": 3,
        "resolver": FakeDNS(),
    }
    options.update(overrides)
    return SafeFetcher(**options)


# --- real pages -------------------------------------------------------------------------------


async def test_good_html_page_is_valid_with_extracted_text(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    result = await loopback_fetcher().check(f"{url}/page/flu")
    assert result.valid
    assert result.status == 200
    assert result.reason is None
    assert result.content_type == "text/html"
    assert "sudden high temperature of 38C or above" in result.text
    assert "Cookie settings" not in result.text  # boilerplate is dropped
    assert result.title.startswith("Flu")


async def test_plain_text_page_is_decoded(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    result = await loopback_fetcher().fetch(f"{url}/text/flu")
    assert result.valid
    assert result.text.startswith("Flu symptoms usually come on very quickly")


async def test_redirect_chain_within_the_limit_is_followed_hop_by_hop(site) -> None:  # type: ignore[no-untyped-def]
    pages, url = site
    before = pages.hits["/redirect/1"]
    result = await loopback_fetcher().check(f"{url}/redirect/2")
    assert result.valid
    assert result.final_url == f"{url}/page/flu"
    assert result.url == f"{url}/redirect/2"
    assert pages.hits["/redirect/1"] == before + 1


async def test_redirect_chain_past_the_limit_is_refused(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    result = await loopback_fetcher(max_redirects=2).check(f"{url}/redirect/5")
    assert not result.valid
    assert result.reason is FetchReason.TOO_MANY_REDIRECTS


@pytest.mark.parametrize(
    "location",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://2130706433/",
        "http://[::ffff:127.0.0.1]/",
        "http://10.0.0.1/admin",
    ],
)
async def test_redirect_to_a_blocked_address_is_refused(site, location: str) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    result = await loopback_fetcher().check(f"{url}/to?url={location}")
    assert not result.valid
    assert result.reason is FetchReason.BLOCKED_ADDRESS
    assert result.final_url == location


async def test_redirect_to_a_name_resolving_to_a_private_address_is_refused(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    dns = FakeDNS({"intranet.nhs.uk": ["10.20.30.40"]})
    fetcher = loopback_fetcher(allowed_domains=["127.0.0.1", "nhs.uk"], resolver=dns)
    result = await fetcher.check(f"{url}/to?url=http://intranet.nhs.uk/records")
    assert result.reason is FetchReason.BLOCKED_ADDRESS
    assert dns.lookups == ["intranet.nhs.uk"]


async def test_redirect_to_a_domain_off_the_allow_list_is_refused(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    dns = FakeDNS({"evil.example": ["93.184.216.34"]})
    result = await loopback_fetcher(resolver=dns).check(f"{url}/to?url=https://evil.example/")
    assert result.reason is FetchReason.DOMAIN_NOT_ALLOWED
    assert dns.lookups == []  # refused before any DNS lookup


async def test_streamed_body_over_the_cap_is_refused(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    result = await loopback_fetcher(max_bytes=20_000).check(f"{url}/big")
    assert not result.valid
    assert result.reason is FetchReason.TOO_LARGE
    assert result.text == ""


async def test_declared_length_over_the_cap_is_refused_before_reading(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    result = await loopback_fetcher(max_bytes=20_000).check(f"{url}/big-declared")
    assert result.reason is FetchReason.TOO_LARGE


async def test_slow_drip_hits_the_overall_deadline(site) -> None:  # type: ignore[no-untyped-def]
    # every chunk arrives well within a per-read timeout; only a whole-fetch deadline stops it
    _, url = site
    result = await loopback_fetcher(timeout=1.0, max_bytes=10_000_000).check(f"{url}/slow")
    assert not result.valid
    assert result.reason is FetchReason.TIMEOUT


@pytest.mark.parametrize(
    ("path", "reason", "status"),
    [
        ("/status/404", FetchReason.HTTP_STATUS, 404),
        ("/status/500", FetchReason.HTTP_STATUS, 500),
        ("/page/missing", FetchReason.HTTP_STATUS, 404),
        ("/json", FetchReason.UNSUPPORTED_TYPE, 200),
        ("/empty", FetchReason.EMPTY_TEXT, 200),
    ],
)
async def test_unusable_responses_are_invalid_with_a_reason(site, path, reason, status) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    result = await loopback_fetcher().check(url + path)
    assert (result.valid, result.reason, result.status) == (False, reason, status)


async def test_fetch_raises_fetch_error_with_the_bounded_reason(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    with pytest.raises(FetchError) as caught:
        await loopback_fetcher().fetch(f"{url}/status/404")
    assert caught.value.reason == "http_status"
    assert caught.value.kind == "fetch"


async def test_connection_refused_is_reported(site) -> None:  # type: ignore[no-untyped-def]
    from gateway.testing import refused_port

    with refused_port() as port:
        result = await loopback_fetcher().check(f"http://127.0.0.1:{port}/page/flu")
    assert result.reason is FetchReason.CONNECTION


async def test_connection_goes_to_the_vetted_address_with_the_name_in_host(site) -> None:  # type: ignore[no-untyped-def]
    # "clinic.test" exists only in the injected resolver: the request can only succeed by
    # connecting to the address that was checked, keeping the name in the Host header.
    _, url = site
    port = url.rsplit(":", 1)[1]
    dns = FakeDNS({"clinic.test": ["127.0.0.1"]})
    fetcher = loopback_fetcher(allowed_domains=["clinic.test"], resolver=dns)
    result = await fetcher.fetch(f"http://clinic.test:{port}/host")
    assert result.text == f"Host header was clinic.test:{port}."
    assert dns.lookups == ["clinic.test"]


async def test_international_names_are_matched_and_sent_in_ascii(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    port = url.rsplit(":", 1)[1]
    dns = FakeDNS({"xn--bcher-kva.example": ["127.0.0.1"]})
    fetcher = loopback_fetcher(allowed_domains=["xn--bcher-kva.example"], resolver=dns)
    result = await fetcher.fetch(f"http://Bücher.example:{port}/host")
    assert result.text == f"Host header was xn--bcher-kva.example:{port}."


async def test_loopback_is_refused_without_the_test_switch(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    port = url.rsplit(":", 1)[1]
    dns = FakeDNS({"clinic.test": ["127.0.0.1"]})
    fetcher = loopback_fetcher(
        allowed_domains=["clinic.test", "127.0.0.1"], resolver=dns, allow_loopback=False
    )
    assert (await fetcher.check(f"{url}/page/flu")).reason is FetchReason.BLOCKED_ADDRESS
    assert (await fetcher.check(f"http://clinic.test:{port}/page/flu")).reason is FetchReason.BLOCKED_ADDRESS


# --- cache ------------------------------------------------------------------------------------


async def test_valid_pages_are_cached_until_the_ttl_expires(site) -> None:  # type: ignore[no-untyped-def]
    pages, url = site
    pages.texts["cached"] = "Cached page text about hay fever."
    now = [1000.0]
    fetcher = loopback_fetcher(cache_ttl_seconds=60, clock=lambda: now[0])
    first = await fetcher.check(f"{url}/text/cached")
    second = await fetcher.check(f"{url}/text/cached")
    assert first == second
    assert pages.hits["/text/cached"] == 1
    now[0] += 61
    await fetcher.check(f"{url}/text/cached")
    assert pages.hits["/text/cached"] == 2


async def test_cache_is_bounded_lru_and_per_instance(site) -> None:  # type: ignore[no-untyped-def]
    pages, url = site
    for name in ("a", "b", "c"):
        pages.texts[f"lru-{name}"] = f"Page {name} text."
    fetcher = loopback_fetcher(cache_entries=2)
    for name in ("a", "b", "c"):
        await fetcher.check(f"{url}/text/lru-{name}")
    assert fetcher.cached_urls == 2
    await fetcher.check(f"{url}/text/lru-a")  # evicted: fetched again
    assert pages.hits["/text/lru-a"] == 2
    other = loopback_fetcher()
    assert other.cached_urls == 0


async def test_transient_failures_are_not_cached(site) -> None:  # type: ignore[no-untyped-def]
    _, url = site
    fetcher = loopback_fetcher()
    assert (await fetcher.check(f"{url}/text/later")).reason is FetchReason.HTTP_STATUS
    assert fetcher.cached_urls == 1  # a 404 is the page's answer: cached
    blocked = await fetcher.check("http://10.0.0.1/")
    assert blocked.reason is FetchReason.BLOCKED_ADDRESS
    assert fetcher.cached_urls == 1


# --- refused before any network access ---------------------------------------------------------

BLOCKED_URLS = [
    "http://127.0.0.1/",
    "http://127.8.9.10/",
    "http://2130706433/",  # decimal 127.0.0.1
    "http://0177.0.0.1/",  # octal
    "http://0x7f.1/",  # hex, short
    "http://0x7f000001/",
    "http://017700000001/",
    "http://127.1/",  # short form
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://100.64.0.1/",  # CGNAT
    "http://0.0.0.0/",
    "http://224.0.0.1/",  # multicast
    "http://240.0.0.1/",  # reserved
    "http://255.255.255.255/",
    "http://[::1]/",
    "http://[::]/",
    "http://[fc00::1]/",  # ULA
    "http://[fd12:3456:789a::1]/",
    "http://[fe80::1]/",  # link-local
    "http://[fec0::1]/",  # site-local
    "http://[ff02::1]/",  # multicast
    "http://[::ffff:127.0.0.1]/",  # IPv4-mapped
    "http://[::ffff:a9fe:a9fe]/",  # IPv4-mapped metadata, hex spelling
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
    "http://[2002:a00:1::]/",  # 6to4 of 10.0.0.1
    "https://127.0.0.1:8443/",
]


@pytest.mark.parametrize("url", BLOCKED_URLS)
async def test_blocked_address_forms_are_refused_before_connecting(url: str) -> None:
    dns = FakeDNS()
    fetcher = SafeFetcher(allowed_domains=["nhs.uk"], resolver=dns)
    result = await fetcher.check(url)
    assert not result.valid
    assert result.reason is FetchReason.BLOCKED_ADDRESS, url
    assert result.status is None
    assert dns.lookups == []
    assert fetcher.vet_url(url) == "blocked_address"


@pytest.mark.parametrize("url", ["http://2130706433/", "http://127.1/", "http://[::ffff:127.0.0.1]/"])
async def test_odd_loopback_spellings_stay_blocked_with_the_test_switch(url: str) -> None:
    fetcher = SafeFetcher(allowed_domains=["127.0.0.1"], allow_loopback=True, resolver=FakeDNS())
    assert (await fetcher.check(url)).reason is FetchReason.BLOCKED_ADDRESS


@pytest.mark.parametrize(
    "answers",
    [
        ["10.1.2.3"],
        ["169.254.169.254"],
        ["100.100.100.200"],
        ["::1"],
        ["fd00::5"],
        ["93.184.216.34", "127.0.0.1"],  # one bad answer is enough
        ["::ffff:192.168.0.1"],
    ],
)
async def test_allowed_name_resolving_to_a_private_address_is_refused(answers: list[str]) -> None:
    dns = FakeDNS({"www.nhs.uk": answers})
    fetcher = SafeFetcher(allowed_domains=["nhs.uk"], resolver=dns)
    result = await fetcher.check("https://www.nhs.uk/conditions/flu/")
    assert result.reason is FetchReason.BLOCKED_ADDRESS
    assert dns.lookups == ["www.nhs.uk"]


async def test_unresolvable_name_is_a_connection_failure() -> None:
    fetcher = SafeFetcher(allowed_domains=["nhs.uk"], resolver=FakeDNS())
    assert (await fetcher.check("https://nowhere.nhs.uk/")).reason is FetchReason.CONNECTION


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/",
        "https://nhs.uk.evil.example/",
        "https://evilnhs.uk/",
        "https://8.8.8.8/",
    ],
)
async def test_domains_off_the_allow_list_are_refused_without_dns(url: str) -> None:
    dns = FakeDNS()
    fetcher = SafeFetcher(allowed_domains=["nhs.uk"], resolver=dns)
    assert (await fetcher.check(url)).reason is FetchReason.DOMAIN_NOT_ALLOWED
    assert dns.lookups == []


async def test_empty_allow_list_allows_nothing() -> None:
    fetcher = SafeFetcher(allowed_domains=[], resolver=FakeDNS({"www.nhs.uk": ["93.184.216.34"]}))
    assert (await fetcher.check("https://www.nhs.uk/")).reason is FetchReason.DOMAIN_NOT_ALLOWED


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "gopher://nhs.uk/",
        "ftp://nhs.uk/x",
        "https://user:pass@www.nhs.uk/",
        "https://www.nhs.uk@127.0.0.1/",
        "http:///nohost",
        "not a url",
        "http://[::1/",
    ],
)
async def test_malformed_or_non_http_urls_are_invalid(url: str) -> None:
    fetcher = SafeFetcher(allowed_domains=["nhs.uk"], resolver=FakeDNS())
    assert (await fetcher.check(url)).reason is FetchReason.INVALID_URL


# --- helpers ----------------------------------------------------------------------------------


def test_domain_matching_allows_subdomains_only() -> None:
    allowed = normalise_domains(["NHS.uk", "*.cdc.gov", ".who.int.", ""])
    assert allowed == ("nhs.uk", "cdc.gov", "who.int")
    assert domain_allowed("nhs.uk", allowed)
    assert domain_allowed("www.NHS.uk.", allowed)
    assert domain_allowed("a.b.cdc.gov", allowed)
    assert not domain_allowed("fakenhs.uk", allowed)
    assert not domain_allowed("nhs.uk.attacker.net", allowed)


@pytest.mark.parametrize(
    ("host", "address", "canonical"),
    [
        ("127.0.0.1", "127.0.0.1", True),
        ("2130706433", "127.0.0.1", False),
        ("0177.0.0.1", "127.0.0.1", False),
        ("0x7f.1", "127.0.0.1", False),
        ("127.1", "127.0.0.1", False),
        ("10.1", "10.0.0.1", False),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254", False),
        ("::1", "::1", True),
    ],
)
def test_ip_spellings_are_recognised(host: str, address: str, canonical: bool) -> None:
    assert parse_ip_host(host) == (ipaddress.ip_address(address), canonical)


@pytest.mark.parametrize(
    "host", ["www.nhs.uk", "1.2.3.4.5", "256.1.1.1", "08.1", "example.123", "1.2.3.0x1g"]
)
def test_names_are_not_mistaken_for_addresses(host: str) -> None:
    assert parse_ip_host(host) is None


def test_public_addresses_pass_and_loopback_switch_is_narrow() -> None:
    assert blocked_reason(ipaddress.ip_address("93.184.216.34")) is None
    assert blocked_reason(ipaddress.ip_address("2606:4700::1111")) is None
    assert blocked_reason(ipaddress.ip_address("127.0.0.1"), allow_loopback=True) is None
    assert blocked_reason(ipaddress.ip_address("::1"), allow_loopback=True) is None
    assert blocked_reason(ipaddress.ip_address("10.0.0.1"), allow_loopback=True) is not None
    assert blocked_reason(ipaddress.ip_address("169.254.169.254"), allow_loopback=True) is not None


def test_from_policy_takes_the_url_thresholds() -> None:
    policy = VerificationPolicy(
        url_fetch_timeout=2.5,
        url_max_bytes=1234,
        url_max_redirects=1,
        url_cache_ttl_seconds=10,
        url_allowed_domains=("NHS.uk",),
    )
    fetcher = SafeFetcher.from_policy(policy, Settings(allow_loopback_fetch=True))
    assert (fetcher.timeout, fetcher.max_bytes, fetcher.max_redirects) == (2.5, 1234, 1)
    assert fetcher.allowed_domains == ("nhs.uk",)
    assert fetcher.allow_loopback
    assert not SafeFetcher.from_policy(policy).allow_loopback
