"""The semantic triage policy an operator edits: ``policies/triage/``.

Layout::

    triage.yaml                 thresholds, conversation window, negation cues, classifier file name
    emergency_exemplars.yaml    per red-flag category: label, information_exempt, threshold, exemplars
    evidence.yaml               the health gate, each red flag's signs and severity words (triage_evidence)
    vitals.yaml                 vital-sign limits by age, with their published sources (triage_evidence)
    contrast_exemplars.yaml     non_emergency, health_questions and non_health banks
    classifier.json             logistic-regression heads over MiniLM embeddings (bench/train_triage.py)

Everything is validated at start-up; a problem stops it with a ConfigurationError naming the file and
the dotted key, like every feature's policy (``gateway.policies``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import AfterValidator, ConfigDict, Field, Strict, ValidationInfo, with_config

from gateway.triage.evidence_policy import (
    EvidencePolicy,
    check_categories,
    check_pressure_signs,
    load_evidence_policy,
)
from gateway.triage.pattern_lists import PatternLists, load_pattern_lists
from gateway.triage.vitals_policy import VitalsPolicy, load_vitals_policy
from gateway.validation import (
    FILE_CONFIG,
    SignedUnitInterval,
    UnitInterval,
    field_error,
    load_file,
    read_yaml,
    validate,
)

CATEGORY_ID = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
CLASSIFIER_HEADS = ("emergency", "clinical")


@dataclass(frozen=True)
class NegationPolicy:
    """Scope of a negation cue before a red-flag match: the words since the last terminator."""

    cues: tuple[str, ...] = ()
    """Regular expressions of negation cues ("no", "denies", "without"); a cue in scope negates."""
    pseudo: tuple[str, ...] = ()
    """Phrases that contain a cue but do not negate ("not sure", "no longer"): removed before the check."""
    forms: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    """Other ways of saying a negative a sign is told with (#31 item 2): for each written form ("can't",
    "won't stop"), regular expressions of its other forms ("haven't been able to", "unable to", "no one
    can", "nothing stops"). They never negate (each is a pseudo-negation), and the evidence reader reads
    a match as the written form, so "I haven't been able to catch my breath" holds "can't catch my
    breath"."""
    terminators: tuple[str, ...] = ()
    """Regular expressions that end a negation's scope ("but", a comma, "now")."""
    window_words: Annotated[int, Field(ge=1, le=20)] = 5
    """A cue negates a match only when it is at most this many words before it."""
    hypothetical: tuple[str, ...] = ()
    """Regular expressions of a sentence that supposes, asks or worries rather than reports ("what
    if", "could it happen", "I'm worried that", "how much would be too much"): its signs do not count
    and it matches no red-flag rule, unless it also says the complaint is here now (``hypothetical_now``
    or ``evidence.yaml``'s ``present``)."""
    hypothetical_object: tuple[str, ...] = ()
    """Regular expressions of a cue and its object, whose match alone is supposed (not the clause up
    to its end): what one wants to prevent or avoid ("will ibuprofen prevent another fit"), so a
    report that follows ("... he is fitting now") keeps its signs."""
    hypothetical_now: tuple[str, ...] = ()
    """...words that bring a supposing sentence back to now ("right now", "I've just taken", "is
    happening")."""
    denials: bool = True
    """A red flag whose signs the message names only in denial ("no chest pain", "denies fever") and
    nowhere as present cannot be raised by the exemplar and classifier layers either."""

    def __post_init__(self) -> None:
        keys = ("cues", "pseudo", "terminators", "hypothetical", "hypothetical_object", "hypothetical_now")
        named = [(f"forms.{word}", patterns) for word, patterns in self.forms.items()]
        for key, patterns in [*((k, getattr(self, k)) for k in keys), *named]:
            for i, pattern in enumerate(patterns):
                try:
                    re.compile(pattern)
                except re.error as err:
                    raise field_error(self, f"{key}[{i}]", f"bad regular expression: {err}") from None


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class TriageSettings:
    exemplar_threshold: UnitInterval = 0.62
    """Exemplar layer: least cosine to a category's nearest exemplar (unless the category sets its own)."""
    exemplar_margin: UnitInterval = 0.02
    """Exemplar layer: the emergency neighbour must beat the nearest contrast exemplar by this much."""
    emergency_probability: UnitInterval = 0.5
    """Classifier layer: probability at or above which a message is an emergency."""
    classifier_veto_margin: UnitInterval = 0.15
    """Classifier layer: does not fire when the nearest contrast exemplar is nearer than the nearest
    emergency exemplar by more than this (cosine): the exemplar banks veto a confidently wrong style."""
    unbound_probability: UnitInterval = 0.0
    """A red flag raised without its own signs (``semantic: gate`` or ``free``) needs an emergency
    probability at least this high (0: the classifier layer's own bar)..."""
    unbound_margin: SignedUnitInterval = 0.0
    """...and its nearest exemplar must beat the nearest contrast exemplar by at least this (cosine)."""
    gate_needs_current: bool = False
    """A red flag bound by the gate (``semantic: gate``) is raised without its signs only when a term of
    the gate's own groups is said of now: not negated, not in background history, not in a supposing
    clause. False: any mention opens the gate."""
    asking_needs_current: bool = False
    """A message that only asks about a topic (every health term in a question or supposing clause,
    negated or history: ``evidence.yaml`` ``asking``) raises no gate-bound red flag without its signs;
    thoughts of suicide (``history_fires``) excepted."""
    gate_report_groups: tuple[str, ...] = ()
    """The ``evidence.yaml`` groups whose terms let a gate-bound red flag be raised without its signs
    (a report of illness: symptoms, injuries, ...); empty: every ``health_gate`` group (a medicine or a
    body part named alone included)."""
    clinical_probability: UnitInterval = 0.2
    """A message is non-clinical only when its health probability is below this..."""
    health_similarity: UnitInterval = 0.6
    """...and its nearest health exemplar (any bank but non_health) is less similar than this (cosine)."""
    inherit_probability: UnitInterval = 0.01
    """A follow-up whose own health probability is at least this inherits a clinical conversation."""
    context_turns: Annotated[int, Field(ge=0, le=20)] = 3
    """Earlier user turns triage reads (an emergency in one is not forgotten; a follow-up inherits)."""
    context_max_chars: Annotated[int, Field(ge=100, le=20_000)] = 1500
    """Each earlier turn is cut to its last this-many characters."""
    encode_max_words: int = 0
    """Each text triage encodes (``TriagePlan.texts``) is cut to its first this-many words; 0: whole (up
    to the model's 256 tokens). The encode of a long post is what triage's p95 latency is; the rule
    layers always read the whole text (docs/benchmarks.md)."""
    encode_max_tokens: int = 0
    """Each text triage encodes is bounded to its last this-many tokens (the model's tokenizer, ``[CLS]``
    and ``[SEP]`` included), cut at a word's start: a long post's complaint of now and its question come
    last (#31 item 6); 0: whole (up to the model's 256 tokens). Applied after ``encode_max_words``."""
    classifier_file: str = "classifier.json"
    """Weights of the classifier layer, relative to policies/triage/."""
    negation: NegationPolicy = field(default_factory=NegationPolicy)

    def __post_init__(self) -> None:
        if not (self.encode_max_words == 0 or 16 <= self.encode_max_words <= 256):
            raise field_error(self, "encode_max_words", "must be 0 (off) or between 16 and 256")
        if not (self.encode_max_tokens == 0 or 16 <= self.encode_max_tokens <= 256):
            raise field_error(self, "encode_max_tokens", "must be 0 (off) or between 16 and 256")


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class EmergencyCategory:
    label: str
    """What the emergency message says was recognised."""
    exemplars: tuple[str, ...]
    information_exempt: bool = False
    """A general information question about it is answered with the safety note."""
    threshold: UnitInterval | None = None
    """Cosine needed for this category (default ``exemplar_threshold``)."""

    def __post_init__(self) -> None:
        if not self.label.strip():
            raise field_error(self, "label", "must not be empty")
        if not self.exemplars or any(not e.strip() for e in self.exemplars):
            raise field_error(self, "exemplars", "needs at least one non-empty exemplar")


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class ContrastBanks:
    non_emergency: tuple[str, ...]
    health_questions: tuple[str, ...]
    non_health: tuple[str, ...]

    def __post_init__(self) -> None:
        for key in ("non_emergency", "health_questions", "non_health"):
            texts = getattr(self, key)
            if not texts or any(not t.strip() for t in texts):
                raise field_error(self, key, "needs at least one non-empty exemplar")


@dataclass(frozen=True)
class LinearHead:
    weights: np.ndarray[Any, np.dtype[np.float32]]
    bias: float

    def probability(
        self, vectors: np.ndarray[Any, np.dtype[np.float32]]
    ) -> np.ndarray[Any, np.dtype[np.float64]]:
        logits = vectors.astype(np.float64) @ self.weights.astype(np.float64) + self.bias
        probabilities: np.ndarray[Any, np.dtype[np.float64]] = 1.0 / (
            1.0 + np.exp(-np.clip(logits, -50.0, 50.0))
        )
        return probabilities


@dataclass(frozen=True)
class Classifier:
    heads: dict[str, LinearHead]
    model: str
    trained_on: dict[str, int]


@dataclass(frozen=True)
class TriagePolicy:
    settings: TriageSettings
    categories: dict[str, EmergencyCategory]
    banks: ContrastBanks
    classifier: Classifier
    directory: Path
    evidence: EvidencePolicy
    vitals: VitalsPolicy

    def label(self, category: str | None) -> str | None:
        """The patient-facing name of a category (or of a context rule id with no category)."""
        if category is None:
            return None
        known = self.categories.get(category)
        return known.label if known else category.replace("_", " ")


def load_triage_policy(
    directory: Path, dimensions: int = 384, lists: PatternLists | None = None
) -> TriagePolicy:
    """``directory``'s triage policy; ``evidence.yaml`` reads the named pattern lists from ``lists`` when
    given (``load_policy`` has read them already for the operating context), else from the directory."""
    settings_file = directory / "triage.yaml"
    settings = validate(TriageSettings, read_yaml(settings_file), str(settings_file))
    categories = load_categories(directory / "emergency_exemplars.yaml")
    banks = load_contrast_banks(directory / "contrast_exemplars.yaml")
    classifier = load_classifier(directory / settings.classifier_file, dimensions)
    evidence_file = directory / "evidence.yaml"
    evidence = load_evidence_policy(
        evidence_file, lists if lists is not None else load_pattern_lists(directory)
    )
    check_categories(evidence, set(categories), str(evidence_file))
    vitals = load_vitals_policy(directory / "vitals.yaml")
    check_pressure_signs(evidence, vitals, str(directory / "vitals.yaml"))
    return TriagePolicy(settings, categories, banks, classifier, directory, evidence, vitals)


def load_contrast_banks(path: Path) -> ContrastBanks:
    return validate(ContrastBanks, read_yaml(path), str(path))


def _category_id(value: str) -> str:
    if not CATEGORY_ID.match(value):
        raise ValueError("ids are lower_snake_case, at most 40 chars")
    return value


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class _CategoriesFile:
    """``emergency_exemplars.yaml`` as written."""

    categories: Annotated[
        dict[Annotated[str, AfterValidator(_category_id)], EmergencyCategory], Field(min_length=1)
    ]


def load_categories(path: Path) -> dict[str, EmergencyCategory]:
    return load_file(path, _CategoriesFile).categories


def _weights(value: tuple[float, ...], info: ValidationInfo) -> tuple[float, ...]:
    dimensions = (info.context or {}).get("dimensions")
    if dimensions is not None and len(value) != dimensions:
        raise ValueError(f"expected a list of {dimensions} numbers, got {len(value)}")
    return value


Finite = Annotated[float, Strict(), Field(allow_inf_nan=False)]


@with_config(ConfigDict(extra="ignore"))
@dataclass(frozen=True)
class _HeadFile:
    weights: Annotated[tuple[Finite, ...], AfterValidator(_weights)]
    """One weight per embedding dimension (the length is checked against the embedder's)."""
    bias: Finite


@with_config(ConfigDict(extra="ignore"))
@dataclass(frozen=True)
class _HeadsFile:
    emergency: _HeadFile
    clinical: _HeadFile


@with_config(ConfigDict(extra="ignore", coerce_numbers_to_str=True))
@dataclass(frozen=True)
class _ClassifierFile:
    """The trained classifier (``classifier.json``, ``bench/train_triage.py``); other keys are notes."""

    heads: _HeadsFile
    model: str = ""
    trained_on: dict[str, int] | None = None


def load_classifier(path: Path, dimensions: int) -> Classifier:
    data = load_file(
        path,
        _ClassifierFile,
        context={"dimensions": dimensions},
        hint=" (train it with: python bench/train_triage.py)",
    )
    heads = {
        name: LinearHead(np.asarray(head.weights, dtype=np.float32), head.bias)
        for name in CLASSIFIER_HEADS
        for head in (getattr(data.heads, name),)
    }
    return Classifier(heads, data.model, dict(data.trained_on or {}))
