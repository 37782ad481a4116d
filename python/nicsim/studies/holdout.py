"""Cross-study prediction: fit the Open-MX hosts on one study, predict the other.

The honest measure of a change to the model is what it predicts where
nothing was fitted. [OMX-COAL] and [OMX-MQ] ran the same hosts, so a
calibration on one of them alone (:func:`nicsim.studies.fit.fit`, every parameter
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
from pathlib import Path

from nicsim.studies.fit import (
    HOLDOUT_STARTS,
    STUDIES,
    CommandLine,
    Prediction,
    at_least_one,
    held_out_preset,
    interruptible,
    predict,
    render,
    run,
)

__all__ = ["Prediction", "held_out_preset", "main", "predict", "render", "run"]


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
    text = "\n\n".join(run(s, starts=a.starts, max_evals=a.max_evals) for s in STUDIES) + "\n"
    if a.out is None:
        print(text, end="")
    else:
        with outputs.atomic_file(a.out) as temp:
            temp.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
