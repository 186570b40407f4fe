"""Which hosts and addresses may be fetched from: public addresses only, allow-listed domains only.

An IP host in any spelling an OS resolver accepts is parsed as an address; loopback, private,
link-local, CGNAT, reserved and documentation ranges and IPv6 forms embedding them are blocked."""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence

import anyio.to_thread

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""``await resolver(host, port)`` -> the host's addresses as strings (``socket.getaddrinfo`` by default)."""


_BLOCKED_V4 = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8",  # "this network", unspecified
        "10.0.0.0/8",  # RFC 1918
        "100.64.0.0/10",  # CGNAT (RFC 6598)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, cloud metadata (169.254.169.254)
        "172.16.0.0/12",  # RFC 1918
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation
        "192.88.99.0/24",  # 6to4 relay anycast
        "192.168.0.0/16",  # RFC 1918
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, broadcast
    )
)
_BLOCKED_V6 = tuple(
    ipaddress.IPv6Network(n)
    for n in (
        "::/128",  # unspecified
        "::1/128",  # loopback
        "::ffff:0:0/96",  # IPv4-mapped
        "::/96",  # IPv4-compatible (deprecated)
        "64:ff9b:1::/48",  # local-use NAT64
        "100::/64",  # discard
        "2001::/23",  # IETF protocol assignments (Teredo, ORCHID, ...)
        "2001:db8::/32",  # documentation
        "fc00::/7",  # unique local (ULA)
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def blocked_reason(address: IPAddress, allow_loopback: bool = False) -> str | None:
    """Why ``address`` may not be fetched from (a short phrase), or None when it is public.

    ``allow_loopback`` lets 127.0.0.0/8 and ::1 through (tests only); nothing else is relaxed.
    """
    if allow_loopback and address.is_loopback:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return "IPv4-mapped IPv6 address"
        embedded = _embedded_ipv4(address)
        if embedded is not None and blocked_reason(embedded) is not None:
            return "IPv6 address embedding a non-public IPv4 address"
        if any(address in net for net in _BLOCKED_V6):
            return "non-public IPv6 address"
        return None if address.is_global else "non-public IPv6 address"
    if any(address in net for net in _BLOCKED_V4):
        return "non-public IPv4 address"
    return None if address.is_global else "non-public IPv4 address"


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


_LOOSE_V4_PART = re.compile(r"^(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$", re.IGNORECASE)


def parse_ip_host(host: str) -> tuple[IPAddress, bool] | None:
    """The address ``host`` denotes when it is an IP literal in any spelling, else None.

    Returns ``(address, canonical)``: ``canonical`` is False for IPv4 spellings that only
    ``inet_aton``-style parsers accept (decimal "2130706433", octal "0177.0.0.1", hex "0x7f.1",
    shortened "127.1"). IPv6 literals are given without brackets.
    """
    host = host.strip().rstrip(".")
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.split("%", 1)[0]), True
        except ValueError:
            return None
    try:
        return ipaddress.IPv4Address(host), True
    except ValueError:
        pass
    loose = _loose_ipv4(host)
    return (loose, False) if loose is not None else None


def _loose_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """``inet_aton`` semantics: 1 to 4 parts, each decimal, octal (0...) or hex (0x...)."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_LOOSE_V4_PART.match(p) for p in parts):
        return None
    values = []
    for part in parts:
        low = part.lower()
        if low.startswith("0x"):
            values.append(int(low[2:] or "0", 16))
        elif len(low) > 1 and low.startswith("0"):
            values.append(int(low, 8))
        else:
            values.append(int(low))
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for v in head:
        number = number << 8 | v
    number = number << 8 * (4 - len(head)) | last
    return ipaddress.IPv4Address(number)


async def system_resolver(host: str, port: int) -> Sequence[str]:
    """Resolve with the OS resolver, off the event loop (abandoned when the fetch times out)."""

    def lookup() -> list[str]:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        seen: list[str] = []
        for info in infos:
            address = str(info[4][0])
            if address not in seen:
                seen.append(address)
        return seen

    return await anyio.to_thread.run_sync(lookup, abandon_on_cancel=True)


def normalise_domains(domains: Iterable[str]) -> tuple[str, ...]:
    """Lower-case, strip ``*.``/leading dots/trailing dots; drop empties."""
    out: list[str] = []
    for domain in domains:
        d = domain.strip().lower().removeprefix("*.").strip(".")
        if d and d not in out:
            out.append(d)
    return tuple(out)


def domain_allowed(host: str, allowed: Sequence[str]) -> bool:
    """True when ``host`` is one of ``allowed`` (normalised) or a subdomain of one."""
    host = host.lower().rstrip(".")
    return any(host == d or host.endswith("." + d) for d in allowed)
