"""The size benchmarks' measurements (``nicsim bench --kind alltoall|exchange|nas-is``).

A size benchmark runs the same work per rank at N = 2, 4, ... ``procs``
ranks and reports, for each N, the cost of an event of the event loop and
what else a run costs (its build, wall time, peak memory). This module
takes the measurements and reduces them to one row per N; the command
prints the rows as a table and may write them as CSV, each row naming the
build it timed (the version and a digest of the compiled core), to keep a
benchmark's history across builds.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from nicsim import _core
from nicsim.progress import Reporter
from nicsim.store import build_id

#: The size benchmarks: how their ranks are laid out.
SIZE_BENCHES = {
    "alltoall": "1 rank per host",
    "exchange": "IMB Exchange, 1 rank per host",
    "nas-is": "8 ranks per host, NAS IS class S",
}

#: One run of a size benchmark at N ranks: the core's figures.
BenchFn = Callable[[str, int], dict[str, float]]

#: The columns of a row, in the CSV's order.
COLUMNS = (
    "kind",
    "procs",
    "events",
    "runs",
    "ns_per_event",
    "ns_per_event_min",
    "ns_per_event_max",
    "x_n2",
    "build_s",
    "wall_s",
    "peak_rss_MiB",
    "dropped",
    "sim_time_ms",
    "messages_per_rank",
    "min_loop_s",
    "rounds",
    "build",
)


def check_procs(kind: str, procs: int) -> str | None:
    """Why ``procs`` is out of range for the size benchmark ``kind`` (``None``: it is not).

    >>> check_procs("alltoall", 1024) is None
    True
    >>> print(check_procs("alltoall", 3000))
    --procs 3000: must be from 2 to 1024 for alltoall (1 rank per host)
    """
    top = _core.SCALE_MAX_PROCS[kind]
    if 2 <= procs <= top:
        return None
    return f"--procs {procs}: must be from 2 to {top} for {kind} ({SIZE_BENCHES[kind]})"


def sizes(procs: int) -> list[int]:
    """N = 2, 4, 8, ... up to ``procs``.

    >>> sizes(10)
    [2, 4, 8]
    """
    return [2 << i for i in range(procs.bit_length()) if 2 << i <= procs]


def size_rows(
    kind: str,
    procs: int,
    repeat: int,
    bench: BenchFn | None = None,
    reporter: Reporter | None = None,
) -> list[dict[str, float | str]]:
    """Measure ``kind`` at every N and return one row per N (see :data:`COLUMNS`).

    Each N is measured in ``repeat`` rounds and its times are the medians,
    its peak RSS the least; the events, drops and simulated time are those
    of every run (runs are deterministic). Within a round the core runs a
    small N's world several times over (its ``runs``), so that every figure
    rests on a quarter of a second of event loop or more.
    The rounds go round all the sizes in turn (2, 4, ... procs, then again),
    so that a change in the machine's load over the minutes of a bench
    falls on every N alike rather than on a few, and the ratio to N = 2 is
    taken between runs spread over the same span.
    ``reporter`` draws a bar counted in ranks (an N's run is N ranks'
    work, as every rank sends the same messages), on a terminal only.
    A ``procs`` out of :func:`check_procs`' range raises ``ValueError``
    before any run.
    """
    error = check_procs(kind, procs)
    if error is not None:
        raise ValueError(error)
    run = bench or _core.bench
    shown = reporter or Reporter(None)
    ns_list = sizes(procs)
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in ns_list}
    with shown.bar(total=repeat * sum(ns_list)):
        for _ in range(repeat):
            for n in ns_list:
                runs[n].append(run(kind, n))
                shown.advance(n)
    base = statistics.median(r["ns_per_event"] for r in runs[ns_list[0]])
    build = build_id()
    rows: list[dict[str, float | str]] = []
    for n in ns_list:
        rs = runs[n]
        ns = [r["ns_per_event"] for r in rs]
        first = rs[0]
        median = statistics.median(ns)
        rows.append(
            {
                "kind": kind,
                "procs": n,
                "events": first["events"],
                "runs": statistics.median(r.get("runs", 1.0) for r in rs),
                "ns_per_event": median,
                "ns_per_event_min": min(ns),
                "ns_per_event_max": max(ns),
                "x_n2": median / base,
                "build_s": statistics.median(r["build_s"] for r in rs),
                "wall_s": statistics.median(r["wall_s"] for r in rs),
                # The least over the rounds: a run's peak counts what the
                # allocator still holds from a larger run before it, and only
                # the first round runs the sizes smallest first.
                "peak_rss_MiB": min(r["peak_rss_MiB"] for r in rs),
                "dropped": first["dropped"],
                "sim_time_ms": first["sim_time_ms"],
                "messages_per_rank": first["messages_per_rank"],
                "min_loop_s": first.get("min_loop_s", 0.0),
                "rounds": repeat,
                "build": build,
            }
        )
    return rows


def write_csv(
    path: Path, rows: Sequence[dict[str, float | str]], columns: Sequence[str] = COLUMNS
) -> None:
    """Write the rows as CSV, in ``columns`` order, every float in full (``repr``)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(
                [repr(row[c]) if isinstance(row[c], float) else row[c] for c in columns]
            )
