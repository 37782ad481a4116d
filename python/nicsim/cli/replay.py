"""``nicsim replay``: a capture through a receiving host's NIC policies.

This module owns the command's options, their checks (all made before the
capture is read or anything runs) and its table; reading the capture and
running it is :mod:`nicsim.capture`, the files of ``--out`` are
:mod:`nicsim.plots_replay`, which writes them into a staging directory that
:func:`nicsim.outputs.replace_set` moves into ``--out`` as one set (the
output locked from before the first policy runs). :mod:`nicsim.cli` registers
:func:`replay_command` on its app, whose error contract it follows: a bad
input raises :class:`NicsimError`, which the app prints as one line (exit
2). Like ``cli``, it evaluates its annotations when it defines its
functions (typer reads them on every run).
"""

import json
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nicsim import _core
from nicsim._core import NicsimError
from nicsim.cli.common import console
from nicsim.keys import Given, check_once, leaf_keys, overlap, parse_given
from nicsim.metrics import NOT_MEASURED
from nicsim.metrics import as_json as json_object
from nicsim.scenario import Scenario

if TYPE_CHECKING:
    from rich.table import Table

    from nicsim.capture import ReplayResult

__all__ = ["replay_command"]

#: The policies ``--coalescing`` and ``--compare`` take (``nic.coalescing``).
POLICIES = ["disabled", "timeout", "openmx", "stream", "adaptive", "openmx-adaptive"]
#: The policy of a scenario that sets no ``nic.coalescing``: the core's
#: default (``Coalescing``, crates/nicsim/src/config/coalesce.rs); a preset
#: has no policy of its own, only its delay (``nic.default_delay_us``).
DEFAULT_POLICY = "timeout"
#: The columns of the table, with what they are.
COLUMNS = {
    "interrupts": "irqs",
    "interrupts_per_frame": "irq/frame",
    "cpu_ns_per_frame": "CPU ns/frame",
    "delay_p50_us": "p50 µs",
    "delay_p99_us": "p99 µs",
    "delay_max_us": "max µs",
    "dropped": "drops",
}


def _fail(message: str) -> Any:
    raise NicsimError(message)


def _policies(compare: str | None, coalescing: str | None) -> list[str]:
    """Return the policies to run: ``--compare``'s (checked), else the one given, else ``""``.

    ``""`` runs the scenario's own policy (``--set nic.coalescing``, or
    :data:`DEFAULT_POLICY`).
    """
    if coalescing is not None and coalescing not in POLICIES:
        _fail(f"--coalescing {coalescing!r}: unknown policy (allowed: {', '.join(POLICIES)})")
    if compare is None:
        return [coalescing] if coalescing is not None else [""]
    if coalescing is not None:
        _fail("--compare and --coalescing: give one of them (--compare runs each policy it lists)")
    names = [n.strip() for n in compare.split(",") if n.strip()]
    if not names:
        _fail(
            f"--compare {compare!r}: expected policies separated by commas, "
            "e.g. disabled,timeout,openmx"
        )
    for name in names:
        if name not in POLICIES:
            _fail(f"--compare: unknown policy {name!r} (allowed: {', '.join(POLICIES)})")
    if len(set(names)) != len(names):
        _fail(f"--compare {compare!r}: a policy is listed twice")
    return names


#: The scenario keys a replay does not read, with why.
IGNORED = {"workload": "the capture is its workload", "pcap": "it writes no capture of its own"}


def _check_replayed(sets: "list[Given]") -> None:
    """Refuse a ``--set`` of a key a replay ignores (:data:`IGNORED`), naming it."""
    for item in sets:
        for leaf in leaf_keys(item.path, item.value):
            why = next((w for key, w in IGNORED.items() if overlap(leaf, key)), None)
            if why is not None:
                _fail(
                    f"{item.source}: a replay does not read {leaf} ({why}; allowed: keys of "
                    "platform, nic, host and protocol, preset, seed)"
                )


def replay_command(
    pcap: Annotated[Path, typer.Option(help="Capture to replay: pcap or pcapng, Ethernet frames.")],
    preset: Annotated[str | None, typer.Option(help="Preset of the receiving host.")] = None,
    coalescing: Annotated[
        str | None, typer.Option(help=f"NIC coalescing strategy: {', '.join(POLICIES)}.")
    ] = None,
    compare: Annotated[
        str | None,
        typer.Option(
            help="Run each of these policies, one row each, e.g. "
            "disabled,timeout,openmx,stream,adaptive."
        ),
    ] = None,
    delay_us: Annotated[
        float | None, typer.Option("--delay-us", help="Coalescing delay (µs).")
    ] = None,
    steering: Annotated[
        str | None, typer.Option(help="Receive steering: single-rr, single-core or multiqueue.")
    ] = None,
    host_mac: Annotated[
        str | None,
        typer.Option(
            "--host-mac", help="Receiving host's MAC (default: the one most frames go to)."
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Set any scenario key: key.path=value (TOML value)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Directory for summary.csv, timeline.csv and timeline.png.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print every metric of each policy as JSON.")
    ] = False,
) -> None:
    """Replay a capture's frames to one host through its NIC policy: interrupts, CPU, delay."""
    from nicsim import capture, outputs

    policies = _policies(compare, coalescing)
    flags = [
        ("--preset", "preset", preset),
        ("--delay-us", "nic.delay_us", delay_us),
        ("--steering", "nic.steering", steering),
    ]
    given = [
        Given(path, value, f"{flag} {value}") for flag, path, value in flags if value is not None
    ]
    sets = parse_given(set_ or [])
    _check_replayed(sets)
    # The policies run one by one: they give nic.coalescing too.
    chosen = [("--coalescing", coalescing), ("--compare", compare)]
    policy = [Given("nic.coalescing", v, f"{flag} {v}") for flag, v in chosen if v is not None]
    check_once([*given, *policy, *sets])
    base = Scenario()
    for item in [*given, *sets]:
        base.set(item.path, item.value)
    base.workload = {"kind": "flood"}  # stands in for the checks; the core feeds the capture
    capture.check_replay_preset(base.preset)
    for name in policies:
        trial = Scenario.from_dict(base.to_dict())
        if name:
            trial.set("nic.coalescing", name)
        _core.check(trial.to_toml())
    target = outputs.check_dir(out, "--out") if out is not None else None
    if target is not None:
        from nicsim.plots_replay import FILES
        from nicsim.scenario import preset_path

        inputs = [("--pcap", pcap), ("--preset" if preset else "preset", preset_path(base.preset))]
        outputs.check_set_apart(target, "--out", inputs, FILES)
    if host_mac is not None:
        capture._parse_mac(host_mac)
    read = capture.read_capture(pcap)
    with ExitStack() as held:
        if target is not None:
            state = outputs.state_dir(target, is_dir=True)
            held.enter_context(outputs.OutputLock(state, target, "--out"))
        results: dict[str, ReplayResult] = {}
        for name in policies:
            label = name or str(base.nic.get("coalescing", DEFAULT_POLICY))
            results[label] = capture.replay(
                read, coalescing=name or None, host_mac=host_mac, scenario=base
            )
        first = next(iter(results.values()))
        frames = first.metrics["replay_frames"]
        title = f"nicsim replay: {pcap.name}, {frames:,} frames to {first.host_mac}, {base.preset}"
        if as_json:
            print(
                json.dumps({name: json_object(r.metrics) for name, r in results.items()}, indent=2)
            )
        else:
            console().print(_table(title, results))
        if target is not None:
            from nicsim import plots_replay

            names = outputs.replace_set(
                target,
                state,
                lambda staging: plots_replay.write(results, staging, title),
                f"--out {target}",
            )
            if not as_json:
                written = ", ".join(str(target / name) for name in names)
                console().print(f"wrote {written}", highlight=False)


def _cell(value: object) -> str:
    if value is None:
        return NOT_MEASURED
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _table(title: str, results: "dict[str, ReplayResult]") -> "Table":
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    table.add_column("policy", no_wrap=True)
    for header in COLUMNS.values():
        table.add_column(header, justify="right", no_wrap=True)
    for name, r in results.items():
        s: dict[str, Any] = r.summary()
        table.add_row(
            name,
            *(_cell(s[key]) for key in COLUMNS),
        )
    return table
