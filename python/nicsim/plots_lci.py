"""Plots of the [LCI] experiments, registered into :data:`nicsim.plots.PLOTTERS`.

One function per experiment id, drawing a result table on a figure; the
multicast and watchdog/timers phases add theirs to :data:`LCI_PLOTTERS`.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
from matplotlib.figure import Figure

__all__ = ["LCI_PLOTTERS"]


def _polling(table: pd.DataFrame, fig: Figure) -> None:
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


def _multicast(table: pd.DataFrame, fig: Figure) -> None:
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


def _multicast_apps(table: pd.DataFrame, fig: Figure) -> None:
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


#: Dedicated plot per LCI experiment id.
LCI_PLOTTERS: dict[str, Callable[[pd.DataFrame, Figure], None]] = {
    "lci-polling": _polling,
    "lci-multicast": _multicast,
    "lci-multicast-apps": _multicast_apps,
}
