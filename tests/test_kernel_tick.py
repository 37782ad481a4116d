"""The kernel's periodic tick (`host.tick`, `sim/tick.rs`): where it runs, what it costs."""

from __future__ import annotations

from pathlib import Path

import pytest

import nicsim
from nicsim._core import NicsimError


def _pingpong(tick: dict[str, float], seed: int = 1) -> dict[str, float]:
    # One process a host, polling: its core is busy throughout, the other
    # seven cores of each host are idle.
    scenario = {
        "preset": "omx2009",
        "seed": seed,
        "nic": {"coalescing": "disabled"},
        "host": {"wait": "poll"},
        "workload": {"kind": "pingpong", "size_bytes": 0, "iterations": 20000, "warmup": 0},
        "platform": {"host": {"tick": tick}},
    }
    return {k: float(v) for k, v in nicsim.run(scenario).items() if isinstance(v, int | float)}


def test_only_busy_cores_tick_every_period() -> None:
    # NO_HZ: an idle core's tick is stopped. Each host's polling core ticks
    # every period; the cores the interrupts visit tick only while they
    # run one, so the hosts tick far fewer than sixteen times a period.
    m = _pingpong({"hz": 1000, "cost_ns": 1000.0})
    periods = m["sim_time_us"] / 1e3
    assert 2 * periods - 4 <= m["kernel_ticks"] < 4 * periods


def test_a_tick_costs_its_core_and_is_absent_when_off() -> None:
    off = _pingpong({"hz": 0})
    free = _pingpong({"hz": 1000, "cost_ns": 0.0})
    dear = _pingpong({"hz": 1000, "cost_ns": 20000.0})
    assert "kernel_ticks" not in off
    # A tick that costs nothing changes no round trip's time; a dear one is
    # kernel time on its core, and holds up the round trips it falls in.
    assert free["sim_time_us"] == pytest.approx(off["sim_time_us"], rel=1e-9)
    kernel = sum(dear[f"host{h}_kernel_us"] - off[f"host{h}_kernel_us"] for h in (0, 1))
    assert kernel == pytest.approx(dear["kernel_ticks"] * 20.0, rel=1e-6)
    assert dear["sim_time_us"] > free["sim_time_us"]


def test_a_tick_rate_out_of_range_is_refused_naming_the_key() -> None:
    with pytest.raises(NicsimError, match=r"host\.tick\.hz"):
        _pingpong({"hz": 20000})


def test_the_tick_switches_are_typed_and_refused_naming_the_key() -> None:
    with pytest.raises(NicsimError, match=r"host\.tick\.nohz.*true or false"):
        _pingpong({"hz": 250, "nohz": "yes"})  # type: ignore[dict-item]
    with pytest.raises(NicsimError, match=r"host\.tick\.jiffy_timers.*true or false"):
        _pingpong({"hz": 250, "jiffy_timers": 1})


def test_without_tickless_idle_every_core_ticks_every_period() -> None:
    # CONFIG_NO_HZ off: the fourteen cores without a process tick too.
    on = _pingpong({"hz": 1000, "cost_ns": 1000.0, "nohz": True})
    off = _pingpong({"hz": 1000, "cost_ns": 1000.0, "nohz": False})
    periods = off["sim_time_us"] / 1e3
    assert off["kernel_ticks"] >= 16 * periods - 32
    assert on["kernel_ticks"] < 3 * on["sim_time_us"] / 1e3


def _modern_pingpong(platform: dict[str, object]) -> dict[str, float]:
    # `modern` does not describe its hosts' tick: it is off unless set.
    scenario = {
        "preset": "modern",
        "seed": 1,
        "host": {"wait": "poll"},
        "workload": {"kind": "pingpong", "size_bytes": 0, "iterations": 2000, "warmup": 0},
        "platform": platform,
    }
    return {k: float(v) for k, v in nicsim.run(scenario).items() if isinstance(v, int | float)}


def test_a_preset_without_a_tick_takes_the_tick_keys() -> None:
    off = _modern_pingpong({})
    assert "kernel_ticks" not in off
    busy = _modern_pingpong({"host": {"tick": {"hz": 1000, "cost_ns": 1000.0}}})
    every = _modern_pingpong({"host": {"tick": {"hz": 1000, "cost_ns": 1000.0, "nohz": False}}})
    # Two polling cores tick every period; without tickless idle every
    # core of both hosts does, and the busy ones' ticks hold up round trips.
    periods = busy["sim_time_us"] / 1e3
    assert 2 * periods - 4 <= busy["kernel_ticks"] < every["kernel_ticks"]
    assert busy["sim_time_us"] > off["sim_time_us"]
    # The other keys are settable alone, and with no tick change nothing.
    assert _modern_pingpong({"host": {"tick": {"jiffy_timers": False}}}) == off


def test_a_preset_without_a_tick_checks_the_tick_keys() -> None:
    with pytest.raises(NicsimError, match=r"`platform\.host\.tick\.hz`: 20000 .*0 \.\.= 10000"):
        _modern_pingpong({"host": {"tick": {"hz": 20000}}})
    with pytest.raises(NicsimError, match=r"`platform\.host\.tick\.hz`: -1 .*0 \.\.= 10000"):
        _modern_pingpong({"host": {"tick": {"hz": -1}}})
    unknown = r"unknown key `platform\.host\.tick\.hertz` \(allowed here: .*nohz"
    with pytest.raises(NicsimError, match=unknown):
        _modern_pingpong({"host": {"tick": {"hertz": 250}}})


def test_a_preset_file_with_part_of_the_tick_takes_the_rest(tmp_path: Path) -> None:
    # A preset file that sets only `hz`: the scenario may set the other keys.
    preset = tmp_path / "mine.toml"
    text = (Path(__file__).parent.parent / "presets" / "modern.toml").read_text()
    preset.write_text(text + "\n[host.tick]\nhz = 1000\ncost_ns = 1000.0\n")
    scenario = {
        "preset": str(preset),
        "seed": 1,
        "host": {"wait": "poll"},
        "workload": {"kind": "pingpong", "size_bytes": 0, "iterations": 2000, "warmup": 0},
    }
    nohz = nicsim.run(scenario)
    every = nicsim.run({**scenario, "platform": {"host": {"tick": {"nohz": False}}}})
    assert 0 < int(nohz["kernel_ticks"]) < int(every["kernel_ticks"])
