"""The ``nicsim`` command line (typer): run, sweep, reproduce, model, presets, bench.

This module owns argument parsing, terminal output and the error contract:
bad input prints one ``error: ...`` line on stderr and exits with status 2,
never a traceback, before any work starts; Ctrl-C prints one
``error: interrupted`` line and exits with status 130 (while the command
loads and after it ends too: :mod:`nicsim._launch`), SIGTERM and SIGHUP one
``error: interrupted by SIGTERM`` (``SIGHUP``) line and status 143 (129),
after the command has removed its lock and partial outputs as on Ctrl-C. The work itself is
done by :mod:`nicsim` (campaigns that write files by :mod:`nicsim.campaign`).
Importing it loads neither pandas nor matplotlib.

Unlike the rest of the package, this module evaluates its annotations when
it defines its functions (no ``from __future__ import annotations``): typer
reads every command's annotations each time the command line is parsed,
and as strings it compiled them again on every run (14 ms of a small
``nicsim run``), where evaluated ones are part of the cached bytecode.
"""

import json
import sys
import time
import warnings
from collections.abc import Sequence
from contextlib import nullcontext
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

import nicsim
from nicsim import _core, _launch, cli_common, cli_model, cli_replay
from nicsim._core import NicsimError
from nicsim.keys import Given, check_once, leaf_keys, overlap, parse_given, parse_value, replaced
from nicsim.metrics import NOT_MEASURED, summary, why_not
from nicsim.metrics import as_json as json_object
from nicsim.scenario import DEFAULT_SEED, Scenario, loads, read_toml_file

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["app"]

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = _launch.EXIT_INTERRUPTED
#: The largest ``bench --count`` of each kind, and what bounds it: the
#: engine counts events in 64 bits; a ping-pong's count is its
#: ``workload.iterations`` and a stream's its ``workload.messages``, whose
#: ranges the core checks (1 ..= 2**32, crates/nicsim/src/config/workload.rs).
COUNT_LIMITS = {
    "engine": (2**64 - 1, "the engine counts events in 64 bits"),
    "pingpong": (2**32, "round trips: workload.iterations of a ping-pong"),
    "stream": (2**32, "messages: workload.messages of a stream"),
}
#: ``bench --count`` and ``--procs`` when not given.
BENCH_COUNT = 1_000_000
BENCH_PROCS = 256


_out = cli_common.console


def _fail(message: str) -> NoReturn:
    """Print one ``error:`` line on stderr and exit with status 2."""
    _launch.command_ended()  # Ctrl-C from now on exits at once
    line = " ".join(message.split())
    print(f"error: {line}", file=sys.stderr)
    raise SystemExit(EXIT_BAD_INPUT)


def _stopped() -> NoReturn:
    """Print ``error: interrupted`` (naming SIGTERM or SIGHUP) on stderr; exit 128 + signal."""
    words, status = _launch.stopped_by()
    _launch.command_ended()  # a second Ctrl-C now exits at once
    print(f"error: {words}", file=sys.stderr)
    raise SystemExit(status)


class _App(typer.Typer):
    """Typer app whose errors are one line on stderr, status 2 (128 + the signal on one)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("standalone_mode", False)
        try:
            _launch.command_started()
            status = super().__call__(*args, **kwargs)
            if status == EXIT_INTERRUPTED:  # typer's status for a KeyboardInterrupt in a command
                raise KeyboardInterrupt
            _launch.command_ended()
        except typer.TyperException as err:  # bad CLI usage or values
            if not err.format_message():  # no_args_is_help: the help is already shown
                raise SystemExit(EXIT_BAD_INPUT) from None
            _fail(err.format_message())
        except NicsimError as err:
            _fail(str(err))
        except (typer.Abort, KeyboardInterrupt):  # Ctrl-C outside a command's own handler
            _stopped()
        raise SystemExit(status if isinstance(status, int) else 0)


app = _App(
    name="nicsim",
    help="Simulate NIC-assisted message passing and reproduce published studies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
presets_app = typer.Typer(help="List, show and copy platform presets.", no_args_is_help=True)
app.add_typer(presets_app, name="presets")
app.command("replay")(cli_replay.replay_command)


class Coalescing(str, Enum):
    disabled = "disabled"
    timeout = "timeout"
    openmx = "openmx"
    stream = "stream"
    adaptive = "adaptive"
    openmx_adaptive = "openmx-adaptive"


class Steering(str, Enum):
    single_rr = "single-rr"
    single_core = "single-core"
    multiqueue = "multiqueue"


class Workload(str, Enum):
    pingpong = "pingpong"
    stream = "stream"
    uniband = "uniband"
    flood = "flood"
    nas_is = "nas-is"
    nas_cg = "nas-cg"
    nas_mg = "nas-mg"
    nas_ft = "nas-ft"
    alltoall = "alltoall"
    exchange = "exchange"
    bcast = "bcast"
    asp = "asp"
    qr = "qr"
    fft_alltoall = "fft-alltoall"
    echo_nic = "echo-nic"
    echo_kernel = "echo-kernel"


class BenchKind(str, Enum):
    engine = "engine"
    pingpong = "pingpong"
    stream = "stream"
    alltoall = "alltoall"
    exchange = "exchange"
    nas_is = "nas-is"


def _format(value: float | int | str | None) -> str:
    if value is None:
        return NOT_MEASURED
    return f"{value:.6g}" if isinstance(value, float) else str(value)


class _RunProgress:
    """The progress line of a long run on stderr: simulated time and events.

    A run ends when its programs finish, so there is no target time to show
    a fraction of; the line says how far the simulated clock and the event
    count have gone. Shown after the first second, redrawn at most four times
    per second, erased when the run ends.
    """

    SHOW_AFTER_S = 1.0
    REDRAW_S = 0.25

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.drawn = self.start - self.REDRAW_S
        self.shown = False

    def __call__(self, sim_time_ps: int, events: int) -> None:
        now = time.monotonic()
        if now - self.start < self.SHOW_AFTER_S or now - self.drawn < self.REDRAW_S:
            return
        self.drawn = now
        self.shown = True
        line = (
            f"simulated {sim_time_ps / 1e9:,.3f} ms, {events / 1e6:,.1f} M events, "
            f"{now - self.start:.0f} s (Ctrl-C stops)"
        )
        sys.stderr.write(f"\r{line}\x1b[K")
        sys.stderr.flush()

    def close(self) -> None:
        """Erase the line if it was drawn."""
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


@app.command("run")
def run_command(
    scenario: Annotated[
        Path | None, typer.Option("--scenario", help="Scenario TOML file to start from.")
    ] = None,
    preset: Annotated[str | None, typer.Option(help="Preset name or preset TOML file.")] = None,
    workload: Annotated[Workload | None, typer.Option(help="Workload kind.")] = None,
    size: Annotated[int | None, typer.Option(help="Message size in bytes.")] = None,
    coalescing: Annotated[Coalescing | None, typer.Option(help="NIC coalescing strategy.")] = None,
    delay_us: Annotated[
        float | None, typer.Option("--delay-us", help="Coalescing delay (µs).")
    ] = None,
    steering: Annotated[Steering | None, typer.Option(help="Receive steering.")] = None,
    sleep: Annotated[
        bool | None, typer.Option("--sleep/--no-sleep", help="Let idle cores sleep.")
    ] = None,
    pcap: Annotated[Path | None, typer.Option(help="Write every simulated frame here.")] = None,
    seed: Annotated[int | None, typer.Option(help="Random seed.")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Set any scenario key: key.path=value (TOML value)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print every metric as JSON.")] = False,
    show_all: Annotated[
        bool, typer.Option("--all", help="Print every metric, in groups, after the summary.")
    ] = False,
    trace: Annotated[
        Path | None, typer.Option(help="Write the timeline here: Chrome trace JSON (Perfetto).")
    ] = None,
    trace_from: Annotated[float | None, typer.Option(help="Timeline from (simulated µs).")] = None,
    trace_until: Annotated[float | None, typer.Option(help="Timeline to (simulated µs).")] = None,
    trace_cap: Annotated[int | None, typer.Option(help="Timeline events kept, at most.")] = None,
) -> None:
    """Run one scenario and print its summary: headline, interrupts, CPU per host, drops."""
    if as_json and show_all:
        _fail(
            "--all and --json: --json prints every metric, --all every metric as tables; give one"
        )
    if any(v is not None for v in (trace, trace_from, trace_until, trace_cap)):
        from nicsim import trace as timeline

        flags = ("--trace", "--trace-from", "--trace-until", "--trace-cap")
        timeline.request(trace, trace_from, trace_until, trace_cap, names=flags)
    options: list[tuple[str, str, Any]] = [
        ("--preset", "preset", preset),
        ("--workload", "workload.kind", workload.value if workload else None),
        ("--size", "workload.size_bytes", size),
        ("--coalescing", "nic.coalescing", coalescing.value if coalescing else None),
        ("--delay-us", "nic.delay_us", delay_us),
        ("--steering", "nic.steering", steering.value if steering else None),
        ("--sleep" if sleep else "--no-sleep", "host.sleep", sleep),
        ("--pcap", "pcap", str(pcap) if pcap is not None else None),
        ("--seed", "seed", seed),
    ]
    given = [
        Given(path, value, flag if isinstance(value, bool) else f"{flag} {value}")
        for flag, path, value in options
        if value is not None
    ]
    built, notes = _overlay(scenario, [*given, *parse_given(set_ or [])])
    if trace is not None or built.pcap is not None:
        _outputs_apart(trace, pcap, built, scenario, preset)
    progress = _RunProgress() if sys.stderr.isatty() else None
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) if trace is not None else nullcontext() as seen:
            if seen is not None:
                from nicsim.trace import TraceCut

                warnings.simplefilter("always", TraceCut)
                caught = seen
            metrics = nicsim.run(
                built, progress=progress, trace=trace, trace_from_us=trace_from,
                trace_until_us=trace_until, trace_cap=trace_cap,
            )  # fmt: skip
    finally:
        if progress is not None:
            progress.close()
    for note in notes:  # after the run's own checks: an error is alone on stderr
        print(note, file=sys.stderr)
    cut = _trace_cut(caught)
    if as_json:
        print(json.dumps(json_object(metrics), indent=2, sort_keys=False))
        if cut:
            print(cut, file=sys.stderr)
        return
    _out().print(_summary_table(built, metrics))
    shown = {name for name, _ in summary(metrics)}
    for name in [n for n in metrics if metrics[n] is None and n not in shown]:
        _out().print(f"{name}: {NOT_MEASURED}: {why_not(metrics, name)}", highlight=False)
    sim_ms = float(metrics.get("sim_time_us") or 0.0) / 1e3
    line = f"simulated {sim_ms:,.3f} ms in {metrics.get('events', 0):,} events"
    if show_all:
        _out().print(line, highlight=False)
        _out().print(_all_table(metrics))
    else:
        _out().print(f"{line}; all {len(metrics)} metrics: --all, or --json", highlight=False)
    if trace is not None:
        _out().print(f"timeline: {trace} (open it in https://ui.perfetto.dev)", highlight=False)
    if cut:
        _out().print(cut, highlight=False, soft_wrap=True)


def _outputs_apart(
    trace: Path | None,
    pcap: Path | None,
    built: Scenario,
    scenario: Path | None,
    preset: str | None,
) -> None:
    """Refuse a ``run`` whose trace or pcap names an input or the other output, by option."""
    from nicsim import outputs
    from nicsim.scenario import preset_path

    pcap_option = "--pcap" if pcap is not None else "pcap"
    preset_option = "--preset" if preset is not None else "preset"
    outputs.check_apart(
        [("--trace", trace), (pcap_option, built.pcap)],
        [("--scenario", scenario), (preset_option, preset_path(built.preset))],
    )


def _trace_cut(caught: list[warnings.WarningMessage]) -> str:
    """Return the line saying what ``--trace-cap`` left out (or ``""``); show other warnings."""
    if not caught:
        return ""
    from nicsim.trace import CAP_MAX, TraceCut

    line = ""
    for warning in caught:
        if isinstance(warning.message, TraceCut):
            cut = warning.message
            line = (
                f"timeline cut by --trace-cap {cut.cap:,}: {cut.left_out:,} events left out "
                f"(a larger --trace-cap keeps more, up to {CAP_MAX:,})"
            )
        else:
            warnings.showwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return line


def _overlay(
    scenario: Path | None, given: list[Given], swept: Sequence[Given] = ()
) -> tuple[Scenario, list[str]]:
    """Return the scenario file's scenario (or the default one) with ``given`` set.

    A key given twice on the command line is refused, naming both
    (:func:`nicsim.keys.check_once`). Also returned: one ``note:`` line
    per value of the file that a flag, a ``--set`` or a sweep's axis
    (``swept``, not set here) replaces, for the caller to print once every
    check has passed (an error is then alone on stderr).
    """
    check_once(given)
    notes: list[str] = []
    if scenario is None:
        built = Scenario()
    else:
        built = Scenario.load(scenario)
        data = loads(read_toml_file(scenario, "scenario file"), f"scenario file {str(scenario)!r}")
        where = f"scenario file {str(scenario)!r}"
        notes = [f"note: {line}" for line in replaced(data, [*given, *swept], where)]
    for item in given:
        built.set(item.path, item.value)
    return built, notes


def _summary_table(scenario: Scenario, metrics: dict[str, Any]) -> "Table":
    """Make the first table of ``nicsim run``: the headline, interrupts, CPU, drops."""
    from rich import box
    from rich.table import Table

    workload = scenario.workload.get("kind", "?")
    size = scenario.workload.get("size_bytes")
    what = f"{workload}, {size} B" if size is not None else str(workload)
    table = Table(title=f"nicsim run: {what} on {scenario.preset}", box=box.SIMPLE_HEAD)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("what it is")
    for name, meaning in summary(metrics):
        if metrics[name] is None:
            meaning = f"{meaning}; {NOT_MEASURED}: {why_not(metrics, name)}"
        table.add_row(name, _format(metrics[name]), meaning)
    return table


def _all_table(metrics: dict[str, Any]) -> "Table":
    """Make the table of every metric of a run, in groups (:func:`nicsim.metrics.groups`)."""
    from rich import box
    from rich.table import Table

    from nicsim.metrics import groups

    table = Table(title="every metric", box=box.SIMPLE_HEAD)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for i, (title, names) in enumerate(groups(metrics)):
        if i:
            table.add_section()
        table.add_row(f"[bold]{title}[/bold]", "")
        for name in names:
            table.add_row(f"  {name}", _format(metrics[name]))
    return table


def _axes(items: list[str] | None) -> list[tuple[str, str]]:
    """Split ``sweep --axis key.path=v1,v2`` items, in order.

    A key given twice is left to the caller, which names the values to give at once.
    """
    pairs: list[tuple[str, str]] = []
    for item in items or []:
        path, eq, text = item.partition("=")
        if not eq or not path.strip() or not text.strip():
            _fail(f"--axis {item!r}: expected key.path=value, e.g. nic.delay_us=0,25,75")
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


@app.command("sweep")
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
    from nicsim import campaign, outputs

    fixed = parse_given(set_ or [])
    axes: dict[str, list[Any]] = {}
    for path, text in _axes(axis):
        if path in axes:
            _fail(
                f"--axis {path} is given twice; give its values once, "
                f"e.g. --axis {path}={','.join(map(str, [*axes[path], text]))}"
            )
        axes[path] = [parse_value(v.strip(), path) for v in text.split(",")]
    for item in fixed:
        for leaf in leaf_keys(item.path, item.value):
            for path in axes:
                both = overlap(leaf, path)
                if both is not None:
                    _fail(
                        f"{item.source} and --axis {path}: {both} is fixed (--set) or swept "
                        "(--axis), not both"
                    )
    swept = [Given(path, None, f"--axis {path}") for path in axes]
    base, notes = _overlay(scenario, fixed, swept)
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
        _out().print(f"wrote {len(table)} rows: {out}")


@app.command("reproduce")
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
    from nicsim import campaign, outputs

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
        _out().print(f"wrote {len(tables)} experiment(s), {rows} rows: {out / 'report.md'}")


app.command("model")(cli_model.model_command)


@presets_app.command("list")
def presets_list() -> None:
    """List the embedded presets."""
    for name in nicsim.presets():
        print(name)


@presets_app.command("show")
def presets_show(
    name: Annotated[str, typer.Argument(help="Preset name or preset TOML file.")],
) -> None:
    """Print a preset's TOML: an embedded one, or a preset file once the core accepts it."""
    print(_preset_text(name), end="")


def _preset_text(name: str) -> str:
    """Return a preset's TOML: an embedded one's, or a preset file's once the core accepts it."""
    from nicsim.scenario import is_preset_file

    if name in nicsim.presets() or not is_preset_file(name):
        return nicsim.preset_toml(name)
    text = read_toml_file(name, "preset file")
    loads(text, f"preset file {name!r}")
    _core.check(Scenario(preset=name).to_toml())
    return text


@presets_app.command("copy")
def presets_copy(
    name: Annotated[str, typer.Argument(help="Preset name or preset TOML file.")],
    dest: Annotated[Path, typer.Argument(help="Destination file.")],
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
) -> None:
    """Copy a preset (embedded, or a file the core accepts) to edit and pass as --preset."""
    from nicsim import outputs

    text = _preset_text(name)
    outputs.check_apart([("dest", dest)], [("name", name if Path(name).exists() else None)])
    outputs.check_file(dest, "dest")
    if dest.exists() and not force:
        _fail(f"{dest} exists; pass --force to overwrite")
    with outputs.atomic_file(dest) as temp:
        temp.write_text(text, encoding="utf-8")
    print(f"wrote {dest}")


@presets_app.command("from-ethtool")
def presets_from_ethtool(
    file: Annotated[Path, typer.Argument(help="What `ethtool -c DEV` printed.")],
    preset: Annotated[str, typer.Option(help="Preset name or preset TOML file.")],
    out: Annotated[Path, typer.Option(help="Scenario TOML file to write.")],
    rings: Annotated[Path | None, typer.Option(help="What `ethtool -g DEV` printed.")] = None,
    channels: Annotated[Path | None, typer.Option(help="What `ethtool -l DEV` printed.")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
) -> None:
    """Write a scenario from a NIC's ethtool settings; list each value it could not map."""
    from nicsim import ethtool

    print(ethtool.report(ethtool.write(file, preset, out, rings, channels, force), out), end="")


#: Most rounds of a size benchmark (`nicsim bench --repeat`): 1,024 ranks
#: take about ten seconds a run.
REPEAT_LIMIT = 100


def _size_table(kind: str, procs: int, repeat: int, rows: list[dict[str, Any]]) -> "Table":
    """Render the rows of :func:`nicsim.bench.size_rows` as the cost-per-event table.

    Cells are made first: each column is then at least as wide as its values,
    so that a narrow terminal wraps a header, never cuts a number (print it
    with ``crop=False``).
    """
    from rich import box
    from rich.table import Table

    from nicsim.bench import SIZE_BENCHES

    cells: list[list[str]] = []
    for r in rows:
        row = [str(r["procs"]), f"{r['events']:,.0f}", f"{r['runs']:.0f}"]
        row.append(f"{r['ns_per_event']:.1f}")
        if repeat > 1:
            row.append(f"{r['ns_per_event_min']:.1f}-{r['ns_per_event_max']:.1f}")
        row += [
            f"{r['x_n2']:.2f}",
            f"{r['build_s']:.3f}",
            f"{r['wall_s']:.3f}",
            f"{r['peak_rss_MiB']:.1f}",
            f"{r['dropped']:,.0f}",
            f"{r['sim_time_ms']:.1f}",
        ]
        cells.append(row)
    last = rows[-1]
    of_rounds = f"; median of {repeat} rounds" if repeat > 1 else ""
    table = Table(
        title=f"nicsim bench {kind} (N = 2 ... {procs}; {SIZE_BENCHES[kind]}{of_rounds})",
        caption=f"about {last['messages_per_rank']:,.0f} messages per rank at every N; "
        "runs: how often a round builds and runs the N's world, until its event loops "
        f"add up to {last['min_loop_s']:g} s; ns/event: the event loops alone, without the "
        "builds; x N=2: its ratio to N = 2's",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    columns = ["N", "events", "runs", "ns/event"]
    columns += ["range"] if repeat > 1 else []
    columns += ["x N=2", "build s", "wall s", "peak RSS MiB", "drops", "sim ms"]
    for i, col in enumerate(columns):
        # One-word headers stay whole too; "peak RSS MiB" may wrap.
        header = len(col) if len(col) <= len("ns/event") else 0
        width = max(header, *(len(row[i]) for row in cells))
        table.add_column(col, justify="right", min_width=width)
    for row in cells:
        table.add_row(*row)
    return table


@app.command("bench")
def bench_command(
    kind: Annotated[BenchKind, typer.Option(help="What to time.")] = BenchKind.engine,
    count: Annotated[
        int | None,
        typer.Option(
            help="engine: events; pingpong: round trips; stream: messages.  [default: 1000000]"
        ),
    ] = None,
    procs: Annotated[
        int | None,
        typer.Option(
            help="alltoall, exchange, nas-is: processes, at N = 2, 4, ... up to this (at most "
            + ", ".join(f"{n} for {kind}" for kind, n in _core.SCALE_MAX_PROCS.items())
            + ").  [default: 256]"
        ),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            help="alltoall, exchange, nas-is: rounds of runs over the sizes; times are their "
            "medians (on a shared machine).  [default: 1]"
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Also write the figures as CSV, one row per N (or one row), whole."),
    ] = None,
) -> None:
    """Time the simulator: events/s and messages/s, or cost per event by system size."""
    from nicsim import bench, outputs
    from nicsim.store import build_id

    if out is not None:
        if out.suffix != ".csv":
            _fail(f"--out {out}: unknown file type {out.suffix!r} (allowed: .csv)")
        outputs.check_file(out, "--out")
    sized = kind.value in bench.SIZE_BENCHES
    unused = [("--count", count)] if sized else [("--procs", procs), ("--repeat", repeat)]
    for flag, value in unused:
        if value is not None:
            applies = "engine, pingpong, stream" if sized else ", ".join(bench.SIZE_BENCHES)
            _fail(f"{flag} {value}: --kind {kind.value} does not read it (it applies to {applies})")
    rows: list[dict[str, Any]]
    columns: tuple[str, ...]
    if sized:
        procs = BENCH_PROCS if procs is None else procs
        repeat = 1 if repeat is None else repeat
        procs_error = bench.check_procs(kind.value, procs)
        if procs_error is not None:
            _fail(procs_error)
        if not 1 <= repeat <= REPEAT_LIMIT:
            _fail(f"--repeat {repeat}: must be from 1 to {REPEAT_LIMIT}")
        from nicsim.progress import Reporter

        reporter = Reporter(f"nicsim bench {kind.value}", unit="ranks")
        rows = bench.size_rows(kind.value, procs, repeat, reporter=reporter)
        columns = bench.COLUMNS
        _out().print(_size_table(kind.value, procs, repeat, rows), crop=False)
    else:
        count = BENCH_COUNT if count is None else count
        top, what = COUNT_LIMITS[kind.value]
        if not 1 <= count <= top:
            _fail(f"--count {count}: must be from 1 to {top} ({what})")
        from rich.table import Table

        result = _core.bench(kind.value, count)
        table = Table(title=f"nicsim bench {kind.value} ({count})")
        table.add_column("measure")
        table.add_column("value", justify="right")
        for name, figure in result.items():
            table.add_row(name, f"{figure:,.0f}" if figure >= 1000 else f"{figure:.4g}")
        _out().print(table)
        rows = [{"kind": kind.value, "count": count, **result, "build": build_id()}]
        columns = tuple(rows[0])
    if out is not None:
        with outputs.atomic_file(out) as temp:
            bench.write_csv(temp, rows, columns)
        _out().print(f"wrote {out}")


@app.command("version")
def version_command() -> None:
    """Print the nicsim version."""
    print(nicsim.__version__)
