"""``trust-gateway audit export``: records as JSON Lines (FHIR R4 to follow)."""

from __future__ import annotations

import datetime as dt
from typing import TextIO

from gateway.audit.base import AuditStore
from gateway.settings import Settings


def write_export(
    store: AuditStore, settings: Settings, since: dt.datetime, until: dt.datetime, fmt: str, out: TextIO
) -> int:
    del settings, fmt
    count = 0
    for _, text in store.records_between(since, until):
        out.write(text.replace("\n", " ") + "\n")
        count += 1
    return count
