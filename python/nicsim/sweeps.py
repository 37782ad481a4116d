"""Parameter sweeps of one scenario: the grid of some keys' values → a table.

This module owns expanding axes into configurations and assembling the
table; running is :func:`nicsim.runner.run_jobs` (local processes or Dask,
results placed by configuration index, so every executor gives identical
tables). Every configuration runs with the base scenario's seed (common
random numbers), so rows differ only by the swept keys.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nicsim import runner
from nicsim._core import NicsimError
from nicsim.executor import Executor, LocalExecutor, default_jobs
from nicsim.scenario import Scenario
from nicsim.store import Store

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["plan_sweep", "run_planned", "sweep"]


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
    for key, values in axes.items():
        if len(values) == 0:
            raise NicsimError(f"sweep axis {key!r}: no values")
    jobs = []
    names = list(axes)
    for index, combo in enumerate(itertools.product(*axes.values())):
        scenario = Scenario.from_dict(base.to_dict())
        params = dict(zip(names, combo, strict=True))
        for key, value in params.items():
            scenario.set(key, value)
        jobs.append(runner.Job("sweep", index, params, scenario.to_toml()))
    return jobs


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
        On an invalid key or value (naming the configuration), or an unknown
        metric name.
    """
    return run_planned(
        plan_sweep(base, axes),
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
                allowed = ", ".join(sorted(result))
                raise NicsimError(f"sweep metric {unknown[0]!r}: unknown (allowed: {allowed})")
            result = {m: result[m] for m in metrics}
        rows.append({**job.params, **result})
    return pd.DataFrame(rows)
