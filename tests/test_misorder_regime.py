"""When stream's deferral fails with one fragment mis-ordered ([OMX-COAL] §IV-C4).

A degree-1 mis-ordered 32 KiB message is reported by one interrupt when its
last fragment arrives within the marked fragment's firmware + DMA time
(Algorithm 2). No step of the 2009 send path opens such a gap in a two-host
ping-pong (docs/design.md, "The spacing of a medium message's fragments").
What breaks the deferral is an interrupt inside the incoming message:
Myri-10G's one coalescing timer, armed by the first transmit completion of
the host's own send, fires 75 µs later, so it lands in the peer's answer when
the one-way time is below about 80 µs. With the fitted receiver
(`cache.copy_cold_MBps` 997) the one-way time is 105 µs and every deferral
succeeds; with a receiver at the top of that parameter's range (3000) it is
80 µs and some fail, and only through the transmit-completion interrupts
(`nic.tx_done_interrupts`).
"""

from __future__ import annotations

from typing import Any

import nicsim
from nicsim.studies import exp_coal_transfer

#: The top of `cache.copy_cold_MBps`'s range in presets/omx2009.toml.
FAST_COPY_MBPS = 3000.0


def _stream_degree_1(platform: dict[str, Any]) -> Any:
    scenario = exp_coal_transfer._misorder_scenario({"strategy": "stream", "degree": 1}, quick=True)
    scenario["preset"] = "omx2009"
    if platform:
        scenario["platform"] = platform
    return nicsim.run(scenario)


def test_the_fitted_receiver_answers_too_late_for_the_timer_to_land_in_a_message() -> None:
    m = _stream_degree_1({})
    assert m["latency_us"] > 90
    assert m["deferral_success_rate"] == 1


def test_the_deferral_fails_only_through_the_transmit_timer_landing_in_the_next_message() -> None:
    fast = {"cache": {"copy_cold_MBps": FAST_COPY_MBPS}}
    on = _stream_degree_1(fast)
    assert on["latency_us"] < 85
    assert 0 < on["deferral_success_rate"] < 1
    # The same answer time without transmit-completion interrupts: nothing
    # interrupts the incoming message and every deferral succeeds.
    off = _stream_degree_1({**fast, "nic": {"tx_done_interrupts": False}})
    assert off["latency_us"] < 85
    assert off["deferral_success_rate"] == 1
