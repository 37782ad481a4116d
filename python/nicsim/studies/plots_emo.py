"""Plots of the [EMO] experiments and of ``nicsim model`` (matplotlib).

This module owns the EMO figures: simulated latency/overhead (solid,
markers) beside the model's (dashed) against the message size, one panel
per path, one colour per coalescing setting, sizes of several frames
shaded; the cache-layer ping-pongs;
and the model-only curves of ``nicsim model --plot``, in any of the
picture formats of :data:`MODEL_PLOT_FORMATS`. It never runs anything;
drawing an experiment's file is :func:`nicsim.studies.plots.plot`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from nicsim.model import COALESCING, PATHS, Evaluation
from nicsim.studies.exp_base import Published

__all__ = ["MODEL_PLOT_FORMATS", "cache", "latency", "overhead", "plot_model"]

#: The formats of ``nicsim model --plot``, by file extension: what
#: matplotlib saves as a picture (not pgf, which is LaTeX code, nor raw
#: RGBA bytes; avif only with some Pillow builds), each with the metadata
#: that leaves out matplotlib's version and the date where the format has
#: such fields (the others take none).
MODEL_PLOT_FORMATS: dict[str, dict[str, None] | None] = {
    "png": {"Software": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
    "svg": {"Creator": None, "Date": None},
    "svgz": {"Creator": None, "Date": None},
    "eps": {"Creator": None, "CreationDate": None},
    "ps": {"Creator": None, "CreationDate": None},
    "jpg": None,
    "jpeg": None,
    "tif": None,
    "tiff": None,
    "webp": None,
    "gif": None,
}

_COLOURS = {"none": "C0", "default": "C1", "max": "C3"}


def _sim_vs_model(table: pd.DataFrame, fig: Figure, sim: str, model: str, ylabel: str) -> None:
    paths = [p for p in PATHS if p in set(table["path"])]
    axes = fig.subplots(1, max(len(paths), 1), sharey=False, squeeze=False)[0]
    for ax, path in zip(axes, paths, strict=False):
        rows = table[table["path"] == path]
        for setting in [c for c in COALESCING if c in set(rows["coalescing"])]:
            r = rows[rows["coalescing"] == setting].sort_values("size_bytes")
            colour = _COLOURS.get(setting, "C7")
            ax.plot(
                r["size_bytes"], r[sim], marker="o", color=colour, label=f"{setting}: simulated"
            )
            ax.plot(
                r["size_bytes"],
                r[model],
                ls="--",
                marker="x",
                color=colour,
                label=f"{setting}: model",
            )
        several = rows.loc[rows["frames"] > 1, "size_bytes"] if "frames" in rows else []
        if len(several):
            # Beyond one frame: the simulated packets part from EMO's message-oriented sum.
            ax.axvspan(min(several), max(several), color="0.9", zorder=0, label="several frames")
        ax.set_title(path)
        ax.set_xlabel("message size (B)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    if paths:
        axes[0].legend(fontsize=7, title="coalescing")


def latency(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw simulated and model latency against the size, one panel per path."""
    _sim_vs_model(table, fig, "sim_latency_us", "model_latency_us", "latency (half round trip, µs)")


def overhead(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw simulated and model echo-host overhead against the size, one panel per path."""
    _sim_vs_model(table, fig, "sim_overhead_pct", "model_overhead_pct", "echo-host CPU taken (%)")


def cache(table: pd.DataFrame, fig: Figure, published: Sequence[Published]) -> None:
    """Draw simulated and model ping-pong latency per process placement."""
    ax = fig.subplots()
    for i, binding in enumerate(dict.fromkeys(table["binding"])):
        r = table[table["binding"] == binding].sort_values("size_bytes")
        colour = f"C{i}"
        ax.plot(
            r["size_bytes"],
            r["sim_latency_us"],
            marker="o",
            color=colour,
            label=f"{binding}: simulated",
        )
        ax.plot(
            r["size_bytes"], r["model_latency_us"], ls="--", color=colour, label=f"{binding}: model"
        )
    ax.set_xlabel("message size (B)")
    ax.set_ylabel("ping-pong latency (µs)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, title="process vs interrupt core")


def plot_model(evaluations: Mapping[str, Sequence[Evaluation]], title: str, path: Path) -> Path:
    """Model latency and echo-host overhead against size, one line per path, at ``path``.

    The format is the extension's, one of :data:`MODEL_PLOT_FORMATS`.
    """
    fmt = path.suffix.lstrip(".").lower()
    # A bare Figure (no pyplot): nothing global to select or close.
    fig = Figure(figsize=(10, 4), layout="constrained")
    lat, over = fig.subplots(1, 2)
    for name, evals in evaluations.items():
        sizes = [e.size_bytes for e in evals]
        lat.plot(sizes, [e.latency_us for e in evals], marker="o", label=name)
        over.plot(sizes, [e.overhead_pct for e in evals], marker="o", label=name)
    lat.set_ylabel("latency (half round trip, µs)")
    over.set_ylabel("echo-host CPU taken (%)")
    for ax in (lat, over):
        ax.set_xlabel("message size (B)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.savefig(path, format=fmt, dpi=100, metadata=MODEL_PLOT_FORMATS[fmt])
    return path
