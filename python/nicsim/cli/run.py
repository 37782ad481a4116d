"""``nicsim run``: one scenario from a file, a preset, flags and ``--set``; its summary.

This module owns the command's options, how they overlay a scenario file
(:func:`overlay`, which ``nicsim sweep`` uses too), the progress line of a
long run and the summary tables; the run itself is :func:`nicsim.run`.

It evaluates its annotations when it defines its functions, as every
command module does (:mod:`nicsim.cli` says why).
"""

import json
import sys
import time
import warnings
from collections.abc import Sequence
from contextlib import nullcontext
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import nicsim
from nicsim.cli.common import console
from nicsim.cli.exits import fail
from nicsim.keys import Given, check_once, parse_given, replaced
from nicsim.metrics import NOT_MEASURED, summary, why_not
from nicsim.metrics import as_json as json_object
from nicsim.scenario import Scenario, loads, read_toml_file

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["overlay", "run_command"]


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
    nas_bt = "nas-bt"
    nas_ep = "nas-ep"
    nas_lu = "nas-lu"
    nas_sp = "nas-sp"
    alltoall = "alltoall"
    exchange = "exchange"
    bcast = "bcast"
    asp = "asp"
    qr = "qr"
    fft_alltoall = "fft-alltoall"
    echo_nic = "echo-nic"
    echo_kernel = "echo-kernel"


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
        fail("--all and --json: --json prints every metric, --all every metric as tables; give one")
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
    built, notes = overlay(scenario, [*given, *parse_given(set_ or [])])
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
    console().print(_summary_table(built, metrics))
    shown = {name for name, _ in summary(metrics)}
    for name in [n for n in metrics if metrics[n] is None and n not in shown]:
        console().print(f"{name}: {NOT_MEASURED}: {why_not(metrics, name)}", highlight=False)
    sim_ms = float(metrics.get("sim_time_us") or 0.0) / 1e3
    line = f"simulated {sim_ms:,.3f} ms in {metrics.get('events', 0):,} events"
    if show_all:
        console().print(line, highlight=False)
        console().print(_all_table(metrics))
    else:
        console().print(f"{line}; all {len(metrics)} metrics: --all, or --json", highlight=False)
    if trace is not None:
        console().print(f"timeline: {trace} (open it in https://ui.perfetto.dev)", highlight=False)
    if cut:
        console().print(cut, highlight=False, soft_wrap=True)


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


def overlay(
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
