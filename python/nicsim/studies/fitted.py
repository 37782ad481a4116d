"""The fitted parameters of the presets: values, physical ranges, sources, misfits.

This module owns the reading of a preset's ``[fitted]`` values and of the
range comments that give each one a physical range with its source
(``docs/presets.md``)::

    # [range host.sleep_exit_ns 2000 .. 10000 shared] C1E exit latency: SPEC 2.3,
    #   "several microseconds" (indented lines continue the source).

and the audit of one against the other: a value outside its range, or
pinned at a bound or within 2 % of its width from one, is a *misfit*; a
fitted value without a range is one too.
``shared`` ranges are properties of the hardware: presets of the same hosts
(:data:`SAME_HOSTS`) hold the same value. It does not fit anything
(:mod:`nicsim.studies.fit`, :mod:`nicsim.studies.fit_lci` search inside these ranges).

Run ``python -m nicsim.studies.fitted`` for the audit of every preset.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace
from typing import Literal

__all__ = ["SAME_HOSTS", "Fitted", "Range", "audit", "fitted_values", "main", "ranges"]

Scope = Literal["shared", "per-study"]

#: Presets that describe the same hosts, so ``shared`` values must agree:
#: [OMX-COAL] IV-A and [OMX-MQ] 4.1 both ran two hosts of 2 x Xeon E5345
#: (Clovertown, 2.33 GHz) with Myri-10G NICs and Linux 2.6.26.
SAME_HOSTS: tuple[tuple[str, ...], ...] = (("omx2009", "omx2009-mq"),)

_NUMBER = r"[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
_RANGE = re.compile(
    rf"^#\s*\[range\s+([\w.]+)\s+({_NUMBER})\s*\.\.\s*({_NUMBER})\s+(shared|per-study)\]\s*(.*)$"
)
_CONTINUATION = re.compile(r"^#\s{2,}(\S.*)$")
_VALUE = re.compile(rf"^(\w+)\s*=\s*({_NUMBER})\s*(#.*)?$")


#: How close to a bound, as a fraction of the range's width, a fitted value
#: counts as at that bound (a misfit).
NEAR_BOUND = 0.02


@dataclass(frozen=True)
class Range:
    """The physical range of one fitted parameter, as a preset states it.

    Examples
    --------
    A value within :data:`NEAR_BOUND` of the range's width from a bound
    counts as at that bound (issue 46: the fit pushed it there, so the
    model misses a mechanism the parameter stands in for).

    >>> r = Range("host.sleep_exit_ns", 2000.0, 10000.0, "shared", "SPEC 2.3")
    >>> r.clamp(1500.0), r.status(2000.0), r.status(3742.0), r.status(12000.0)
    (2000.0, 'at lower bound', 'inside', 'above range')
    >>> r.status(2150.0), r.status(9900.0)
    ('within 2 % of its lower bound', 'within 2 % of its upper bound')
    """

    key: str
    lo: float
    hi: float
    scope: Scope
    source: str

    def clamp(self, value: float) -> float:
        """Return ``value`` moved into the range."""
        return min(self.hi, max(self.lo, value))

    def status(self, value: float) -> str:
        """Where ``value`` lies: inside, at a bound, or outside the range."""
        if value < self.lo:
            return "below range"
        if value > self.hi:
            return "above range"
        if value == self.lo:
            return "at lower bound"
        if value == self.hi:
            return "at upper bound"
        near = NEAR_BOUND * (self.hi - self.lo)
        if value - self.lo <= near:
            return "within 2 % of its lower bound"
        if self.hi - value <= near:
            return "within 2 % of its upper bound"
        return "inside"

    def __str__(self) -> str:
        return f"{self.lo:g} .. {self.hi:g}"


@dataclass(frozen=True)
class Fitted:
    """One ``[fitted]`` value of a preset and its range (``None``: the preset gives none)."""

    preset: str
    key: str
    value: float
    range: Range | None

    @property
    def status(self) -> str:
        """``inside``, ``at lower/upper bound``, ``below/above range`` or ``no range``."""
        return "no range" if self.range is None else self.range.status(self.value)

    @property
    def misfit(self) -> bool:
        """Whether the value is not strictly inside a stated range."""
        return self.status != "inside"


def fitted_values(text: str) -> dict[str, float]:
    r"""Return ``table.key`` -> value of the lines a preset's text marks ``[fitted]``.

    Examples
    --------
    >>> fitted_values("[host]\nirq_entry_ns = 30.0  # [fitted] flood\nx = 1  # [fact]\n")
    {'host.irq_entry_ns': 30.0}
    """
    out: dict[str, float] = {}
    table = ""
    for line in text.splitlines():
        head = re.match(r"^\[([\w.-]+)\]\s*(#.*)?$", line)
        if head:
            table = head.group(1)
            continue
        if line.startswith("[["):
            table = ""
            continue
        value = _VALUE.match(line)
        if value and "[fitted]" in (value.group(3) or ""):
            out[f"{table}.{value.group(1)}" if table else value.group(1)] = float(value.group(2))
    return out


def ranges(text: str) -> dict[str, Range]:
    r"""Return ``table.key`` -> :class:`Range` of a preset's ``# [range ...]`` comments.

    Raises
    ------
    ValueError
        A range comment that does not parse, gives no source, has ``lo >= hi``
        or repeats a key; the message quotes the line.

    Examples
    --------
    >>> text = "# [range host.x_ns 1 .. 5 shared] a source\n#   that goes on\n"
    >>> ranges(text)["host.x_ns"].source
    'a source that goes on'
    """
    out: dict[str, Range] = {}
    entry: Range | None = None  # the range being read; its source grows line by line

    def close(entry: Range | None) -> None:
        if entry is None:
            return
        if not entry.source:
            raise ValueError(f"[range {entry.key} ...]: a range needs its source after the bracket")
        if entry.key in out:
            raise ValueError(f"[range {entry.key} ...]: a second range for {entry.key}")
        out[entry.key] = entry

    for line in text.splitlines():
        more = _CONTINUATION.match(line)
        if re.match(r"^#\s*\[range\b", line):
            close(entry)
            m = _RANGE.match(line)
            if m is None:
                raise ValueError(
                    f"{line!r}: expected '# [range TABLE.KEY LO .. HI shared|per-study] SOURCE'"
                )
            lo, hi = float(m.group(2)), float(m.group(3))
            if not lo < hi:
                raise ValueError(f"{line!r}: the range needs LO < HI")
            scope: Scope = "shared" if m.group(4) == "shared" else "per-study"
            entry = Range(m.group(1), lo, hi, scope, m.group(5).strip())
        elif entry is not None and more and not more.group(1).startswith("["):
            entry = replace(entry, source=f"{entry.source} {more.group(1).strip()}".strip())
        else:
            close(entry)
            entry = None
    close(entry)
    return out


def audit(preset: str, text: str | None = None) -> list[Fitted]:
    """Return every ``[fitted]`` value of a preset with its range, in file order.

    ``text`` is the preset's TOML (default: the embedded preset ``preset``).
    """
    if text is None:
        from nicsim import _core

        text = _core.preset_toml(preset)
    stated = ranges(text)
    return [
        Fitted(preset, key, value, stated.get(key)) for key, value in fitted_values(text).items()
    ]


def audit_table(preset_names: list[str] | None = None) -> str:
    """Return the audit of the embedded presets as a Markdown table."""
    from nicsim import _core
    from nicsim.studies.report import markdown_table

    rows = []
    for name in preset_names or _core.presets():
        for f in audit(name):
            where = "-" if f.range is None else f"{f.range} ({f.range.scope})"
            flag = f.status if not f.misfit else f"**misfit: {f.status}**"
            source = "-" if f.range is None else f.range.source
            rows.append([name, f"`{f.key}`", f"{f.value:g}", where, flag, source])
    header = ["preset", "parameter", "value", "physical range", "status", "source of the range"]
    return markdown_table(header, rows)


def main(argv: list[str] | None = None) -> int:
    """Print the audit of the embedded presets (or those named); status 1 on a misfit."""
    from nicsim import _core

    names = (sys.argv[1:] if argv is None else argv) or _core.presets()
    misfits = 0
    for name in names:
        for f in audit(name):
            where = "no range" if f.range is None else f"{f.range} {f.range.scope}"
            mark = "  MISFIT" if f.misfit else ""
            print(f"{name:12} {f.key:32} {f.value:>10g}  {where:28} {f.status}{mark}")
            misfits += f.misfit
    print(f"{misfits} misfit(s)")
    return 1 if misfits else 0


if __name__ == "__main__":
    sys.exit(main())
