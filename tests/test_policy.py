"""Python-defined coalescing policies, through the compiled core."""

from __future__ import annotations

from typing import Any

import pytest

import nicsim
from nicsim.policy import CoalescingPolicy, Decision, OpenMxPolicy

pytestmark = pytest.mark.core

PINGPONG: dict[str, Any] = {"workload": {"kind": "pingpong", "iterations": 40, "warmup": 2}}
STREAM: dict[str, Any] = {"workload": {"kind": "stream", "size_bytes": 0, "messages": 400}}


@pytest.mark.parametrize("base", [PINGPONG, STREAM], ids=["pingpong", "stream"])
def test_python_openmx_equals_the_builtin_strategy(base: dict[str, Any]) -> None:
    mine = nicsim.run(base, policy=OpenMxPolicy)
    # Its fallback is a timer from the first unreported frame (omx2009's own
    # is a minimum gap between interrupts, `nic.default_timeout_mode`).
    builtin = nicsim.run(base, nic={"coalescing": "openmx", "timeout_mode": "absolute"})
    # A Python policy does not report an effective delay; all else is equal.
    builtin = {k: v for k, v in builtin.items() if not k.endswith("_coalesce_delay_us")}
    assert mine == builtin


class RaiseEveryFrame(CoalescingPolicy):
    def on_dma_complete(
        self, now_ps: int, marked: bool, size_bytes: int, other_pending: int
    ) -> Decision | None:
        return Decision(raise_irq=True)


def test_raising_on_every_frame_behaves_like_disabled() -> None:
    mine = nicsim.run(STREAM, policy=RaiseEveryFrame)
    disabled = nicsim.run(STREAM, nic={"coalescing": "disabled"})
    assert mine["msg_rate_per_s"] == pytest.approx(disabled["msg_rate_per_s"], rel=0.02)


class TimerOnly(CoalescingPolicy):
    """Raise 50 us after the first unreported frame, whatever it is."""

    def __init__(self) -> None:
        self.first_ps: int | None = None

    def on_dma_complete(
        self, now_ps: int, marked: bool, size_bytes: int, other_pending: int
    ) -> Decision | None:
        if self.first_ps is None:
            self.first_ps = now_ps
            return Decision(timer_ps=now_ps + 50_000_000)
        return None

    def on_timer(self, now_ps: int) -> Decision | None:
        return Decision(raise_irq=True)

    def on_irq_raised(self, now_ps: int) -> Decision | None:
        self.first_ps = None
        return Decision(cancel_timer=True)


def test_a_timer_only_policy_delays_every_message_by_its_timer() -> None:
    slow = nicsim.run(PINGPONG, policy=TimerOnly)
    fast = nicsim.run(PINGPONG, policy=OpenMxPolicy)
    assert fast["latency_us"] < 15
    assert 45 < slow["latency_us"] - fast["latency_us"] < 60


class Broken(CoalescingPolicy):
    def on_dma_complete(
        self, now_ps: int, marked: bool, size_bytes: int, other_pending: int
    ) -> Decision | None:
        raise RuntimeError("firmware bug")


class WrongType(CoalescingPolicy):
    def on_dma_complete(
        self, now_ps: int, marked: bool, size_bytes: int, other_pending: int
    ) -> Any:
        return 3


@pytest.mark.parametrize(
    ("policy", "words"),
    [
        (Broken, ["policy.on_dma_complete", "firmware bug"]),
        (WrongType, ["policy.on_dma_complete", "Decision"]),
    ],
)
def test_policy_errors_are_one_clear_line(policy: Any, words: list[str]) -> None:
    with pytest.raises(nicsim.NicsimError) as err:
        nicsim.run(PINGPONG, policy=policy)
    assert all(w in str(err.value) for w in words)
    assert "Traceback" not in str(err.value)
