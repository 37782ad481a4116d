"""Plots of the [LCI] experiments (matplotlib).

This module owns the figures of :mod:`nicsim.studies.exp_lci`: one function per
experiment, drawing its result table on a figure. Drawing and saving the
file is :func:`nicsim.studies.plots.plot`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from matplotlib.figure import Figure

from nicsim.studies.exp_base import Published

__all__ = ["multicast", "multicast_apps", "polling", "timers", "watchdog"]


def polling(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw throughput and message rate against the payload per polling strategy."""
    throughput, rate = fig.subplots(1, 2)
    for strategy in dict.fromkeys(table["strategy"]):
        rows = table[table["strategy"] == strategy].sort_values("payload_bytes")
        throughput.plot(rows["payload_bytes"], rows["throughput_MBps"], marker="o", label=strategy)
        if "msg_rate_per_s" in rows:
            rate.plot(
                rows["payload_bytes"], rows["msg_rate_per_s"] / 1e3, marker="o", label=strategy
            )
    for ax in (throughput, rate):
        ax.axvline(1024, color="grey", linestyle=":", linewidth=1)
        ax.set_xlabel("payload (bytes); dotted: one 1 KB packet")
        ax.grid(True, alpha=0.3)
    throughput.set_ylabel("throughput (MB/s)")
    rate.set_ylabel("messages (k/s)")
    throughput.legend(title="polling")


def multicast(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw broadcast latency and sender throughput against the size per forwarding."""
    latency, throughput = fig.subplots(1, 2)
    for forwarding in dict.fromkeys(table["forwarding"]):
        rows = table[table["forwarding"] == forwarding].sort_values("size_bytes")
        x = rows["size_bytes"].clip(lower=1)
        latency.plot(x, rows["latency_us"], marker="o", label=forwarding)
        if "throughput_MBps" in rows:
            throughput.plot(x, rows["throughput_MBps"], marker="o", label=forwarding)
    for ax in (latency, throughput):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("broadcast size (bytes; 0 B drawn at 1)")
        ax.grid(True, alpha=0.3)
    latency.set_yscale("log")
    latency.set_ylabel("latency to the last of 63 receivers (us)")
    throughput.set_ylabel("sender throughput (MB/s)")
    latency.legend(title="forwarding")


def multicast_apps(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw ASP and QR execution time per forwarding scheme."""
    ax = fig.subplots()
    apps = list(dict.fromkeys(table["app"]))
    forwardings = list(dict.fromkeys(table["forwarding"]))
    width = 0.8 / max(len(forwardings), 1)
    for i, forwarding in enumerate(forwardings):
        rows = table[table["forwarding"] == forwarding].set_index("app")
        ax.bar(
            [a + i * width for a in range(len(apps))],
            [float(rows.loc[app, "exec_time_s"]) for app in apps],
            width,
            label=forwarding,
        )
    ax.set_xticks([a + width * (len(forwardings) - 1) / 2 for a in range(len(apps))])
    ax.set_xticklabels(apps)
    ax.set_ylabel("execution time (s)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(title="forwarding")


def watchdog(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw execution time and interrupts against the watchdog delay per DSM mix."""
    exec_ax, irq_ax = fig.subplots(1, 2)
    delays = list(dict.fromkeys(str(d) for d in table["delay_us"]))
    xs = range(len(delays))
    stuck: dict[str, list[str]] = {}
    for app in dict.fromkeys(table["app"]):
        mine = table[table["app"] == app]
        rows = mine.set_index(mine["delay_us"].astype(str)).reindex(delays)
        exec_ax.plot(xs, rows["exec_time_s"] * 1e3, marker="o", label=app)
        irq_ax.plot(xs, rows["interrupts"], marker="o", label=app)
        for d in rows.index[rows["stuck"] == 1]:
            stuck.setdefault(str(d), []).append(str(app))
    for d, apps in stuck.items():
        exec_ax.annotate(
            "stuck:\n" + "\n".join(apps),
            (delays.index(d), 0.02),
            xycoords=("data", "axes fraction"),
            ha="center",
            va="bottom",
            fontsize=7,
        )
    for ax in (exec_ax, irq_ax):
        ax.set_xticks(list(xs), delays)
        ax.set_xlabel("watchdog delay (us); none = at once, inf = no interrupts")
        ax.grid(True, alpha=0.3)
    exec_ax.set_ylabel("execution time (ms); stuck runs have none")
    irq_ax.set_ylabel("interrupts (signals delivered)")
    irq_ax.set_yscale("symlog", linthresh=1)
    irq_ax.set_ylim(bottom=0)
    exec_ax.legend(title="app")


def timers(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw FFT execution time, clock interrupts and stalls against the clock period."""
    exec_ax, irq_ax = fig.subplots(1, 2)
    rows = table.sort_values("clock_period_us")
    exec_ax.plot(rows["clock_period_us"], rows["exec_time_s"] * 1e3, marker="o")
    irq_ax.plot(
        rows["clock_period_us"], rows["clock_interrupts"], marker="o", label="clock interrupts"
    )
    irq_ax.plot(
        rows["clock_period_us"],
        rows["window_full_polls"],
        marker="s",
        label="polls with window full",
    )
    for ax in (exec_ax, irq_ax):
        ax.set_xscale("log")
        ax.set_xlabel("NI clock period (us)")
        ax.grid(True, alpha=0.3)
    exec_ax.set_ylabel("FFT execution time (ms)")
    irq_ax.set_ylabel("count")
    irq_ax.legend()
