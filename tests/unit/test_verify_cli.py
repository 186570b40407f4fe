"""``trust-gateway verify FILE.jsonl``: rows checked in batch, bad rows reported by line and skipped."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from gateway.checkonly import batch as verify_batch
from gateway.cli import main
from gateway.fetching.fetcher import SafeFetcher
from gateway.models.pool import ModelPool
from gateway.policies import load_configured_policy
from gateway.settings import Settings
from gateway.testing import SubstringVerifier
from gateway.verification.verifier import Verifier

FLU = "Flu symptoms come on quickly. Most people feel better within a week."
PARACETAMOL = (
    "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours. "
    "Do not take more than 4 g of paracetamol in 24 hours."
)


def verify(argv: list[str], verifier: Verifier, fetcher: SafeFetcher) -> int:
    """``trust-gateway verify`` with these components. Logging is left as it is: ``main`` would
    configure structlog onto the current stderr, which capsys closes after the test."""

    def components(settings: Settings, models: ModelPool) -> tuple[Verifier, SafeFetcher]:
        return verifier, fetcher

    return main(["verify", *argv], configure=lambda: None, verify_components=components)


@pytest.fixture
def verify_rows() -> Callable[[list[str]], int]:
    """``trust-gateway verify`` over the substring verifier and a fetcher that may reach loopback."""
    verifier = SubstringVerifier()
    fetcher = SafeFetcher(allowed_domains=["127.0.0.1"], allow_loopback=True)
    return lambda argv: verify(argv, verifier, fetcher)


def write_rows(path: Path, rows: list[object | str]) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_rows_are_checked_and_written_as_jsonl_with_ids(tmp_path, verify_rows, site, capsys) -> None:  # type: ignore[no-untyped-def]
    _, site_url = site
    source = write_rows(
        tmp_path / "in.jsonl",
        [
            {
                "id": "q1",
                "answer": "Most people feel better within a week [1].",
                "sources": [{"id": "1", "text": FLU}],
            },
            "",
            {
                "id": 7,
                "answer": "Hi! Most people feel better within a week [w]. Flu needs antibiotics [w].",
                "sources": [{"id": "w", "url": f"{site_url}/page/flu"}],
            },
            {"answer": "Flu is rare [1].", "sources": [{"id": "1", "text": FLU}]},
        ],
    )
    out = tmp_path / "out.jsonl"
    code = verify_rows([str(source), "--out", str(out), "--no-progress"])
    assert code == 0
    results = read_jsonl(out)
    assert [(r["line"], r["id"]) for r in results] == [(1, "q1"), (3, "7"), (4, None)]
    assert results[0]["response_supported"] is True
    second = results[1]
    assert [c["kind"] for c in second["claims"]] == ["acknowledgement", "claim", "claim"]
    assert second["statement_support"] == 0.5
    assert second["url_validity"]["share"] == 1.0
    assert results[2]["statement_support"] == 0.0
    assert "verified 3 of 3 rows; 0 skipped" in capsys.readouterr().err


def test_bad_rows_are_reported_by_line_number_and_skipped(tmp_path, verify_rows, capsys) -> None:  # type: ignore[no-untyped-def]
    source = write_rows(
        tmp_path / "in.jsonl",
        [
            "{not json",
            {"answer": "Flu [1].", "sources": [{"id": "1"}]},
            {"answer": "Most people feel better within a week [1].", "sources": [{"id": "1", "text": FLU}]},
            ["a", "list"],
            {"sources": [{"id": "1", "text": FLU}]},
        ],
    )
    out = tmp_path / "out.jsonl"
    code = verify_rows([str(source), "--out", str(out), "--no-progress"])
    assert code == 1
    assert [r["line"] for r in read_jsonl(out)] == [3]
    err = capsys.readouterr().err
    assert f"{source}:1: skipped: not valid JSON" in err
    assert f"{source}:2: skipped: 'sources[0]' needs 'text' or 'url'." in err
    assert f"{source}:4: skipped:" in err
    assert f"{source}:5: skipped: 'answer' is required." in err
    assert "verified 1 of 5 rows; 4 skipped" in err


def test_results_go_to_stdout_without_out(tmp_path, verify_rows, capsys) -> None:  # type: ignore[no-untyped-def]
    source = write_rows(
        tmp_path / "in.jsonl",
        [{"answer": "Flu symptoms come on quickly [1].", "sources": [{"id": "1", "text": FLU}]}],
    )
    assert verify_rows([str(source), "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["claims"][0]["verdict"] == "supported"


def test_verifier_failure_skips_the_row(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    fetcher = SafeFetcher(allowed_domains=[])
    source = write_rows(
        tmp_path / "in.jsonl", [{"answer": "Flu [1].", "sources": [{"id": "1", "text": FLU}]}]
    )
    assert verify([str(source), "--no-progress"], SubstringVerifier(fail=True), fetcher) == 1
    assert "1: skipped: the verifier could not decide: VerifierError" in capsys.readouterr().err


def test_missing_input_file_is_a_usage_error(tmp_path, verify_rows, capsys) -> None:  # type: ignore[no-untyped-def]
    assert verify_rows([str(tmp_path / "absent.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.slow  # loads MiniLM, Chroma or the services
def test_the_configured_verifier_gives_the_three_outcomes_and_the_report_counts_them(
    tmp_path,  # type: ignore[no-untyped-def]
    embedder,
    capsys,
) -> None:
    """The configured verifier and fetcher (``build_components``, over the session's MiniLM): a claim
    restating its source is supported, one changing its number contradicted (both numbers named), a
    paraphrase not verified; the row carries the report's counts, range and operating point
    (docs/verify-api.md, "Three outcomes")."""
    answer = (
        "Do not take more than 4 g of paracetamol in 24 hours [1]. "
        "Do not take more than 8 g of paracetamol in 24 hours [1]. "
        "A day's paracetamol should stay under four grams for grown-ups [1]."
    )
    source = write_rows(
        tmp_path / "in.jsonl",
        [{"id": "dose", "answer": answer, "sources": [{"id": "1", "text": PARACETAMOL}]}],
    )
    out = tmp_path / "out.jsonl"
    components = partial(verify_batch.build_components, embedder=embedder)
    argv = ["verify", str(source), "--out", str(out), "--no-progress"]
    assert main(argv, configure=lambda: None, verify_components=components) == 0
    assert "verified 1 of 1 rows; 0 skipped" in capsys.readouterr().err
    [row] = read_jsonl(out)
    restated, changed, paraphrase = row["claims"]
    assert [c["kind"] for c in row["claims"]] == ["claim"] * 3
    assert [c["status"] for c in row["claims"]] == ["supported", "contradicted", "not_verified"]
    assert [c["verdict"] for c in row["claims"]] == ["supported", "contradicted", "unsupported"]
    assert restated["contradiction"] is None
    assert paraphrase["contradiction"] is None
    contradiction = changed["contradiction"]
    assert contradiction["kind"] == "number"
    assert contradiction["claim"] == "8 g"
    assert "4 g" in contradiction["source"]
    assert "8 g" in contradiction["detail"]
    assert "4 g" in contradiction["detail"]
    assert row["claims_by_status"] == {"supported": 1, "contradicted": 1, "unsupported": 0, "not_verified": 1}
    assert row["statement_support"] == pytest.approx(1 / 3, abs=1e-4)
    support = row["statement_support_range"]
    assert support["low"] == row["statement_support"]
    assert (support["high"], support["undecided"]) == pytest.approx((2 / 3, 1 / 3), abs=1e-4)
    assert row["response_supported"] is False
    assert row["response_support_possible"] is False  # a contradiction rules the answer out
    policy = load_configured_policy(Settings()).thresholds.verification
    assert row["operating_point"].startswith("cascade[local] support: ")  # no judge configured
    assert f"check_support_probability {policy.check_support_probability:g}" in row["operating_point"]
    assert f"contradiction: {','.join(policy.contradiction_kinds)} " in row["operating_point"]


async def test_progress_bar_counts_rows(capsys) -> None:  # type: ignore[no-untyped-def]
    written: list[dict] = []  # type: ignore[type-arg]
    row = json.dumps({"answer": "Flu symptoms come on quickly [1].", "sources": [{"id": "1", "text": FLU}]})
    summary = await verify_batch.verify_lines(
        [row, row],
        written.append,
        SubstringVerifier(),
        SafeFetcher(allowed_domains=[]),
        max_sources=5,
        progress=True,
    )
    assert (summary.rows, summary.checked, len(written)) == (2, 2, 2)
    assert "2/2" in capsys.readouterr().err
