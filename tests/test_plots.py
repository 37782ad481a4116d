"""Plots: dedicated figures for [OMX-COAL], robust to partial tables, byte-stable."""

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


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    import _fake_core

    return runner.run_experiments(OMX_COAL, jobs=1, quick=True, run_fn=_fake_core.run)


def _draw(exp_id: str, table: pd.DataFrame, path: Path) -> bytes:
    exp = EXPERIMENTS[exp_id]
    plots.plot(exp_id, exp.title, table, exp.parameters, exp.metrics, path)
    return path.read_bytes()


def test_every_omx_coal_experiment_has_a_dedicated_plot() -> None:
    assert set(OMX_COAL) <= set(GROUPS["omx-coal"])
    assert set(OMX_COAL) <= set(plots.PLOTTERS)


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


@pytest.mark.parametrize("exp_id", OMX_COAL)
def test_plots_draw_partial_tables(
    exp_id: str, tables: dict[str, pd.DataFrame], tmp_path: Path
) -> None:
    # pytest turns warnings into errors, so this also catches e.g. empty log axes.
    for name, subset in _subsets(exp_id, tables[exp_id]).items():
        path = tmp_path / f"{name}.png"
        assert _draw(exp_id, subset, path)[:4] == b"\x89PNG", name


def test_extra_strategies_alone_still_plot(tables: dict[str, pd.DataFrame], tmp_path: Path) -> None:
    table = tables["coalescing-msgrate"]
    extras = table[~table["strategy"].isin(plots.STUDY_STRATEGIES)]
    assert len(extras) and _draw("coalescing-msgrate", extras, tmp_path / "x.png")


def test_unknown_experiment_uses_the_generic_plot(tmp_path: Path) -> None:
    table = pd.DataFrame({"a": ["x", "y"], "b": [1, 2], "m": [0.5, 0.25]})
    path = plots.plot("custom", "t", table, ("a", "b"), ("m",), tmp_path / "c.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("exp_id", ["coalescing-pingpong", "coalescing-nas-is"])
def test_png_bytes_are_stable(exp_id: str, tables: dict[str, pd.DataFrame], tmp_path: Path) -> None:
    first = _draw(exp_id, tables[exp_id], tmp_path / "a.png")
    assert first == _draw(exp_id, tables[exp_id], tmp_path / "b.png")
    assert b"Software" not in first and b"Creation" not in first
