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


#: Dedicated plot per LCI experiment id.
LCI_PLOTTERS: dict[str, Callable[[pd.DataFrame, Figure], None]] = {
    "lci-polling": _polling,
}
