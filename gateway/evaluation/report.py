"""The HTML report: side-by-side bars with bootstrap whiskers (inline SVG, no plotting library).

Rendered from ``templates/eval/report.html.j2`` (the bundled templates, or the operator's copy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from gateway.evaluation.records import EvalRecord

PALETTE = ("#0969da", "#1a7f37", "#9a6700", "#8250df", "#cf222e")
"""Bar colours by system position; the raw model is always grey."""
RAW_COLOUR = "#6e7781"


def colours(systems: Sequence[str]) -> dict[str, str]:
    others = [s for s in systems if s != "raw"]
    chosen = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(others)}
    return {s: RAW_COLOUR if s == "raw" else chosen[s] for s in systems}


_ROW = 22
_GAP = 14
_LABEL_W = 300
_PLOT_W = 380
_VALUE_W = 230


def _scale(value: float, maximum: float) -> float:
    return _LABEL_W + (_PLOT_W * value / maximum if maximum > 0 else 0.0)


def bar_chart(
    rows: Sequence[tuple[str, Mapping[str, Mapping[str, Any]]]],
    systems: Sequence[str],
    maximum: float | None = None,
    percent: bool = True,
) -> Markup:
    """Grouped horizontal bars: one group per metric, one bar per system, CI whiskers, value labels.

    ``rows`` is (label, {system: estimate-json}); a missing or null value is drawn as "n/a".
    """
    if maximum is None:
        highs = [
            float(e.get("high") or e.get("value") or 0.0)
            for _, estimates in rows
            for e in estimates.values()
            if e.get("value") is not None
        ]
        maximum = max(highs, default=1.0) * 1.1 or 1.0
    scale_max = maximum  # a float from here on, for the row closure
    palette = colours(systems)

    def row(group: int, system: str, y: float) -> str:
        estimate = rows[group][1].get(system) or {}
        return _bar_row(estimate, system, palette[system], y, scale_max, percent)

    return _chart([label for label, _ in rows], systems, row, maximum=maximum, percent=percent)


def _chart(
    labels: Sequence[str],
    systems: Sequence[str],
    row: Callable[[int, str, float], str],
    *,
    maximum: float = 1.0,
    percent: bool = True,
    value_width: int = _VALUE_W,
    attributes: str = "",
    defs: str = "",
) -> Markup:
    """The frame every chart shares: the ``<svg>`` element (``attributes`` and ``defs`` added), five
    gridlines with their scale labels, and one group per label with one row per system, drawn by
    ``row(group, system, y)``."""
    group_h = _ROW * len(systems) + _GAP
    height = group_h * len(labels) + 30
    width = _LABEL_W + _PLOT_W + value_width
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" {attributes}'
        f'font-family="system-ui, sans-serif" font-size="12">{defs}'
    ]
    for tick in range(5):
        at = maximum * tick / 4
        x = _scale(at, maximum)
        label = f"{at:.0%}" if percent else f"{at:.2f}"
        parts.append(
            f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - 20}" stroke="#d0d7de" stroke-width="1"/>'
            f'<text x="{x:.1f}" y="{height - 6}" text-anchor="middle" fill="#57606a">{label}</text>'
        )
    for g, label in enumerate(labels):
        top = g * group_h
        parts.append(
            f'<text x="{_LABEL_W - 8}" y="{top + _ROW * len(systems) / 2 + 4:.1f}" text-anchor="end" '
            f'font-weight="600">{escape(label)}</text>'
        )
        parts.extend(row(g, system, top + s * _ROW) for s, system in enumerate(systems))
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - built here from escaped labels and numbers only


def _bar_row(
    estimate: Mapping[str, Any], system: str, colour: str, y: float, maximum: float, percent: bool
) -> str:
    value = estimate.get("value")
    if value is None:
        return f'<text x="{_LABEL_W + 4}" y="{y + 15}" fill="#57606a">{escape(system)}: n/a</text>'
    bar_w = max(_scale(float(value), maximum) - _LABEL_W, 1.0)
    parts = [
        f'<rect x="{_LABEL_W}" y="{y + 3}" width="{bar_w:.1f}" height="{_ROW - 6}" fill="{colour}">'
        f"<title>{escape(system)}: {_fmt(estimate, percent)}</title></rect>"
    ]
    low, high = estimate.get("low"), estimate.get("high")
    if low is not None and high is not None:
        x_low, x_high, mid = _scale(float(low), maximum), _scale(float(high), maximum), y + _ROW / 2
        parts.append(
            _line(x_low, mid, x_high, mid)
            + _line(x_low, mid - 5, x_low, mid + 5)
            + _line(x_high, mid - 5, x_high, mid + 5)
        )
    parts.append(
        f'<text x="{_LABEL_W + _PLOT_W + 6}" y="{y + 15}" fill="{colour}">{escape(system)} '
        f"{_fmt(estimate, percent)}</text>"
    )
    return "".join(parts)


def _line(x1: float, y1: float, x2: float, y2: float) -> str:
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#1f2328" stroke-width="1.5"/>'
    )


def _fmt(estimate: Mapping[str, Any], percent: bool) -> str:
    value = estimate.get("value")
    if value is None:
        return "n/a"
    if percent:
        text = f"{float(value):.1%}"
        if estimate.get("denominator"):
            text += f" ({estimate.get('numerator'):.0f}/{estimate.get('denominator'):.0f})"
        return text
    return f"{float(value):.3f}"


def fmt_estimate(estimate: Mapping[str, Any] | None, percent: bool = True) -> str:
    """ "61.0% [48.2–72.4] (25/41)" or "n/a"."""
    if not estimate or estimate.get("value") is None:
        return "n/a"
    value, low, high = float(estimate["value"]), estimate.get("low"), estimate.get("high")
    if percent:
        text = f"{value:.1%}"
        if low is not None and high is not None:
            text += f" [{float(low):.1%}–{float(high):.1%}]"
        if estimate.get("denominator"):
            text += f" ({estimate['numerator']:.0f}/{estimate['denominator']:.0f})"
        return text
    text = f"{value:+.3f}" if estimate.get("signed") else f"{value:.3f}"
    if low is not None and high is not None:
        text += f" [{float(low):.3f}–{float(high):.3f}]"
    return text


def fmt_difference(estimate: Mapping[str, Any] | None) -> str:
    if not estimate or estimate.get("value") is None:
        return "n/a"
    text = f"{float(estimate['value']) * 100:+.1f} pts"
    if estimate.get("low") is not None and estimate.get("high") is not None:
        text += f" [{float(estimate['low']) * 100:+.1f}, {float(estimate['high']) * 100:+.1f}]"
    return text


RANGE_LEVELS = (
    ("statement_support", "Statement-level support"),
    ("response_support", "Response-level support"),
)
"""The support levels the range chart draws, with their labels."""
UNDECIDED_FILL = "#eaeef2"
REJECTED_FILL = "#ffebe9"
HUMAN_COLOUR = "#cf222e"
_RANGE_VALUE_W = 330
"""Room for a range's label ("gateway: 85.5%–100.0% (14.5% undecided)") right of the range chart."""


def fmt_range(ranged: Mapping[str, Any] | None) -> str:
    """ "40.0%–75.0% (35.0% undecided)", a point "40.0% (none undecided)", or "n/a"."""
    if not ranged or ranged.get("low") is None or ranged.get("high") is None:
        return "n/a"
    low, high, undecided = float(ranged["low"]), float(ranged["high"]), float(ranged.get("undecided") or 0.0)
    if not undecided:
        return f"{low:.1%} (none undecided)"
    return f"{low:.1%}–{high:.1%} ({undecided:.1%} undecided)"


def range_chart(results: Mapping[str, Any], systems: Sequence[str]) -> Markup:
    """Statement- and response-level support as ranges: per system and level, one bar from 0 to 100%:
    verified (the system's colour), undecided (hatched grey), decided not supported (pale red); the
    people's figure, when the replay carries human labels, is a red tick."""
    palette = colours(systems)

    def row(group: int, system: str, y: float) -> str:
        level = RANGE_LEVELS[group][0]
        return _range_row(results["systems"][system], level, system, palette[system], y)

    return _chart(
        [label for _, label in RANGE_LEVELS],
        systems,
        row,
        value_width=_RANGE_VALUE_W,
        attributes='aria-label="Support ranges" class="support-ranges" ',
        defs=(
            '<defs><pattern id="undecided" width="6" height="6" patternUnits="userSpaceOnUse" '
            'patternTransform="rotate(45)">'
            f'<rect width="6" height="6" fill="{UNDECIDED_FILL}"/>'
            '<line x1="0" y1="0" x2="0" y2="6" stroke="#8c959f" stroke-width="2"/></pattern></defs>'
        ),
    )


def _range_row(system_results: Mapping[str, Any], level: str, system: str, colour: str, y: float) -> str:
    ranged = system_results.get("support_ranges", {}).get(level) or {}
    low, high = ranged.get("low"), ranged.get("high")
    if low is None or high is None:
        return f'<text x="{_LABEL_W + 4}" y="{y + 15}" fill="#57606a">{escape(system)}: n/a</text>'
    text = escape(f"{system}: {fmt_range(ranged)}")
    segments = (
        ("verified", 0.0, float(low), colour),
        ("undecided", float(low), float(high), "url(#undecided)"),
        ("rejected", float(high), 1.0, REJECTED_FILL),
    )
    parts = []
    for part, start, end, fill in segments:
        if end > start:
            x, w = _scale(start, 1.0), _scale(end, 1.0) - _scale(start, 1.0)
            parts.append(
                f'<rect data-part="{part}" x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{_ROW - 6}" '
                f'fill="{fill}"><title>{text}</title></rect>'
            )
    human = (system_results.get("agreement") or {}).get(f"human_{level}")
    if human is not None:
        x = _scale(float(human), 1.0)
        parts.append(
            f'<line data-part="human" x1="{x:.1f}" y1="{y + 1}" x2="{x:.1f}" y2="{y + _ROW - 1}" '
            f'stroke="{HUMAN_COLOUR}" stroke-width="3"><title>{escape(system)}: people say '
            f"{float(human):.1%}</title></line>"
        )
    parts.append(f'<text x="{_LABEL_W + _PLOT_W + 6}" y="{y + 15}" fill="{colour}">{text}</text>')
    return "".join(parts)


def question_rows(grouped: Mapping[str, Sequence[EvalRecord]]) -> list[dict[str, Any]]:
    """One row per question: its scope and, per system, a short outcome."""
    rows: dict[str, dict[str, Any]] = {}
    for system, records in grouped.items():
        for r in records:
            row = rows.setdefault(
                r.question.id,
                {
                    "id": r.question.id,
                    "question": r.question.question,
                    "scope": r.question.scope.value if r.question.scope else "",
                    "systems": {},
                },
            )
            row["systems"][system] = _outcome(r)
    return list(rows.values())


def _outcome(r: EvalRecord) -> dict[str, str]:
    if r.answer.error is not None:
        return {"status": "error", "detail": r.answer.error, "css": "bad"}
    if r.answer.refused:
        return {
            "status": f"refused ({r.answer.refusal_reason or '?'})",
            "detail": r.answer.answer,
            "css": "refused",
        }
    claims = r.check.claims
    valid = sum(1 for u in r.check.urls if u.valid)
    status = f"{r.check.supported_claims}/{len(claims)} claims supported"
    if r.check.undecided_claims:
        status += f", {r.check.undecided_claims} undecided"
    if r.check.urls:
        status += f"; {valid}/{len(r.check.urls)} URLs valid"
    css = "good" if claims and r.check.supported_claims == len(claims) else "bad"
    return {"status": status, "detail": r.answer.answer, "css": css}


def render_report(
    templates_dir: Path, results: Mapping[str, Any], grouped: Mapping[str, Sequence[EvalRecord]]
) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["estimate"] = fmt_estimate
    env.filters["difference"] = fmt_difference
    env.filters["support_range"] = fmt_range
    systems = list(results["systems"])
    definitions = results["definitions"]

    def rows(ids: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
        return [
            (definitions[m]["label"], {s: results["systems"][s]["metrics"][m] for s in systems}) for m in ids
        ]

    quality = [m for m, d in definitions.items() if d["family"] in ("SourceCheckup", "ASTRID")]
    ranges = range_chart(results, systems)
    harness = [
        "supported_answer_rate",
        "retrieval_hit",
        "refusal_rate",
        "in_scope_refusal_rate",
        "error_rate",
    ]
    charts = {
        "quality": bar_chart(rows(quality), systems, maximum=1.0),
        "harness": bar_chart(rows(harness), systems, maximum=1.0),
        "latency": bar_chart(rows(["latency_median", "latency_p95"]), systems, percent=False),
        "ranges": ranges,
    }
    template = env.get_template("eval/report.html.j2")
    return template.render(
        results=results,
        systems=systems,
        colours=colours(systems),
        definitions=definitions,
        charts=charts,
        questions=question_rows(grouped),
        labelled=any("agreement" in results["systems"][s] for s in systems),
    )
