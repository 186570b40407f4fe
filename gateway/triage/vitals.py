"""Vital signs, ages and durations as patients and clinicians write them, checked against published limits.

Reads temperatures (°C and °F: "39.4", "102F", "temp of 38.5 degrees"), the Glasgow Coma Scale ("GCS 13"),
heart rates ("pulse 135", "HR 140 bpm"), breathing rates ("breathing 60 times a minute", "RR 32"), blood
pressures ("BP 82/50", "190/120 mmHg", "210 over 125", "top number 218 bottom 128", a bare "190/125",
"systolic 85": ``pressure.py``, the one reader the blood-pressure signs use too),
oxygen saturations ("sats 89%", "oxygen level 90"), blood glucose ("sugar 2.1", "glucose 45 mg/dL": mg/dL
is converted to mmol/L), durations ("for 10 days") and ages ("my 2 year
old", "6 weeks old", "68M", "a 45-year-old man", "aged 70"). The limits (``policies/triage/vitals.yaml``)
are published early-warning tables by age; a value outside one is a red flag (layer ``vitals``).

A message that gives no age is read as an adult's, unless it names a child ("my baby", "toddler"):
then only the limits for every age apply, since a child's limits depend on an age it did not give.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gateway.domain import TriageEvidence
from gateway.triage.clauses import clauses
from gateway.triage.pressure import read_pressures
from gateway.triage.vitals_policy import Vital, VitalLimit, VitalsPolicy

MG_DL_PER_MMOL_L = 18.0
"""Glucose: mg/dL per mmol/L (molar mass of glucose, 180 g/mol)."""
GLUCOSE_MMOL_MAX = 35.0
"""A glucose value without a unit above this is read as mg/dL (no meter shows 35 mmol/L as a number)."""

FAHRENHEIT_AS_SEX_BELOW_C = 30.0
"""A bare "NNF" (no degree mark) that would read below this (86 °F) is an age and sex, not a temperature."""
_DEGREE = re.compile(r"°|º|degree|deg\b|fahrenheit|celsius|centigrade|temp|fever|thermometer", re.IGNORECASE)

_NUMBER = r"(\d{1,3}(?:[.,]\d{1,2})?)"
_GAP = r"[^\d.!?\n]{0,25}?"
_TEMPERATURE_UNIT = r"(c|f|celsius|centigrade|fahrenheit)"
_TEMPERATURE = re.compile(
    r"\b(?:temp(?:erature)?s?|fever|feverish|febrile|pyrexi\w*|temps?|thermometer|running)\b"
    + _GAP
    + _NUMBER
    + r"\s*(?:°|º|degrees?|deg)?\s*"
    + _TEMPERATURE_UNIT
    + r"?\b"
    + r"|"
    + _NUMBER
    + r"\s*(?:(?:°|º|degrees?|deg)\s*"
    + _TEMPERATURE_UNIT
    + r"?|"
    + _TEMPERATURE_UNIT
    + r")\b"
    # a bare reading with where it was taken ("38.3 under the arm", "39.1 in his ear"): a temperature
    + r"|\b((?:3[4-9]|4[0-2])[.,]\d)()\s*(?:under (?:the|his|her|my|their) arm"
    + r"|in (?:the|his|her|my|their) ear|(?:on|in) (?:the|his|her|my) (?:forehead|armpit|mouth|bum)"
    + r"|armpit|axillary|tympanic|orally|rectally)\b"
    # or after a word of heat ("feels hot, 38.0", "burning up 39.4"): with a decimal, never a count
    + r"|\b(?:hot|burning up|boiling)\W{1,4}((?:3[4-9]|4[0-2])[.,]\d)\b"
    # clinicians' "T 38.4", "T39": the letter right before a body temperature (#31 item 4)
    + r"|(?<![\w'’])t\s?((?:3[4-9]|4[0-2])(?:[.,]\d)?)\b"
    + r"(?!\s*(?:%|/|mins?|minutes?|hours?|hrs?|days?|weeks?))",
    re.IGNORECASE,
)
_HEART = re.compile(
    r"\b(?:heart ?rate|pulse|hr|heart(?:beat)? (?:is|was|at|going|racing)|heart beat)\b"
    + _GAP
    + r"(\d{2,3})\b"
    r"|\b(\d{2,3})\s*(?:bpm|beats (?:a|per|each) ?min\w*)",
    re.IGNORECASE,
)
_BREATHING = re.compile(
    r"\b(?:breathing rate|respiratory rate|resp(?:iratory)? rate|resps|rr|breathing)\b"
    + _GAP
    + r"(\d{1,3})\b"
    r"(?!\s*(?:%|mg|mcg|ml|kg|lb|years?|months?|weeks?|days?|hours?|mins?\b|minutes?\s+(?:ago|later)))"
    r"|\b(\d{1,3})\s*(?:breaths|times|breathes|bpm)\s*(?:a|per|each|/|in\s+(?:a|one|1)|every)\s*min",
    re.IGNORECASE,
)
_SPO2 = re.compile(
    r"\b(?:sats?|saturations?|spo2|sp02|o2|oxygen(?: levels?| saturations?| sats?)?|pulse ox\w*|oximeter)\b"
    + _GAP
    + r"(\d{2,3})\s*%?"
    r"|\b(\d{2,3})\s*%\s*(?:on room air|oxygen|o2|sats?|saturation)",
    re.IGNORECASE,
)
_GLUCOSE = re.compile(
    r"\b(?:blood sugars?|blood glucose|glucose|sugars?|bg|bm|bgl|libre|dexcom|cgm|meter|bring up an?)\b"
    + _GAP
    + _NUMBER
    + r"\s*(mmol(?:/l)?|mg ?/ ?dl|mgs?)?"
    + r"|"
    + _NUMBER
    + r"\s*(mmol(?:/l)?|mg ?/ ?dl)",
    re.IGNORECASE,
)
_GCS = re.compile(
    r"\b(?:gcs|glasgow coma (?:scale|score))\b[^\d.!?\n]{0,10}(\d{1,2})(?:\s*/\s*15)?\b", re.IGNORECASE
)
_UNIT = r"(years?|yrs?|y|months?|mos?|mths?|weeks?|wks?|days?)"
_AGES = (
    re.compile(r"\b(\d{1,3}(?:\.\d)?)[ -]*" + _UNIT + r"[ -]*old\b", re.IGNORECASE),
    re.compile(r"\b(\d{1,3})\s*(?:yo|y/o|y\.o\.)()\b", re.IGNORECASE),
    re.compile(
        r"\b(?:my|our|a|an|the|her|his|their)\s+(\d{1,2}(?:\.\d)?)\s*-?\s*" + _UNIT + r"\b", re.IGNORECASE
    ),
    re.compile(
        r"(?<![\d.°º])\b(\d{1,3})(?:(m|f)|\s?(?:yo\s)?(male|female))\b(?!\s*(?:ahrenheit|eet|oot))",
        re.IGNORECASE,
    ),
    # "aged 70", and an age with its unit ("infant aged 8 weeks"): not read as 8 years (#31 item 4)
    re.compile(r"\baged?\s+(\d{1,3}(?:\.\d)?)\s*" + _UNIT + r"?\b", re.IGNORECASE),
    # a decade ("a man in his 50s", "in her late 80s"): the decade's first year
    re.compile(r"\bin (?:his|her|their) (?:early |mid |mid-|late )?(\d0)'?s\b()", re.IGNORECASE),
    re.compile(
        r"\b(?:he|she|baby)(?:'s|\s+is)\s+(\d{1,2})\s*(weeks?|wks?|months?|mths?)\b"
        r"(?!\s+(?:pregnant|along|gone|ago|late|early))",
        re.IGNORECASE,
    ),
    # "my baby has 8 weeks" (non-native English): an age in weeks or months, told with "has"
    re.compile(
        r"\b(?:baby|son|daughter|child|boy|girl|lo|little one)\s+(?:has|have)\s+(\d{1,2})\s*"
        r"(weeks?|wks?|months?|mths?)\b(?=\s*(?:[.,;!]|$|and\b|old\b))",
        re.IGNORECASE,
    ),
    # "my son 4 years have fever", "daughter 18 months breathing fast" (non-native English): a child, then
    # an age with its unit and no verb, followed by what is told of the child (#31 recall, fifth pass)
    re.compile(
        r"\b(?:son|daughter|boy|girl|child|kid|baby|toddler|infant|neonate|grandson|granddaughter)\s+(\d{1,2}(?:\.\d)?)\s*"
        r"(years?|yrs?|months?|mths?|weeks?|wks?)\b"
        r"(?=\s*(?:[.,;!]|$|and\b|has\b|have\b|is\b|was\b|with\b|got\b|breath\w*|cough\w*|vomit\w*))",
        re.IGNORECASE,
    ),
    # "my son is 3", "our daughter, 2,", "toddler (2)", "my lil one is 2 n has": a child and a bare number
    re.compile(
        r"\b(?:son|daughter|boy|girl|child|kid|baby|toddler|infant|neonate|grandson|granddaughter"
        r"|little one|lil one|lo)"
        r"(?:\s+(?:is|turned|who is|who'?s|aged)|'s|,|\s*\()\s*(\d{1,2}(?:\.\d)?)\s*"
        r"(years?|yrs?|months?|mths?|mos?|weeks?|wks?|days?)?\b"
        r"(?!\s*(?:(?:years?|yrs?|months?|mths?|mos?|weeks?|wks?|days?)\s*)?(?:%|kg|lbs?|cm|mg|ml|times?|hours?|hrs?|:|\.\d|am\b|pm\b|o'?clock|/|pregnant|along|gone|late|early|behind|ahead|ago))",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bi\s*(?:am|'m|m)\s+(\d{1,2})()\b(?!\s*(?:weeks?|wks?|days?|months?|kg|lbs?|cm|%|mg|pounds?|stone|times?|hours?|\+))",
        re.IGNORECASE,
    ),
)
_TEMPERATURE_BEFORE = re.compile(r"temp|fever|°|º|degree|thermometer|reading|running", re.IGNORECASE)
_COUNT = (
    r"(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|several|a few|few|a couple of|couple of)"
)
_UNIT = r"(minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?)"
_DURATION = re.compile(
    r"\b(?:for|over|in the (?:last|past)|since|about|almost|nearly|already)\s+(?:the\s+)?(?:last\s+|past\s+)?"
    rf"{_COUNT}\s+{_UNIT}\b"
    # "3 days now", "four days straight", "two days in a row", "5 days running", "2 days and counting"
    rf"|\b{_COUNT}\s+{_UNIT}\s+(?:now|straight|running|in a row|and counting|solid)\b",
    re.IGNORECASE,
)
_DURATION_BARE = re.compile(
    # "6 days of fever", "4 days with a temperature", "x3 days", "fever 6 days", clinicians' "fever 5/7"
    # (days only: "my baby is 9 months with a temperature" is an age)
    rf"\b{_COUNT}\s+(days?)\s+(?:of|with)\b"
    r"(?=(?:[^.!?\n]|\.(?=\d)){0,25}\b(?:fever|temp|pyrex|febrile|burning up|rigou?r))"
    rf"|\bx\s?(\d{{1,2}})\s*{_UNIT}\b"
    rf"|\b(?:fever\w*|temps?|temperatures?|pyrexi\w*|febrile)\s+{_COUNT}\s+{_UNIT}\b(?!\s+(?:ago|old|later|before))"
    r"|(?<![\d/])(?<!on )(?<!since )(?<!from )\b([1-9])/7\b(?!/)",
    re.IGNORECASE,
)
_MINUTES_BARE = re.compile(
    # a sign's own time in minutes or hours with no "for" ("she's been seizing 10 minutes"), not a time
    # since ("a fit 5 minutes ago"): read only when the caller asks (``read_durations(bare_minutes=True)``)
    rf"\b{_COUNT}\s+(minutes?|mins?|hours?|hrs?)\b(?!\s+(?:ago|later|before|after|earlier|apart|each|a day))",
    re.IGNORECASE,
)
_DAY_OF = re.compile(
    # "day 4 of the fever", "the fifth day", "on day three"
    r"\bday\s+(\d{1,2}|two|three|four|five|six|seven|eight|nine|ten)\b(?!\s*(?:am|pm|:))"
    r"|\b(second|third|fourth|fifth|sixth|seventh|eighth|2nd|3rd|4th|5th|6th|7th|8th)\s+day\b",
    re.IGNORECASE,
)
_WORD_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "several": 3, "a few": 3, "few": 3, "a couple of": 2,
                 "couple of": 2}  # fmt: skip
_ORDINALS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8}
_UNIT_YEARS = {"y": 1.0, "m": 1 / 12, "w": 7 / 365.25, "d": 1 / 365.25}
_UNIT_DAYS = {"min": 1 / 1440, "h": 1 / 24, "d": 1.0, "w": 7.0, "m": 30.0}


@dataclass(frozen=True)
class Reading:
    vital: Vital
    value: float
    """In the limits' unit (°C, beats or breaths a minute, mmHg, %, mmol/L)."""
    written: str
    """As the message wrote it."""


@dataclass(frozen=True)
class Finding:
    reading: Reading
    limit: VitalLimit
    age: float | None

    def evidence(self) -> TriageEvidence:
        at = f", age {format_age(self.age)}" if self.age is not None else ""
        return TriageEvidence("vital", f"{self.reading.written} ({self.limit.label}{at})")


def format_age(years: float) -> str:
    if years < 1 / 12:
        return f"{round(years * 365.25)} days"
    if years < 0.25:
        return f"{round(years * 365.25 / 7)} weeks"
    if years < 2:
        return f"{round(years * 12)} months"
    return f"{years:g} years"


def _number(text: str) -> float:
    return float(text.replace(",", "."))


def _temperature(value: float, unit: str | None) -> float | None:
    unit = (unit or "").lower()[:1]
    if unit == "f" or (not unit and 93.0 <= value <= 113.0):
        return round((value - 32.0) * 5.0 / 9.0, 1)
    if unit == "c" or 30.0 <= value <= 45.0:
        return value
    return None


def read_vitals(text: str) -> list[Reading]:
    """Every vital sign value the text states (in the limits' units)."""
    found: list[Reading] = []
    for match in _TEMPERATURE.finditer(text):
        number = match.group(1) or match.group(3) or match.group(6) or match.group(8) or match.group(9)
        unit = match.group(2) or match.group(4) or match.group(5)
        celsius = _temperature(_number(number), unit)
        if celsius is not None and celsius < FAHRENHEIT_AS_SEX_BELOW_C and not _DEGREE.search(match.group(0)):
            continue  # "79F", "72 f" with no degree mark: an age and sex ("79F, confused"), not 26 °C
        if celsius is not None and 25.0 <= celsius <= 45.0:
            found.append(Reading("temperature_c", celsius, match.group(0).strip()))
    for match in _HEART.finditer(text):
        found.append(Reading("heart_rate", float(match.group(1) or match.group(2)), match.group(0).strip()))
    for match in _BREATHING.finditer(text):
        value = float(match.group(1) or match.group(2))
        if 0 < value <= 150:
            found.append(Reading("breathing_rate", value, match.group(0).strip()))
    for pressure in read_pressures(text):
        if pressure.systolic is not None:
            found.append(Reading("systolic_bp", float(pressure.systolic), pressure.written))
    for match in _SPO2.finditer(text):
        value = float(match.group(1) or match.group(2))
        if 50 <= value <= 100:
            found.append(Reading("spo2", value, match.group(0).strip()))
    for match in _GCS.finditer(text):
        value = float(match.group(1))
        if 3 <= value <= 15:
            found.append(Reading("gcs", value, match.group(0).strip()))
    for match in _GLUCOSE.finditer(text):
        number = match.group(1) or match.group(3)
        unit = match.group(2) or match.group(4)
        value = _number(number)
        mg = (unit or "").lower().startswith("mg") or (not unit and value > GLUCOSE_MMOL_MAX)
        found.append(
            Reading(
                "glucose_mmol", round(value / MG_DL_PER_MMOL_L, 1) if mg else value, match.group(0).strip()
            )
        )
    return found


def read_age(text: str, policy: VitalsPolicy) -> float | None:
    """The age (years) of the person the message is about: the first stated, else one a word implies."""
    best: tuple[int, float] | None = None
    for pattern in _AGES:
        match = pattern.search(text)
        if match is None:
            continue
        if _TEMPERATURE_BEFORE.search(text[max(0, match.start() - 20) : match.start()]):
            continue
        unit = match.group(2) if match.lastindex and match.lastindex >= 2 else None
        unit = "y" if not unit or unit.lower() in ("m", "f", "male", "female") else unit
        years = _number(match.group(1)) * _UNIT_YEARS[_unit_letter(unit)]
        if best is None or match.start() < best[0]:
            best = (match.start(), years)
    if best is not None:
        return best[1]
    for word, implied in policy.ages.items():
        if re.search(word, text, re.IGNORECASE):
            return implied
    return None


def _unit_letter(unit: str) -> str:
    letter = unit.lower()[:1]
    if unit.lower().startswith("mo") or unit.lower().startswith("mth"):
        return "m"
    return letter if letter in _UNIT_YEARS else "y"


def read_durations(
    text: str, named: Mapping[str, float] | None = None, bare_minutes: bool = False
) -> list[tuple[str, float]]:
    """Durations the text states, as (written, days), in the order written: "for 3 days", "3 days now",
    "a couple of days", "6 days of", "x3 days", "fever 5 days", "5/7", "day 4", "the fifth day"; with
    ``named`` (``vitals.yaml`` ``durations``: pattern -> days at least), spans of time named without a
    count: "since last week" (7), "over the weekend" (2), "since Monday" (1); with ``bare_minutes``, a
    count of minutes or hours with no "for" beside a sign ("seizing 10 minutes"), never a time since
    ("a fit 5 minutes ago")."""
    found: list[tuple[int, str, float]] = []
    for match in _DURATION.finditer(text):
        count = (match.group(1) or match.group(3)).lower()
        unit = (match.group(2) or match.group(4)).lower()
        found.append((match.start(), match.group(0), _days(count, unit)))
    for without_for in (_DURATION_BARE, _MINUTES_BARE) if bare_minutes else (_DURATION_BARE,):
        for match in without_for.finditer(text):
            if any(start < match.end() and match.start() < start + len(seen) for start, seen, _ in found):
                continue  # "temperature 6 days running": read once, by _DURATION
            groups = [g for g in match.groups() if g is not None]
            unit = groups[1].lower() if len(groups) > 1 else "days"
            found.append((match.start(), match.group(0), _days(groups[0], unit)))
    for match in _DAY_OF.finditer(text):
        count = (match.group(1) or match.group(2)).lower()
        digits = count.rstrip("ndrth")
        number = float(digits) if digits.isdigit() else float(_WORD_NUMBERS.get(count) or _ORDINALS[count])
        found.append((match.start(), match.group(0), number))
    for pattern, days in (named or {}).items():
        for match in re.finditer(pattern, text, re.IGNORECASE):
            found.append((match.start(), match.group(0), float(days)))
    return [(written, days) for _, written, days in sorted(found)]


def _days(count: str, unit: str) -> float:
    """``count`` (digits or words: "3", "a couple of") ``unit``s ("minutes", "hrs", "weeks") in days."""
    count = " ".join(count.lower().split())
    number = float(count) if count.isdigit() else float(_WORD_NUMBERS[count])
    key = "min" if unit.startswith("min") else "m" if unit.startswith("mo") else unit[:1]
    return number * _UNIT_DAYS[key]


def names_child(text: str, policy: VitalsPolicy) -> bool:
    return any(p.search(text) for p in policy.child_patterns)


_FEVER = re.compile(
    r"\b(fever\w*|temperatures?|temps?|febrile|pyrexi\w*|burning up|rigou?rs)\b", re.IGNORECASE
)


def _split(text: str, sentences: Sequence[str] | None) -> Sequence[str]:
    """``sentences`` when the caller has split the text, else its clauses by triage's one splitter."""
    return sentences if sentences is not None else [c.text for c in clauses(text)]


FEVER_DURATION_WINDOW = 40
"""Characters either side of a fever word a duration must lie within (and in the same sentence)."""


Denied = Callable[[str, int], bool]
"""Whether the words before this offset of this sentence negate what follows (``evidence.negated``)."""


def read_fever_days(
    text: str,
    sentences: Sequence[str] | None = None,
    denied: Denied | None = None,
    named: Mapping[str, float] | None = None,
) -> list[Reading]:
    """How long a fever has lasted: a duration beside a fever word in its sentence ("fever for 5 days").
    ``sentences``: the text's sentences when the caller has split them (else split here); ``denied``:
    a fever word it says is negated ("a cold for a week, no temperature") gives no days; ``named``:
    see ``read_durations``."""
    found: dict[str, Reading] = {}
    for sentence in _split(text, sentences):
        for fever in _FEVER.finditer(sentence):
            if denied is not None and denied(sentence, fever.start()):
                continue
            start = max(0, fever.start() - FEVER_DURATION_WINDOW)
            near = sentence[start : fever.end() + FEVER_DURATION_WINDOW]
            for written, days in read_durations(near, named):
                found.setdefault(written.strip(), Reading("fever_days", days, written.strip()))
    return list(found.values())


_PER_DAY = {unit: 1 / _UNIT_DAYS[key] for unit, key in (("minutes", "min"), ("hours", "h"), ("days", "d"))}
"""A sign's unit (``SignDuration.unit``) per day."""


def read_sign_durations(
    sentences: Sequence[str], policy: VitalsPolicy, denied: Denied | None = None
) -> list[Reading]:
    """How long a sign of ``policy.sign_durations`` has lasted: a duration beside one of its words in
    its sentence ("he's been fitting for 6 minutes": ``seizure_minutes`` 6), in the sign's unit. A
    denied sign word and a sentence telling a known pattern (``habitual``: "his fits usually last
    10 minutes") give none; a duration in years is no duration here ("a seizure 6 years ago")."""
    found: dict[tuple[str, str], Reading] = {}
    for vital, sign in policy.sign_durations.items():
        for sentence in sentences:
            if any(p.search(sentence) for p in sign.habit_patterns):
                continue
            for word in (m for p in sign.word_patterns for m in p.finditer(sentence)):
                if denied is not None and denied(sentence, word.start()):
                    continue
                start = max(0, word.start() - FEVER_DURATION_WINDOW)
                near = sentence[start : word.end() + FEVER_DURATION_WINDOW]
                for written, days in read_durations(near, bare_minutes=True):
                    value = days * _PER_DAY[sign.unit]
                    if sign.longest is not None and value > sign.longest:
                        continue
                    found.setdefault((vital, written.strip()), Reading(vital, value, written.strip()))
    return list(found.values())


def check_vitals(
    text: str, policy: VitalsPolicy, sentences: Sequence[str] | None = None, denied: Denied | None = None
) -> list[Finding]:
    """Values the text states that fall outside a limit for the age it gives (see the module docstring).
    ``sentences``: the text's sentences, when the caller has split them; ``denied``: see
    ``read_fever_days``."""
    split = _split(text, sentences)
    readings = read_vitals(text) + read_fever_days(text, split, denied, policy.durations)
    if policy.sign_durations:
        readings += read_sign_durations(split, policy, denied)
    if not readings:
        return []
    if any(p.search(text) for p in policy.exertion_patterns):
        readings = [r for r in readings if r.vital not in ("heart_rate", "breathing_rate")]
    age = read_age(text, policy)
    child = age is None and names_child(text, policy)
    findings = []
    for reading in readings:
        for limit in policy.limits:
            if limit.vital != reading.vital:
                continue
            if age is not None:
                applies = limit.covers(age)
            elif child:
                applies = limit.any_age
            else:
                applies = limit.covers(policy.adult_age_years)
            if applies and limit.outside(reading.value):
                findings.append(Finding(reading, limit, age))
                break
    return findings
