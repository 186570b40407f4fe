"""The ``Server-Timing`` header (``gateway.web.chat.server_timing``): keyed off ``StageName``, its entry
names as published (README), and no stage forgotten silently."""

from __future__ import annotations

import pytest

from gateway.pipeline.result import Timings
from gateway.vocabulary import StageName
from gateway.web.chat import SERVER_TIMING_NAMES, UNTIMED_STAGES, server_timing

PUBLISHED = ["parse", "triage", "retrieve", "upstream", "verify", "badge", "record", "serialise", "total"]
"""The header's entries in order, as the README names them and the benches read them."""


def entries(header: str) -> dict[str, float]:
    pairs = (part.strip().split(";dur=") for part in header.split(","))
    return {name: float(ms) for name, ms in pairs}


def test_every_stage_has_an_entry_or_is_listed_as_having_none() -> None:
    """A new ``StageName`` fails here until it gets a Server-Timing name or joins ``UNTIMED_STAGES``."""
    assert set(SERVER_TIMING_NAMES).isdisjoint(UNTIMED_STAGES)
    assert set(SERVER_TIMING_NAMES) | UNTIMED_STAGES == set(StageName)
    assert len(set(SERVER_TIMING_NAMES.values())) == len(SERVER_TIMING_NAMES)


def test_the_entries_keep_their_published_names_and_order() -> None:
    header = server_timing(Timings(), parse=0.0, serialise=0.0, held=0.0)
    assert list(entries(header)) == PUBLISHED


def test_each_entry_reports_the_time_counted_under_its_stage() -> None:
    timings = Timings()
    for seconds, stage in enumerate(StageName, start=1):
        timings.add(stage, seconds / 1000)
    found = entries(server_timing(timings, parse=0.0101, serialise=0.0202, held=0.5))
    ms = {stage: float(position) for position, stage in enumerate(StageName, start=1)}
    assert found == {
        "parse": 10.1,
        "triage": ms[StageName.TRIAGE],
        "retrieve": ms[StageName.RETRIEVE],
        "upstream": ms[StageName.DRAFT],
        "verify": ms[StageName.VERIFY] + ms[StageName.CLEANUP],  # cleanup counted in verify
        "badge": ms[StageName.BADGE],
        "record": ms[StageName.RECORD],
        "serialise": 20.2,
        "total": 500.0,
    }


@pytest.mark.parametrize("stage", sorted(UNTIMED_STAGES))
def test_a_stage_not_timed_on_its_own_has_no_time_to_read(stage: StageName) -> None:
    with pytest.raises(ValueError, match="not timed on its own"):
        Timings().of(stage)
