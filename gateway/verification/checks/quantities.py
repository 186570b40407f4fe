"""Numbers a text states: digits and number words, units, ranges, ratios and frequencies."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gateway.text import normalise, strip_markers
from gateway.verification.lexicon import Cues, QuantityWords

_NUMERAL = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_PERIOD_RE = "day|week|month|hour|night|year"


@dataclass(frozen=True)
class QuantityPatterns:
    """Number words, units and the patterns built from them (``data/quantities.yaml`` and the number
    cues of ``data/cues.yaml``), compiled by ``quantity_patterns`` (``CheckData.quantities``)."""

    small: dict[str, float]
    scales: dict[str, float]
    fractions: dict[str, float]
    units: dict[str, tuple[str, float]]
    periods: dict[str, float]
    count_words: dict[str, float]
    numeric_words: frozenset[str]
    """Words the number check owns (units, number words, periods): quote binding leaves them to it."""
    frequency: re.Pattern[str]
    range: re.Pattern[str]
    quantity: re.Pattern[str]
    ratio: re.Pattern[str]
    hedge: re.Pattern[str]
    at_least: re.Pattern[str]
    at_most: re.Pattern[str]


def quantity_patterns(words: QuantityWords, number_cues: Cues) -> QuantityPatterns:
    """Compiled from the number words and the number cues (``CheckData.load`` builds it at start-up)."""
    small, scales = words.values["number_words"], words.values["scales"]
    fractions, count_words = words.values["fractions"], words.values["count_words"]
    number_words = "|".join(sorted([*small, *scales, *fractions], key=len, reverse=True))
    scale_words = "|".join(sorted(scales, key=len, reverse=True))
    num = (
        rf"(?:(?:{_NUMERAL})(?:[\s-]+(?:{scale_words})\b)*"
        rf"|(?:{number_words})(?:[\s-]+(?:and\s+)?(?:{number_words}))*)"
    )
    unit = "|".join(re.escape(u) for u in sorted(words.units, key=len, reverse=True))
    count = "|".join(map(re.escape, count_words))
    numeric = frozenset(
        (
            *(w for name in words.units for w in name.split()),
            *small,
            *scales,
            *fractions,
            *words.periods,
            *count_words,
            *words.numeric_words,
        )
    )
    return QuantityPatterns(
        small,
        scales,
        fractions,
        words.units,
        words.periods,
        count_words,
        numeric,
        re.compile(
            rf"\b(?:(?P<count>{count}|{num})(?:\s+times?|\s*x)?\s+(?:a|an|per|each|every)\s+"
            rf"(?P<per>{_PERIOD_RE})s?\b"
            rf"|(?P<count2>{count}|{num})(?:\s+times)?\s+(?P<adverb>daily|weekly|monthly|nightly|hourly|yearly)\b"
            rf"|every\s+(?P<every>other\s+|{num}\s+)?(?P<unit>{_PERIOD_RE})s?\b"
            rf"|(?P<bare>daily|nightly|weekly)\b(?=\s*(?:[.,;:)]|$|for\b|with\b|and\b|or\b)))"
        ),
        re.compile(
            rf"(?<![\w.-])(?:between\s+|from\s+)?(?P<lo>{num})\s*(?P<lo_unit>{unit})?\s*"
            rf"(?:-|–|to|and|or)\s*(?P<hi>{num})\s*(?P<unit>{unit})?(?![\w])"
        ),
        re.compile(
            rf"(?<![\w.-])(?P<num>{num})(?:\s*|-)(?:an?\s+(?=(?:hour|day|week|month|year|litre|liter)\b))?"
            rf"(?P<unit>{unit})?(?![\w%])"
        ),
        re.compile(
            rf"(?<![\w.-])(?P<part>{num})\s+(?:out\s+of|in)\s+(?:every\s+)?(?P<whole>{num})(?![\w.-])"
        ),
        number_cues.pattern(r"\b<<number_approximate>>\s*$"),
        number_cues.pattern(r"\b<<number_at_least>>\s*$"),
        number_cues.pattern(r"\b<<number_at_most>>\s*$"),
    )


_DIGITS = re.compile(r"\d+(?:\.\d+)?|\.\d+")
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


def parse_number(text: str, q: QuantityPatterns) -> float | None:
    """``"thirty"`` -> 30, ``"1,500"`` -> 1500, ``"two hundred"`` -> 200, ``"half"`` -> 0.5,
    ``"16 million"`` -> 16,000,000 (a numeral with scale words)."""
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
        if not seen and _DIGITS.fullmatch(word):
            current = float(word)
        elif word in q.small:
            current += q.small[word]
        elif word in q.fractions:
            current = (current or 1) * q.fractions[word]
        elif word in q.scales:
            current = (current or 1) * q.scales[word]
            if q.scales[word] >= q.scales["thousand"]:
                total += current
                current = 0.0
        else:
            return None
        seen = True
    return total + current if seen else None


def _unit(name: str | None, q: QuantityPatterns) -> tuple[str | None, float]:
    if not name:
        return None, 1.0
    return q.units.get(name.lower(), (None, 1.0))


def _frequency_per_day(match: re.Match[str], q: QuantityPatterns) -> float | None:
    if match.group("bare"):
        return q.periods[match.group("bare")]
    if match.group("unit"):
        every = (match.group("every") or "").strip()
        step = 2.0 if every == "other" else parse_number(every, q) if every else 1.0
        if not step:
            return None
        per_unit = q.periods[match.group("unit")]
        return per_unit / step
    raw = match.group("count") or match.group("count2") or ""
    if raw.strip() in q.fractions:
        return None
    count = q.count_words.get(raw) or parse_number(raw, q)
    period = match.group("per") or match.group("adverb") or ""
    return None if count is None else count * q.periods[period]


def extract_quantities(text: str, q: QuantityPatterns) -> tuple[Quantity, ...]:
    """Every number the text states, with its unit converted, ranges and frequencies included (``q``:
    the number words and patterns).

    Frequencies become a rate per day ("twice a day" = "two times daily" = "every 12 hours"); numbers
    glued to letters (COVID-19, B12, H1N1) are names, not quantities, and are skipped.
    """
    work = normalise(strip_markers(numeric_text(text)))
    work = _DATE.sub(lambda m: " " * len(m.group(0)), work)
    work = _ORDINAL_HALF.sub(lambda m: " " * len(m.group(0)), work)
    found: list[Quantity] = []
    work = _take(work, q.frequency, found, lambda m: _frequency_quantity(m, q))
    work = _take(work, q.ratio, found, lambda m: _ratio_quantity(m, q))
    work = _take(work, q.range, found, lambda m: _range_quantity(m, q))
    _take(work, q.quantity, found, lambda m: _single_quantity(m, q))
    return tuple(found)


_GROUP_SPACE = re.compile(r"(?<=\d)[\u2009\u202f\u00a0](?=\d{3}(?!\d))")
_MIDDLE_DOT = re.compile(r"(?<=\d)[\u00b7\u2027](?=\d)")
_HYPHENS = re.compile(r"[\u2010\u2011\u2012\u2212]")
_ORDINAL_HALF = re.compile(r"\b(?:first|second|latter|former)\s+half\b")
""""The second half of January" names a period, not a proportion."""


def numeric_text(text: str) -> str:
    """Typeset numbers in plain form: "781 000" (thin space) -> "781,000", "1·7" -> "1.7", "COVID‑19"."""
    if text.isascii():  # every character these patterns replace is outside ASCII
        return text
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


def _frequency_quantity(match: re.Match[str], q: QuantityPatterns) -> Quantity | None:
    rate = _frequency_per_day(match, q)
    if rate is None:
        return None
    return Quantity(rate, rate, "per_day", match.group(0), rate, rate)


def _ratio_quantity(match: re.Match[str], q: QuantityPatterns) -> Quantity | None:
    """ "Nine out of 10", "1 in 4": a proportion, compared as an approximate percentage."""
    part, whole = parse_number(match.group("part"), q), parse_number(match.group("whole"), q)
    if part is None or not whole or part > whole or whole > _MAX_RATIO_BASE:
        return None
    value = part / whole * PERCENT
    return Quantity(value, value, "percent", match.group(0), value, value, approximate=True)


def _range_quantity(match: re.Match[str], q: QuantityPatterns) -> Quantity | None:
    lo, hi = parse_number(match.group("lo"), q), parse_number(match.group("hi"), q)
    if lo is None or hi is None or lo >= hi:
        return None
    dimension, factor = _unit(match.group("unit") or match.group("lo_unit"), q)
    if match.group("lo").strip() in _ONE_WORDS and dimension is None:
        return None
    return Quantity(lo * factor, hi * factor, dimension, match.group(0), lo, hi)


def _single_quantity(match: re.Match[str], q: QuantityPatterns) -> Quantity | None:
    raw = match.group("num").strip()
    value = parse_number(raw, q)
    dimension, factor = _unit(match.group("unit"), q)
    if value is None or (raw in _ONE_WORDS and dimension is None):
        return None
    before = match.string[: match.start()]
    approximate = bool(q.hedge.search(before))
    if dimension is None and raw.split("-")[-1].split()[-1] in q.fractions:
        value, dimension, factor, approximate = value * PERCENT, "percent", 1.0, True
    bound = "min" if q.at_least.search(before) else "max" if q.at_most.search(before) else ""
    return Quantity(
        value * factor, value * factor, dimension, match.group(0).strip(), value, value, approximate, bound
    )


_BOUND_SPAN = 2.0
"""A bounded statistic ("more than half") matches values up to this factor beyond its bound."""
_DATE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:january|february|march|april|june|july|august|"
    r"september|october|november|december)\b"
)
PERCENT = 100.0
