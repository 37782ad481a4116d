"""Why stream raises as many interrupts as openmx at 0 B ([OMX-COAL] §IV-C2).

The study: "We observed that it actually reduces the number of interrupts by
about a factor of 2." Algorithm 2 defers a marked frame's interrupt only
while another *received* frame is still in the NIC's firmware or DMA
(§III-C: "If no other packet arrives before the DMA completes, the
requested interrupt is actually raised"). A deferral removes an interrupt
only if the next frame arrives within one 0 B frame's firmware + DMA time
(W0). Nothing in Open-MX 1.0.901's send path, its driver or `mx_stream`
puts two tiny frames closer than one send path (s: the library, the ioctl,
the driver and the doorbell), so with W0 < s stream defers nothing, and
with W0 > s it defers nearly every interrupt: the count falls off a cliff
at W0 = s, and a factor of 2 needs the spread of a sender's gaps around W0
(docs/paths-2009.md, §IV-C2, "The 0 B interrupt count").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import tomllib

import nicsim
from nicsim.studies import exp_coal

REPO = Path(__file__).resolve().parents[1]
PRESET = tomllib.loads((REPO / "presets" / "omx2009.toml").read_text())

#: The Ethernet minimum frame a 0 B Open-MX message travels in.
ETH_ZLEN = 60


def _send_path_ns() -> float:
    """The sender's time between two 0 B frames with nothing else to do."""
    return float(
        PRESET["library"]["send_ns"]
        + PRESET["host"]["syscall_ns"]
        + PRESET["host"]["driver_tx_ns"]
        + PRESET["nic"]["doorbell_ns"]
    )


def _window_ns(fw_rx_ns: float) -> float:
    """Stream's deferral window for a 0 B frame: firmware, stream's check, DMA."""
    nic = PRESET["nic"]
    dma_ns = nic["dma_startup_ns"] + ETH_ZLEN / nic["dma_MBps"] * 1000.0
    return float(fw_rx_ns + nic["fw_rx_stream_ns"] + dma_ns)


def _irqs_per_message(strategy: str, fw_rx_ns: float | None = None) -> float:
    params: dict[str, str | int | float] = {"strategy": strategy, "size_bytes": 0}
    scenario: dict[str, Any] = exp_coal._msgrate_scenario(params, quick=True)
    scenario["preset"] = "omx2009"
    if fw_rx_ns is not None:
        scenario["platform"] = {"nic": {"fw_rx_ns": fw_rx_ns}}
    value = nicsim.run(scenario)["interrupts_per_msg"]
    assert isinstance(value, float)
    return value


def _openmx_over_stream(fw_rx_ns: float | None = None) -> float:
    return _irqs_per_message("openmx", fw_rx_ns) / _irqs_per_message("stream", fw_rx_ns)


def test_zero_byte_frames_arrive_further_apart_than_the_deferral_window() -> None:
    # omx2009: s = 1.804 µs, W0 = 0.693 µs. No 0 B frame is pending when a
    # marked one completes, so stream raises what openmx raises.
    assert _window_ns(PRESET["nic"]["fw_rx_ns"]) < _send_path_ns()
    assert _openmx_over_stream() == pytest.approx(1.0, abs=0.05)


@pytest.mark.parametrize(("margin_ns", "deferred"), [(-30.0, False), (30.0, True)])
def test_the_deferral_is_a_cliff_where_the_window_passes_the_send_path(
    margin_ns: float, deferred: bool
) -> None:
    # The firmware time alone moved so that W0 = s ± 30 ns: just below, the
    # next frame arrives after the marked one's DMA and nothing is deferred;
    # just above, it is pending every time the sender is not held up, and
    # stream's interrupts fall by more than the study's factor of 2.
    fw_rx_ns = _send_path_ns() + margin_ns - (_window_ns(0.0))
    ratio = _openmx_over_stream(fw_rx_ns)
    if deferred:
        assert ratio > 2.0
    else:
        assert ratio == pytest.approx(1.0, abs=0.05)


def test_a_sender_at_its_ioctl_floor_is_still_too_slow_for_the_deferral() -> None:
    # With no library time a message (s = 1.05 µs) the sender is faster, yet
    # its frames still arrive further apart than W0: stream still defers
    # nothing.
    def stream(strategy: str, send_ns: float | None) -> Any:
        scenario: dict[str, Any] = exp_coal._msgrate_scenario(
            {"strategy": strategy, "size_bytes": 0}, quick=True
        )
        scenario["preset"] = "omx2009"
        if send_ns is not None:
            scenario["platform"] = {"library": {"send_ns": send_ns}}
        return nicsim.run(scenario)

    fast, base = stream("openmx", 0.0), stream("openmx", None)
    assert fast["msg_rate_per_s"] > 1.2 * base["msg_rate_per_s"]
    ratio = fast["interrupts_per_msg"] / stream("stream", 0.0)["interrupts_per_msg"]
    assert ratio == pytest.approx(1.0, abs=0.05)
