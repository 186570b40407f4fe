"""Just enough PromQL reading to list the metric names an expression selects.

Not a parser: string literals, label matchers ``{...}``, ranges ``[...]``, grouping label lists
(``by``/``without``/``on``/``ignoring``/``group_left``/``group_right``), Grafana variables (``$job``,
``$__rate_interval``) and function calls are removed or skipped; every remaining identifier is a
metric name (or a recording-rule name, which may contain colons).
"""

from __future__ import annotations

import re

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\[\]]*\]")
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", re.IGNORECASE)
_VARIABLE = re.compile(r"\$\{[^}]*\}|\$\w+")
_LABEL_VALUES = re.compile(r"label_values\s*\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,[^)]*\)")
_IDENTIFIER = re.compile(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?")
_KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
    "offset", "bool", "inf", "nan", "atan2", "start", "end",
}  # fmt: skip


def metric_names(expr: str) -> set[str]:
    """The metric (and recording-rule) names ``expr`` selects."""
    names = set(_LABEL_VALUES.findall(expr))
    text = _LABEL_VALUES.sub(" ", expr)
    text = _STRING.sub('""', text)
    text = _MATCHERS.sub(" ", text)
    text = _RANGE.sub(" ", text)
    text = _VARIABLE.sub(" ", text)
    previous = None
    while previous != text:  # grouping lists may follow an aggregation or a binary operator
        previous, text = text, _GROUPING.sub(" ", text)
    for match in _IDENTIFIER.finditer(text):
        name, call = match.group(1), match.group(2)
        if call or name.lower() in _KEYWORDS:
            continue
        names.add(name)
    return names
