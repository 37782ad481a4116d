"""The calibration targets of the Open-MX hosts: what each study measured, as runs.

Each :class:`Target` is a published value and the run that measures it
under the overrides a fit tries, as the study ran it: [OMX-COAL]'s
micro-benchmarks native Open-MX (§IV-B1 "between two Open-MX processes",
§IV-B3 "an Open-MX ping-pong benchmark"), [OMX-MQ]'s IMB PingPong over Open
MPI at SC (Table I, §4.1). :mod:`nicsim.studies.fit` fits the presets to them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tomli_w

from nicsim import _core

# Streams run as long as the coalescing-msgrate and coalescing-delay-sweep
# experiments' (full and --quick), so the fitted presets meet their targets
# on the very tables the report shows.
from nicsim.studies.exp_coal import (
    NATIVE,
    NATIVE_STREAM_WINDOW,
    QUICK_STREAM_MESSAGES,
    STREAM_MESSAGES,
)

__all__ = ["BOUND_WEIGHT", "Overrides", "Target", "coal_targets", "mq_targets"]

#: ``table -> key -> value``: the preset values a run overrides.
Overrides = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Target:
    """One calibration target: a simulated quantity and its published value."""

    name: str
    published: float
    measure: Callable[[str, Overrides], float]
    #: A bound rather than a value: only a simulated value above it counts
    #: as an error (e.g. "disabling coalescing cuts the rate by more than 2x").
    upper: bool = False

    def error(self, value: float) -> float:
        """Relative error of a simulated value (0 if a bound holds).

        A published inequality is a statement, not a figure read off a plot:
        a violated bound counts ``BOUND_WEIGHT`` times its relative excess, so
        the fit gives up a few percent on a value before it breaks a bound.
        The hinge is continuous, as a least-squares fit needs.
        """
        if self.upper:
            return BOUND_WEIGHT * max(0.0, (value - self.published) / self.published)
        return (value - self.published) / self.published


#: How much more a violated bound counts than a missed value of the same
#: relative size (see :meth:`Target.error`).
BOUND_WEIGHT = 10.0


def _run(preset: str, ov: Overrides, **scenario: Any) -> dict[str, float | int | str]:
    doc: dict[str, Any] = {"preset": preset, "seed": 1, "platform": ov, **scenario}
    # A metric the run could not measure is NaN: it never fits a target.
    return {k: math.nan if v is None else v for k, v in _core.run(tomli_w.dumps(doc)).items()}


def _num(m: dict[str, float | int | str], key: str) -> float:
    v = m[key]
    assert not isinstance(v, str)
    return float(v)


# -- [OMX-COAL]: native Open-MX micro-benchmarks (exp_coal.NATIVE) -------------


def _msgrate(strategy: str) -> Callable[[str, Overrides], float]:
    def f(preset: str, ov: Overrides) -> float:
        workload = {"kind": "stream", "messages": STREAM_MESSAGES, "window": NATIVE_STREAM_WINDOW}
        m = _run(preset, ov, nic={"coalescing": strategy}, protocol=NATIVE, workload=workload)
        return _num(m, "msg_rate_per_s")

    return f


def _flood(strategy: str, steering: str) -> Callable[[str, Overrides], float]:
    def f(preset: str, ov: Overrides) -> float:
        m = _run(
            preset,
            ov,
            nic={"coalescing": strategy, "steering": steering},
            host={"soaker": True},
            workload={"kind": "flood", "packets": 6000},
        )
        return _num(m, "overhead_ns_per_packet")

    return f


def _coal_latency(preset: str, ov: Overrides) -> float:
    """[OMX-COAL] §IV-B3: the Open-MX ping-pong with coalescing disabled."""
    m = _run(
        preset,
        ov,
        nic={"coalescing": "disabled"},
        protocol=NATIVE,
        workload={"kind": "pingpong", "iterations": 300},
    )
    return _num(m, "latency_us")


def _stream128(
    delay_us: float, messages: int = STREAM_MESSAGES
) -> Callable[[str, Overrides], float]:
    """[OMX-COAL] 128 B stream, round-robin interrupts, sleep on."""

    def f(preset: str, ov: Overrides) -> float:
        m = _run(
            preset,
            ov,
            nic={"coalescing": "timeout", "delay_us": delay_us, "steering": "single-rr"},
            host={"sleep": True},
            protocol=NATIVE,
            workload={
                "kind": "stream",
                "size_bytes": 128,
                "messages": messages,
                "window": NATIVE_STREAM_WINDOW,
            },
        )
        return _num(m, "msg_rate_per_s")

    return f


def _no_coalescing_ratio(preset: str, ov: Overrides) -> float:
    # A bound must hold at both run lengths the experiments use (full and
    # --quick), not only at the one the fit happens to run.
    lengths = (QUICK_STREAM_MESSAGES, STREAM_MESSAGES)
    return max(_stream128(0, n)(preset, ov) / _stream128(75, n)(preset, ov) for n in lengths)


def _binding_saving(preset: str, ov: Overrides) -> float:
    dis_rr, dis_one = _flood("disabled", "single-rr"), _flood("disabled", "single-core")
    return dis_rr(preset, ov) - dis_one(preset, ov)


def coal_targets() -> list[Target]:
    """[OMX-COAL]'s calibration targets (SPEC §5), as the study ran them."""
    return [
        Target("msgrate 0 B disabled (msg/s)", 252_000, _msgrate("disabled")),
        Target("msgrate 0 B timeout (msg/s)", 490_000, _msgrate("timeout")),
        Target("msgrate 0 B openmx (msg/s)", 423_000, _msgrate("openmx")),
        Target("msgrate 0 B stream (msg/s)", 435_000, _msgrate("stream")),
        Target("128 B 75 us rr sleep (msg/s)", 433_000, _stream128(75)),
        Target("128 B delay 0 / 75 us (< 0.5)", 0.5, _no_coalescing_ratio, upper=True),
        Target("flood disabled rr (ns/pkt)", 965, _flood("disabled", "single-rr")),
        Target("flood timeout rr (ns/pkt)", 774, _flood("timeout", "single-rr")),
        Target("flood binding saving (ns/pkt)", 40, _binding_saving),
        Target("native 0 B latency, disabled (us)", 10.0, _coal_latency),
    ]


# -- [OMX-MQ]: IMB PingPong over Open MPI 1.2.6, single IRQ on core 0 (SC) ------


def _sc_pingpong(
    size: int, ioat: bool, metric: str, mpi: bool = True
) -> Callable[[str, Overrides], float]:
    """[OMX-MQ] IMB PingPong on the single interrupt core 0, process on core 0 (SC).

    The other ranks busy-wait (no idle core); coalescing is off.
    """

    def f(preset: str, ov: Overrides) -> float:
        m = _run(
            preset,
            ov,
            nic={"coalescing": "disabled", "steering": "single-core", "irq_core": 0},
            host={"binding": "SC", "soaker": True, "ioat": ioat},
            protocol={"mpi": mpi},
            workload={
                "kind": "pingpong",
                "size_bytes": size,
                "iterations": 300 if size < 65536 else 6,
                "warmup": 2,
            },
        )
        return _num(m, metric)

    return f


def mq_targets() -> list[Target]:
    """[OMX-MQ]'s calibration targets (SPEC §5, and §4.1's native latency)."""
    return [
        Target("SC 0 B latency (us)", 10.96, _sc_pingpong(0, False, "latency_us")),
        Target(
            "SC 4 MiB throughput (MiB/s)", 719.0, _sc_pingpong(4 << 20, False, "throughput_MiBps")
        ),
        Target("SC 4 MiB I/OAT (MiB/s)", 1056.0, _sc_pingpong(4 << 20, True, "throughput_MiBps")),
        Target("native 0 B latency, SC (us)", 8.0, _sc_pingpong(0, False, "latency_us", mpi=False)),
    ]
