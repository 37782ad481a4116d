"""The published numbers of ``docs/validation.md`` that no experiment carries.

:data:`NUMBERS`: not simulated, with the reason, and the platform and
workload parameters the presets take. The data is ``numbers.toml`` in this
package, read into :class:`PublishedNumber` records. Re-exported by
:mod:`nicsim.studies.validation`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal, cast

from nicsim.studies.papers import Ref

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

Kind = Literal["result", "input"]
KINDS: tuple[Kind, ...] = ("result", "input")


@dataclass(frozen=True)
class PublishedNumber:
    """A number a study prints that no experiment simulates.

    Attributes
    ----------
    quantity, value, source, printed, scale
        As in :class:`~nicsim.studies.exp_base.Published`.
    reason
        Why it is not simulated (a configuration not run, a metric not
        measured), or, for an input, where nicsim takes it.
    kind
        ``"result"`` (a measurement) or ``"input"`` (a platform, protocol or
        workload parameter of the study).
    fit
        For a result some calibration was fitted to (e.g. a latency only
        the fit runs): that calibration.
    """

    quantity: str
    value: float
    source: Ref
    printed: str
    reason: str
    kind: Kind = "result"
    scale: float = 1.0
    fit: str | None = None


def _number(d: dict[str, Any]) -> PublishedNumber:
    kind = d.get("kind", "result")
    if kind not in KINDS:
        raise ValueError(f"number {d['quantity']!r}: kind {kind!r}, not one of {KINDS}")
    return PublishedNumber(
        d["quantity"],
        d["value"],
        Ref(d["study"], d["where"]),
        d["printed"],
        d["reason"],
        cast(Kind, kind),
        d.get("scale", 1.0),
        d.get("fit"),
    )


def load() -> tuple[PublishedNumber, ...]:
    """Return the published numbers of ``numbers.toml``, in its order."""
    text = resources.files("nicsim.studies").joinpath("numbers.toml").read_text("utf-8")
    return tuple(_number(d) for d in tomllib.loads(text)["number"])


#: Published numbers no experiment simulates, and the studies' parameters.
NUMBERS: tuple[PublishedNumber, ...] = load()
