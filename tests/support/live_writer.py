"""A second process that changes the knowledge base while gateways serve it (tests/integration).

``python -m tests.support.live_writer WORK_DIR BASE_KB ROUNDS`` writes two editions of a three-section
document ``hydration`` ("edition alpha" / "edition beta") and a document ``extra`` under WORK_DIR, then,
ROUNDS times: ingests alpha with extra, ingests beta (a re-ingest that replaces every passage), deletes
``hydration``, ingests alpha again, and re-ingests BASE_KB with beta under ``--prune`` (which deletes
``extra``). Each step is the real ``trust-gateway ingest`` command, run in this process against the
store the environment names (GATEWAY_DATA_DIR or GATEWAY_CHROMA_URL); a line ``step N <what> <exit>``
is printed after each. The exit status is that of the first failing step, else 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gateway.cli import main as cli

SECTIONS = ("Why water matters", "How much to drink", "Hot weather")


def edition(directory: Path, name: str, with_extra: bool) -> Path:
    """A corpus directory holding ``hydration`` in edition ``name`` (and ``extra`` when asked)."""
    (directory / "docs").mkdir(parents=True, exist_ok=True)
    body = ["# Staying hydrated", ""]
    for section in SECTIONS:
        body += [
            f"## {section}",
            "",
            f"This is edition {name} of the hydration leaflet. {section} is explained in edition {name}. "
            f"Adults drink water through the day, and the leaflet of edition {name} says so.",
            "",
        ]
    (directory / "docs" / "hydration.md").write_text("\n".join(body), encoding="utf-8")
    entries = [
        '  - {id: hydration, file: docs/hydration.md, title: "Staying hydrated", org: NHS, '
        'url: "https://www.nhs.uk/live-eating/water-drinks/", tier: clinical_reference, '
        "reviewed_on: 2024-01-01}"
    ]
    if with_extra:
        (directory / "docs" / "extra.md").write_text(
            "# Sun cream\n\nSun cream protects the skin from sunburn on bright days.\n", encoding="utf-8"
        )
        entries.append(
            '  - {id: extra, file: docs/extra.md, title: "Sun cream", org: NHS, '
            'url: "https://www.nhs.uk/live-well/seasonal-health/sunscreen/", tier: clinical_reference}'
        )
    (directory / "manifest.yaml").write_text("documents:\n" + "\n".join(entries) + "\n", encoding="utf-8")
    return directory


def run(work: Path, base: Path, rounds: int) -> int:
    alpha = edition(work / "alpha", "alpha", with_extra=True)
    beta = edition(work / "beta", "beta", with_extra=False)
    steps: list[tuple[str, list[str]]] = [
        ("ingest-alpha", [str(alpha)]),
        ("reingest-beta", [str(beta)]),
        ("delete", ["--delete", "hydration"]),
        ("ingest-alpha", [str(alpha)]),
        ("prune-with-beta", [str(base), str(beta), "--prune"]),
    ]
    number = 0
    for _ in range(rounds):
        for what, arguments in steps:
            number += 1
            status = cli(["ingest", *arguments, "--no-progress"])
            print(f"step {number} {what} {status}", flush=True)
            if status != 0:
                return status
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])))
