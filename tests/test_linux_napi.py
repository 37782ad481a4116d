"""Linux's NAPI knobs from Python: threaded NAPI and the busy-poll budget.

Threaded NAPI (``host.napi_threaded``, ``[[host.napi]] threaded``) moves
each NAPI poll into a kernel thread woken by the hard IRQ; the busy-poll
budget (``host.busy_poll_budget``, SO_BUSY_POLL_BUDGET) is what one busy
poll takes. Each test asserts a relation that holds only if the knob acts,
and the keys' one-line errors.
"""

from __future__ import annotations

from typing import Any

import pytest

import nicsim
from nicsim import NicsimError


def _pingpong(host: dict[str, Any]) -> dict[str, Any]:
    """Return a ``modern`` 0 B ping-pong's metrics, the processes on the interrupt's core."""
    return nicsim.run(
        {
            "preset": "modern",
            "nic": {"coalescing": "disabled", "steering": "single-core", "irq_core": 0},
            "host": {"binding": "SC", **host},
            "workload": {"kind": "pingpong", "size_bytes": 0, "iterations": 200, "warmup": 10},
        }
    )


def test_threaded_napi_adds_the_threads_wake_up_to_each_trip() -> None:
    soft, threaded = _pingpong({}), _pingpong({"napi_threaded": True})
    assert threaded["interrupts"] == soft["interrupts"]
    # The hard IRQ wakes the thread (250 ns) and the switch into it (700 ns)
    # precedes each poll, on another core of the die.
    assert threaded["latency_us"] > soft["latency_us"] + 0.5
    per_queue = _pingpong({"napi": [{"queue": 0, "threaded": True}]})
    assert per_queue["latency_us"] == threaded["latency_us"]


_OMX_THREADED = '`host.napi_threaded`: true (allowed: false on preset "omx2009"'
_NEEDS_BUSY = "`host.busy_poll_budget`: 4 (it needs `host.busy_poll = true`"


@pytest.mark.parametrize(
    ("preset", "host", "message"),
    [
        ("omx2009", {"napi_threaded": True}, _OMX_THREADED),
        ("omx2009", {"napi": [{"queue": 0, "threaded": True}]}, "`host.napi[0].threaded`: true"),
        ("modern", {"napi_threaded": True, "tx_reap": "hard-irq"}, 'with tx_reap = "hard-irq"'),
        ("modern", {"busy_poll": True, "busy_poll_budget": 65536}, "`: 65536 (allowed"),
        ("modern", {"busy_poll_budget": 4}, _NEEDS_BUSY),
    ],
)
def test_the_keys_refuse_what_linux_or_the_preset_cannot_do(
    preset: str, host: dict[str, Any], message: str
) -> None:
    with pytest.raises(NicsimError) as err:
        nicsim.run({"preset": preset, "host": host, "workload": {"kind": "pingpong"}})
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def _busy_stream(budget: int) -> dict[str, Any]:
    """Return a ``modern`` 0 B stream into a busy-polling host 1 with ``budget``."""
    return nicsim.run(
        {
            "preset": "modern",
            "host": {"busy_poll": True, "busy_poll_budget": budget},
            "workload": {"kind": "stream", "size_bytes": 0, "messages": 2000, "warmup": 100},
        }
    )


def test_a_busy_poll_budget_of_one_hands_bursts_to_napi() -> None:
    one, default = _busy_stream(1), _busy_stream(0)
    # A budget of 1: the poll takes one frame and busy_poll_stop's poll one
    # more, which spends its budget and schedules NAPI on the poller's core
    # (the interrupt masked until NAPI completes): fewer interrupts than
    # with the kernel's 8, which the 0 B stream's bursts seldom exceed.
    assert one["interrupts"] < default["interrupts"]
    assert one["host1_kernel_us"] != default["host1_kernel_us"]
    assert default["host1_kernel_us"] == _busy_stream(8)["host1_kernel_us"]
