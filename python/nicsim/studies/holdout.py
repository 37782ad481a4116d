"""Cross-study prediction: fit the Open-MX hosts on one study, predict the other.

The honest measure of a change to the model is what it predicts where
nothing was fitted. [OMX-COAL] and [OMX-MQ] ran the same hosts, so a
calibration on one of them alone (:func:`nicsim.studies.fit_joint.fit`, every parameter
started from the middle of its range) fixes the hardware for the other; the
other's own software costs take what is known without its data (the other
study's fit where its preset borrows them, else the middle of their range).
:func:`run` then runs every experiment of the held-out study on that preset
and sets each of its visible published numbers, fitted or predicted in the
presets' own calibration, against the simulation.

``python -m nicsim.studies.fit --holdout omx-mq`` prints one direction;
``python -m nicsim.studies.holdout --out FILE`` writes both as the Markdown that
``docs/validation.md`` shows under "Cross-study prediction".
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nicsim.studies import fit_joint
from nicsim.studies.command import CommandLine, at_least_one, interruptible
from nicsim.studies.exp_base import TOLERANCE
from nicsim.studies.fit_joint import FitResult, Overrides
from nicsim.studies.papers import PAPERS
from nicsim.studies.report import markdown_table

__all__ = ["HOLDOUT_STARTS", "Prediction", "held_out_preset", "main", "predict", "render", "run"]


@dataclass(frozen=True)
class Prediction:
    """One visible published number of the held-out study against the prediction."""

    where: str
    quantity: str
    published: str
    simulated: float | None
    ratio: float | None
    agrees: bool | None


def held_out_preset(study: str, result: FitResult) -> Overrides:
    """Return the held-out study's preset values from a fit on the other study.

    Shared values come from ``result``; the held-out study's software
    (:attr:`nicsim.studies.fit_joint.Study.software`) takes the middle of its range, or the
    value the other study fitted where the preset borrows it.
    """
    held = fit_joint.STUDIES[study]
    (fitted_preset,) = result.overrides
    shared_keys = {(p.table, p.key) for p in fit_joint.SHARED}
    shared_keys |= {(t, k) for p in fit_joint.SHARED for t, k, _ in p.tied}
    ov: Overrides = {}
    for table, values in result.overrides[fitted_preset].items():
        for key, value in values.items():
            if (table, key) in shared_keys:
                ov.setdefault(table, {})[key] = value
    bounds = fit_joint.param_ranges(held.preset, held.software)
    for p in held.software:
        r = bounds[p.path]
        p.assign(ov, (r.lo + r.hi) / 2)
    for path, source in held.borrowed:
        table, key = path.split(".")
        src = fit_joint.STUDIES[source].preset
        found = result.overrides.get(src, {}).get(table, {}).get(key)
        if found is not None:
            ov.setdefault(table, {})[key] = found
    return ov


def predict(study: str, ov: Overrides, jobs: int | None = None) -> list[Prediction]:
    """Run the held-out study's experiments with ``ov`` on its preset; compare its numbers."""
    from nicsim import runner
    from nicsim.studies.experiments import STUDIES as GROUPS

    held = fit_joint.STUDIES[study]
    experiments = [e for e in GROUPS[study] if e.preset in (None, held.preset)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{held.preset}-holdout.toml"
        fit_joint.write_preset(held.preset, ov, path)
        tables = runner.run_experiments([e.id for e in experiments], jobs=jobs, preset=str(path))
    out = []
    for e in experiments:
        for item in e.published:
            if item.source.study != study:
                continue
            check = item.check(tables[e.id])
            out.append(
                Prediction(
                    str(item.source),
                    item.quantity,
                    item.target,
                    check.simulated,
                    check.ratio,
                    check.agrees,
                )
            )
    return out


def render(study: str, result: FitResult, rows: list[Prediction]) -> str:
    """One direction as Markdown: the fit, its parameters, and the predictions."""
    (fitted_on,) = {s for s, *_ in result.targets}
    tag, held_tag = PAPERS[fitted_on].tag, PAPERS[study].tag
    simulated = [r for r in rows if r.agrees is not None]
    agree = sum(1 for r in simulated if r.agrees)
    lines = [
        f"### Fit on {tag}, predict {held_tag}",
        "",
        f"`python -m nicsim.studies.fit --holdout {study}`: {len(result.targets)} targets "
        f"of {tag}, "
        f"error {result.cost_before:.3g} at the middle of the ranges, {result.cost_after:.3g} "
        f"fitted. **{agree} of {len(simulated)}** of {held_tag}'s visible numbers within "
        f"{TOLERANCE:.0%} (a bound: holds).",
        "",
        markdown_table(
            ["parameter", "fitted on " + tag, "range", "pinned by"],
            [
                [f"`{p.param}`", f"{p.value:g}", str(p.range), "; ".join(p.pinned_by) or "-"]
                for p in result.pinning
            ],
        ),
        "",
        markdown_table(
            ["where", "quantity", "published", "predicted", "ratio", "agrees"],
            [
                [
                    r.where,
                    r.quantity,
                    r.published,
                    "-" if r.simulated is None else f"{r.simulated:.4g}",
                    "-" if r.ratio is None else f"{r.ratio:.3g}",
                    "-" if r.agrees is None else ("yes" if r.agrees else "no"),
                ]
                for r in rows
            ],
        ),
    ]
    return "\n".join(lines)


#: Starting points of a held-out fit: it starts from the middle of the
#: ranges, farther from an optimum than the presets' values.
HOLDOUT_STARTS = 8


def run(
    study: str, *, starts: int = HOLDOUT_STARTS, max_evals: int = 30, jobs: int | None = None
) -> str:
    """Fit on the study other than ``study``, predict ``study``; return the Markdown."""
    others = [s for s in fit_joint.STUDIES if s != study]
    result = fit_joint.fit(
        others,
        start_mid=True,
        starts=starts,
        max_evals=max_evals,
        profile=False,
        log=lambda _m: None,
    )
    rows = predict(study, held_out_preset(study, result), jobs=jobs)
    return render(study, result, rows)


@interruptible
def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m nicsim.studies.holdout [--out FILE]`` (both directions)."""
    from nicsim import outputs

    ap = CommandLine(prog="python -m nicsim.studies.holdout", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the Markdown here (default: print it)")
    ap.add_argument("--starts", type=at_least_one, default=HOLDOUT_STARTS)
    ap.add_argument("--max-evals", type=at_least_one, default=30)
    a = ap.parse_args(argv)
    if a.out is not None:
        outputs.check_file(a.out, "--out")
    text = (
        "\n\n".join(run(s, starts=a.starts, max_evals=a.max_evals) for s in fit_joint.STUDIES)
        + "\n"
    )
    if a.out is None:
        print(text, end="")
    else:
        with outputs.atomic_file(a.out) as temp:
            temp.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
