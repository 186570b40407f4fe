"""Numbers a text states: digits and number words, units, ranges, ratios and frequencies."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gateway.text import normalise, strip_markers
from gateway.verification.checks.words import CUES
from gateway.verification.lexicon import load_quantity_words

QUANTITY_WORDS = load_quantity_words()
"""Number words and units (``data/quantities.yaml``), loaded and validated once at import."""
_SMALL = QUANTITY_WORDS.values["number_words"]
_SCALES = QUANTITY_WORDS.values["scales"]
_FRACTIONS = QUANTITY_WORDS.values["fractions"]
_NUMBER_WORDS = "|".join(sorted([*_SMALL, *_SCALES, *_FRACTIONS], key=len, reverse=True))
_NUMERAL = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_NUM_TOKEN = rf"(?:{_NUMERAL}|(?:{_NUMBER_WORDS})(?:[\s-]+(?:and\s+)?(?:{_NUMBER_WORDS}))*)"

_UNITS = QUANTITY_WORDS.units
_UNIT_RE = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))

_PERIODS = QUANTITY_WORDS.periods
_COUNT_WORDS = QUANTITY_WORDS.values["count_words"]
_COUNT_RE = "|".join(map(re.escape, _COUNT_WORDS))
_PERIOD_RE = "day|week|month|hour|night|year"
NUMERIC_WORDS = frozenset(
    (
        *(w for name in _UNITS for w in name.split()),
        *_SMALL,
        *_SCALES,
        *_FRACTIONS,
        *_PERIODS,
        *_COUNT_WORDS,
        *QUANTITY_WORDS.numeric_words,
    )
)
"""Words the number check owns (units, number words, periods): quote binding leaves them to it."""
_FREQUENCY = re.compile(
    rf"\b(?:(?P<count>{_COUNT_RE}|{_NUM_TOKEN})(?:\s+times?|\s*x)?\s+(?:a|an|per|each|every)\s+"
    rf"(?P<per>{_PERIOD_RE})s?\b"
    rf"|(?P<count2>{_COUNT_RE}|{_NUM_TOKEN})(?:\s+times)?\s+(?P<adverb>daily|weekly|monthly|nightly|hourly|yearly)\b"
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
    value = part / whole * PERCENT
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
        value, dimension, factor, approximate = value * PERCENT, "percent", 1.0, True
    bound = "min" if _AT_LEAST.search(before) else "max" if _AT_MOST.search(before) else ""
    return Quantity(
        value * factor, value * factor, dimension, match.group(0).strip(), value, value, approximate, bound
    )


_HEDGE = re.compile(rf"\b{CUES.alternation('number_approximate')}\s*$")
_AT_LEAST = re.compile(rf"\b{CUES.alternation('number_at_least')}\s*$")
_AT_MOST = re.compile(rf"\b{CUES.alternation('number_at_most')}\s*$")
_BOUND_SPAN = 2.0
"""A bounded statistic ("more than half") matches values up to this factor beyond its bound."""
_DATE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:january|february|march|april|june|july|august|"
    r"september|october|november|december)\b"
)
PERCENT = 100.0
