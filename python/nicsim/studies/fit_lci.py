"""Re-runnable fit of the ``lci2000`` preset's one free parameter.

The preset marks ``lanai.fw_tx_cycles`` and ``lanai.fw_rx_cycles`` ``[fitted]``
(one parameter: both take the same value) against the SPEC.md §5 fact
"LCI one-way null latency 12 us", measured as half the mean round trip of
a 0-byte ping-pong between hosts 0 and 1 with ``packet-shifting`` polling.
With no contention the latency is affine in the cycle count, so two runs
and a secant step find it; the result is rounded to whole cycles, kept
inside the preset's range for both keys (``# [range lanai.fw_tx_cycles ...]``,
:mod:`nicsim.studies.fitted`), and checked by a third run. A result pinned at a
bound of the range is a misfit, and the output says so.

Run it with ``python -m nicsim.studies.fit_lci`` (prints the fitted value and the
latency it gives).
"""

from __future__ import annotations

import sys

import tomli_w

from nicsim import _core
from nicsim._core import NicsimError
from nicsim.studies.fitted import Range, ranges

__all__ = ["KEYS", "TARGET_LATENCY_US", "cycle_range", "fit_lci2000", "null_latency_us"]

#: SPEC §5 [LCI] fact.
TARGET_LATENCY_US = 12.0


def null_latency_us(fw_cycles: int, preset: str = "lci2000") -> float:
    """One-way 0-byte latency (us) with both firmware costs at ``fw_cycles``."""
    scenario = {
        "preset": preset,
        "seed": 1,
        "platform": {"lanai": {"fw_tx_cycles": fw_cycles, "fw_rx_cycles": fw_cycles}},
        "protocol": {"stack": "lci"},
        "nic": {"polling": "packet-shifting"},
        "workload": {"kind": "pingpong", "size_bytes": 0, "iterations": 200, "warmup": 10},
    }
    latency = _core.run(tomli_w.dumps(scenario))["latency_us"]
    if not isinstance(latency, (int, float)):
        raise NicsimError(f"the LCI ping-pong of the fit measured no latency_us: {latency!r}")
    return float(latency)


#: The preset keys of the one free parameter.
KEYS = ("lanai.fw_tx_cycles", "lanai.fw_rx_cycles")


def cycle_range(preset: str = "lci2000") -> Range:
    """Return the range both keys allow (the intersection of the preset's two ranges).

    Raises
    ------
    ValueError
        If the preset gives no range for one of :data:`KEYS`.
    """
    stated = ranges(_core.preset_toml(preset))
    missing = [key for key in KEYS if key not in stated]
    if missing:
        raise ValueError(f"{preset}: no '# [range ...]' comment for {', '.join(missing)}")
    both = [stated[key] for key in KEYS]
    lo, hi = max(r.lo for r in both), min(r.hi for r in both)
    sources = "; ".join(f"{r.key}: {r.source}" for r in both)
    return Range(" = ".join(KEYS), lo, hi, both[0].scope, sources)


def fit_lci2000(preset: str = "lci2000") -> tuple[int, float, str]:
    """Return (fitted cycles, latency in us at that value, where it lies in its range).

    The third item is :meth:`Range.status`: anything but ``"inside"`` is a
    misfit (the target needs a value the range does not allow).
    """
    bounds = cycle_range(preset)
    lo, hi = 0, 200  # two points of the affine latency, not bounds
    l_lo, l_hi = null_latency_us(lo, preset), null_latency_us(hi, preset)
    cycles = round(bounds.clamp(lo + (TARGET_LATENCY_US - l_lo) * (hi - lo) / (l_hi - l_lo)))
    return cycles, null_latency_us(cycles, preset), bounds.status(cycles)


def main() -> int:
    """Print the fit."""
    cycles, latency, status = fit_lci2000()
    misfit = "" if status == "inside" else f"; misfit: {status} {cycle_range()}"
    print(
        f"lanai.fw_tx_cycles = lanai.fw_rx_cycles = {cycles}: null latency {latency:.3f} us "
        f"(target {TARGET_LATENCY_US} us){misfit}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
