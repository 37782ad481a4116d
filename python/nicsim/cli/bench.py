"""``nicsim bench``: time the simulator, per event or by system size.

This module owns the command's options, their bounds and the tables; the
benchmarks are :mod:`nicsim.bench` (by size) and the core's own
(``engine``, ``pingpong``, ``stream``).

It evaluates its annotations when it defines its functions, as every
command module does (:mod:`nicsim.cli` says why).
"""

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nicsim import _core
from nicsim.cli.common import console
from nicsim.cli.exits import fail

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["bench_command"]


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


class BenchKind(str, Enum):
    engine = "engine"
    pingpong = "pingpong"
    stream = "stream"
    alltoall = "alltoall"
    exchange = "exchange"
    nas_is = "nas-is"


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
            fail(f"--out {out}: unknown file type {out.suffix!r} (allowed: .csv)")
        outputs.check_file(out, "--out")
    sized = kind.value in bench.SIZE_BENCHES
    unused = [("--count", count)] if sized else [("--procs", procs), ("--repeat", repeat)]
    for flag, value in unused:
        if value is not None:
            applies = "engine, pingpong, stream" if sized else ", ".join(bench.SIZE_BENCHES)
            fail(f"{flag} {value}: --kind {kind.value} does not read it (it applies to {applies})")
    rows: list[dict[str, Any]]
    columns: tuple[str, ...]
    if sized:
        procs = BENCH_PROCS if procs is None else procs
        repeat = 1 if repeat is None else repeat
        procs_error = bench.check_procs(kind.value, procs)
        if procs_error is not None:
            fail(procs_error)
        if not 1 <= repeat <= REPEAT_LIMIT:
            fail(f"--repeat {repeat}: must be from 1 to {REPEAT_LIMIT}")
        from nicsim.progress import Reporter

        reporter = Reporter(f"nicsim bench {kind.value}", unit="ranks")
        rows = bench.size_rows(kind.value, procs, repeat, reporter=reporter)
        columns = bench.COLUMNS
        console().print(_size_table(kind.value, procs, repeat, rows), crop=False)
    else:
        count = BENCH_COUNT if count is None else count
        top, what = COUNT_LIMITS[kind.value]
        if not 1 <= count <= top:
            fail(f"--count {count}: must be from 1 to {top} ({what})")
        from rich.table import Table

        result = _core.bench(kind.value, count)
        table = Table(title=f"nicsim bench {kind.value} ({count})")
        table.add_column("measure")
        table.add_column("value", justify="right")
        for name, figure in result.items():
            table.add_row(name, f"{figure:,.0f}" if figure >= 1000 else f"{figure:.4g}")
        console().print(table)
        rows = [{"kind": kind.value, "count": count, **result, "build": build_id()}]
        columns = tuple(rows[0])
    if out is not None:
        with outputs.atomic_file(out) as temp:
            bench.write_csv(temp, rows, columns)
        console().print(f"wrote {out}")
