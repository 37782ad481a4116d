"""Plots of the [OMX-COAL] experiments and of ``napi-knobs`` (matplotlib).

This module owns the figures of :mod:`nicsim.studies.exp_coal`,
:mod:`nicsim.studies.exp_coal_transfer`,
:mod:`nicsim.studies.exp_coal_nas` and :mod:`nicsim.studies.exp_napi`. They follow the
study (Goglin & Furmento, Cluster 2009): ping-pong time normalised to
"coalescing disabled", message rate against the coalescing delay,
per-strategy bars with the published numbers as black markers. The study's
four strategies are drawn solid; rows beyond the study (``adaptive``,
``openmx-adaptive``, anything unknown) dashed or lighter and labelled
"beyond the study". Drawing and saving the file is :func:`nicsim.studies.plots.plot`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from nicsim.studies.exp_base import Plotter, Published
from nicsim.studies.plots import (
    BEYOND,
    PUBLISHED_STYLE,
    cell_value,
    headroom,
    label_above,
    log_positive,
    note,
    published_at,
    published_cells,
    size_axis,
    size_label,
    unique,
    x_sizes,
)

__all__ = [
    "STUDY_STRATEGIES",
    "delay_sweep",
    "irq_overhead",
    "marking",
    "misorder",
    "msgrate",
    "napi_knobs",
    "nas",
    "pingpong",
    "transfer",
]

#: The strategies of [OMX-COAL], in the study's order; anything else is "beyond the study".
STUDY_STRATEGIES = ("disabled", "timeout", "openmx", "stream")
#: Longer legend labels, as the study names the strategies.
STRATEGY_LABELS = {
    "disabled": "disabled (no coalescing)",
    "timeout": "timeout (75 µs, NIC default)",
    "openmx": "openmx (marked packets)",
    "stream": "stream (openmx + stream detection)",
}
_STUDY_COLOURS = {"disabled": "C0", "timeout": "C1", "openmx": "C2", "stream": "C3"}
_BEYOND_COLOURS = ("C4", "C5", "C6", "C8", "C9")
_MARKERS = {"disabled": "o", "timeout": "s", "openmx": "^", "stream": "v"}
PUBLISHED_LABEL = "published [OMX-COAL]"


# -- helpers ----------------------------------------------------------------


@dataclass(frozen=True)
class _Style:
    colour: str
    study: bool
    marker: str
    label: str


def _strategies(table: pd.DataFrame) -> list[str]:
    """Return the strategies present: the study's in its order, then the others as they appear."""
    present = [str(s) for s in unique(table["strategy"])]
    return [s for s in STUDY_STRATEGIES if s in present] + [
        s for s in present if s not in STUDY_STRATEGIES
    ]


def _styles(strategies: Sequence[str]) -> dict[str, _Style]:
    styles: dict[str, _Style] = {}
    beyond = 0
    for name in strategies:
        if name in STUDY_STRATEGIES:
            styles[name] = _Style(_STUDY_COLOURS[name], True, _MARKERS[name], name)
        else:
            colour = _BEYOND_COLOURS[beyond % len(_BEYOND_COLOURS)]
            beyond += 1
            styles[name] = _Style(colour, False, "x", f"{name} ({BEYOND})")
    return styles


def _line_kwargs(style: _Style, long_label: bool = True) -> dict[str, Any]:
    label = STRATEGY_LABELS.get(style.label, style.label) if long_label else style.label
    if style.study:
        return {"color": style.colour, "marker": style.marker, "markersize": 3.5, "label": label}
    return {
        "color": style.colour,
        "marker": style.marker,
        "markersize": 3.5,
        "linestyle": "--",
        "alpha": 0.6,
        "label": label,
    }


def _bar_kwargs(style: _Style) -> dict[str, Any]:
    if style.study:
        return {"color": style.colour, "edgecolor": "black", "linewidth": 0.5}
    return {
        "color": style.colour,
        "alpha": 0.45,
        "hatch": "//",
        "edgecolor": style.colour,
        "linewidth": 0.5,
    }


def _strategy_bars(
    ax: Axes,
    table: pd.DataFrame,
    metric: str,
    scale: float = 1.0,
    annotate: str | None = None,
) -> dict[str, float]:
    """One bar per strategy (study first, extras hatched); return strategy → x."""
    strategies = _strategies(table)
    styles = _styles(strategies)
    xs: dict[str, float] = {}
    for i, name in enumerate(strategies):
        value = cell_value(table, metric, strategy=name)
        xs[name] = float(i)
        if value is None:
            ax.text(i, 0, "n/a", ha="center", va="bottom", fontsize=8, color="0.35")
            continue
        ax.bar(i, value * scale, width=0.7, **_bar_kwargs(styles[name]))
        if annotate is not None:
            label_above(ax, annotate % (value * scale), i, value * scale, fontsize=7)
    ax.set_xticks(range(len(strategies)), strategies, rotation=20, ha="right")
    _mark_beyond(ax, strategies)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return xs


def _mark_beyond(ax: Axes, strategies: Sequence[str]) -> None:
    """Separate the extra strategies (the last ones on the x axis) with a dotted line."""
    first = next((i for i, s in enumerate(strategies) if s not in STUDY_STRATEGIES), None)
    if first is None:
        return
    if first > 0:
        ax.axvline(first - 0.5, color="0.5", linestyle=":", linewidth=1)
    ax.text(
        (first - 0.5 + len(strategies) - 0.5) / 2,
        0.98,
        BEYOND,
        transform=ax.get_xaxis_transform(),
        ha="center",
        va="top",
        fontsize=7,
        color="0.35",
        style="italic",
    )


def _grouped_bars(
    ax: Axes, table: pd.DataFrame, group: str, series: str, metric: str, scale: float = 1.0
) -> dict[tuple[Any, Any], float]:
    """Bars of ``metric`` grouped by ``group`` on x, one colour per ``series``.

    Returns the x position of each drawn ``(group, series)`` bar.
    """
    groups = unique(table[group])
    if series == "strategy":
        names: list[Any] = _strategies(table)
        styles = _styles(names)
    else:
        names = unique(table[series])
        styles = {}
    width = 0.8 / max(len(names), 1)
    positions: dict[tuple[Any, Any], float] = {}
    for k, name in enumerate(names):
        xs: list[float] = []
        ys: list[float] = []
        for i, g in enumerate(groups):
            value = cell_value(table, metric, **{group: g, series: name})
            if value is not None:
                x = i + (k - (len(names) - 1) / 2) * width
                xs.append(x)
                ys.append(value * scale)
                positions[(g, name)] = x
        if name in styles:
            style = styles[name]
            kwargs = _bar_kwargs(style)
            label = style.label
        else:
            kwargs = {"color": f"C{k % 10}", "edgecolor": "black", "linewidth": 0.5}
            label = f"{series} {name}"
        ax.bar(xs, ys, width=width, label=label, **kwargs)
    ax.set_xticks(range(len(groups)), [str(g) for g in groups])
    ax.set_xlabel(group)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return positions


# -- [OMX-COAL] plotters ----------------------------------------------------


def pingpong(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw (a) latency normalised to ``disabled`` and (b) throughput against the size."""
    normalised, throughput = fig.subplots(1, 2)
    strategies = _strategies(table)
    styles = _styles(strategies)
    disabled = (
        table[table["strategy"] == "disabled"]
        .drop_duplicates("size_bytes")
        .set_index("size_bytes")["latency_us"]
    )
    has_zero = bool((table["size_bytes"] == 0).any())
    for name in strategies:
        rows = table[table["strategy"] == name].sort_values("size_bytes", kind="stable")
        kwargs = _line_kwargs(styles[name])
        if not disabled.empty:
            reference = rows["size_bytes"].map(disabled).to_numpy(dtype=float)
            ratio = rows["latency_us"].to_numpy(dtype=float) / reference
            keep = np.isfinite(ratio) & (ratio > 0)
            xs = x_sizes(rows["size_bytes"])
            normalised.plot(xs[keep], ratio[keep], **kwargs)
        # Throughput is undefined (reported 0) at 0 B: drawn from 1 B on.
        sized = rows[rows["size_bytes"] > 0]
        throughput.plot(sized["size_bytes"], sized["throughput_MiBps"], **kwargs)

    size_axis(normalised, has_zero)
    normalised.set_xlabel(
        "message size (bytes)" + (", 0 B drawn at the left edge" if has_zero else "")
    )
    normalised.set_title("(a) ping-pong transfer time normalised to disabled", fontsize=10)
    normalised.set_ylabel("latency / latency(disabled)")
    if disabled.empty:
        note(normalised, "no `disabled` rows: nothing to normalise to")
    else:
        normalised.axhline(1.0, color="black", linewidth=0.8)
        normalised.set_yscale("log", base=2)
        normalised.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        normalised.yaxis.set_minor_formatter(NullFormatter())
        normalised.legend(title="strategy", fontsize=7, title_fontsize=8)

    size_axis(throughput, False)
    throughput.set_xlabel("message size (bytes)")
    throughput.set_title("(b) ping-pong throughput", fontsize=10)
    throughput.set_ylabel("throughput (MiB/s)")
    throughput.set_ylim(bottom=0)
    if strategies:
        throughput.legend(title="strategy", fontsize=7, title_fontsize=8)


def delay_sweep(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw (a) message rate and (b) interrupts per message against the delay."""
    rate, irqs = fig.subplots(1, 2)
    bindings = unique(table["irq_binding"])
    combos = unique(zip(table["irq_binding"], table["sleep"], strict=True))
    for binding, sleep in combos:
        rows = table[(table["irq_binding"] == binding) & (table["sleep"] == sleep)]
        rows = rows.sort_values("delay_us", kind="stable")
        style: dict[str, Any] = {
            "color": f"C{bindings.index(binding) % 10}",
            "linestyle": "-" if sleep == "on" else "--",
            "marker": "o" if sleep == "on" else "s",
            "markersize": 4,
            "fillstyle": "full" if sleep == "on" else "none",
            "label": f"irq {binding}, sleep {sleep}",
        }
        rate.plot(rows["delay_us"], rows["msg_rate_per_s"] / 1e3, **style)
        irqs.plot(rows["delay_us"], rows["interrupts_per_msg"], **style)
    for cell, published_rate in published_cells(published):
        if cell.metric == "msg_rate_per_s":
            rate.plot([cell.get("delay_us")], [published_rate / 1e3], **PUBLISHED_STYLE)
            where = (
                f"{cell.get('delay_us')} µs, {cell.get('irq_binding')}, sleep {cell.get('sleep')}"
            )
            rate.plot([], [], label=f"{PUBLISHED_LABEL} ({where})", **PUBLISHED_STYLE)
    for ax in (rate, irqs):
        ax.set_xlabel("coalescing delay (µs)")
        ax.grid(True, alpha=0.3)
    rate.set_ylim(bottom=0)
    rate.set_ylabel("message rate (k msg/s)")
    rate.set_title("(a) 128 B stream message rate", fontsize=10)
    irqs.set_ylabel("interrupts per message")
    irqs.set_title("(b) interrupts per message", fontsize=10)
    log_positive(irqs, table["interrupts_per_msg"])
    rate.legend(fontsize=7, loc="lower right")


def msgrate(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw message-rate bars per strategy, one panel per size, published rates marked."""
    sizes = unique(table["size_bytes"])
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    published_drawn = False
    for ax, size in zip(axes, sizes, strict=True):
        rows = table[table["size_bytes"] == size]
        # k msg/s where rates are large, msg/s where they are not (scales differ per size).
        kilo = bool((rows["msg_rate_per_s"] >= 1e4).any())
        scale = 1e-3 if kilo else 1.0
        xs = _strategy_bars(ax, rows, "msg_rate_per_s", scale=scale, annotate="%.3g")
        for name, x in xs.items():
            for rate in published_at(published, "msg_rate_per_s", strategy=name, size_bytes=size):
                ax.plot([x], [rate * scale], **PUBLISHED_STYLE)
                published_drawn = True
        ax.set_title(size_label(size), fontsize=10)
        ax.set_ylabel("message rate (k msg/s)" if kilo else "message rate (msg/s)")
        headroom(ax)
    if published_drawn:
        axes[0].plot([], [], label=PUBLISHED_LABEL, **PUBLISHED_STYLE)
        axes[0].legend(fontsize=7, loc="lower left")


def irq_overhead(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw overhead-per-packet bars per strategy and binding, published values marked."""
    ax = fig.subplots()
    positions = _grouped_bars(ax, table, "strategy", "irq_binding", "overhead_ns_per_packet")
    drawn = False
    for (strategy, binding), x in positions.items():
        for overhead in published_at(
            published, "overhead_ns_per_packet", strategy=strategy, irq_binding=binding
        ):
            ax.plot([x], [overhead], **PUBLISHED_STYLE)
            ax.annotate(
                f"{overhead:.0f}",
                (x, overhead),
                xytext=(7, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
            drawn = True
    if drawn:
        ax.plot([], [], label=PUBLISHED_LABEL, **PUBLISHED_STYLE)
    ax.set_ylabel("overhead per packet (ns)")
    ax.set_title("receive-stack overhead per 128 B packet (flood, soaker)", fontsize=10)
    headroom(ax, 1.25)
    if positions:
        ax.legend(fontsize=8, loc="upper center", ncols=3)


def transfer(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw (a) transfer time and (b) interrupts per transfer, one bar per strategy."""
    time, irqs = fig.subplots(1, 2)
    _strategy_bars(time, table, "transfer_time_us", annotate="%.0f")
    time.set_ylabel("transfer time (µs)")
    time.set_title("(a) time of one 234 KiB transfer", fontsize=10)
    headroom(time)
    _strategy_bars(irqs, table, "interrupts", annotate="%.1f")
    irqs.set_ylabel("interrupts per transfer (both hosts)")
    irqs.set_title("(b) interrupts per transfer", fontsize=10)
    headroom(irqs)


def marking(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw the transfer time per class left unmarked, against all marked."""
    ax = fig.subplots()
    classes = unique(table["unmarked_class"])
    reference = cell_value(table, "transfer_time_us", unmarked_class="none")
    for i, cls in enumerate(classes):
        value = cell_value(table, "transfer_time_us", unmarked_class=cls)
        if value is None:
            continue
        colour = "0.6" if cls == "none" else "C2"
        ax.bar(i, value, width=0.6, color=colour, edgecolor="black", linewidth=0.5)
        text = f"{value:.0f}"
        if reference is not None and cls != "none":
            text += f"\n({value / reference - 1:+.1%})"
        label_above(ax, text, i, value, fontsize=8)
    if reference is not None:
        ax.axhline(
            reference,
            color="black",
            linestyle="--",
            linewidth=1,
            label="all classes marked (none unmarked)",
        )
        ax.legend(fontsize=8, loc="lower right")
    ax.set_xticks(range(len(classes)), [str(c) for c in classes])
    ax.set_xlabel("packet class left unmarked (openmx)")
    ax.set_ylabel("transfer time (µs)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    headroom(ax)


def _label_bars(
    ax: Axes,
    table: pd.DataFrame,
    positions: dict[tuple[Any, Any], float],
    group: str,
    metric: str,
    fmt: str,
) -> None:
    for (g, name), x in positions.items():
        value = cell_value(table, metric, **{group: g, "strategy": name})
        if value is not None:
            label_above(ax, fmt % value, x, value, fontsize=7)


def misorder(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw (a) deferral success and (b) transfer time per mis-ordering degree."""
    success, time = fig.subplots(1, 2)
    positions = _grouped_bars(success, table, "degree", "strategy", "deferral_success_rate")
    _label_bars(success, table, positions, "degree", "deferral_success_rate", "%.2f")
    success.set_ylabel("deferral success rate")
    success.set_ylim(0, 1.3)
    success.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    success.set_title("(a) early marked fragment deferred (no interrupt)", fontsize=10)
    positions = _grouped_bars(time, table, "degree", "strategy", "transfer_time_us")
    _label_bars(time, table, positions, "degree", "transfer_time_us", "%.1f")
    time.set_ylabel("transfer time (µs)")
    time.set_title("(b) time of one 32 KiB medium message", fontsize=10)
    headroom(time, 1.25)
    for ax in (success, time):
        ax.set_xlabel("mis-ordering degree (fragments the last one overtakes)")
        ax.legend(fontsize=8, loc="upper center", ncols=3)


def nas(column: str, name: str = "{}") -> Plotter:
    """Return the NAS figure with a column of panels per value of ``column``.

    Each column draws execution time (published marked, axis zoomed on the
    values) and interrupts per strategy; ``name`` formats the value into
    the panel titles (``"is.{}.16"`` for a class).
    """

    def draw(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
        values_of_column = unique(table[column])
        axes = fig.subplots(2, len(values_of_column), squeeze=False)
        for col, value in enumerate(values_of_column):
            rows = table[table[column] == value]
            title = name.format(value)
            time, irqs = axes[0][col], axes[1][col]
            xs = _strategy_bars(time, rows, "exec_time_s", annotate="%.2f")
            values = [v for v in rows["exec_time_s"] if not pd.isna(v)]
            label: str | None = PUBLISHED_LABEL  # one legend entry, however many marks
            for strategy, x in xs.items():
                for seconds in published_at(
                    published, "exec_time_s", **{column: value, "strategy": strategy}
                ):
                    time.plot([x], [seconds], label=label, **PUBLISHED_STYLE)
                    label = None
                    values.append(seconds)
            # Differences are a few percent: zoom on the values (the axis does not start at 0).
            if values:
                low, high = min(values), max(values)
                span = max(high - low, 0.02 * high)
                time.set_ylim(low - 0.6 * span, high + 0.6 * span)
            time.set_title(f"{title}: execution time (axis not from 0)", fontsize=10)
            time.set_ylabel("execution time (s)")
            if time.get_legend_handles_labels()[0]:
                time.legend(fontsize=7, loc="best")
            _strategy_bars(irqs, rows, "interrupts", annotate="%.0f")
            irqs.set_title(f"{title}: interrupts", fontsize=10)
            irqs.set_ylabel("interrupts")
            headroom(irqs)

    return draw


def napi_knobs(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Latency (ping-pong), message rate (stream) and CPU use per NAPI configuration."""
    if table.empty:
        note(fig.subplots(), "no rows")
        return
    configs = unique(table["config"])
    axes = fig.subplots(1, 3)
    panels = (
        ("pingpong", "latency_us", "0 B one-way latency (µs)"),
        ("stream", "msg_rate_per_s", "0 B stream rate (msg/s)"),
        (None, "cpu_cores", "receiver CPU use (cores busy)"),
    )
    y = np.arange(len(configs))
    for ax, (workload, metric, title) in zip(axes, panels, strict=True):
        if workload is None:
            for k, w in enumerate(("pingpong", "stream")):
                vals = [cell_value(table, metric, config=c, workload=w) or 0.0 for c in configs]
                ax.barh(y + (k - 0.5) * 0.4, vals, height=0.4, label=w)
            ax.legend(fontsize=7)
        else:
            vals = [cell_value(table, metric, config=c, workload=workload) or 0.0 for c in configs]
            ax.barh(y, vals, height=0.6, color="tab:blue")
        ax.set_yticks(y, configs if ax is axes[0] else [""] * len(configs), fontsize=8)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=9)
