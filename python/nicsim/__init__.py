"""nicsim: a fast, deterministic simulator of NIC-assisted message passing.

The public Python API. Scenarios are run by the compiled Rust core
(``nicsim._core``); this package builds scenarios, runs experiment sweeps in
parallel and writes tables, plots and reports.

Examples
--------
>>> import nicsim
>>> "omx2009" in nicsim.presets()
True
>>> m = nicsim.run({"workload": {"kind": "pingpong", "iterations": 50, "warmup": 5}})
>>> m["latency_us"] > 0
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from nicsim import _core, report, runner
from nicsim import experiments as _experiments
from nicsim._core import NicsimError
from nicsim.policy import CoalescingPolicy
from nicsim.scenario import Scenario

__all__ = [
    "NicsimError",
    "Scenario",
    "__version__",
    "preset_toml",
    "presets",
    "reproduce",
    "run",
    "run_experiment",
    "sweep",
]

__version__: str = _core.version()


def _as_scenario(scenario: Scenario | Mapping[str, Any] | str | Path) -> Scenario:
    if isinstance(scenario, Scenario):
        return Scenario.from_dict(scenario.to_dict())
    if isinstance(scenario, Path):
        return Scenario.load(scenario)
    if isinstance(scenario, str):
        path = Path(scenario)
        if scenario.endswith(".toml") and "\n" not in scenario and path.is_file():
            return Scenario.load(path)
        return Scenario.from_toml(scenario)
    return Scenario.from_dict(scenario)


def run(
    scenario: Scenario | Mapping[str, Any] | str | Path,
    *,
    policy: Callable[[], CoalescingPolicy] | None = None,
    progress: Callable[[int, int], object] | None = None,
    **overrides: Any,
) -> dict[str, float | int | str]:
    """Run one scenario and return its metrics.

    Parameters
    ----------
    scenario
        A :class:`Scenario`, a dict shaped like the scenario TOML file, TOML
        text, or the path of a ``.toml`` scenario file.
    **overrides
        Keys to set before running: a top-level key (``seed=3``), a section
        merged into the scenario (``nic={"coalescing": "openmx"}``), or a
        dotted path written with ``__`` (``nic__delay_us=0``).
    policy
        A coalescing policy written in Python (see :mod:`nicsim.policy`):
        called once per receive queue to make that queue's policy, which
        replaces ``nic.coalescing``.
    progress
        Called as ``progress(sim_time_ps, events)`` about 20 times per
        second while the run lasts (not at all for a run shorter than
        50 ms); an exception it raises stops the run and is raised here.

    Returns
    -------
    dict
        ``latency_us``, ``throughput_MiBps``, ``msg_rate_per_s``,
        ``interrupts``, ``interrupts_per_msg``, ``overhead_ns_per_packet``,
        ``sim_time_us``, ``events``, ``frames``, ``dropped`` and extra
        counters.

    Raises
    ------
    NicsimError
        If the scenario is invalid (unknown key, bad value, ...).
    KeyboardInterrupt
        On Ctrl-C (SIGINT) during the run: the core looks for pending
        signals a few times per second and stops.

    Examples
    --------
    >>> base = {"workload": {"kind": "stream", "size_bytes": 0, "messages": 500}}
    >>> fast = run(base, nic__coalescing="openmx")
    >>> slow = run(base, nic={"coalescing": "disabled"})
    >>> fast["msg_rate_per_s"] > 0 and slow["interrupts"] > 0
    True
    >>> run(base, nic__colour="red")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: nic.colour: unknown key
    """
    built = _as_scenario(scenario).update(overrides)
    if policy is not None:
        return _core.run_policy(built.to_toml(), policy, progress)
    return _core.run(built.to_toml(), progress)


def sweep(
    scenario: Scenario | Mapping[str, Any] | str | Path,
    axes: Mapping[str, Iterable[Any]],
    *,
    metrics: Iterable[str] | None = None,
    jobs: int | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run a grid of values of some scenario keys; one table row per configuration.

    Parameters
    ----------
    scenario
        The base scenario (as for :func:`run`).
    axes
        Dotted key → values; the grid is their product, last axis fastest.
    metrics
        Metric columns to keep (default: all).
    jobs
        Worker processes (default: all usable cores; the table is the same).
    progress
        Show a progress bar on stderr.

    Returns
    -------
    pandas.DataFrame
        One column per axis (named by its key), then the metrics.

    Examples
    --------
    >>> base = {"workload": {"kind": "stream", "messages": 300}}
    >>> axes = {"nic.coalescing": ["disabled", "openmx"]}
    >>> t = sweep(base, axes, metrics=["interrupts_per_msg"], jobs=1)
    >>> bool(t["interrupts_per_msg"].iloc[0] > t["interrupts_per_msg"].iloc[1])
    True
    """
    from nicsim import sweeps as _sweep

    return _sweep.sweep(
        _as_scenario(scenario),
        {key: list(values) for key, values in axes.items()},
        metrics=None if metrics is None else list(metrics),
        jobs=jobs,
        progress=progress,
    )


def presets() -> list[str]:
    """Names of the embedded platform presets.

    Examples
    --------
    >>> "omx2009" in presets()
    True
    """
    return _core.presets()


def preset_toml(name: str) -> str:
    """Return the TOML text of an embedded preset (with comments and sources).

    Copy it, edit it and pass the file path as ``preset`` to use your own.

    Examples
    --------
    >>> "[" in preset_toml("omx2009")
    True
    """
    return _core.preset_toml(name)


def run_experiment(
    exp_id: str,
    jobs: int | None = None,
    quick: bool = False,
    preset: str | None = None,
    *,
    seed: int = runner.DEFAULT_SEED,
) -> pd.DataFrame:
    """Run one SPEC §4 experiment and return its table.

    Parameters
    ----------
    exp_id
        Experiment id, e.g. ``"coalescing-msgrate"`` (see
        ``nicsim.experiments.EXPERIMENTS``).
    jobs
        Worker processes; ``None`` = all usable cores, ``1`` = serial.
    quick
        Fewer iterations/messages per configuration (same rows).
    preset
        Preset name or file; default ``"omx2009"``.
    seed
        Base seed; each row's seed is derived from (seed, id, row index).

    Returns
    -------
    pandas.DataFrame
        One row per configuration: parameter columns then metric columns.

    Examples
    --------
    >>> t = run_experiment("coalescing-irq-overhead", jobs=1, quick=True)
    >>> list(t.columns)
    ['strategy', 'irq_binding', 'overhead_ns_per_packet']
    """
    return runner.run_experiment(exp_id, jobs=jobs, quick=quick, preset=preset, seed=seed)


def reproduce(
    experiments: Iterable[str],
    out_dir: str | Path,
    jobs: int | None = None,
    quick: bool = False,
    *,
    preset: str | None = None,
    seed: int = runner.DEFAULT_SEED,
    progress: bool = False,
) -> dict[str, pd.DataFrame]:
    """Run experiments (ids or groups such as ``"omx-coal"``) and write a report.

    Writes ``<out_dir>/<exp>.csv``, ``.parquet`` and ``.png`` per experiment
    and ``<out_dir>/report.md`` comparing simulated with published values.

    Parameters
    ----------
    experiments
        Experiment ids and/or group names (``nicsim.experiments.GROUPS``).
    out_dir
        Output directory (created if missing).
    jobs, quick, preset, seed
        As in :func:`run_experiment`.
    progress
        Show a progress bar on stderr.

    Returns
    -------
    dict of str to pandas.DataFrame
        The tables, keyed by experiment id in run order.
    """
    ids = _experiments.expand(experiments)
    tables = runner.run_experiments(
        ids, jobs=jobs, quick=quick, preset=preset, seed=seed, progress=progress
    )
    provenance = report.Provenance(
        nicsim_version=__version__,
        preset=preset or runner.DEFAULT_PRESET,
        seed=seed,
        quick=quick,
    )
    report.write_report(tables, Path(out_dir), provenance)
    return tables
