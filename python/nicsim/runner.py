"""Running experiments: configurations → scenarios → jobs → tables.

This module owns seeding, planning jobs and assembling result tables, and
the glue of a campaign: identical scenarios run once, jobs already in the
results store (:mod:`nicsim.store`) are skipped, the rest go to an executor
(:mod:`nicsim.executor`: local processes or Dask) longest first, and each
result is stored as it arrives. Results are placed by configuration index,
never by completion order, so every executor gives identical tables. It
knows nothing about individual experiments (:mod:`nicsim.studies.experiments`) or
output files (:mod:`nicsim.studies.report`); pandas is imported only to build a
table.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nicsim._core import DEFAULT_PRESET, SEED_LIMIT, NicsimError
from nicsim.executor import Executor, Outcome, RunFn, Task, choose, core_run, default_jobs
from nicsim.executor import scenario_cost as _cost
from nicsim.scenario import DEFAULT_SEED, Scenario, check_seed
from nicsim.store import Metrics, Store, job_key

if TYPE_CHECKING:
    import pandas as pd

    from nicsim.studies.experiments import Experiment, Params

__all__ = [
    "DEFAULT_PRESET",
    "DEFAULT_SEED",
    "Job",
    "RunFn",
    "core_run",
    "default_jobs",
    "derive_seed",
    "plan",
    "run_experiment",
    "run_experiments",
    "run_jobs",
    "table",
]

#: Derived seeds are kept below ``SEED_LIMIT`` (2**63, a TOML signed 64-bit integer).
SEED_BITS = SEED_LIMIT.bit_length() - 1


def derive_seed(base_seed: int, experiment_id: str, index: int) -> int:
    """Seed of one configuration, from (base seed, experiment id, row index).

    Uses SHA-256 rather than :func:`hash` so it is the same in every process,
    on every machine and across Python versions.

    Examples
    --------
    >>> derive_seed(1, "coalescing-msgrate", 0) == derive_seed(1, "coalescing-msgrate", 0)
    True
    >>> 0 <= derive_seed(1, "coalescing-msgrate", 3) < 2**63
    True
    """
    key = f"nicsim-seed-v1\0{base_seed}\0{experiment_id}\0{index}".encode()
    digest = hashlib.sha256(key).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


@dataclass(frozen=True)
class Job:
    """One configuration of one experiment, ready to run."""

    experiment: str
    index: int
    params: Params
    toml: str

    @property
    def label(self) -> str:
        """Human name for error messages, e.g. ``coalescing-msgrate[3] strategy=...``."""
        values = " ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.experiment}[{self.index}] {values}"


def plan(
    experiment: Experiment,
    *,
    quick: bool = False,
    preset: str | None = None,
    seed: int = DEFAULT_SEED,
) -> list[Job]:
    """Turn an experiment into its jobs, in table row order.

    A row's seed is :func:`derive_seed` of ``seed``, the experiment and the
    row's index, or the index of the first row that runs the same program
    when the experiment names the parameters choosing it
    (:attr:`~nicsim.studies.exp_base.Experiment.program`). A row the
    experiment runs several times
    (:attr:`~nicsim.studies.exp_base.Experiment.runs`) gives one job per run,
    all with the row's index: run 0 under that seed, run ``k`` under
    :func:`derive_seed` of ``seed``, the experiment's id with ``#k`` and the
    same index (so rows of one program share each run's seed too).
    """
    check_seed(seed)
    jobs: list[Job] = []
    # Rows that run one program (Experiment.program) share the seed of the
    # first of them; every other row is seeded by its own index.
    first: dict[tuple[object, ...], int] = {}
    for index, params in enumerate(experiment.configurations(quick)):
        scenario = Scenario.from_dict(experiment.scenario(params, quick))
        # The caller's preset wins; else the experiment's own platform; else the default.
        scenario.preset = preset or experiment.preset or DEFAULT_PRESET
        seed_index = index
        if experiment.program is not None:
            key = tuple(params[name] for name in experiment.program)
            seed_index = first.setdefault(key, index)
        runs = 1 if experiment.runs is None else experiment.runs(params)
        for run in range(runs):
            stream = experiment.id if run == 0 else f"{experiment.id}#{run}"
            scenario.seed = derive_seed(seed, stream, seed_index)
            jobs.append(Job(experiment.id, index, params, scenario.to_toml()))
    return jobs


def run_jobs(
    jobs: Sequence[Job],
    *,
    workers: int | None = None,
    progress: str | None = None,
    run_fn: RunFn = core_run,
    executor: Executor | None = None,
    store: Store | None = None,
) -> list[Metrics]:
    """Run jobs and return their metrics in the order of ``jobs``.

    Parameters
    ----------
    jobs
        What to run. Jobs with the same scenario run once.
    workers
        Local worker processes when no ``executor`` is given: ``None`` = as
        :func:`nicsim.executor.choose` decides (``NICSIM_SCHEDULER`` or all
        usable cores), ``1`` = serial in this process.
    progress
        Description of the progress bar on stderr, and notes (resumed jobs,
        the Dask dashboard); ``None`` is quiet.
    run_fn
        Runs one scenario; importable by name (it is pickled to workers).
    executor
        Where to run (default: from ``workers``). It is started only if
        some job is not in the store, and closed before returning.
    store
        Results of finished jobs: read to skip them, written as each ends.

    Raises
    ------
    NicsimError
        On a job's bad input, labelled with the job: with the compiled core,
        every job to run is checked before the first runs; an error found
        only while running stops the campaign (the jobs that finished are
        in the store).
    """
    from nicsim.progress import Reporter

    executor = executor if executor is not None else choose(jobs=workers)
    reporter = Reporter(progress)
    keys = [job_key(job.toml) for job in jobs]
    first: dict[str, Job] = {}
    for key, job in zip(keys, jobs, strict=True):
        first.setdefault(key, job)
    results: dict[str, Metrics] = {}
    if store is not None:
        for key in first:
            stored = store.get(key)
            if stored is not None:
                results[key] = stored
        if results:
            reporter.note(
                f"resuming: {len(results)} of {len(first)} runs already done "
                f"in {store.root} (--fresh runs them again)"
            )
    # Longest first; sorted() is stable, so equal estimates keep row order.
    todo = sorted(
        (
            Task(key, job.toml, job.label, _cost(job.toml))
            for key, job in first.items()
            if key not in results
        ),
        key=lambda task: -task.cost,
    )

    if run_fn is core_run:
        # Every run's input before the first run: a bad value in the last
        # configuration stops the campaign before it simulates the others.
        from nicsim import _core

        for task in todo:
            try:
                _core.check(task.toml)
            except NicsimError as err:
                raise NicsimError(f"{task.label}: {err}") from None

    def on_result(task: Task, outcome: Outcome) -> None:
        value = outcome[1]
        if isinstance(value, str):
            raise NicsimError(f"{task.label}: {value}")
        if store is not None:
            store.put(task.key, task.toml, value)
        results[task.key] = value
        reporter.advance()

    if todo:
        executor.start()
        try:
            for line in executor.notes():
                reporter.note(line)
            with reporter.bar(len(first), len(first) - len(todo)):
                executor.run(todo, run_fn, on_result)
        finally:
            executor.close()
    if store is not None:
        reporter.note(
            f"{len(todo)} run(s) simulated, {len(first) - len(todo)} reused from {store.root}"
        )
    return [results[key] for key in keys]


def table(experiment: Experiment, jobs: Sequence[Job], metrics: Sequence[Metrics]) -> pd.DataFrame:
    """Assemble the result table: parameter columns then metric columns."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    index: list[int] = []
    for job, result in zip(jobs, metrics, strict=True):
        # A metric the run did not measure is NaN (an empty cell), never a
        # number: what a derived column computes from it is NaN too.
        full: dict[str, Any] = {k: math.nan if v is None else v for k, v in result.items()}
        if experiment.model is not None:
            full.update(experiment.model(job.params, job.toml))
        if experiment.finish is not None:
            # finish sees every metric the core returned (it may derive columns).
            full = experiment.finish(job.params, full)
        missing = [m for m in experiment.metrics if m not in full]
        if missing:
            raise RuntimeError(
                f"{job.label}: core returned no {', '.join(missing)}; got {', '.join(full)}"
            )
        rows.append({**job.params, **{m: full[m] for m in experiment.metrics}})
        index.append(job.index)
    frame = pd.DataFrame(rows, columns=[*experiment.parameters, *experiment.metrics])
    if experiment.runs is not None:
        frame = _mean_of_runs(frame, index, experiment.metrics)
    return experiment.post(frame) if experiment.post is not None else frame


def _mean_of_runs(
    frame: pd.DataFrame, index: Sequence[int], metrics: Sequence[str]
) -> pd.DataFrame:
    """Collapse the runs of each configuration (rows of one ``index``) into one row of means.

    A run that did not measure a metric is left out of its mean (NaN when
    none did). The column ``runs`` counts the runs; ``<metric>_min`` and
    ``<metric>_max`` give their range, so the table shows the spread the
    mean hides.
    """
    grouped = frame.assign(_row=list(index)).groupby("_row", sort=False)
    first = grouped.first()
    out = first.drop(columns=list(metrics))
    for metric in metrics:
        values = grouped[metric]
        out[metric] = values.mean()
    out["runs"] = grouped.size()
    for metric in metrics:
        out[f"{metric}_min"] = grouped[metric].min()
        out[f"{metric}_max"] = grouped[metric].max()
    return out.reset_index(drop=True)


def run_experiments(
    exp_ids: Sequence[str],
    *,
    jobs: int | None = None,
    quick: bool = False,
    preset: str | None = None,
    seed: int = DEFAULT_SEED,
    progress: bool = False,
    run_fn: RunFn = core_run,
    executor: Executor | None = None,
    store: Store | None = None,
) -> dict[str, pd.DataFrame]:
    """Run several experiments as one campaign; tables keyed by id, in order.

    ``jobs``, ``executor`` and ``store`` are as in :func:`run_jobs`.
    """
    from nicsim.studies import experiments as _experiments

    chosen = [_experiments.get(exp_id) for exp_id in exp_ids]
    planned = [plan(e, quick=quick, preset=preset, seed=seed) for e in chosen]
    flat = [job for exp_jobs in planned for job in exp_jobs]
    label = f"nicsim {', '.join(exp_ids)}" if progress else None
    metrics = run_jobs(
        flat, workers=jobs, progress=label, run_fn=run_fn, executor=executor, store=store
    )
    tables: dict[str, pd.DataFrame] = {}
    start = 0
    for experiment, exp_jobs in zip(chosen, planned, strict=True):
        end = start + len(exp_jobs)
        tables[experiment.id] = table(experiment, exp_jobs, metrics[start:end])
        start = end
    return tables


def run_experiment(
    exp_id: str,
    *,
    jobs: int | None = None,
    quick: bool = False,
    preset: str | None = None,
    seed: int = DEFAULT_SEED,
    progress: bool = False,
    run_fn: RunFn = core_run,
    executor: Executor | None = None,
    store: Store | None = None,
) -> pd.DataFrame:
    """Run one experiment and return its table (see :func:`nicsim.run_experiment`)."""
    return run_experiments(
        [exp_id],
        jobs=jobs,
        quick=quick,
        preset=preset,
        seed=seed,
        progress=progress,
        run_fn=run_fn,
        executor=executor,
        store=store,
    )[exp_id]
