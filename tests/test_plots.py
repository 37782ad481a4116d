"""Plots: dedicated figures for [OMX-COAL] and [OMX-MQ], robust to partial tables, byte-stable."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nicsim import plots, runner
from nicsim.experiments import EXPERIMENTS, GROUPS

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

    return runner.run_experiments(OMX_COAL + OMX_MQ, jobs=1, quick=True, run_fn=_fake_core.run)


def _draw(exp_id: str, table: pd.DataFrame, path: Path) -> bytes:
    exp = EXPERIMENTS[exp_id]
    plots.plot(exp_id, exp.title, table, exp.parameters, exp.metrics, path)
    return path.read_bytes()


def test_every_omx_coal_experiment_has_a_dedicated_plot() -> None:
    assert set(OMX_COAL) <= set(GROUPS["omx-coal"])
    assert set(OMX_COAL) <= set(plots.PLOTTERS)


def test_every_omx_mq_experiment_has_a_dedicated_plot() -> None:
    assert set(OMX_MQ) <= set(GROUPS["omx-mq"])
    assert set(OMX_MQ) <= set(plots.PLOTTERS)


@pytest.mark.parametrize("exp_id", OMX_MQ)
def test_every_omx_mq_published_value_is_marked(exp_id: str) -> None:
    # The reverse of the check below: nothing published is left off the plot.
    marked = sorted(value for _, _, value in plots.PUBLISHED_MARKERS.get(exp_id, ()))
    assert marked == sorted(item.value for item in EXPERIMENTS[exp_id].published)


@pytest.mark.parametrize(("exp_id", "markers"), list(plots.PUBLISHED_MARKERS.items()))
def test_published_markers_match_the_registry(
    exp_id: str, markers: tuple[tuple[dict[str, str | int], str, float], ...]
) -> None:
    exp = EXPERIMENTS[exp_id]
    for selector, metric, value in markers:
        row: dict[str, object] = {column: np.nan for column in exp.metrics}
        row.update({p: selector.get(p, "?") for p in exp.parameters})
        row[metric] = value
        table = pd.DataFrame([row], columns=list(exp.columns))
        # Parameters not in the selector take the only value the grid uses.
        for p in exp.parameters:
            if p not in selector:
                table[p] = exp.configurations(True)[0][p]
        assert any(
            item.value == value and item.simulated(table) == value for item in exp.published
        ), (selector, metric, value)


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


def test_mq_pingpong_draws_the_published_markers(
    tables: dict[str, pd.DataFrame], tmp_path: Path
) -> None:
    import matplotlib.pyplot as plt

    fig = plt.figure()
    try:
        plots.PLOTTERS["multiqueue-pingpong"](tables["multiqueue-pingpong"], fig)
        ys = [
            np.asarray(line.get_ydata(), dtype=float)
            for ax in fig.axes
            for line in ax.get_lines()
            if line.get_marker() == "D"
        ]
        drawn = sorted(float(y[0]) for y in ys if y.size == 1)
    finally:
        plt.close(fig)
    assert drawn == sorted(v for _, _, v in plots.PUBLISHED_MARKERS["multiqueue-pingpong"])


def test_extra_strategies_alone_still_plot(tables: dict[str, pd.DataFrame], tmp_path: Path) -> None:
    table = tables["coalescing-msgrate"]
    extras = table[~table["strategy"].isin(plots.STUDY_STRATEGIES)]
    assert len(extras) and _draw("coalescing-msgrate", extras, tmp_path / "x.png")


def test_unknown_experiment_uses_the_generic_plot(tmp_path: Path) -> None:
    table = pd.DataFrame({"a": ["x", "y"], "b": [1, 2], "m": [0.5, 0.25]})
    path = plots.plot("custom", "t", table, ("a", "b"), ("m",), tmp_path / "c.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("exp_id", ["coalescing-pingpong", "coalescing-nas-is", *OMX_MQ])
def test_png_bytes_are_stable(exp_id: str, tables: dict[str, pd.DataFrame], tmp_path: Path) -> None:
    first = _draw(exp_id, tables[exp_id], tmp_path / "a.png")
    assert first == _draw(exp_id, tables[exp_id], tmp_path / "b.png")
    assert b"Software" not in first and b"Creation" not in first
