"""How much the studies' predicted values and claims move with the seed.

A reproduction runs with one base seed (``nicsim reproduce --seed``); what
the seed drives is the jitter the scenarios draw (send-side gaps, the
order of mis-ordered fragments, NAS ranks' compute times) and through it
which frame a ring drop or a timer catches. A prediction is only worth
its digits if another seed gives the same value: this module runs the
experiments under several base seeds and reports, for every published
value an experiment reads off its table and every claim it checks, the
largest relative departure from the median over the seeds, and whether a
claim holds under every seed.

``python -m nicsim.studies.seeds [EXPERIMENT ...] --seeds 5 --out FILE``
writes the table (Markdown); :func:`spreads` is what the test of
``tests/test_seeds.py`` calls.
"""

from __future__ import annotations

import argparse
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
from nicsim.studies.report import markdown_table

#: The largest relative departure from the median over the seeds a value
#: may show and still count as stable (issue 46: "the same to within ±5 %
#: over 5 seeds").
STABLE = 0.05

#: The base seeds a stability check runs by default.
SEEDS = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Spread:
    """One published value or claim of an experiment over several seeds.

    ``values`` holds one simulated value per seed (``None``: that run could
    not measure it); ``holds`` one verdict per seed for a claim, and is
    empty for a value.
    """

    experiment: str
    kind: Literal["value", "claim"]
    name: str
    values: tuple[float | None, ...]
    holds: tuple[bool, ...] = ()

    @property
    def departure(self) -> float | None:
        """Largest ``|v / median - 1|`` over the seeds; ``None`` if a seed measured nothing.

        A median of 0 gives 0 when every value is 0 and infinity otherwise.

        Examples
        --------
        >>> Spread("e", "value", "q", (1.0, 1.02, 0.97)).departure
        0.03
        >>> Spread("e", "value", "q", (1.0, None)).departure is None
        True
        """
        if not self.values or any(v is None for v in self.values):
            return None
        values = [float(v) for v in self.values if v is not None]
        median = statistics.median(values)
        if median == 0:
            return 0.0 if all(v == 0 for v in values) else float("inf")
        return round(max(abs(v / median - 1.0) for v in values), 12)

    @property
    def stable(self) -> bool:
        """Within :data:`STABLE` of the median under every seed, and a claim's verdict the same.

        A value some seed could not measure is not stable: it cannot be
        shown to be.

        Examples
        --------
        >>> Spread("e", "claim", "c", (0.9, 0.91), (True, True)).stable
        True
        >>> Spread("e", "claim", "c", (0.99, 1.01), (True, False)).stable
        False
        """
        departure = self.departure
        if departure is None or departure > STABLE:
            return False
        return len(set(self.holds)) <= 1


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
            values = tuple(item.check(table).simulated for table in tables)
            out.append(Spread(exp_id, "value", item.quantity, values))
        for claim in experiment.claims:
            checked = [claim.check(table) for table in tables]
            values = tuple(None if c is None else float(c[0]) for c in checked)
            holds = tuple(c is not None and c[1] for c in checked)
            out.append(Spread(exp_id, "claim", claim.text, values, holds))
    return out


def run(
    exp_ids: Sequence[str], seeds: Sequence[int] = SEEDS, *, jobs: int | None = None
) -> list[Spread]:
    """Run ``exp_ids`` once per base seed and return their :func:`spreads`."""
    tables = [runner.run_experiments(exp_ids, jobs=jobs, seed=seed) for seed in seeds]
    return spreads(tables)


def render(rows: Sequence[Spread], seeds: Sequence[int]) -> str:
    """Write the Markdown report: the unstable rows first, then a count per experiment."""
    unstable = [r for r in rows if not r.stable]
    lines = [
        f"# Seed stability over base seeds {', '.join(map(str, seeds))}",
        "",
        f"{len(rows) - len(unstable)} of {len(rows)} published values and claims are within "
        f"{STABLE:.0%} of their median under every seed (a claim: and its verdict the same).",
        "",
    ]
    if unstable:
        header = ["experiment", "value or claim", "per seed", "departure", "holds per seed"]
        body = [
            [
                r.experiment,
                r.name,
                ", ".join("not measured" if v is None else f"{v:.6g}" for v in r.values),
                "n/a" if r.departure is None else f"{r.departure:.1%}",
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
    rows = run(ids, seeds, jobs=a.jobs)
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
