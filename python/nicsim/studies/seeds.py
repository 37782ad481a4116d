"""How much the studies' predicted values and claims move with the seed.

A reproduction runs with one base seed (``nicsim reproduce --seed``); what
the seed drives is the jitter the scenarios draw (send-side gaps, the
order of mis-ordered fragments, NAS ranks' compute times, the phase of
the hosts' kernel ticks) and through it which frame a ring drop or a
timer catches. A prediction is only worth its digits if another seed
gives the same value: this module runs the experiments under several base
seeds and judges, for every published value an experiment reads off its
table and every claim it checks, whether it is the same under every seed
(issue 46: "the same to within ±5 % over 5 seeds"). What "the same" means
depends on what the number is:

* A **value** the study prints (``Published`` with ``bound = "="``) is a
  prediction of that number: it is stable when no seed's value departs
  from the median over the seeds by more than :data:`STABLE` of the median.
  A percentage change (a study's "speedup", ``100 (a / b - 1)``, read by
  :class:`~nicsim.studies.exp_base.PercentAbove`) has no scale of its own
  near 0: its departure is measured against the larger of its median and
  the study's printed change, the number it is compared with (0.09 % and
  0.10 % against a printed -1.4 % are the same prediction).
* A **claim** (and a published bound, ``"<"`` or ``">"``, which is a claim
  the study states with a number) is a verdict: it is stable when its
  verdict is the same under every seed, and either its value keeps within
  :data:`STABLE` of the median as a value does, or no seed's value comes
  within :data:`STABLE` of the bound, measured relative to the bound
  (``|value - bound| / |bound|``; any non-zero distance for a bound of 0).
  A claim whose values move is then still stable if it holds (or fails)
  by a clear margin under every seed: "openmx comparable to timeout"
  (``|ratio - 1| < 0.02``) read as 0.001 under one seed and 0.004 under
  another moves by a factor of 4 but holds everywhere by more than 0.01.
  One that holds under every seed but by less than 5 % of its bound under
  some, while its values spread more than 5 %, is not stable: another
  seed may flip it.

A value or claim that some seed could not measure is not stable.

``python -m nicsim.studies.seeds [EXPERIMENT ...] --seeds 5 --out FILE``
writes the table (Markdown); :func:`spreads` is what the tests of
``tests/test_seeds.py`` and ``tests/test_seed_stability.py`` call.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd

from nicsim import outputs, runner
from nicsim._core import NicsimError
from nicsim.studies import experiments as _experiments
from nicsim.studies.exp_base import Claim, PercentAbove, Published
from nicsim.studies.report import markdown_table

#: The largest relative departure from the median over the seeds a value
#: may show and still count as stable, and the smallest distance of a
#: claim's value to its bound, relative to the bound, that keeps a claim
#: stable whatever its values' spread (issue 46: "the same to within ±5 %
#: over 5 seeds").
STABLE = 0.05

#: The base seeds a stability check runs by default.
SEEDS = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Spread:
    """One published value or claim of an experiment over several seeds.

    ``values`` holds one simulated value per seed (``None``: that run could
    not measure it). A claim, or a published bound, also has its ``bound``
    and one verdict per seed in ``holds``; a published value has neither. A
    percentage change has the study's value as its ``scale``.
    """

    experiment: str
    kind: Literal["value", "claim"]
    name: str
    values: tuple[float | None, ...]
    holds: tuple[bool, ...] = ()
    bound: float | None = None
    scale: float | None = None

    @property
    def departure(self) -> float | None:
        """Largest ``|v - median|`` over the seeds, relative to the median (or to ``scale``).

        ``None`` if a seed measured nothing. The reference is the larger of
        ``|median|`` and ``|scale|``; a reference of 0 gives 0 when every
        value is 0 and infinity otherwise.

        Examples
        --------
        >>> Spread("e", "value", "q", (1.0, 1.02, 0.97)).departure
        0.03
        >>> Spread("e", "value", "q", (1.0, None)).departure is None
        True
        >>> Spread("e", "value", "speedup %", (0.09, 0.10, 0.095), scale=-1.4).departure
        0.003571428571
        """
        values = self._measured()
        if values is None:
            return None
        median = statistics.median(values)
        reference = max(abs(median), abs(self.scale or 0.0))
        if reference == 0:
            return 0.0 if all(v == 0 for v in values) else math.inf
        return round(max(abs(v - median) for v in values) / reference, 12)

    @property
    def margin(self) -> float | None:
        """Smallest ``|v - bound| / |bound|`` over the seeds (``None``: no bound, or unmeasured).

        For a bound of 0 the distance has no scale: any non-zero value is
        infinitely far, a value of 0 is on the bound.

        Examples
        --------
        >>> Spread("e", "claim", "c", (0.001, 0.004), (True, True), 0.02).margin
        0.8
        >>> Spread("e", "claim", "c", (-3.0, 0.0), (True, True), 0.0).margin
        0.0
        """
        values = self._measured()
        if values is None or self.bound is None:
            return None
        if self.bound == 0:
            return 0.0 if any(v == 0 for v in values) else math.inf
        return round(min(abs(v - self.bound) / abs(self.bound) for v in values), 12)

    def _measured(self) -> list[float] | None:
        if not self.values or any(v is None for v in self.values):
            return None
        return [float(v) for v in self.values if v is not None]

    @property
    def stable(self) -> bool:
        """Whether this value or claim is the same under every seed (the module's rule).

        Examples
        --------
        >>> Spread("e", "claim", "c", (0.9, 0.91), (True, True), 1.0).stable
        True
        >>> Spread("e", "claim", "c", (0.99, 1.01), (True, False), 1.0).stable
        False
        >>> Spread("e", "claim", "c", (0.001, 0.008), (True, True), 0.02).stable
        True
        >>> Spread("e", "claim", "c", (0.97, 0.80), (True, True), 1.0).stable
        False
        """
        departure = self.departure
        if departure is None or len(set(self.holds)) > 1:
            return False
        if departure <= STABLE:
            return True
        margin = self.margin
        return margin is not None and margin >= STABLE


def item_name(item: Published | Claim) -> str:
    """Return the name a published value or claim goes by in the seed and estimate reports."""
    if isinstance(item, Claim):
        return item.text
    return item.quantity if item.bound == "=" else f"{item.quantity} {item.target}"


def names(exp_id: str) -> list[str]:
    """Return the names :func:`spreads` gives the values and claims of ``exp_id``, in order."""
    experiment = _experiments.get(exp_id)
    return [item_name(p) for p in experiment.published] + [item_name(c) for c in experiment.claims]


def spreads(tables_by_seed: Sequence[Mapping[str, pd.DataFrame]]) -> list[Spread]:
    """Every published value and claim of the experiments in all of ``tables_by_seed``.

    ``tables_by_seed`` holds one mapping of experiment id to table per seed
    (as :func:`nicsim.runner.run_experiments` returns); an experiment
    missing from any of them is left out.
    """
    if not tables_by_seed:
        return []
    ids = [i for i in tables_by_seed[0] if all(i in t for t in tables_by_seed)]
    out: list[Spread] = []
    for exp_id in ids:
        experiment = _experiments.get(exp_id)
        tables = [t[exp_id] for t in tables_by_seed]
        for item in experiment.published:
            checks = [item.check(table) for table in tables]
            values = tuple(c.simulated for c in checks)
            if item.bound == "=":
                scale = item.value if isinstance(item.simulated, PercentAbove) else None
                out.append(Spread(exp_id, "value", item_name(item), values, scale=scale))
            else:
                holds = tuple(bool(c.agrees) for c in checks)
                out.append(Spread(exp_id, "claim", item_name(item), values, holds, item.value))
        for claim in experiment.claims:
            checked = [claim.check(table) for table in tables]
            values = tuple(None if c is None else float(c[0]) for c in checked)
            holds = tuple(c is not None and c[1] for c in checked)
            out.append(Spread(exp_id, "claim", claim.text, values, holds, claim.bound))
    return out


def run(
    exp_ids: Sequence[str],
    seeds: Sequence[int] = SEEDS,
    *,
    jobs: int | None = None,
    quick: bool = False,
) -> list[Spread]:
    """Run ``exp_ids`` (``quick``: in quick mode) once per base seed; their :func:`spreads`."""
    tables = [runner.run_experiments(exp_ids, jobs=jobs, quick=quick, seed=seed) for seed in seeds]
    return spreads(tables)


#: The rule, as the report states it.
RULE = (
    f"A value is stable when every seed's value is within {STABLE:.0%} of the median over "
    "the seeds (a percentage change, such as a speedup: of the larger of the median and the "
    "study's printed change). A claim (or a bound the study states) is stable when its "
    "verdict is the "
    f"same under every seed and either its values are within {STABLE:.0%} of their median "
    f"or no seed's value comes within {STABLE:.0%} of the bound (distance relative to the "
    "bound; any non-zero distance for a bound of 0). A value or claim some seed could not "
    "measure is not stable."
)


def _percent(x: float | None) -> str:
    if x is None:
        return "n/a"
    return "inf" if math.isinf(x) else f"{x:.1%}"


def render(rows: Sequence[Spread], seeds: Sequence[int]) -> str:
    """Write the Markdown report: the rule, the unstable rows, then a count per experiment."""
    unstable = [r for r in rows if not r.stable]
    lines = [
        f"# Seed stability over base seeds {', '.join(map(str, seeds))}",
        "",
        f"{len(rows) - len(unstable)} of {len(rows)} published values and claims are stable.",
        "",
        RULE,
        "",
    ]
    if unstable:
        header = [
            "experiment",
            "value or claim",
            "per seed",
            "departure",
            "margin to bound",
            "holds per seed",
        ]
        body = [
            [
                r.experiment,
                r.name,
                ", ".join("not measured" if v is None else f"{v:.6g}" for v in r.values),
                _percent(r.departure),
                "-" if r.bound is None else _percent(r.margin),
                ", ".join("yes" if h else "no" for h in r.holds) or "-",
            ]
            for r in unstable
        ]
        lines += ["## Not stable", "", markdown_table(header, body), ""]
    counts: dict[str, list[int]] = {}
    for r in rows:
        c = counts.setdefault(r.experiment, [0, 0])
        c[0] += r.stable
        c[1] += 1
    lines += [
        "## Per experiment",
        "",
        markdown_table(["experiment", "stable"], [[e, f"{s}/{n}"] for e, (s, n) in counts.items()]),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m nicsim.studies.seeds [EXPERIMENT ...] --seeds N --out FILE``."""
    ap = argparse.ArgumentParser(
        prog="python -m nicsim.studies.seeds", description=__doc__.splitlines()[0]
    )
    ap.add_argument("experiments", nargs="*", default=["all"], help="experiment ids or groups")
    ap.add_argument("--seeds", type=int, default=len(SEEDS), help="base seeds 1..N (default 5)")
    ap.add_argument("--jobs", type=int, default=None, help="local worker processes")
    ap.add_argument("--quick", action="store_true", help="run the experiments' quick mode")
    ap.add_argument("--out", type=Path, default=None, help="Markdown file to write (else stdout)")
    a = ap.parse_args(argv)
    if not 2 <= a.seeds <= 100:
        ap.error(f"--seeds {a.seeds}: expected an integer 2 ..= 100")
    try:
        ids = _experiments.expand(a.experiments)
    except NicsimError as e:
        ap.error(str(e))
    if a.out is not None:
        try:
            outputs.check_file(a.out, "--out")
        except NicsimError as e:
            ap.error(str(e))
    seeds = list(range(1, a.seeds + 1))
    rows = run(ids, seeds, jobs=a.jobs, quick=a.quick)
    text = render(rows, seeds)
    if a.out is None:
        print(text)
    else:
        with outputs.atomic_file(a.out) as temp:
            temp.write_text(text + "\n")
        print(f"wrote {a.out}: {sum(r.stable for r in rows)} of {len(rows)} stable")
    return 0 if all(r.stable for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
