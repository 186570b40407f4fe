"""Source tiers, trust scores with age decay, per-claim badges, the response summary and their JSON."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from gateway.domain import (
    ClaimOutcome,
    ClaimResult,
    Evidence,
    Outcome,
    Passage,
    RefusalReason,
    SourceTier,
    Span,
    Statement,
    StatementKind,
    Verdict,
    VerdictLabel,
)
from gateway.errors import ConfigurationError
from gateway.resources import bundled
from gateway.services import Services
from gateway.settings import Settings
from gateway.trust.badge import (
    NO_SOURCE,
    TIER_BADGES_PATH,
    TierBadger,
    badge,
    badges_for,
    load_tier_badges,
    response_trust,
    source_badge,
)
from gateway.trust.policy import AgeStep, Tier, TierBadgeTexts, TierPolicy, TierRule
from gateway.trust.tiers import resolve_tier, trust_score
from gateway.validation import load_file
from gateway.web.app import create_app
from gateway.web.serializers import badge_json, claim_json, source_json
from tests.support.data_files import assert_refused, broken_copy

TODAY = dt.date(2026, 6, 1)


@pytest.fixture(scope="module")
def tiers() -> TierPolicy:
    return load_file(bundled("policies") / "tiers.yaml", TierPolicy)


def passage(
    number: int = 1,
    *,
    url: str = "https://example.org/x",
    org: str = "Someone",
    tier: str = "",
    doc_type: str = "article",
    reviewed_on: dt.date | None = dt.date(2025, 1, 1),
    text: str = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours.",
) -> Passage:
    return Passage(
        id=f"doc{number}:0",
        document_id=f"doc{number}",
        text=text,
        title=f"Document {number}",
        url=url,
        org=org,
        tier=tier,
        reviewed_on=reviewed_on,
        score=0.8,
        doc_type=doc_type,
    )


# --- the bundled policy -----------------------------------------------------------------------


def test_bundled_policy_declares_the_five_tiers_in_trust_order(tiers: TierPolicy) -> None:
    ids = [t.id for t in tiers.tiers]
    assert ids == ["regulatory", "clinical_reference", "guideline", "educational", "unknown"]
    scores = [t.base_score for t in tiers.tiers]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] == pytest.approx(0.95)
    assert scores[-1] == pytest.approx(0.50)
    assert tiers.default_tier == "unknown"
    assert [s.older_than_years for s in tiers.age_steps] == [5, 10]


# --- resolving a source's tier ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"tier": "guideline", "url": "https://www.nhs.uk/x"}, "guideline"),  # the manifest wins
        ({"url": "https://www.nhs.uk/medicines/"}, "clinical_reference"),  # subdomain of a rule domain
        ({"url": "https://NHS.UK./conditions/"}, "clinical_reference"),  # case and trailing dot
        ({"url": "https://dailymed.nlm.nih.gov/x"}, "regulatory"),
        ({"url": "https://medlineplus.gov/x"}, "clinical_reference"),
        ({"url": "https://www.nice.org.uk/guidance/ng1"}, "guideline"),
        ({"url": "https://www.mayoclinic.org/x"}, "educational"),
        ({"url": "https://evilnhs.uk/x"}, "unknown"),  # not a subdomain
        ({"url": "https://nhs.uk.evil.example/x"}, "unknown"),
        ({"url": "not a url", "org": "national eye institute"}, "clinical_reference"),  # org, any case
        ({"doc_type": "drug_label"}, "regulatory"),
        ({"doc_type": "review"}, "guideline"),
        ({"doc_type": "self_care"}, "educational"),
        ({"tier": "made_up"}, "unknown"),  # an undeclared manifest tier falls through to the rules
        ({}, "unknown"),
    ],
)
def test_resolve_tier(tiers: TierPolicy, kwargs: dict[str, str], expected: str) -> None:
    assert resolve_tier(passage(**kwargs), tiers).id == expected  # type: ignore[arg-type]


def test_domain_beats_org_and_doc_type(tiers: TierPolicy) -> None:
    source = passage(url="https://www.mayoclinic.org/x", org="NHS", doc_type="drug_label")
    assert resolve_tier(source, tiers).id == "educational"


def test_the_most_specific_domain_wins_whatever_the_rule_order() -> None:
    policy = TierPolicy(
        tiers=(Tier("a", "A", 0.9), Tier("b", "B", 0.6), Tier("u", "U", 0.5)),
        default_tier="u",
        rules=(TierRule("b", domains=("nih.gov",)), TierRule("a", domains=("dailymed.nlm.nih.gov",))),
    )
    assert resolve_tier(passage(url="https://dailymed.nlm.nih.gov/x"), policy).id == "a"
    assert resolve_tier(passage(url="https://www.nih.gov/x"), policy).id == "b"


# --- trust scores and age ---------------------------------------------------------------------


def years_ago(years: float) -> dt.date:
    return TODAY - dt.timedelta(days=round(years * 365.25))


@pytest.mark.parametrize(
    ("reviewed_on", "expected"),
    [
        (years_ago(1), 0.90),
        (years_ago(5), 0.90),  # exactly five years: not yet older than five
        (years_ago(5.1), 0.80),
        (years_ago(10), 0.80),
        (years_ago(10.1), 0.70),
        (years_ago(40), 0.70),  # the largest step applies, never the sum
        (TODAY + dt.timedelta(days=30), 0.90),  # a future date is not rewarded
        (None, 0.85),  # undated
    ],
)
def test_trust_decays_with_age_by_configured_steps(
    tiers: TierPolicy, reviewed_on: dt.date | None, expected: float
) -> None:
    assert trust_score(tiers.tier("clinical_reference"), reviewed_on, TODAY, tiers) == pytest.approx(expected)


def test_trust_never_goes_below_zero() -> None:
    policy = TierPolicy(tiers=(Tier("low", "Low", 0.1),), default_tier="low", age_steps=(AgeStep(1, 0.5),))
    assert trust_score(policy.tier("low"), years_ago(3), TODAY, policy) == 0.0


@pytest.mark.parametrize(
    ("yaml_text", "key"),
    [
        ("tiers: [{id: a, label: A, base_score: 1.5}]\ndefault_tier: a\n", "base_score"),
        ("tiers: [{id: a, label: A, base_score: 0.5}]\ndefault_tier: b\n", "default_tier"),
        (
            "tiers: [{id: a, label: A, base_score: 0.5}, {id: a, label: B, base_score: 0.4}]\n"
            "default_tier: a\n",
            "tiers",
        ),
        (
            "tiers: [{id: a, label: A, base_score: 0.5}]\ndefault_tier: a\n"
            "age_steps: [{older_than_years: 5, penalty: 2}]\n",
            "penalty",
        ),
        (
            "tiers: [{id: a, label: A, base_score: 0.5}]\ndefault_tier: a\n"
            "age_steps: [{older_than_years: -1, penalty: 0.1}]\n",
            "older_than_years",
        ),
        (
            "tiers: [{id: a, label: A, base_score: 0.5}]\ndefault_tier: a\nundated_penalty: -0.1\n",
            "undated_penalty",
        ),
        ("tiers: [{id: a, label: A, base_score: 0.5}]\ndefault_tier: a\nrules: [{tier: zz}]\n", "rules"),
        (
            "tiers: [{id: a, label: A, base_score: 0.5}]\ndefault_tier: a\nrules: [{tier: a, hosts: [x]}]\n",
            "rules[0].hosts",
        ),
    ],
)
def test_a_bad_tier_policy_names_the_file_and_key(tmp_path: Path, yaml_text: str, key: str) -> None:
    path = tmp_path / "tiers.yaml"
    path.write_text(yaml_text)
    with pytest.raises(ConfigurationError) as info:
        load_file(path, TierPolicy)
    assert str(path) in str(info.value)
    assert key in info.value.key


# --- badges ------------------------------------------------------------------------------------


def statement(text: str, numbers: tuple[int, ...], start: int = 0) -> Statement:
    return Statement(text, Span(start, start + len(text)), StatementKind.CLAIM, numbers)


def supported(number: int, passage_id: str, text: str = "Adults can take 500 mg") -> Verdict:
    return Verdict(
        VerdictLabel.SUPPORTED,
        0.97,
        "anchoring",
        "quote_exact",
        "",
        Evidence(number, passage_id, text, Span(0, 22)),
    )


UNSUPPORTED = Verdict(VerdictLabel.UNSUPPORTED, 0.1, "anchoring", "quote_not_found", "quote not in source")


def sources() -> list[Passage]:
    return [
        passage(1, url="https://www.nhs.uk/a", reviewed_on=years_ago(1)),  # clinical_reference 0.90
        passage(2, url="https://www.mayoclinic.org/b", reviewed_on=years_ago(12)),  # educational 0.50
        passage(3, url="https://dailymed.nlm.nih.gov/c", reviewed_on=years_ago(2)),  # regulatory 0.95
    ]


def test_badges_put_the_supporting_source_first_then_by_trust(tiers: TierPolicy) -> None:
    result = ClaimResult(
        statement("Claim", (2, 3, 1, 1, 9)), supported(1, "doc1:0"), ClaimOutcome.VERIFIED, "Claim"
    )
    badges = badges_for(result, sources(), tiers, TODAY)
    assert [b.source_number for b in badges] == [1, 3, 2]  # 9 is out of range, 1 is not repeated
    first = badges[0]
    assert first.evidence_quote == "Adults can take 500 mg"
    assert (first.tier, first.tier_label) == ("clinical_reference", "Curated clinical reference")
    assert first.trust_score == pytest.approx(0.90)
    assert (first.title, first.org, first.url) == ("Document 1", "Someone", "https://www.nhs.uk/a")
    assert first.reviewed_on == years_ago(1)
    assert [b.evidence_quote for b in badges[1:]] == [None, None]
    assert badges[2].trust_score == pytest.approx(0.50)


def test_evidence_found_in_an_uncited_source_gets_a_badge(tiers: TierPolicy) -> None:
    result = ClaimResult(statement("Claim", (2,)), supported(3, "doc3:0"), ClaimOutcome.VERIFIED, "Claim")
    badges = badges_for(result, sources(), tiers, TODAY)
    assert [b.source_number for b in badges] == [3, 2]
    assert badges[0].tier == "regulatory"


def test_response_trust_is_weighted_toward_the_best_sources() -> None:
    assert response_trust([]) is None
    assert response_trust([0.9, 0.9]) == pytest.approx(0.9)
    weighted = response_trust([0.95, 0.5])
    assert weighted is not None
    assert (0.95 + 0.5) / 2 < weighted < 0.95


def outcome_of(results: list[ClaimResult], *, refused: bool = False) -> Outcome:
    statements = (
        *(r.statement for r in results),
        Statement("Hope that helps!", Span(90, 106), StatementKind.ACKNOWLEDGEMENT),
    )
    return Outcome(
        "answer",
        statements,
        tuple(results),
        refused=refused,
        refusal_reason=RefusalReason.TOO_MANY_REMOVED if refused else None,
        refusal_detail="too many removed" if refused else "",
    )


def test_report_summary_counts_outcomes_and_weights_delivered_claims_only(tiers: TierPolicy) -> None:
    verified = ClaimResult(
        statement("Dose.", (1,)), supported(1, "doc1:0"), ClaimOutcome.VERIFIED, "Dose.", Span(0, 5)
    )
    rewritten = ClaimResult(
        statement("Wrong.", (3,), 6),
        UNSUPPORTED,
        ClaimOutcome.REWRITTEN,
        "Right.",
        Span(6, 12),
        rewrite_verdict=supported(3, "doc3:0"),
        reason="the number did not match",
    )
    removed = ClaimResult(
        statement("Made up.", (2,), 13), UNSUPPORTED, ClaimOutcome.REMOVED, None, reason="no quote"
    )
    report = badge(outcome_of([verified, rewritten, removed]), sources(), tiers, TODAY)
    s = report.summary
    assert (s.claims, s.supported, s.rewritten, s.removed, s.conversational) == (3, 1, 1, 1, 1)
    assert s.statement_support == pytest.approx(1 / 3, abs=1e-4)
    assert s.response_supported is False
    assert s.refused is False
    assert s.trust_score == response_trust([0.90, 0.95])  # the removed claim's source does not count

    first, second, third = report.claims
    assert (first.outcome, first.verdict, first.original_verdict) == (
        ClaimOutcome.VERIFIED,
        VerdictLabel.SUPPORTED,
        VerdictLabel.SUPPORTED,
    )
    # a rewritten claim reports the check of its rewrite, and remembers the first verdict
    assert second.text == "Right."
    assert second.original_text == "Wrong."
    assert (second.verdict, second.original_verdict) == (VerdictLabel.SUPPORTED, VerdictLabel.UNSUPPORTED)
    assert second.check == "quote_exact"
    assert second.evidence is not None
    assert second.evidence.source_number == 3
    assert second.reason == "the number did not match"
    assert second.span == Span(6, 12)
    assert third.span is None
    assert third.outcome is ClaimOutcome.REMOVED
    assert third.badges[0].tier == "educational"


def test_a_refused_answer_has_no_trust_score_and_no_spans(tiers: TierPolicy) -> None:
    verified = ClaimResult(
        statement("Dose.", (1,)), supported(1, "doc1:0"), ClaimOutcome.VERIFIED, "Dose.", Span(0, 5)
    )
    report = badge(outcome_of([verified], refused=True), sources(), tiers, TODAY)
    assert report.summary.trust_score is None
    assert report.summary.refused is True
    assert report.summary.reason is RefusalReason.TOO_MANY_REMOVED
    assert all(c.span is None for c in report.claims)


def test_no_claims_means_no_support_figures(tiers: TierPolicy) -> None:
    report = badge(Outcome("Hello!", (), ()), [], tiers, TODAY)
    assert report.summary.statement_support is None
    assert report.summary.response_supported is False
    assert report.summary.trust_score is None


async def test_every_report_of_the_badge_stage_names_its_verifiers_operating_point(tiers: TierPolicy) -> None:
    """The badge stage is handed the chat verifier's operating point at start-up and puts it on every
    report it builds: badged, and without badges (a failed stage's refusal, an interrupted run)."""
    point = "cascade[local] support: quote binding (chat)"
    verified = ClaimResult(
        statement("Dose.", (1,)), supported(1, "doc1:0"), ClaimOutcome.VERIFIED, "Dose.", Span(0, 5)
    )
    badger = TierBadger(tiers, lambda: TODAY, point)
    badged = await badger.run(outcome_of([verified]), sources())
    assert badged.operating_point == point
    assert badged.claims  # badged, with its claims
    refusal = Outcome("", (), (), True, RefusalReason.UPSTREAM_ERROR, "UpstreamError: down")
    bare = badger.unbadged(refusal, sources())
    assert (bare.operating_point, bare.claims, bare.source_tiers) == (point, (), ())
    other = await TierBadger(tiers, lambda: TODAY, "judge").run(outcome_of([verified]), sources())
    assert other.operating_point == "judge"  # the stage's own, not a constant
    # built outside a badge stage, a report knows no verifier: empty, as in records written before
    assert badge(outcome_of([verified]), sources(), tiers, TODAY).operating_point == ""


# --- the JSON contract (docs/api-trust.md) ------------------------------------------------------


def test_claim_badge_and_source_json_carry_every_documented_field(tiers: TierPolicy) -> None:
    result = ClaimResult(
        statement("Dose.", (1,)), supported(1, "doc1:0"), ClaimOutcome.VERIFIED, "Dose.", Span(0, 5)
    )
    report = badge(outcome_of([result]), sources(), tiers, TODAY)
    claim = claim_json(report.claims[0])
    assert set(claim) == {
        "text",
        "span",
        "source_ids",
        "verdict",
        "original_verdict",
        "score",
        "method",
        "check",
        "outcome",
        "reason",
        "original_text",
        "evidence",
        "badge",
        "badges",
    }
    assert claim["span"] == {"start": 0, "end": 5}
    assert claim["source_ids"] == ["1"]
    assert claim["evidence"] == {
        "source_id": "1",
        "passage_id": "doc1:0",
        "text": "Adults can take 500 mg",
        "span": {"start": 0, "end": 22},
    }
    assert claim["badge"] == badge_json(report.claims[0].badges[0])
    assert set(claim["badge"]) == {
        "source_id",
        "tier",
        "tier_label",
        "trust_score",
        "title",
        "org",
        "url",
        "reviewed_on",
        "evidence_quote",
    }
    assert claim["badge"]["reviewed_on"] == years_ago(1).isoformat()
    source = source_json(2, sources()[1], tiers, TODAY)
    assert set(source) == {
        "id",
        "passage_id",
        "document_id",
        "title",
        "url",
        "org",
        "tier",
        "tier_label",
        "trust_score",
        "reviewed_on",
        "doc_type",
        "relevance",
        "text",
    }
    assert (source["id"], source["tier"], source["trust_score"]) == ("2", "educational", 0.5)


def test_a_source_badge_is_decided_once_from_its_tier() -> None:
    """The pages' badge text and colour: the short text of a shipped tier, else the tier's label."""
    texts = load_tier_badges()
    shipped = source_badge(SourceTier("clinical_reference", "Curated clinical reference", 0.9), texts)
    assert (shipped.tier, shipped.short, shipped.label, shipped.trust_score) == (
        "clinical_reference",
        "Clinical reference",
        "Curated clinical reference",
        0.9,
    )
    assert source_badge(SourceTier("local_protocol", "Local protocol", 0.8), texts).short == "Local protocol"
    assert source_badge(None, texts) == NO_SOURCE
    assert (NO_SOURCE.short, NO_SOURCE.trust_score) == ("No source", None)


def test_every_shipped_tier_has_a_short_badge_text(tiers: TierPolicy) -> None:
    assert set(load_tier_badges().short) == {t.id for t in tiers.tiers}


@pytest.mark.parametrize(
    ("body", "reason"),
    [("short: {guideline: ''}\n", "must not be empty"), ("shorts: {}\n", "short: missing required key")],
)
def test_a_bad_badge_text_file_is_refused_naming_the_file(tmp_path: Path, body: str, reason: str) -> None:
    assert_refused(tmp_path / "tier_badges.yaml", body, TierBadgeTexts, reason)


def test_a_broken_badge_text_file_stops_start_up(tmp_path: Path) -> None:
    """Read when the app is made (``create_app``), before the services are built: not when a page first
    shows a badge."""
    broken = broken_copy(TIER_BADGES_PATH, tmp_path, 'educational: "Educational"', 'educational: ""')

    def never(_: Settings) -> Services:
        raise AssertionError("the services are not built when the badge texts are bad")

    with pytest.raises(ConfigurationError) as info:
        create_app(Settings(data_dir=tmp_path), build=never, tier_badges=broken)
    assert str(broken) in str(info.value)
    assert "must not be empty" in str(info.value)
