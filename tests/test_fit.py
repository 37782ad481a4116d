"""The calibration procedure: re-runnable and already applied to the preset."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import nicsim
from nicsim import fit, fit_lci

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


# -- ranges: the fit searches inside the preset's physical ranges --------------
# (kept apart from the fixed-point tests above: these do not depend on the
# committed values, only on the ranges the presets state)


def test_the_fit_takes_each_free_parameters_range_from_the_preset() -> None:
    for preset, (_targets, params) in fit.PLANS.items():
        bounds = fit.param_ranges(preset, params)
        assert {p.path for p in params} <= set(bounds), preset
        assert all(r.source for r in bounds.values())
    assert str(fit.param_ranges("omx2009", fit.OMX2009_PARAMS)["host.sleep_exit_ns"]) == (
        "2000 .. 10000"
    )


def test_a_free_parameter_without_a_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"no '# \[range .*' comment for cache\.memory_ns"):
        fit.param_ranges("omx2009", [fit.FitParam("cache", "memory_ns")])


def test_a_start_outside_the_range_is_clamped_and_a_result_at_a_bound_is_a_misfit() -> None:
    logged: list[str] = []
    start = {"library.mpi_send_ns": 9000.0, "library.mpi_recv_ns": 500.0}
    ov, _targets, _before, _after = fit.fit("omx2009-mq", rounds=0, log=logged.append, start=start)
    assert ov["library"] == {"mpi_send_ns": 2000.0, "mpi_recv_ns": 500.0}
    assert (
        "library.mpi_send_ns = 9000 is outside its range 100 .. 2000: starting from 2000" in logged
    )
    pinned = [line for line in logged if line.startswith("misfit:")]
    assert len(pinned) == 1 and pinned[0].startswith(
        "misfit: library.mpi_send_ns = 2000 at upper bound 100 .. 2000 (Open MPI over Open-MX"
    )
    assert fit.misfits("omx2009-mq", ov) == pinned


def test_the_lci_fit_stays_inside_the_range_of_both_firmware_costs() -> None:
    bounds = fit_lci.cycle_range()
    assert (bounds.lo, bounds.hi) == (20.0, 396.0)
    cycles, latency, status = fit_lci.fit_lci2000()
    assert bounds.lo <= cycles <= bounds.hi
    assert status == bounds.status(cycles)
    assert abs(latency - fit_lci.TARGET_LATENCY_US) < 0.5
