"""Re-runnable fit of the ``lci2000`` preset's one free parameter.

The preset marks ``ni.fw_tx_cycles`` and ``ni.fw_rx_cycles`` ``[fitted]``
(one parameter: both take the same value) against the SPEC.md §5 fact
"LCI one-way null latency 12 us", measured as half the mean round trip of
a 0-byte ping-pong between hosts 0 and 1 with ``packet-shifting`` polling.
With no contention the latency is affine in the cycle count, so two runs
and a secant step find it; the result is rounded to whole cycles and
checked by a third run.

Run it with ``python -m nicsim.fit_lci`` (prints the fitted value and the
latency it gives).
"""

from __future__ import annotations

import sys

import tomli_w

from nicsim import _core

__all__ = ["TARGET_LATENCY_US", "fit_lci2000", "null_latency_us"]

#: SPEC §5 [LCI] fact.
TARGET_LATENCY_US = 12.0


def null_latency_us(fw_cycles: int, preset: str = "lci2000") -> float:
    """One-way 0-byte latency (us) with both firmware costs at ``fw_cycles``."""
    scenario = {
        "preset": preset,
        "seed": 1,
        "platform": {"ni": {"fw_tx_cycles": fw_cycles, "fw_rx_cycles": fw_cycles}},
        "nic": {"polling": "packet-shifting"},
        "workload": {"kind": "pingpong", "size_bytes": 0, "iterations": 200, "warmup": 10},
    }
    return float(_core.run(tomli_w.dumps(scenario))["latency_us"])


def fit_lci2000(preset: str = "lci2000") -> tuple[int, float]:
    """Return (fitted cycles, latency in us at that value)."""
    lo, hi = 0, 200
    l_lo, l_hi = null_latency_us(lo, preset), null_latency_us(hi, preset)
    cycles = round(lo + (TARGET_LATENCY_US - l_lo) * (hi - lo) / (l_hi - l_lo))
    cycles = max(0, cycles)
    return cycles, null_latency_us(cycles, preset)


def main() -> int:
    """Print the fit."""
    cycles, latency = fit_lci2000()
    print(
        f"ni.fw_tx_cycles = ni.fw_rx_cycles = {cycles}: null latency {latency:.3f} us "
        f"(target {TARGET_LATENCY_US} us)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
