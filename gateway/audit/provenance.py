"""What a record needs to rebuild its answer, captured when the record is completed.

``RecordProvenance`` (stored in the record's ``provenance``): the gateway's version, the SHA-256 of
the policy files that decided (every file under the policy directory, by relative path), and each
retrieved passage's id, document id and version (the SHA-256 of the passage text the verifier read,
first 16 hex digits). The model, upstream, verifier and operating context are already in the record.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from pathlib import Path

import msgspec

DISTRIBUTION = "clinical-trust-gateway"
VERSION_DIGITS = 16
"""Hex digits of a passage version (64 bits: no accidental collision among one corpus's passages)."""


class PassageVersion(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    document_id: str
    version: str


class RecordProvenance(msgspec.Struct, frozen=True, kw_only=True):
    gateway_version: str
    policy_hash: str
    passages: tuple[PassageVersion, ...] = ()


def passage_version(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:VERSION_DIGITS]


def gateway_version() -> str:
    """The installed distribution's version (read once, when the audit trail is built)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def policy_hash(directory: Path) -> str:
    """SHA-256 over every file under the policy directory (relative path and bytes), hashed once when the
    audit trail is built: policies are read at start-up, so a change takes a restart, which hashes again."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(directory)).encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
