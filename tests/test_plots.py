"""Plots: dedicated figures, robust to partial tables, byte-stable, marking only their
experiment's published values."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from nicsim import runner
from nicsim.studies import plots, plots_coal
from nicsim.studies.exp_base import Experiment, Published
from nicsim.studies.experiments import EXPERIMENTS, GROUPS

RunFn = Callable[[str], dict[str, float | int | str]]
#: The [OMX-COAL] experiments with a dedicated figure (the group may hold more).
OMX_COAL = [
    "coalescing-pingpong",
    "coalescing-delay-sweep",
    "coalescing-msgrate",
    "coalescing-irq-overhead",
    "coalescing-transfer",
    "coalescing-marking",
    "coalescing-misorder",
    "coalescing-nas-is",
    "coalescing-nas",
]
#: The [OMX-MQ] experiments, all with a dedicated figure.
OMX_MQ = [
    "multiqueue-pingpong",
    "multiqueue-idle",
    "multiqueue-cache",
    "multiqueue-alltoall",
]


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    import _fake_core

    ids = [*OMX_COAL, *OMX_MQ, "multiqueue-nas"]
    return runner.run_experiments(ids, jobs=1, quick=True, run_fn=_fake_core.run)


def _draw(exp_id: str, table: pd.DataFrame, path: Path) -> bytes:
    plots.plot(EXPERIMENTS[exp_id], table, path)
    return path.read_bytes()


def test_every_experiment_has_a_dedicated_plot() -> None:
    assert set(OMX_COAL) <= set(GROUPS["omx-coal"])
    assert set(OMX_MQ) <= set(GROUPS["omx-mq"])
    assert all(exp.plot is not None for exp in EXPERIMENTS.values())


def _marks(exp: Experiment, table: pd.DataFrame, published: Sequence[Published]) -> list[float]:
    """The y of every published-value marker the experiment's plot draws."""
    assert exp.plot is not None
    fig = plt.figure()
    try:
        exp.plot(table, fig, tuple(published))
        return sorted(
            float(y)
            for ax in fig.axes
            for line in ax.get_lines()
            if line.get_gid() == plots.PUBLISHED_GID
            for y in np.asarray(line.get_ydata(), dtype=float)
        )
    finally:
        plt.close(fig)


def _is_one_of(y: float, values: Sequence[float]) -> bool:
    # Plots draw some rates in thousands.
    return any(math.isclose(y, v * scale) for v in values for scale in (1.0, 1e-3))


#: Published cells a plot has no place for, and why.
UNMARKED = {"coalescing-pingpong": "latency is drawn normalised to `disabled`"}


@pytest.mark.parametrize("exp_id", OMX_COAL + OMX_MQ + ["multiqueue-nas"])
def test_plot_marks_exactly_its_experiments_published_cells(
    exp_id: str, tables: dict[str, pd.DataFrame]
) -> None:
    exp = EXPERIMENTS[exp_id]
    table = tables[exp_id]
    cells = [item for item in exp.published if item.cell is not None]
    drawn = _marks(exp, table, exp.published)
    assert all(_is_one_of(y, [item.value for item in cells]) for y in drawn), drawn
    assert len(drawn) == (0 if exp_id in UNMARKED else len(cells))
    # Nothing published: nothing marked (no value is kept in the plot itself).
    assert _marks(exp, table, ()) == []
    # Other published values: the marks follow them.
    moved = [dataclasses.replace(item, value=2 * item.value + 1) for item in exp.published]
    drawn = _marks(exp, table, moved)
    assert all(_is_one_of(y, [item.value for item in moved]) for y in drawn), drawn
    assert not any(_is_one_of(y, [item.value for item in cells]) for y in drawn), drawn


def _subsets(exp_id: str, table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    first = EXPERIMENTS[exp_id].parameters[0]
    key = "strategy" if "strategy" in table.columns else first
    reference = "disabled" if key == "strategy" else table[key].iloc[0]
    return {
        "empty": table.iloc[0:0],
        "one row": table.iloc[-1:],
        f"without {reference}": table[table[key] != reference],
        "reversed": table.iloc[::-1].reset_index(drop=True),
        "with a NaN": table.assign(**{EXPERIMENTS[exp_id].metrics[-1]: np.nan}),
    }


@pytest.mark.parametrize("exp_id", OMX_COAL + OMX_MQ)
def test_plots_draw_partial_tables(
    exp_id: str, tables: dict[str, pd.DataFrame], tmp_path: Path
) -> None:
    # pytest turns warnings into errors, so this also catches e.g. empty log axes.
    for name, subset in _subsets(exp_id, tables[exp_id]).items():
        path = tmp_path / f"{name.replace('/', '_')}.png"
        assert _draw(exp_id, subset, path)[:4] == b"\x89PNG", name


def _mq_subsets(exp_id: str, table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Subsets that matter to the [OMX-MQ] figures beyond the generic ones."""
    metrics = list(EXPERIMENTS[exp_id].metrics)
    every_other_nan = table.copy()
    every_other_nan.loc[every_other_nan.index[::2], metrics] = np.nan
    subsets = {
        "every other row NaN": every_other_nan,
        "all metrics NaN": table.assign(**{m: np.nan for m in metrics}),
        "without 0 B": table[table["size_bytes"] != 0],
        "one size": table[table["size_bytes"] == table["size_bytes"].iloc[-1]],
    }
    if exp_id == "multiqueue-pingpong":
        subsets["ioat on only"] = table[table["ioat"] == "on"]
        subsets["no SC"] = table[table["binding"] != "SC"]
        subsets["unknown binding"] = table.assign(binding="X$")
    if exp_id == "multiqueue-idle":
        subsets["unknown case"] = table.assign(irq_on_process_core="maybe")
    if exp_id == "multiqueue-cache":
        subsets["unknown configuration"] = table.assign(**{"steering/binding": "x/y"})
        subsets["zero miss rates"] = table.assign(user_miss_rate=0.0)
    if exp_id == "multiqueue-alltoall":
        subsets["native only"] = table[table["stack"] == "native-mx"]
        subsets["without native"] = table[table["stack"] != "native-mx"]
    return subsets


@pytest.mark.parametrize("exp_id", OMX_MQ)
def test_omx_mq_plots_draw_partial_tables(
    exp_id: str, tables: dict[str, pd.DataFrame], tmp_path: Path
) -> None:
    for name, subset in _mq_subsets(exp_id, tables[exp_id]).items():
        path = tmp_path / f"{name.replace('/', '_')}.png"
        assert _draw(exp_id, subset, path)[:4] == b"\x89PNG", name


def test_extra_strategies_alone_still_plot(tables: dict[str, pd.DataFrame], tmp_path: Path) -> None:
    table = tables["coalescing-msgrate"]
    extras = table[~table["strategy"].isin(plots_coal.STUDY_STRATEGIES)]
    assert len(extras) and _draw("coalescing-msgrate", extras, tmp_path / "x.png")


def test_experiment_without_a_plot_uses_the_generic_one(tmp_path: Path) -> None:
    table = pd.DataFrame({"a": ["x", "y"], "b": [1, 2], "m": [0.5, 0.25]})
    custom = Experiment("custom", "t", ("a", "b"), ("m",), lambda quick: [], lambda p, q: {})
    path = plots.plot(custom, table, tmp_path / "c.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "exp_id", ["coalescing-pingpong", "coalescing-nas-is", "coalescing-nas", *OMX_MQ]
)
def test_png_bytes_are_stable(exp_id: str, tables: dict[str, pd.DataFrame], tmp_path: Path) -> None:
    first = _draw(exp_id, tables[exp_id], tmp_path / "a.png")
    assert first == _draw(exp_id, tables[exp_id], tmp_path / "b.png")
    assert b"Software" not in first and b"Creation" not in first
