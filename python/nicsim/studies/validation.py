"""What nicsim reproduces and what it predicts: the data of ``docs/validation.md``.

This module owns the validation record of the four studies:

* :data:`MECHANISMS` (kept in :mod:`nicsim.studies.validation_mechanisms`): every
  mechanism a study's prose gives as the cause of a result, quoted
  (:class:`~nicsim.studies.papers.Quote`), with whether nicsim models it (where,
  and the tests that show it) or not (why);
* :data:`NUMBERS` (kept in :mod:`nicsim.studies.validation_numbers`): the published
  numbers that no experiment carries (not simulated, with the reason; and
  the platform and workload parameters the presets take). Numbers an
  experiment simulates are its :class:`~nicsim.studies.exp_base.Published` values
  and are not repeated here;
* :data:`FITS`: the calibrations, read from :mod:`nicsim.studies.fit` and
  :mod:`nicsim.studies.fit_lci` (a published value is *fitted* when one of them
  fitted preset parameters to it, *predicted* otherwise);
* :func:`rows` and :func:`render`, which join all of that with a run's
  result tables into ``validation.md``.

It runs nothing: ``nicsim reproduce`` writes ``validation.md`` beside the
report (:func:`write`), and ``python -m nicsim.studies.validation --tables DIR --out
FILE`` rebuilds it from the tables of an earlier run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from nicsim.outputs import atomic_file
from nicsim.studies import fit_joint as _fit
from nicsim.studies import fit_lci as _fit_lci
from nicsim.studies import fitted as _fitted
from nicsim.studies import sensitivity, validation_conflicts
from nicsim.studies.exp_base import TOLERANCE, Claim, Published, unavailable
from nicsim.studies.experiments import EXPERIMENTS
from nicsim.studies.papers import PAPERS, Quote, Ref
from nicsim.studies.report import FLOAT_FORMAT, Provenance, markdown_table
from nicsim.studies.validation_mechanisms import MECHANISMS, STATUSES, Code, Mechanism, Test
from nicsim.studies.validation_numbers import NUMBERS, PublishedNumber

__all__ = [
    "FITS",
    "MECHANISMS",
    "NUMBERS",
    "REGENERATE",
    "STATUSES",
    "Code",
    "Fit",
    "Mechanism",
    "PublishedNumber",
    "Row",
    "Test",
    "load_tables",
    "main",
    "render",
    "rows",
    "write",
]


# -- calibrations ------------------------------------------------------------


@dataclass(frozen=True)
class Fit:
    """A calibration: the preset parameters one command fits to published values."""

    key: str
    #: The presets whose ``[fitted]`` values it sets.
    presets: tuple[str, ...]
    command: str
    #: ``table.key`` of every parameter it sets (each marked ``[fitted]`` in the preset).
    parameters: tuple[str, ...]
    targets: str


def _keys(params: Sequence[_fit.FitParam]) -> tuple[str, ...]:
    keys: list[str] = []
    for p in params:
        keys.append(f"{p.table}.{p.key}")
        keys += [f"{table}.{key}" for table, key, _ in p.tied]
    return tuple(keys)


#: Every calibration, by key (the ``fit`` of a published value names one).
FITS: dict[str, Fit] = {
    f.key: f
    for f in (
        Fit(
            "open-mx",
            ("omx2009", "omx2009-mq"),
            "python -m nicsim.studies.fit",
            _keys(
                [
                    *_fit.SHARED,
                    *dict.fromkeys(p for s in _fit.STUDIES.values() for p in s.software),
                ]
            ),
            "jointly: [OMX-COAL] 0 B message rates, 128 B rate and its 2× cut, flood "
            "overheads, native 0 B latency; [OMX-MQ] Table I SC 0 B latency and 4 MiB "
            "throughput with and without I/OAT, §4.1 native 0 B latency (one set of "
            "hardware values, each study's Open-MX and MPI costs its own)",
        ),
        Fit(
            "lci2000",
            ("lci2000",),
            "python -m nicsim.studies.fit_lci",
            ("lanai.fw_tx_cycles", "lanai.fw_rx_cycles"),
            f"[LCI] one-way null latency {_fit_lci.TARGET_LATENCY_US:g} µs",
        ),
    )
}


# -- rows: published numbers against a run's tables -------------------------

RowStatus = Literal["fitted", "predicted", "not simulated", "input"]


@dataclass(frozen=True)
class Row:
    """One published number against a run (a line of ``validation.md``)."""

    source: Ref
    quantity: str
    printed: str
    #: The published value as compared: ``"0.5"``, or ``"< 0.5"`` for a bound.
    target: str
    status: RowStatus
    experiment: str | None = None
    simulated: float | None = None
    ratio: float | None = None
    agrees: bool | None = None
    fit: str | None = None
    note: str = ""
    bound: bool = field(default=False)


def _published_row(exp_id: str, item: Published, table: pd.DataFrame | None) -> Row:
    note = item.note
    if table is None:
        simulated = ratio = agrees = None
        note = "; ".join(filter(None, ["not run in this reproduction", note]))
    else:
        check = item.check(table)
        simulated, ratio, agrees = check.simulated, check.ratio, check.agrees
        if simulated is None and unavailable(item.simulated, table) == "not measured":
            # Not compared: the run could not measure it.
            note = "; ".join(filter(None, ["not measured in this reproduction", note]))
    return Row(
        item.source,
        item.quantity,
        item.as_printed,
        item.target,
        "fitted" if item.fit else "predicted",
        exp_id,
        simulated,
        ratio,
        agrees,
        item.fit,
        note,
        item.bound != "=",
    )


def rows(tables: Mapping[str, pd.DataFrame]) -> list[Row]:
    """Every published number: those experiments simulate, then :data:`NUMBERS`.

    An experiment missing from ``tables`` gives rows without a simulated value.
    """
    out = [
        _published_row(exp.id, item, tables.get(exp.id))
        for exp in EXPERIMENTS.values()
        for item in exp.published
    ]
    for n in NUMBERS:
        status: RowStatus = "input" if n.kind == "input" else "not simulated"
        out.append(
            Row(n.source, n.quantity, n.printed, f"{n.value:g}", status, fit=n.fit, note=n.reason)
        )
    return out


# -- rendering ----------------------------------------------------------------


def _num(value: float | None) -> str:
    return "n/a" if value is None else FLOAT_FORMAT % value


def _agrees(row: Row) -> str:
    if row.agrees is None:
        return "n/a"
    word = "holds" if row.bound else "yes"
    return word if row.agrees else ("fails" if row.bound else "no")


def _count(rows_: Sequence[Row], status: RowStatus) -> tuple[int, int]:
    """(rows with ``status`` that agree, rows with ``status``)."""
    selected = [r for r in rows_ if r.status == status]
    return sum(1 for r in selected if r.agrees), len(selected)


def _summary(all_rows: Sequence[Row], decided: Decided) -> list[str]:
    header = [
        "study",
        "fitted (agree)",
        "predicted (agree)",
        "not simulated",
        "inputs",
        "mechanisms modelled / partly / not",
    ]
    body = []
    for key, study in [*PAPERS.items(), ("", None)]:
        selected = [r for r in all_rows if study is None or r.source.study == key]
        mechs = [m for m in MECHANISMS if study is None or m.study == key]
        fitted, predicted = _count(selected, "fitted"), _count(selected, "predicted")
        body.append(
            [
                "**all**" if study is None else study.tag,
                f"{fitted[1]} ({fitted[0]})",
                f"{predicted[1]} ({predicted[0]})",
                sum(1 for r in selected if r.status == "not simulated"),
                sum(1 for r in selected if r.status == "input"),
                " / ".join(str(sum(1 for m in mechs if m.status == s)) for s in STATUSES),
            ]
        )
    fitted, predicted = _count(all_rows, "fitted"), _count(all_rows, "predicted")
    return [
        markdown_table(header, body),
        "",
        f"Of the published results nicsim simulates, **{fitted[1]} are fitted** (a "
        f"calibration set preset parameters to them; {fitted[0]} agree) and **{predicted[1]} "
        f"are predicted** (nothing was fitted to them); **{predicted[0]} of the "
        f"{predicted[1]} predicted values agree** with the study (within "
        f"{TOLERANCE:.0%} for a value, the bound holds for a bound). A fitted value agreeing "
        "says only that the fit worked.",
        *_hanging(all_rows, decided, predicted[0]),
    ]


def _hanging(all_rows: Sequence[Row], decided: Decided, agreeing: int) -> list[str]:
    """Say how many agreeing predictions a preset estimate decides (none without an index)."""
    if not decided:
        return []
    hang = sum(
        1
        for r in all_rows
        if r.status == "predicted" and r.agrees is True and _row_decided(decided, r) != "-"
    )
    return [
        "",
        f"Of the {agreeing} predicted values that agree, **{hang} stop agreeing under a "
        "candidate of a preset estimate** (a value no source rules out): "
        "docs/estimates.md has each one with the values it takes.",
    ]


def _fits_table() -> str:
    header = ["fit", "command", "presets", "parameters it sets ([fitted])", "to"]
    body = [
        [
            f.key,
            f"`{f.command}`",
            ", ".join(f.presets),
            ", ".join(f"`{p}`" for p in f.parameters),
            f.targets,
        ]
        for f in FITS.values()
    ]
    return markdown_table(header, body)


def _number_table(study_rows: Sequence[Row]) -> str:
    header = [
        "where",
        "quantity",
        "as printed",
        "published",
        "simulated",
        "ratio",
        "fitted or predicted",
        f"agrees (±{TOLERANCE:.0%}; bound holds)",
        "experiment",
        "note",
    ]
    body = []
    for r in study_rows:
        status = f"fitted ({r.fit})" if r.status == "fitted" else r.status
        body.append(
            [
                r.source.where,
                r.quantity,
                r.printed,
                r.target,
                _num(r.simulated),
                _num(r.ratio),
                f"**{status}**" if r.status == "predicted" else status,
                _agrees(r),
                f"`{r.experiment}`" if r.experiment else "-",
                r.note,
            ]
        )
    return markdown_table(header, body)


def _other_table(study_rows: Sequence[Row]) -> str:
    header = ["where", "quantity", "as printed", "value", "status", "why / where nicsim has it"]
    body = [
        [
            r.source.where,
            r.quantity,
            r.printed,
            r.target,
            f"not simulated (fitted: {r.fit})" if r.fit else r.status,
            r.note,
        ]
        for r in study_rows
    ]
    return markdown_table(header, body)


def _mechanism_lines(m: Mechanism) -> list[str]:
    lines = [f"#### {m.name} — {m.status}", ""]
    for i, q in enumerate(m.quotes):
        lines += ([">"] if i else []) + [f'> {q.where}: "{q.text}"']
    lines += ["", f"- Explains: {m.explains}."]
    if m.code:
        lines.append("- In nicsim: " + ", ".join(str(c) for c in m.code) + ".")
    tests = ", ".join(str(t) for t in m.tests) if m.tests else "none isolates it"
    lines.append(f"- Tests: {tests}.")
    if m.shown_by:
        lines.append("- Shown by: " + ", ".join(f"`{e}`" for e in m.shown_by) + ".")
    if m.how:
        lines.append(f"- How / what is missing: {m.how}")
    return [*lines, ""]


#: What a preset estimate decides: (experiment, value or claim) -> estimates.
Decided = Mapping[tuple[str, str], Sequence[str]]


def _decided_cell(decided: Decided, exp_id: str | None, *names: str) -> str:
    """Name the estimates whose candidates change this value's or claim's verdict (or ``-``)."""
    found = [e for n in names for e in decided.get((exp_id or "", n), ())]
    return "; ".join(dict.fromkeys(found)) or "-"


def _row_decided(decided: Decided, r: Row) -> str:
    """Name the estimates deciding a published row (a bound goes by its quantity and target)."""
    return _decided_cell(decided, r.experiment, r.quantity, f"{r.quantity} {r.target}")


def _claim_rows(
    tables: Mapping[str, pd.DataFrame], attributed: bool, decided: Decided
) -> list[list[Any]]:
    body: list[list[Any]] = []
    for exp in EXPERIMENTS.values():
        for claim in exp.claims:
            if isinstance(claim.source, Quote) != attributed:
                continue
            check = _claim_check(exp.id, claim, tables.get(exp.id))
            body.append([f"`{exp.id}`", claim.text, *check])
            body[-1].append(_decided_cell(decided, exp.id, claim.text))
            body[-1].append(str(claim.source))
    return body


def _claim_check(exp_id: str, claim: Claim, table: pd.DataFrame | None) -> list[str]:
    checked = None if table is None else claim.check(table)
    if checked is None:
        return ["n/a" if table is None else unavailable(claim.value, table), "n/a"]
    value, holds = checked
    return [FLOAT_FORMAT % value, validation_conflicts.verdict(exp_id, claim, holds)]


def _off(all_rows: Sequence[Row], decided: Decided) -> list[str]:
    off = [r for r in all_rows if r.status == "predicted" and r.agrees is not True]
    if not off:
        return ["Every predicted value agrees."]
    header = [
        "study",
        "where",
        "quantity",
        "published",
        "simulated",
        "ratio",
        "an estimate decides it",
        "note",
    ]
    body = [
        [
            PAPERS[r.source.study].tag,
            r.source.where,
            r.quantity,
            r.target,
            _num(r.simulated),
            _num(r.ratio),
            _row_decided(decided, r),
            r.note,
        ]
        for r in off
    ]
    return [markdown_table(header, body)]


#: The cross-study prediction, as ``python -m nicsim.studies.holdout`` last wrote it:
#: a fit and two campaigns, too long to run with every reproduction.
CROSS_STUDY = Path(__file__).with_name("cross_study.md")
CROSS_STUDY_COMMAND = "python -m nicsim.studies.holdout --out python/nicsim/studies/cross_study.md"


def _cross_study() -> list[str]:
    """Return the "Cross-study prediction" section, from :data:`CROSS_STUDY`."""
    head = [
        "## Cross-study prediction",
        "",
        "[OMX-COAL] and [OMX-MQ] ran the same hosts with different software: a calibration "
        "on one of them alone, every parameter started from the middle of its range, "
        "predicts the other's visible numbers (its own software costs take the middle of "
        "their range, or the other study's fit where its preset borrows them). Written by "
        f"`{CROSS_STUDY_COMMAND}`, which a reproduction does not re-run.",
        "",
    ]
    if not CROSS_STUDY.is_file():
        return [*head, f"(not computed: run `{CROSS_STUDY_COMMAND}`)", ""]
    text = CROSS_STUDY.read_text(encoding="utf-8").strip()
    return [*head, text, ""]


REGENERATE = (
    "nicsim reproduce all --out out/all --jobs 2 && cp out/all/validation.md docs/validation.md"
)


def render(tables: Mapping[str, pd.DataFrame], provenance: Provenance) -> str:
    """Return ``validation.md`` for a run's tables."""
    all_rows = rows(tables)
    run = sorted(tables)
    missing = [e for e in EXPERIMENTS if e not in tables]
    decided = sensitivity.decided()
    lines = [
        "# Validation: what nicsim reproduces and what it predicts",
        "",
        "Generated by `nicsim reproduce` from `nicsim.studies.validation` (the mechanisms, the "
        "calibrations and the published numbers no experiment carries) and the experiments' "
        "published values, claims and result tables. Regenerate it with",
        "",
        f"    {REGENERATE}",
        "",
        "or, from the tables of an earlier run, `python -m nicsim.studies.validation "
        "--tables out/all "
        "--out docs/validation.md`.",
        "",
        *provenance.lines(),
        f"- experiments run: {len(run)} of {len(EXPERIMENTS)}"
        + (f" (not run: {', '.join(missing)})" if missing else ""),
        "",
        "Words. *Fitted*: a calibration (below) set preset parameters marked `[fitted]` to "
        "this very number, so agreement shows only that the fit worked. *Predicted*: "
        "everything else the simulator produces. *Not simulated*: no experiment produces it "
        "(the reason is given). *Input*: a platform, protocol or workload parameter the "
        "study states and the presets or experiments take. Statements attributed to a study "
        "quote it (section and sentence); nicsim's own expectations say so. Results the "
        "studies' texts hold back (`[held]`) are not used anywhere. Counted: every result "
        "printed in a table or in the prose, and the parameters; not counted: version "
        "numbers, dates, reference, section and figure numbers, lines of code.",
        "",
        "## Summary",
        "",
        *_summary(all_rows, decided),
        "",
        "## Calibrations",
        "",
        _fits_table(),
        "",
        "Every `[fitted]` preset value and its physical range with the range's source "
        "(`python -m nicsim.studies.fitted`): a value at a bound of its range (or within 2 % "
        "of its width from one), or outside it, is a misfit.",
        "",
        _fitted.audit_table(),
        "",
        *_cross_study(),
        "## Predicted values that disagree with the study",
        "",
        *_off(all_rows, decided),
        "",
        "## Published results",
        "",
    ]
    for key, study in PAPERS.items():
        results = [
            r for r in all_rows if r.source.study == key and r.status in ("fitted", "predicted")
        ]
        others = [r for r in all_rows if r.source.study == key and r.status == "not simulated"]
        lines += [f"### {study.tag} {study.title}", ""]
        if results:
            lines += ["Simulated:", "", _number_table(results), ""]
        if others:
            lines += ["Not simulated:", "", _other_table(others), ""]
        if not results and not others:
            lines += ["No result is printed in numbers (all are in figures).", ""]
    lines += ["## Parameters the studies state (inputs)", ""]
    for key, study in PAPERS.items():
        inputs = [r for r in all_rows if r.source.study == key and r.status == "input"]
        if inputs:
            lines += [f"### {study.tag}", "", _other_table(inputs), ""]
    lines += [
        "## Mechanisms",
        "",
        "Every mechanism a study's prose gives as the cause of a result, quoted; whether "
        "nicsim models it, where, the tests that show it, and what is missing.",
        "",
    ]
    for key, study in PAPERS.items():
        mechs = [m for m in MECHANISMS if m.study == key]
        lines += [f"### {study.tag}", ""]
        lines += [
            markdown_table(
                ["mechanism", "where", "status", "explains"],
                [
                    [
                        m.name,
                        ", ".join(dict.fromkeys(q.where for q in m.quotes)),
                        m.status,
                        m.explains,
                    ]
                    for m in mechs
                ],
            ),
            "",
        ]
        for m in mechs:
            lines += _mechanism_lines(m)
    lines += [
        "## Claims",
        "",
        'Statements the experiments check on their tables. "An estimate decides it" names '
        "the preset estimates one of whose candidates (another value no source rules out) "
        "changes the verdict, as docs/estimates.md shows them; written by "
        f"`{sensitivity.INDEX_COMMAND}`, which a reproduction does not re-run. Attributed to "
        "a study (with the quote):",
        "",
        markdown_table(
            ["experiment", "claim", "simulated", "holds", "an estimate decides it", "source"],
            _claim_rows(tables, True, decided),
        ),
        "",
        "nicsim's own expectations and outside sources (not the studies'):",
        "",
        markdown_table(
            ["experiment", "claim", "simulated", "holds", "an estimate decides it", "source"],
            _claim_rows(tables, False, decided),
        ),
        "",
        *validation_conflicts.lines(tables),
    ]
    return "\n".join(lines)


def write(tables: Mapping[str, pd.DataFrame], path: Path, provenance: Provenance) -> Path:
    """Write :func:`render` to ``path``, whole or not at all; return the path."""
    text = render(tables, provenance)
    path.parent.mkdir(parents=True, exist_ok=True)
    # atomic_file: mode 0666 less the umask, as every other output.
    with atomic_file(path) as temp:
        temp.write_text(text, encoding="utf-8")
    return path


# -- command line -------------------------------------------------------------


def _provenance(directory: Path) -> Provenance:
    """Read the provenance lines of ``report.md`` in an output directory."""
    fields = {"nicsim version": "?", "preset": "?", "base seed": "0", "mode": "full"}
    report = directory / "report.md"
    if report.is_file():
        for line in report.read_text(encoding="utf-8").splitlines():
            key, sep, value = line.removeprefix("- ").partition(": ")
            if line.startswith("- ") and sep and key in fields:
                fields[key] = value.strip("`")
    return Provenance(
        nicsim_version=fields["nicsim version"],
        preset=fields["preset"],
        seed=int(fields["base seed"]),
        quick=fields["mode"].startswith("quick"),
    )


def load_tables(directory: Path) -> dict[str, pd.DataFrame]:
    """Read ``<exp>.parquet`` of every experiment present in an output directory."""
    return {
        exp_id: pd.read_parquet(directory / f"{exp_id}.parquet")
        for exp_id in EXPERIMENTS
        if (directory / f"{exp_id}.parquet").is_file()
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m nicsim.studies.validation --tables DIR --out FILE``."""
    ap = argparse.ArgumentParser(
        prog="python -m nicsim.studies.validation", description=__doc__.splitlines()[0]
    )
    ap.add_argument(
        "--tables",
        type=Path,
        required=True,
        help="output directory of `nicsim reproduce` (its *.parquet and report.md)",
    )
    ap.add_argument("--out", type=Path, required=True, help="validation.md to write")
    a = ap.parse_args(argv)
    if not a.tables.is_dir():
        ap.error(f"--tables {str(a.tables)!r}: not a directory")
    tables = load_tables(a.tables)
    if not tables:
        ap.error(f"--tables {str(a.tables)!r}: no experiment table (*.parquet) in it")
    path = write(tables, a.out, _provenance(a.tables))
    print(f"wrote {path} from {len(tables)} experiment table(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
