"""The AI disclosure's policy file: default on, operator wording, a clear error for a bad file."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.errors import ConfigurationError
from gateway.settings import Settings
from gateway.web.disclosure import DEFAULT_NOTICE, Disclosure, load_disclosure


def completion(answer: str) -> dict:  # type: ignore[type-arg]
    return {"choices": [{"message": {"role": "assistant", "content": answer}}], "trust": {}}


def test_the_bundled_policy_is_on_and_a_directory_without_the_file_gets_the_default(tmp_path: Path) -> None:
    bundled = load_disclosure(Settings())
    assert bundled.enabled
    assert "automated system (AI)" in bundled.notice
    assert load_disclosure(Settings(policy_dir=tmp_path)) == Disclosure(notice=DEFAULT_NOTICE)


def test_the_notice_follows_the_answer_and_the_trust_object_says_so(tmp_path: Path) -> None:
    (tmp_path / "disclosure.yaml").write_text("notice: Written by a machine.\nseparator: ' -- '\n")
    disclosure = load_disclosure(Settings(policy_dir=tmp_path))
    body = disclosure.disclose(completion("Take 500 mg."))
    assert body["choices"][0]["message"]["content"] == "Take 500 mg. -- Written by a machine."
    assert body["trust"]["ai_disclosure"] == {"shown": True, "notice": "Written by a machine."}
    off = Disclosure(enabled=False)
    assert off.disclose(completion("Take 500 mg."))["choices"][0]["message"]["content"] == "Take 500 mg."
    assert off.disclose(completion("x"))["trust"]["ai_disclosure"] == {"shown": False, "notice": None}


@pytest.mark.parametrize(
    ("text", "key"),
    [("enabled: maybe\n", "enabled"), ("notice: '  '\n", "notice"), ("notise: typo\n", "notise")],
)
def test_a_bad_policy_file_names_the_file_and_key(tmp_path: Path, text: str, key: str) -> None:
    (tmp_path / "disclosure.yaml").write_text(text)
    with pytest.raises(ConfigurationError) as info:
        load_disclosure(Settings(policy_dir=tmp_path))
    assert "disclosure.yaml" in str(info.value)
    assert key in str(info.value)
