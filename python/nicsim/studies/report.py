"""Result files: ``<out>/<exp>.csv``, ``.parquet``, ``.png`` and ``report.md``.

This module owns file formats and the Markdown report (tables, plots and the
simulated-vs-published comparison). It does not run the simulator: it is
given finished tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from nicsim.outputs import naming
from nicsim.studies import exp_base, validation_conflicts
from nicsim.studies import experiments as _experiments
from nicsim.studies.experiments import Experiment
from nicsim.studies.plots import plot

__all__ = [
    "FLOAT_FORMAT",
    "Provenance",
    "claims",
    "comparison",
    "summary_row",
    "write_report",
    "write_table",
]

#: Fixed float format of CSV and Markdown, so output bytes are stable.
FLOAT_FORMAT = "%.6g"
#: Relative tolerance of the "within" column of the published comparison.
TOLERANCE = exp_base.TOLERANCE


@dataclass(frozen=True)
class Provenance:
    """How a set of tables was produced (printed at the top of the report)."""

    nicsim_version: str
    preset: str
    seed: int
    quick: bool

    def lines(self) -> list[str]:
        """Markdown bullet lines."""
        return [
            f"- nicsim version: {self.nicsim_version}",
            f"- preset: `{self.preset}`",
            f"- base seed: {self.seed}",
            f"- mode: {'quick (reduced iterations/messages)' if self.quick else 'full'}",
        ]


def write_table(table: pd.DataFrame, out_dir: Path, exp_id: str) -> tuple[Path, Path]:
    r"""Write ``<exp>.csv`` (fixed float format, ``\\n`` line ends) and ``<exp>.parquet``."""
    csv_path = out_dir / f"{exp_id}.csv"
    parquet_path = out_dir / f"{exp_id}.parquet"
    with naming(csv_path):
        table.to_csv(csv_path, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    with naming(parquet_path):
        table.to_parquet(parquet_path, index=False)
    return csv_path, parquet_path


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return FLOAT_FORMAT % value
    # A bare "|" would end the cell.
    return str(value).replace("|", "\\|")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    r"""Format rows as a GitHub-flavoured Markdown table (``|`` in a cell is escaped).

    Examples
    --------
    >>> print(markdown_table(["a", "b"], [[1, 0.5], ["x|y", 2]]))
    | a | b |
    |---|---|
    | 1 | 0.5 |
    | x\|y | 2 |
    """
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def comparison(experiment: Experiment, table: pd.DataFrame) -> list[list[Any]]:
    """Rows ``[quantity, simulated, published, ratio, within 15%, fitted or predicted, source]``.

    ``published`` is the value, or ``"< v"`` / ``"> v"`` for a bound the study
    states; ``within 15%`` then says whether the bound holds. The same
    :meth:`~nicsim.studies.exp_base.Published.check` makes the rows of
    ``validation.md``.
    """
    rows: list[list[Any]] = []
    for item in experiment.published:
        check = item.check(table)
        published: Any = item.value if item.bound == "=" else item.target
        source = f'{item.source} ("{item.as_printed}")'
        if check.simulated is None:
            # A value the run did not measure is not compared.
            why = exp_base.unavailable(item.simulated, table)
            rows.append([item.quantity, why, published, "n/a", "n/a", item.status, source])
            continue
        ratio = "n/a" if check.ratio is None else check.ratio
        within = "yes" if check.agrees else "no"
        rows.append([item.quantity, check.simulated, published, ratio, within, item.status, source])
    return rows


def claims(experiment: Experiment, table: pd.DataFrame) -> list[list[Any]]:
    """Rows ``[claim, simulated, holds, source]`` (the quote, or nicsim's own reason)."""
    rows: list[list[Any]] = []
    for claim in experiment.claims:
        checked = claim.check(table)
        source = str(claim.source)
        if checked is None:
            rows.append([claim.text, exp_base.unavailable(claim.value, table), "n/a", source])
        else:
            value, holds = checked
            word = validation_conflicts.verdict(experiment.id, claim, holds)
            rows.append([claim.text, float(value), word, source])
    return rows


def _count(rows: Sequence[Sequence[Any]], column: int) -> str:
    """``"k/n"``: rows whose ``column`` says ``"yes"``, of all rows (``"-"`` if none)."""
    if not rows:
        return "-"
    return f"{sum(1 for row in rows if row[column] == 'yes')}/{len(rows)}"


def summary_row(experiment: Experiment, table: pd.DataFrame) -> list[Any]:
    """``[experiment, rows, fitted within 15% (k/n), predicted within 15% (k/n), claims (k/n)]``.

    A published value or claim whose rows are missing (``n/a``) counts in
    ``n`` but not in ``k``.
    """
    compared = comparison(experiment, table)
    return [
        f"[`{experiment.id}`](#{experiment.id})",
        len(table),
        _count([row for row in compared if row[5] == "fitted"], 4),
        _count([row for row in compared if row[5] == "predicted"], 4),
        _count(claims(experiment, table), 2),
    ]


def _section(experiment: Experiment, table: pd.DataFrame) -> list[str]:
    out = [f"## `{experiment.id}`", "", experiment.title, ""]
    out += [f"![{experiment.id}]({experiment.id}.png)", ""]
    rows = table.itertuples(index=False, name=None)
    out += [markdown_table(list(table.columns), list(rows)), ""]
    compared = comparison(experiment, table)
    if compared:
        header = [
            "quantity",
            "simulated",
            "published",
            "ratio",
            "within 15% (bound: holds)",
            "fitted or predicted",
            "source",
        ]
        out += ["### Simulated vs published", "", markdown_table(header, compared), ""]
    checked = claims(experiment, table)
    if checked:
        header = ["claim", "simulated", "holds", "source"]
        out += ["### Claims", "", markdown_table(header, checked), ""]
    discussion = [experiment.discussion] if experiment.discussion else []
    if experiment.notes is not None:
        discussion.append(experiment.notes(table))
    if discussion:
        out += ["### Discussion", "", *discussion, ""]
    out += [f"Data: [`{experiment.id}.csv`]({experiment.id}.csv), `{experiment.id}.parquet`", ""]
    return out


def write_report(tables: Mapping[str, pd.DataFrame], out_dir: Path, provenance: Provenance) -> Path:
    """Write every table, plot and ``report.md`` into ``out_dir``; return the report path.

    An :class:`OSError` of a write (a full disk, say) carries the name of the
    file being written (:func:`nicsim.outputs.naming`).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    sections: list[str] = []
    summary: list[list[Any]] = []
    for exp_id, table in tables.items():
        experiment = _experiments.get(exp_id)
        write_table(table, out_dir, exp_id)
        with naming(out_dir / f"{exp_id}.png"):
            plot(experiment, table, out_dir / f"{exp_id}.png")
        sections += _section(experiment, table)
        summary.append(summary_row(experiment, table))
    header = [
        "experiment",
        "rows",
        "fitted values within 15% (k/n)",
        "predicted values within 15% (k/n)",
        "claims holding (k/n)",
    ]
    lines = [
        "# nicsim reproduction report",
        "",
        *provenance.lines(),
        "",
        "## Summary",
        "",
        markdown_table(header, summary),
        "",
        f"k/n: simulated values within {TOLERANCE:.0%} of the published value (a bound the "
        "study states: it holds), and claims that hold on the simulated table; a value or "
        "claim whose rows are missing (n/a) counts in n only. *Fitted*: preset parameters "
        "were calibrated to that very value, so agreement only shows the fit worked; "
        "*predicted*: nothing was fitted to it. `validation.md` lists every published number "
        "of the studies (simulated or not, with the reason) and every mechanism they name. "
        "Rows beyond the study (adaptive, openmx-adaptive) are drawn dashed or hatched in the "
        "plots.",
        "",
        *sections,
    ]
    path = out_dir / "report.md"
    with naming(path):
        path.write_text("\n".join(lines), encoding="utf-8")
    return path
