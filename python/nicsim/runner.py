"""Running experiments: configurations → scenarios → core runs → tables.

This module owns seeding, parallelism and assembling result tables. Results
are placed by configuration index, never by completion order, so serial and
parallel runs give identical tables. It knows nothing about individual
experiments (:mod:`nicsim.experiments`) or output files (:mod:`nicsim.report`).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pandas as pd
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from nicsim import experiments as _experiments
from nicsim._core import NicsimError
from nicsim.experiments import Experiment, Params
from nicsim.scenario import Scenario

__all__ = [
    "DEFAULT_PRESET",
    "DEFAULT_SEED",
    "Job",
    "RunFn",
    "derive_seed",
    "plan",
    "run_experiment",
    "run_experiments",
    "run_jobs",
]

#: Metrics of one core run.
Metrics = dict[str, float | int | str]
#: Runs one scenario TOML text. Must be a module-level function to run in a pool.
RunFn = Callable[[str], Metrics]

DEFAULT_PRESET = "omx2009"
DEFAULT_SEED = 1
#: Seeds are kept below 2**63 so they fit a TOML (signed 64-bit) integer.
SEED_BITS = 63


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
    """Turn an experiment into its jobs, in table row order."""
    jobs: list[Job] = []
    for index, params in enumerate(experiment.configurations(quick)):
        scenario = Scenario.from_dict(experiment.scenario(params, quick))
        # The caller's preset wins; else the experiment's own platform; else the default.
        scenario.preset = preset or experiment.preset or DEFAULT_PRESET
        scenario.seed = derive_seed(seed, experiment.id, index)
        jobs.append(Job(experiment.id, index, params, scenario.to_toml()))
    return jobs


def core_run(scenario_toml: str) -> Metrics:
    """Default :data:`RunFn`: the compiled core."""
    from nicsim import _core

    return _core.run(scenario_toml)


def default_jobs() -> int:
    """Return the default number of worker processes: the cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def run_jobs(
    jobs: Sequence[Job],
    *,
    workers: int | None = None,
    progress: str | None = None,
    run_fn: RunFn = core_run,
) -> list[Metrics]:
    """Run jobs and return their metrics in the order of ``jobs``.

    Parameters
    ----------
    jobs
        What to run.
    workers
        Worker processes; ``None`` = all usable cores, ``1`` = serial in this
        process.
    progress
        If given, show a progress bar on stderr with this description.
    run_fn
        Runs one scenario; a module-level function (it is pickled to workers).
    """
    workers = default_jobs() if workers is None else workers
    if workers < 1:
        raise NicsimError(f"jobs = {workers}: must be at least 1")
    results: list[Metrics | None] = [None] * len(jobs)
    with _progress_bar(progress, len(jobs)) as advance:
        if workers == 1 or len(jobs) <= 1:
            for i, job in enumerate(jobs):
                results[i] = _run_one(run_fn, job)
                advance()
        else:
            _run_pool(jobs, min(workers, len(jobs)), run_fn, results, advance)
    done = [r for r in results if r is not None]
    if len(done) != len(jobs):  # pragma: no cover - a pool bug, not user input
        raise RuntimeError(f"{len(jobs) - len(done)} job(s) returned no result")
    return done


def _run_one(run_fn: RunFn, job: Job) -> Metrics:
    try:
        return run_fn(job.toml)
    except NicsimError as err:
        raise NicsimError(f"{job.label}: {err}") from err


def _run_in_worker(run_fn: RunFn, job: Job) -> Metrics | str:
    """Run in a pool worker; a bad-input error comes back as its message.

    Returning the message (not raising) keeps the error independent of how
    the extension's exception class pickles.
    """
    try:
        return _run_one(run_fn, job)
    except NicsimError as err:
        return str(err)


def _run_pool(
    jobs: Sequence[Job],
    workers: int,
    run_fn: RunFn,
    results: list[Metrics | None],
    advance: Callable[[], None],
) -> None:
    # "spawn" (not fork): safe with the progress bar's thread, same on every OS.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_leave_sigint_to_parent
    ) as pool:
        futures: dict[Future[Metrics | str], int] = {
            pool.submit(_run_in_worker, run_fn, job): i for i, job in enumerate(jobs)
        }
        try:
            for future in as_completed(futures):
                result = future.result()
                if isinstance(result, str):
                    raise NicsimError(result)
                results[futures[future]] = result
                advance()
        except BaseException:
            # Ctrl-C or a failed job: end the jobs the workers hold now, not
            # after they finish (a job may run for minutes).
            _stop_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _leave_sigint_to_parent() -> None:
    """Ignore SIGINT in a pool worker: the parent alone handles Ctrl-C.

    A terminal sends it to the whole process group; the parent stops the
    workers (see :func:`_stop_workers`).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's worker processes (their results are not wanted)."""
    for process in list(pool._processes.values()):
        process.terminate()


@contextmanager
def _progress_bar(description: str | None, total: int) -> Iterator[Callable[[], None]]:
    """Yield an ``advance()`` callback; draws a rich bar on a terminal's stderr.

    Nothing is drawn without ``description``, or when stderr is not a
    terminal (a pipe or file gets no bar and no blank line).
    """
    console = Console(stderr=True)
    if description is None or total <= 1 or not console.is_terminal:
        yield lambda: None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    task = bar.add_task(description, total=total)
    with bar:
        yield lambda: bar.advance(task)


def table(experiment: Experiment, jobs: Sequence[Job], metrics: Sequence[Metrics]) -> pd.DataFrame:
    """Assemble the result table: parameter columns then metric columns."""
    rows: list[dict[str, Any]] = []
    for job, result in zip(jobs, metrics, strict=True):
        full: dict[str, Any] = dict(result)
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
    frame = pd.DataFrame(rows, columns=list(experiment.columns))
    return experiment.post(frame) if experiment.post is not None else frame


def run_experiments(
    exp_ids: Sequence[str],
    *,
    jobs: int | None = None,
    quick: bool = False,
    preset: str | None = None,
    seed: int = DEFAULT_SEED,
    progress: bool = False,
    run_fn: RunFn = core_run,
) -> dict[str, pd.DataFrame]:
    """Run several experiments in one worker pool; tables keyed by id, in order."""
    chosen = [_experiments.get(exp_id) for exp_id in exp_ids]
    planned = [plan(e, quick=quick, preset=preset, seed=seed) for e in chosen]
    flat = [job for exp_jobs in planned for job in exp_jobs]
    label = f"nicsim {', '.join(exp_ids)}" if progress else None
    metrics = run_jobs(flat, workers=jobs, progress=label, run_fn=run_fn)
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
    )[exp_id]
