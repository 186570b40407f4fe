"""Operating contexts: scope and the pattern triage rules of one deployment (``contexts/<name>.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import with_config

from gateway.triage.flag_parts import check_flag_groups
from gateway.validation import FILE_CONFIG, compile_all


@dataclass(frozen=True)
class TriageRule:
    id: str
    """Name of the rule, recorded in the trust report and the audit."""
    patterns: tuple[str, ...]
    """Case-insensitive regular expressions matched against the question. An emergency rule names the
    red flag's own parts, which a patient can deny, as groups ``(?P<flag>...)`` or ``(?P<flag_<part>>...)``
    (``flag_parts``): a negation before any of them keeps the match from firing. No other group is named."""
    message: str = ""
    """Template name of the message sent when this rule decides (default by category)."""
    information_exempt: bool = False
    """Emergency rules only: a general question about this red flag that reports nothing personal is
    answered (with the emergency safety note) instead of getting the emergency message."""
    negatable: bool = True
    """Emergency rules only: a negated match ("no chest pain", "denies") does not fire. Set false for
    red flags where a denial must not be trusted (suicidal intent)."""
    denied_by: tuple[str, ...] = ()
    """Patterns of the words just before a match (matched up to where the match starts) that keep it
    from firing: for a rule that is not ``negatable``, the only denials it trusts; for a ``negatable``
    one, beside negation (a question about how to tell whether someone is suicidal). A statement of
    safety ("no thoughts of harming myself", "I'm not going to hurt myself") is not written here: every
    layer reads it from the red flag's ``safe_when`` in ``evidence.yaml``."""


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class OperatingContext:
    name: str
    description: str
    clinical_terms: tuple[str, ...] = ()
    """Optional patterns that mark a question as clinical even when the semantic health recognition
    would call it non-clinical (a hint that can only keep a question clinical, never a gate)."""
    in_scope: tuple[str, ...] = ()
    """Patterns a clinical question must match to be in scope; empty means every clinical question is."""
    emergency: tuple[TriageRule, ...] = ()
    non_clinical: tuple[TriageRule, ...] = ()
    out_of_scope: tuple[TriageRule, ...] = ()
    referral: str = "your clinician"
    """Who the patient is told to ask about out-of-scope questions."""
    emergency_number: str = "your local emergency number"
    crisis_lines: str = "a crisis line (in the UK, Samaritans on 116 123; in the US, call or text 988)"
    """The crisis lines named beside the emergency number where thoughts of suicide or self-harm may be
    in question (the emergency and safety messages, the non-clinical decline): a site outside the UK and
    the US names its own."""
    information_questions: tuple[str, ...] = ()
    """Patterns of general information questions ("what are the signs of ...")."""
    personal_report: tuple[str, ...] = ()
    """Patterns that make a question a report about someone's situation now ("I have", "my dad is")."""

    def __post_init__(self) -> None:
        compile_all(self, self.clinical_terms, "clinical_terms")
        compile_all(self, self.in_scope, "in_scope")
        compile_all(self, self.information_questions, "information_questions")
        compile_all(self, self.personal_report, "personal_report")
        for group in ("emergency", "non_clinical", "out_of_scope"):
            for rule in getattr(self, group):
                compile_all(self, rule.patterns, f"{group}[{rule.id}]")
                check_flag_groups(self, rule.patterns, f"{group}[{rule.id}]")
                compile_all(self, rule.denied_by, f"{group}[{rule.id}].denied_by")
