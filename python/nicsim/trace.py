"""The timeline of a run as a Chrome trace-event file (``nicsim run --trace``).

The file opens in Perfetto (https://ui.perfetto.dev) and ``chrome://tracing``:
``{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}``. One
process per host; in it one thread per core (hard IRQ, the NAPI poll's items
with the Open-MX receive handler, the library, application compute, spinning,
sleep and wake-up, as slices), one for what the NIC puts on the wire and one
per NIC receive queue (DMA as slices; the coalescing timer armed and fired,
the interrupts raised and the frames a full ring dropped as instants, a drop's
``pull_reply`` saying 1 for a reply its pull still misses, 2 for one it
already holds, 0 for another frame). Each frame is an arrow from the sending
NIC to the receiving queue. Times are simulated microseconds with picosecond
digits.

The core records the timeline (``crates/nicsim/src/sim/trace.rs``) only when
one is asked for; this module checks the options before the run and writes
the file whole (a temporary name, then a rename) or not at all; a device or
a FIFO (``/dev/null``, a pipe to a reader) is written in place
(:func:`nicsim.outputs.atomic_file`). The records kept are those that
overlap the window, at most ``cap`` of them; the window, the cap and
whether the cap cut the timeline are in ``otherData``, and a cut timeline
is also a :class:`TraceCut` warning (``nicsim run`` prints it as a line).
The same scenario and seed give the same bytes.

Memory: the core keeps 32 bytes a record, in a vector that grows by
doubling (its capacity at most twice the records), sorts them at the end
(a stable sort: 16 bytes a record of scratch) and hands them over packed,
32 bytes a record, in one ``bytes`` object. :func:`write` converts and
writes one event at a time, so the JSON text (about 115 bytes an event) is
never held. A traced run holds at most 96 bytes per kept event on top of
the untraced run: ``nicsim run`` of a 300,000-message stream (3.1 million
events in the window, the default cap of 1,000,000 kept) peaks at 124 MB
against 26 MB untraced; between caps of 0.1 and 1.6 million the peak
grows by about 77 bytes per kept event. At :data:`CAP_MAX` the bound is
1.9 GB.

Examples
--------
>>> import json, tempfile, pathlib, nicsim
>>> path = pathlib.Path(tempfile.mkdtemp()) / "t.json"
>>> m = nicsim.run({"workload": {"kind": "pingpong", "iterations": 5}}, trace=path)
>>> data = json.loads(path.read_text())
>>> data["displayTimeUnit"], data["otherData"]["cut_by_cap"]
('ns', False)
"""

from __future__ import annotations

import json
import math
import struct
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from nicsim import _core
from nicsim._core import NicsimError
from nicsim.metrics import Metrics

__all__ = [
    "BUSY_CATEGORIES",
    "CAP_DEFAULT",
    "CAP_MAX",
    "Request",
    "TraceCut",
    "request",
    "run",
    "write",
]

CAP_DEFAULT = 1_000_000
"""Trace events kept unless told otherwise (about 115 MB of JSON, 100 MB of memory)."""

CAP_MAX = 20_000_000
"""The largest cap: at most 96 bytes a record in memory, about 115 bytes a JSON event."""

BUSY_CATEGORIES = ("kernel", "app", "spin")
"""The categories of slices the run's CPU metrics count busy (``hostN_cpu_cores``)."""

_PS_PER_US = 1_000_000
_UNTIL_NONE = 2**64 - 1
_RECORD = struct.Struct("<QQIIHHB3x")


@dataclass(frozen=True)
class Request:
    """A checked trace request: the file, the window in picoseconds, the cap."""

    target: Path
    from_ps: int
    until_ps: int | None
    cap: int


class TraceCut(UserWarning):
    """The cap cut a timeline: ``left_out`` events of the window were not kept.

    Attributes
    ----------
    path
        The trace file.
    cap
        The cap (``trace_cap``): the events kept.
    left_out
        The events of the window the cap left out.
    """

    def __init__(self, path: Path, cap: int, left_out: int) -> None:
        super().__init__(
            f"trace {path}: cut by the cap, {left_out:,} events left out after the first "
            f"{cap:,} (trace_cap raises the cap, up to {CAP_MAX:,})"
        )
        self.path = path
        self.cap = cap
        self.left_out = left_out


def _time_us(value: object, option: str) -> int:
    """Check a window bound in simulated µs; return it in picoseconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise NicsimError(f"{option} = {value!r}: expected a number of simulated µs (>= 0)")
    if not math.isfinite(value) or value < 0 or value > 1e12:
        raise NicsimError(f"{option} = {value!r}: expected simulated µs in 0 ..= 1e12")
    return round(value * _PS_PER_US)


def request(
    path: str | Path | None,
    from_us: float | None = None,
    until_us: float | None = None,
    cap: int | None = None,
    *,
    names: tuple[str, str, str, str] = ("trace", "trace_from_us", "trace_until_us", "trace_cap"),
) -> Request | None:
    """Check the trace options before any run; ``None`` if no trace is asked for.

    ``names`` are the options as the caller spells them (the CLI's flags).

    Examples
    --------
    >>> request(None) is None
    True
    >>> request("t.json", from_us=50, until_us=10)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: trace_until_us = 10: must be above trace_from_us = 50
    """
    path_name, from_name, until_name, cap_name = names
    if path is None:
        values = (from_us, until_us, cap)
        given = [n for n, v in zip(names[1:], values, strict=True) if v is not None]
        if given:
            raise NicsimError(f"{given[0]}: needs {path_name} (the file to write the timeline to)")
        return None
    if not isinstance(path, (str, Path)) or not str(path):
        raise NicsimError(f"{path_name} = {path!r}: expected a file path (str or pathlib.Path)")
    start = _time_us(from_us, from_name) if from_us is not None else 0
    end = _time_us(until_us, until_name) if until_us is not None else None
    if end is not None and end <= start:
        raise NicsimError(f"{until_name} = {until_us}: must be above {from_name} = {from_us or 0}")
    if cap is None:
        cap = CAP_DEFAULT
    if isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= CAP_MAX:
        raise NicsimError(
            f"{cap_name} = {cap!r}: expected a whole number of events in 1 ..= {CAP_MAX:,}"
        )
    from nicsim import outputs  # with the first trace asked for: it loads `socket`

    target = outputs.check_file(path, path_name)
    return Request(target, start, end, cap)


def run(
    toml: str,
    req: Request,
    policy: Callable[[], Any] | None,
    progress: Callable[[int, int], object] | None,
) -> Metrics:
    """Run the scenario ``toml`` with its timeline; write it to ``req.target``."""
    from nicsim import outputs

    until = _UNTIL_NONE if req.until_ps is None else req.until_ps
    with outputs.atomic_file(req.target) as temp:
        metrics, data = _core.run_trace(toml, req.from_ps, until, req.cap, policy, progress)
        with open(temp, "w", encoding="utf-8") as out:
            write(out, data, req, metrics)
    left_out = int(data["over_cap"])
    del data  # the records: not held while the caller goes on
    if left_out:
        # At the caller of nicsim.run (which calls this through _run_core).
        warnings.warn(TraceCut(req.target, req.cap, left_out), stacklevel=4)
    return metrics


def _number(ps: int) -> float:
    """Picoseconds as µs, a JSON number."""
    return ps / _PS_PER_US


def _us(ps: int) -> str:
    """Picoseconds as µs, exactly (JSON number text)."""
    return f"{ps // _PS_PER_US}.{ps % _PS_PER_US:06d}"


def write(out: IO[str], data: Mapping[str, Any], req: Request, metrics: Mapping[str, Any]) -> None:
    """Write the timeline ``data`` of ``_core.run_trace`` as trace-event JSON."""
    kinds = []
    for name, cat, ph, arg in data["kinds"]:
        head = f'{{"name":{json.dumps(name)},"cat":"{cat}","ph":"{ph}"'
        kinds.append((head, ph, f'"{arg}":' if arg else ""))
    records = data["records"]
    count = len(records) // _RECORD.size
    other = {
        "generator": f"nicsim {_core.version()}",
        "time_unit": "ts and dur in simulated µs (picosecond digits)",
        "window_us": {
            "from": req.from_ps / _PS_PER_US,
            "until": None if req.until_ps is None else req.until_ps / _PS_PER_US,
            "kept": "events that overlap the window",
        },
        "event_cap": req.cap,
        "events": count,
        "cut_by_cap": data["over_cap"] > 0,
        "left_out_by_cap": data["over_cap"],
        "sim_time_us": metrics.get("sim_time_us"),
        "busy_categories": list(BUSY_CATEGORIES),
        "spin_overlap_us": [_number(ps) for ps in data["spin_overlap_ps"]],
        "busy_note": (
            "per host, the slices of the busy categories plus spin_overlap_us (spinning the "
            "CPU metrics count while a kernel segment of the same core ran, which no slice "
            "can hold) add up to hostN_cpu_cores x sim_time_us"
        ),
        "tracks": "a process per host; a thread per core, NIC tx (wire), one per NIC receive queue",
    }
    out.write('{"displayTimeUnit":"ns","otherData":')
    out.write(json.dumps(other, sort_keys=True))
    out.write(',"traceEvents":[\n')
    # One event at a time, each written as it is made: what is held is the
    # packed records, never the text.
    hosts_seen: set[int] = set()
    separator = ""
    for host, track, name in data["tracks"]:
        metadata = []
        if host not in hosts_seen:
            hosts_seen.add(host)
            metadata += [
                f'{{"name":"process_name","ph":"M","pid":{host},"args":{{"name":"host {host}"}}}}',
                f'{{"name":"process_sort_index","ph":"M","pid":{host},'
                f'"args":{{"sort_index":{host}}}}}',
            ]
        metadata += [
            f'{{"name":"thread_name","ph":"M","pid":{host},"tid":{track},'
            f'"args":{{"name":{json.dumps(name)}}}}}',
            f'{{"name":"thread_sort_index","ph":"M","pid":{host},"tid":{track},'
            f'"args":{{"sort_index":{track}}}}}',
        ]
        for line in metadata:
            out.write(separator)
            out.write(line)
            separator = ",\n"
    for ts, dur, flow, arg, host, track, what in _RECORD.iter_unpack(records):
        head, ph, arg_name = kinds[what]
        where = f'"pid":{host},"tid":{track},"ts":{_us(ts)}'
        if ph == "X":
            args = f',"args":{{{arg_name}{arg}}}' if arg_name else ""
            line = f'{head},{where},"dur":{_us(dur)}{args}}}'
        elif ph == "i":
            args = f',"args":{{{arg_name}{arg}}}' if arg_name else ""
            line = f'{head},"s":"t",{where}{args}}}'
        elif ph == "s":
            line = f'{head},"id":{flow},{where}}}'
        else:
            line = f'{head},"bp":"e","id":{flow},{where}}}'
        out.write(separator)
        out.write(line)
        separator = ",\n"
    out.write("\n]}\n")
