"""Claims that conflict with the studies' own numbers by arithmetic.

Issue 46 lets at most :data:`MAX_CONFLICTS` claims end as a conflict: the
claim fails, and arithmetic from the studies' published numbers shows it
cannot hold together with them. Each record (``conflicts.toml`` in this
package) names its claim, the numbers it uses with their sources, the
arithmetic, and what it assumes that no study states. :func:`for_claim`
finds the record of a claim; :func:`lines` renders the section of
``docs/validation.md``. A record only explains a claim that fails: for a
claim that holds it is reported as moot.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import pandas as pd

from nicsim.studies.exp_base import Claim
from nicsim.studies.experiments import EXPERIMENTS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: At most this many claims may end as conflicts (issue 46, "Done means").
MAX_CONFLICTS = 3


@dataclass(frozen=True)
class Conflict:
    """One claim shown to conflict with published numbers by arithmetic.

    Attributes
    ----------
    experiment
        The experiment whose claim it is.
    claim
        The start of the claim's text (:attr:`Claim.text`), which names it.
    numbers
        Each published number the arithmetic uses, with its study and place.
    arithmetic
        The steps, in Markdown.
    assumes
        What the arithmetic takes that no study states.
    detail
        Where the reading of the 2009 code behind it is written.
    """

    experiment: str
    claim: str
    numbers: tuple[str, ...]
    arithmetic: str
    assumes: tuple[str, ...]
    detail: str

    def names(self, experiment: str, claim: Claim) -> bool:
        """Whether this record is about ``claim`` of ``experiment``."""
        return experiment == self.experiment and claim.text.startswith(self.claim)


def _record(d: dict[str, Any]) -> Conflict:
    return Conflict(
        d["experiment"],
        d["claim"],
        tuple(d["numbers"]),
        d["arithmetic"].strip(),
        tuple(d["assumes"]),
        d["detail"],
    )


def load() -> tuple[Conflict, ...]:
    """Return the records of ``conflicts.toml``, each checked to name one claim.

    Raises
    ------
    ValueError
        If a record names no claim of its experiment or more than one, or
        there are more than :data:`MAX_CONFLICTS` records.
    """
    text = resources.files("nicsim.studies").joinpath("conflicts.toml").read_text("utf-8")
    records = tuple(_record(d) for d in tomllib.loads(text)["conflict"])
    if len(records) > MAX_CONFLICTS:
        raise ValueError(f"conflicts.toml: {len(records)} records, at most {MAX_CONFLICTS}")
    for r in records:
        exp = EXPERIMENTS.get(r.experiment)
        if exp is None:
            raise ValueError(f"conflicts.toml: experiment {r.experiment!r} does not exist")
        named = [c for c in exp.claims if r.names(r.experiment, c)]
        if len(named) != 1:
            raise ValueError(
                f"conflicts.toml: claim {r.claim!r} names {len(named)} claims of "
                f"{r.experiment!r}, not one"
            )
    return records


#: The records, read once.
CONFLICTS: tuple[Conflict, ...] = load()


def for_claim(experiment: str, claim: Claim) -> Conflict | None:
    """Return the record about ``claim`` of ``experiment``, if there is one."""
    return next((r for r in CONFLICTS if r.names(experiment, claim)), None)


def verdict(experiment: str, claim: Claim, holds: bool) -> str:
    """Return the word a claims table writes: ``yes``, ``no`` or ``no (conflicts ...)``."""
    if holds:
        return "yes"
    if for_claim(experiment, claim) is not None:
        return "no (conflicts by arithmetic)"
    return "no"


def lines(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """Return the section of ``validation.md`` with each record and its claim's value."""
    out = [
        "## Claims that conflict by arithmetic",
        "",
        "A claim that fails, and arithmetic from the studies' published numbers showing it "
        f"cannot hold together with them (at most {MAX_CONFLICTS}; records in "
        "`python/nicsim/studies/conflicts.toml`). Each says what it assumes that no study "
        "states: the conflict is only as strong as that.",
        "",
    ]
    for r in CONFLICTS:
        claim = next(c for c in EXPERIMENTS[r.experiment].claims if r.names(r.experiment, c))
        table = tables.get(r.experiment)
        checked = None if table is None else claim.check(table)
        if checked is None:
            state = "not run"
        else:
            value, holds = checked
            state = f"{value:.4g}, " + ("holds (the record is moot)" if holds else "fails")
        out += [f"### `{r.experiment}`: {claim.text}", "", f"- Simulated: {state}."]
        out += ["- Published numbers used:", *(f"  - {n}" for n in r.numbers)]
        out += ["", r.arithmetic, "", "Assumes:", "", *(f"- {a}" for a in r.assumes)]
        out += ["", f"The reading behind it: {r.detail}.", ""]
    return out
