"""Client API keys: stored hashed, compared in constant time, named (the name, never the key, identifies a
client); and the start-up check that refuses an exposed gateway without keys. See ``gateway.web.auth``."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import structlog

from gateway.settings import Secret, Settings
from gateway.validation import refuse

log = structlog.get_logger("gateway.auth")

_KEY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_HEX_DIGEST = re.compile(r"^[0-9a-f]{64}$")
KEYS_FILE_VAR = "GATEWAY_API_KEYS_FILE"


def hash_key(key: str) -> str:
    """The SHA-256 hex digest a keys file stores for ``key``."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ClientKey:
    """A client application's key, as stored: a non-secret name and the key's SHA-256 digest."""

    name: str
    digest: bytes


def parse_keys_file(text: str, source: str = KEYS_FILE_VAR) -> list[ClientKey]:
    """Read ``name:sha256hex`` lines; ``#`` comments and blank lines are skipped.

    Raises ConfigurationError naming the line for a malformed line or a repeated name (the line's
    content is never echoed: it may be a pasted plain key).
    """
    keys: list[ClientKey] = []
    names: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, digest = line.partition(":")
        name, digest = name.strip(), digest.strip().lower()
        if not sep or not _KEY_NAME.match(name) or not _HEX_DIGEST.match(digest):
            refuse(
                source,
                f"line {number}",
                "expected 'name:sha256hex' (name: letters, digits, '.', '_', '-'; "
                "digest: 64 hex characters from `trust-gateway keys hash`)",
            )
        if name in names:
            refuse(source, f"line {number}", f"key name {name!r} is repeated")
        names.add(name)
        keys.append(ClientKey(name, bytes.fromhex(digest)))
    return keys


class ClientKeyring:
    """The client keys a gateway accepts, compared by digest in constant time."""

    def __init__(self, keys: Sequence[ClientKey]) -> None:
        self._keys = tuple(keys)

    @classmethod
    def from_settings(cls, settings: Settings) -> ClientKeyring:
        keys: list[ClientKey] = []
        if settings.api_keys_file is not None:
            try:
                text = settings.api_keys_file.read_text(encoding="utf-8")
            except OSError as err:
                refuse(
                    KEYS_FILE_VAR, "api_keys_file", f"cannot read {settings.api_keys_file}: {err.strerror}"
                )
            keys += parse_keys_file(text, f"{KEYS_FILE_VAR} ({settings.api_keys_file})")
        keys += _plain_keys(settings.api_keys, "key")
        if settings.page_api_key:
            keys += _plain_keys((settings.page_api_key,), "page")
        return cls(keys)

    @property
    def configured(self) -> bool:
        return bool(self._keys)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self._keys)

    def identify(self, candidate: str) -> str | None:
        """The name of the key ``candidate`` is, or None; compares against every key."""
        given = hashlib.sha256(candidate.encode("utf-8")).digest()
        found: str | None = None
        for key in self._keys:
            if hmac.compare_digest(key.digest, given) and found is None:
                found = key.name
        return found


def _plain_keys(secrets: Iterable[Secret], prefix: str) -> list[ClientKey]:
    present = [s for s in secrets if s]
    if len(present) == 1 and prefix == "page":
        return [ClientKey("page", hashlib.sha256(present[0].reveal().encode("utf-8")).digest())]
    return [
        ClientKey(f"{prefix}{index}", hashlib.sha256(secret.reveal().encode("utf-8")).digest())
        for index, secret in enumerate(present, start=1)
    ]


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings, keyring: ClientKeyring) -> None:
    """Refuse to serve without client keys on a non-loopback host; warn when running open on loopback."""
    if keyring.configured:
        return
    if not is_loopback_host(settings.host):
        refuse(
            "GATEWAY_API_KEYS",
            "api_keys",
            f"no client API key is configured but the gateway is bound to {settings.host!r}; set "
            "GATEWAY_API_KEYS_FILE or GATEWAY_API_KEYS, or bind to 127.0.0.1",
        )
    log.warning(
        "running_without_api_keys",
        host=settings.host,
        detail="no client API key configured: /v1/* is open to anyone who can reach this loopback "
        "address; configure GATEWAY_API_KEYS_FILE before exposing the gateway",
    )
