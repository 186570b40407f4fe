"""Numbers a text states: digits and number words, units, ranges, ratios and frequencies."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gateway.text import normalise, strip_markers
from gateway.verification.checks.words import cached

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


@cached
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
PERCENT = 100.0
