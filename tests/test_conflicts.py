"""Claims that conflict by arithmetic (:mod:`nicsim.studies.validation_conflicts`)."""

from __future__ import annotations

import pandas as pd
import pytest

from nicsim.studies import validation_conflicts as vc
from nicsim.studies.experiments import EXPERIMENTS


def test_every_record_names_one_failing_claim_and_there_are_at_most_three() -> None:
    assert 0 < len(vc.CONFLICTS) <= vc.MAX_CONFLICTS
    for r in vc.CONFLICTS:
        named = [c for c in EXPERIMENTS[r.experiment].claims if r.names(r.experiment, c)]
        assert len(named) == 1, r.claim
        # The arithmetic uses published numbers and says what it assumes.
        assert r.numbers and r.assumes and r.arithmetic


def test_a_conflict_is_written_only_for_a_claim_that_fails() -> None:
    r = vc.CONFLICTS[0]
    claim = next(c for c in EXPERIMENTS[r.experiment].claims if r.names(r.experiment, c))
    assert vc.verdict(r.experiment, claim, holds=False) == "no (conflicts by arithmetic)"
    assert vc.verdict(r.experiment, claim, holds=True) == "yes"
    other = next(c for c in EXPERIMENTS[r.experiment].claims if not r.names(r.experiment, c))
    assert vc.verdict(r.experiment, other, holds=False) == "no"


def test_the_section_reports_a_record_whose_claim_holds_as_moot() -> None:
    r = next(r for r in vc.CONFLICTS if r.experiment == "coalescing-pingpong")
    mib = 4 << 20
    holding = pd.DataFrame(
        {
            "strategy": ["disabled", "timeout", "openmx"],
            "size_bytes": [mib, mib, mib],
            "throughput_MiBps": [500.0, 550.0, 550.0],
        }
    )
    text = "\n".join(vc.lines({r.experiment: holding}))
    assert "holds (the record is moot)" in text
    assert "not run" in text  # the other experiments' records, with no table


def test_a_record_naming_no_claim_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = vc.Conflict("coalescing-pingpong", "no such claim", ("n",), "a", ("s",), "d")
    monkeypatch.setattr(vc, "_record", lambda d: bad)
    with pytest.raises(ValueError, match="names 0 claims"):
        vc.load()
