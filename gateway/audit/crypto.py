"""Patient text encrypted at rest: AES-256-GCM (``cryptography``) under keys named by a key id.

A key is written ``KEYID:BASE64URL`` (32 random bytes; ``trust-gateway audit keygen`` prints one).
``GATEWAY_AUDIT_KEY`` holds one or more, comma separated; ``GATEWAY_AUDIT_KEY_FILE`` names a file
with one per line (``#`` comments allowed). Rotation: add the new key *last*; the last key encrypts,
every listed key decrypts, so records written under an older key stay readable while it is listed.

A sealed value is ``gwenc1:KEYID:BASE64URL(nonce || ciphertext || tag)`` with a fresh 96-bit nonce
and the request id as associated data, so a value moved to another request's row does not decrypt.
The same key signs retention checkpoints (HMAC-SHA256 under a key derived from it with HKDF).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from gateway.errors import AuditError
from gateway.validation import refuse

PREFIX = "gwenc1:"
"""Marks a sealed value (format version 1)."""
KEY_BYTES = 32
NONCE_BYTES = 12
_KEY_ID = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")
_SIGNING_INFO = b"trust-gateway audit checkpoint v1"


class KeyUnavailable(AuditError):
    """A sealed value names a key id that is not configured, or does not decrypt under it."""


@dataclass(frozen=True)
class AuditKey:
    key_id: str
    secret: bytes

    def __repr__(self) -> str:  # never print the secret
        return f"AuditKey({self.key_id!r})"


def new_key_text(key_id: str | None = None) -> str:
    """A fresh key as ``KEYID:BASE64URL`` (the id defaults to ``k`` and 8 random hex digits)."""
    ident = key_id or f"k{secrets.token_hex(4)}"
    if not _KEY_ID.match(ident):
        raise ValueError(f"a key id is 1-40 letters, digits, '.', '_' or '-', not {ident!r}")
    return f"{ident}:{base64.urlsafe_b64encode(os.urandom(KEY_BYTES)).decode('ascii')}"


def parse_keys(text: str, source: str) -> list[AuditKey]:
    """Keys from ``KEYID:BASE64URL`` items (commas or lines); ConfigurationError naming ``source``."""
    keys: list[AuditKey] = []
    for number, item in enumerate(re.split(r"[,\n]", text), start=1):
        item = item.split("#", 1)[0].strip()
        if not item:
            continue
        key_id, sep, encoded = item.partition(":")
        if not sep or not _KEY_ID.match(key_id):
            refuse(source, f"key {number}", "must be KEYID:BASE64 (trust-gateway audit keygen)")
        try:
            secret = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        except ValueError:
            refuse(source, key_id, "the key is not valid base64")
        if len(secret) != KEY_BYTES:
            refuse(source, key_id, f"the key must be {KEY_BYTES} bytes, not {len(secret)}")
        if any(k.key_id == key_id for k in keys):
            refuse(source, key_id, "the key id is listed twice")
        keys.append(AuditKey(key_id, secret))
    return keys


class Keyring:
    """The configured audit keys; the last one encrypts and signs."""

    def __init__(self, keys: Sequence[AuditKey]) -> None:
        if not keys:
            raise ValueError("a keyring needs at least one key")
        self._keys = {k.key_id: k for k in keys}
        self.current = keys[-1]

    @classmethod
    def load(cls, key_text: str, key_file: Path | None) -> Keyring | None:
        """The keyring of ``GATEWAY_AUDIT_KEY`` and ``GATEWAY_AUDIT_KEY_FILE`` (file keys first), or
        None when neither is set. A named file that is missing or unreadable is a ConfigurationError."""
        keys: list[AuditKey] = []
        if key_file is not None:
            try:
                text = key_file.read_text(encoding="utf-8")
            except OSError as err:
                refuse(
                    "GATEWAY_AUDIT_KEY_FILE", str(key_file), f"cannot read the audit key file: {err.strerror}"
                )
            keys += parse_keys(text, "GATEWAY_AUDIT_KEY_FILE")
            if not keys:
                refuse("GATEWAY_AUDIT_KEY_FILE", str(key_file), "the file holds no key")
        if key_text.strip():
            for key in parse_keys(key_text, "GATEWAY_AUDIT_KEY"):
                if any(k.key_id == key.key_id for k in keys):
                    refuse("GATEWAY_AUDIT_KEY", key.key_id, "the key id is also in the key file")
                keys.append(key)
        return cls(keys) if keys else None

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(self._keys)

    def seal(self, plaintext: bytes, associated: str) -> str:
        nonce = os.urandom(NONCE_BYTES)
        sealed = AESGCM(self.current.secret).encrypt(nonce, plaintext, associated.encode("utf-8"))
        body = base64.urlsafe_b64encode(nonce + sealed).decode("ascii")
        return f"{PREFIX}{self.current.key_id}:{body}"

    def open(self, token: str, associated: str) -> bytes:
        """The plaintext of a sealed value; KeyUnavailable naming the key id when it cannot be read."""
        key_id, _, body = token.removeprefix(PREFIX).partition(":")
        key = self._keys.get(key_id)
        if key is None:
            raise KeyUnavailable(
                f"the record is encrypted with audit key {key_id!r}, which is not configured"
            )
        try:
            raw = base64.urlsafe_b64decode(body)
            return AESGCM(key.secret).decrypt(
                raw[:NONCE_BYTES], raw[NONCE_BYTES:], associated.encode("utf-8")
            )
        except (InvalidTag, ValueError):
            raise KeyUnavailable(
                f"the record does not decrypt with audit key {key_id!r}: wrong key, or the text was altered"
            ) from None

    def sign(self, body: str, key_id: str | None = None) -> str:
        """HMAC-SHA256 (hex) of ``body`` under a key derived from key ``key_id`` (default: current)."""
        key = self._keys[key_id] if key_id else self.current
        signing = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_SIGNING_INFO).derive(key.secret)
        return hmac.new(signing, body.encode("utf-8"), hashlib.sha256).hexdigest()

    def verify(self, body: str, key_id: str, signature: str) -> bool:
        if key_id not in self._keys:
            return False
        return hmac.compare_digest(self.sign(body, key_id), signature)


def is_sealed(value: str) -> bool:
    return value.startswith(PREFIX)
