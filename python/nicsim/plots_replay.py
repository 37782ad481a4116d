"""A replay's tables and plot: interrupts and delivery delay over time.

This module owns turning replays (:class:`nicsim.capture.ReplayResult`, one
per coalescing policy) into the tables ``nicsim replay --out`` writes (one
summary row per policy; the capture cut into equal time bins, per policy)
and the PNG of both over time, and the table of every frame
(:func:`write_frames`: ``frames.csv``, or ``replay --frames FILE``). It
never runs the simulator; it writes only the files it is asked for, into
the directory it is given (``nicsim replay --out`` gives it a staging
directory that :func:`nicsim.outputs.replace_set` moves in whole). A
failed write raises :class:`OSError` with the file's name
(:func:`nicsim.outputs.naming`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd

from nicsim import outputs
from nicsim.capture import percentile

if TYPE_CHECKING:
    from nicsim.capture import ReplayResult

__all__ = [
    "BINS",
    "FILES",
    "FRAME_COLUMNS",
    "plot",
    "summary_table",
    "timeline",
    "write",
    "write_frames",
]

#: Time bins of the timeline (the capture's span cut into this many).
BINS = 100
#: The files :func:`write` writes.
FILES = ("summary.csv", "timeline.csv", "timeline.png", "frames.csv")
#: The columns of the frames table, with what they hold.
FRAME_COLUMNS = {
    "policy": "the policy of the replay",
    "record": "the frame's record number in the capture (from 1, as Wireshark numbers them)",
    "segment": "which wire frame of a GRO/TSO super-frame (0: a frame within the MTU)",
    "bytes": "its length on the wire",
    "arrival_us": "its arrival at the NIC (µs from the first frame)",
    "delivery_us": "when the handler finished it (empty: dropped)",
    "delay_us": "delivery - arrival (empty: dropped)",
    "irq": "the interrupt it rode on: the host's count when its handler took it (empty: dropped)",
    "queue": "the receive queue steering chose (empty: dropped before steering)",
    "dropped": "dropped before the handler: ring full, or malformed Open-MX header",
}


def summary_table(results: Mapping[str, ReplayResult]) -> pd.DataFrame:
    """One row per policy: the numbers ``nicsim replay`` prints."""
    return pd.DataFrame([{"policy": name, **r.summary()} for name, r in results.items()])


def timeline(results: Mapping[str, ReplayResult], bins: int = BINS) -> pd.DataFrame:
    """Per policy and time bin: frames arrived, interrupts raised, delay p50/max (µs).

    Interrupts of a bin are those raised between the first arrival in it and
    the first arrival of the next (the count the host had at each arrival).
    """
    rows: list[dict[str, Any]] = []
    for name, r in results.items():
        if not r.arrival_ps:
            continue
        span = max(r.arrival_ps[-1], 1)
        width = span / bins
        per_bin: list[list[int]] = [[] for _ in range(bins)]
        for i, t in enumerate(r.arrival_ps):
            per_bin[min(int(t / width), bins - 1)].append(i)
        total = int(r.metrics["replay_interrupts"])
        for b, idx in enumerate(per_bin):
            later = next((per_bin[k][0] for k in range(b + 1, bins) if per_bin[k]), None)
            start = r.irq_before[idx[0]] if idx else 0
            end = r.irq_before[later] if later is not None else total
            delays = [r.delay_ps[i] / 1e6 for i in idx if r.delay_ps[i] >= 0]
            rows.append(
                {
                    "policy": name,
                    "time_us": round(b * width / 1e6, 3),
                    "frames": len(idx),
                    "interrupts": end - start if idx else 0,
                    "delay_p50_us": percentile(delays, 0.5),
                    "delay_max_us": max(delays, default=0.0),
                }
            )
    return pd.DataFrame(rows)


def plot(table: pd.DataFrame, path: Path, title: str) -> Path:
    """Draw interrupts per bin and the delay (p50; max dashed) over time, a colour per policy."""
    fig, (ax_irq, ax_delay) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for i, (name, rows) in enumerate(table.groupby("policy", sort=False)):
        colour = f"C{i}"
        ax_irq.step(rows["time_us"], rows["interrupts"], where="post", color=colour, label=name)
        ax_delay.plot(rows["time_us"], rows["delay_p50_us"], color=colour, label=f"{name} p50")
        ax_delay.plot(
            rows["time_us"], rows["delay_max_us"], color=colour, linestyle="--", linewidth=0.8
        )
    ax_irq.set_ylabel("interrupts per bin")
    ax_irq.legend(fontsize=8)
    ax_delay.set_ylabel("delivery delay, µs (dashed: max)")
    ax_delay.set_xlabel("capture time, µs")
    ax_irq.set_title(title, fontsize=10)
    fig.tight_layout()
    try:
        with outputs.naming(path):
            # No software/date metadata, so the bytes depend on the data only.
            fig.savefig(path, format="png", dpi=100, metadata={"Software": None})
    finally:
        plt.close(fig)
    return path


def write_frames(results: Mapping[str, ReplayResult], path: Path) -> Path:
    """Write one row per wire frame to the host and policy (:data:`FRAME_COLUMNS`) to ``path``.

    Written row by row (a capture of a million frames is not held as text).
    """
    import csv

    with outputs.naming(path), open(path, "w", encoding="utf-8", newline="") as out:
        rows = csv.writer(out, lineterminator="\n")
        rows.writerow(FRAME_COLUMNS)
        for name, r in results.items():
            number = r.record_number
            for k, arrival in enumerate(r.arrival_ps):
                delay = r.delay_ps[k]
                kept = delay >= 0
                queue = r.queue[k] if k < len(r.queue) else 255
                rows.writerow(
                    (
                        name,
                        number(k),
                        r.segment[k] if k < len(r.segment) else 0,
                        r.wire_len(k),
                        _us(arrival),
                        _us(arrival + delay) if kept else "",
                        _us(delay) if kept else "",
                        r.irq[k] if kept and k < len(r.irq) else "",
                        "" if queue == 255 else queue,
                        r.drop_reason(k),
                    )
                )
    return path


def _us(ps: int) -> str:
    """Picoseconds as µs with every digit ("12.345678")."""
    return f"{ps // 1_000_000}.{ps % 1_000_000:06d}"


def write(results: Mapping[str, ReplayResult], out: Path, title: str) -> list[Path]:
    """Write ``summary.csv``, ``timeline.csv``, ``timeline.png`` and ``frames.csv`` into ``out``."""
    out.mkdir(exist_ok=True)
    summary, line = summary_table(results), timeline(results)
    written = []
    for name, table in (("summary.csv", summary), ("timeline.csv", line)):
        with outputs.naming(out / name):
            (out / name).write_text(table.to_csv(index=False, float_format="%.6g"))
        written.append(out / name)
    written.append(plot(line, out / "timeline.png", title))
    written.append(write_frames(results, out / "frames.csv"))
    return written
