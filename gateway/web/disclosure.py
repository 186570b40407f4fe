"""The AI disclosure: a notice that the answer comes from an automated system, on every patient-facing
answer (streamed and not) and on the patient page (California AB 3030; EU AI Act Art. 50(1)).

The operator words it in ``policies/disclosure.yaml`` (default on; a policy directory without the
file gets the default notice). The notice is appended to the answer's text after ``separator``: in a
plain completion to ``message.content``, in a stream as one more content chunk before the last one;
``trust.ai_disclosure`` says whether it was shown and what it said.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import with_config

from gateway.resources import bundled
from gateway.settings import Settings
from gateway.validation import FILE_CONFIG, field_error, load_file

DISCLOSURE_FILE = "disclosure.yaml"

DEFAULT_NOTICE = (
    "This answer was written by an automated system (AI), checked against vetted medical sources. "
    "It is not advice from a clinician: contact your doctor, pharmacist or care team about your care."
)


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class Disclosure:
    enabled: bool = True
    """Show the notice on every patient-facing answer and on the patient page."""
    notice: str = DEFAULT_NOTICE
    """The words shown (plain text)."""
    separator: str = "\n\n"
    """Put between the answer and the notice."""

    def __post_init__(self) -> None:
        if self.enabled and not self.notice.strip():
            raise field_error(self, "notice", "must not be empty while the disclosure is enabled")

    @property
    def suffix(self) -> str:
        """What is appended to the answer ('' when disabled)."""
        return f"{self.separator}{self.notice}" if self.enabled else ""

    def trust_json(self) -> dict[str, Any]:
        return {"shown": self.enabled, "notice": self.notice if self.enabled else None}

    def disclose(self, completion: dict[str, Any]) -> dict[str, Any]:
        """A chat.completion body with the notice appended and ``trust.ai_disclosure`` set."""
        if self.enabled:
            message = completion["choices"][0]["message"]
            message["content"] = f"{message['content']}{self.suffix}"
        completion["trust"]["ai_disclosure"] = self.trust_json()
        return completion


def load_disclosure(settings: Settings) -> Disclosure:
    """``<policy_dir>/disclosure.yaml`` (else the bundled one); the default when the file is absent.
    A bad file stops start-up with a ConfigurationError naming the file and key."""
    path = (settings.policy_dir or bundled("policies")) / DISCLOSURE_FILE
    if not path.is_file():
        return Disclosure()
    return load_file(path, Disclosure)
