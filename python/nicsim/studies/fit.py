"""One calibration of the Open-MX hosts, fitted jointly to both studies.

[OMX-COAL] and [OMX-MQ] ran the same two hosts (2 x Xeon E5345, 5000-series
chipset, Myri-10G, Linux 2.6.26: [OMX-COAL] §IV-A, [OMX-MQ] §4.1) with
different software (Open-MX 1.0.901 + Open MPI 1.3.0 against Open-MX 0.9.2 +
Open MPI 1.2.6). So the presets ``omx2009`` and ``omx2009-mq`` hold one set
of hardware values (:data:`~nicsim.studies.fit_joint.SHARED`), fitted to the
calibration targets of both studies at once, and each study keeps its own
software costs (:class:`~nicsim.studies.fit_joint.Study`, ``software``).

The fit is :func:`scipy.optimize.least_squares` (trust-region reflective,
inside each parameter's physical range as the preset states it,
``# [range ...]``: :mod:`nicsim.studies.fitted`) on the relative errors of the
targets, with a forward-difference Jacobian of a fixed step in each range,
from several starts (the presets' values, then points drawn in the ranges by
a fixed seed), keeping the best. It reports each parameter's standard error
(from the Jacobian at the optimum), its profile (the values over which the
error, that parameter moved alone, stays within one residual variance of the
best: the targets jump with the batching, so the linear error can mislead),
the targets that pin it (those whose error moves most with it), and each
start's error and values. A value within 2 % of its range's width from a
bound is a misfit (:mod:`nicsim.studies.fitted`).
Everything is deterministic (fixed seed, fixed steps).

``--holdout STUDY`` fits on the other study alone, starting every parameter
from the middle of its range (so nothing of the held-out study's data leaks
in through the presets), and prints the held-out study's visible published
numbers against what those parameters predict (:mod:`nicsim.studies.holdout`).

This module is the command line: run ``python -m nicsim.studies.fit``
(targets before and after, parameters with their uncertainty); ``--write``
saves both presets with the fitted values (comments kept). The fit itself is
:mod:`nicsim.studies.fit_joint`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from nicsim.studies.command import CommandLine, at_least_one, interruptible
from nicsim.studies.fit_joint import STUDIES, borrowed, fit, report, write_preset
from nicsim.studies.holdout import HOLDOUT_STARTS, run

__all__ = ["main"]


@interruptible
def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m nicsim.studies.fit [--holdout STUDY [--out FILE]]``.

    ``--write DIR`` saves the fitted presets.
    """
    from nicsim import outputs

    ap = CommandLine(prog="python -m nicsim.studies.fit", description=__doc__.splitlines()[0])
    ap.add_argument(
        "--holdout",
        choices=sorted(STUDIES),
        help="fit on the other study alone and predict this one's visible numbers",
    )
    ap.add_argument(
        "--starts",
        type=at_least_one,
        help=f"starting points (default 4; {HOLDOUT_STARTS} with --holdout)",
    )
    ap.add_argument(
        "--max-evals",
        type=at_least_one,
        default=30,
        help="evaluations per start at most (default 30)",
    )
    ap.add_argument(
        "--write",
        type=Path,
        metavar="DIR",
        help="write each fitted preset into DIR (DIR/omx2009.toml, ...)",
    )
    ap.add_argument(
        "--out", type=Path, help="with --holdout: write the prediction table (Markdown)"
    )
    a = ap.parse_args(argv)
    if a.out is not None:
        if not a.holdout:
            ap.error(
                f"--out {a.out}: only with --holdout (it writes the prediction table); "
                "the joint fit prints its report (--write DIR saves its presets)"
            )
        outputs.check_file(a.out, "--out")
    if a.write is not None and not a.write.is_dir():
        ap.error(f"--write {a.write}: no such directory")
    if a.holdout:
        text = run(a.holdout, starts=a.starts or HOLDOUT_STARTS, max_evals=a.max_evals)
        print(text)
        if a.out:
            with outputs.atomic_file(a.out) as temp:
                temp.write_text(text + "\n")
        return 0
    result = fit(starts=a.starts or 4, max_evals=a.max_evals)
    print(report(result))
    pinned = [line for line in result.log if "misfit" in line]
    print(f"{len(pinned)} misfit(s): fitted values at a bound of (or outside) their range")
    if a.write:
        extra = borrowed(result)
        for preset, ov in result.overrides.items():
            full = {t: dict(v) for t, v in ov.items()}
            for t, kv in extra.get(preset, {}).items():
                full.setdefault(t, {}).update(kv)
            write_preset(preset, full, a.write / f"{preset}.toml")
            print(f"wrote {a.write / f'{preset}.toml'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
