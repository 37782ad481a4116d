"""What an experiment is made of: :class:`Experiment`, published values, claims.

This module owns the types every ``exp_*`` study module builds its
experiments from (:class:`Experiment`, :class:`Published`, :class:`Claim`,
:class:`Cell`) and the helpers for writing them (:func:`grid`, readers such
as :func:`at` and :func:`ratio`, :func:`scaled`). It holds no experiment and
no registry (:mod:`nicsim.studies.experiments` lists them), runs nothing
(:mod:`nicsim.runner`) and draws nothing (the ``plots*`` modules).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import pandas as pd

from nicsim.studies.papers import Quote, Ref

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "DEFAULT_FIGSIZE",
    "TOLERANCE",
    "Cell",
    "Check",
    "Claim",
    "Experiment",
    "Params",
    "PercentAbove",
    "Plotter",
    "Published",
    "Quote",
    "Reader",
    "Ref",
    "ScenarioDict",
    "at",
    "difference",
    "grid",
    "number",
    "own",
    "percent_above",
    "ratio",
    "scaled",
    "unavailable",
]

#: One configuration: parameter column name → value.
Params = dict[str, str | int | float]
#: The scenario dict (sections as in the TOML file) of one configuration.
ScenarioDict = dict[str, Any]
#: Reads one number off a result table (``None`` if the rows are missing).
Reader = Callable[[pd.DataFrame], float | None]
#: Draws a result table on a figure; gets the experiment's published values
#: so that it can mark those that are one table cell (:attr:`Published.cell`).
Plotter: TypeAlias = "Callable[[pd.DataFrame, Figure, tuple[Published, ...]], None]"
#: Figure size (inches) of an experiment that does not set its own.
DEFAULT_FIGSIZE = (11.0, 4.5)


@dataclass(frozen=True)
class Cell:
    """One cell of a result table: ``metric`` in the single row matching ``where``.

    Calling a cell reads it (it is a :data:`Reader`); a published value read
    from a cell can be drawn at that cell's place in a plot.

    Examples
    --------
    >>> table = pd.DataFrame({"strategy": ["timeout", "openmx"], "rate": [4.0, 3.0]})
    >>> at("rate", strategy="openmx")(table)
    3.0
    >>> at("rate", strategy="stream")(table) is None
    True

    A cell the run did not measure (an empty cell: ``None`` or NaN) reads
    as ``None`` too, so no comparison is made with it; :meth:`unmeasured`
    tells the two apart.
    """

    metric: str
    #: ``(column, value)`` pairs the row must match.
    where: tuple[tuple[str, str | int | float], ...]

    def __call__(self, table: pd.DataFrame) -> float | None:
        """Return the cell's value, or ``None`` unless exactly one row matches and is measured."""
        hits = self._hits(table)
        if len(hits) != 1 or pd.isna(hits.iloc[0]):
            return None
        return float(hits.iloc[0])

    def _hits(self, table: pd.DataFrame) -> pd.Series:
        mask = pd.Series(True, index=table.index)
        for column, value in self.where:
            mask &= table[column] == value
        return table.loc[mask, self.metric]

    def unmeasured(self, table: pd.DataFrame) -> bool:
        """Whether exactly one row matches and the run did not measure its value."""
        hits = self._hits(table)
        return len(hits) == 1 and bool(pd.isna(hits.iloc[0]))

    def get(self, column: str) -> str | int | float | None:
        """Return the value the row must have in ``column`` (``None`` if unconstrained)."""
        return dict(self.where).get(column)

    def matches(self, **where: Any) -> bool:
        """Whether the cell's row selector sets every ``column=value`` given."""
        selector = dict(self.where)
        return all(column in selector and selector[column] == v for column, v in where.items())


#: Relative tolerance of "agrees" for a published value (not a bound).
TOLERANCE = 0.15


@dataclass(frozen=True)
class Check:
    """A published value against the simulated table.

    ``simulated`` and ``ratio`` (simulated / published) are ``None`` when
    the table lacks the rows; ``agrees`` is then ``None`` too. A value
    agrees when it is within :data:`TOLERANCE`; a bound when it holds.
    """

    simulated: float | None
    ratio: float | None
    agrees: bool | None


@dataclass(frozen=True)
class Published:
    """A number a reference study prints, and how to read it off our table.

    Attributes
    ----------
    quantity
        Human description, e.g. ``"msg rate, 0 B, timeout"``.
    value
        The published value, in the unit of the quantity read.
    simulated
        Extracts the simulated counterpart from the experiment's table
        (``None`` if the table lacks the row). A :class:`Cell` (made by
        :func:`at`) also tells the plot where to mark the value.
    source
        Where the study prints it, e.g. ``Ref("omx-coal", "Table I")``.
    printed
        The number as the study prints it there (``"490k"``, ``"29.80 %"``,
        ``"more than a factor of two"``); empty means ``f"{value:g}"``.
        :func:`number` of it times ``scale`` is ``value`` (unless it is
        written in words).
    scale
        Converts the printed number to the unit of ``value`` (``0.01`` for
        a percentage read as a fraction).
    fit
        The calibration that fitted preset parameters to this value (a key
        of :data:`nicsim.studies.validation.FITS`); ``None``: nothing was fitted to
        it, so the simulated value is a prediction.
    bound
        ``"="``: a value (agrees within :data:`TOLERANCE`); ``"<"``/``">"``:
        the study states a bound ("more than a factor of two").
    note
        Why the simulated quantity is not quite the published one, if so.
    """

    quantity: str
    value: float
    simulated: Reader
    source: Ref
    printed: str = ""
    scale: float = 1.0
    fit: str | None = None
    bound: Literal["=", "<", ">"] = "="
    note: str = ""

    @property
    def cell(self) -> Cell | None:
        """The table cell the value belongs to, if it is one cell (else ``None``).

        A bound is never drawn as a value, so it has no cell.
        """
        if self.bound != "=":
            return None
        return self.simulated if isinstance(self.simulated, Cell) else None

    @property
    def as_printed(self) -> str:
        """The number as the study prints it."""
        return self.printed or f"{self.value:g}"

    @property
    def status(self) -> str:
        """``"fitted"`` or ``"predicted"``."""
        return "predicted" if self.fit is None else "fitted"

    @property
    def target(self) -> str:
        """The published value as a target: ``"0.5"``, or ``"< 0.5"`` for a bound."""
        value = f"{self.value:g}"
        return value if self.bound == "=" else f"{self.bound} {value}"

    def check(self, table: pd.DataFrame) -> Check:
        """Compare the simulated counterpart with the published value.

        Examples
        --------
        >>> p = Published("r", 2.0, at("r", k=1), Ref("omx-coal", "§IV-C2"))
        >>> p.check(pd.DataFrame({"k": [1], "r": [2.2]}))
        Check(simulated=2.2, ratio=1.1, agrees=True)
        >>> bound = Published("r", 0.5, at("r", k=1), Ref("omx-coal", "§IV-B1"), bound="<")
        >>> bound.check(pd.DataFrame({"k": [1], "r": [0.6]})).agrees
        False
        """
        simulated = self.simulated(table)
        if simulated is None:
            return Check(None, None, None)
        simulated = float(simulated)
        ratio = simulated / self.value if self.value else None
        if self.bound == "<":
            agrees = simulated < self.value
        elif self.bound == ">":
            agrees = simulated > self.value
        else:
            agrees = ratio is not None and abs(ratio - 1.0) <= TOLERANCE
        return Check(simulated, ratio, agrees)


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def number(printed: str) -> float | None:
    """Return the first number written in digits in ``printed`` (a ``k`` after it: x 1000).

    Examples
    --------
    >>> number("490k"), number("29.80 %"), number("roughly 40 ns"), number("a factor of two")
    (490000.0, 29.8, 40.0, None)
    """
    m = _NUMBER.search(printed)
    if m is None:
        return None
    value = float(m.group(0))
    return value * 1000 if printed[m.end() : m.end() + 1] == "k" else value


def own(reason: str) -> str:
    """Source of a claim that is nicsim's own expectation, not a study's statement.

    Examples
    --------
    >>> own("model and simulator read one scenario")
    "nicsim's expectation: model and simulator read one scenario"
    """
    return f"nicsim's expectation: {reason}"


#: Comparison of a claim's value with its bound, by the symbol the text shows.
Comparison = Literal["<", "<=", ">", ">="]
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Claim:
    """A qualitative published statement, checked on the simulated table.

    The check is ``value(table) <comparison> bound``; :attr:`text` writes the
    same comparison and bound after the statement, so the two cannot differ.
    Build claims with :meth:`below`, :meth:`above`, :meth:`at_most` or
    :meth:`at_least`.

    Attributes
    ----------
    statement
        The statement and the quantity it is checked on, without the
        comparison, e.g. ``"openmx transfers as fast as disabled:
        time(openmx) / time(disabled)"``.
    value
        Reads that quantity off the table (``None`` if rows are missing).
    comparison, bound
        The check: ``value <comparison> bound``.
    source
        A :class:`Quote` of the study that makes the statement (section and
        sentences), or, for a statement that is not a study's, its origin:
        :func:`own` for nicsim's own expectations, or an outside document.
    unit
        Unit of the bound, written after it (e.g. ``"ns"``).

    Examples
    --------
    >>> claim = Claim.below(at("r", k=1), 0.5, text="r stays small: r(1)", source=own("test"))
    >>> claim.text
    'r stays small: r(1) < 0.5'
    >>> claim.check(pd.DataFrame({"k": [1], "r": [0.25]}))
    (0.25, True)
    """

    statement: str
    value: Reader
    comparison: Comparison
    bound: float
    source: Quote | str
    unit: str = ""

    def __post_init__(self) -> None:
        if self.comparison not in _COMPARE:
            allowed = ", ".join(_COMPARE)
            raise ValueError(f"comparison = {self.comparison!r}: unknown; allowed: {allowed}")
        if float(_bound_text(self.bound)) != self.bound:
            raise ValueError(f"bound = {self.bound!r}: the text would round it; use fewer digits")

    @classmethod
    def below(
        cls, value: Reader, bound: float, *, text: str, source: Quote | str, unit: str = ""
    ) -> Claim:
        """Claim that ``value < bound``; ``text`` is the statement without the comparison."""
        return cls(text, value, "<", bound, source, unit)

    @classmethod
    def above(
        cls, value: Reader, bound: float, *, text: str, source: Quote | str, unit: str = ""
    ) -> Claim:
        """Claim that ``value > bound``; ``text`` is the statement without the comparison."""
        return cls(text, value, ">", bound, source, unit)

    @classmethod
    def at_most(
        cls, value: Reader, bound: float, *, text: str, source: Quote | str, unit: str = ""
    ) -> Claim:
        """Claim that ``value <= bound``; ``text`` is the statement without the comparison."""
        return cls(text, value, "<=", bound, source, unit)

    @classmethod
    def at_least(
        cls, value: Reader, bound: float, *, text: str, source: Quote | str, unit: str = ""
    ) -> Claim:
        """Claim that ``value >= bound``; ``text`` is the statement without the comparison."""
        return cls(text, value, ">=", bound, source, unit)

    @property
    def text(self) -> str:
        """The statement followed by the comparison it is checked with."""
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.statement} {self.comparison} {_bound_text(self.bound)}{unit}"

    def holds(self, value: float) -> bool:
        """Whether the claim holds for this simulated value."""
        return _COMPARE[self.comparison](value, self.bound)

    def check(self, table: pd.DataFrame) -> tuple[float, bool] | None:
        """Return ``(simulated value, holds)``, or ``None`` if rows are missing."""
        value = self.value(table)
        return None if value is None else (value, self.holds(value))


def _bound_text(bound: float) -> str:
    return f"{bound:g}"


@dataclass(frozen=True)
class Experiment:
    """One experiment: what to run, what to compare it with, how to draw it.

    Attributes
    ----------
    id
        Stable id, e.g. ``"coalescing-pingpong"``.
    title
        One line for reports and plots.
    parameters, metrics
        Column names of the result table, in order (parameters first).
    configurations
        ``quick -> [Params, ...]`` in table row order.
    scenario
        ``(params, quick) -> scenario dict`` (without preset and seed).
    finish
        Optional fix-up of one row's metrics (e.g. throughput 0 at size 0).
    published, claims
        What the reference study reports, for the report; published values
        read from one cell (:func:`at`) are also marked in the plot.
    plot, figsize
        The figure of the table (``None``: one line per parameter
        combination, :func:`nicsim.studies.plots.generic`) and its size in inches.
    """

    id: str
    title: str
    parameters: tuple[str, ...]
    metrics: tuple[str, ...]
    configurations: Callable[[bool], list[Params]]
    scenario: Callable[[Params, bool], ScenarioDict]
    finish: Callable[[Params, dict[str, Any]], dict[str, Any]] | None = None
    published: tuple[Published, ...] = ()
    claims: tuple[Claim, ...] = field(default=())
    #: The platform preset the experiment is about (``None``: the run's default).
    preset: str | None = None
    #: Optional whole-table step after the rows are assembled (e.g. ratios
    #: between rows, like ``relative_to_native``).
    post: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    #: Markdown for the report: where the model and the study differ, and
    #: why we think so (shown after the claims).
    discussion: str = ""
    #: Optional analytic model evaluated on the very scenario text the
    #: simulator runs: ``(params, scenario_toml) -> extra metrics``, merged
    #: into the row's metrics before ``finish``.
    model: Callable[[Params, str], dict[str, Any]] | None = None
    #: Optional discussion computed from the finished table (Markdown),
    #: e.g. where and why a model and the simulation differ; shown after
    #: ``discussion``.
    notes: Callable[[pd.DataFrame], str] | None = None
    plot: Plotter | None = None
    figsize: tuple[float, float] = DEFAULT_FIGSIZE
    #: The parameters that choose the simulated program (``None``: each row
    #: draws its own). Rows that agree on them run under one seed
    #: (:func:`nicsim.runner.plan`), so that they run one program, as a
    #: study runs one application under each setting of the mechanism, and
    #: the ratios between them measure the mechanism rather than two
    #: different draws of the program (common random numbers).
    program: tuple[str, ...] | None = None
    #: How many times a row runs, each under its own seed (``None``: once):
    #: the table holds the mean of its runs, their count (``runs``) and
    #: range (``<metric>_min``, ``<metric>_max``; :func:`nicsim.runner.table`).
    #: For rows whose value is a draw from a distribution the model makes
    #: explicit (NAS IS's pull-timer waits: the kernel tick's phase,
    #: ``host.tick``), as a study's run was one draw of the same.
    runs: Callable[[Params], int] | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        """Parameter columns then metric columns (with ``runs``: their count and range)."""
        if self.runs is None:
            return self.parameters + self.metrics
        spread = tuple(f"{m}_{end}" for m in self.metrics for end in ("min", "max"))
        return self.parameters + self.metrics + ("runs", *spread)


# -- helpers for writing experiments ---------------------------------------


def grid(**axes: Iterable[str | int | float]) -> list[Params]:
    """Cartesian product of the axes, first axis slowest (table row order).

    Examples
    --------
    >>> grid(a=[1, 2], b=["x", "y"])
    [{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'y'}, {'a': 2, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    """
    rows: list[Params] = [{}]
    for name, values in axes.items():
        rows = [{**row, name: value} for row in rows for value in values]
    return rows


def unavailable(reader: Reader, table: pd.DataFrame) -> str:
    """Return why ``reader`` gives no value on ``table``.

    ``"not measured"`` when it reads one cell the run did not measure, else
    ``"n/a"`` (rows missing, or a reader of several cells).
    """
    return "not measured" if isinstance(reader, Cell) and reader.unmeasured(table) else "n/a"


def at(metric: str, **where: str | int | float) -> Cell:
    """Return a reader of ``metric`` in the single row matching ``where``."""
    return Cell(metric, tuple(where.items()))


def ratio(numerator: Reader, denominator: Reader) -> Reader:
    """Return a reader of ``numerator / denominator``."""

    def read(table: pd.DataFrame) -> float | None:
        num, den = numerator(table), denominator(table)
        return None if num is None or den is None or den == 0 else num / den

    return read


def difference(minuend: Reader, subtrahend: Reader) -> Reader:
    """Return a reader of ``minuend - subtrahend``."""

    def read(table: pd.DataFrame) -> float | None:
        a, b = minuend(table), subtrahend(table)
        return None if a is None or b is None else a - b

    return read


@dataclass(frozen=True)
class PercentAbove:
    """A reader of ``100 * (numerator / denominator - 1)``: how many percent above.

    A study's "speedup" of one run over another reads so (negative: a
    slowdown). A change near 0 has no scale of its own: the seed-stability
    check (:mod:`nicsim.studies.seeds`) tells it from other values by this
    class.

    Examples
    --------
    >>> table = pd.DataFrame({"k": [1, 2], "t": [10.5, 10.0]})
    >>> round(PercentAbove(at("t", k=1), at("t", k=2))(table), 9)
    5.0
    """

    numerator: Reader
    denominator: Reader

    def __call__(self, table: pd.DataFrame) -> float | None:
        """Return the change in percent, or ``None`` if a cell is missing or the base is 0."""
        value = ratio(self.numerator, self.denominator)(table)
        return None if value is None else 100.0 * (value - 1.0)


def percent_above(numerator: Reader, denominator: Reader) -> Reader:
    """Return a reader of ``100 * (numerator / denominator - 1)``: :class:`PercentAbove`."""
    return PercentAbove(numerator, denominator)


def scaled(count: int, size_bytes: int, volume_bytes: int, floor: int) -> int:
    """Repetitions: ``count``, cut so that big messages move about ``volume_bytes``.

    Like IMB's ``OVERALL_VOL`` limit, so a 4 MiB sweep point does not cost
    thousands of times more than a 0 B one; never below ``floor``.

    Examples
    --------
    >>> scaled(1000, 0, 64 << 20, 10), scaled(1000, 4 << 20, 64 << 20, 10)
    (1000, 16)
    """
    if size_bytes > 0:
        count = min(count, max(floor, volume_bytes // size_bytes))
    return count
