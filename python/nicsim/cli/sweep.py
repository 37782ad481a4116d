"""``nicsim sweep`` and ``nicsim reproduce``: the campaign verbs.

This module owns their options (those they share are the ``*Option``
aliases), the checks of ``--axis`` against ``--set`` and what an
interrupted campaign says it kept; the campaigns themselves are
:mod:`nicsim.studies.campaign`.

It evaluates its annotations when it defines its functions, as every
command module does (:mod:`nicsim.cli` says why).
"""

import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from nicsim import _launch
from nicsim.cli.common import console
from nicsim.cli.exits import fail
from nicsim.cli.run import overlay
from nicsim.keys import Given, leaf_keys, overlap, parse_given, parse_value
from nicsim.scenario import DEFAULT_SEED

__all__ = ["reproduce_command", "sweep_command"]


def _axes(items: list[str] | None) -> list[tuple[str, str]]:
    """Split ``sweep --axis key.path=v1,v2`` items, in order.

    A key given twice is left to the caller, which names the values to give at once.
    """
    pairs: list[tuple[str, str]] = []
    for item in items or []:
        path, eq, text = item.partition("=")
        if not eq or not path.strip() or not text.strip():
            fail(f"--axis {item!r}: expected key.path=value, e.g. nic.delay_us=0,25,75")
        pairs.append((path.strip(), text.strip()))
    return pairs


# Options shared by the campaign verbs (sweep, reproduce).
JobsOption = Annotated[
    int | None, typer.Option(help="Local worker processes (default: all cores).")
]
SchedulerOption = Annotated[
    str | None,
    typer.Option(
        help="Run on this Dask scheduler, e.g. tcp://HOST:8786 (default: $NICSIM_SCHEDULER).",
        show_default=False,
    ),
]
DaskLocalOption = Annotated[
    int | None,
    typer.Option("--dask-local", help="Run on a Dask LocalCluster of N workers.", metavar="N"),
]
FreshOption = Annotated[
    bool, typer.Option(help="Run every job again, ignoring the finished ones kept under --out.")
]
QuietOption = Annotated[
    bool, typer.Option(help="No progress bar and no notes (errors are still printed).")
]


def _interrupted(store: Path) -> NoReturn:
    """Say what an interrupted campaign kept, and exit 128 + the signal (130 on Ctrl-C)."""
    from nicsim.store import Store

    words, status = _launch.stopped_by()
    _launch.command_ended()  # a second Ctrl-C now exits at once
    kept = Store(store).done()
    if kept:
        print(
            f"error: {words}; {kept} finished run(s) kept in {store}: the same command resumes",
            file=sys.stderr,
        )
    else:
        print(f"error: {words}; no run had finished, nothing was written", file=sys.stderr)
    raise SystemExit(status)


def sweep_command(
    axis: Annotated[
        list[str],
        typer.Option(
            "--axis",
            help="A swept key and its values: key.path=v1,v2,... (repeat for a grid).",
        ),
    ],
    out: Annotated[Path, typer.Option(help="Output table: .csv or .parquet.")],
    scenario: Annotated[
        Path | None, typer.Option("--scenario", help="Scenario TOML file to start from.")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Set a fixed scenario key: key.path=value (TOML value)."),
    ] = None,
    metric: Annotated[
        list[str] | None, typer.Option("--metric", help="Metric column to keep (repeatable).")
    ] = None,
    jobs: JobsOption = None,
    scheduler: SchedulerOption = None,
    dask_local: DaskLocalOption = None,
    fresh: FreshOption = False,
    quiet: QuietOption = False,
) -> None:
    """Run a grid of scenario values and write one table row per configuration.

    Finished runs are kept beside the table (.NAME.nicsim/store), so an
    interrupted sweep resumes where it stopped.
    """
    from nicsim import outputs
    from nicsim.studies import campaign

    fixed = parse_given(set_ or [])
    axes: dict[str, list[Any]] = {}
    for path, text in _axes(axis):
        if path in axes:
            fail(
                f"--axis {path} is given twice; give its values once, "
                f"e.g. --axis {path}={','.join(map(str, [*axes[path], text]))}"
            )
        axes[path] = [parse_value(v.strip(), path) for v in text.split(",")]
    for item in fixed:
        for leaf in leaf_keys(item.path, item.value):
            for path in axes:
                both = overlap(leaf, path)
                if both is not None:
                    fail(
                        f"{item.source} and --axis {path}: {both} is fixed (--set) or swept "
                        "(--axis), not both"
                    )
    swept = [Given(path, None, f"--axis {path}") for path in axes]
    base, notes = overlay(scenario, fixed, swept)
    try:
        table = campaign.sweep_to_file(
            base,
            axes,
            out,
            metrics=metric,
            jobs=jobs,
            scheduler=scheduler,
            dask_local=dask_local,
            progress=not quiet,
            fresh=fresh,
            option="--out",
            inputs=[("--scenario", scenario)],
            notes=[] if quiet else notes,
        )
    except KeyboardInterrupt:
        _interrupted(outputs.state_dir(out, is_dir=False) / "store")
    if not quiet:
        console().print(f"wrote {len(table)} rows: {out}")


def reproduce_command(
    experiments: Annotated[
        list[str], typer.Argument(help="Experiment ids or groups (e.g. omx-coal).")
    ],
    out: Annotated[Path, typer.Option(help="Output directory (its parent must exist).")],
    jobs: JobsOption = None,
    scheduler: SchedulerOption = None,
    dask_local: DaskLocalOption = None,
    quick: Annotated[bool, typer.Option(help="Fewer iterations/messages per point.")] = False,
    preset: Annotated[str | None, typer.Option(help="Preset name or preset TOML file.")] = None,
    seed: Annotated[int, typer.Option(help="Base seed.")] = DEFAULT_SEED,
    fresh: FreshOption = False,
    quiet: QuietOption = False,
) -> None:
    """Run experiments and write CSV, Parquet, PNG and report.md into --out.

    The files replace the previous reproduction in --out as a whole. Finished
    runs are kept in --out/.nicsim/store, so an interrupted reproduction
    resumes where it stopped.
    """
    from nicsim import outputs
    from nicsim.studies import campaign

    try:
        tables = campaign.reproduce(
            experiments,
            out,
            jobs=jobs,
            scheduler=scheduler,
            dask_local=dask_local,
            quick=quick,
            preset=preset,
            seed=seed,
            progress=not quiet,
            fresh=fresh,
            option="--out",
        )
    except KeyboardInterrupt:
        _interrupted(outputs.state_dir(out, is_dir=True) / "store")
    rows = sum(len(t) for t in tables.values())
    if not quiet:
        console().print(f"wrote {len(tables)} experiment(s), {rows} rows: {out / 'report.md'}")
