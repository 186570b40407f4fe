"""``trust-gateway audit ...``: verify the chain, print its head, make a key, prune, legal holds,
export, and the access log. Each opens the configured store (SQLite file or PostgreSQL) directly.

Exit codes: 0 done (``verify``: the chain is intact), 1 ``verify`` found a problem, 2 a usage or
configuration error (named on standard error).
"""

from __future__ import annotations

import argparse
import datetime as dt
import getpass
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

import structlog

from gateway.audit import load_keyring, open_audit_store
from gateway.audit.chain import ChainHead
from gateway.audit.crypto import new_key_text
from gateway.audit.integrity import prune_store, retention_cutoff, verify_store
from gateway.audit.ledger import access_now
from gateway.audit.store import AuditStore
from gateway.settings import Settings

log = structlog.get_logger("gateway.audit")

RETENTION_FLOOR_DAYS = 183
"""Six months: the EU AI Act's minimum for automatically generated logs (Art. 19, Art. 26(6))."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="audit_command", required=True)
    verify = sub.add_parser(
        "verify", help="walk the chain; name the first record edited, deleted, inserted or reordered"
    )
    verify.add_argument(
        "--expect-head", help="an anchored head SEQ:SHA256 (from the log or the metric) to compare"
    )
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    sub.add_parser("head", help="print the chain head SEQ:SHA256 (to anchor elsewhere)")
    keygen = sub.add_parser("keygen", help="print a new audit encryption key KEYID:BASE64")
    keygen.add_argument("--id", dest="key_id", help="the key id (default: k and 8 random hex digits)")
    prune = sub.add_parser(
        "prune", help="delete records older than GATEWAY_AUDIT_RETENTION_DAYS (not on hold)"
    )
    prune.add_argument("--days", type=int, help="override GATEWAY_AUDIT_RETENTION_DAYS for this run")
    prune.add_argument("--force", action="store_true", help="prune even when the chain does not verify")
    hold = sub.add_parser("hold", help="put a request on legal hold: prune never deletes it")
    hold.add_argument("request_id")
    hold.add_argument("--reason", required=True, help="why (a case or matter reference)")
    release = sub.add_parser("release", help="lift a legal hold")
    release.add_argument("request_id")
    sub.add_parser("holds", help="list the requests on legal hold")
    export = sub.add_parser("export", help="export records as JSON Lines or FHIR R4 AuditEvent + Provenance")
    export.add_argument("--since", required=True, help="ISO date or time, inclusive (UTC unless it says)")
    export.add_argument("--until", required=True, help="ISO date or time, exclusive (UTC unless it says)")
    export.add_argument("--format", choices=("jsonl", "fhir"), default="jsonl")
    export.add_argument("--out", help="write here (default: standard output)")
    access = sub.add_parser("access", help="list who viewed which record, and every export (newest first)")
    access.add_argument("--limit", type=int, default=100)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.audit_command == "keygen":
        print(new_key_text(args.key_id))
        return 0
    commands: dict[str, Callable[[argparse.Namespace, Settings, AuditStore], int]] = {
        "verify": _verify,
        "head": _head,
        "prune": _prune,
        "hold": _hold,
        "release": _release,
        "holds": _holds,
        "export": _export,
        "access": _access,
    }
    store = open_audit_store(settings)
    try:
        return commands[args.audit_command](args, settings, store)
    finally:
        store.close()


def _verify(args: argparse.Namespace, settings: Settings, store: AuditStore) -> int:
    try:
        anchor = ChainHead.parse(args.expect_head) if args.expect_head else None
    except ValueError as err:
        print(f"trust-gateway: audit verify: --expect-head: {err}", file=sys.stderr)
        return 2
    report = verify_store(store, load_keyring(settings), anchor)
    if args.json:
        print(
            json.dumps(
                {
                    "intact": report.intact,
                    "entries": report.entries,
                    "rows": report.rows,
                    "head": report.head.text(),
                    "problems": [
                        {"kind": p.kind, "seq": p.seq, "request_id": p.request_id, "detail": p.detail}
                        for p in report.problems
                    ],
                    "warnings": list(report.warnings),
                    "unfinished": [
                        {"request_id": request_id, "outcome": outcome}
                        for request_id, outcome in report.unfinished
                    ],
                },
                indent=2,
            )
        )
    else:
        for warning in report.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if report.intact:
            print(f"intact: {report.entries} chain entries, {report.rows} records; head {report.head.text()}")
        else:
            first = report.problems[0]
            print(f"NOT INTACT: first problem: {first.kind}: {first.detail}")
            for problem in report.problems[1:]:
                print(f"  also {problem.kind}: {problem.detail}")
            print(f"({report.entries} chain entries, {report.rows} records; head {report.head.text()})")
        for line in unfinished_lines(report.unfinished):
            print(line)
    return 0 if report.intact else 1


UNFINISHED_MEANING = {
    "incomplete": "never finished; nothing was sent",
    "delivering": "a stream whose delivery was not confirmed; its sent text is all that may have left",
}
UNFINISHED_SHOWN = 10
"""Request ids listed per unfinished outcome (the audit list filters by outcome for the rest)."""


def unfinished_lines(unfinished: Sequence[tuple[str, str]]) -> list[str]:
    """What ``verify`` says about the rows whose request never finished (not a chain problem)."""
    lines = []
    for outcome, meaning in UNFINISHED_MEANING.items():
        ids = [request_id for request_id, found in unfinished if found == outcome]
        if ids:
            more = f" and {len(ids) - UNFINISHED_SHOWN} more" if len(ids) > UNFINISHED_SHOWN else ""
            shown = ", ".join(ids[:UNFINISHED_SHOWN])
            lines.append(f"unfinished: {len(ids)} {outcome} ({meaning}; in flight or stopped): {shown}{more}")
    return lines


def _head(_: argparse.Namespace, __: Settings, store: AuditStore) -> int:
    print(store.chain_head().text())
    return 0


def _prune(args: argparse.Namespace, settings: Settings, store: AuditStore) -> int:
    days = args.days if args.days is not None else settings.audit_retention_days
    if days <= 0:
        print(
            "trust-gateway: audit prune: retention is off (set GATEWAY_AUDIT_RETENTION_DAYS or --days)",
            file=sys.stderr,
        )
        return 2
    if days < RETENTION_FLOOR_DAYS:
        print(
            f"warning: {days} days is below the six months ({RETENTION_FLOOR_DAYS} days) the EU AI Act "
            "asks logs to be kept (docs/operations.md, Records)",
            file=sys.stderr,
        )
    keyring = load_keyring(settings)
    report = verify_store(store, keyring)
    if not report.intact and not args.force:
        first = report.problems[0]
        print(
            f"trust-gateway: audit prune: the chain does not verify ({first.kind}: {first.detail}); "
            "nothing was deleted (investigate, then --force)",
            file=sys.stderr,
        )
        return 1
    result = prune_store(store, keyring, retention_cutoff(days))
    checkpoint = result.checkpoint
    if checkpoint is None:
        print(f"nothing older than {days} days to prune")
    else:
        signed = f"signed with key {checkpoint.key_id}" if checkpoint.key_id else "hash only (no audit key)"
        print(
            f"pruned {result.pruned} records older than {days} days; checkpoint through chain entry "
            f"{checkpoint.through_seq} ({signed}); {len(checkpoint.kept)} kept records carried"
        )
    log.info("audit_pruned", records=result.pruned, days=days)
    return 0


def _hold(args: argparse.Namespace, _: Settings, store: AuditStore) -> int:
    if store.get_text(args.request_id) is None:
        print(
            f"trust-gateway: audit hold: no request {args.request_id!r} in the audit trail", file=sys.stderr
        )
        return 2
    store.hold(args.request_id, args.reason, _operator())
    print(f"on hold: {args.request_id}")
    return 0


def _release(args: argparse.Namespace, _: Settings, store: AuditStore) -> int:
    if not store.release(args.request_id):
        print(f"trust-gateway: audit release: {args.request_id!r} was not on hold", file=sys.stderr)
        return 2
    print(f"released: {args.request_id}")
    return 0


def _holds(_: argparse.Namespace, __: Settings, store: AuditStore) -> int:
    for hold in store.holds():
        print(f"{hold.request_id}\t{hold.held_at}\t{hold.held_by}\t{hold.reason}")
    return 0


def _export(args: argparse.Namespace, settings: Settings, store: AuditStore) -> int:
    from gateway.audit.export import write_export

    try:
        since, until = _moment(args.since, "--since"), _moment(args.until, "--until")
    except ValueError as err:
        print(f"trust-gateway: audit export: {err}", file=sys.stderr)
        return 2
    if until <= since:
        print("trust-gateway: audit export: --until must be after --since", file=sys.stderr)
        return 2
    out: TextIO
    with Path(args.out).open("w", encoding="utf-8") if args.out else _stdout() as out:
        count = write_export(store, settings, since, until, args.format, out)
    store.log_access(access_now("operator", _operator(), f"export:{args.format}", None))
    print(f"exported {count} records ({args.format})", file=sys.stderr)
    return 0


def _access(args: argparse.Namespace, _: Settings, store: AuditStore) -> int:
    for entry in store.access_log(args.limit):
        print(f"{entry.at}\t{entry.who}\t{entry.credential}\t{entry.action}\t{entry.request_id or '-'}")
    return 0


def _moment(text: str, flag: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{flag} must be an ISO date or time (2026-11-01 or 2026-11-01T08:00:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _operator() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


class _stdout:
    """Standard output as a context manager that is not closed."""

    def __enter__(self) -> TextIO:
        return sys.stdout

    def __exit__(self, *_: object) -> None:
        sys.stdout.flush()
