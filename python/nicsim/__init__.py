"""nicsim: a fast, deterministic simulator of NIC-assisted message passing.

The public Python API. Scenarios are run by the compiled Rust core
(``nicsim._core``); this package builds scenarios, runs sweeps and
experiments on local processes or a Dask cluster, and writes tables, plots
and reports. Importing it loads neither pandas nor matplotlib: the modules
that need them are imported when a table or plot is made.

The modules of this package are the library. Above it, and loaded only
when used: the ``nicsim`` command line (:mod:`nicsim.cli`) and the
reproduction of the published studies (:mod:`nicsim.studies`: experiments,
figures, calibrations, validation), which :func:`run_experiment` and
:func:`reproduce` run.

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

# First, before any other import: Ctrl-C while the ``nicsim`` command loads
# ends it with one line, not a traceback (see nicsim._launch).
from nicsim import _launch  # noqa: F401  # isort: skip

import importlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nicsim import _core
from nicsim._core import NicsimError
from nicsim.scenario import DEFAULT_SEED, Scenario

if TYPE_CHECKING:
    import pandas as pd

    from nicsim.capture import Capture, ReplayResult
    from nicsim.metrics import Metrics
    from nicsim.policy import CoalescingPolicy

__all__ = [
    "NicsimError",
    "Scenario",
    "__version__",
    "preset_toml",
    "presets",
    "replay",
    "reproduce",
    "run",
    "run_experiment",
    "sweep",
]

__version__: str = _core.version()
#: Submodules loaded on first use as attributes (``nicsim.model.evaluate``).
_SUBMODULES = frozenset(
    {"bench", "capture", "cli", "executor", "keys", "metrics", "model", "outputs", "policy",
     "progress", "runner", "scenario", "store", "studies", "sweeps", "trace"}
)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"nicsim.{name}")
    raise AttributeError(f"module 'nicsim' has no attribute {name!r}")


def __dir__() -> list[str]:
    """List the public API (``__all__``), the submodules and the module's own dunders.

    Not the names this module imports for itself (``Any``, ``Path``, ``os``...).
    """
    dunders = (name for name in globals() if name.startswith("__") and name.endswith("__"))
    return sorted({*__all__, *_SUBMODULES, *dunders})


def _is_path(scenario: str | Path) -> bool:
    """Whether :func:`_as_scenario` reads ``scenario`` as the path of a file."""
    return isinstance(scenario, Path) or (scenario.endswith(".toml") and "\n" not in scenario)


def _as_scenario(scenario: Scenario | Mapping[str, Any] | str | Path) -> Scenario:
    if not isinstance(scenario, Scenario | Mapping | str | Path):
        raise NicsimError(
            f"scenario = {scenario!r}: expected a nicsim.Scenario, a dict shaped like the "
            "scenario file, TOML text or the path of a .toml file"
        )
    if isinstance(scenario, Scenario):
        return Scenario.from_dict(scenario.to_dict())
    if isinstance(scenario, Path | str):
        # One line ending in .toml is a path (as TOML text it would be invalid):
        # a missing or unreadable file is then named as such.
        return Scenario.load(scenario) if _is_path(scenario) else Scenario.from_toml(str(scenario))
    return Scenario.from_dict(scenario)


def _check_where(jobs: object, scheduler: object, dask_local: object) -> None:
    """Refuse ``jobs``, ``scheduler`` or ``dask_local`` of the wrong type, naming it."""
    for name, value in (("jobs", jobs), ("dask_local", dask_local)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise NicsimError(f"{name} = {value!r}: expected a number of workers (>= 1) or None")
    if scheduler is not None and not isinstance(scheduler, str):
        raise NicsimError(
            f"scheduler = {scheduler!r}: expected an address such as 'tcp://10.0.0.1:8786' or None"
        )


def _check_path(name: str, value: object) -> None:
    if value is not None and not isinstance(value, str | os.PathLike):
        raise NicsimError(f"{name} = {value!r}: expected a path (str or pathlib.Path)")


def _names(name: str, value: object) -> list[str]:
    """Return one name or an iterable of names as a list; else raise a named error."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, bytes | Mapping):
        items = list(value)
        if all(isinstance(item, str) for item in items):
            return items
    raise NicsimError(f"{name} = {value!r}: expected a name or a list of names")


def run(
    scenario: Scenario | Mapping[str, Any] | str | Path,
    *,
    policy: Callable[[], CoalescingPolicy] | None = None,
    progress: Callable[[int, int], object] | None = None,
    trace: str | Path | None = None,
    trace_from_us: float | None = None,
    trace_until_us: float | None = None,
    trace_cap: int | None = None,
    **overrides: Any,
) -> Metrics:
    """Run one scenario and return its metrics.

    Parameters
    ----------
    scenario
        A :class:`Scenario`, a dict shaped like the scenario TOML file, TOML
        text, or the path of a ``.toml`` scenario file.
    **overrides
        Keys to set before running: a top-level key (``seed=3``), a section
        merged into the scenario (``nic={"coalescing": "openmx"}``), or a
        dotted path written with ``__`` (``nic__delay_us=0``). They replace
        the scenario's values; a key given twice among them
        (``nic__coalescing=...`` and ``nic={"coalescing": ...}``) is an error.
    policy
        A coalescing policy written in Python (see :mod:`nicsim.policy`):
        called once per receive queue to make that queue's policy, which
        replaces ``nic.coalescing``.
    progress
        Called as ``progress(sim_time_ps, events)`` after the run's first
        1,024 events and then about 20 times per second while it lasts;
        an exception it raises stops the run and is raised here.
    trace
        Write the run's timeline to this file, as Chrome trace-event JSON
        for Perfetto or ``chrome://tracing`` (:mod:`nicsim.trace`); the
        metrics are those of the same run without it. A file is replaced
        whole; a device or a FIFO is written in place (as is a ``pcap``).
    trace_from_us, trace_until_us
        Keep the events that overlap this window of simulated time (µs);
        default: the whole run.
    trace_cap
        Keep at most this many events (default 1,000,000); the file says
        whether the cap cut the timeline, and a cut one is also a
        :class:`nicsim.trace.TraceCut` warning.

    Returns
    -------
    Metrics
        A dict of metric name to value (:class:`nicsim.metrics.Metrics`):
        the workload's headline (``latency_us``, ``throughput_MiBps``,
        ``msg_rate_per_s``, ``interrupts_per_msg``,
        ``overhead_ns_per_packet``, ...), ``interrupts``, ``sim_time_us``,
        ``events``, ``frames``, ``dropped`` and extra counters. A metric
        the run could not measure has the value ``None`` and its reason in
        the result's ``not_measured`` mapping (name to one sentence naming
        the keys to change): e.g. a stream's ``throughput_MiBps`` over
        fewer timed messages than ``workload.window``, whose first messages
        were already in flight when timing started. It is never given as 0
        or as a number the link could not carry.

    Raises
    ------
    NicsimError
        If the scenario is invalid (unknown key, bad value, missing
        ``workload.kind``, ...), an argument has the wrong type (a
        ``scenario`` that is none of the above, a ``policy`` that is not
        callable, a ``pcap`` that is not a path; the message names it),
        or the ``pcap`` file cannot be written (checked before the run;
        the trace is written whole or not at all), or ``trace`` or ``pcap``
        names the scenario or preset file or the other output (the same
        file; nothing is run), or the run held more
        memory than its limit (``NICSIM_MEMORY_LIMIT_MIB``, by default three
        quarters of the machine's memory, or of its cgroup's limit where
        that is lower; the message gives both).
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
    >>> short = run(base, workload__messages=1)  # fewer than the window of 64
    >>> short["msg_rate_per_s"] is None, "workload.window" in short.not_measured["msg_rate_per_s"]
    (True, True)
    >>> run(base, nic__colour="red")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: nic.colour: unknown key
    """
    if policy is not None and not callable(policy):
        raise NicsimError(
            f"policy = {policy!r}: expected a callable returning a "
            "nicsim.policy.CoalescingPolicy (e.g. the class) or None"
        )
    if progress is not None and not callable(progress):
        raise NicsimError(
            f"progress = {progress!r}: expected a callable progress(sim_time_ps, events) or None"
        )
    built = _as_scenario(scenario).update(overrides)
    wanted = None
    if any(v is not None for v in (trace, trace_from_us, trace_until_us, trace_cap)):
        from nicsim import trace as timeline

        wanted = timeline.request(trace, trace_from_us, trace_until_us, trace_cap)
    if built.pcap is None and wanted is None:
        return _run_core(built, policy, progress, wanted)
    from nicsim import outputs
    from nicsim.scenario import preset_path

    source = scenario if isinstance(scenario, Path | str) and _is_path(scenario) else None
    inputs: list[outputs.Named] = [("scenario", source), ("preset", preset_path(built.preset))]
    outputs.check_apart([("trace", trace), ("pcap", built.pcap)], inputs)
    if built.pcap is None:
        return _run_core(built, policy, progress, wanted)
    target = outputs.check_file(str(built.pcap), "pcap")
    with outputs.atomic_file(target) as temp:
        built.pcap = str(temp)
        try:
            return _run_core(built, policy, progress, wanted)
        except NicsimError as err:
            # The core names the file it writes, a temporary one: name the pcap.
            why = str(err).removeprefix("pcap: ")
            if why == str(err):
                raise
            raise NicsimError(f"pcap {target}: cannot write it: {why}") from None


def replay(
    capture: str | Path | Capture,
    *,
    preset: str | None = None,
    coalescing: str | None = None,
    steering: str | None = None,
    delay_us: float | None = None,
    host_mac: str | None = None,
    host_ip: str | None = None,
    scenario: Scenario | Mapping[str, Any] | None = None,
    policy: Callable[[], CoalescingPolicy] | None = None,
    mark: Callable[[bytes], bool] | None = None,
    progress: Callable[[int, int], object] | None = None,
    strict: bool = False,
    trace: str | Path | None = None,
) -> ReplayResult:
    """Replay a pcap or pcapng capture into a receiving host: :func:`nicsim.capture.replay`."""
    from nicsim import capture as _capture

    return _capture.replay(
        capture,
        preset=preset,
        coalescing=coalescing,
        steering=steering,
        delay_us=delay_us,
        host_mac=host_mac,
        host_ip=host_ip,
        scenario=scenario,
        policy=policy,
        mark=mark,
        progress=progress,
        strict=strict,
        trace=trace,
    )


def _run_core(
    scenario: Scenario,
    policy: Callable[[], CoalescingPolicy] | None,
    progress: Callable[[int, int], object] | None,
    wanted: Any = None,
) -> Metrics:
    if wanted is not None:
        from nicsim import trace as timeline

        return timeline.run(scenario.to_toml(), wanted, policy, progress)
    if policy is not None:
        return _core.run_policy(scenario.to_toml(), policy, progress)
    return _core.run(scenario.to_toml(), progress)


def sweep(
    scenario: Scenario | Mapping[str, Any] | str | Path,
    axes: Mapping[str, Iterable[Any]],
    *,
    metrics: Iterable[str] | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    dask_local: int | None = None,
    store: str | Path | None = None,
    fresh: bool = False,
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
        Metric columns to keep (default: all); one may be given as a string.
    jobs
        Local worker processes (``1`` = serial in this process).
    scheduler
        Run on the Dask cluster of this scheduler, e.g. ``"tcp://10.0.0.1:8786"``.
    dask_local
        Run on a Dask ``LocalCluster`` of this many workers.
    store
        Directory of a results store: finished runs are kept there and a
        later call with the same configurations skips them.
    fresh
        Run every configuration again, ignoring what ``store`` holds.
    progress
        Show a progress bar on stderr.

    With none of ``jobs``, ``scheduler`` and ``dask_local``, the
    ``NICSIM_SCHEDULER`` environment variable names a scheduler if set,
    else all usable cores run local processes. The table is the same
    whichever runs it.

    Returns
    -------
    pandas.DataFrame
        One column per axis (named by its key), then the metrics; a metric
        a run could not measure is an empty cell (``None`` or NaN; the
        reason: :func:`run` of that point's scenario).

    Raises
    ------
    NicsimError
        Before any run: if a configuration of the grid is invalid (naming
        it, e.g. ``sweep[3] nic.delay_us=-5: ...``), a metric is not one its
        workload reports, or two axes set the same key.

    Examples
    --------
    >>> base = {"workload": {"kind": "stream", "messages": 300}}
    >>> axes = {"nic.coalescing": ["disabled", "openmx"]}
    >>> t = sweep(base, axes, metrics=["interrupts_per_msg"], jobs=1)
    >>> bool(t["interrupts_per_msg"].iloc[0] > t["interrupts_per_msg"].iloc[1])
    True
    """
    from nicsim import executor, sweeps
    from nicsim.store import Store

    if not isinstance(axes, Mapping):
        raise NicsimError(f"axes = {axes!r}: expected a dict of dotted key -> list of values")
    for key, values in axes.items():
        if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
            raise NicsimError(f"axes[{key!r}] = {values!r}: expected a list of values")
    _check_where(jobs, scheduler, dask_local)
    _check_path("store", store)
    base = _as_scenario(scenario)
    planned = sweeps.plan_sweep(base, {key: list(values) for key, values in axes.items()})
    names = None if metrics is None else _names("metrics", metrics)
    sweeps.check_planned(planned, names)
    chosen = executor.choose(jobs=jobs, scheduler=scheduler, dask_local=dask_local)
    return sweeps.run_planned(
        planned,
        metrics=names,
        progress=progress,
        executor=chosen,
        store=None if store is None else Store(Path(store), fresh=fresh),
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
    if not isinstance(name, str):
        raise NicsimError(f"name = {name!r}: expected a preset name such as 'omx2009'")
    return _core.preset_toml(name)


def run_experiment(
    exp_id: str,
    jobs: int | None = None,
    quick: bool = False,
    preset: str | None = None,
    *,
    seed: int = DEFAULT_SEED,
    scheduler: str | None = None,
    dask_local: int | None = None,
    store: str | Path | None = None,
    fresh: bool = False,
    progress: bool = False,
) -> pd.DataFrame:
    """Run one SPEC §4 experiment and return its table.

    Parameters
    ----------
    exp_id
        Experiment id, e.g. ``"coalescing-msgrate"`` (see
        ``nicsim.studies.experiments.EXPERIMENTS``).
    jobs, scheduler, dask_local
        Where to run, as in :func:`sweep`; ``jobs=1`` is serial.
    quick
        Fewer iterations/messages per configuration (same rows).
    preset
        Preset name or file; default: the experiment's own, else
        ``nicsim._core.DEFAULT_PRESET`` (``"omx2009"``).
    seed
        Base seed, ``0 <= seed < 2**63``; each row's seed is derived from
        (seed, id, row index).
    store, fresh
        A results store to resume from and add to, as in :func:`sweep`.
    progress
        Show a progress bar on stderr.

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
    from nicsim import executor, runner
    from nicsim.store import Store
    from nicsim.studies import experiments as _experiments

    _experiments.get(exp_id)
    _check_where(jobs, scheduler, dask_local)
    _check_path("preset", preset)
    _check_path("store", store)
    chosen = executor.choose(jobs=jobs, scheduler=scheduler, dask_local=dask_local)
    return runner.run_experiment(
        exp_id,
        quick=quick,
        preset=preset,
        seed=seed,
        progress=progress,
        executor=chosen,
        store=None if store is None else Store(Path(store), fresh=fresh),
    )


def reproduce(
    experiments: Iterable[str],
    out_dir: str | Path,
    jobs: int | None = None,
    quick: bool = False,
    *,
    preset: str | None = None,
    seed: int = DEFAULT_SEED,
    scheduler: str | None = None,
    dask_local: int | None = None,
    fresh: bool = False,
    progress: bool = False,
) -> dict[str, pd.DataFrame]:
    """Run experiments (ids or groups such as ``"omx-coal"``) and write a report.

    Writes ``<out_dir>/<exp>.csv``, ``.parquet`` and ``.png`` per experiment,
    ``<out_dir>/report.md`` comparing simulated with published values, and
    ``<out_dir>/validation.md`` (:mod:`nicsim.studies.validation`: every published
    number of the studies, fitted or predicted, and every mechanism they name).
    The files replace the previous reproduction in ``out_dir`` as a whole,
    at the end: an interrupted run leaves the previous set. Finished runs
    are kept in ``<out_dir>/.nicsim/store``, so running the same
    reproduction again (after an interrupt, say) simulates only what is
    missing.

    Parameters
    ----------
    experiments
        Experiment ids and/or group names (``nicsim.studies.experiments.GROUPS``);
        one name may be given as a string.
    out_dir
        Output directory: created if missing (its parent must exist); used
        by one reproduction at a time.
    jobs, quick, preset, seed, scheduler, dask_local
        As in :func:`run_experiment`.
    fresh
        Run everything again, ignoring the results store.
    progress
        Show a progress bar on stderr.

    Returns
    -------
    dict of str to pandas.DataFrame
        The tables, keyed by experiment id in run order.

    Raises
    ------
    NicsimError
        Before anything runs, if an experiment is unknown, ``out_dir``
        cannot be written or is in use by another reproduction.
    """
    from nicsim.studies import campaign

    _check_where(jobs, scheduler, dask_local)
    _check_path("preset", preset)
    if not isinstance(out_dir, str | os.PathLike):
        raise NicsimError(f"out_dir = {out_dir!r}: expected a directory path (str or pathlib.Path)")
    return campaign.reproduce(
        _names("experiments", experiments),
        out_dir,
        jobs=jobs,
        scheduler=scheduler,
        dask_local=dask_local,
        quick=quick,
        preset=preset,
        seed=seed,
        progress=progress,
        fresh=fresh,
    )
