"""Coalescing policies written in Python.

A policy is the NIC firmware's interrupt decision, as a sans-I/O state
machine: the simulator calls one method per input (a frame starts arriving,
its DMA completes, the policy's timer fires, the interrupt is raised, the
host re-arms the line) with the simulated time in integer picoseconds, and
the method answers with a :class:`Decision` (or ``None``: nothing to do).
The built-in strategies (``disabled``, ``timeout``, ``openmx``, ``stream``,
``adaptive``) are the same machine in Rust (``crates/nicsim/src/nic/coalesce``);
a Python policy lets you try a new one without touching the core, at the cost
of a call into Python per input (roughly 10-50x slower runs).

Run one with :func:`nicsim.run` and ``policy=`` a zero-argument callable (a
class works) that returns a fresh policy; it is called once per receive
queue.

Examples
--------
A Python copy of [OMX-COAL] Algorithm 1, its fallback a timer from the
first unreported frame, gives exactly the built-in ``openmx`` strategy's
results with that timer (``timeout_mode = "absolute"``; ``omx2009``'s own is
a minimum gap between interrupts):

>>> import nicsim
>>> from nicsim.policy import OpenMxPolicy
>>> base = {"workload": {"kind": "pingpong", "iterations": 30, "warmup": 2}}
>>> mine = nicsim.run(base, policy=OpenMxPolicy)
>>> builtin = nicsim.run(base, nic={"coalescing": "openmx", "timeout_mode": "absolute"})
>>> mine["latency_us"] == builtin["latency_us"]
True
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MYRI10G_DEFAULT_DELAY_PS", "CoalescingPolicy", "Decision", "OpenMxPolicy"]

#: Myri-10G default coalescing delay, 75 us ([OMX-COAL]; SPEC §5).
MYRI10G_DEFAULT_DELAY_PS = 75_000_000


@dataclass(frozen=True)
class Decision:
    """A policy's answer to one input.

    Attributes
    ----------
    raise_irq
        Raise the queue's interrupt now. If the line is masked (the host has
        not re-armed it yet) the NIC raises it at the re-arm when frames are
        still waiting.
    timer_ps
        Arm the policy's single timer for this absolute time (ps); it calls
        :meth:`CoalescingPolicy.on_timer` then. Re-arming moves the timer.
    cancel_timer
        Cancel the timer (ignored when ``timer_ps`` is given).
    """

    raise_irq: bool = False
    timer_ps: int | None = None
    cancel_timer: bool = False


class CoalescingPolicy:
    """Base class of Python coalescing policies: every input is ignored.

    Override the inputs your policy needs. All times are integer
    picoseconds of simulated time.
    """

    def on_arrival(self, now_ps: int, marked: bool) -> Decision | None:
        """Answer the first bit of a frame arriving (``marked``: latency-sensitive)."""
        return None

    def on_dma_complete(
        self, now_ps: int, marked: bool, size_bytes: int, other_pending: int
    ) -> Decision | None:
        """Answer a received frame (or a transmit completion: unmarked, 0 B) reaching the ring.

        ``other_pending``: other frames this NIC has received whole and not
        yet delivered, in its firmware or DMA ([OMX-COAL] Algorithm 2, "other
        DMAs pending"; a frame still arriving off the wire does not count).
        """
        return None

    def on_timer(self, now_ps: int) -> Decision | None:
        """Answer the timer armed by a previous decision firing."""
        return None

    def on_irq_raised(self, now_ps: int) -> Decision | None:
        """Answer the NIC raising the interrupt (the line is now masked)."""
        return None

    def on_rearm(self, now_ps: int, ring_pending: int) -> Decision | None:
        """Answer the host re-arming the line (``ring_pending`` entries still wait)."""
        return None


class OpenMxPolicy(CoalescingPolicy):
    """[OMX-COAL] Algorithm 1 in Python: marked frames raise at once.

    The others fall back to an absolute timeout from the first unreported
    frame (the built-in ``openmx`` strategy with ``timeout_mode =
    "absolute"``).

    Parameters
    ----------
    delay_ps
        Fallback coalescing delay (default: Myri-10G's 75 us).
    """

    def __init__(self, delay_ps: int = MYRI10G_DEFAULT_DELAY_PS) -> None:
        self.delay_ps = delay_ps
        self.first_ps: int | None = None
        self.armed = False

    def _raise(self) -> Decision:
        self.armed = False
        return Decision(raise_irq=True, cancel_timer=True)

    def _decide(self, now_ps: int) -> Decision | None:
        if self.first_ps is None:
            return None
        deadline = self.first_ps + self.delay_ps
        if self.delay_ps == 0 or now_ps >= deadline:
            return self._raise()
        if not self.armed:
            self.armed = True
            return Decision(timer_ps=deadline)
        return None

    def on_dma_complete(  # noqa: D102
        self, now_ps: int, marked: bool, size_bytes: int, other_pending: int
    ) -> Decision | None:
        if self.first_ps is None:
            self.first_ps = now_ps
        decision = self._decide(now_ps)
        return self._raise() if marked else decision

    def on_timer(self, now_ps: int) -> Decision | None:  # noqa: D102
        self.armed = False
        return self._decide(now_ps)

    def _reset(self) -> Decision:
        self.first_ps = None
        self.armed = False
        return Decision(cancel_timer=True)

    def on_irq_raised(self, now_ps: int) -> Decision | None:  # noqa: D102
        return self._reset()

    def on_rearm(self, now_ps: int, ring_pending: int) -> Decision | None:  # noqa: D102
        return self._reset() if ring_pending == 0 else None
