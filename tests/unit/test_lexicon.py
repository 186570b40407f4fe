"""The verifier's word data (gateway/verification/data/: lexicon, quantities, cues), validated on load."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gateway.errors import ConfigurationError
from gateway.verification.checks.data import DATA_DIR, FILES, CheckData
from gateway.verification.checks.entities import us_spelling
from gateway.verification.checks.polarity import negations, states_effect
from gateway.verification.checks.quantifiers import UNIVERSAL, strength
from gateway.verification.checks.quantities import parse_number
from gateway.verification.lexicon import (
    CUES_PATH,
    DEFAULT_PATH,
    QUANTITIES_PATH,
    load_cues,
    load_lexicon,
    load_quantity_words,
)
from tests.support.checks import CHECK_DATA


def test_the_shipped_lexicon_loads_and_feeds_the_checks() -> None:
    lexicon = load_lexicon()
    assert "the" in CHECK_DATA.words.stopwords
    assert CHECK_DATA.words.synonyms["kids"] == "child"
    assert CHECK_DATA.entities.medicines["paracetamol"] == lexicon.table("medicines")["paracetamol"]
    assert any("increase" in a and "decrease" in b for a, b in lexicon.antonyms)


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda d: d.pop("medicines"), "medicines"),
        (lambda d: d.update(colours=["red"]), "colours"),
        (lambda d: d["stopwords"].append(" padded "), "stopwords[-1]"),
        (lambda d: d["synonyms"].append([]), "synonyms[-1]"),
        (lambda d: d["antonyms"].append([["up"]]), "antonyms[-1]"),
    ],
)
def test_a_bad_lexicon_names_the_file_and_the_key(tmp_path: Path, edit, key: str) -> None:  # type: ignore[no-untyped-def]
    data = yaml.safe_load(DEFAULT_PATH.read_text(encoding="utf-8"))
    edit(data)
    if key.endswith("[-1]"):  # the appended entry: its index is the list's last
        name = key.removesuffix("[-1]")
        key = f"{name}[{len(data[name]) - 1}]"
    path = tmp_path / "lexicon.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        load_lexicon(path)
    assert raised.value.source == str(path)
    assert raised.value.key == key


def test_the_shipped_quantity_words_load_and_feed_the_number_check() -> None:
    words = load_quantity_words()
    assert words.units["mcg"] == ("mass", 0.001)
    assert words.periods["weekly"] == 1 / 7
    assert parse_number("two thousand five hundred", CHECK_DATA.quantities) == 2500
    assert {"per", "cent", "twice", "mg"} <= CHECK_DATA.quantities.numeric_words
    assert us_spelling("diarrhoea and oedema", CHECK_DATA.entities) == "diarrhea and edema"


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda d: d.pop("units"), "units"),
        (lambda d: d["scales"].update(hundred=-100), "scales.hundred"),
        (lambda d: d["periods"].update(week=[1, 0]), "periods.week[1]"),
        (lambda d: d["units"].append({"dimension": "mass", "names": ["oz"]}), "units[21].factor"),
        (lambda d: d["units"][0].update(factor="small"), "units[0].factor"),
    ],
)
def test_bad_quantity_words_name_the_file_and_the_key(tmp_path: Path, edit, key: str) -> None:  # type: ignore[no-untyped-def]
    data = yaml.safe_load(QUANTITIES_PATH.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "quantities.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        load_quantity_words(path)
    assert raised.value.source == str(path)
    assert raised.value.key == key


def test_the_shipped_cues_load_and_feed_the_checks() -> None:
    cues = load_cues()
    assert "without" in cues.lists["negation_cues"]
    assert strength("this always works", CHECK_DATA.strengths) == UNIVERSAL
    assert strength("this sometimes works", CHECK_DATA.strengths) == 1
    assert states_effect("no significant difference in mortality", CHECK_DATA.polarity) is False
    assert states_effect("mortality was reduced", CHECK_DATA.polarity) is True
    scopes = [
        n.scope for n in negations("do not take aspirin", frozenset(), CHECK_DATA.polarity, CHECK_DATA.words)
    ]
    assert scopes == [frozenset({"take", "aspirin"})]


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda d: d.pop("effect"), "effect"),
        (lambda d: d["negation_cues"].append("fail(s"), "negation_cues[36]"),
        (lambda d: d.update(clause_break_punctuation=""), "clause_break_punctuation"),
        (lambda d: d.update(hedges=["about"]), "hedges"),
    ],
)
def test_bad_cues_name_the_file_and_the_key(tmp_path: Path, edit, key: str) -> None:  # type: ignore[no-untyped-def]
    data = yaml.safe_load(CUES_PATH.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "cues.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        load_cues(path)
    assert raised.value.source == str(path)
    assert raised.value.key == key


COUNTING_READS = (
    "from gateway import validation\n"
    "read, seen = validation.read_yaml, []\n"
    "def counted(path, *args, **kwargs):\n"
    "    if path.parent.parent.name == 'verification':\n"
    "        seen.append(path.name)\n"
    "    return read(path, *args, **kwargs)\n"
    "validation.read_yaml = counted\n"
    "from gateway.verification import local\n"
)
"""A script's start: it counts in ``seen`` the word files (``verification/data``) read from here on."""
A_VERIFIER = (
    "class Encoder:\n"
    "    def encode(self, texts): raise AssertionError\n"
    "from gateway.verification.policy import VerificationPolicy\n"
)
"""What building a ``LocalEntailmentVerifier`` in such a script needs (an encoder never called)."""


def printed_by(*steps: str) -> list[str]:
    """What a new interpreter prints running ``COUNTING_READS`` and then ``steps``."""
    script = COUNTING_READS + "".join(steps)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_word_data_is_read_when_the_verifier_is_built_not_at_import() -> None:
    """Importing the verifier reads no word file (``verification/data``); building it reads each once
    (start-up, not a request), and a verifier handed the word data (``CheckData``) reads none."""
    printed = printed_by(
        "print(len(seen))\n",
        A_VERIFIER,
        "built = local.LocalEntailmentVerifier(Encoder(), VerificationPolicy())\n"
        "print(','.join(sorted(seen)))\n"
        "seen.clear()\n"
        "local.LocalEntailmentVerifier(Encoder(), VerificationPolicy(), built.data)\n"
        "print(len(seen))\n",
    )
    assert printed == ["0", "cues.yaml,lexicon.yaml,quantities.yaml,roles.yaml", "0"]


def test_the_same_files_give_the_same_check_data() -> None:
    """One load per process per content: every verifier built over the shipped files shares it."""
    assert CheckData.load() is CheckData.load()
    assert CheckData.load(DATA_DIR) is CHECK_DATA


def test_a_data_file_edited_on_disk_gives_new_check_data(tmp_path: Path) -> None:
    for name in FILES:
        shutil.copy(DATA_DIR / name, tmp_path / name)
    copied = CheckData.load(tmp_path)
    assert copied is CheckData.load(tmp_path)
    assert "zyxwordq" not in copied.words.stopwords
    lexicon = tmp_path / "lexicon.yaml"
    lexicon.write_text(
        lexicon.read_text(encoding="utf-8").replace("stopwords: [a,", "stopwords: [a, zyxwordq,", 1),
        encoding="utf-8",
    )
    edited = CheckData.load(tmp_path)
    assert edited is not copied
    assert "zyxwordq" in edited.words.stopwords
    assert edited is CheckData.load(tmp_path)


def test_a_verifier_built_again_over_the_same_files_reads_no_word_file() -> None:
    """Building a second verifier without handing it the word data reads no file (``CheckData.load``'s
    memo); the first build reads each once."""
    printed = printed_by(
        A_VERIFIER,
        "first = local.LocalEntailmentVerifier(Encoder(), VerificationPolicy())\n"
        "print(len(seen))\n"
        "seen.clear()\n"
        "second = local.LocalEntailmentVerifier(Encoder(), VerificationPolicy())\n"
        "print(len(seen), first.data is second.data)\n",
    )
    assert printed == ["4", "0", "True"]
