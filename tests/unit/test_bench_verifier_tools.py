"""The verifier bench's plumbing: the splitter it is given is the one that splits the evidence, and
``--dump`` lines say what each configuration decided about each claim."""

from __future__ import annotations

import json
from pathlib import Path

from bench import bench_verifier as bv
from gateway.domain import Conflict, ConflictKind, Evidence, Span, Verdict, VerdictLabel
from gateway.text import passage_from_text
from gateway.vocabulary import VerdictCheck, VerifierMethod

TEXT = "Take one tablet. Wait four hours; then take another."


def one_sentence(text: str) -> list[Span]:
    return [Span(0, len(text))]


def test_passage_from_text_splits_with_the_splitter_given() -> None:
    assert len(passage_from_text(TEXT).sentence_spans) == 2
    assert passage_from_text(TEXT, splitter=one_sentence).sentence_spans == (Span(0, len(TEXT)),)


def test_bench_claims_carry_the_splitter_given() -> None:
    rows = [{"claim": "Take one tablet.", "evidence": TEXT, "id": "r1"}]
    default = bv.check_claims(rows)[0].sources[0][1]
    chosen = bv.check_claims(rows, one_sentence)[0].sources[0][1]
    assert len(default.sentence_spans) == 2
    assert chosen.sentence_spans == (Span(0, len(TEXT)),)
    assert bv.passage(0, TEXT, one_sentence).sentence_spans == (Span(0, len(TEXT)),)


def test_dump_line_names_the_verdict_and_the_row() -> None:
    row = {"set": "kqa_dev", "id": "r1", "label": "refuted", "claim": "Take two tablets."}
    conflict = Conflict(ConflictKind.NUMBER, "one vs two", "two", "one")
    verdict = Verdict(
        VerdictLabel.CONTRADICTED,
        0.12345,
        VerifierMethod.LOCAL,
        VerdictCheck.NUMBER_MISMATCH,
        "the claim says 'two'",
        Evidence(1, "r1", "Take one tablet.", Span(0, 16)),
        conflict=conflict,
    )
    line = json.loads(json.dumps(bv.verdict_record("local checker", row, verdict)))
    assert line["status"] == "contradicted"
    assert line["supported"] is False
    assert line["check"] == "number_mismatch"
    assert line["conflict"] == ["number", "two", "one"]
    assert line["split"] == bv.split_of("r1")
    assert (line["set"], line["label"], line["score"]) == ("kqa_dev", "refuted", 0.1235)


def test_cache_digest_changes_with_any_checker_file(tmp_path: Path) -> None:
    (tmp_path / "gateway" / "verification").mkdir(parents=True)
    source = tmp_path / "gateway" / "verification" / "checks.py"
    source.write_text("THRESHOLD = 1\n")
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "thresholds.yaml").write_text("a: 1\n")
    inputs = ("gateway/verification", "policies")
    before = bv.code_digest(tmp_path, inputs)
    assert bv.code_digest(tmp_path, inputs) == before
    source.write_text("THRESHOLD = 2\n")
    changed_code = bv.code_digest(tmp_path, inputs)
    (tmp_path / "policies" / "thresholds.yaml").write_text("a: 2\n")
    assert len({before, changed_code, bv.code_digest(tmp_path, inputs)}) == 3


def test_cache_is_reused_only_with_the_same_code_encoder_and_sets() -> None:
    key = bv.cache_key(200, "torch bf16", digest="abc")
    rows = [{**key, "set": "kqa_dev"}]
    assert bv.cache_usable(rows, key, ["kqa_dev"])
    assert not bv.cache_usable(rows, bv.cache_key(200, "torch bf16", digest="abd"), ["kqa_dev"])
    assert not bv.cache_usable(rows, bv.cache_key(200, "onnx int8", digest="abc"), ["kqa_dev"])
    assert not bv.cache_usable(rows, key, ["kqa_dev", "nli4ct"])
    older = [{"per_set": 200, "version": 1, "set": "kqa_dev"}]  # a cache from before the digest
    assert not bv.cache_usable(older, key, ["kqa_dev"])
