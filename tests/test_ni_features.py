"""The [LCI] NIC features in the Open-MX world (issue 34, step 3).

NI-level multicast forwarding and the polling watchdog, from scenario
dicts, on the ``omx2009`` and ``modern`` presets with a coalescing policy:
each test asserts a relation that holds only if the feature acts.
"""

from __future__ import annotations

from typing import Any

import pytest

import nicsim
from nicsim import NicsimError

PRESETS = ["omx2009", "modern"]


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
