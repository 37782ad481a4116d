"""Drawing an experiment's table: :func:`plot` and what the study plotters share.

This module owns the PNG file of an experiment (its :attr:`Experiment.plot`
on a figure of :attr:`Experiment.figsize`, or :func:`generic` if it has
none) and the pieces the study plotters (``plots_coal``, ``plots_mq``,
``plots_lci``, ``plots_emo``) draw with: the log2 message-size axis, the
style of published values and the lookup of those that are one table cell
(:func:`published_at`), so a plot marks exactly its experiment's published
values. It reads tables; it never runs the simulator or writes anything but
the PNG it is asked for. Every plotter draws whatever rows the table has, so
a custom subset of an experiment still plots.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullFormatter

from nicsim.studies.exp_base import Cell, Experiment, Published, at

__all__ = [
    "BEYOND",
    "PUBLISHED_GID",
    "PUBLISHED_STYLE",
    "SIZE_TICKS",
    "ZERO_AT",
    "cell_value",
    "generic",
    "headroom",
    "label_above",
    "log_positive",
    "note",
    "plot",
    "published_at",
    "published_cells",
    "size_axis",
    "size_label",
    "unique",
    "x_sizes",
]

#: How rows beyond the reference study are labelled.
BEYOND = "beyond the study"
#: Group id of every artist that marks a published value (tests find them by it).
PUBLISHED_GID = "published"
#: Published values: black diamonds over the simulated lines and bars.
PUBLISHED_STYLE: dict[str, Any] = {
    "color": "black",
    "marker": "D",
    "markersize": 6,
    "linestyle": "none",
    "zorder": 5,
    "gid": PUBLISHED_GID,
}


def unique(values: Iterable[Any]) -> list[Any]:
    """Return the distinct values in order of first appearance."""
    return list(dict.fromkeys(values))


def note(ax: Axes, text: str) -> None:
    """Write a grey note in the middle of the axes (e.g. "no rows")."""
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


def cell_value(table: pd.DataFrame, metric: str, **where: Any) -> float | None:
    """Return the metric of the one row matching ``where`` (``None`` if absent or NaN)."""
    found = at(metric, **where)(table)
    return None if found is None or math.isnan(found) else found


def published_at(published: Sequence[Published], metric: str, **where: Any) -> list[float]:
    """Return the published values of ``metric`` whose table cell sets every ``where``.

    Only values read from one cell (:attr:`Published.cell`) have a place in a
    plot; derived ones (a difference of two rows, say) are left out.
    """
    return [
        item.value
        for item in published
        if (cell := item.cell) is not None and cell.metric == metric and cell.matches(**where)
    ]


def published_cells(published: Sequence[Published]) -> list[tuple[Cell, float]]:
    """Return ``(cell, value)`` of every published value read from one table cell."""
    return [(item.cell, item.value) for item in published if item.cell is not None]


def label_above(ax: Axes, text: str, x: float, y: float, fontsize: float) -> None:
    """Write ``text`` just above the point ``(x, y)`` (e.g. a bar's value on its top)."""
    ax.annotate(
        text,
        (x, y),
        xytext=(0, 2),
        textcoords="offset points",
        ha="center",
        va="bottom",
        fontsize=fontsize,
    )


def log_positive(ax: Axes, values: Iterable[float], base: float = 10) -> None:
    """Log y axis if there is anything positive to show (else matplotlib warns)."""
    if any(v > 0 for v in values if not pd.isna(v)):
        ax.set_yscale("log", base=base)


def headroom(ax: Axes, factor: float = 1.15) -> None:
    """Stretch the y axis upwards so labels above the bars fit."""
    bottom, top = ax.get_ylim()
    ax.set_ylim(bottom, bottom + (top - bottom) * factor)


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


def size_axis(ax: Axes, with_zero: bool) -> None:
    """Log2 message-size x axis, with 0 B at :data:`ZERO_AT` if ``with_zero``."""
    ax.set_xscale("log", base=2)
    ticks = {k: v for k, v in SIZE_TICKS.items() if with_zero or k != ZERO_AT}
    ax.set_xticks(list(ticks), list(ticks.values()))
    ax.xaxis.set_minor_locator(FixedLocator([float(1 << k) for k in range(23)]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.3)


def x_sizes(sizes: pd.Series) -> np.ndarray[Any, Any]:
    """Sizes as x positions on :func:`size_axis` (0 B at :data:`ZERO_AT`)."""
    values = sizes.to_numpy(dtype=float)
    return np.where(values <= 0, ZERO_AT, values)


def size_label(size: Any) -> str:
    """Return ``"4 MiB"``, ``"32 KiB"`` or ``"128 B"``."""
    size = int(size)
    if size >= 1 << 20 and size % (1 << 20) == 0:
        return f"{size >> 20} MiB"
    if size >= 1 << 10 and size % (1 << 10) == 0:
        return f"{size >> 10} KiB"
    return f"{size} B"


def generic(table: pd.DataFrame, fig: Figure, parameters: tuple[str, ...], metric: str) -> None:
    """One line of ``metric`` against the last parameter per combination of the others."""
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


def plot(experiment: Experiment, table: pd.DataFrame, path: Path) -> Path:
    """Draw the experiment's figure of ``table`` and save it as PNG at ``path``."""
    fig = plt.figure(figsize=experiment.figsize, layout="constrained")
    try:
        if table.empty:
            note(fig.subplots(), "no rows")
        elif experiment.plot is not None:
            experiment.plot(table, fig, experiment.published)
        else:
            generic(table, fig, experiment.parameters, experiment.metrics[0])
        fig.suptitle(f"{experiment.id}: {experiment.title}")
        # No software/date metadata, so the bytes depend on the data only.
        fig.savefig(path, dpi=100, metadata={"Software": None})
    finally:
        plt.close(fig)
    return path
