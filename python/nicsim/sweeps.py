"""Parameter sweeps of one scenario: the grid of some keys' values → a table.

This module owns expanding axes into configurations and assembling the
table; running is :func:`nicsim.runner.run_jobs` (local processes or Dask,
results placed by configuration index, so every executor gives identical
tables). Every configuration runs with the base scenario's seed (common
random numbers), so rows differ only by the swept keys. A sweep writes its
table only: a ``pcap`` (one run's frames) is refused, whether set in the
base scenario or swept (:func:`plan_sweep`).
"""

from __future__ import annotations

import copy
import difflib
import itertools
import math
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import tomli_w

from nicsim import runner
from nicsim._core import NicsimError
from nicsim.executor import Executor, LocalExecutor, default_jobs
from nicsim.scenario import SECTIONS, Scenario
from nicsim.store import Store

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_POINTS", "check_planned", "plan_sweep", "run_planned", "sweep"]


#: The most points a sweep's grid may have: the product of its axes'
#: lengths, refused above it before any point is planned. Every point is
#: planned (its scenario text kept until the table is made) and checked
#: before the first run, about 0.4 ms a point: 100,000 points take about
#: 40 s and 70 MiB before they run (a few per cent of their runs' time:
#: a run takes 10 ms and more).
MAX_POINTS = 100_000


def _check_distinct(key: str, values: Sequence[Any]) -> None:
    """Refuse an axis that lists a value twice (its rows would repeat), naming the value."""
    seen: set[str] = set()
    for value in values:
        try:
            text = tomli_w.dumps({"v": value})
        except (TypeError, ValueError):  # not TOML: the scenario check names it
            continue
        if text in seen:
            raise NicsimError(
                f"sweep axis {key!r}: value {value!r} is listed twice (each value is one row; "
                "give it once)"
            )
        seen.add(text)


def plan_sweep(base: Scenario, axes: Mapping[str, Sequence[Any]]) -> list[runner.Job]:
    """Expand ``axes`` (dotted key → values) into jobs, last axis fastest.

    Examples
    --------
    >>> base = Scenario(workload={"kind": "stream"})
    >>> jobs = plan_sweep(base, {"nic.delay_us": [0, 75], "workload.size_bytes": [0, 128]})
    >>> [tuple(j.params.values()) for j in jobs]
    [(0, 0), (0, 128), (75, 0), (75, 128)]
    """
    if not axes:
        raise NicsimError("sweep: no axis given (e.g. nic.delay_us=0,25,75)")
    _refuse_pcap(base, axes)
    for key, values in axes.items():
        if not isinstance(key, str):
            raise NicsimError(f"sweep axis {key!r}: expected a dotted key, e.g. 'nic.delay_us'")
        if len(values) == 0:
            raise NicsimError(f"sweep axis {key!r}: no values")
    for key in axes:
        inner = next((k for k in axes if k != key and k.startswith(f"{key}.")), None)
        if inner is not None:
            raise NicsimError(
                f"sweep axes {key!r} and {inner!r}: one sets the other (a key is swept by one axis)"
            )
    points = math.prod(len(values) for values in axes.values())
    if points > MAX_POINTS:
        sizes = " x ".join(f"{len(v):,} {k}" for k, v in axes.items())
        raise NicsimError(
            f"sweep grid of {points:,} points ({sizes}): more than the {MAX_POINTS:,} a sweep "
            f"runs (allowed: at most {MAX_POINTS:,} points; split it into several sweeps)"
        )
    for key, values in axes.items():
        _check_distinct(key, values)
    jobs = []
    names = list(axes)
    template = Scenario.from_dict(base.to_dict())
    # Each point copies only the tables its axes set; the others are the
    # template's, which no point changes.
    swept = sorted({key.partition(".")[0] for key in names} & set(SECTIONS))
    for index, combo in enumerate(itertools.product(*axes.values())):
        scenario = copy.copy(template)
        for head in swept:
            setattr(scenario, head, copy.deepcopy(getattr(template, head)))
        params = dict(zip(names, combo, strict=True))
        for key, value in params.items():
            scenario.set(key, value)
        jobs.append(runner.Job("sweep", index, params, scenario.to_toml()))
    return jobs


def _refuse_pcap(base: Scenario, axes: Mapping[str, Sequence[Any]]) -> None:
    """Refuse a ``pcap`` in a sweep: one file holds one run's frames, and a sweep makes many.

    Every point would write the same file (the last to finish winning), and
    a point taken from the results store would write none.
    """
    value = axes.get("pcap", base.pcap)
    if value is not None:
        raise NicsimError(
            f"sweep: pcap = {value!r}: a capture holds one run's frames and a sweep makes many "
            "runs; leave pcap out of the sweep and capture the configuration you want with "
            "`nicsim run --pcap FILE` (nicsim.run(..., pcap=FILE))"
        )


def check_planned(
    planned: Sequence[runner.Job],
    metrics: Sequence[str] | None,
    *,
    run_fn: runner.RunFn = runner.core_run,
) -> None:
    """Check every configuration of a sweep and the metric names, before any run.

    Each job's scenario is checked as the core checks it before a run
    (:func:`nicsim._core.check`), and each metric name against what a run of
    the job's workload reports (:func:`nicsim.metrics.reported`). Only for
    the compiled core (``run_fn`` :func:`~nicsim.runner.core_run`): another
    ``run_fn`` reports its own metrics and checks its own input.

    Raises
    ------
    NicsimError
        Naming the first configuration that would fail (``sweep[3]
        nic.delay_us=-5: ...``) or the metric and the configuration that does
        not report it.
    """
    if run_fn is not runner.core_run:
        return
    from nicsim import _core
    from nicsim import metrics as _metrics

    for job in planned:
        try:
            world = _core.check(job.toml)
        except NicsimError as err:
            raise NicsimError(f"{job.label}: {err}") from None
        if metrics:
            kind = str(tomllib.loads(job.toml).get("workload", {}).get("kind", ""))
            _metrics.check_names(metrics, world, kind, job.label)


def sweep(
    base: Scenario,
    axes: Mapping[str, Sequence[Any]],
    *,
    metrics: Sequence[str] | None = None,
    jobs: int | None = None,
    progress: bool = False,
    run_fn: runner.RunFn = runner.core_run,
) -> pd.DataFrame:
    """Run the grid of ``axes`` over ``base`` on local processes; one row per configuration.

    Parameters
    ----------
    base
        The scenario every configuration starts from.
    axes
        Dotted scenario key → values, e.g. ``{"nic.delay_us": [0, 25, 75]}``.
    metrics
        Metric columns to keep (default: all, in the core's order).
    jobs
        Worker processes (default: all usable cores; 1 = serial).
    progress
        Show a progress bar on stderr.
    run_fn
        Runs one scenario TOML (default: the compiled core).

    Returns
    -------
    pandas.DataFrame
        The axis columns (named by their dotted keys), then the metrics.

    Raises
    ------
    NicsimError
        Before any run, on an invalid key or value (naming the
        configuration), or a metric name a configuration does not report.
    """
    planned = plan_sweep(base, axes)
    check_planned(planned, metrics, run_fn=run_fn)
    return run_planned(
        planned,
        metrics=metrics,
        progress=progress,
        run_fn=run_fn,
        executor=LocalExecutor(default_jobs() if jobs is None else jobs),
    )


def run_planned(
    planned: Sequence[runner.Job],
    *,
    executor: Executor,
    metrics: Sequence[str] | None = None,
    progress: bool = False,
    run_fn: runner.RunFn = runner.core_run,
    store: Store | None = None,
) -> pd.DataFrame:
    """Run the jobs of :func:`plan_sweep` on ``executor`` and assemble the table.

    ``store`` is a results store to resume from and add to (see
    :func:`nicsim.runner.run_jobs`); the other arguments are as in :func:`sweep`.
    """
    import pandas as pd

    results = runner.run_jobs(
        planned,
        progress="sweep" if progress else None,
        run_fn=run_fn,
        executor=executor,
        store=store,
    )
    rows = []
    for job, result in zip(planned, results, strict=True):
        if metrics is not None:
            unknown = [m for m in metrics if m not in result]
            if unknown:
                close = difflib.get_close_matches(unknown[0], list(result), n=3)
                hint = f"; closest: {', '.join(map(repr, close))}" if close else ""
                raise NicsimError(
                    f"sweep metric {unknown[0]!r}: unknown to {job.label}, which reports "
                    f"{len(result)} metrics{hint}"
                )
            rows.append({**job.params, **{m: result[m] for m in metrics}})
        else:
            rows.append({**job.params, **result})
    return pd.DataFrame(rows)
