"""The records of the mechanisms catalogue (:mod:`nicsim.studies.validation_mechanisms`).

:class:`Mechanism`: a cause a study's prose gives for a result, quoted, and
whether nicsim models it; :class:`Code` and :class:`Test` name where, and
what shows it. The four studies' catalogues are data
(``mechanisms/*.toml``), read into these records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nicsim.studies.papers import Quote

Status = Literal["modelled", "partly", "not modelled"]
STATUSES: tuple[Status, ...] = ("modelled", "partly", "not modelled")


@dataclass(frozen=True)
class Code:
    """A place in nicsim: a repository file and a name (function, constant, key) in it."""

    path: str
    symbol: str

    def __str__(self) -> str:
        return f"`{self.path}` (`{self.symbol}`)"


@dataclass(frozen=True)
class Test:
    """A test function: its file and name."""

    path: str
    name: str

    def __str__(self) -> str:
        return f"`{self.path}::{self.name}`"


@dataclass(frozen=True)
class Mechanism:
    """A cause the study's prose gives for a result, and whether nicsim models it.

    Attributes
    ----------
    name
        Short name of the mechanism.
    quotes
        The study's sentences that give it (first: the main one).
    explains
        The published result(s) it is the cause of.
    status
        ``"modelled"``, ``"partly"`` or ``"not modelled"``.
    code
        Where nicsim models it (or where it would go).
    tests
        Tests that show it (a relation that fails without it).
    shown_by
        Experiments whose tables show it.
    how
        How nicsim models it and, for ``partly``/``not modelled``, what is
        missing and what that does to the results.
    """

    name: str
    quotes: tuple[Quote, ...]
    explains: str
    status: Status
    code: tuple[Code, ...] = ()
    tests: tuple[Test, ...] = ()
    shown_by: tuple[str, ...] = ()
    how: str = ""

    @property
    def study(self) -> str:
        """The study key of its first quote."""
        return self.quotes[0].study
