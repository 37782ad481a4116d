"""The joint fit of the Open-MX hosts: its parameters, the two studies, the least squares.

:data:`SHARED` holds the hardware values ``omx2009`` and ``omx2009-mq``
share, :data:`STUDIES` each study's preset, targets
(:mod:`nicsim.studies.fit_targets`) and software costs; :func:`fit` fits
them in their ranges (:mod:`nicsim.studies.fitted`) with
:func:`scipy.optimize.least_squares` from several starts and returns each
parameter's value, standard error, profile and the targets that pin it, and
every start's end; :func:`write_preset` and
:func:`report` write and print the result. The command line is
:mod:`nicsim.studies.fit`; a fit on one study that predicts the other,
:mod:`nicsim.studies.holdout`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicsim import _core
from nicsim._core import NicsimError
from nicsim.studies.fit_targets import Overrides, Target, coal_targets, mq_targets
from nicsim.studies.fitted import Range, ranges

__all__ = [
    "SHARED",
    "STUDIES",
    "FitParam",
    "FitResult",
    "Overrides",
    "Study",
    "Target",
    "borrowed",
    "fit",
    "misfits",
    "param_ranges",
    "report",
    "write_preset",
]


@dataclass(frozen=True)
class FitParam:
    """A free parameter: preset table, key, and whether it is an integer.

    Its range is the preset's (``# [range TABLE.KEY LO .. HI ...]``, read by
    :mod:`nicsim.studies.fitted`): the fit searches only inside it.
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
        """Set this parameter (and the keys tied to it) in ``ov``, as the preset writes it."""
        ov.setdefault(self.table, {})[self.key] = (
            round(value) if self.integer else float(round(value))
        )
        for table, key, ratio in self.tied:
            ov.setdefault(table, {})[key] = float(round(value * ratio))


#: Estimated ratio of a socket-to-socket line transfer to a die-to-die one on
#: Clovertown + 5000P (150 / 110 ns: the extra hop through the MCH snoop
#: filter); the fit sets the scale, this keeps the ratio.
OTHER_SOCKET_RATIO = 150.0 / 110.0


# -- the parameters -------------------------------------------------------------

#: The hosts' values, one set for both presets (``shared`` ranges).
SHARED: list[FitParam] = [
    FitParam("host", "irq_entry_ns"),
    FitParam("host", "driver_rx_ns"),
    FitParam("host", "sleep_exit_ns"),
    FitParam("host", "ioat_MBps"),
    FitParam("nic", "irq_delivery_ns"),
    # The claim's way to the NIC keeps the receive interrupt masked after a
    # poll: it sets how alike round-robin and one core batch in the flood.
    FitParam("nic", "claim_latency_ns"),
    # The flood's binding saving is the cost of the one NAPI line that moves
    # between interrupt cores: it sets the scale of a line transfer; the
    # socket-to-socket cost keeps its estimated ratio to die-to-die.
    FitParam("cache", "same_socket_ns", tied=(("cache", "other_socket_ns", OTHER_SOCKET_RATIO),)),
    FitParam("cache", "copy_cold_MBps"),
    FitParam("cache", "tx_contention_lines", integer=True),
    # Open-MX small sends (33..128 B) copy their data into a malloc'd
    # retransmission buffer; tiny ones do not: the 0 B / 128 B rates.
    FitParam("library", "small_send_ns"),
]


@dataclass(frozen=True)
class Study:
    """A study's preset, its calibration targets and its own software costs."""

    key: str
    preset: str
    targets: Callable[[], list[Target]]
    #: ``per-study`` parameters this study's targets fit (its MPI layer).
    software: tuple[FitParam, ...] = ()
    #: ``per-study`` values no target of the study pins, taken from another
    #: study's fit (``table.key`` -> study key), as the preset says.
    borrowed: tuple[tuple[str, str], ...] = field(default=())


#: The MPI layer's cost per message, send and receive sides equal: one
#: latency (MPI against native) pins their sum, not the split.
MPI = FitParam("library", "mpi_send_ns", tied=(("library", "mpi_recv_ns", 1.0),))
#: The Open-MX library's cost per send, and per event in the estimated ratio
#: 250:300: the version's own (1.0.901 against 0.9.2).
OMX_LIBRARY = FitParam("library", "send_ns", tied=(("library", "event_ns", 250.0 / 300.0),))

STUDIES: dict[str, Study] = {
    "omx-coal": Study(
        "omx-coal",
        "omx2009",
        coal_targets,
        software=(OMX_LIBRARY,),
        # [OMX-COAL]'s micro-benchmarks are native Open-MX: no target measures
        # Open MPI 1.3.0, whose costs its NAS runs take from [OMX-MQ]'s fit.
        borrowed=(("library.mpi_send_ns", "omx-mq"), ("library.mpi_recv_ns", "omx-mq")),
    ),
    "omx-mq": Study("omx-mq", "omx2009-mq", mq_targets, software=(OMX_LIBRARY, MPI)),
}


def param_ranges(preset: str, params: Sequence[FitParam]) -> dict[str, Range]:
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


def _current(preset_text: str, p: FitParam) -> float:
    table = re.search(rf"^\[{p.table}\]$(.*?)(?=^\[|\Z)", preset_text, re.M | re.S)
    assert table is not None, p.table
    m = re.search(rf"^{p.key}\s*=\s*([0-9.eE+-]+)", table.group(1), re.M)
    assert m is not None, p.key
    return float(m.group(1))


# -- the fit -------------------------------------------------------------------


@dataclass(frozen=True)
class Pinning:
    """A fitted parameter's value, standard error and the targets that pin it."""

    param: str
    value: float
    range: Range
    stderr: float
    #: Target names, most sensitive first (at most three).
    pinned_by: tuple[str, ...]
    #: The values around the fitted one, the others held, over which the
    #: error stays within one residual variance of the best
    #: (:data:`PROFILE_STEPS`); ``None`` when not profiled.
    profile: tuple[float, float] | None = None


#: Steps of the profile, as shares of each range, tried on both sides of a
#: fitted value: from below the fit's rounding to ten times its
#: finite-difference step.
PROFILE_STEPS = (0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2)


@dataclass(frozen=True)
class FitResult:
    """What :func:`fit` found: per-preset overrides, targets, values, pinning."""

    #: preset -> overrides (shared values and its own software costs).
    overrides: dict[str, Overrides]
    #: (study key, target, value before, value after), in study order.
    targets: list[tuple[str, Target, float, float]]
    pinning: list[Pinning]
    cost_before: float
    cost_after: float
    log: list[str] = field(default_factory=list)
    #: Each start's error and parameter values, in the order run.
    starts: list[tuple[float, list[float]]] = field(default_factory=list)


def _threads() -> int:
    """Return how many runs to evaluate at once (the core releases the GIL while it runs)."""
    import os

    return max(1, min(4, os.cpu_count() or 1))


class _Problem:
    """The residual function over the chosen studies, in range-normalised units.

    ``x[i]`` in ``[0, 1]`` maps linearly onto parameter ``i``'s range, so one
    finite-difference step is the same share of every range.
    """

    #: Forward-difference step, as a share of each range: wide enough to
    #: cross the whole-nanosecond rounding and whole-line integers.
    STEP = 0.02

    def __init__(self, studies: Sequence[Study], start_mid: bool) -> None:
        #: Start from the middle of each range, not the presets' values.
        self.start_mid = start_mid
        self.studies = list(studies)
        self.params: list[FitParam] = list(SHARED) + [p for s in self.studies for p in s.software]
        self.owner: list[Study | None] = [None] * len(SHARED) + [
            s for s in self.studies for _ in s.software
        ]
        base = self.studies[0].preset
        bounds = param_ranges(base, SHARED)
        for s in self.studies:
            own = param_ranges(s.preset, list(SHARED) + list(s.software))
            for p in SHARED:
                if (own[p.path].lo, own[p.path].hi) != (bounds[p.path].lo, bounds[p.path].hi):
                    raise ValueError(
                        f"{p.path}: {s.preset} states the range {own[p.path]}, {base} "
                        f"{bounds[p.path]}: a shared value has one range"
                    )
            bounds.update(own)
        self.ranges = [bounds[p.path] for p in self.params]
        self.targets = [(s, t) for s in self.studies for t in s.targets()]
        text = {s.preset: _core.preset_toml(s.preset) for s in self.studies}
        x0 = []
        for p, owner, r in zip(self.params, self.owner, self.ranges, strict=True):
            preset = (owner or self.studies[0]).preset
            v = (r.lo + r.hi) / 2 if start_mid else r.clamp(_current(text[preset], p))
            x0.append((v - r.lo) / (r.hi - r.lo))
        self.x0 = x0

    def values(self, x: Sequence[float]) -> list[float]:
        """Parameter values (as the presets write them) of normalised ``x``."""
        out = []
        for r, xi in zip(self.ranges, x, strict=True):
            v = r.lo + min(1.0, max(0.0, xi)) * (r.hi - r.lo)
            out.append(float(round(v)))
        return out

    def overrides(self, x: Sequence[float]) -> dict[str, Overrides]:
        """Return preset -> overrides for the runs at ``x``."""
        vals = self.values(x)
        out: dict[str, Overrides] = {}
        for s in self.studies:
            ov: Overrides = {}
            for p, owner, v in zip(self.params, self.owner, vals, strict=True):
                if owner is None or owner is s:
                    p.assign(ov, v)
            out[s.preset] = ov
        return out

    def measure(self, x: Sequence[float]) -> list[float]:
        ovs = self.overrides(x)
        return [t.measure(s.preset, ovs[s.preset]) for s, t in self.targets]

    def residuals(self, measured: Sequence[float]) -> list[float]:
        return [t.error(v) for (_, t), v in zip(self.targets, measured, strict=True)]

    def columns(self, x: Sequence[float]) -> list[list[float]]:
        """Each parameter stepped once (backwards at the top of its range)."""
        steps = []
        for i, xi in enumerate(x):
            h = self.STEP if xi + self.STEP <= 1.0 else -self.STEP
            xs = list(x)
            xs[i] = xi + h
            steps.append((xs, h))
        with ThreadPoolExecutor(_threads()) as pool:
            measured = list(pool.map(lambda xh: self.measure(xh[0]), steps))
        return [self.residuals(m) for m in measured]


def fit(
    studies: Sequence[str] = tuple(STUDIES),
    *,
    start_mid: bool = False,
    starts: int = 4,
    max_evals: int = 30,
    profile: bool = True,
    log: Callable[[str], None] = print,
) -> FitResult:
    """Fit the shared hardware and the studies' software to their targets jointly.

    ``studies`` are keys of :data:`STUDIES`; ``start_mid`` starts every
    parameter from the middle of its range instead of the presets' values.
    The targets' error is not convex in the parameters (a longer interrupt
    latency batches frames, which changes what every interrupt costs per
    frame), so the fit runs from ``starts`` points, the first as above and
    the others drawn in the ranges by a fixed seed, and keeps the best.
    ``max_evals`` bounds the residual evaluations of each start.

    Each parameter's standard error is the linear one, from the Jacobian at
    the optimum; the targets are not smooth in the parameters (a frame more
    or less per interrupt is a step), so ``profile`` also moves each
    parameter alone from its fitted value and reports the values over which
    the error stays within one residual variance of the best
    (:attr:`Pinning.profile`).
    """
    import numpy as np
    from scipy.optimize import least_squares

    for name, value in (("starts", starts), ("max_evals", max_evals)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise NicsimError(f"{name} = {value!r}: expected a whole number, at least 1")
    unknown = [s for s in studies if s not in STUDIES]
    if unknown:
        raise ValueError(f"unknown study {unknown[0]!r} (allowed: {', '.join(STUDIES)})")
    prob = _Problem([STUDIES[s] for s in studies], start_mid)
    lines: list[str] = []

    def say(msg: str) -> None:
        lines.append(msg)
        log(msg)

    cache: dict[tuple[float, ...], list[float]] = {}

    def res(x: Any) -> Any:
        key = tuple(prob.values(x))
        if key not in cache:
            cache[key] = prob.measure(x)
        return np.array(prob.residuals(cache[key]))

    def jac(x: Any) -> Any:
        base = res(x)
        cols = prob.columns(list(x))
        j = np.zeros((len(base), len(cols)))
        for i, col in enumerate(cols):
            h = prob.STEP if x[i] + prob.STEP <= 1.0 else -prob.STEP
            j[:, i] = (np.array(col) - base) / h
        return j

    x0 = np.array(prob.x0)
    before = prob.measure(prob.x0)
    cost0 = float(sum(e * e for e in prob.residuals(before)))
    say(f"start: error {cost0:.4f} ({', '.join(s.key for s in prob.studies)})")
    rng = np.random.default_rng(1)
    points = [x0] + [rng.uniform(0.1, 0.9, len(x0)) for _ in range(max(0, starts - 1))]
    best: tuple[float, Any] | None = None
    ends: list[tuple[float, list[float]]] = []
    for k, start in enumerate(points):
        x, nfev, cost = start, 0, math.inf
        # Restarted from where it stopped while that still gains: rounding
        # to whole nanoseconds makes small trust regions look flat.
        for _ in range(3):
            sol = least_squares(
                res, x, jac=jac, bounds=(0.0, 1.0), method="trf", x_scale="jac", max_nfev=max_evals
            )
            nfev += sol.nfev
            new = float(np.sum(res(sol.x) ** 2))
            if new >= cost - 1e-6:
                break
            x, cost = sol.x, new
        say(f"start {k + 1}/{len(points)}: error {cost:.4f} after {nfev} evaluations")
        ends.append((cost, prob.values(list(x))))
        if best is None or cost < best[0] - 1e-12:
            best = (cost, x)
    assert best is not None
    x = best[1]
    after = prob.measure(x)
    cost1 = float(sum(e * e for e in prob.residuals(after)))
    say(f"end: error {cost1:.4f}")
    # Standard errors: the covariance (J^T J)^-1 s^2 with s^2 the residual
    # variance; a parameter no target moves has none (inf).
    j = jac(x)
    dof = max(1, len(after) - len(x))
    s2 = cost1 / dof
    jtj = j.T @ j
    cov = np.linalg.pinv(jtj) * s2
    pinning = []
    vals = prob.values(x)
    for i, (p, r, owner) in enumerate(zip(prob.params, prob.ranges, prob.owner, strict=True)):
        col = np.abs(j[:, i])
        se = math.inf if not col.any() else float(math.sqrt(max(cov[i, i], 0.0))) * (r.hi - r.lo)
        order = [k for k in np.argsort(-col) if col[k] > 0][:3]
        names = tuple(prob.targets[k][1].name for k in order)
        label = p.path if owner is None else f"{p.path} ({owner.preset})"
        span = _profile(prob, list(x), i, cost1 + s2) if profile else None
        pinning.append(Pinning(label, vals[i], r, se, names, span))
    targets = [(s.key, t, b, a) for (s, t), b, a in zip(prob.targets, before, after, strict=True)]
    ovs = prob.overrides(x)
    for preset, ov in ovs.items():
        for line in misfits(preset, ov):
            say(f"{preset}: {line}")
    return FitResult(ovs, targets, pinning, cost0, cost1, lines, ends)


def _cost(prob: _Problem, x: list[float]) -> float:
    return float(sum(e * e for e in prob.residuals(prob.measure(x))))


def _profile(prob: _Problem, x: list[float], i: int, limit: float) -> tuple[float, float]:
    """Return the span of parameter ``i`` around ``x[i]`` whose error stays within ``limit``.

    The other parameters are held at ``x``. Each side is walked outwards
    through :data:`PROFILE_STEPS` and stops at the first step over the
    limit or at the range's bound.
    """
    trial = {}
    for sign in (-1.0, 1.0):
        for d in PROFILE_STEPS:
            xi = min(1.0, max(0.0, x[i] + sign * d))
            xs = list(x)
            xs[i] = xi
            trial[(sign, d)] = xs
    keys = list(trial)
    with ThreadPoolExecutor(_threads()) as pool:
        costs = list(pool.map(lambda k: _cost(prob, trial[k]), keys))
    cost = dict(zip(keys, costs, strict=True))
    here = prob.values(x)[i]
    span = [here, here]
    for side, sign in enumerate((-1.0, 1.0)):
        for d in PROFILE_STEPS:
            if cost[(sign, d)] > limit:
                break
            span[side] = prob.values(trial[(sign, d)])[i]
    return span[0], span[1]


def borrowed(result: FitResult) -> dict[str, Overrides]:
    """Each study's borrowed software values (:attr:`Study.borrowed`) from ``result``."""
    out: dict[str, Overrides] = {}
    for s in STUDIES.values():
        for path, source in s.borrowed:
            src = STUDIES[source].preset
            table, key = path.split(".")
            if src in result.overrides and key in result.overrides[src].get(table, {}):
                value = result.overrides[src][table][key]
                out.setdefault(s.preset, {}).setdefault(table, {})[key] = value
    return out


def write_preset(preset: str, ov: Overrides, dest: Path) -> None:
    """Write a copy of the preset with the values of ``ov`` (comments kept)."""
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


def report(result: FitResult) -> str:
    """Return the fit's targets and parameters as plain text tables."""
    out = [f"{'study':9} {'target':36} {'published':>10} {'before':>10} {'after':>10}"]
    for study, t, b, a in result.targets:
        out.append(f"{study:9} {t.name:36} {t.published:>10g} {b:>10.4g} {a:>10.4g}")
    out.append("")
    out.append(
        f"{'parameter':32} {'value':>7} {'± s.e.':>9} {'profile':>15}  {'range':14} pinned by"
    )
    for p in result.pinning:
        se = "-" if math.isinf(p.stderr) else f"{p.stderr:.3g}"
        span = "-" if p.profile is None else f"{p.profile[0]:g} .. {p.profile[1]:g}"
        out.append(
            f"{p.param:32} {p.value:>7g} {se:>9} {span:>15}  {p.range!s:14} "
            f"{'; '.join(p.pinned_by) or '-'}"
        )
    if result.starts:
        best = min(c for c, _ in result.starts)
        near = sum(1 for c, _ in result.starts if c <= 1.1 * best)
        out.append("")
        out.append(
            f"starts: {near} of {len(result.starts)} end within 10 % of the best error; "
            "each start's error and values (in the order of the parameters above):"
        )
        for k, (c, vals) in enumerate(result.starts):
            out.append(f"  {k + 1}: {c:.4f}  " + " ".join(f"{v:g}" for v in vals))
    return "\n".join(out)
