"""Campaigns that write files: ``reproduce`` into a directory, a sweep into a table file.

This module owns the order of a campaign, the same for the command line and
the Python API: every input and output is checked (an output never names
an input) and the output locked before anything is simulated; jobs already
in the output's results store are skipped and the others stored as they
finish; files are written whole at the end (:mod:`nicsim.outputs`). Running
is :mod:`nicsim.runner`, writing the files :mod:`nicsim.studies.report`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nicsim import _core, outputs, runner
from nicsim import executor as _executor
from nicsim._core import NicsimError
from nicsim.scenario import Scenario, check_seed, loads, preset_path, read_toml_file
from nicsim.store import Store

if TYPE_CHECKING:
    import pandas as pd

    from nicsim.progress import Reporter
    from nicsim.studies.report import Provenance

__all__ = ["TABLE_SUFFIXES", "reproduce", "sweep_to_file"]

#: File types a sweep table can be written as.
TABLE_SUFFIXES = (".csv", ".parquet")


def _set_names(ids: Sequence[str]) -> list[str]:
    """Return the names of the files a reproduction of ``ids`` writes (:func:`_write_set`)."""
    per_experiment = [f"{i}{suffix}" for i in ids for suffix in (".csv", ".parquet", ".png")]
    return [*per_experiment, "report.md", "validation.md"]


def _preset_files(presets: Iterable[object]) -> list[outputs.Named]:
    """Return the presets among ``presets`` that are files, as inputs named ``preset``."""
    return [("preset", preset_path(p)) for p in presets]


@contextmanager
def _locked_state(
    output: Path, *, is_dir: bool, option: str, fresh: bool, reporter: Reporter
) -> Iterator[Store]:
    """Hold the output's lock; finish any cut-short write; yield its results store."""
    state = outputs.state_dir(output, is_dir=is_dir)
    with outputs.OutputLock(state, output, option) as lock:
        if lock.stale_pid is not None:
            reporter.note(f"{option} {output}: took over the lock of pid {lock.stale_pid}, gone")
        if is_dir:
            outputs.recover(output, state)
        store = Store(state / "store", fresh=fresh)
        store.remove_temporaries()
        yield store


def reproduce(
    experiments: Iterable[str],
    out_dir: str | Path,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    dask_local: int | None = None,
    quick: bool = False,
    preset: str | None = None,
    seed: int = runner.DEFAULT_SEED,
    progress: bool = False,
    fresh: bool = False,
    option: str = "out_dir",
    run_fn: runner.RunFn = runner.core_run,
) -> dict[str, pd.DataFrame]:
    """Run experiments and replace the reproduction in ``out_dir`` (see :func:`nicsim.reproduce`).

    ``option`` names ``out_dir`` in error messages (``--out`` on the command
    line); ``run_fn`` runs one scenario (default: the compiled core).
    """
    from nicsim.progress import Reporter
    from nicsim.studies import experiments as _experiments

    ids = _experiments.expand(experiments)
    check_seed(seed)
    if preset is not None:
        # Before any work: an existing path must be a readable preset file (a
        # device or FIFO is refused by name, a value nested too deep by its
        # key), anything else a preset name.
        if Path(preset).exists():
            loads(read_toml_file(preset, "preset file"), f"preset file {preset!r}")
        else:
            _core.preset_toml(preset)
    chosen = _executor.choose(jobs=jobs, scheduler=scheduler, dask_local=dask_local)
    out = outputs.check_dir(out_dir, option)
    inputs = [("--preset" if option.startswith("--") else "preset", preset)]
    outputs.check_set_apart(out, option, inputs if preset is not None else [], _set_names(ids))
    reporter = Reporter(f"nicsim {', '.join(ids)}" if progress else None)
    with _locked_state(out, is_dir=True, option=option, fresh=fresh, reporter=reporter) as store:
        tables = runner.run_experiments(
            ids,
            quick=quick,
            preset=preset,
            seed=seed,
            progress=progress,
            run_fn=run_fn,
            executor=chosen,
            store=store,
        )
        from nicsim.studies import report

        provenance = report.Provenance(
            nicsim_version=_core.version(),
            preset=preset or runner.DEFAULT_PRESET,
            seed=seed,
            quick=quick,
        )
        state = outputs.state_dir(out, is_dir=True)
        outputs.replace_set(
            out, state, lambda staging: _write_set(tables, staging, provenance), f"{option} {out}"
        )
    return tables


def _write_set(tables: Mapping[str, pd.DataFrame], staging: Path, provenance: Provenance) -> None:
    """Write one reproduction's files into ``staging``: tables, plots, report, validation."""
    from nicsim.studies import report, validation

    report.write_report(tables, staging, provenance)
    with outputs.naming(staging / "validation.md"):
        validation.write(tables, staging / "validation.md", provenance)


def sweep_to_file(
    base: Scenario,
    axes: Mapping[str, Sequence[Any]],
    out: str | Path,
    *,
    metrics: Sequence[str] | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    dask_local: int | None = None,
    progress: bool = False,
    fresh: bool = False,
    option: str = "out",
    inputs: Sequence[outputs.Named] = (),
    notes: Sequence[str] = (),
    run_fn: runner.RunFn = runner.core_run,
) -> pd.DataFrame:
    """Run a sweep and write its table to ``out`` (``.csv`` or ``.parquet``), whole.

    The results store is ``.<name>.nicsim/store`` beside the file. ``out``
    may name none of the preset files the sweep reads, nor ``inputs`` (the
    caller's, e.g. the scenario file it read ``base`` from). ``notes`` are
    lines printed on stderr once every check has passed, before any run.
    """
    from nicsim import sweeps
    from nicsim.progress import Reporter

    target = Path(out)
    if target.suffix not in TABLE_SUFFIXES:
        raise NicsimError(f"{option} {target}: the file must end in .csv or .parquet")
    planned = sweeps.plan_sweep(base, axes)
    sweeps.check_planned(planned, metrics, run_fn=run_fn)
    chosen = _executor.choose(jobs=jobs, scheduler=scheduler, dask_local=dask_local)
    outputs.check_file(target, option)
    presets = [base.preset, *axes.get("preset", ())]
    outputs.check_apart([(option, target)], [*inputs, *_preset_files(presets)])
    for note in notes:
        print(note, file=sys.stderr)
    reporter = Reporter("sweep" if progress else None)
    with _locked_state(
        target, is_dir=False, option=option, fresh=fresh, reporter=reporter
    ) as store:
        table = sweeps.run_planned(
            planned,
            metrics=metrics,
            progress=progress,
            run_fn=run_fn,
            executor=chosen,
            store=store,
        )
        with outputs.atomic_file(target) as temp:
            if target.suffix == ".csv":
                table.to_csv(temp, index=False)
            else:
                table.to_parquet(temp, index=False)
    return table
