"""Plots of experiment tables (matplotlib, Agg backend, PNG).

This module owns figure layout per experiment id and a generic fallback for
experiments without a dedicated plot. It reads tables; it never runs the
simulator or writes anything but the PNG it is asked for.

The [OMX-COAL] figures follow the study (Goglin & Furmento, Cluster 2009):
ping-pong time normalised to "coalescing disabled", message rate against the
coalescing delay, per-strategy bars with the published numbers as black
markers. The study's four strategies are drawn solid; rows beyond the study
(``adaptive``, ``openmx-adaptive``, anything unknown) dashed or lighter and
labelled "beyond the study". Every plotter draws whatever rows the table has,
so a custom subset of an experiment still plots.

The [OMX-MQ] figures (Goglin, "Cache-efficient Open-MX receive stack")
draw latency and throughput against the message size per interrupt steering
and process binding (I/OAT off solid, on dashed), the cache miss rates per
steering/binding as grouped bars, and the Alltoall time relative to native
MX. Each configuration keeps its colour whatever subset of rows is drawn;
DCA is beyond the study.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

__all__ = ["PLOTTERS", "PUBLISHED_MARKERS", "STUDY_STRATEGIES", "plot"]

Plotter = Callable[[pd.DataFrame, Figure], None]

#: The strategies of [OMX-COAL], in the study's order; anything else is "beyond the study".
STUDY_STRATEGIES = ("disabled", "timeout", "openmx", "stream")
BEYOND = "beyond the study"
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
PUBLISHED_STYLE: dict[str, Any] = {
    "color": "black",
    "marker": "D",
    "markersize": 6,
    "linestyle": "none",
    "zorder": 5,
}
PUBLISHED_LABEL = "published [OMX-COAL]"

#: Published values drawn as markers: experiment id → ((row selector, metric, value), ...).
#: They repeat the ``published`` entries of :mod:`nicsim.experiments` (a test
#: checks that they agree).
PUBLISHED_MARKERS: dict[str, tuple[tuple[dict[str, str | int], str, float], ...]] = {
    "coalescing-delay-sweep": (
        ({"delay_us": 75, "irq_binding": "rr", "sleep": "on"}, "msg_rate_per_s", 433000.0),
    ),
    "coalescing-msgrate": (
        ({"strategy": "disabled", "size_bytes": 0}, "msg_rate_per_s", 252000.0),
        ({"strategy": "timeout", "size_bytes": 0}, "msg_rate_per_s", 490000.0),
        ({"strategy": "openmx", "size_bytes": 0}, "msg_rate_per_s", 423000.0),
        ({"strategy": "stream", "size_bytes": 0}, "msg_rate_per_s", 435000.0),
    ),
    "coalescing-irq-overhead": (
        ({"strategy": "disabled", "irq_binding": "rr"}, "overhead_ns_per_packet", 965.0),
        ({"strategy": "timeout", "irq_binding": "rr"}, "overhead_ns_per_packet", 774.0),
    ),
    "coalescing-nas-is": (
        ({"class": "B", "strategy": "timeout"}, "exec_time_s", 21.98),
        ({"class": "C", "strategy": "timeout"}, "exec_time_s", 32.75),
    ),
    "multiqueue-pingpong": (
        (
            {"steering": "single-core", "binding": "SC", "ioat": "off", "size_bytes": 0},
            "latency_us",
            10.96,
        ),
        (
            {"steering": "single-core", "binding": "SC", "ioat": "off", "size_bytes": 4 << 20},
            "throughput_MiBps",
            719.0,
        ),
        (
            {"steering": "single-core", "binding": "SC", "ioat": "on", "size_bytes": 4 << 20},
            "throughput_MiBps",
            1056.0,
        ),
    ),
}

_DEFAULT_FIGSIZE = (11.0, 4.5)
#: Figure size (inches) per experiment id, where the default does not fit.
FIGSIZES: dict[str, tuple[float, float]] = {
    "coalescing-pingpong": (12.0, 4.8),
    "coalescing-msgrate": (12.0, 4.5),
    "coalescing-nas-is": (11.0, 7.0),
    "napi-knobs": (13.0, 4.0),
    "multiqueue-pingpong": (13.0, 5.5),
    "multiqueue-idle": (12.0, 4.5),
    "multiqueue-cache": (13.0, 4.8),
    "multiqueue-alltoall": (12.0, 4.8),
}


# -- helpers ----------------------------------------------------------------


@dataclass(frozen=True)
class _Style:
    colour: str
    study: bool
    marker: str
    label: str


def _unique(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def _strategies(table: pd.DataFrame) -> list[str]:
    """Return the strategies present: the study's in its order, then the others as they appear."""
    present = [str(s) for s in _unique(table["strategy"])]
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


def _note(ax: Axes, text: str) -> None:
    ax.text(
        0.5,
        0.5,
        text,
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize=9,
        color="0.35",
    )


def _value(table: pd.DataFrame, metric: str, **where: Any) -> float | None:
    """Return the metric of the one row matching ``where`` (``None`` if absent or NaN)."""
    mask = pd.Series(True, index=table.index)
    for column, wanted in where.items():
        mask &= table[column] == wanted
    rows = table.loc[mask, metric]
    if len(rows) != 1 or pd.isna(rows.iloc[0]):
        return None
    return float(rows.iloc[0])


def _published(exp_id: str, **where: Any) -> list[tuple[str, float]]:
    """Return the published ``(metric, value)`` of ``exp_id`` matching ``where``."""
    return [
        (metric, value)
        for selector, metric, value in PUBLISHED_MARKERS.get(exp_id, ())
        if all(selector.get(k) == v for k, v in where.items())
    ]


def _log_positive(ax: Axes, values: Iterable[float], base: float = 10) -> None:
    """Log y axis if there is anything positive to show (else matplotlib warns)."""
    if any(v > 0 for v in values if not pd.isna(v)):
        ax.set_yscale("log", base=base)


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
        value = _value(table, metric, strategy=name)
        xs[name] = float(i)
        if value is None:
            ax.text(i, 0, "n/a", ha="center", va="bottom", fontsize=8, color="0.35")
            continue
        ax.bar(i, value * scale, width=0.7, **_bar_kwargs(styles[name]))
        if annotate is not None:
            ax.annotate(
                annotate % (value * scale),
                (i, value * scale),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=7,
            )
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


def _headroom(ax: Axes, factor: float = 1.15) -> None:
    bottom, top = ax.get_ylim()
    ax.set_ylim(bottom, bottom + (top - bottom) * factor)


def _grouped_bars(
    ax: Axes, table: pd.DataFrame, group: str, series: str, metric: str, scale: float = 1.0
) -> dict[tuple[Any, Any], float]:
    """Bars of ``metric`` grouped by ``group`` on x, one colour per ``series``.

    Returns the x position of each drawn ``(group, series)`` bar.
    """
    groups = _unique(table[group])
    if series == "strategy":
        names: list[Any] = _strategies(table)
        styles = _styles(names)
    else:
        names = _unique(table[series])
        styles = {}
    width = 0.8 / max(len(names), 1)
    positions: dict[tuple[Any, Any], float] = {}
    for k, name in enumerate(names):
        xs: list[float] = []
        ys: list[float] = []
        for i, g in enumerate(groups):
            value = _value(table, metric, **{group: g, series: name})
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


# -- size axis (ping-pong) --------------------------------------------------

#: Where 0 B is drawn on the log2 size axis: one octave left of 1 B.
ZERO_AT = 0.5
SIZE_TICKS = {
    ZERO_AT: "0",
    1: "1",
    16: "16",
    256: "256",
    4096: "4K",
    65536: "64K",
    1 << 20: "1M",
    4 << 20: "4M",
}


def _size_axis(ax: Axes, with_zero: bool) -> None:
    ax.set_xscale("log", base=2)
    ticks = {k: v for k, v in SIZE_TICKS.items() if with_zero or k != ZERO_AT}
    ax.set_xticks(list(ticks), list(ticks.values()))
    ax.xaxis.set_minor_locator(FixedLocator([float(1 << k) for k in range(23)]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.3)


def _x_sizes(sizes: pd.Series) -> np.ndarray[Any, Any]:
    values = sizes.to_numpy(dtype=float)
    return np.where(values <= 0, ZERO_AT, values)


# -- [OMX-COAL] plotters ----------------------------------------------------


def _pingpong(table: pd.DataFrame, fig: Figure) -> None:
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
            xs = _x_sizes(rows["size_bytes"])
            normalised.plot(xs[keep], ratio[keep], **kwargs)
        # Throughput is undefined (reported 0) at 0 B: drawn from 1 B on.
        sized = rows[rows["size_bytes"] > 0]
        throughput.plot(sized["size_bytes"], sized["throughput_MiBps"], **kwargs)

    _size_axis(normalised, has_zero)
    normalised.set_xlabel(
        "message size (bytes)" + (", 0 B drawn at the left edge" if has_zero else "")
    )
    normalised.set_title("(a) ping-pong transfer time normalised to disabled", fontsize=10)
    normalised.set_ylabel("latency / latency(disabled)")
    if disabled.empty:
        _note(normalised, "no `disabled` rows: nothing to normalise to")
    else:
        normalised.axhline(1.0, color="black", linewidth=0.8)
        normalised.set_yscale("log", base=2)
        normalised.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        normalised.yaxis.set_minor_formatter(NullFormatter())
        normalised.legend(title="strategy", fontsize=7, title_fontsize=8)

    _size_axis(throughput, False)
    throughput.set_xlabel("message size (bytes)")
    throughput.set_title("(b) ping-pong throughput", fontsize=10)
    throughput.set_ylabel("throughput (MiB/s)")
    throughput.set_ylim(bottom=0)
    if strategies:
        throughput.legend(title="strategy", fontsize=7, title_fontsize=8)


def _delay_sweep(table: pd.DataFrame, fig: Figure) -> None:
    rate, irqs = fig.subplots(1, 2)
    bindings = _unique(table["irq_binding"])
    combos = _unique(zip(table["irq_binding"], table["sleep"], strict=True))
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
    for selector, metric, value in PUBLISHED_MARKERS["coalescing-delay-sweep"]:
        if metric == "msg_rate_per_s":
            rate.plot([selector["delay_us"]], [value / 1e3], **PUBLISHED_STYLE)
    rate.plot([], [], label=PUBLISHED_LABEL + " (75 µs, rr, sleep on)", **PUBLISHED_STYLE)
    for ax in (rate, irqs):
        ax.set_xlabel("coalescing delay (µs)")
        ax.grid(True, alpha=0.3)
    rate.set_ylim(bottom=0)
    rate.set_ylabel("message rate (k msg/s)")
    rate.set_title("(a) 128 B stream message rate", fontsize=10)
    irqs.set_ylabel("interrupts per message")
    irqs.set_title("(b) interrupts per message", fontsize=10)
    _log_positive(irqs, table["interrupts_per_msg"])
    rate.legend(fontsize=7, loc="lower right")


def _size_label(size: Any) -> str:
    size = int(size)
    if size >= 1 << 20 and size % (1 << 20) == 0:
        return f"{size >> 20} MiB"
    if size >= 1 << 10 and size % (1 << 10) == 0:
        return f"{size >> 10} KiB"
    return f"{size} B"


def _msgrate(table: pd.DataFrame, fig: Figure) -> None:
    sizes = _unique(table["size_bytes"])
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    published_drawn = False
    for ax, size in zip(axes, sizes, strict=True):
        rows = table[table["size_bytes"] == size]
        # k msg/s where rates are large, msg/s where they are not (scales differ per size).
        kilo = bool((rows["msg_rate_per_s"] >= 1e4).any())
        scale = 1e-3 if kilo else 1.0
        xs = _strategy_bars(ax, rows, "msg_rate_per_s", scale=scale, annotate="%.3g")
        for name, x in xs.items():
            for metric, value in _published("coalescing-msgrate", strategy=name, size_bytes=size):
                if metric == "msg_rate_per_s":
                    ax.plot([x], [value * scale], **PUBLISHED_STYLE)
                    published_drawn = True
        ax.set_title(_size_label(size), fontsize=10)
        ax.set_ylabel("message rate (k msg/s)" if kilo else "message rate (msg/s)")
        _headroom(ax)
    if published_drawn:
        axes[0].plot([], [], label=PUBLISHED_LABEL, **PUBLISHED_STYLE)
        axes[0].legend(fontsize=7, loc="lower left")


def _irq_overhead(table: pd.DataFrame, fig: Figure) -> None:
    ax = fig.subplots()
    positions = _grouped_bars(ax, table, "strategy", "irq_binding", "overhead_ns_per_packet")
    drawn = False
    for (strategy, binding), x in positions.items():
        for metric, value in _published(
            "coalescing-irq-overhead", strategy=strategy, irq_binding=binding
        ):
            if metric == "overhead_ns_per_packet":
                ax.plot([x], [value], **PUBLISHED_STYLE)
                ax.annotate(
                    f"{value:.0f}",
                    (x, value),
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
    _headroom(ax, 1.25)
    if positions:
        ax.legend(fontsize=8, loc="upper center", ncols=3)


def _transfer(table: pd.DataFrame, fig: Figure) -> None:
    time, irqs = fig.subplots(1, 2)
    _strategy_bars(time, table, "transfer_time_us", annotate="%.0f")
    time.set_ylabel("transfer time (µs)")
    time.set_title("(a) time of one 234 KiB transfer", fontsize=10)
    _headroom(time)
    _strategy_bars(irqs, table, "interrupts", annotate="%.1f")
    irqs.set_ylabel("interrupts per transfer (both hosts)")
    irqs.set_title("(b) interrupts per transfer", fontsize=10)
    _headroom(irqs)


def _marking(table: pd.DataFrame, fig: Figure) -> None:
    ax = fig.subplots()
    classes = _unique(table["unmarked_class"])
    reference = _value(table, "transfer_time_us", unmarked_class="none")
    for i, cls in enumerate(classes):
        value = _value(table, "transfer_time_us", unmarked_class=cls)
        if value is None:
            continue
        colour = "0.6" if cls == "none" else "C2"
        ax.bar(i, value, width=0.6, color=colour, edgecolor="black", linewidth=0.5)
        text = f"{value:.0f}"
        if reference is not None and cls != "none":
            text += f"\n({value / reference - 1:+.1%})"
        ax.annotate(
            text,
            (i, value),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=8,
        )
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
    _headroom(ax)


def _label_bars(
    ax: Axes,
    table: pd.DataFrame,
    positions: dict[tuple[Any, Any], float],
    group: str,
    metric: str,
    fmt: str,
) -> None:
    for (g, name), x in positions.items():
        value = _value(table, metric, **{group: g, "strategy": name})
        if value is not None:
            ax.annotate(
                fmt % value,
                (x, value),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=7,
            )


def _misorder(table: pd.DataFrame, fig: Figure) -> None:
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
    _headroom(time, 1.25)
    for ax in (success, time):
        ax.set_xlabel("mis-ordering degree (fragments the last one overtakes)")
        ax.legend(fontsize=8, loc="upper center", ncols=3)


def _nas_is(table: pd.DataFrame, fig: Figure) -> None:
    classes = _unique(table["class"])
    axes = fig.subplots(2, len(classes), squeeze=False)
    for col, cls in enumerate(classes):
        rows = table[table["class"] == cls]
        time, irqs = axes[0][col], axes[1][col]
        xs = _strategy_bars(time, rows, "exec_time_s", annotate="%.2f")
        values = [v for v in rows["exec_time_s"] if not pd.isna(v)]
        for name, x in xs.items():
            for metric, value in _published(
                "coalescing-nas-is", **{"class": cls, "strategy": name}
            ):
                if metric == "exec_time_s":
                    time.plot([x], [value], label=PUBLISHED_LABEL, **PUBLISHED_STYLE)
                    values.append(value)
        # Differences are a few percent: zoom on the values (the axis does not start at 0).
        if values:
            low, high = min(values), max(values)
            span = max(high - low, 0.02 * high)
            time.set_ylim(low - 0.6 * span, high + 0.6 * span)
        time.set_title(f"is.{cls}.16: execution time (axis not from 0)", fontsize=10)
        time.set_ylabel("execution time (s)")
        if time.get_legend_handles_labels()[0]:
            time.legend(fontsize=7, loc="upper left")
        _strategy_bars(irqs, rows, "interrupts", annotate="%.0f")
        irqs.set_title(f"is.{cls}.16: interrupts", fontsize=10)
        irqs.set_ylabel("interrupts")
        _headroom(irqs)


def _mq_nas(table: pd.DataFrame, fig: Figure) -> None:
    """Draw execution time per steering/stack, one panel per benchmark."""
    if table.empty:
        _note(fig.subplots(), "no rows")
        return
    benchmarks = _unique(table["benchmark"])
    axes = fig.subplots(1, len(benchmarks), squeeze=False)[0]
    published = {"is.B.16": 11.84, "is.C.16": 14.69}  # [OMX-MQ], single-rr/open-mx
    for ax, bench in zip(axes, benchmarks, strict=True):
        rows = table[table["benchmark"] == bench]
        configs = _unique(rows["steering/stack"])
        vals = [_value(rows, "exec_time_s", **{"steering/stack": c}) or 0.0 for c in configs]
        x = np.arange(len(configs))
        ax.bar(x, vals, color="tab:blue", width=0.6)
        for xi, v in zip(x, vals, strict=True):
            ax.annotate(f"{v:.2f}", (xi, v), ha="center", va="bottom", fontsize=8)
        if bench in published and "single-rr/open-mx" in configs:
            at_rr = configs.index("single-rr/open-mx")
            ax.plot([at_rr], [published[bench]], label="published [OMX-MQ]", **PUBLISHED_STYLE)
            ax.legend(fontsize=7, loc="lower right")
        ax.set_xticks(x, configs, fontsize=8)
        ax.set_ylabel("execution time (s)")
        ax.set_title(bench, fontsize=10)
        _headroom(ax)


def _napi_knobs(table: pd.DataFrame, fig: Figure) -> None:
    """Latency (ping-pong), message rate (stream) and CPU use per NAPI configuration."""
    if table.empty:
        _note(fig.subplots(), "no rows")
        return
    configs = _unique(table["config"])
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
                vals = [_value(table, metric, config=c, workload=w) or 0.0 for c in configs]
                ax.barh(y + (k - 0.5) * 0.4, vals, height=0.4, label=w)
            ax.legend(fontsize=7)
        else:
            vals = [_value(table, metric, config=c, workload=workload) or 0.0 for c in configs]
            ax.barh(y, vals, height=0.6, color="tab:blue")
        ax.set_yticks(y, configs if ax is axes[0] else [""] * len(configs), fontsize=8)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=9)
    fig.suptitle("Linux NAPI knobs on the modern preset (beyond the study)", fontsize=10)


# -- [OMX-MQ] plotters ------------------------------------------------------

PUBLISHED_MQ_LABEL = "published [OMX-MQ]"
#: Colour and legend label per configuration, in the study's order: the
#: "steering/binding" keys of the ping-pong and cache experiments, then the
#: steering keys of the Alltoall experiment. Anything else takes an extra colour.
_MQ_CONFIGS: dict[str, tuple[str, str]] = {
    "single-rr/none": ("C7", "single IRQ, round-robin cores; process unbound"),
    "single-core/SC": ("C0", "SC: IRQ on the process core"),
    "single-core/S$": ("C1", "S$: IRQ on the core sharing its L2"),
    "single-core/SP": ("C2", "SP: IRQ on the other die"),
    "single-core/OP": ("C3", "OP: IRQ on the other socket"),
    "multiqueue/auto": ("C4", "multiqueue, IRQ on the process core"),
    "multiqueue/auto+dca": ("C5", f"multiqueue + DCA ({BEYOND})"),
    "single-rr": ("C7", "single IRQ, round-robin cores"),
    "single-core": ("C0", "single IRQ on one core"),
    "multiqueue": ("C4", "multiqueue"),
    "multiqueue+dca": ("C5", f"multiqueue + DCA ({BEYOND})"),
}
_MQ_EXTRA_COLOURS = ("C6", "C8", "C9")
NATIVE = "native-mx"


def _escape(text: str) -> str:
    """Show ``$`` literally (S$ is a binding name, not mathtext)."""
    return text.replace("$", r"\$")


def _mq_styles(keys: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Return key → (colour, label) for the keys present: known first, in the study's order."""
    present = _unique(keys)
    ordered = [k for k in _MQ_CONFIGS if k in present] + [
        k for k in present if k not in _MQ_CONFIGS
    ]
    styles: dict[str, tuple[str, str]] = {}
    extra = 0
    for key in ordered:
        if key in _MQ_CONFIGS:
            colour, label = _MQ_CONFIGS[key]
        else:
            colour, label = _MQ_EXTRA_COLOURS[extra % len(_MQ_EXTRA_COLOURS)], key
            extra += 1
        styles[key] = (colour, _escape(label))
    return styles


def _size_line(
    ax: Axes, rows: pd.DataFrame, metric: str, zero: bool, log: bool, **kwargs: Any
) -> bool:
    """Plot ``metric`` against the size (0 B at ZERO_AT if ``zero``); False if nothing to draw."""
    rows = rows.sort_values("size_bytes", kind="stable")
    if not zero:
        rows = rows[rows["size_bytes"] > 0]
    xs = _x_sizes(rows["size_bytes"])
    ys = rows[metric].to_numpy(dtype=float)
    keep = np.isfinite(ys) & (ys > 0) if log else np.isfinite(ys)
    if not keep.any():
        return False
    ax.plot(xs[keep], ys[keep], **kwargs)
    return True


def _latency_throughput_axes(
    latency: Axes, throughput: Axes, has_zero: bool, latency_drawn: bool
) -> None:
    _size_axis(latency, has_zero)
    latency.set_xlabel(
        "message size (bytes)" + (", 0 B drawn at the left edge" if has_zero else "")
    )
    latency.set_ylabel("one-way latency (µs)")
    latency.set_title("(a) ping-pong latency (log-log)", fontsize=10)
    if latency_drawn:
        latency.set_yscale("log")
    else:
        _note(latency, "no latency values")
    _size_axis(throughput, False)
    throughput.set_xlabel("message size (bytes)")
    throughput.set_ylabel("throughput (MiB/s)")
    throughput.set_title("(b) ping-pong throughput", fontsize=10)
    throughput.set_ylim(bottom=0)


def _mq_pingpong(table: pd.DataFrame, fig: Figure) -> None:
    latency, throughput = fig.subplots(1, 2)
    keys = table["steering"].astype(str) + "/" + table["binding"].astype(str)
    styles = _mq_styles(keys)
    has_zero = bool((table["size_bytes"] == 0).any())
    drawn = {"latency": False, "throughput": False}
    ioats = [i for i in ("off", "on") if i in set(table["ioat"])]
    ioats += [i for i in _unique(table["ioat"]) if i not in ioats]
    dashes = {"off": "-", "on": "--"}
    for key, (colour, _label) in styles.items():
        for ioat in ioats:
            rows = table[(keys == key) & (table["ioat"] == ioat)]
            kwargs: dict[str, Any] = {
                "color": colour,
                "linestyle": dashes.get(str(ioat), ":"),
                "marker": "o" if ioat == "off" else "s",
                "markersize": 3,
                "fillstyle": "full" if ioat == "off" else "none",
                "linewidth": 1.2,
            }
            if "dca" in key:
                kwargs["alpha"] = 0.7
            drawn["latency"] |= _size_line(latency, rows, "latency_us", True, True, **kwargs)
            # Throughput is undefined (reported 0) at 0 B: drawn from 1 B on.
            drawn["throughput"] |= _size_line(
                throughput, rows, "throughput_MiBps", False, False, **kwargs
            )
    published = False
    published_latency: float | None = None
    for selector, metric, value in PUBLISHED_MARKERS["multiqueue-pingpong"]:
        present = (
            (table["steering"] == selector["steering"])
            & (table["binding"] == selector["binding"])
            & (table["ioat"] == selector["ioat"])
        ).any()
        size = int(selector["size_bytes"])
        if not present or (size == 0 and not has_zero):
            continue
        ax = latency if metric == "latency_us" else throughput
        x = ZERO_AT if size == 0 else float(size)
        ax.plot([x], [value], **PUBLISHED_STYLE)
        if metric == "latency_us":
            # Lines crowd at 0 B: the value goes into the legend instead.
            published_latency = value
            continue
        text = f"{value:g}" + (" (I/OAT)" if selector["ioat"] == "on" else "")
        ax.annotate(
            text,
            (x, value),
            xytext=(-6, 0),
            textcoords="offset points",
            ha="right",
            va="center",
            fontsize=7,
        )
        published = True
    _latency_throughput_axes(latency, throughput, has_zero, drawn["latency"])
    if not drawn["throughput"]:
        _note(throughput, "no throughput values")
    # Two legends: colour = steering/binding (left), line style = I/OAT (right).
    for colour, label in styles.values():
        latency.plot([], [], color=colour, linewidth=2, label=label)
    if published_latency is not None:
        latency.plot(
            [],
            [],
            label=f"{PUBLISHED_MQ_LABEL} (SC, 0 B: {published_latency:g} µs)",
            **PUBLISHED_STYLE,
        )
    if styles or published_latency is not None:
        latency.legend(title="interrupt steering / binding", fontsize=7, title_fontsize=8)
    for ioat in ioats:
        throughput.plot(
            [],
            [],
            color="black",
            linestyle=dashes.get(str(ioat), ":"),
            marker="o" if ioat == "off" else "s",
            markersize=3,
            fillstyle="full" if ioat == "off" else "none",
            label=f"I/OAT {ioat}",
        )
    if published:
        throughput.plot([], [], label=PUBLISHED_MQ_LABEL + " (SC)", **PUBLISHED_STYLE)
    if ioats or published:
        throughput.legend(fontsize=7, loc="upper left")


#: The two cases of the idle-core ping-pong, as the study describes them.
_IDLE_CASES = {
    "yes": ("C0", "IRQ on the process core (SC)"),
    "no": ("C3", "IRQ on the other die (SP): its core sleeps"),
}


def _mq_idle(table: pd.DataFrame, fig: Figure) -> None:
    latency, throughput = fig.subplots(1, 2)
    has_zero = bool((table["size_bytes"] == 0).any())
    present = [str(v) for v in _unique(table["irq_on_process_core"])]
    cases = [c for c in _IDLE_CASES if c in present] + [c for c in present if c not in _IDLE_CASES]
    drawn = {"latency": False, "throughput": False}
    for i, case in enumerate(cases):
        colour, label = _IDLE_CASES.get(
            case, (_MQ_EXTRA_COLOURS[i % 3], f"irq on process core: {case}")
        )
        rows = table[table["irq_on_process_core"].astype(str) == case]
        kwargs: dict[str, Any] = {"color": colour, "marker": "o", "markersize": 3.5, "label": label}
        drawn["latency"] |= _size_line(latency, rows, "latency_us", True, True, **kwargs)
        drawn["throughput"] |= _size_line(
            throughput, rows, "throughput_MiBps", False, False, **kwargs
        )
        small = _value(rows, "latency_us", size_bytes=0)
        if small is not None and small > 0:
            latency.annotate(
                f"{small:.3g} µs",
                (ZERO_AT, small),
                xytext=(6, 4 if case == "no" else -4),
                textcoords="offset points",
                va="bottom" if case == "no" else "top",
                fontsize=7,
                color=colour,
            )
    _latency_throughput_axes(latency, throughput, has_zero, drawn["latency"])
    if drawn["latency"]:
        latency.legend(fontsize=7, loc="upper left")
    if drawn["throughput"]:
        throughput.legend(fontsize=7, loc="upper left")
    else:
        _note(throughput, "no throughput values")


def _mq_cache(table: pd.DataFrame, fig: Figure) -> None:
    kernel, user = fig.subplots(1, 2, sharey=True)
    key_column = "steering/binding"
    styles = _mq_styles(table[key_column].astype(str))
    sizes = sorted(int(s) for s in _unique(table["size_bytes"]))
    width = 0.8 / max(len(styles), 1)
    for ax, metric, title in (
        (kernel, "kernel_miss_rate", "(a) receive stack (kernel)"),
        (user, "user_miss_rate", "(b) library (user)"),
    ):
        any_value = False
        for k, (key, (colour, label)) in enumerate(styles.items()):
            xs: list[float] = []
            ys: list[float] = []
            for i, size in enumerate(sizes):
                value = _value(table, metric, **{key_column: key, "size_bytes": size})
                if value is None:
                    continue
                x = i + (k - (len(styles) - 1) / 2) * width
                xs.append(x)
                ys.append(value)
                if value == 0:  # a bar of height 0 is invisible: say so
                    ax.annotate(
                        "0",
                        (x, 0),
                        xytext=(0, 1),
                        textcoords="offset points",
                        ha="center",
                        va="bottom",
                        fontsize=7,
                        color=colour,
                    )
            any_value |= bool(xs)
            kwargs: dict[str, Any] = {"color": colour, "edgecolor": "black", "linewidth": 0.5}
            if "dca" in key:
                kwargs.update(alpha=0.45, hatch="//")
            ax.bar(xs, ys, width=width, label=label, **kwargs)
        ax.set_xticks(range(len(sizes)), [_size_label(s) for s in sizes])
        ax.set_xlabel("message size")
        ax.set_title(f"{title} cache miss rate", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        if not any_value:
            _note(ax, f"no {metric} values")
    kernel.set_ylabel("miss rate (misses / modelled accesses)")
    kernel.set_ylim(0, 1.3)
    kernel.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    if styles:
        kernel.legend(
            title="steering / binding", fontsize=7, title_fontsize=8, loc="upper center", ncols=2
        )


def _mq_alltoall(table: pd.DataFrame, fig: Figure) -> None:
    relative, time = fig.subplots(1, 2)
    native_mask = table["stack"] == NATIVE
    openmx = table[~native_mask]
    keys = openmx["steering"].astype(str)
    styles = _mq_styles(keys)
    stacks = openmx["stack"].astype(str)
    drawn_relative = False
    drawn_time = False
    for key, (colour, label) in styles.items():
        for stack in _unique(stacks[keys == key]):
            rows = openmx[(keys == key) & (stacks == stack)]
            kwargs: dict[str, Any] = {
                "color": colour,
                "marker": "o",
                "markersize": 3.5,
                "label": label if stack == "open-mx" else f"{label} ({_escape(stack)})",
            }
            if "dca" in key:
                kwargs.update(linestyle="--", alpha=0.7)
            drawn_relative |= _size_line(
                relative, rows, "relative_to_native", False, False, **kwargs
            )
            drawn_time |= _size_line(time, rows, "time_us", False, True, **kwargs)
    native = table[native_mask]
    drawn_time |= _size_line(
        time,
        native,
        "time_us",
        False,
        True,
        color="black",
        marker="D",
        markersize=3.5,
        label="native MX",
    )
    for ax in (relative, time):
        _size_axis(ax, False)
        ax.set_xlabel("message size (bytes)")
    relative.set_ylabel("Alltoall time / native MX time")
    relative.set_title("(a) Open-MX relative to native MX (1 = native)", fontsize=10)
    relative.axhline(1.0, color="black", linewidth=1, label="native MX")
    if drawn_relative:
        relative.set_ylim(bottom=0)
        relative.legend(title="Open-MX, interrupt steering", fontsize=7, title_fontsize=8)
    else:
        _note(relative, "no relative_to_native values")
    time.set_ylabel("Alltoall time (µs)")
    time.set_title("(b) Alltoall time, 8 processes per host (log-log)", fontsize=10)
    if drawn_time:
        time.set_yscale("log")
        time.legend(fontsize=7, loc="upper left")
    else:
        _note(time, "no time values")


def _generic(table: pd.DataFrame, fig: Figure, parameters: tuple[str, ...], metric: str) -> None:
    ax = fig.subplots()
    x = parameters[-1]
    series = parameters[:-1]
    groups = table.groupby(list(series), sort=False) if series else [("", table)]
    for key, rows in groups:
        label = ", ".join(map(str, key)) if isinstance(key, tuple) else str(key)
        ax.plot(rows[x].astype(str), rows[metric], marker="o", label=label)
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    if series and len(table):
        ax.legend(title=", ".join(series))


#: Dedicated plot per experiment id.
PLOTTERS: dict[str, Plotter] = {
    "coalescing-pingpong": _pingpong,
    "coalescing-delay-sweep": _delay_sweep,
    "coalescing-msgrate": _msgrate,
    "coalescing-irq-overhead": _irq_overhead,
    "coalescing-transfer": _transfer,
    "coalescing-marking": _marking,
    "coalescing-misorder": _misorder,
    "coalescing-nas-is": _nas_is,
    "napi-knobs": _napi_knobs,
    "multiqueue-nas": _mq_nas,
    "multiqueue-pingpong": _mq_pingpong,
    "multiqueue-idle": _mq_idle,
    "multiqueue-cache": _mq_cache,
    "multiqueue-alltoall": _mq_alltoall,
}

from nicsim.plots_lci import LCI_PLOTTERS  # noqa: E402  the [LCI] plotters

PLOTTERS.update(LCI_PLOTTERS)


def plot(
    exp_id: str,
    title: str,
    table: pd.DataFrame,
    parameters: tuple[str, ...],
    metrics: tuple[str, ...],
    path: Path,
) -> Path:
    """Draw the experiment's figure and save it as PNG at ``path``."""
    fig = plt.figure(figsize=FIGSIZES.get(exp_id, _DEFAULT_FIGSIZE), layout="constrained")
    try:
        plotter = PLOTTERS.get(exp_id)
        if table.empty:
            _note(fig.subplots(), "no rows")
        elif plotter is not None:
            plotter(table, fig)
        else:
            _generic(table, fig, parameters, metrics[0])
        fig.suptitle(f"{exp_id}: {title}")
        # No software/date metadata, so the bytes depend on the data only.
        fig.savefig(path, dpi=100, metadata={"Software": None})
    finally:
        plt.close(fig)
    return path


from nicsim import plots_emo as _plots_emo  # noqa: E402,F401  registers the EMO plotters
