"""The pages in real headless Chromium (Debian's ``chromium``, driven by Playwright for Python).

Covers: a patient asks and sees a streamed, cited answer with tier badges; refusals and emergency
messages are set apart; a clinician signs in, opens the clinician view and selects a claim (by
keyboard) to see its evidence span; the audit list filters and opens a detail page. Takes the two
screenshots the README shows into a temporary directory; ``make screenshots`` runs these tests with
``SCREENSHOTS_DIR=docs`` to refresh docs/screenshot-patient.png and docs/screenshot-clinician.png (a test
run never writes into the repository).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.settings import Secret
from gateway.testing import contract_answer, running_upstream
from tests.support.stack import running_gateway

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CLINICIAN_KEY = "browser-clinician-key"
PAGE_KEY = "browser-page-key"
DOSE = "Adults can take 500 mg to 1 g of paracetamol every 4 to 6 hours."
MAXIMUM = "Do not take more than 4 g of paracetamol in 24 hours."
FABRICATED = "Paracetamol cures migraines within ten minutes."
QUESTION = "How much paracetamol can an adult take?"


def cited_answer(with_fabrication: bool = False) -> str:
    claims = [(DOSE, [1], DOSE), (MAXIMUM, [1], MAXIMUM)]
    answer = f"{DOSE[:-1]} [1]. {MAXIMUM[:-1]} [1]."
    if with_fabrication:
        claims.append((FABRICATED, [1], "paracetamol cures migraines within ten minutes"))
        answer += f" {FABRICATED[:-1]} [1]."
    return contract_answer(answer, claims)


@pytest.fixture(scope="module")
def browser_stack(embedder, fixture_store, tmp_path_factory) -> Iterator[tuple[Any, str, Any]]:  # type: ignore[no-untyped-def]
    from gateway.bootstrap import build_services
    from gateway.settings import Settings
    from tests.conftest import FIXTURE_KB

    with running_upstream() as (scripted, base_url):
        settings = Settings(
            data_dir=tmp_path_factory.mktemp("browser-gateway"),
            knowledge_dir=FIXTURE_KB,
            upstream_base_url=base_url,
            upstream_retries=0,
            upstream_timeout=5.0,
            clinician_keys=(Secret(CLINICIAN_KEY),),
            page_api_key=Secret(PAGE_KEY),
        )
        services = build_services(settings, embedder=embedder, store=fixture_store)
        try:
            with running_gateway(services) as url:
                yield scripted, url, services
        finally:
            services.audit.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """Where the screenshots go: ``SCREENSHOTS_DIR`` when set (``make screenshots`` sets it to docs/),
    otherwise a temporary directory."""
    chosen = os.environ.get("SCREENSHOTS_DIR")
    directory = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def save_screenshot(page: Any, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)
    assert path.read_bytes().startswith(PNG_SIGNATURE)


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    if not CHROMIUM.exists():
        pytest.fail("/usr/bin/chromium is missing: run `make system-deps` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1100, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser_context, browser_stack) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    scripted, _, _ = browser_stack
    scripted.reset()
    browser_context.clear_cookies()
    tab = browser_context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda err: errors.append(str(err)))
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield tab
    tab.close()
    assert errors == [], errors  # no script error and no CSP violation on any page


def ask_on_page(page: Any, question: str) -> Any:
    page.get_by_label("Your question").fill(question)
    page.get_by_label("Your question").press("Enter")
    answer = page.locator("li.msg-assistant").last
    # the page's CSP forbids eval, so wait with selectors: busy is set on submit and cleared at the end
    page.wait_for_selector("#conversation[aria-busy='false'] li.msg-assistant:last-child")
    return answer


def sign_in(page: Any, url: str, next_path: str) -> None:
    page.goto(f"{url}{next_path}")
    assert "/clinician/login" in page.url
    page.get_by_label("Clinician key").fill(CLINICIAN_KEY)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{url}{next_path}")


def test_patient_sees_a_streamed_cited_answer_with_tier_badges(page, browser_stack, screenshots) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = browser_stack
    scripted.queue(cited_answer())
    sent: list[dict[str, Any]] = []
    page.on(
        "request",
        lambda r: (
            sent.append({"body": r.post_data_json, "headers": r.headers})
            if r.url.endswith("/v1/chat/completions")
            else None
        ),
    )
    page.goto(f"{url}/")
    # keyboard order: skip link, home link, the question, the Ask button
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "question"
    answer = ask_on_page(page, QUESTION)

    assert sent[0]["body"]["stream"] is True
    assert sent[0]["body"]["messages"] == [{"role": "user", "content": QUESTION}]
    assert sent[0]["headers"]["authorization"] == f"Bearer {PAGE_KEY}"
    text = answer.locator("p.answer-text").inner_text()
    assert DOSE[:-1] in text
    assert MAXIMUM[:-1] in text
    citations = answer.locator("a.cite")
    assert citations.count() == 2
    assert citations.first.locator(".cite-num").inner_text() == "1"
    assert citations.first.locator(".tier").inner_text() == "Reference"
    assert "Curated clinical reference" in (citations.first.get_attribute("aria-label") or "")
    source = answer.locator(".sources li").first
    assert "Paracetamol for adults" in source.inner_text()
    assert source.locator(".tier-clinical_reference").inner_text() == "Clinical reference"
    assert source.locator("a").get_attribute("href") == "https://www.nhs.uk/medicines/paracetamol-for-adults/"
    assert "2 facts were checked" in answer.locator(".check-note").inner_text()
    citations.first.focus()
    page.keyboard.press("Enter")
    assert page.evaluate("location.hash").startswith("#src-req_")
    assert page.locator("#status").inner_text() == "Answer ready."
    page.get_by_label("Your question").fill("")
    save_screenshot(page, screenshots / "screenshot-patient.png")


def test_refusal_and_emergency_messages_are_set_apart(page, browser_stack) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = browser_stack
    page.goto(f"{url}/")
    refusal = ask_on_page(page, "What is the capital of France?")
    notice = refusal.locator(".notice-refusal")
    assert notice.is_visible()
    assert notice.get_attribute("role") == "status"
    assert "health questions" in notice.inner_text()
    assert refusal.locator("a.cite").count() == 0

    emergency = ask_on_page(page, "I have crushing chest pain and my left arm is numb")
    alert = emergency.locator(".notice-emergency")
    assert alert.is_visible()
    assert alert.get_attribute("role") == "alert"
    assert "This could be an emergency" in alert.inner_text()
    assert "999" in alert.inner_text()
    colours = page.evaluate(
        "[...document.querySelectorAll('.notice')].map(n => getComputedStyle(n).backgroundColor)"
    )
    assert len(set(colours)) == 2  # the emergency looks different from the refusal


def test_clinician_selects_a_claim_and_sees_the_evidence_span(page, browser_stack, screenshots) -> None:  # type: ignore[no-untyped-def]
    scripted, url, _ = browser_stack
    scripted.queue(cited_answer(with_fabrication=True))
    response = httpx.post(
        f"{url}/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": QUESTION}]},
        headers={"authorization": f"Bearer {PAGE_KEY}"},
        timeout=30,
    )
    request_id = response.json()["trust"]["request_id"]
    sign_in(page, url, f"/clinician/requests/{request_id}")

    claims = page.locator("#answer-body a.claim")
    assert claims.count() == 2
    assert "outcome-verified" in (claims.nth(1).get_attribute("class") or "")
    # keyboard: tab to the second claim and press Enter
    claims.first.focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    card = page.locator("#claim-2")
    assert card.is_visible()
    assert page.locator("#claim-1").is_hidden()
    assert page.evaluate("document.activeElement.id") == "claim-2"
    assert card.locator("mark").inner_text() == MAXIMUM[:-1]
    assert "Curated clinical reference" in card.inner_text()
    assert claims.nth(1).get_attribute("aria-current") == "true"

    removed_link = page.locator(".removed-list a[data-claim='3']")
    removed_link.click()
    removed = page.locator("#claim-3")
    assert removed.is_visible()
    assert removed.locator("del").inner_text() == FABRICATED
    assert removed.locator(".reason").inner_text() != ""

    claims.first.click()
    save_screenshot(page, screenshots / "screenshot-clinician.png")


def test_audit_list_filters_and_opens_a_detail_page(page, browser_stack) -> None:  # type: ignore[no-untyped-def]
    _, url, _ = browser_stack
    httpx.post(
        f"{url}/v1/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": "I think I'm having a stroke, my face is drooping"}],
        },
        headers={"authorization": f"Bearer {PAGE_KEY}"},
        timeout=30,
    )
    sign_in(page, url, "/audit")
    assert page.locator("tbody tr").count() >= 1
    page.get_by_label("Emergency").select_option("yes")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/audit?*emergency=yes*")
    rows = page.locator("tbody tr")
    assert rows.count() >= 1
    for index in range(rows.count()):
        assert rows.nth(index).locator("td").nth(3).inner_text() == "emergency"
    rows.first.locator("a").click()
    page.wait_for_url("**/audit/req_*")
    assert page.get_by_role("heading", name="Audit record").is_visible()
    assert "emergency" in page.locator("dl.kv").inner_text()
    assert page.get_by_role("link", name="Open in the clinician view").is_visible()


def test_chromium_is_the_system_one() -> None:
    assert shutil.which("chromium") == str(CHROMIUM) or CHROMIUM.exists()
