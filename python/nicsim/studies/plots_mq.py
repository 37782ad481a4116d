"""Plots of the [OMX-MQ] experiments (matplotlib).

This module owns the figures of :mod:`nicsim.studies.exp_mq` (Goglin,
"Cache-efficient Open-MX receive stack"): latency and throughput against
the message size per interrupt steering and process binding (I/OAT off
solid, on dashed), the cache miss rates per steering/binding as grouped
bars, the Alltoall time relative to native MX and the NAS times. Each
configuration keeps its colour whatever subset of rows is drawn; DCA is
beyond the study. Drawing and saving the file is :func:`nicsim.studies.plots.plot`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from nicsim.studies.exp_base import Published
from nicsim.studies.plots import (
    BEYOND,
    PUBLISHED_STYLE,
    ZERO_AT,
    cell_value,
    headroom,
    note,
    published_at,
    published_cells,
    size_axis,
    size_label,
    unique,
    x_sizes,
)

__all__ = ["alltoall", "cache", "idle", "nas", "pingpong"]

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
    present = unique(keys)
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
    xs = x_sizes(rows["size_bytes"])
    ys = rows[metric].to_numpy(dtype=float)
    keep = np.isfinite(ys) & (ys > 0) if log else np.isfinite(ys)
    if not keep.any():
        return False
    ax.plot(xs[keep], ys[keep], **kwargs)
    return True


def _latency_throughput_axes(
    latency: Axes, throughput: Axes, has_zero: bool, latency_drawn: bool
) -> None:
    size_axis(latency, has_zero)
    latency.set_xlabel(
        "message size (bytes)" + (", 0 B drawn at the left edge" if has_zero else "")
    )
    latency.set_ylabel("one-way latency (µs)")
    latency.set_title("(a) ping-pong latency (log-log)", fontsize=10)
    if latency_drawn:
        latency.set_yscale("log")
    else:
        note(latency, "no latency values")
    size_axis(throughput, False)
    throughput.set_xlabel("message size (bytes)")
    throughput.set_ylabel("throughput (MiB/s)")
    throughput.set_title("(b) ping-pong throughput", fontsize=10)
    throughput.set_ylim(bottom=0)


def pingpong(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw (a) latency and (b) throughput against the size per steering/binding and I/OAT."""
    latency, throughput = fig.subplots(1, 2)
    keys = table["steering"].astype(str) + "/" + table["binding"].astype(str)
    styles = _mq_styles(keys)
    has_zero = bool((table["size_bytes"] == 0).any())
    drawn = {"latency": False, "throughput": False}
    ioats = [i for i in ("off", "on") if i in set(table["ioat"])]
    ioats += [i for i in unique(table["ioat"]) if i not in ioats]
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
    # Published values, by the binding they were measured with (for the legends).
    marked_latency: list[str] = []
    marked_throughput: list[str] = []
    for cell, number in published_cells(published):
        present = (
            (table["steering"] == cell.get("steering"))
            & (table["binding"] == cell.get("binding"))
            & (table["ioat"] == cell.get("ioat"))
        ).any()
        size = int(cell.get("size_bytes") or 0)
        if not present or (size == 0 and not has_zero):
            continue
        ax = latency if cell.metric == "latency_us" else throughput
        x = ZERO_AT if size == 0 else float(size)
        ax.plot([x], [number], **PUBLISHED_STYLE)
        if cell.metric == "latency_us":
            # Lines crowd at 0 B: the value goes into the legend instead.
            marked_latency.append(f"{cell.get('binding')}, {size_label(size)}: {number:g} µs")
            continue
        text = f"{number:g}" + (" (I/OAT)" if cell.get("ioat") == "on" else "")
        ax.annotate(
            text,
            (x, number),
            xytext=(-6, 0),
            textcoords="offset points",
            ha="right",
            va="center",
            fontsize=7,
        )
        marked_throughput.append(str(cell.get("binding")))
    _latency_throughput_axes(latency, throughput, has_zero, drawn["latency"])
    if not drawn["throughput"]:
        note(throughput, "no throughput values")
    # Two legends: colour = steering/binding (left), line style = I/OAT (right).
    for colour, label in styles.values():
        latency.plot([], [], color=colour, linewidth=2, label=label)
    if marked_latency:
        where = "; ".join(marked_latency)
        latency.plot([], [], label=f"{PUBLISHED_MQ_LABEL} ({where})", **PUBLISHED_STYLE)
    if styles or marked_latency:
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
    if marked_throughput:
        where = ", ".join(unique(marked_throughput))
        throughput.plot([], [], label=f"{PUBLISHED_MQ_LABEL} ({where})", **PUBLISHED_STYLE)
    if ioats or marked_throughput:
        throughput.legend(fontsize=7, loc="upper left")


#: The two cases of the idle-core ping-pong, as the study describes them.
_IDLE_CASES = {
    "yes": ("C0", "IRQ on the process core (SC)"),
    "no": ("C3", "IRQ on the other die (SP): its core sleeps"),
}


def idle(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw latency and throughput with the interrupt on the process core or the other die."""
    latency, throughput = fig.subplots(1, 2)
    has_zero = bool((table["size_bytes"] == 0).any())
    present = [str(v) for v in unique(table["irq_on_process_core"])]
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
        small = cell_value(rows, "latency_us", size_bytes=0)
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
        note(throughput, "no throughput values")


def cache(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw kernel and library cache miss rates per steering/binding and size."""
    kernel, user = fig.subplots(1, 2, sharey=True)
    key_column = "steering/binding"
    styles = _mq_styles(table[key_column].astype(str))
    sizes = sorted(int(s) for s in unique(table["size_bytes"]))
    width = 0.8 / max(len(styles), 1)
    marked = False
    for ax, metric, title in (
        (kernel, "kernel_miss_rate", "(a) receive stack (kernel)"),
        (user, "user_miss_rate", "(b) library (user)"),
    ):
        any_value = False
        for k, (key, (colour, label)) in enumerate(styles.items()):
            xs: list[float] = []
            ys: list[float] = []
            for i, size in enumerate(sizes):
                value = cell_value(table, metric, **{key_column: key, "size_bytes": size})
                if value is None:
                    continue
                x = i + (k - (len(styles) - 1) / 2) * width
                xs.append(x)
                ys.append(value)
                for rate in published_at(
                    published, metric, **{key_column: key, "size_bytes": size}
                ):
                    mark_label = None if marked else f"{PUBLISHED_MQ_LABEL} (Table II)"
                    ax.plot([x], [rate], label=mark_label, **PUBLISHED_STYLE)
                    marked = True
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
        ax.set_xticks(range(len(sizes)), [size_label(s) for s in sizes])
        ax.set_xlabel("message size")
        ax.set_title(f"{title} cache miss rate", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        if not any_value:
            note(ax, f"no {metric} values")
    kernel.set_ylabel("L2 miss rate (misses / L2 accesses)")
    kernel.set_ylim(0, 1.3)
    kernel.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    if styles:
        kernel.legend(
            title="steering / binding", fontsize=7, title_fontsize=8, loc="upper center", ncols=2
        )


def alltoall(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw (a) Alltoall time relative to native MX and (b) the times themselves."""
    relative, time = fig.subplots(1, 2)
    native_mask = table["stack"] == NATIVE
    openmx = table[~native_mask]
    keys = openmx["steering"].astype(str)
    styles = _mq_styles(keys)
    stacks = openmx["stack"].astype(str)
    drawn_relative = False
    drawn_time = False
    for key, (colour, label) in styles.items():
        for stack in unique(stacks[keys == key]):
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
        size_axis(ax, False)
        ax.set_xlabel("message size (bytes)")
    relative.set_ylabel("Alltoall time / native MX time")
    relative.set_title("(a) Open-MX relative to native MX (1 = native)", fontsize=10)
    relative.axhline(1.0, color="black", linewidth=1, label="native MX")
    if drawn_relative:
        relative.set_ylim(bottom=0)
        relative.legend(title="Open-MX, interrupt steering", fontsize=7, title_fontsize=8)
    else:
        note(relative, "no relative_to_native values")
    time.set_ylabel("Alltoall time (µs)")
    time.set_title("(b) Alltoall time, 8 processes per host (log-log)", fontsize=10)
    if drawn_time:
        time.set_yscale("log")
        time.legend(fontsize=7, loc="upper left")
    else:
        note(time, "no time values")


def nas(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw execution time per steering/stack, one panel per benchmark."""
    if table.empty:
        note(fig.subplots(), "no rows")
        return
    benchmarks = unique(table["benchmark"])
    axes = fig.subplots(1, len(benchmarks), squeeze=False)[0]
    for ax, bench in zip(axes, benchmarks, strict=True):
        rows = table[table["benchmark"] == bench]
        configs = unique(rows["steering/stack"])
        vals = [cell_value(rows, "exec_time_s", **{"steering/stack": c}) or 0.0 for c in configs]
        x = np.arange(len(configs))
        ax.bar(x, vals, color="tab:blue", width=0.6)
        for xi, v in zip(x, vals, strict=True):
            ax.annotate(f"{v:.2f}", (xi, v), ha="center", va="bottom", fontsize=8)
        drawn = False
        for xi, config in zip(x, configs, strict=True):
            for seconds in published_at(
                published, "exec_time_s", **{"benchmark": bench, "steering/stack": config}
            ):
                label = None if drawn else PUBLISHED_MQ_LABEL
                ax.plot([xi], [seconds], label=label, **PUBLISHED_STYLE)
                drawn = True
        if drawn:
            ax.legend(fontsize=7, loc="lower right")
        ax.set_xticks(x, configs, fontsize=8)
        ax.set_ylabel("execution time (s)")
        ax.set_title(bench, fontsize=10)
        headroom(ax)
