"""When stream's deferral fails with one fragment mis-ordered ([OMX-COAL] §IV-C4).

A degree-1 mis-ordered 32 KiB message is reported by one interrupt when its
last fragment arrives within the marked fragment's firmware + DMA time
(Algorithm 2). No step of the 2009 send path opens such a gap in a two-host
ping-pong (docs/design.md, "The spacing of a medium message's fragments").
What breaks the deferral is an interrupt inside the incoming message, from
Myri-10G's one coalescing timer (receive and transmit completions alike).
`omx2009` takes that timer as a minimum gap between interrupts
(`nic.default_timeout_mode = "throttle"`, docs/paths-2009.md, "The
coalescing timer"): the interrupt that reports the host's own answer's
transmit completions opens a 75 µs gap whose end falls inside the peer's next
message part of the time. Read as a timer started by the first unreported
completion (`nic.timeout_mode = "absolute"`), it fires 75 µs after the
host's own send and lands in the peer's answer only when the one-way time
is below about 80 µs: with the fitted receiver (`cache.copy_cold_MBps` 997)
the one-way time is 105 µs and every deferral succeeds; with a receiver at
the top of that parameter's range (3000) it is 80 µs and some fail, and
only through the transmit-completion interrupts (`nic.tx_done_interrupts`).
"""

from __future__ import annotations

from typing import Any

import nicsim
from nicsim.studies import exp_coal_transfer

#: The top of `cache.copy_cold_MBps`'s range in presets/omx2009.toml.
FAST_COPY_MBPS = 3000.0


def _stream_degree_1(platform: dict[str, Any], timer: str | None = None) -> Any:
    scenario = exp_coal_transfer._misorder_scenario({"strategy": "stream", "degree": 1}, quick=True)
    scenario["preset"] = "omx2009"
    if platform:
        scenario["platform"] = platform
    if timer is not None:
        scenario["nic"] = {**scenario["nic"], "timeout_mode": timer}
    return nicsim.run(scenario)


def test_the_firmware_gap_ends_inside_the_next_message_part_of_the_time() -> None:
    m = _stream_degree_1({})
    assert m["latency_us"] > 90
    assert 0 < m["deferral_success_rate"] < 1
    # The interrupt inside the message is a third one a one-way message.
    assert m["interrupts_per_msg"] > 2.5
    # A timer started by the first completion fires after the message.
    first = _stream_degree_1({}, "absolute")
    assert first["latency_us"] > 90
    assert first["deferral_success_rate"] == 1
    assert first["interrupts_per_msg"] == 2


def test_with_the_first_packets_timer_the_deferral_fails_only_through_the_transmit_timer() -> None:
    fast = {"cache": {"copy_cold_MBps": FAST_COPY_MBPS}}
    on = _stream_degree_1(fast, "absolute")
    assert on["latency_us"] < 85
    assert 0 < on["deferral_success_rate"] < 1
    # The same answer time without transmit-completion interrupts: nothing
    # interrupts the incoming message and every deferral succeeds.
    off = _stream_degree_1({**fast, "nic": {"tx_done_interrupts": False}}, "absolute")
    assert off["latency_us"] < 85
    assert off["deferral_success_rate"] == 1
