"""SSRF through every door that takes a URL: cited sources of ``/v1/verify`` and ingestion manifests.

A real web site runs on 127.0.0.1 (tests/support/pages.py) and counts its hits, so "refused" is
checked twice: the gateway says why, and the site saw no request. The core address rules are unit
tested in tests/unit/test_fetch.py; this suite drives them end to end, through HTTP and the CLI path.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.errors import FetchError
from gateway.fetching.fetcher import SafeFetcher
from gateway.settings import Settings
from tests.support.components import with_components
from tests.support.stack import running_gateway

BLOCKED_REASONS = {"blocked_address", "invalid_url", "domain_not_allowed"}


def loopback_spellings(port: int) -> list[str]:
    """The same loopback page, spelled every way a resolver or URL parser might accept."""
    hosts = [
        "127.0.0.1",
        "127.0.0.2",
        "2130706433",  # decimal
        "0177.0.0.1",  # octal
        "0x7f.0.0.1",  # hex
        "0x7f000001",
        "127.1",  # shortened
        "017700000001",
        "[::1]",
        "[::ffff:127.0.0.1]",  # IPv4-mapped
        "[::ffff:7f00:1]",
        "[0:0:0:0:0:ffff:127.0.0.1]",
        "[::127.0.0.1]",  # IPv4-compatible
        "[64:ff9b::7f00:1]",  # NAT64 of 127.0.0.1
        "[2002:7f00:1::]",  # 6to4 of 127.0.0.1
        "localhost",
        "localhost.",
        "0.0.0.0",
        "0",
        "[::]",
    ]
    return [f"http://{host}:{port}/page/flu" for host in hosts]


PRIVATE_URLS = [
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://192.168.1.1/admin",
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://100.64.0.1/",  # CGNAT
    "http://[fd00::1]/",  # ULA
    "http://[fe80::1%25eth0]/",  # link-local with zone
    "http://[::ffff:169.254.169.254]/",
    "http://0xa9fea9fe/",  # 169.254.169.254 in hex
    "http://2852039166/",  # 169.254.169.254 in decimal
    "http://user:pass@www.nhs.uk/",  # user-info
]
ODD_SCHEMES = ["file:///etc/passwd", "gopher://127.0.0.1:25/", "ftp://www.nhs.uk/", "dict://127.0.0.1:11211/"]


def verify(url: str, cited: str, extra: dict[str, Any] | None = None) -> httpx.Response:
    body = {"answer": "Flu usually lasts about a week [s].", "sources": [{"id": "s", "url": cited}]}
    return httpx.post(f"{url}/v1/verify", json=body | (extra or {}), timeout=30)


def assert_refused(response: httpx.Response, cited: str) -> str:
    assert response.status_code == 200, response.text
    data = response.json()
    (checked,) = data["url_validity"]["urls"]
    assert checked["valid"] is False, cited
    assert checked["reason"] in BLOCKED_REASONS, (cited, checked["reason"])
    assert checked["status"] is None  # no response was ever received
    assert all(c["verdict"] != "supported" for c in data["claims"])
    return str(checked["reason"])


@pytest.fixture(scope="module")
def ssrf_gateway(module_services):  # type: ignore[no-untyped-def]
    services = module_services()
    with running_gateway(services) as url:
        yield url, services


def test_cited_urls_to_loopback_in_any_spelling_are_never_fetched(site, ssrf_gateway) -> None:  # type: ignore[no-untyped-def]
    pages, site_url = site
    url, _ = ssrf_gateway
    port = int(site_url.rsplit(":", 1)[1])
    before = sum(pages.hits.values())
    for cited in loopback_spellings(port):
        assert_refused(verify(url, cited), cited)
    assert sum(pages.hits.values()) == before


@pytest.mark.parametrize("cited", PRIVATE_URLS)
def test_cited_urls_to_private_ranges_are_refused(ssrf_gateway, cited) -> None:  # type: ignore[no-untyped-def]
    url, _ = ssrf_gateway
    assert_refused(verify(url, cited), cited)


@pytest.mark.parametrize("cited", ODD_SCHEMES)
def test_cited_urls_with_other_schemes_are_a_400_naming_the_field(ssrf_gateway, cited) -> None:  # type: ignore[no-untyped-def]
    url, _ = ssrf_gateway
    response = verify(url, cited)
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "sources[0].url"


def test_even_an_allow_listed_ip_literal_is_refused_when_private(site, module_services) -> None:  # type: ignore[no-untyped-def]
    """The allow-list is not the only wall: the address rules hold for hosts the operator listed."""
    pages, site_url = site
    port = int(site_url.rsplit(":", 1)[1])
    services = module_services()
    fetcher = SafeFetcher(
        allowed_domains=["127.0.0.1", "localhost", "10.0.0.1", "2130706433", "::1"], timeout=3
    )
    services = with_components(services, fetcher=fetcher)
    with running_gateway(services) as url:
        reasons = {
            assert_refused(verify(url, cited), cited)
            for cited in (
                f"http://127.0.0.1:{port}/page/flu",
                f"http://localhost:{port}/page/flu",
                f"http://2130706433:{port}/page/flu",
                f"http://[::1]:{port}/page/flu",
                "http://10.0.0.1/",
            )
        }
    assert reasons == {"blocked_address"}
    assert pages.hits["/page/flu"] == 0


class MapResolver:
    """DNS answers under test control: public-looking names that resolve to private addresses."""

    def __init__(self, answers: dict[str, Sequence[str]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        return self.answers[host]


def test_dns_names_resolving_to_private_addresses_are_refused(module_services) -> None:  # type: ignore[no-untyped-def]
    resolver = MapResolver(
        {
            "intranet.nhs.uk": ["10.1.2.3"],
            "metadata.nhs.uk": ["169.254.169.254"],
            "mixed.nhs.uk": ["93.184.216.34", "127.0.0.1"],  # one bad answer is enough
            "v6.nhs.uk": ["fd12::1"],
            "mapped.nhs.uk": ["::ffff:192.168.0.1"],
        }
    )
    services = module_services()
    fetcher = SafeFetcher(allowed_domains=["nhs.uk"], resolver=resolver, timeout=3)
    services = with_components(services, fetcher=fetcher)
    with running_gateway(services) as url:
        for host in resolver.answers:
            reason = assert_refused(verify(url, f"https://{host}/conditions/flu/"), host)
            assert reason == "blocked_address"
    assert sorted(set(resolver.asked)) == sorted(resolver.answers)


def test_redirects_to_private_addresses_are_refused_at_the_hop(site, module_services) -> None:  # type: ignore[no-untyped-def]
    """An allowed public page that redirects inwards: each hop is vetted again."""
    pages, site_url = site
    port = int(site_url.rsplit(":", 1)[1])
    # "www.nhs.uk" is pointed at the loopback site; loopback is allowed for this test only, so the
    # first hop is fetched and the redirect target is what must be refused.
    resolver = MapResolver({"www.nhs.uk": ["127.0.0.1"], "evil.nhs.uk": ["10.9.9.9"]})
    services = module_services()
    fetcher = SafeFetcher(allowed_domains=["nhs.uk"], resolver=resolver, allow_loopback=True, timeout=3)
    services = with_components(services, fetcher=fetcher)
    targets = {
        "http://169.254.169.254/latest/meta-data/": BLOCKED_REASONS,
        "http://10.0.0.1/": BLOCKED_REASONS,
        # httpx itself rejects this Location header (RemoteProtocolError): refused as "connection"
        "http://0177.0.0.1/": BLOCKED_REASONS | {"connection"},
        "http://[::ffff:10.0.0.1]/": BLOCKED_REASONS,
        f"http://evil.nhs.uk:{port}/page/flu": BLOCKED_REASONS,
        "file:///etc/passwd": BLOCKED_REASONS,
    }
    with running_gateway(services) as url:
        for target, reasons in targets.items():
            before = pages.hits["/to"]
            cited = f"http://www.nhs.uk:{port}/to?url={target}"
            response = verify(url, cited)
            data = response.json()
            (checked,) = data["url_validity"]["urls"]
            assert checked["valid"] is False, target
            assert checked["reason"] in reasons, (target, checked["reason"])
            assert pages.hits["/to"] == before + 1  # the first hop happened; the second did not
    assert pages.hits["/page/flu"] == 0


def test_ingestion_urls_go_through_the_same_gate(site, tmp_path: Path) -> None:
    from gateway.knowledge.command import safe_fetch

    pages, site_url = site
    port = int(site_url.rsplit(":", 1)[1])
    with safe_fetch(Settings(data_dir=tmp_path)) as fetch:
        for cited in [*loopback_spellings(port), *PRIVATE_URLS, *ODD_SCHEMES]:
            with pytest.raises(FetchError) as info:
                fetch(cited)
            assert info.value.reason in BLOCKED_REASONS, cited
    assert pages.hits["/page/flu"] == 0


def test_ingestion_manifest_with_a_private_url_is_a_load_failure(site, tmp_path: Path) -> None:
    from gateway.knowledge.command import safe_fetch
    from gateway.knowledge.loaders import LoadFailure, iter_manifest

    pages, site_url = site
    (tmp_path / "manifest.yaml").write_text(
        "documents:\n"
        f"  - {{id: internal, url: '{site_url}/page/flu', title: Flu, org: NHS, tier: guideline}}\n"
        "  - {id: meta, url: 'http://169.254.169.254/latest/meta-data/', title: M, org: NHS}\n",
        encoding="utf-8",
    )
    with safe_fetch(Settings(data_dir=tmp_path / "data")) as fetch:
        loaded = list(iter_manifest(tmp_path, fetch))
    assert len(loaded) == 2
    assert all(isinstance(item, LoadFailure) for item in loaded)
    assert pages.hits["/page/flu"] == 0
