"""The [LCI] NIC features in the Open-MX world (issue 34).

NI-level multicast forwarding, the polling watchdog, the NI clock of
fine-grain timers, packet-shifting delivery and link-level back-pressure
(``nic.flow_control``), from scenario dicts, on the ``omx2009`` and
``modern`` presets with a coalescing policy: each test asserts a relation
that holds only if the feature acts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import nicsim
from nicsim import NicsimError

PRESETS = ["omx2009", "modern"]
POLICIES = ["disabled", "timeout", "openmx", "stream", "adaptive"]


def _bcast(preset: str, forwarding: str, policy: str = "openmx") -> dict[str, Any]:
    return nicsim.run(
        {
            "preset": preset,
            "platform": {"topology": {"hosts": 7}},
            "nic": {"coalescing": policy, "multicast_forwarding": True},
            "workload": {
                "kind": "bcast",
                "size_bytes": 64,
                "iterations": 20,
                "warmup": 2,
                "procs_per_host": 1,
                "forwarding": forwarding,
            },
        }
    )


@pytest.mark.parametrize("preset", PRESETS)
def test_ni_forwarding_reaches_every_host_with_less_work_on_an_inner_host(preset: str) -> None:
    host, ni = _bcast(preset, "host"), _bcast(preset, "ni")
    # One firmware copy per receiving rank and broadcast: 6 ranks x 22.
    assert (host["mcast_forwards"], ni["mcast_forwards"]) == (0, 6 * 22)
    # Host 1 is an inner node of the binary tree (children 3 and 4).
    assert ni["host1_work_us_per_bcast"] < host["host1_work_us_per_bcast"]
    assert ni["time_us"] < host["time_us"]


def test_ni_forwarding_needs_the_firmware_table() -> None:
    needs = r"workload\.forwarding.*nic\.multicast_forwarding = true"
    with pytest.raises(NicsimError, match=needs):
        nicsim.run({"workload": {"kind": "bcast", "forwarding": "ni"}})


def _stream(preset: str, policy: str, wait: str, watchdog_us: float) -> dict[str, Any]:
    return nicsim.run(
        {
            "preset": preset,
            "nic": {"coalescing": policy, "watchdog_us": watchdog_us},
            "host": {"busy_poll": True, "wait": wait},
            "workload": {"kind": "stream", "size_bytes": 1024, "messages": 2000, "warmup": 100},
        }
    )


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("policy", ["timeout", "adaptive"])
def test_the_watchdog_spares_interrupts_while_the_receiver_polls(preset: str, policy: str) -> None:
    per_message = _stream(preset, "disabled", "poll", 0.0)
    alone = _stream(preset, policy, "poll", 0.0)
    dog = _stream(preset, policy, "poll", 20.0)
    assert dog["watchdog_fetches"] > 0  # it looked at the ring
    assert dog["host1_rx_interrupts"] < alone["host1_rx_interrupts"]
    assert dog["host1_rx_interrupts"] < per_message["host1_rx_interrupts"]
    # Nobody polls: the watchdog lets the interrupts out, the stream completes.
    asleep = _stream(preset, policy, "block", 20.0)
    assert asleep["host1_rx_interrupts"] > 0
    assert asleep["msg_rate_per_s"] > 0


def _nas_is(preset: str, policy: str, clock_period_us: float) -> dict[str, Any]:
    # A 100 us delayed ack: the fine-grain timer [LCI] §5.2 uses its NI clock for.
    return nicsim.run(
        {
            "preset": preset,
            "platform": {"library": {"delayed_ack_us": 100.0}},
            "nic": {"coalescing": policy, "clock_period_us": clock_period_us},
            "workload": {"kind": "nas-is", "class": "A", "procs_per_host": 2},
        }
    )


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("policy", POLICIES)
def test_the_ni_clock_runs_the_timers_of_a_computing_process(preset: str, policy: str) -> None:
    # A clock of a second never ticks within the run: the OS timer alone,
    # which does not interrupt a computation.
    os_timer, clock = _nas_is(preset, policy, 1e6), _nas_is(preset, policy, 50.0)
    assert "clock_ticks" not in _nas_is(preset, policy, 0.0)
    assert os_timer["clock_interrupts"] == 0 and os_timer["timers_missed"] > 0
    assert clock["clock_signals"] > 0
    # Run within two periods of their deadline, not when the computation
    # ends; plus what a signal waited on its core: Linux delivers it on the
    # return to user mode, after the NAPI poll under way there (omx2009,
    # `stream`: one poll that never runs dry holds a signal 112 us, and its
    # deadline runs 182 us late; crates/nicsim/src/sim/ni_tests.rs,
    # a_clock_signal_waits_for_the_napi_poll_on_its_core).
    wait = clock["clock_signal_wait_us_max"]
    assert clock["timer_late_us_max"] <= 2 * 50.0 + 10.0 + wait
    assert clock["timer_late_us_mean"] < os_timer["timer_late_us_mean"] / 10


def test_the_ni_clock_period_is_checked() -> None:
    with pytest.raises(NicsimError, match=r"nic\.clock_period_us.*0\.5.*0\.7 \.\.= 1000000"):
        nicsim.run({"nic": {"clock_period_us": 0.5}, "workload": {"kind": "stream"}})


def _stream0(preset: str, policy: str, busy: bool, delivery: str) -> dict[str, Any]:
    return nicsim.run(
        {
            "preset": preset,
            "nic": {"coalescing": policy, "rx_delivery": delivery},
            "host": {"busy_poll": busy},
            "workload": {"kind": "stream", "size_bytes": 0, "messages": 2000, "warmup": 100},
        }
    )


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("busy", [False, True])
def test_shifted_delivery_is_one_write_and_one_line_per_frame(
    preset: str, policy: str, busy: bool
) -> None:
    ring = _stream0(preset, policy, busy, "ring")
    shifted = _stream0(preset, policy, busy, "shifted")
    assert "rx_dma_writes" not in ring
    assert shifted["rx_dma_writes"] * 2 == shifted["rx_dma_writes_ring"]
    # Whoever polls (NAPI or the busy poller) misses one DMA-written line
    # per frame instead of two, and host 1's kernel works less.
    assert shifted["host1_cache_dma_misses"] * 2 == ring["host1_cache_dma_misses"]
    assert shifted["host1_kernel_us"] < ring["host1_kernel_us"]


def test_shifted_delivery_is_refused_where_it_cannot_be() -> None:
    with pytest.raises(NicsimError, match=r"nic\.rx_delivery.*shift.*ring, shifted"):
        nicsim.run({"nic": {"rx_delivery": "shift"}, "workload": {"kind": "stream"}})
    with pytest.raises(NicsimError, match=r"nic\.rx_delivery.*native-mx"):
        nicsim.run(
            {
                "nic": {"rx_delivery": "shifted"},
                "protocol": {"stack": "native-mx"},
                "workload": {"kind": "stream"},
            }
        )


def _exchange(
    preset: str, flow_control: bool, policy: str = "openmx", trace: Path | None = None
) -> dict[str, Any]:
    """Two hosts exchanging 64 KiB messages (pulls) on rings of 32 buffers,
    the least a pull block needs: a pull window does not fit."""
    return nicsim.run(
        {
            "preset": preset,
            "platform": {"nic": {"ring_slots": 32}},
            "nic": {"coalescing": policy, "flow_control": flow_control},
            "workload": {"kind": "exchange", "size_bytes": 65536, "iterations": 10},
        },
        trace=trace,
    )


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("preset", PRESETS)
def test_flow_control_turns_ring_drops_into_waits(preset: str, policy: str) -> None:
    off, on = _exchange(preset, False, policy), _exchange(preset, True, policy)
    assert off["dropped_ring_full"] > 0
    assert "flow_control_held" not in off
    assert on["dropped"] == 0
    assert on["flow_control_held"] > 0 and on["flow_control_overflow"] == 0
    # The dropped frames wait for a resend or pull timer (0.5 s, 1 s on
    # omx2009); the held ones for the receiver's next poll.
    assert on["flow_control_wait_us_max"] < 1e4
    assert on["time_us"] * 10 < off["time_us"]


def test_waiting_frames_enter_the_nic_in_arrival_order(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    m = _exchange("omx2009", True, trace=path)
    assert m["flow_control_held"] > 0
    events = json.loads(path.read_text())["traceEvents"]
    # Each frame is an arrow from the sending NIC ("s", its departure) to
    # the receiving queue ("f", the start of its DMA).
    left = {e["id"]: e["ts"] for e in events if e["ph"] == "s" and e["pid"] == 0}
    entered = sorted((e["ts"], left[e["id"]]) for e in events if e["ph"] == "f" and e["pid"] == 1)
    assert len(entered) > 1000
    departures = [out for _, out in entered]
    assert departures == sorted(departures), "a frame entered host 1's NIC before one sent earlier"
    stops = [e for e in events if e.get("name") == "flow control: link stopped (ring full)"]
    restarts = [e for e in events if e.get("name") == "flow control: link restarted"]
    assert len(stops) == m["flow_control_stops"] == len(restarts) > 0


def test_flow_control_needs_a_bound() -> None:
    with pytest.raises(NicsimError, match=r"nic\.flow_control_frames.*nic\.flow_control = true"):
        nicsim.run(
            {
                "platform": {"nic": {"flow_control_frames": 0}},
                "nic": {"flow_control": True},
                "workload": {"kind": "stream"},
            }
        )
