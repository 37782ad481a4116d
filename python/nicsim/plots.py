"""Plots of experiment tables (matplotlib, Agg backend, PNG).

This module owns figure layout per experiment id and a generic fallback for
experiments without a dedicated plot. It reads tables; it never runs the
simulator or writes anything but the PNG it is asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["PLOTTERS", "plot"]

Plotter = Callable[[pd.DataFrame, Figure], None]


SIZE_TICKS = {0: "0", 1: "1", 16: "16", 256: "256", 4096: "4K", 65536: "64K", 1 << 20: "1M"}


def _size_axis(ax: Axes) -> None:
    # symlog keeps the 0-byte point on a logarithmic size axis.
    ax.set_xscale("symlog", base=2, linthresh=1)
    ax.set_xticks(list(SIZE_TICKS), list(SIZE_TICKS.values()))
    ax.set_xlabel("message size (bytes)")
    ax.grid(True, which="major", alpha=0.3)


def _pingpong(table: pd.DataFrame, fig: Figure) -> None:
    latency, throughput = fig.subplots(1, 2)
    for strategy, rows in table.groupby("strategy", sort=False):
        latency.plot(rows["size_bytes"], rows["latency_us"], marker=".", label=str(strategy))
        throughput.plot(
            rows["size_bytes"], rows["throughput_MiBps"], marker=".", label=str(strategy)
        )
    for ax in (latency, throughput):
        _size_axis(ax)
        ax.legend(title="strategy")
    latency.set_yscale("log")
    latency.set_ylabel("latency (µs)")
    throughput.set_ylabel("throughput (MiB/s)")


def _delay_sweep(table: pd.DataFrame, fig: Figure) -> None:
    rate, irqs = fig.subplots(1, 2)
    for (binding, sleep), rows in table.groupby(["irq_binding", "sleep"], sort=False):
        label = f"irq {binding}, sleep {sleep}"
        rate.plot(rows["delay_us"], rows["msg_rate_per_s"] / 1e3, marker="o", label=label)
        irqs.plot(rows["delay_us"], rows["interrupts_per_msg"], marker="o", label=label)
    for ax in (rate, irqs):
        ax.set_xlabel("coalescing delay (µs)")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    rate.set_ylabel("message rate (k msg/s)")
    irqs.set_ylabel("interrupts per message")
    rate.legend()


def _grouped_bars(ax: Axes, table: pd.DataFrame, group: str, series: str, metric: str) -> None:
    groups = list(dict.fromkeys(table[group]))
    names = list(dict.fromkeys(table[series]))
    width = 0.8 / max(len(names), 1)
    for k, name in enumerate(names):
        rows = table[table[series] == name].set_index(group).reindex(groups)
        xs = [i + (k - (len(names) - 1) / 2) * width for i in range(len(groups))]
        ax.bar(xs, rows[metric], width=width, label=f"{series} {name}")
    ax.set_xticks(range(len(groups)), [str(g) for g in groups])
    ax.set_xlabel(group)
    ax.grid(True, axis="y", alpha=0.3)


def _msgrate(table: pd.DataFrame, fig: Figure) -> None:
    sizes = list(dict.fromkeys(table["size_bytes"]))
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    for ax, size in zip(axes, sizes, strict=True):
        rows = table[table["size_bytes"] == size]
        ax.bar(rows["strategy"], rows["msg_rate_per_s"] / 1e3, color="C0")
        ax.set_title(f"{size} B")
        ax.set_xlabel("strategy")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("message rate (k msg/s)")


def _irq_overhead(table: pd.DataFrame, fig: Figure) -> None:
    ax = fig.subplots()
    _grouped_bars(ax, table, "strategy", "irq_binding", "overhead_ns_per_packet")
    ax.set_ylabel("overhead per packet (ns)")
    ax.legend()


def _generic(table: pd.DataFrame, fig: Figure, parameters: tuple[str, ...], metric: str) -> None:
    ax = fig.subplots()
    x = parameters[-1]
    series = parameters[:-1]
    groups = table.groupby(list(series), sort=False) if series else [("", table)]
    for key, rows in groups:
        ax.plot(rows[x].astype(str), rows[metric], marker="o", label=str(key))
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    if series:
        ax.legend(title=", ".join(series))


#: Dedicated plot per experiment id.
PLOTTERS: dict[str, Plotter] = {
    "coalescing-pingpong": _pingpong,
    "coalescing-delay-sweep": _delay_sweep,
    "coalescing-msgrate": _msgrate,
    "coalescing-irq-overhead": _irq_overhead,
}


def plot(
    exp_id: str,
    title: str,
    table: pd.DataFrame,
    parameters: tuple[str, ...],
    metrics: tuple[str, ...],
    path: Path,
) -> Path:
    """Draw the experiment's figure and save it as PNG at ``path``."""
    fig = plt.figure(figsize=(11, 4.5), layout="constrained")
    try:
        plotter = PLOTTERS.get(exp_id)
        if plotter is not None:
            plotter(table, fig)
        else:
            _generic(table, fig, parameters, metrics[0])
        fig.suptitle(f"{exp_id}: {title}")
        # No software/date metadata, so the bytes depend on the data only.
        fig.savefig(path, dpi=100, metadata={"Software": None})
    finally:
        plt.close(fig)
    return path
