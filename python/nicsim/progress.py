"""What a campaign tells the terminal: a progress bar and short notes on stderr.

This module owns the look of a campaign's progress: a rich bar with
done/total, the rate, the time elapsed and the estimated time left, drawn
only when stderr is a terminal; and one-line notes (the Dask dashboard
address, how many jobs a resumed campaign found done). Everything is silent
when the campaign is quiet. It does not run anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

__all__ = ["Reporter"]


class Reporter:
    """Progress of one campaign on stderr.

    Parameters
    ----------
    description
        Label of the bar (e.g. ``"nicsim omx-coal"``); ``None`` is quiet:
        no bar and no notes.
    unit
        What the bar counts, for its rate (``"jobs"``: jobs per second).
    """

    def __init__(self, description: str | None, unit: str = "jobs") -> None:
        self.description = description
        self.unit = unit
        self._console: Console | None = None
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    @property
    def quiet(self) -> bool:
        """Whether nothing is printed."""
        return self.description is None

    def _stderr(self) -> Console:
        if self._console is None:
            self._console = Console(stderr=True)
        return self._console

    def note(self, text: str) -> None:
        """Print one line on stderr (above the bar if one is drawn)."""
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
        else:
            self._stderr().print(text, markup=False, highlight=False, soft_wrap=True)

    @contextmanager
    def bar(self, total: int, done: int = 0) -> Iterator[None]:
        """Draw the bar while the block runs (only on a terminal)."""
        if self.quiet or total <= done or not self._stderr().is_terminal:
            yield
            return
        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            RateColumn(self.unit),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self._stderr(),
            transient=True,
        )
        self._task = bar.add_task(self.description or "", total=total, completed=done)
        self._bar = bar
        try:
            with bar:
                yield
        finally:
            self._bar = None
            self._task = None

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more units done (one job, by default)."""
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task, steps)


class RateColumn(ProgressColumn):
    """Units per second (rich averages the speed over the last half minute)."""

    def __init__(self, unit: str = "jobs") -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        """Render the rate of ``task``."""
        speed = task.speed
        return Text(f"-- {self.unit}/s" if speed is None else f"{speed:.2f} {self.unit}/s")
