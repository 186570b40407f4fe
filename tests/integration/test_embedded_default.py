"""The embedded default: bundled corpus, built-in extractive responder, no key, over real HTTP."""

from __future__ import annotations

import pytest

from gateway.bootstrap import build_services
from gateway.settings import Settings
from tests.support.stack import openai_client, running_gateway


@pytest.fixture(scope="module")
def bundled_gateway(embedder, tmp_path_factory):  # type: ignore[no-untyped-def]
    """A gateway started exactly as `trust-gateway serve` starts it: index built from the bundled corpus."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("bundled"))
    services = build_services(settings, embedder=embedder)
    with running_gateway(services) as url:
        yield url, services
    services.audit.close()


@pytest.mark.parametrize(
    ("question", "document_id"),
    [
        ("How long should I use eye drops after cataract surgery?", "cataract-surgery-recovery"),
        ("What is the maximum dose of paracetamol for an adult in 24 hours?", "paracetamol-adults"),
        ("How should I take levothyroxine?", "levothyroxine"),
    ],
)
def test_embedded_default_answers_with_citations_to_the_right_document(
    bundled_gateway, question, document_id
) -> None:  # type: ignore[no-untyped-def]
    url, services = bundled_gateway
    assert services.drafter.name == "extractive"
    completion = openai_client(url).chat.completions.create(
        model="trust-gateway", messages=[{"role": "user", "content": question}]
    )
    text = completion.choices[0].message.content
    trust = completion.model_extra["trust"]
    assert trust["summary"]["refused"] is False, trust["summary"]
    assert trust["summary"]["claims"] >= 1
    assert "[1]" in text or "[2]" in text or "[3]" in text
    sources = {s["id"]: s for s in trust["sources"]}
    cited_documents = {sources[i]["document_id"] for c in trust["claims"] for i in c["source_ids"]}
    assert document_id in cited_documents
    for claim in trust["claims"]:
        assert claim["verdict"] == "supported"
        evidence = claim["evidence"]
        source = sources[evidence["source_id"]]
        assert source["text"][evidence["span"]["start"] : evidence["span"]["end"]] == evidence["text"]
        assert source["url"].startswith("https://")
        assert claim["badge"]["tier"] in {
            "regulatory",
            "clinical_reference",
            "guideline",
            "educational",
            "unknown",
        }


def test_bundled_index_is_ready(bundled_gateway) -> None:  # type: ignore[no-untyped-def]
    import httpx

    url, _ = bundled_gateway
    ready = httpx.get(f"{url}/readyz").json()
    assert ready["status"] == "ready"
    assert ready["passages"] > 100


@pytest.mark.parametrize(
    ("question", "document_id"),
    [
        ("How much paracetamol can an adult take in a day?", "paracetamol-adults"),
        ("How should I take levothyroxine?", "levothyroxine"),
        # the amoxicillin leaflet's "the most common side effects of amoxicillin are ..." is the closest
        # sentence, but its passage is below the relevance gate; the ibuprofen label is not
        ("What are the side effects of ibuprofen?", "ibuprofen-otc-label"),
    ],
)
def test_embedded_default_quotes_only_the_document_that_answers(
    bundled_gateway, question, document_id
) -> None:  # type: ignore[no-untyped-def]
    """A dose sentence lifted from another leaflet ("Adult doses usually range from 250 mg to 500 mg
    three times a day", amoxicillin) keeps its words but reads as the asked medicine's dose."""
    url, _ = bundled_gateway
    completion = openai_client(url).chat.completions.create(
        model="trust-gateway", messages=[{"role": "user", "content": question}]
    )
    trust = completion.model_extra["trust"]
    sources = {s["id"]: s for s in trust["sources"]}
    cited = {sources[i]["document_id"] for c in trust["claims"] for i in c["source_ids"]}
    assert cited == {document_id}
    assert len({s["document_id"] for s in trust["sources"]}) > 1  # other leaflets were retrieved


@pytest.mark.slow
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # cosine alone quoted "Paracetamol is a common painkiller ..." first: about paracetamol, not
        # about how often; the question's kind ("how often") ranks the interval sentence first
        ("How often can I take paracetamol?", "every 4 to 6 hours"),
        ("How long should I use eye drops after cataract surgery?", "about 4 weeks"),
    ],
)
def test_embedded_default_quotes_what_the_question_asks(bundled_gateway, question, expected) -> None:  # type: ignore[no-untyped-def]
    url, _ = bundled_gateway
    completion = openai_client(url).chat.completions.create(
        model="trust-gateway", messages=[{"role": "user", "content": question}]
    )
    trust = completion.model_extra["trust"]
    assert trust["summary"]["refused"] is False, trust["summary"]
    quoted = [c["text"] for c in trust["claims"]]  # in the passage's order, not by rank
    assert any(expected in text for text in quoted), quoted
