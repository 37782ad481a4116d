"""The calibration procedure: re-runnable and already applied to the preset."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import nicsim
from nicsim import fit

pytestmark = pytest.mark.core


def test_committed_preset_is_a_fixed_point_of_the_fit() -> None:
    # One more round of coordinate descent finds nothing better: the values in
    # presets/omx2009.toml are what `python -m nicsim.fit omx2009` produces.
    _ov, _targets, before, after = fit.fit("omx2009", rounds=1, log=lambda _m: None)
    assert before == after


def _values(text: str) -> dict[tuple[str, str], tuple[float, str]]:
    """(table, key) -> (number, comment) of a preset's numeric lines."""
    out, table = {}, ""
    for line in text.splitlines():
        head = re.match(r"^\[(\w+)\]$", line)
        if head:
            table = head.group(1)
        m = re.match(r"^(\w+)\s*=\s*([0-9.eE+-]+)\s*(#.*)?$", line)
        if m:
            out[table, m.group(1)] = (float(m.group(2)), m.group(3) or "")
    return out


def test_omx2009_mq_is_a_fixed_point_and_keeps_in_step_with_omx2009() -> None:
    _ov, _targets, before, after = fit.fit("omx2009-mq", rounds=1, log=lambda _m: None)
    assert before == after
    # A value one preset fits for the other ("[fitted] in omx2009...") is
    # the same in both: same hosts, same driver.
    for src, dst in (("omx2009", "omx2009-mq"), ("omx2009-mq", "omx2009")):
        src_values = _values(nicsim._core.preset_toml(src))
        shared = 0
        for (table, key), (value, comment) in _values(nicsim._core.preset_toml(dst)).items():
            if re.search(rf"\[fitted\] in {src}(?![\w-])", comment):
                assert value == src_values[table, key][0], f"{dst} {table}.{key}"
                shared += 1
        assert shared >= 2, (src, dst)


def test_write_preset_keeps_comments_and_loads(tmp_path: Path) -> None:
    dest = tmp_path / "fitted.toml"
    fit.write_preset("omx2009", {"cache": {"tx_lines": 7}, "host": {"irq_entry_ns": 123.0}}, dest)
    text = dest.read_text()
    assert "tx_lines = 7" in text and "irq_entry_ns = 123.0" in text
    assert "[fitted]" in text
    m = nicsim.run({"preset": str(dest), "workload": {"kind": "pingpong", "iterations": 10}})
    assert float(m["latency_us"]) > 0


def test_a_tied_cost_keeps_its_ratio_and_a_start_overrides_the_preset() -> None:
    # The die-to-die transfer cost is fitted; socket-to-socket moves with it.
    ov, _targets, _before, _after = fit.fit(
        "omx2009", rounds=0, log=lambda _m: None, start={"cache.same_socket_ns": 80.0}
    )
    assert ov["cache"]["same_socket_ns"] == 80.0
    assert ov["cache"]["other_socket_ns"] == round(80.0 * fit.OTHER_SOCKET_RATIO)


def test_a_start_for_a_key_that_is_not_free_is_refused() -> None:
    with pytest.raises(ValueError, match=r"cache\.memory_ns is not a free parameter"):
        fit.fit("omx2009", rounds=0, log=lambda _m: None, start={"cache.memory_ns": 90.0})


@pytest.mark.parametrize("item", ["abc", "cache.same_socket_ns=fast", "cache.memory_ns=90"])
def test_fit_cli_refuses_a_bad_start_in_one_line(
    item: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        fit.main(["omx2009", "--rounds", "0", "--start", item])
    err = capsys.readouterr().err
    assert "--start" in err and "Traceback" not in err
