"""The presets' estimates at their candidates (``nicsim.studies.sensitivity``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from nicsim import _core
from nicsim._core import NicsimError
from nicsim.studies import preset_edit as pe
from nicsim.studies import sensitivity as s

PRESET = """\
# a preset
[nic]
ring_slots = 1024         # [estimate] slots, "quoted # not a comment"
flow_control = false      # [estimate] PAUSE
dma_MBps = 1600.0         # [estimate] PCIe
name = "a # b"            # a string with a hash

[host.tick]
hz = 250                  # [estimate] CONFIG_HZ
"""


def test_a_set_key_keeps_its_line_and_comment_and_every_other_key() -> None:
    out = pe.with_values(PRESET, {"nic.ring_slots": 512, "host.tick.hz": 1000})
    assert 'ring_slots = 512         # [estimate] slots, "quoted # not a comment"' in out
    assert "hz = 1000                  # [estimate] CONFIG_HZ" in out
    before, after = tomllib.loads(PRESET), tomllib.loads(out)
    before["nic"]["ring_slots"] = 512
    before["host"]["tick"]["hz"] = 1000
    assert after == before
    assert out.startswith("# a preset\n")


def test_booleans_strings_and_a_whole_number_for_a_float_key() -> None:
    out = pe.with_values(
        PRESET, {"nic.flow_control": True, "nic.name": "x # y", "nic.dma_MBps": 528}
    )
    doc = tomllib.loads(out)
    assert doc["nic"]["flow_control"] is True
    assert doc["nic"]["name"] == "x # y"
    assert doc["nic"]["dma_MBps"] == 528.0 and isinstance(doc["nic"]["dma_MBps"], float)
    assert "# a string with a hash" in out


def test_a_key_the_preset_lacks_is_added_to_its_table_or_a_new_one() -> None:
    out = pe.with_values(PRESET, {"nic.pause_to_sender": True, "cache.l1i_kib": 32})
    doc = tomllib.loads(out)
    assert doc["nic"]["pause_to_sender"] is True
    assert doc["cache"]["l1i_kib"] == 32
    assert doc["nic"]["ring_slots"] == 1024


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("nic.flow_control", 1, ["nic.flow_control", "an integer", "a boolean"]),
        ("nic.ring_slots", "big", ["nic.ring_slots", "a string", "an integer"]),
        ("nic.dma_MBps", True, ["nic.dma_MBps", "a boolean", "a number"]),
    ],
)
def test_a_value_of_another_kind_is_an_error_naming_the_key(
    key: str, value: object, words: list[str]
) -> None:
    with pytest.raises(NicsimError) as err:
        pe.with_values(PRESET, {key: value})  # type: ignore[dict-item]
    for w in words:
        assert w in str(err.value)


def test_every_candidate_edits_its_real_presets_and_nothing_else() -> None:
    estimates = s.load()
    assert estimates, "estimates.toml lists no estimate"
    for est in estimates:
        assert est.why
        for preset in est.presets:
            text = _core.preset_toml(preset)
            base = tomllib.loads(text)
            for cand in est.candidates:
                edited = tomllib.loads(pe.with_values(text, cand.values))
                changed = [k for k, v in cand.values.items() if pe.lookup(base, k) != v]
                assert changed, (est.name, cand.label, preset)
                for key, value in cand.values.items():
                    assert pe.lookup(edited, key) == value
                # Comments kept: the edited text has as many lines, or more.
                assert len(pe.with_values(text, cand.values).splitlines()) >= len(text.splitlines())


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "estimates.toml"
    path.write_text(body)
    return path


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            '[[estimate]]\nname = "x"\npresets = ["omx2010"]\n'
            'candidates = [{ label = "a", set = { "nic.ring_slots" = 512 } }]\n',
            ["'omx2010'", "unknown", "omx2009"],
        ),
        (
            '[[estimate]]\nname = "x"\npresets = ["omx2009"]\n'
            'candidates = [{ label = "a", set = { "nic.ring_slot" = 512 } }]\n',
            ["has no key", "nic.ring_slot"],
        ),
        (
            '[[estimate]]\nname = "x"\npresets = ["omx2009"]\n'
            'candidates = [{ label = "a", set = { "nic.flow_control" = 1 } }]\n',
            ["nic.flow_control", "an integer", "a boolean"],
        ),
        (
            '[[estimate]]\nname = "x"\npresets = ["omx2009"]\n'
            'candidates = [{ label = "a", set = { "nic.ring_slots" = 1024 } }]\n',
            ["every candidate is", "own value"],
        ),
        (
            '[[estimate]]\nname = "x"\npresets = ["omx2009"]\n'
            'candidates = [{ label = "a", set = { "nic.ring_slots" = 512 } }]\n'
            '[[estimate]]\nname = "x"\npresets = ["omx2009"]\n'
            'candidates = [{ label = "a", set = { "nic.ring_slots" = 2048 } }]\n',
            ["'x'", "twice"],
        ),
    ],
)
def test_a_bad_estimates_file_is_one_error_naming_what_is_wrong(
    tmp_path: Path, body: str, words: list[str]
) -> None:
    with pytest.raises(NicsimError) as err:
        s.load(_write(tmp_path, body))
    for w in words:
        assert w in str(err.value)


def test_the_emo_slope_claim_is_decided_by_the_hosts_bus() -> None:
    # docs/paths-2009.md, [EMO] 4.1.4: the two slopes differ by one DMA
    # byte-time, so the claim holds only at an effective rate of about
    # 430 MB/s or more: with 528 MB/s, not with 264 (nor the preset's 200).
    (emo,) = [e for e in s.load() if e.presets == ("emo2004",)]
    (outcome,) = s.run([emo], ["emo-latency"], jobs=1, quick=True)
    flips = outcome.flips()
    assert len(flips) == 1
    base, by_label = flips[0]
    assert "same slope" in base.name and base.holds is False
    holds = {label: v.holds for label, v in by_label.items()}
    assert holds == {"64-bit/33 MHz at its peak": False, "64-bit/66 MHz at its peak": True}
    report = s.render([outcome], command="cmd")
    assert "1 of 6 values and claims change their verdict" in report
    assert "| emo-latency | the projected ToNIC" in report
    assert "EMO hosts' PCI bus |" in report.split("## Index")[1]
    # The bands: the slope claim holds in one of the three runs (528 MB/s).
    (band,) = [b for b in s.bands([outcome]) if b.base.key == base.key]
    assert (band.holding, band.runs) == (1, 3)
    assert min(band.values) < 0.15 < max(band.values)
    assert "| holds in |" in report and "| 1 of 3 |" in report


def test_an_estimate_on_no_chosen_experiments_preset_is_left_out() -> None:
    (emo,) = [e for e in s.load() if e.presets == ("emo2004",)]
    assert s.run([emo], ["lci-timers"], jobs=1, quick=True) == []


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nicsim.studies.sensitivity", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_unknown_estimate_is_one_line_naming_the_allowed_ones() -> None:
    r = _cli("emo-latency", "--estimate", "ring", "--out", "/tmp/x.md")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1
    assert "--estimate 'ring': unknown; allowed:" in r.stderr
    assert "receive ring size" in r.stderr


def test_an_unwritable_out_is_refused_before_any_run(tmp_path: Path) -> None:
    r = _cli("emo-latency", "--out", str(tmp_path / "no" / "such" / "e.md"))
    assert r.returncode == 2
    assert "does not exist" in r.stderr
    assert "experiments as the preset is" not in r.stderr


def test_validation_names_the_estimates_that_decide_a_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nicsim.studies import validation
    from nicsim.studies.experiments import EXPERIMENTS

    claim = EXPERIMENTS["emo-latency"].claims[0]
    index = tmp_path / "index.toml"
    index.write_text(
        '[[decided]]\nexperiment = "emo-latency"\n'
        f'name = {pe.toml_value(claim.text)}\nestimates = ["EMO hosts\' PCI bus"]\n'
    )
    monkeypatch.setattr(s, "INDEX", index)
    rows = validation._claim_rows({}, True, s.decided())
    cells = {r[1]: r[4] for r in rows if r[0] == "`emo-latency`"}
    assert cells[claim.text] == "EMO hosts' PCI bus"
    assert set(cells.values()) == {"EMO hosts' PCI bus", "-"}
    monkeypatch.setattr(s, "INDEX", tmp_path / "none.toml")
    assert s.decided() == {}


def test_the_packaged_index_names_values_and_claims_the_experiments_have() -> None:
    # A renamed claim or value leaves the index stale: regenerate it with
    # sensitivity.INDEX_COMMAND.
    from nicsim.studies import seeds

    estimates = {e.name for e in s.load()}
    for (exp_id, name), names in s.decided().items():
        assert name in seeds.names(exp_id), (exp_id, name)
        assert set(names) <= estimates, names


def test_validation_counts_the_agreeing_predictions_an_estimate_decides() -> None:
    from nicsim.studies import validation

    def row(quantity: str, agrees: bool, status: str = "predicted") -> validation.Row:
        return validation.Row(
            source=None,  # type: ignore[arg-type]
            quantity=quantity,
            printed="",
            target="1",
            status=status,  # type: ignore[arg-type]
            experiment="e",
            agrees=agrees,
        )

    rows = [row("a", True), row("b", True), row("c", False), row("d", True, "fitted")]
    decided = {("e", "a"): ["ring"], ("e", "c"): ["ring"], ("e", "d"): ["ring"]}
    (_, text) = validation._hanging(rows, decided, 2)
    assert "Of the 2 predicted values that agree, **1 stop agreeing" in text
    assert validation._hanging(rows, {}, 2) == []
