"""When stream's deferral cuts the interrupts of a 0 B stream ([OMX-COAL] §IV-C2).

[OMX-COAL] §IV-C2: the Stream firmware "reduces the number of interrupts by
about a factor of 2" against the Open-MX firmware in the 0 B message-rate
test. Algorithm 2 defers a marked frame's interrupt only when "another DMA
is pending" as its DMA completes; nothing else in it differs from
Algorithm 1, so the two firmwares raise different numbers of interrupts
only if a frame reaches the NIC within the previous frame's firmware + DMA
time (`Nic::other_pending`).

On omx2009 a 0 B frame takes the receiving NIC about 0.7 µs (`nic.fw_rx_ns`
350 + `nic.fw_rx_stream_ns` 55, then `nic.dma_startup_ns` 250 and 60 B at
`nic.dma_MBps`), and the sender hands the driver one every 1.76 µs
(`library.send_ns` 712, the ioctl's `host.syscall_ns` 250 and
`host.driver_tx_ns` 650, the doorbell's `nic.doorbell_ns` 150): no frame is
ever pending when another completes, and stream is openmx. The tests pin
that regime and the relation behind it: the deferral switches on, and cuts
the interrupts by more than half, once the NIC's time per frame passes the
sender's spacing, and not below it, however close.
"""

from __future__ import annotations

from typing import Any

import nicsim
from nicsim.studies import exp_coal


def _zero_byte_stream(strategy: str, platform: dict[str, Any] | None = None) -> Any:
    scenario = exp_coal._msgrate_scenario({"strategy": strategy, "size_bytes": 0}, quick=True)
    scenario["preset"] = "omx2009"
    if platform:
        scenario["platform"] = platform
    return nicsim.run(scenario)


def _interrupt_ratio(platform: dict[str, Any] | None = None) -> float:
    """Interrupts per message, openmx over stream (the study's "factor")."""
    openmx = _zero_byte_stream("openmx", platform)
    stream = _zero_byte_stream("stream", platform)
    return float(openmx["interrupts_per_msg"] / stream["interrupts_per_msg"])


#: The receive DMA's start-up that puts a 0 B frame's firmware + DMA just
#: below (1.64 µs) and just above (2.04 µs) the sender's 1.76 µs spacing.
DMA_BELOW_SPACING = {"nic": {"dma_startup_ns": 1200.0}}
DMA_ABOVE_SPACING = {"nic": {"dma_startup_ns": 1600.0}}

#: The sender at its ioctl's floor: no library time a message (1.05 µs a
#: frame), still above the NIC's 0.7 µs.
FAST_SENDER = {"library": {"send_ns": 0.0}}


def test_zero_byte_frames_never_overlap_on_omx2009_so_stream_is_openmx() -> None:
    assert abs(_interrupt_ratio() - 1.0) < 0.05


def test_stream_defers_only_once_the_nic_takes_longer_than_the_sender_spacing() -> None:
    # Below the spacing, however close, no frame is pending: no deferral.
    assert abs(_interrupt_ratio(DMA_BELOW_SPACING) - 1.0) < 0.05
    # Above it every frame finds the next one pending: the interrupts of a
    # whole burst are deferred to its last frame.
    assert _interrupt_ratio(DMA_ABOVE_SPACING) > 2.0


def test_a_sender_at_its_ioctl_floor_is_still_too_slow_for_the_deferral() -> None:
    fast = _zero_byte_stream("openmx", FAST_SENDER)
    base = _zero_byte_stream("openmx")
    # The sender is faster (more messages a second) ...
    assert fast["msg_rate_per_s"] > 1.2 * base["msg_rate_per_s"]
    # ... yet its frames still arrive further apart than a frame's NIC time.
    assert abs(_interrupt_ratio(FAST_SENDER) - 1.0) < 0.05
