"""Simulated time cannot overflow: the core refuses a replayed frame later than
the clock's limit (``_core.MAX_TIME_NS``, 100 days) by its index, its time and
the limit, before any run."""

from __future__ import annotations

from array import array

import pytest

from nicsim import _core

DAY_NS = 86_400 * 10**9
SCENARIO = '[workload]\nkind = "pingpong"\n'


def _frames(*times_ns: int) -> list[tuple[int, int, bytes, bool, int, bool]]:
    """Ethernet frames that are not Open-MX, at ``times_ns``."""
    return [(t, 60, bytes(14), False, 0, False) for t in times_ns]


def test_the_limit_is_100_days() -> None:
    assert _core.MAX_TIME_NS == 100 * DAY_NS == 8_640_000_000_000_000


@pytest.mark.parametrize(
    "late",
    [400 * DAY_NS, _core.MAX_TIME_NS + 1, 2**64 // 1000, 2**64 - 1],
    ids=["400-days", "limit+1", "past-u64-ps", "u64-max"],
)
def test_a_frame_past_the_limit_is_refused_by_index(late: int) -> None:
    with pytest.raises(_core.NicsimError) as e:
        _core.replay(SCENARIO, _frames(0, 1_000, late))
    msg = str(e.value)
    assert "\n" not in msg
    assert f"frame 2 at {late} ns" in msg
    assert f"0 ..= {_core.MAX_TIME_NS} ns" in msg


@pytest.mark.parametrize("last", [_core.MAX_TIME_NS - 1, _core.MAX_TIME_NS])
def test_frames_up_to_the_limit_replay(last: int) -> None:
    metrics, (arrival, *_), _ = _core.replay(SCENARIO, _frames(0, last))
    assert metrics["replay_frames"] == 2
    assert array("Q", arrival).tolist() == [0, last * 1000]  # packed u64s, ps
