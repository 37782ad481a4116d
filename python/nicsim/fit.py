"""Re-runnable calibration of a preset's free parameters.

The fit touches only the parameters a preset marks ``[fitted]`` and scores
them only against the calibration targets of SPEC.md §5 (and the §5 facts
the preset names next to each fitted value). It is a coordinate descent:
each parameter in turn is tried at a few multiples of its current value and
kept at the best one, for a few rounds, minimising the sum of squared
relative errors. Everything is deterministic (fixed seed), so the same
preset always fits to the same values.

Run it with ``python -m nicsim.fit omx2009`` (prints the targets before and
after) and ``--write FILE`` to save a copy of the preset with the fitted
values (comments kept).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from nicsim import _core

# Stream runs as long as the coalescing-msgrate and coalescing-delay-sweep
# experiments' (full and --quick), so the fitted preset meets its targets on
# the very tables the report shows.
from nicsim.exp_coal import QUICK_STREAM_MESSAGES, STREAM_MESSAGES
from nicsim.fitted import Range, ranges

__all__ = ["FitParam", "Target", "fit", "main"]

Overrides = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Target:
    """One calibration target: a simulated quantity and its published value."""

    name: str
    published: float
    measure: Callable[[Overrides], float]
    #: A bound rather than a value: only a simulated value above it counts
    #: as an error (e.g. "disabling coalescing cuts the rate by more than 2x").
    upper: bool = False

    def error(self, value: float) -> float:
        """Relative error of a simulated value (0 if a bound holds).

        A published inequality is a statement, not a figure read off a plot:
        a violated bound counts as a ``BOUND_FLOOR`` miss plus ``BOUND_WEIGHT``
        times its relative excess, so the fit gives up a few percent on a
        value before it breaks a bound, even narrowly.
        """
        if self.upper:
            if value <= self.published:
                return 0.0
            return BOUND_FLOOR + BOUND_WEIGHT * (value - self.published) / self.published
        return (value - self.published) / self.published


#: How much more a violated bound counts than a missed value of the same
#: relative size (see :meth:`Target.error`).
BOUND_WEIGHT = 10.0
#: The least a violated bound counts (as a 10 % miss of a value): without it
#: a bound broken by 0.1 % would cost the fit almost nothing.
BOUND_FLOOR = 0.1


@dataclass(frozen=True)
class FitParam:
    """A free parameter: preset table, key, and whether it is an integer.

    Its range is the preset's (``# [range TABLE.KEY LO .. HI ...]``, read by
    :mod:`nicsim.fitted`): the fit starts inside it and searches only there.
    """

    table: str
    key: str
    integer: bool = False
    #: Keys that move with this one in a fixed ratio: ``(table, key, ratio)``
    #: is set to ``round(value * ratio)`` (two costs of one kind whose ratio
    #: is estimated while their scale is fitted).
    tied: tuple[tuple[str, str, float], ...] = ()

    @property
    def path(self) -> str:
        """``table.key``, as the preset's range comment names it."""
        return f"{self.table}.{self.key}"

    def assign(self, ov: Overrides, value: float) -> None:
        """Set this parameter (and the keys tied to it) in ``ov``."""
        ov.setdefault(self.table, {})[self.key] = value
        for table, key, ratio in self.tied:
            ov.setdefault(table, {})[key] = float(round(value * ratio))


#: Estimated ratio of a socket-to-socket line transfer to a die-to-die one on
#: Clovertown + 5000P (150 / 110 ns: the extra hop through the MCH snoop
#: filter); the fit sets the scale, this keeps the ratio.
OTHER_SOCKET_RATIO = 150.0 / 110.0


#: The preset being fitted (set by :func:`fit` / :func:`main`).
_PRESET = [_core.DEFAULT_PRESET]


def _run(ov: Overrides, **scenario: Any) -> dict[str, float | int | str]:
    doc: dict[str, Any] = {"preset": _PRESET[0], "seed": 1, "platform": ov, **scenario}
    return _core.run(tomli_w.dumps(doc))


def _num(m: dict[str, float | int | str], key: str) -> float:
    v = m[key]
    assert not isinstance(v, str)
    return float(v)


def _msgrate(strategy: str) -> Callable[[Overrides], float]:
    def f(ov: Overrides) -> float:
        workload = {"kind": "stream", "messages": STREAM_MESSAGES}
        m = _run(ov, nic={"coalescing": strategy}, workload=workload)
        return _num(m, "msg_rate_per_s")

    return f


def _flood(strategy: str, steering: str) -> Callable[[Overrides], float]:
    def f(ov: Overrides) -> float:
        m = _run(
            ov,
            nic={"coalescing": strategy, "steering": steering},
            host={"soaker": True},
            workload={"kind": "flood", "packets": 6000},
        )
        return _num(m, "overhead_ns_per_packet")

    return f


def _latency(mpi: bool) -> Callable[[Overrides], float]:
    def f(ov: Overrides) -> float:
        m = _run(
            ov,
            nic={"coalescing": "disabled"},
            protocol={"mpi": mpi},
            workload={"kind": "pingpong", "iterations": 300},
        )
        return _num(m, "latency_us")

    return f


def _stream128(delay_us: float, messages: int = STREAM_MESSAGES) -> Callable[[Overrides], float]:
    """[OMX-COAL] 128 B stream, round-robin interrupts, sleep on."""

    def f(ov: Overrides) -> float:
        m = _run(
            ov,
            nic={"coalescing": "timeout", "delay_us": delay_us, "steering": "single-rr"},
            host={"sleep": True},
            workload={"kind": "stream", "size_bytes": 128, "messages": messages},
        )
        return _num(m, "msg_rate_per_s")

    return f


def _no_coalescing_ratio(ov: Overrides) -> float:
    # A bound must hold at both run lengths the experiments use (full and
    # --quick), not only at the one the fit happens to run.
    lengths = (QUICK_STREAM_MESSAGES, STREAM_MESSAGES)
    return max(_stream128(0, n)(ov) / _stream128(75, n)(ov) for n in lengths)


def _binding_saving(ov: Overrides) -> float:
    return _flood("disabled", "single-rr")(ov) - _flood("disabled", "single-core")(ov)


def omx2009_targets() -> list[Target]:
    """SPEC §5 targets for ``omx2009`` (and the facts its fitted values name)."""
    dis_rr, to_rr = _flood("disabled", "single-rr"), _flood("timeout", "single-rr")
    return [
        Target("msgrate 0 B disabled (msg/s)", 252_000, _msgrate("disabled")),
        Target("msgrate 0 B timeout (msg/s)", 490_000, _msgrate("timeout")),
        Target("msgrate 0 B openmx (msg/s)", 423_000, _msgrate("openmx")),
        Target("msgrate 0 B stream (msg/s)", 435_000, _msgrate("stream")),
        Target("128 B 75 us rr sleep (msg/s)", 433_000, _stream128(75)),
        Target("128 B delay 0 / 75 us (< 0.5)", 0.5, _no_coalescing_ratio, upper=True),
        Target("flood disabled rr (ns/pkt)", 965, dis_rr),
        Target("flood timeout rr (ns/pkt)", 774, to_rr),
        Target("flood binding saving (ns/pkt)", 40, _binding_saving),
        Target("MPI 0 B latency (us)", 10.0, _latency(True)),
        Target("native 0 B latency (us)", 8.0, _latency(False)),
    ]


OMX2009_PARAMS = [
    FitParam("cache", "tx_contention_lines", integer=True),
    # The flood's binding saving is the cost of the one NAPI line that moves
    # between interrupt cores: it sets the scale of a line transfer; the
    # socket-to-socket cost keeps its estimated ratio to die-to-die (the
    # extra hop through the MCH snoop filter).
    FitParam("cache", "same_socket_ns", tied=(("cache", "other_socket_ns", OTHER_SOCKET_RATIO),)),
    FitParam("host", "irq_entry_ns"),
    FitParam("host", "driver_rx_ns"),
    FitParam("host", "sleep_exit_ns"),
    FitParam("library", "mpi_send_ns"),
    FitParam("library", "mpi_recv_ns"),
    # Open-MX small sends (33..128 B) copy their data into a malloc'd
    # retransmission buffer; tiny ones do not: the 0 B / 128 B rates.
    FitParam("library", "small_send_ns"),
]


def _sc_pingpong(size: int, ioat: bool, metric: str) -> Callable[[Overrides], float]:
    """[OMX-MQ] IMB PingPong on the single interrupt core 0, process on core 0 (SC).

    The other ranks busy-wait (no idle core); coalescing is off.
    """

    def f(ov: Overrides) -> float:
        m = _run(
            ov,
            nic={"coalescing": "disabled", "steering": "single-core", "irq_core": 0},
            host={"binding": "SC", "soaker": True, "ioat": ioat},
            workload={
                "kind": "pingpong",
                "size_bytes": size,
                "iterations": 300 if size < 65536 else 6,
                "warmup": 2,
            },
        )
        return _num(m, metric)

    return f


def omx2009_mq_targets() -> list[Target]:
    """SPEC §5 [OMX-MQ] targets (same hosts, Open-MX 0.9.2 + Open MPI 1.2.6)."""
    return [
        Target("SC 0 B latency (us)", 10.96, _sc_pingpong(0, False, "latency_us")),
        Target(
            "SC 4 MiB throughput (MiB/s)", 719.0, _sc_pingpong(4 << 20, False, "throughput_MiBps")
        ),
        Target("SC 4 MiB I/OAT (MiB/s)", 1056.0, _sc_pingpong(4 << 20, True, "throughput_MiBps")),
    ]


OMX2009_MQ_PARAMS = [
    FitParam("library", "mpi_send_ns"),
    FitParam("library", "mpi_recv_ns"),
    FitParam("cache", "copy_cold_MBps"),
    FitParam("host", "ioat_MBps"),
]

#: preset -> (targets, free parameters). The NAS totals are no target: the
#: skeletons' compute is NPB's work at the preset's CPU rates (SPEC §5).
Plan = tuple[Callable[[], list[Target]], list[FitParam]]
PLANS: dict[str, Plan] = {
    "omx2009": (lambda: omx2009_targets(), OMX2009_PARAMS),
    "omx2009-mq": (omx2009_mq_targets, OMX2009_MQ_PARAMS),
}


def _score(targets: list[Target], ov: Overrides) -> tuple[float, list[float]]:
    values = [t.measure(ov) for t in targets]
    err = sum(t.error(v) ** 2 for v, t in zip(values, targets, strict=True))
    return err, values


def _current(preset_text: str, p: FitParam) -> float:
    table = re.search(rf"^\[{p.table}\]$(.*?)(?=^\[|\Z)", preset_text, re.M | re.S)
    assert table is not None, p.table
    m = re.search(rf"^{p.key}\s*=\s*([0-9.eE+-]+)", table.group(1), re.M)
    assert m is not None, p.key
    return float(m.group(1))


def param_ranges(preset: str, params: list[FitParam]) -> dict[str, Range]:
    """Return each free parameter's range as the preset states it.

    Raises
    ------
    ValueError
        If a free parameter (or a key tied to it) has no range comment in
        the preset: a fit needs a physical range with a source for each.
    """
    stated = ranges(_core.preset_toml(preset))
    keys = [p.path for p in params] + [f"{t}.{k}" for p in params for t, k, _ in p.tied]
    missing = [key for key in keys if key not in stated]
    if missing:
        raise ValueError(
            f"{preset}: no '# [range TABLE.KEY LO .. HI shared|per-study] SOURCE' comment for "
            f"{', '.join(missing)} (every fitted parameter needs one; docs/presets.md)"
        )
    return {key: stated[key] for key in keys}


def misfits(preset: str, ov: Overrides) -> list[str]:
    """Describe every fitted value of ``ov`` that is not strictly inside its range.

    A value pinned at a bound is a misfit: the targets pull it past what the
    hardware allows, so something the model leaves out is being absorbed.
    """
    stated = ranges(_core.preset_toml(preset))
    out = []
    for table, values in ov.items():
        for key, value in values.items():
            r = stated.get(f"{table}.{key}")
            status = "no range" if r is None else r.status(value)
            if status != "inside":
                where = "" if r is None else f" {r} ({r.source})"
                out.append(f"misfit: {table}.{key} = {value:g} {status}{where}")
    return out


def fit(
    preset: str = _core.DEFAULT_PRESET,
    rounds: int = 2,
    log: Callable[[str], None] = print,
    start: dict[str, float] | None = None,
) -> tuple[Overrides, list[Target], list[float], list[float]]:
    """Fit the preset's free parameters; return overrides and the values before/after.

    Each parameter starts inside its range (a preset value outside it is
    moved to the nearest bound, and the log says so) and is searched only
    inside it; at the end the log names every value pinned at a bound as a
    misfit (:func:`misfits`).

    ``start`` maps ``"table.key"`` of free parameters to starting values other
    than the preset's (coordinate descent moves one parameter at a time, so a
    change of model can need a start near the new optimum).
    """
    start = dict(start or {})
    _PRESET[0] = preset
    text = _core.preset_toml(preset)
    make_targets, params = PLANS[preset]
    bounds = param_ranges(preset, params)
    targets = make_targets()
    ov: Overrides = {}
    for p in params:
        v = start.pop(p.path, None)
        v = _current(text, p) if v is None else v
        inside = bounds[p.path].clamp(v)
        if inside != v:
            log(f"{p.path} = {v:g} is outside its range {bounds[p.path]}: starting from {inside:g}")
        p.assign(ov, round(inside) if p.integer else float(round(inside)))
    if start:
        free = ", ".join(f"{p.table}.{p.key}" for p in params)
        unknown = ", ".join(start)
        raise ValueError(
            f"--start: {unknown} is not a free parameter of {preset} (allowed: {free})"
        )
    best, before = _score(targets, ov)
    log(f"start: error {best:.4f}")
    for r in range(rounds):
        for p in params:
            cur = ov[p.table][p.key]
            # Whole nanoseconds / whole lines: presets stay readable; an
            # integer parameter also tries its neighbours.
            factors = (0.5, 0.75, 0.9, 1.1, 1.25, 1.5)
            bound = bounds[p.path]
            cands: list[float] = [round(bound.clamp(cur * f)) for f in factors]
            if p.integer:
                cands += [cur - 1, cur + 1]
            for cand in dict.fromkeys(cands):
                if cand == cur or not bound.lo <= cand <= bound.hi:
                    continue
                trial = {t: dict(v) for t, v in ov.items()}
                p.assign(trial, cand)
                err, _ = _score(targets, trial)
                if err < best - 1e-9:
                    best, ov = err, trial
            log(f"round {r + 1}: {p.table}.{p.key} = {ov[p.table][p.key]:g} (error {best:.4f})")
    _, after = _score(targets, ov)
    for line in misfits(preset, ov):
        log(line)
    return ov, targets, before, after


def write_preset(preset: str, ov: Overrides, dest: Path) -> None:
    """Write a copy of the preset with the fitted values (comments kept)."""
    text = _core.preset_toml(preset)
    out, table = [], ""
    for line in text.splitlines():
        h = re.match(r"^\[(\w+)\]$", line)
        if h:
            table = h.group(1)
        m = re.match(r"^(\w+)(\s*=\s*)([0-9.eE+-]+)(.*)$", line)
        if m and m.group(1) in ov.get(table, {}):
            v = ov[table][m.group(1)]
            val = str(int(v)) if "." not in m.group(3) else f"{float(v):.1f}"
            line = f"{m.group(1)}{m.group(2)}{val}{m.group(4)}"
        out.append(line)
    dest.write_text("\n".join(out) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m nicsim.fit omx2009 [--rounds N] [--write FILE]``."""
    ap = argparse.ArgumentParser(prog="python -m nicsim.fit", description=__doc__.splitlines()[0])
    ap.add_argument("preset", choices=sorted(PLANS))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--write", type=Path)
    ap.add_argument(
        "--start",
        action="append",
        default=[],
        metavar="TABLE.KEY=VALUE",
        help="start a free parameter from VALUE instead of the preset's (repeatable)",
    )
    a = ap.parse_args(argv)
    start: dict[str, float] = {}
    for item in a.start:
        key, _, value = item.partition("=")
        try:
            start[key.strip()] = float(value)
        except ValueError:
            ap.error(
                f"--start: {item!r} is not TABLE.KEY=VALUE with a number "
                "(e.g. cache.same_socket_ns=70)"
            )
    try:
        ov, targets, before, after = fit(a.preset, a.rounds, start=start)
    except ValueError as e:
        ap.error(str(e))
    print(f"{'target':34} {'published':>10} {'before':>10} {'after':>10}")
    for t, b, f in zip(targets, before, after, strict=True):
        print(f"{t.name:34} {t.published:>10g} {b:>10.4g} {f:>10.4g}")
    for table, values in ov.items():
        for k, v in values.items():
            print(f"{table}.{k} = {v:g}")
    # The misfits themselves are in the fit's log above.
    pinned = misfits(a.preset, ov)
    print(f"{len(pinned)} misfit(s): fitted values at a bound of (or outside) their range")
    if a.write:
        write_preset(a.preset, ov, a.write)
        print(f"wrote {a.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
