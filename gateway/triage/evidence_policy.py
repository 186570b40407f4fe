"""The evidence triage must find before it calls a message an emergency: ``policies/triage/``.

Operator-edited files, validated at start-up (a problem names the file and the dotted key):

``evidence.yaml``
    ``terms``: named groups of words and phrases (compared by their Snowball stems, so "bleeding",
    "bleeds" and "bleed" are one term; ``*`` at the end of a word matches any ending) and regular
    expressions; ``health_gate``: the groups that show a message is about health at all (no emergency
    layer fires without one); ``background`` / ``present``: what makes a sentence history rather than
    the complaint now; ``categories``: per red flag, the signs it needs (``requires``) and the
    severity that makes those signs an emergency on their own (``escalate``); ``term_dates``: the words
    that part a clause where a term's own date is read (``unless_scope: term``).
``vitals.yaml``
    published early-warning limits: ``gateway.triage.vitals_policy``; this module checks that its
    blood-pressure signs and the term groups reading them agree (``check_pressure_signs``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, PositiveInt, with_config

from gateway.triage.clauses import DateParts
from gateway.triage.flag_parts import check_flag_groups
from gateway.triage.pattern_lists import PatternLists, evidence_with_lists
from gateway.triage.vitals_policy import VitalsPolicy
from gateway.validation import (
    FILE_CONFIG,
    SignedUnitInterval,
    UnitInterval,
    compile_all,
    field_error,
    read_yaml,
    refuse,
    validate,
)

GROUP_ID = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
Binding = Literal["signs", "gate", "free"]


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class SignPair:
    """A sign told as a part of the body (or a function) and its state, read in either order within a
    clause: "slurred speech", "my speech is slurred", "his face, one side has dropped" (#31 item 4).
    ``parts`` and ``states`` are regular expressions matched as whole words; at most ``gap`` characters
    lie between them, with no sentence end, ";" or "but" among them. A negation before the first or
    before the last word negates it ("speech isn't slurred")."""

    parts: tuple[str, ...]
    states: tuple[str, ...]
    gap: Annotated[int, Field(ge=1, le=80)] = 30

    def __post_init__(self) -> None:
        if not self.parts or not self.states:
            raise field_error(self, "parts", "a pair needs parts and states")
        compile_all(self, self.parts, "parts")
        compile_all(self, self.states, "states")

    @property
    def patterns(self) -> tuple[str, str]:
        """The part before its state, and the state before its part: two patterns, so that the prefilter
        reads that each needs a part and a state."""
        parts, states = "|".join(self.parts), "|".join(self.states)
        gap = rf"(?:(?!\bbut\b)[^.?!;]){{0,{self.gap}}}"
        return rf"\b(?:{parts})\b{gap}\b(?:{states})\b", rf"\b(?:{states})\b{gap}\b(?:{parts})\b"


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class TermGroup:
    """One named group of terms (e.g. ``bleeding``, ``at_rest``)."""

    words: tuple[str, ...] = ()
    """Words and phrases, compared by Snowball stem ("coughing up blood"); "haemorrhag*" is a prefix,
    "*cillin" a suffix (any word of more than five letters ending so: "amoxicillin"). A word ending in
    "-ful" is matched as written (Snowball stems "handful" to "hand")."""
    patterns: tuple[str, ...] = ()
    """Case-insensitive regular expressions, for what words cannot say ("\\d+ (pills|tablets)"). A pattern
    whose red-flag part comes after another names it ``(?P<flag>...)`` or ``(?P<flag_<part>>...)``, as
    the context rules do (``flag_parts``): a negation before it denies the sign ("my leg has never been
    more swollen than the other"). No other group is named."""
    pairs: tuple[SignPair, ...] = ()
    """Signs told as a part and its state in either order (``SignPair``), read also across a dash
    ("my left arm - it's gone completely weak")."""
    negatable: bool = True
    """A negated mention ("no bleeding", "denies chest pain") does not count as a sign. False for
    signs where a denial must not be trusted (thoughts of suicide)."""
    anywhere: bool = False
    """Who the message is about (a child, a pregnancy, diabetes): a mention anywhere in the message
    counts for every window of sentences ("My son is 2." opening a long post about his breathing)."""
    history_counts: bool = False
    """A risk, not an episode (a hospital stay, an operation): told in the past it still counts ("he was in
    hospital for two weeks, now his leg is swollen"); its ``unless`` keeps out what is long past."""
    unless: tuple[str, ...] = ()
    """Patterns of a sentence in which this group's terms are not signs ("the scar feels numb along one
    side": numb skin by a scar is not a stroke's one-sided numbness)."""
    unless_scope: Literal["sentence", "term"] = "sentence"
    """Where ``unless`` is read: anywhere in the sentence, or (``term``) only attached to the term it
    excepts, in the term's own part of the clause or a short date beside it (``clauses.attached``): a
    long-ago operation does not except a recent stay told beside it."""
    reads: Literal["blood_pressure"] | None = None
    """Read by a reader of numbers instead of words (``gateway/triage/pressure.py``), against limits
    ``vitals.yaml`` gives the group (``pressure_signs``)."""

    def __post_init__(self) -> None:
        if self.reads is not None and (self.words or self.patterns or self.pairs):
            raise field_error(self, "reads", "a group read by a reader has no words or patterns")
        if not self.words and not self.patterns and not self.pairs and self.reads is None:
            raise field_error(self, "words", "a group needs at least one word or pattern")
        for i, word in enumerate(self.words):
            if (
                not word.strip("* ")
                or "*" in word.strip("*")
                or (word.startswith("*") and word.endswith("*"))
            ):
                raise field_error(self, f"words[{i}]", "a word is non-empty; '*' only at one end")
        compile_all(self, self.patterns, "patterns")
        check_flag_groups(self, self.patterns, "patterns")
        compile_all(self, self.unless, "unless")
        if self.unless_scope == "term" and not self.unless:
            raise field_error(self, "unless_scope", "a term scope needs unless patterns")


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class SignRule:
    """What one red-flag category needs to be found in the message."""

    requires: tuple[tuple[str, ...], ...]
    """Every inner list must be met by at least one of its groups: ``[[medicine, substance],
    [amount, intent]]`` is (a medicine or a substance) and (an amount or an intent). The semantic
    layers (exemplars, classifier) may raise this category only when these signs are present."""
    escalate: tuple[tuple[str, ...], ...] = ()
    """Alternatives, each a list of groups that must all be present together with ``requires``: any
    one met makes the message an emergency on its own (layer ``signs``), e.g. breathing trouble
    ``[at_rest]`` or ``[cannot_speak]``."""
    history_fires: bool = False
    """Signs in background sentences ("in 2019", "years ago") count too (thoughts of suicide)."""
    semantic: Binding = "signs"
    """What binds the exemplar and classifier layers for this category. ``signs``: they may raise it
    only when ``requires`` is met (a body sign can be named: bleeding, breathing, a drug and a dose).
    ``gate``: only the health gate binds them (the category is a candidate when it is the nearest
    category of all and the text names a term of a ``health_gate`` group). ``free``: nothing binds
    them (the nearest category of all is a candidate even when the text passes no gate: thoughts of
    suicide, told in words of mood and intent no list covers). The shipped
    ``evidence.yaml`` sets every red flag to ``gate``: binding to signs lost emergencies main's semantic
    layers caught (docs/safety.md). ``requires`` still gives the evidence shown and counts as health
    content for the rule layers."""
    unbound_probability: UnitInterval | None = None
    """This category's own bar for a raise without its signs (None: ``triage.yaml``'s)."""
    unbound_margin: SignedUnitInterval | None = None
    """This category's own margin for a raise without its signs (None: ``triage.yaml``'s)."""
    adopts_when: tuple[str, ...] = ()
    """Term groups: when the semantic layers recognise an emergency whose nearest category may not be
    raised (its signs absent and the read not confident enough for ``unbound_*``) and the text names a
    term of one of these groups, this category is a candidate instead, at its own bars (thoughts of
    suicide: a post about despair whose nearest exemplar is a physical red flag). Empty: never."""
    gate_groups: tuple[str, ...] = ()
    """For a ``gate`` category: the ``health_gate`` groups whose terms open its gate (empty: every one,
    or triage.yaml's ``gate_report_groups``). Thoughts of suicide, raised at the semantic layers' own
    bars, leave out ``clinical``: a care setting named ("3 hours in A&E") tells where someone is, not
    how their mind or body is."""
    safe_when: tuple[str, ...] = ()
    """Term groups in which the person states they are safe now ("no thoughts of harming myself",
    "I'm not going to do anything stupid"): told of now, the semantic layers may not raise this
    category alone (the text gets its safety note), unless a group of ``safe_unless`` is told of now
    too. Rules and escalated signs are untouched. Empty: off."""
    safe_unless: tuple[str, ...] = ()
    """Term groups that outweigh a statement of safety (a wish to die, a plan, a means at hand)."""

    def __post_init__(self) -> None:
        if not self.requires or any(not alternatives for alternatives in self.requires):
            raise field_error(self, "requires", "needs at least one non-empty list of groups")
        if any(not groups for groups in self.escalate):
            raise field_error(self, "escalate", "every alternative needs at least one group")


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class AskingPolicy:
    """What makes a sentence a question about a topic rather than a report (#31 item 2): its signs
    are supposed, not reported, and a message that only asks raises no red flag without signs."""

    openers: tuple[str, ...] = ()
    """Patterns of a question without a "?" ("how long does ...", "is it safe to ..."); empty: off."""
    reports: tuple[str, ...] = ()
    """Patterns of a report of the person now ("my chest feels", "he's having", "I took"): a question
    holding one is a report ("is it normal that my lips are blue?")."""
    possessed: tuple[str, ...] = ()
    """Term groups that make a question a report when a possessive comes just before ("is my chest
    pain serious?")."""
    same_paragraph: bool = False
    """A question is read as about a report of now only when the report is in its own paragraph (off:
    anywhere in the text): a long post's closing question about a topic stays a question."""
    worries: tuple[str, ...] = ()
    """Patterns of a sentence that only tells a worry ("I'm so anxious it will happen again"): not a
    report of now that makes a question about it."""
    confirms: tuple[str, ...] = ()
    """Patterns of a sentence that says what the message supposed has happened ("what happens if you
    take 50 paracetamol? I already took them"): its supposing clauses and questions are then reports."""

    def __post_init__(self) -> None:
        compile_all(self, self.confirms, "confirms")
        compile_all(self, self.openers, "openers")
        compile_all(self, self.reports, "reports")
        compile_all(self, self.worries, "worries")


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class EpisodePolicy:
    """Narrative grammar of a long post (#31 item 6): an episode told as completed is history even
    without a date ("we ended up in A&E", "back then", "she was in hospital with it"), and the past
    sentences that go on telling it are history too, until the post comes back to now."""

    frames: tuple[str, ...] = ()
    """Patterns of a completed-episode frame ("back then", "at the time", "last time", "ended up in",
    "was diagnosed with", "they said it was"): such a sentence is history unless it matches ``now``."""
    past: tuple[str, ...] = ()
    """Past-tense forms ("was", "had", "couldn't", "-ed"): a run of sentences of one paragraph each
    holding one and nothing of ``now`` is one episode, history when any of them is."""
    now: tuple[str, ...] = ()
    """Present tense and times of now ("is", "I'm", "tonight", "an hour ago", "again"): a sentence
    holding one is never history by ``frames`` nor by being part of an episode's run."""
    across_paragraphs: bool = False
    """Whether an episode goes on past a blank line (off: a new paragraph starts a new frame)."""
    changes_after: tuple[str, ...] = ()
    """Clause breaks that set the next clause against the one before ("but", "now"): a history clause
    followed, in its paragraph, by such a clause of now (``changed``) is not history; the complaint it
    names is the one that changes ("vomiting blood on and off for a year, but tonight it's a bowlful")."""
    continues: tuple[str, ...] = ()
    """That next clause goes on about the same complaint ("it", "this", "they" near its start)."""
    changed: tuple[str, ...] = ()
    """A change of now in that next clause (a time of now, new, worse, different, "this time")."""
    unchanged: tuple[str, ...] = ()
    """A recovery in that next clause ("but I'm fine now"): no change."""
    steady: tuple[str, ...] = ()
    """A sign told as unchanged for long ("same as it has been for years", "no better and no worse"):
    its clause is history, as a date makes it, unless it tells a change of now; ``unchanged`` too."""
    residual: tuple[str, ...] = ()
    """A state told as having stayed ("still", "ever since", "since my stroke", "never came back"): in a
    sentence dated to a past event (``background``) it is what that event left (a deficit of the
    past), history unless the sentence tells a change of now (``residual_breaks``): "I had a stroke in
    2021, my left arm is still weak" (#31 items 2, 6). A pattern that names the event in a group
    ``event`` ("since the stroke") anchors its clause: the dated event may be told any number of
    clauses before it (``residual_reach`` does not bound it), in a ``background``-dated clause naming
    the same event ("My dad had a stroke two years ago. [...] His hand has stayed weak since the
    stroke."); a change or a time of now between still stops the reading."""
    residual_breaks: tuple[str, ...] = ()
    """A change or a time of now that makes a ``residual`` sentence current ("today", "suddenly",
    "worse", "an hour ago", "again")."""
    residual_reach: Annotated[int, Field(ge=0, le=5)] = 0
    """How many clauses before a ``residual`` clause that tells no time of its own (no ``background``, no
    ``residual_breaks``) its dated event may be told in ("I had a stroke in 2021. My arm is still weak."):
    the clauses before are read back, over other such residual clauses, until one that ``background``
    dates (the residual clause is history) or one that tells a change or a time of now (it is not); 0
    reads the residual clause's own sentence only."""
    recovered: tuple[str, ...] = ()
    """A function told as regained ("walking again", "back to normal", "recovered"): its words are not
    a change of now, so its "again" does not make a clause of now for ``residual_breaks``."""
    story: tuple[str, ...] = ()
    """Someone else's story told as news (a film, a TV drama, a novel, the news, a podcast): its
    sentence is history whatever its tense, unless it tells a change or a time of now (``changed``,
    ``residual_breaks``)."""
    history_denies: bool = True
    """A red flag (not ``history_fires``) one of whose required signs the message names only as history
    is denied to the exemplar and classifier layers, like a sign named only in denial: an earlier
    episode does not make today's question that emergency."""

    def __post_init__(self) -> None:
        compile_all(self, self.frames, "frames")
        compile_all(self, self.past, "past")
        compile_all(self, self.now, "now")
        compile_all(self, self.continues, "continues")
        compile_all(self, self.changed, "changed")
        compile_all(self, self.unchanged, "unchanged")
        compile_all(self, self.steady, "steady")
        compile_all(self, self.residual, "residual")
        compile_all(self, self.residual_breaks, "residual_breaks")
        compile_all(self, self.recovered, "recovered")
        compile_all(self, self.story, "story")


_WORD = re.compile(r"^[a-z][a-z']*$")


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class TermDatesPolicy:
    """Where a term's own date is read (``TermGroup.unless_scope: term``, ``clauses.attached``): a clause
    is parted into the phrases a date can belong to, and a short part beside the term is its date."""

    break_words: tuple[str, ...] = ()
    """Words that part a clause ("but", "then", "because"), besides punctuation and a spaced dash."""
    and_before: tuple[str, ...] = ()
    """Words after which an "and" parts a clause (a new subject, verb or time: "and was in hospital last
    week"); an "and" before any other word joins nouns ("my hip and knee") and parts nothing."""
    filler: tuple[str, ...] = ()
    """Words at a part's start not counted in its length ("which was", "about", "maybe")."""
    date_words: Annotated[int, Field(ge=0, le=10)] = 3
    """A part beside the term this many words long at most (filler not counted) is the term's date told
    beside it ("had an operation, years ago")."""

    def __post_init__(self) -> None:
        for key in ("break_words", "and_before", "filler"):
            for i, word in enumerate(getattr(self, key)):
                if not _WORD.match(word):
                    raise field_error(
                        self,
                        f"{key}[{i}]",
                        "must be one lower-case word (letters, an apostrophe)",
                    )

    @cached_property
    def parts(self) -> DateParts:
        """The words compiled (``clauses.DateParts``), once per policy."""
        return DateParts.of(self.break_words, self.and_before, self.filler, self.date_words)


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class ReassurancePolicy:
    """Reassurance said of now keeps a semantic emergency from being decided alone (#31 item 2).

    The exemplar and classifier layers read a worried question in the words of the emergency it
    resembles; a message that also tells what is well now (a child drinking and weeing, "breathing is
    fine", "no blood", "hasn't been sick") and no sign of severity, trajectory or onset is answered
    with the red flag's safety note instead. The rule, vital-sign and escalated-sign layers are
    untouched (they hold the category's own signs with a severity word)."""

    enabled: bool = False
    applies_to: Literal["semantic", "unbound"] = "unbound"
    """``unbound``: only a red flag the semantic layers raise without its own signs (#31 item 2: they
    may raise a category's score, not invent one); ``semantic``: any they decide."""
    well: tuple[str, ...] = ()
    """Term groups of what is well now, said (not negated, supposed or history)."""
    denied: tuple[str, ...] = ()
    """Term groups whose denial of now ("no rash", "breathing is not hard") is reassurance."""
    acuity: tuple[str, ...] = ()
    """Term groups of severity, trajectory or onset: said of now, the semantic read stands."""
    exempt: tuple[str, ...] = ()
    """Red flags never calmed so (thoughts of suicide: reassurance is how a crisis is played down)."""
    acuity_denied: bool = False
    """Also calm a semantic raise whose red flag's own signs are present when the text denies, of now,
    what would make them grave and affirms none of it: a sign of ``acuity`` or one of the red flag's
    ``escalate`` groups (its required signs told of now aside). "32 weeks, mild headaches, no swelling,
    no flashing lights, no pain under my ribs" or "out of breath on fast runs, never at rest" is
    answered with the red flag's safety note (#31, s61: long forum posts that list what they do not
    have). Applies whatever ``applies_to`` says."""


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class UnboundPolicy:
    """What a red flag the semantic layers raise without its own signs needs (#31 item 2: the
    exemplars and classifier may raise a category's score, not invent one): a red flag whose signs
    the text holds takes the decision over (``rehome``), else a ``stands_on`` term told of now keeps
    it, else the text is answered with the red flag's safety note (``red_flags.bind_unbound``)."""

    enabled: bool = False
    rehome: bool = True
    """Move the decision to the nearest red flag whose signs (``requires``) or ``adopts_when`` groups
    the text holds of now, with that flag's signs as evidence."""
    rehome_ignores: tuple[str, ...] = ()
    """Term groups too loose to re-home a decision on their own ("dark" for low mood)."""
    stands_on: tuple[str, ...] = ()
    """Term groups told of now (a worry counts, a topic asked about does not) on which an unbound raise
    stands: severity, trajectory, onset, the grave signs of any red flag (an ingestion, green vomit, a
    burn, a young infant, a face droop), and mood, the mind, drink or drugs."""
    exempt: tuple[str, ...] = ()
    """Red flags whose unbound read always stands (told in words of mood and intent no list covers)."""
    names: tuple[str, ...] = ()
    """Groups, besides every red flag's signs, whose words a dropped raise's safety note names."""
    note_signs: PositiveInt = 4
    """At most this many of them, in the order told."""


@with_config(FILE_CONFIG)
@dataclass(frozen=True)
class EvidencePolicy:
    terms: dict[str, TermGroup]
    health_gate: tuple[str, ...]
    """Groups that show health content: without one of them no emergency layer fires."""
    categories: dict[str, SignRule]
    background: tuple[str, ...] = ()
    """Patterns of a background sentence ("in 2019", "years ago", "history of", "it went away")..."""
    present: tuple[str, ...] = ()
    """...unless it also says the complaint is here now ("now", "again", "still", "today")."""
    episode: EpisodePolicy = field(default_factory=EpisodePolicy)
    """Episodes told as completed without a date, and the sentences that go on telling them."""
    term_dates: TermDatesPolicy = field(default_factory=TermDatesPolicy)
    """Where a term's own date is read (``unless_scope: term``)."""
    window_sentences: Annotated[int, Field(ge=1, le=10)] = 2
    """Signs are combined over at most this many consecutive sentences (the worst window decides)."""
    information_questions: tuple[str, ...] = ()
    """Extra patterns of a general information question, added to the context's ``information_questions``
    ("what would an overdose look like", "is it true you can ...", "which ... are least risky")."""
    figurative: tuple[str, ...] = ()
    """Patterns of figurative wording blanked before anything is read ("dying to see", "heartbroken",
    "my phone is dying", a song's or film's title): an idiom is neither a sign nor health content."""
    information_personal: tuple[str, ...] = ()
    """Extra patterns that make a question a report of something happening now (vignette style:
    "presents with", "brought in with", "on examination"), added to the context's ``personal_report``."""
    asking: AskingPolicy = field(default_factory=AskingPolicy)
    """Question sentences that ask about a topic (their signs are supposed, not reported)."""
    resolved: tuple[str, ...] = ()
    """Patterns saying an episode is over ("been well for three years", "in a better place now"): a
    ``history_fires`` red flag then reads only what is told of now."""
    reassurance: ReassurancePolicy = field(default_factory=ReassurancePolicy)
    """What is well now, which keeps the semantic layers from deciding an emergency alone."""
    unbound: UnboundPolicy = field(default_factory=UnboundPolicy)
    """What a red flag raised by the semantic layers without its own signs needs to stand."""

    def __post_init__(self) -> None:
        compile_all(self, self.background, "background")
        compile_all(self, self.present, "present")
        compile_all(self, self.figurative, "figurative")
        compile_all(self, self.information_personal, "information_personal")
        compile_all(self, self.resolved, "resolved")
        for i, group in enumerate(self.asking.possessed):
            if group not in self.terms:
                raise field_error(self, f"asking.possessed[{i}]", f"unknown term group {group!r}")
        compile_all(self, self.information_questions, "information_questions")
        for name, term in self.terms.items():
            if not GROUP_ID.match(name):
                raise field_error(self, f"terms.{name}", "ids are lower_snake_case")
            if term.unless_scope == "term" and not self.term_dates.break_words:
                reason = (
                    "a term scope needs `term_dates.break_words` (else a term's part is its whole clause)"
                )
                raise field_error(self, f"terms.{name}.unless_scope", reason)
        for i, group in enumerate(self.health_gate):
            if group not in self.terms:
                raise field_error(self, f"health_gate[{i}]", f"unknown term group {group!r}")
        for name, rule in self.categories.items():
            for i, group in enumerate(rule.gate_groups):
                if group not in self.health_gate:
                    where = f"categories.{name}.gate_groups[{i}]"
                    raise field_error(self, where, f"not a health_gate group: {group!r}")
        for section in ("unbound", "reassurance"):
            for i, name in enumerate(getattr(self, section).exempt):
                if name not in self.categories:
                    key = f"{section}.exempt[{i}]"
                    raise field_error(self, key, f"unknown red flag {name!r}")
        for key, group in self._group_references():
            if group not in self.terms:
                raise field_error(self, key, f"unknown term group {group!r}")

    def _group_references(self) -> Iterator[tuple[str, str]]:
        """Every term group named outside ``terms`` (but the health gate's), with its dotted key."""
        for key in ("well", "denied", "acuity"):
            yield from ((f"reassurance.{key}[{i}]", g) for i, g in enumerate(getattr(self.reassurance, key)))
        for key in ("stands_on", "rehome_ignores", "names"):
            yield from ((f"unbound.{key}[{i}]", g) for i, g in enumerate(getattr(self.unbound, key)))
        for name, rule in self.categories.items():
            for key in ("adopts_when", "safe_when", "safe_unless"):
                yield from ((f"categories.{name}.{key}[{i}]", g) for i, g in enumerate(getattr(rule, key)))
            for key in ("requires", "escalate"):
                for i, groups in enumerate(getattr(rule, key)):
                    yield from ((f"categories.{name}.{key}[{i}]", g) for g in groups)


def load_evidence_policy(path: Path, lists: PatternLists | None = None) -> EvidencePolicy:
    """``evidence.yaml``, its term groups' ``pattern_lists`` read in from ``lists``. A key given twice is
    refused: YAML would keep the last silently (two ``patterns`` lists of one group had dropped the first)."""
    data = evidence_with_lists(read_yaml(path), lists or PatternLists({}), str(path))
    return validate(EvidencePolicy, data, str(path))


def check_pressure_signs(evidence: EvidencePolicy, vitals: VitalsPolicy, source: str) -> None:
    """Every pressure sign (``vitals.yaml``) is a term group read as a blood pressure, and every such group
    has its limits: no reading is a sign unchecked."""
    for name, group in evidence.terms.items():
        if group.reads == "blood_pressure" and name not in vitals.pressure_signs:
            reason = "missing: the term group reads a blood pressure, give its limits"
            refuse(source, f"pressure_signs.{name}", reason)
    for name in vitals.pressure_signs:
        if name not in evidence.terms:
            refuse(source, f"pressure_signs.{name}", "unknown term group of evidence.yaml")
        if evidence.terms[name].reads != "blood_pressure":
            refuse(source, f"pressure_signs.{name}", "its term group needs `reads: blood_pressure`")


def check_categories(evidence: EvidencePolicy, categories: set[str], source: str) -> None:
    """Every emergency category has its signs, and every sign rule names a known category."""
    for name in sorted(categories - set(evidence.categories)):
        refuse(source, f"categories.{name}", "missing: every emergency category needs signs")
