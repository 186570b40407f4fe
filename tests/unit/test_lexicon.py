"""The verifier's word lists are data (gateway/verification/data/lexicon.yaml), validated on load."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gateway.errors import ConfigurationError
from gateway.verification.checks.entities import MEDICINES
from gateway.verification.checks.words import STOPWORDS, SYNONYMS
from gateway.verification.lexicon import DEFAULT_PATH, load_lexicon


def test_the_shipped_lexicon_loads_and_feeds_the_checks() -> None:
    lexicon = load_lexicon()
    assert "the" in STOPWORDS
    assert SYNONYMS["kids"] == "child"
    assert MEDICINES["paracetamol"] == lexicon.table("medicines")["paracetamol"]
    assert any("increase" in a and "decrease" in b for a, b in lexicon.antonyms)


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda d: d.pop("medicines"), "medicines"),
        (lambda d: d.update(colours=["red"]), "colours"),
        (lambda d: d["stopwords"].append(" padded "), "stopwords[205]"),
        (lambda d: d["synonyms"].append([]), "synonyms[17]"),
        (lambda d: d["antonyms"].append([["up"]]), "antonyms[25]"),
    ],
)
def test_a_bad_lexicon_names_the_file_and_the_key(tmp_path: Path, edit, key: str) -> None:  # type: ignore[no-untyped-def]
    data = yaml.safe_load(DEFAULT_PATH.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "lexicon.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        load_lexicon(path)
    assert raised.value.source == str(path)
    assert raised.value.key == key
