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

What it prints: the capture read (records, frames, bytes, span) and what
was not replayed, by cause, on stdout before the table; what is damaged in
the capture (reading stopped before its end, records skipped, times going
backwards), one ``warning:`` line each on stderr (``--strict`` makes it an
error, exit 2). The table is printed whole whatever the terminal's width
(a pipe or a file gets every column), one row per policy point. ``--json``
prints the same as one object: ``capture`` (what was read and not
replayed, by cause), ``replayed`` (the host and its frames) and
``policies`` (every metric of each policy point). ``--scenario`` starts
from a scenario file (what ``nicsim presets from-ethtool`` writes); a key
a replay does not read (:data:`IGNORED`) is refused by name, in the file
as on the command line.
"""

import json
import math
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nicsim import _core
from nicsim._core import NicsimError
from nicsim.cli.common import console
from nicsim.keys import Given, check_once, leaf_keys, overlap, parse_given, replaced
from nicsim.metrics import NOT_MEASURED
from nicsim.metrics import as_json as json_object
from nicsim.scenario import Scenario, loads, read_toml_file

if TYPE_CHECKING:
    from rich.table import Table

    from nicsim.capture import ReadReport, ReplayResult

__all__ = ["replay_command"]


#: The policies ``--coalescing`` and ``--compare`` take (``nic.coalescing``).
POLICIES = ["disabled", "timeout", "openmx", "stream", "adaptive", "openmx-adaptive"]
#: The columns of the table, with what they are.
COLUMNS = {
    "delay_in_force_us": "delay µs",
    "interrupts": "irqs",
    "rx_interrupts": "rx irqs",
    "tx_interrupts": "tx-only irqs",
    "interrupts_per_frame": "irq/frame",
    "cpu_ns_per_frame": "CPU ns/frame",
    "delay_p50_us": "p50 µs",
    "delay_p99_us": "p99 µs",
    "delay_max_us": "max µs",
    "dropped": "drops",
}


def _fail(message: str) -> Any:
    raise NicsimError(message)


#: Policies that take no delay of their own (``disabled``: none; the
#: adaptive ones choose theirs).
NO_DELAY = ("disabled", "adaptive", "openmx-adaptive")


def _policies(compare: str | None, coalescing: str | None) -> list[str]:
    """Return the policy points to run: ``--compare``'s (checked), else the one given, else ``""``.

    A point is a policy, or ``policy@delay`` (µs: ``timeout@8``). ``""``
    runs the scenario's own policy (``--set nic.coalescing``, the scenario
    file's, else its preset's ``nic.default_coalescing``), labelled with
    the name the core gives it (``_core.coalescing``).
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
            "e.g. disabled,timeout@8,timeout@50,adaptive"
        )
    for name in names:
        _point(name)
    if len(set(names)) != len(names):
        _fail(f"--compare {compare!r}: a policy is listed twice")
    return names


def _point(name: str) -> tuple[str, float | None]:
    """Return the policy and delay (µs; ``None``: the scenario's) of a ``--compare`` point.

    Examples
    --------
    >>> _point("timeout@8"), _point("adaptive")
    (('timeout', 8.0), ('adaptive', None))
    """
    policy, at, delay = name.partition("@")
    if policy not in POLICIES:
        _fail(f"--compare: unknown policy {policy!r} (allowed: {', '.join(POLICIES)})")
    if not at:
        return policy, None
    if policy in NO_DELAY:
        _fail(
            f"--compare {name}: {policy} takes no delay (allowed with @: "
            f"{', '.join(p for p in POLICIES if p not in NO_DELAY)})"
        )
    try:
        value = float(delay)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        _fail(f"--compare {name}: the delay after @ is µs, a number >= 0, e.g. {policy}@8")
    return policy, value


#: Why the keys of a replay's processes are not read: the replay host runs
#: none (``crates/nicsim/src/sim/replay.rs``).
_NO_PROCESS = "no process runs on the replay host"
#: Why the keys of the simulated wire are not read: the core hands each
#: frame to the NIC at its captured time (``World::replay_tick``); the
#: wire's loss, reordering and jitter (``wire_path.rs``, the run's only
#: random choices) are not on its way.
_NO_WIRE = "the frames reach the NIC as captured, not over the simulated wire"
#: Why the LCI stack's reliable protocol's keys are not read: the replay
#: host runs Open-MX's receive path.
_LCI_PROTOCOL = "it is the LCI stack's reliable protocol, not the replay host's"
#: The scenario keys a replay does not read, with why: each family of the
#: scenario (``preset``, ``seed``, ``pcap``, ``platform``, ``nic``,
#: ``host``, ``protocol``, ``workload``) checked against what
#: ``run_replay_traced`` reads. ``platform`` (the hardware), ``preset``,
#: the receiving NIC's keys, ``host.sleep``, ``soaker``, the NAPI knobs
#: (threaded NAPI included: the replay host's kernel thread runs its polls),
#: ``dca``, ``tx_reap`` and ``protocol.stack`` are read.
IGNORED = {
    "workload": "the capture is its workload",
    "pcap": "it writes no capture of its own",
    "seed": f"nothing in it is random: {_NO_WIRE}",
    "nic.host0": "it replays into host 1 only",
    "host.binding": _NO_PROCESS,
    "host.wait": _NO_PROCESS,
    "host.busy_poll": f"{_NO_PROCESS} to busy-poll",
    "host.busy_poll_budget": f"it is a busy poll's budget, and {_NO_PROCESS} to busy-poll",
    "host.irq_suspend_timeout_ns": f"it needs busy polling, and {_NO_PROCESS}",
    "host.irq_suspend_timeout_us": f"it needs busy polling, and {_NO_PROCESS}",
    "host.ioat": f"the copy engine copies pull replies, and {_NO_PROCESS}",
    "host.tx_softirq": f"its skb destructors are the sending processes', and {_NO_PROCESS}",
    "protocol.mpi": _NO_PROCESS,
    "protocol.unmarked": "the captured frames carry their senders' markers",
    "protocol.rndv_threshold": "the capture's senders chose their protocol",
    "protocol.misorder_degree": "the capture's senders chose their markers",
    "protocol.loss": _NO_WIRE,
    "protocol.reorder": _NO_WIRE,
    "protocol.jitter_ns": _NO_WIRE,
    "protocol.send_buffers": _LCI_PROTOCOL,
    "protocol.ack_delay_us": _LCI_PROTOCOL,
}


def _check_replayed(sets: "list[Given]") -> None:
    """Refuse a given key a replay ignores (:data:`IGNORED`), naming it and why."""
    for item in sets:
        for leaf in leaf_keys(item.path, item.value):
            why = next((w for key, w in IGNORED.items() if overlap(leaf, key)), None)
            if why is not None:
                _fail(f"{item.source}: a replay does not read {leaf} ({why})")


def _base(
    path: Path | None, given: "list[Given]", policy: "list[Given]"
) -> tuple[Scenario, list[str]]:
    """Return the scenario file's scenario (or the default one) with ``given`` set, and notes.

    The file is refused if it sets a key a replay does not read
    (:data:`IGNORED`), naming it. The notes (``note:`` lines, printed once
    the replay has run) say which values of the file ``given`` and the
    policy points (``policy``: set per point, not here) replace.
    """
    if path is None:
        base, notes = Scenario(), []
    else:
        where = f"scenario file {str(path)!r}"
        data = loads(read_toml_file(path, "scenario file"), where)
        _check_replayed([Given(key, value, where) for key, value in data.items()])
        base = Scenario.load(path)
        notes = [f"note: {line}" for line in replaced(data, [*given, *policy], where)]
    for item in given:
        base.set(item.path, item.value)
    return base, notes


def replay_command(
    pcap: Annotated[Path, typer.Option(help="Capture to replay: pcap or pcapng, Ethernet frames.")],
    scenario: Annotated[
        Path | None,
        typer.Option(
            "--scenario",
            help="Scenario TOML file to start from (e.g. what `nicsim presets from-ethtool` "
            "wrote); flags and --set replace its values. A workload or pcap in it is refused.",
        ),
    ] = None,
    preset: Annotated[str | None, typer.Option(help="Preset of the receiving host.")] = None,
    coalescing: Annotated[
        str | None, typer.Option(help=f"NIC coalescing strategy: {', '.join(POLICIES)}.")
    ] = None,
    compare: Annotated[
        str | None,
        typer.Option(
            help="Run each of these policy points, one row each: a policy, or policy@delay "
            "(µs), e.g. disabled,timeout@8,timeout@50,adaptive."
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
            "--host-mac",
            help="Receiving host's MAC (default: the unicast MAC most frames go to).",
        ),
    ] = None,
    host_ip: Annotated[
        str | None,
        typer.Option("--host-ip", help="Receiving host by an IP address of it (v4 or v6)."),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            help="Refuse a damaged capture (cut short, bad record lengths, times going "
            "backwards: exit 2). Without it, the whole records are replayed, in time order, "
            "and a warning line says what was not."
        ),
    ] = False,
    frames_csv: Annotated[
        Path | None,
        typer.Option(
            "--frames",
            help="Write one row per frame: arrival, delivery, delay, interrupt, queue, drop.",
        ),
    ] = None,
    trace: Annotated[
        Path | None,
        typer.Option(help="Write the replay's timeline here: Chrome trace JSON (Perfetto)."),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Set any scenario key: key.path=value (TOML value)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Directory for summary.csv, timeline.csv, timeline.png and frames.csv."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print every metric of each policy as JSON.")
    ] = False,
) -> None:
    """Replay a capture's frames to one host through its NIC policy: interrupts, CPU, delay."""
    from nicsim import capture, capture_file, outputs

    policies = _policies(compare, coalescing)
    if trace is not None and len(policies) > 1:
        _fail("--trace records one replay: give --coalescing (or no policy), not --compare")
    points = [_point(name) if name else ("", None) for name in policies]
    if delay_us is not None:
        fixed = next(
            (name for name, (_, d) in zip(policies, points, strict=True) if d is not None), None
        )
        if fixed is not None:
            _fail(f"--delay-us {delay_us} and --compare {fixed}: give the delay once")
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
    delays = [
        Given("nic.delay_us", d, f"--compare {name}")
        for name, (_, d) in zip(policies, points, strict=True)
        if d is not None
    ]
    base, notes = _base(scenario, [*given, *sets], [*policy, *delays])
    base.workload = {"kind": "flood"}  # stands in for the checks; the core feeds the capture
    capture.check_replay_preset(base.preset)
    scenarios = []
    for name, (policy_name, delay) in zip(policies, points, strict=True):
        trial = Scenario.from_dict(base.to_dict())
        if policy_name:
            trial.set("nic.coalescing", policy_name)
        if delay is not None:
            trial.set("nic.delay_us", delay)
        _core.check(trial.to_toml())
        scenarios.append((name or _core.coalescing(trial.to_toml()), trial))
    from nicsim.scenario import preset_path

    inputs = [
        ("--pcap", pcap),
        ("--scenario", scenario),
        ("--preset" if preset else "preset", preset_path(base.preset)),
    ]
    files = [
        (flag, outputs.check_file(path, flag))
        for flag, path in (("--frames", frames_csv), ("--trace", trace))
        if path is not None
    ]
    if files:
        outputs.check_apart(files, inputs)
    target = outputs.check_dir(out, "--out") if out is not None else None
    if target is not None:
        from nicsim.plots_replay import FILES

        # An output file of its own must not be one the set replaces either.
        outputs.check_set_apart(target, "--out", [*inputs, *files], FILES)
    if host_mac is not None and host_ip is not None:
        _fail("--host-mac and --host-ip: give one of them (both name the receiving host)")
    if host_mac is not None:
        capture_file._parse_mac(host_mac)
    if host_ip is not None:
        capture_file._parse_ip(host_ip)
    read = capture.read_capture(pcap, strict=strict)
    report = read.report
    host = read.select(host_mac, host_ip)
    with ExitStack() as held:
        if target is not None:
            state = outputs.state_dir(target, is_dir=True)
            held.enter_context(outputs.OutputLock(state, target, "--out"))
        results: dict[str, ReplayResult] = {}
        for label, trial in scenarios:
            results[label] = capture.replay(read, host_mac=host.mac, scenario=trial, trace=trace)
        first = next(iter(results.values()))
        frames = first.metrics["replay_frames"]
        title = f"nicsim replay: {pcap.name}, {frames:,} frames to {first.host_mac}, {base.preset}"
        if as_json:
            per_point = {name: json_object(r.metrics) for name, r in results.items()}
            print(json.dumps({**_read_json(first), "policies": per_point}, indent=2))
        else:
            _print_whole(_read_lines(first), _table(title, results))
        if frames_csv is not None:
            from nicsim import plots_replay

            with outputs.atomic_file(frames_csv) as temp:
                plots_replay.write_frames(results, temp)
            if not as_json:
                console().print(f"wrote {frames_csv}", highlight=False)
        if trace is not None and not as_json:
            console().print(
                f"timeline: {trace} (open it in https://ui.perfetto.dev)", highlight=False
            )
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
                console().print(f"wrote {written}", highlight=False, soft_wrap=True)
    # Last: a command that fails says only its one error line.
    for note in notes:
        print(note, file=sys.stderr)
    for line in _warnings(report):
        print(f"warning: {line}", file=sys.stderr)


def _warnings(report: "ReadReport | None") -> list[str]:
    """Return what is damaged in the capture, a line each (``warning:`` lines on stderr)."""
    if report is None:
        return []
    name = report.path
    return [f"pcap {name}: {what}" for what in (*report.notes, *report.damage())]


def _not_replayed(r: "ReplayResult") -> dict[str, int]:
    """Return the frames and records not replayed, by cause (0 where none)."""
    causes: dict[str, int] = {}
    if r.selection is not None:
        causes["to other hosts"] = r.selection.other_hosts
        causes["broadcast/multicast its NIC filters out"] = r.selection.group_not_delivered
    if r.read is not None:
        causes.update(r.read.skipped())
    return causes


def _read_json(r: "ReplayResult") -> dict[str, Any]:
    """Return what ``--json`` says of the capture read and the frames replayed.

    ``capture``: the file, its records, frames, bytes and span, what was not
    replayed by cause (as the table's lines say it), where reading stopped
    and what is damaged; ``replayed``: the host and its frames.
    """
    out: dict[str, Any] = {}
    report, chosen = r.read, r.selection
    if report is not None:
        out["capture"] = {
            "path": str(report.path),
            "file_bytes": report.file_bytes,
            "records": report.records,
            "frames": report.frames,
            "wire_bytes": report.wire_bytes,
            "span_ns": report.span_ns,
            "not_replayed": {cause: n for cause, n in _not_replayed(r).items() if n},
            "stopped_at_byte": report.stopped_at,
            "unread_bytes": report.unread_bytes,
            "backwards": report.backwards,
            "damage": report.damage(),
            "notes": list(report.notes),
        }
    supers, wire = r.split
    replayed: dict[str, Any] = {"host_mac": r.host_mac}
    if chosen is not None:
        replayed["frames_to_host"] = len(chosen.to)
        replayed["broadcast_multicast_to_host"] = chosen.group_delivered
        replayed["sent_by_host"] = len(chosen.sent)
    replayed["super_frames_split"] = supers
    replayed["wire_frames_of_split"] = wire
    out["replayed"] = replayed
    return out


def _read_lines(r: "ReplayResult") -> list[str]:
    """Return the lines that say what was read and what was not replayed, by cause."""
    lines = []
    report, chosen = r.read, r.selection
    if report is not None:
        lines.append(report.summary())
    causes = _not_replayed(r)
    if report is not None and report.stopped_at is not None:
        causes[f"past byte {report.stopped_at:,}, where reading stopped"] = -1
    said = [f"{n:,} {cause}" if n >= 0 else cause for cause, n in causes.items() if n]
    lines.append("not replayed: " + (", ".join(said) if said else "none"))
    took = []
    if chosen is not None:
        took.append(f"{len(chosen.to):,} frames to the host")
        if chosen.group_delivered:
            took.append(f"{chosen.group_delivered:,} of them broadcast/multicast")
        took.append(f"{len(chosen.sent):,} sent by it (transmit completions)")
    supers, wire = r.split
    if supers:
        took.append(
            f"{supers:,} GRO/TSO super-frames above the MTU split into {wire:,} wire frames"
        )
    if took:
        lines.append("replayed: " + ", ".join(took))
    return lines


def _print_whole(lines: list[str], table: "Table") -> None:
    """Print ``lines`` and ``table`` whole: never cut at the terminal's (or a pipe's 80) columns."""
    from rich.console import Console

    out = console()
    unbounded = Console(width=10_000, file=out.file)
    needed = unbounded.measure(table).maximum
    width = max(out.width, needed, *(len(line) for line in lines))
    whole = Console(width=width, file=out.file, force_terminal=out.is_terminal)
    for line in lines:
        whole.print(line, highlight=False, soft_wrap=True)
    whole.print(table)


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
