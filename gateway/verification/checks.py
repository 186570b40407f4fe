"""Explicit checks that embedding similarity misses and that matter most in medicine.

A sentence embedding scores "take 500 mg" and "take 50 mg", or "do not take" and "take", as near
duplicates. Each function here compares one aspect of a claim with a piece of evidence text and
returns a typed ``CheckResult``: ``PASS``, ``MISSING`` (the evidence does not state what the claim
says: not entailed) or ``CLASH`` (the evidence states something incompatible: a contradiction when the
evidence is about the same thing). All functions are pure and cheap; they run on every claim.

Evidence that says more than the claim never fails a check: a number, hedge or entity the claim drops
is fine. Only what the claim adds or changes fails.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from rapidfuzz import fuzz

from gateway.text import normalise, strip_markers
from gateway.verification.lexicon import load_lexicon

# --------------------------------------------------------------------------------------------------
# Results


class CheckOutcome(StrEnum):
    PASS = "pass"  # noqa: S105 (an outcome, not a password)
    MISSING = "missing"
    CLASH = "clash"


class CheckName(StrEnum):
    NUMBER = "number_mismatch"
    NEGATION = "negation"
    ANTONYM = "antonym"
    QUANTIFIER = "quantifier"
    ENTITY = "entity_missing"


@dataclass(frozen=True)
class CheckResult:
    name: CheckName
    outcome: CheckOutcome
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.outcome is CheckOutcome.PASS

    @property
    def clash(self) -> bool:
        return self.outcome is CheckOutcome.CLASH


def _passed(name: CheckName) -> CheckResult:
    return CheckResult(name, CheckOutcome.PASS)


# --------------------------------------------------------------------------------------------------
# Tokens and stems

_WORD = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")
STEM_PREFIX = 5
"""Stems are truncated to this many characters: cheap, and merges reduce/reduced/reduction."""
_SUFFIXES = (
    "ingly",
    "edly",
    "ations",
    "ation",
    "ments",
    "ment",
    "ness",
    "ities",
    "ity",
    "ions",
    "ion",
    "ing",
    "ed",
    "es",
    "s",
    "ly",
)
_MIN_ROOT = 3
"""A suffix is stripped only when at least this many characters remain."""

LEXICON = load_lexicon()
"""Word lists (``data/lexicon.yaml``), loaded and validated once at import."""
STOPWORDS = frozenset(LEXICON.words["stopwords"])


CACHE_SIZE = 4096
"""Texts whose analysis is memoised: a passage is checked against every claim and candidate."""
_cached = lru_cache(maxsize=CACHE_SIZE)


@_cached
def tokens(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(normalise(strip_markers(text))))


SYNONYMS = LEXICON.table("synonyms")
"""Lay and clinical words for the same thing, counted as one word by coverage ("kids" = "paediatric")."""


@lru_cache(maxsize=CACHE_SIZE * 4)
def stem(word: str) -> str:
    """A crude, deterministic stem: strip one common suffix and a final 'e', then truncate."""
    word = SYNONYMS.get(word, word)
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_ROOT:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > _MIN_ROOT + 1:
        word = word[:-1]
    return word[:STEM_PREFIX]


@_cached
def content_stems(text: str) -> frozenset[str]:
    """Stems of the words that carry meaning (no stopwords, no bare numbers)."""
    return frozenset(stem(t) for t in tokens(text) if t not in STOPWORDS and not t.isdigit() and len(t) > 1)


@_cached
def all_stems(text: str) -> frozenset[str]:
    """Stems of every word, stopwords included (polarity words like "more" and "less" are stopwords)."""
    return frozenset(stem(t) for t in tokens(text))


@_cached
def content_words(text: str) -> tuple[str, ...]:
    """The words that carry meaning, in order (no stopwords, no bare numbers)."""
    return tuple(t for t in tokens(text) if t not in STOPWORDS and not t.isdigit() and len(t) > 1)


@_cached
def content_bigrams(text: str) -> frozenset[tuple[str, str]]:
    """Stem pairs of consecutive content words: who does what to whom, roughly."""
    stems = [stem(w) for w in content_words(text)]
    return frozenset(itertools.pairwise(stems))


def bigram_coverage(claim: str, evidence: str) -> float:
    """Share of the claim's content-word bigrams that also occur in the evidence (1.0 with none)."""
    wanted = content_bigrams(claim)
    if not wanted:
        return 1.0
    return len(wanted & content_bigrams(evidence)) / len(wanted)


@_cached
def words(text: str) -> frozenset[str]:
    """Every word form of the text, unstemmed (for word lists that stems would blur)."""
    return frozenset(tokens(text))


def coverage(claim: str, evidence: str) -> float:
    """Share of the claim's content stems that occur in the evidence (1.0 for a claim with none)."""
    wanted = content_stems(claim)
    if not wanted:
        return 1.0
    have = content_stems(evidence)
    return len(wanted & have) / len(wanted)


# --------------------------------------------------------------------------------------------------
# Numbers, units, ranges and frequencies

_SMALL = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "dozen": 12,
}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_FRACTIONS = {"half": 0.5, "quarter": 0.25}
_NUMBER_WORDS = "|".join(sorted([*_SMALL, *_SCALES, *_FRACTIONS], key=len, reverse=True))
_NUMERAL = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_NUM_TOKEN = rf"(?:{_NUMERAL}|(?:{_NUMBER_WORDS})(?:[\s-]+(?:and\s+)?(?:{_NUMBER_WORDS}))*)"

# Unit -> (dimension, factor to the dimension's base unit).
_UNITS: dict[str, tuple[str, float]] = {}
for _names, _dim, _factor in (
    (("mcg", "µg", "ug", "microgram", "micrograms"), "mass", 0.001),
    (("mg", "milligram", "milligrams", "milligramme", "milligrammes"), "mass", 1.0),
    (("g", "gram", "grams", "gramme", "grammes", "gm"), "mass", 1_000.0),
    (("kg", "kilogram", "kilograms", "kilo", "kilos"), "mass", 1_000_000.0),
    (("ml", "millilitre", "millilitres", "milliliter", "milliliters", "cc"), "volume", 1.0),
    (("l", "litre", "litres", "liter", "liters"), "volume", 1_000.0),
    (("second", "seconds", "sec", "secs"), "time", 1.0),
    (("minute", "minutes", "min", "mins"), "time", 60.0),
    (("hour", "hours", "hr", "hrs", "h"), "time", 3_600.0),
    (("day", "days"), "time", 86_400.0),
    (("week", "weeks", "wk", "wks"), "time", 604_800.0),
    (("month", "months"), "time", 2_629_800.0),
    (("year", "years", "yr", "yrs"), "time", 31_557_600.0),
    (("%", "percent", "per cent", "pc"), "percent", 1.0),
    (("iu", "units", "unit"), "units", 1.0),
    (("mmhg",), "pressure", 1.0),
    (("mmol/l", "mmol"), "mmol", 1.0),
    (("mg/dl",), "mg/dl", 1.0),
    (("kcal", "calories", "calorie"), "energy", 1.0),
    (
        (
            "tablet",
            "tablets",
            "pill",
            "pills",
            "capsule",
            "capsules",
            "puff",
            "puffs",
            "drop",
            "drops",
            "dose",
            "doses",
            "sachet",
            "sachets",
            "teaspoon",
            "teaspoons",
            "spoonful",
            "spoonfuls",
        ),
        "count",
        1.0,
    ),
    (("times", "fold", "x"), "times", 1.0),
):
    for _name in _names:
        _UNITS[_name] = (_dim, _factor)
_UNIT_RE = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))

_PERIODS = {
    "day": 1.0,
    "daily": 1.0,
    "week": 1 / 7,
    "weekly": 1 / 7,
    "month": 1 / 30,
    "monthly": 1 / 30,
    "hour": 24.0,
    "hourly": 24.0,
    "night": 1.0,
    "nightly": 1.0,
    "year": 1 / 365,
    "yearly": 1 / 365,
}
_HOURS_PER_DAY = 24.0
_DAYS_PER_WEEK = 7.0
_COUNT_WORDS = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
_PERIOD_RE = "day|week|month|hour|night|year"
NUMERIC_WORDS = frozenset(
    (
        *(w for name in _UNITS for w in name.split()),
        *_SMALL,
        *_SCALES,
        *_FRACTIONS,
        *_PERIODS,
        *_COUNT_WORDS,
        *("per", "cent", "every", "times", "percentage", "hundreds", "thousands", "millions", "billions"),
    )
)
"""Words the number check owns (units, number words, periods): quote binding leaves them to it."""
_FREQUENCY = re.compile(
    rf"\b(?:(?P<count>once|twice|thrice|{_NUM_TOKEN})(?:\s+times?|\s*x)?\s+(?:a|an|per|each|every)\s+"
    rf"(?P<per>{_PERIOD_RE})s?\b"
    rf"|(?P<count2>once|twice|thrice|{_NUM_TOKEN})(?:\s+times)?\s+(?P<adverb>daily|weekly|monthly|nightly|hourly|yearly)\b"
    rf"|every\s+(?P<every>other\s+|{_NUM_TOKEN}\s+)?(?P<unit>{_PERIOD_RE})s?\b"
    rf"|(?P<bare>daily|nightly|weekly)\b(?=\s*(?:[.,;:)]|$|for\b|with\b|and\b|or\b)))"
)
_RANGE = re.compile(
    rf"(?<![\w.-])(?:between\s+|from\s+)?(?P<lo>{_NUM_TOKEN})\s*(?P<lo_unit>{_UNIT_RE})?\s*"
    rf"(?:-|–|to|and|or)\s*(?P<hi>{_NUM_TOKEN})\s*(?P<unit>{_UNIT_RE})?(?![\w])"
)
_QUANTITY = re.compile(
    rf"(?<![\w.-])(?P<num>{_NUM_TOKEN})(?:\s*|-)(?:an?\s+(?=(?:hour|day|week|month|year|litre|liter)\b))?"
    rf"(?P<unit>{_UNIT_RE})?(?![\w%])"
)
_RATIO = re.compile(
    rf"(?<![\w.-])(?P<part>{_NUM_TOKEN})\s+(?:out\s+of|in)\s+(?:every\s+)?(?P<whole>{_NUM_TOKEN})(?![\w.-])"
)
_MAX_RATIO_BASE = 1000
_ONE_WORDS = {"one", "a", "an"}
"""Number words so common as determiners ("one type of test") that they count only with a unit."""
_MIN_YEAR, _MAX_YEAR = 1800, 2100


@dataclass(frozen=True)
class Quantity:
    """A number the text states: a value or a range in a dimension's base unit (None: dimensionless)."""

    low: float
    high: float
    dimension: str | None
    text: str
    raw_low: float
    raw_high: float
    approximate: bool = False
    """Hedged ("about 40 %", "nearly 20,000"): may match a close statistic, never a dose."""
    bound: str = ""
    """``min`` for "more than 20", ``max`` for "up to 20": a statistic on that side matches too."""

    @property
    def is_range(self) -> bool:
        return self.low != self.high


def parse_number(text: str) -> float | None:
    """``"thirty"`` -> 30, ``"1,500"`` -> 1500, ``"two hundred"`` -> 200, ``"half"`` -> 0.5."""
    text = text.strip().lower().replace(",", "")
    try:
        return float(text)
    except ValueError:
        pass
    total = 0.0
    current = 0.0
    seen = False
    for word in re.split(r"[\s-]+", text):
        if word == "and":
            continue
        if word in _SMALL:
            current += _SMALL[word]
        elif word in _FRACTIONS:
            current = (current or 1) * _FRACTIONS[word]
        elif word in _SCALES:
            current = (current or 1) * _SCALES[word]
            if _SCALES[word] >= _SCALES["thousand"]:
                total += current
                current = 0.0
        else:
            return None
        seen = True
    return total + current if seen else None


def _unit(name: str | None) -> tuple[str | None, float]:
    if not name:
        return None, 1.0
    return _UNITS.get(name.lower(), (None, 1.0))


def _frequency_per_day(match: re.Match[str]) -> float | None:
    if match.group("bare"):
        return _PERIODS[match.group("bare")]
    if match.group("unit"):
        every = (match.group("every") or "").strip()
        step = 2.0 if every == "other" else parse_number(every) if every else 1.0
        if not step:
            return None
        per_unit = _PERIODS[match.group("unit")]
        return per_unit / step
    raw = match.group("count") or match.group("count2") or ""
    if raw.strip() in _FRACTIONS:
        return None
    count = _COUNT_WORDS.get(raw) or parse_number(raw)
    period = match.group("per") or match.group("adverb") or ""
    return None if count is None else count * _PERIODS[period]


@_cached
def extract_quantities(text: str) -> tuple[Quantity, ...]:
    """Every number the text states, with its unit converted, ranges and frequencies included.

    Frequencies become a rate per day ("twice a day" = "two times daily" = "every 12 hours"); numbers
    glued to letters (COVID-19, B12, H1N1) are names, not quantities, and are skipped.
    """
    work = normalise(strip_markers(_numeric_text(text)))
    work = _DATE.sub(lambda m: " " * len(m.group(0)), work)
    work = _ORDINAL_HALF.sub(lambda m: " " * len(m.group(0)), work)
    found: list[Quantity] = []
    work = _take(work, _FREQUENCY, found, _frequency_quantity)
    work = _take(work, _RATIO, found, _ratio_quantity)
    work = _take(work, _RANGE, found, _range_quantity)
    _take(work, _QUANTITY, found, _single_quantity)
    return tuple(found)


_GROUP_SPACE = re.compile(r"(?<=\d)[\u2009\u202f\u00a0](?=\d{3}(?!\d))")
_MIDDLE_DOT = re.compile(r"(?<=\d)[\u00b7\u2027](?=\d)")
_HYPHENS = re.compile(r"[\u2010\u2011\u2012\u2212]")
_ORDINAL_HALF = re.compile(r"\b(?:first|second|latter|former)\s+half\b")
""""The second half of January" names a period, not a proportion."""


def _numeric_text(text: str) -> str:
    """Typeset numbers in plain form: "781 000" (thin space) -> "781,000", "1·7" -> "1.7", "COVID‑19"."""
    text = _GROUP_SPACE.sub(",", text)
    text = _MIDDLE_DOT.sub(".", text)
    return _HYPHENS.sub("-", text)


def _take(
    text: str,
    pattern: re.Pattern[str],
    found: list[Quantity],
    build: Callable[[re.Match[str]], Quantity | None],
) -> str:
    """Collect quantities for each match and blank the matched text so later patterns skip it."""
    pieces: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        quantity = build(match)
        if quantity is None:
            continue
        found.append(quantity)
        pieces.append(text[last : match.start()])
        pieces.append(" " * (match.end() - match.start()))
        last = match.end()
    pieces.append(text[last:])
    return "".join(pieces)


def _frequency_quantity(match: re.Match[str]) -> Quantity | None:
    rate = _frequency_per_day(match)
    if rate is None:
        return None
    return Quantity(rate, rate, "per_day", match.group(0), rate, rate)


def _ratio_quantity(match: re.Match[str]) -> Quantity | None:
    """ "Nine out of 10", "1 in 4": a proportion, compared as an approximate percentage."""
    part, whole = parse_number(match.group("part")), parse_number(match.group("whole"))
    if part is None or not whole or part > whole or whole > _MAX_RATIO_BASE:
        return None
    value = part / whole * _PERCENT
    return Quantity(value, value, "percent", match.group(0), value, value, approximate=True)


def _range_quantity(match: re.Match[str]) -> Quantity | None:
    lo, hi = parse_number(match.group("lo")), parse_number(match.group("hi"))
    if lo is None or hi is None or lo >= hi:
        return None
    dimension, factor = _unit(match.group("unit") or match.group("lo_unit"))
    if match.group("lo").strip() in _ONE_WORDS and dimension is None:
        return None
    return Quantity(lo * factor, hi * factor, dimension, match.group(0), lo, hi)


def _single_quantity(match: re.Match[str]) -> Quantity | None:
    raw = match.group("num").strip()
    value = parse_number(raw)
    dimension, factor = _unit(match.group("unit"))
    if value is None or (raw in _ONE_WORDS and dimension is None):
        return None
    before = match.string[: match.start()]
    approximate = bool(_HEDGE.search(before))
    if dimension is None and raw.split("-")[-1].split()[-1] in _FRACTIONS:
        value, dimension, factor, approximate = value * _PERCENT, "percent", 1.0, True
    bound = "min" if _AT_LEAST.search(before) else "max" if _AT_MOST.search(before) else ""
    return Quantity(
        value * factor, value * factor, dimension, match.group(0).strip(), value, value, approximate, bound
    )


_ROUNDABLE = frozenset((None, "percent", "times"))
_ROUNDING_TOLERANCE = 0.025
"""A round claim number matches a non-integer evidence number within 2.5 % of it (statistics only)."""
_ROUND_ZEROS = 3
"""A claim number ending in this many zeros (122,000) matches evidence that rounds to it (122,300)."""
_HEDGED_TOLERANCE = 0.1
"""A hedged claim number ("about", "nearly") matches within 10 % (statistics only)."""
_HEDGE = re.compile(
    r"\b(?:about|around|approximately|approx|roughly|nearly|almost|estimated|some|close to|more than|"
    r"over|at least|up to|less than|under|fewer than)\s*$"
)
_AT_LEAST = re.compile(r"\b(?:more than|over|at least|greater than|exceeding|above)\s*$")
_AT_MOST = re.compile(r"\b(?:up to|less than|under|fewer than|below|at most)\s*$")
_BOUND_SPAN = 2.0
"""A bounded statistic ("more than half") matches values up to this factor beyond its bound."""
_DATE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:january|february|march|april|june|july|august|"
    r"september|october|november|december)\b"
)
_PERCENT = 100.0
_REL_TOLERANCE = 1e-6
"""Numbers are compared exactly (up to float error): a dose off by any amount is a different dose."""


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_REL_TOLERANCE, abs_tol=_REL_TOLERANCE)


def _rounded(claim: Quantity, raw: float, other: Quantity) -> bool:
    """A statistic (no unit, or a percentage) stated round or hedged in the claim matches a close value:
    "40 percent" ~ "40.7 %", "nearly 20,000" ~ "19,860". Doses and other units always match exactly."""
    if claim.dimension not in _ROUNDABLE or other.dimension not in _ROUNDABLE or not raw:
        return False
    ends = (other.raw_low, other.raw_high)
    if claim.bound and any(_within_bound(claim.bound, raw, e) for e in ends):
        return True
    if claim.approximate:
        return any(abs(raw - e) <= _HEDGED_TOLERANCE * abs(raw) for e in ends)
    return raw.is_integer() and any(_rounds_to(raw, e) for e in ends)


def _within_bound(bound: str, raw: float, value: float) -> bool:
    if bound == "min":
        return raw <= value <= raw * _BOUND_SPAN
    return raw / _BOUND_SPAN <= value <= raw


def _rounds_to(raw: float, value: float) -> bool:
    """Is the round ``raw`` a rounding of ``value``? 40 ~ 40.7 (within 2.5 %), 122,000 ~ 122,300."""
    if not value.is_integer() and abs(raw - value) <= _ROUNDING_TOLERANCE * abs(raw):
        return True
    zeros = len(str(int(raw))) - len(str(int(raw)).rstrip("0"))
    return zeros >= _ROUND_ZEROS and round(value, -zeros) == raw


def _value_matches(claim: Quantity, base: float, raw: float, other: Quantity) -> bool:
    """Does one value of ``claim`` equal ``other`` (or one of its range ends)?

    With units on both sides the converted values are compared (0.5 g == 500 mg); when either side has
    no unit the stated numbers are (20 == 20 years), and a bare fraction equals a percentage (0.5 == 50 %).
    """
    if claim.dimension is not None and other.dimension is not None:
        if claim.dimension == other.dimension and _rounded(claim, raw, other):
            return True
        return claim.dimension == other.dimension and any(_close(base, e) for e in (other.low, other.high))
    ends = (other.raw_low, other.raw_high)
    if any(_close(raw, e) for e in ends) or _rounded(claim, raw, other):
        return True
    if claim.dimension is None and other.dimension == "percent":
        return any(_close(raw * _PERCENT, e) for e in ends)
    if claim.dimension == "percent" and other.dimension is None:
        return any(_close(raw / _PERCENT, e) for e in ends)
    return False


def _compatible(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


def _quantity_supported(claim: Quantity, evidence: Sequence[Quantity]) -> bool:
    if claim.is_range and any(
        e.is_range
        and _value_matches(claim, claim.low, claim.raw_low, e)
        and _close(
            e.raw_high if claim.dimension is None or e.dimension is None else e.high,
            claim.raw_high if claim.dimension is None or e.dimension is None else claim.high,
        )
        for e in evidence
    ):
        return True
    return any(_value_matches(claim, claim.low, claim.raw_low, e) for e in evidence) and any(
        _value_matches(claim, claim.high, claim.raw_high, e) for e in evidence
    )


def _is_year(q: Quantity) -> bool:
    return q.dimension is None and not q.is_range and q.low.is_integer() and _MIN_YEAR <= q.low <= _MAX_YEAR


def check_numbers(claim: str, evidence: str) -> CheckResult:
    """Every number of the claim (with its unit) must be stated by the evidence.

    CLASH when the evidence states a different number of the same dimension (500 mg vs 50 mg, twice vs
    three times a day); MISSING when it states none of that dimension.
    """
    wanted = extract_quantities(claim)
    if not wanted:
        return _passed(CheckName.NUMBER)
    have = extract_quantities(evidence)
    for quantity in wanted:
        if _quantity_supported(quantity, have):
            continue
        if _is_year(quantity) and not any(_is_year(e) for e in have):
            continue
        same_kind = [e for e in have if e.dimension == quantity.dimension and not _is_year(e)]
        if same_kind and not _is_year(quantity):
            shown = ", ".join(e.text for e in same_kind)
            return CheckResult(
                CheckName.NUMBER, CheckOutcome.CLASH, f"claim says {quantity.text!r}, evidence says {shown!r}"
            )
        return CheckResult(
            CheckName.NUMBER, CheckOutcome.MISSING, f"{quantity.text!r} is not in the evidence"
        )
    return _passed(CheckName.NUMBER)


# --------------------------------------------------------------------------------------------------
# Negation and polarity

_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot|can't|won't|n't|"
    r"don't|doesn't|didn't|isn't|aren't|wasn't|weren't|shouldn't|mustn't|wouldn't|couldn't|"
    r"fail(?:s|ed)?\s+to|lack(?:s|ed)?\s+(?:of\s+)?|absence\s+of|unable\s+to|free\s+of|rather\s+than|"
    r"instead\s+of|ruled\s+out|refute[sd]?|refuting|disprove[sd]?|neither)\b"
)
NEGATION_SCOPE = 4
"""Content words after a negation cue that it governs ("do not take aspirin with food")."""
_CLAUSE_BREAK = re.compile(r"[,;:.()]|\bbut\b|\bwhereas\b|\bhowever\b|\balthough\b")


_WEAKENED = re.compile(
    r"\s+(?:all|always|every|everyone|usually|necessarily|only|just|entirely|completely|generally|"
    r"typically|commonly|often|fully)\b"
)
""""Not all", "not always", "not only": a weaker or wider statement, not the opposite one."""
_CONDITIONAL = re.compile(r"\b(?:if|unless|whether|when)\b")
""""If it fails to heal, ...": a negation inside a condition asserts nothing."""


@dataclass(frozen=True)
class _Negation:
    scope: frozenset[str]
    """Stems the cue governs: the next few content words of its clause."""
    clause: frozenset[str]
    """Every content stem of the cue's clause, before and after it (for agreement in any word order)."""


@_cached
def _negations(text: str) -> tuple[_Negation, ...]:
    """Each asserted negation of the text: cues, and words with a negative prefix ("unrelated")."""
    clean = normalise(strip_markers(text)).replace("’", "'")
    found: list[_Negation] = []
    for match in _NEGATION.finditer(clean):
        opening, tail = _clause_opening(clean[: match.start()]), clean[match.end() :]
        if _WEAKENED.match(tail) or _CONDITIONAL.search(opening):
            continue
        brk = _CLAUSE_BREAK.search(tail)
        after = _stems_in(tail[: brk.start()] if brk else tail)
        found.append(_Negation(frozenset(after[:NEGATION_SCOPE]), frozenset(after + _stems_in(opening))))
    roots = _prefix_roots(text) - set(_WORD.findall(clean))
    found += [_Negation(frozenset((stem(r),)), frozenset((stem(r),))) for r in roots]
    return tuple(found)


def _stems_in(clause: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(clause) if w not in STOPWORDS and len(w) > 1]


def _clause_opening(before: str) -> str:
    """The part of the clause that precedes a negation cue."""
    starts = [m.end() for m in _CLAUSE_BREAK.finditer(before)]
    return before[starts[-1] if starts else 0 :]


def _unmatched(
    mine: Sequence[_Negation], other: frozenset[str], theirs: Sequence[_Negation]
) -> list[frozenset[str]]:
    """Negated words the other text mentions but never in a negated clause (it says the opposite)."""
    negated = frozenset().union(*(n.clause for n in theirs))
    return [n.scope & other for n in mine if n.scope & other and not n.scope & other & negated]


_NEGATIVE_PREFIX = re.compile(
    r"(?:un|in|im|ir|il|dis|non-?|a(?=[^aeiou]{2}))"
    r"(?P<root>[a-z]{5,}(?:ed|ive|al|ant|ent|able|ible|ful|ic|ar|ate|ary|ous|ly|y))"
)
"""A negative prefix on an adjective-like root: unrelated, ineffective, dissimilar, asymptomatic."""
_NOT_NEGATIVE = frozenset(LEXICON.words["not_negative"])
"""Words that only look prefixed ("increased" is not "not creased")."""


@_cached
def _polar_stems(text: str) -> frozenset[str]:
    """Content stems plus the roots of negative-prefix words ("asymptomatic" also mentions symptoms)."""
    return content_stems(text) | {stem(r) for r in _prefix_roots(text)}


@_cached
def _prefix_roots(text: str) -> frozenset[str]:
    """Roots that the text's negative-prefix words reverse ("unrelated" -> "related")."""
    return frozenset(_negated_root(w) for w in _WORD.findall(normalise(strip_markers(text)))) - {""}


def _negated_root(word: str) -> str:
    """The root a negative prefix reverses ("unrelated" -> "related", "asymptomatic"), else ""."""
    match = _NEGATIVE_PREFIX.fullmatch(word)
    if not match or word in _NOT_NEGATIVE:
        return ""
    return match.group("root")


def check_negation(claim: str, evidence: str) -> CheckResult:
    """Polarity must agree on what both texts talk about.

    A negation is relevant when it governs words the other text mentions. The check fails when only one
    side has a relevant negation: "do not take aspirin" vs "take aspirin", "no increased risk" vs
    "increased risk", "not recommended" vs "recommended". Negations over words the other text does not
    mention are ignored, and both sides negating (in any word order) agree.
    """
    claim_stems = _polar_stems(claim)
    evidence_stems = _polar_stems(evidence)
    mine = _unmatched(_negations(claim), evidence_stems, _negations(evidence))
    theirs = _unmatched(_negations(evidence), claim_stems, _negations(claim))
    if mine:
        return CheckResult(
            CheckName.NEGATION,
            CheckOutcome.CLASH,
            f"the claim negates {', '.join(sorted(mine[0]))}; the evidence does not",
        )
    if theirs:
        return CheckResult(
            CheckName.NEGATION,
            CheckOutcome.CLASH,
            f"the evidence negates {', '.join(sorted(theirs[0]))}; the claim does not",
        )
    return _passed(CheckName.NEGATION)


_ANTONYMS: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a), frozenset(b)) for a, b in LEXICON.antonyms
)


_NO_EFFECT = re.compile(
    r"\b(?:(?:the )?same (?:\w+ )?as|same (?:risk|rates?|levels?|odds|chance|likelihood|amount|number)|"
    r"similar(?:ly)? (?:to|risk|rates?|levels?|odds|outcomes?)|equal(?:ly)?|unchanged|stagnant|comparable|"
    r"(?:stayed|stays|remained|remains) (?:level|stable|flat)|"
    r"in line with|just as|as likely as|regardless of|irrespective of|independent(?:ly)? of|unrelated|"
    r"unaffected|no (?:significant |statistically significant |clear )?(?:difference|change|effect|"
    r"association|increase|decrease|reduction|impact|benefit)s?|not (?:significantly |statistically )?"
    r"(?:different|differ|associated|related|linked|affected|changed))\b"
)
""""No difference" findings: a claim of one contradicts evidence of an effect, and vice versa."""
_EFFECT = re.compile(
    r"\b(?:increase[sd]?|increasing|decrease[sd]?|decreasing|reduce[sd]?|reducing|reduction|"
    r"raise[sd]?|rose|fell|dropped|declined|lower(?:ed|s)?|higher|greater|fewer|elevated|doubled|"
    r"tripled|halved|improved|worsened|"
    r"outperform(?:s|ed)?|superior|inferior|(?:more|less) (?:likely|susceptible|common|severe|often)|"
    r"(?:odds|risk|hazard) ratio|\d+(?:\.\d+)? times)\b"
)


@_cached
def _states_effect(text: str) -> bool | None:
    """True: the text reports an effect or difference; False: no difference; None: neither or both."""
    clean = normalise(strip_markers(text))
    effect, none = bool(_EFFECT.search(clean)), bool(_NO_EFFECT.search(clean))
    return None if effect == none else effect


def _effect_clash(claim: str, evidence: str) -> CheckResult | None:
    """The claim reports no difference where the evidence reports one, or the reverse."""
    mine, theirs = _states_effect(claim), _states_effect(evidence)
    if mine is None or theirs is None or mine == theirs:
        return None
    said = "a difference" if mine else "no difference"
    return CheckResult(
        CheckName.ANTONYM, CheckOutcome.CLASH, f"the claim reports {said}; the evidence does not agree"
    )


def check_antonyms(claim: str, evidence: str) -> CheckResult:
    """The claim uses a word whose opposite the evidence uses instead (increases vs reduces).

    Whole word forms are compared, never truncated stems: stems merge unrelated words ("early" and
    "ear", "protect" and "protein", "common" and "commodity") and made verbatim claims clash.
    """
    claim_stems = words(claim)
    evidence_stems = words(evidence)
    for left, right in _ANTONYMS:
        for mine, other in ((left, right), (right, left)):
            said = claim_stems & mine
            if said and not evidence_stems & mine and evidence_stems & other:
                return CheckResult(
                    CheckName.ANTONYM,
                    CheckOutcome.CLASH,
                    f"the claim says {sorted(said)[0]!r}; the evidence says "
                    f"{sorted(evidence_stems & other)[0]!r}",
                )
    return _effect_clash(claim, evidence) or _passed(CheckName.ANTONYM)


# --------------------------------------------------------------------------------------------------
# Qualifiers and quantifiers

_STRENGTH: tuple[tuple[int, re.Pattern[str]], ...] = (
    (
        4,
        re.compile(
            r"\b(?:always|all|every|everyone|everybody|entirely|completely|totally|guarantee[sd]?|"
            r"definitely|certainly|invariably|without exception|100 ?%|cures?|eliminates?|"
            r"proves?|proven|the only|only (?:by|through)|only way)\b"
        ),
    ),
    (
        3,
        re.compile(
            r"\b(?:most|mostly|usually|generally|typically|majority|nearly all|almost all|"
            r"largely|predominantly|strongly)\b"
        ),
    ),
    (2, re.compile(r"\b(?:many|often|frequently|commonly|common|likely|probably|several)\b")),
    (
        1,
        re.compile(
            r"\b(?:some|sometimes|may|might|can|could|possibly|occasionally|few|a few|"
            r"minority|rarely|in some cases|suggests?|suggested|potentially|associated)\b"
        ),
    ),
)
UNIVERSAL = 4
"""Strength of always/all/every: the level a claim must not reach unless the evidence does too."""


@_cached
def strength(text: str) -> int:
    """How strongly the text generalises: 4 universal ... 1 hedged, 0 unqualified."""
    clean = normalise(strip_markers(text))
    for level, pattern in _STRENGTH:
        if pattern.search(clean):
            return level
    return 0


def check_quantifier(claim: str, evidence: str) -> CheckResult:
    """A claim must not generalise more strongly than its evidence ("always" vs "sometimes").

    CLASH when the evidence is explicitly weaker (hedged); MISSING when the claim is universal and the
    evidence merely unqualified.
    """
    mine, theirs = strength(claim), strength(evidence)
    if mine <= theirs or mine < UNIVERSAL:
        return _passed(CheckName.QUANTIFIER)
    if theirs > 0:
        return CheckResult(
            CheckName.QUANTIFIER, CheckOutcome.CLASH, "the claim generalises more strongly than the evidence"
        )
    if mine >= UNIVERSAL:
        return CheckResult(
            CheckName.QUANTIFIER, CheckOutcome.MISSING, "the claim is universal; the evidence does not say so"
        )
    return _passed(CheckName.QUANTIFIER)


# --------------------------------------------------------------------------------------------------
# Named entities: medicines, conditions, body parts, populations


POPULATIONS = LEXICON.table("populations")
MEDICINES = LEXICON.table("medicines")
CONDITIONS = LEXICON.table("conditions")
BODY_PARTS = LEXICON.table("body_parts")
VOCABULARY: dict[str, tuple[str, str]] = {
    form: (kind, canonical)
    for kind, table in (
        ("population", POPULATIONS),
        ("medicine", MEDICINES),
        ("condition", CONDITIONS),
        ("body part", BODY_PARTS),
    )
    for form, canonical in table.items()
}
_VOCAB_RE = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(re.escape(f) for f in sorted(VOCABULARY, key=len, reverse=True))
    + r")(?![\w-])"
)
_DRUG_SUFFIX = re.compile(
    r"\b[a-z]{3,}(?:mab|nib|pril|sartan|olol|statin|azole|cillin|mycin|floxacin|prazole|tidine|"
    r"triptan|vir|dipine|gliptin|gliflozin|parin|afil|setron|xaban|tropin|semide|thiazide|lukast|"
    r"tadine|cycline|barbital|zepam|zolam|oxetine|aline|pramine|triptyline)\b"
)
_CONDITION_SUFFIX = re.compile(
    r"\b[a-z]{3,}(?:itis|osis|iasis|a?emia|omas?|pathy|algia|plegia|rrh?o?ea|penia)\b"
)
"""Condition names by their Greek/Latin suffix (pericarditis, fibrosis, leukaemia, neuropathy)."""
_NOT_CONDITIONS = frozenset(LEXICON.words["not_conditions"])
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b(?:[A-Z][a-z]+[A-Z0-9]\w*|[A-Z]{2,}[\w-]*|[A-Z][a-z]{2,}\w*)")
FUZZY_ENTITY = 85
"""rapidfuzz ratio (0-100) at which a capitalised name counts as present (Neanderthals ~ Neandertals)."""


@dataclass(frozen=True)
class Entity:
    text: str
    kind: str
    canonical: str


_SPELLINGS = (
    ("rrhoea", "rrhea"),
    ("aemia", "emia"),
    ("oedema", "edema"),
    ("haem", "hem"),
    ("oesoph", "esoph"),
    ("paed", "ped"),
    ("tumour", "tumor"),
    ("oestr", "estr"),
    ("foet", "fet"),
)


def us_spelling(text: str) -> str:
    """British medical spellings in American form, so "diarrhoea" finds "diarrhea"."""
    for british, american in _SPELLINGS:
        text = text.replace(british, american)
    return text


@_cached
def _entity_text(text: str) -> str:
    return us_spelling(normalise(strip_markers(text)))


@_cached
def extract_entities(text: str) -> tuple[Entity, ...]:
    """Vocabulary terms, drug-like names and capitalised names (not sentence-initial) in ``text``."""
    clean = _entity_text(text)
    found = [Entity(m.group(0), *VOCABULARY[m.group(0)]) for m in _VOCAB_RE.finditer(clean)]
    known = {e.text for e in found}
    found += [
        Entity(m.group(0), "medicine", m.group(0))
        for m in _DRUG_SUFFIX.finditer(clean)
        if m.group(0) not in known
    ]
    known |= {e.text for e in found}
    found += [
        Entity(m.group(0), "condition", m.group(0))
        for m in _CONDITION_SUFFIX.finditer(clean)
        if m.group(0) not in known and m.group(0) not in _NOT_CONDITIONS
    ]
    known |= {e.text for e in found}
    for match in _CAPITALISED.finditer(strip_markers(text)):
        word = match.group(0).lower()
        if word not in known and word not in STOPWORDS and not _covered(word, known):
            found.append(Entity(word, "name", word))
            known.add(word)
    return tuple(found)


def _covered(word: str, known: Iterable[str]) -> bool:
    """Is the word part of a term already found ("covid" of "covid-19", "heart" of "heart failure")?"""
    return any(word in re.split(r"[\s-]+", k) for k in known)


_ADJECTIVES = (
    ("osis", "otic", "oses"),
    ("itis", "itic", "itides"),
    ("emia", "emic", "emias"),
    ("pathy", "pathic", "pathies"),
)


def _term_forms(term: str) -> str:
    """A pattern for the term as singular, plural or adjective ("migraines", "babies", "psychotic")."""
    for noun, adjective, plural in _ADJECTIVES:
        if term.endswith(noun):
            return rf"{re.escape(term[: -len(noun)])}(?:{noun}|{adjective}|{plural})"
    for plural, singular in (("ies", "y"), ("es", ""), ("s", "")):
        if term.endswith(plural) and len(term) > len(plural) + 2:
            root = re.escape(term[: -len(plural)])
            return rf"{root}(?:{plural}|{singular}|s|es)?"
    return rf"{re.escape(term)}(?:s|es)?"


def _entity_present(entity: Entity, evidence_clean: str, evidence_canon: set[str], words: list[str]) -> bool:
    if entity.canonical in evidence_canon:
        return True
    if re.search(rf"(?<![\w-]){_term_forms(entity.text)}(?![\w-])", evidence_clean):
        return True
    if entity.kind in {"name", "medicine"}:
        return any(
            fuzz.ratio(entity.text, w) >= FUZZY_ENTITY for w in words if abs(len(w) - len(entity.text)) <= 2
        )
    return False


CLASS_TERMS = frozenset(LEXICON.words["class_terms"])
"""Medicine groups that name a class (or a very broad one): naming a member instead is no clash."""
_CLASHING_KINDS = frozenset(("medicine", "condition", "population"))
"""Body parts and capitalised names are only ever missing: a passage names many of them in passing."""


def _can_clash(entity: Entity) -> bool:
    return entity.kind in _CLASHING_KINDS and entity.canonical not in CLASS_TERMS


def check_entities(claim: str, evidence: str) -> CheckResult:
    """Every medicine, condition, body part, population and name of the claim must be in the evidence.

    A swapped drug (ibuprofen for paracetamol) or population (children for adults) is a CLASH when the
    evidence names another entity of the same kind; otherwise the entity is MISSING.
    """
    wanted = extract_entities(claim)
    if not wanted:
        return _passed(CheckName.ENTITY)
    clean = _entity_text(evidence)
    theirs = extract_entities(evidence)
    canon = {e.canonical for e in theirs}
    words = _WORD.findall(clean)
    for entity in wanted:
        if _entity_present(entity, clean, canon, words):
            continue
        rivals = [e.text for e in theirs if e.kind == entity.kind and _can_clash(entity) and _can_clash(e)]
        if rivals:
            return CheckResult(
                CheckName.ENTITY,
                CheckOutcome.CLASH,
                f"the claim names {entity.text!r}; the evidence names {rivals[0]!r}",
            )
        return CheckResult(CheckName.ENTITY, CheckOutcome.MISSING, f"{entity.text!r} is not in the evidence")
    return _passed(CheckName.ENTITY)


def run_all(claim: str, evidence: str) -> tuple[CheckResult, ...]:
    """Every check, in the order their failures are reported."""
    return (
        check_numbers(claim, evidence),
        check_negation(claim, evidence),
        check_antonyms(claim, evidence),
        check_quantifier(claim, evidence),
        check_entities(claim, evidence),
    )
