"""The mechanisms of ``docs/validation.md``.

:data:`MECHANISMS`: every mechanism a study's prose gives as the cause of a
result, quoted, with whether nicsim models it (where, and the tests that
show it) or not (why). Each study's catalogue is a data file of its own,
``mechanisms/<study>.toml`` in this package (``coal``, ``mq``, ``lci``,
``emo``), read into the records of :mod:`nicsim.studies.validation_records`.
Re-exported by :mod:`nicsim.studies.validation`, which joins it with a run's tables.
"""

from __future__ import annotations

import sys
from importlib import resources
from typing import Any, cast

from nicsim.studies.papers import Quote
from nicsim.studies.validation_records import STATUSES, Code, Mechanism, Status, Test

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = ["MECHANISMS", "STATUSES", "Code", "Mechanism", "Status", "Test", "load"]

#: The catalogues, in the order the studies are reported.
CATALOGUES = ("coal", "mq", "lci", "emo")


def _mechanism(d: dict[str, Any]) -> Mechanism:
    status = d["status"]
    if status not in STATUSES:
        raise ValueError(f"mechanism {d['name']!r}: status {status!r}, not one of {STATUSES}")
    return Mechanism(
        d["name"],
        tuple(Quote(q["study"], q["where"], q["text"]) for q in d["quote"]),
        d["explains"],
        cast(Status, status),
        tuple(Code(c["path"], c["symbol"]) for c in d.get("code", ())),
        tuple(Test(t["path"], t["name"]) for t in d.get("test", ())),
        tuple(d.get("shown_by", ())),
        d.get("how", ""),
    )


def load(catalogue: str) -> tuple[Mechanism, ...]:
    """Return the mechanisms of one catalogue (``"coal"``, ``"mq"``, ...)."""
    text = (
        resources.files("nicsim.studies")
        .joinpath("mechanisms", f"{catalogue}.toml")
        .read_text("utf-8")
    )
    return tuple(_mechanism(d) for d in tomllib.loads(text)["mechanism"])


#: Every mechanism the studies' prose gives as the cause of a result.
MECHANISMS: tuple[Mechanism, ...] = tuple(m for c in CATALOGUES for m in load(c))
