"""Scenario building: dotted paths, overrides, TOML text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from nicsim import NicsimError, Scenario
from nicsim.scenario import parse_value


def test_set_and_toml_round_trip() -> None:
    s = Scenario(workload={"kind": "stream", "size_bytes": 128})
    s.set("nic.coalescing", "openmx").set("platform.nic.mtu", 9000).set("seed", 5)
    data = tomllib.loads(s.to_toml())
    assert data == {
        "preset": "omx2009",
        "seed": 5,
        "platform": {"nic": {"mtu": 9000}},
        "nic": {"coalescing": "openmx"},
        "workload": {"kind": "stream", "size_bytes": 128},
    }
    assert Scenario.from_toml(s.to_toml()).to_dict() == data


def test_update_merges_sections_and_double_underscore_paths() -> None:
    s = Scenario(nic={"coalescing": "timeout"})
    s.update({"nic": {"delay_us": 10.0}, "host__sleep": False})
    assert s.nic == {"coalescing": "timeout", "delay_us": 10.0}
    assert s.host == {"sleep": False}


@pytest.mark.parametrize(
    ("path", "value"),
    [("bogus", 1), ("bogus.key", 1), ("seed.x", 1), ("nic", 3)],
)
def test_bad_paths_name_the_key(path: str, value: object) -> None:
    with pytest.raises(NicsimError, match=path.split(".")[0]):
        Scenario().set(path, value)


def test_invalid_toml_is_a_nicsim_error() -> None:
    with pytest.raises(NicsimError, match="not valid TOML"):
        Scenario.from_toml("nic = [")


def test_load_resolves_relative_preset_path(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text("[nic]\n")
    (tmp_path / "s.toml").write_text('preset = "mine.toml"\n[workload]\nkind = "flood"\n')
    s = Scenario.load(tmp_path / "s.toml")
    assert s.preset == str(tmp_path / "mine.toml")
    assert s.workload == {"kind": "flood"}


def test_missing_file_is_a_nicsim_error(tmp_path: Path) -> None:
    with pytest.raises(NicsimError, match="cannot read"):
        Scenario.load(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("text", "value"),
    [("75", 75), ("2.5", 2.5), ("true", True), ('"x"', "x"), ("rr", "rr"), ("[]", [])],
)
def test_parse_value(text: str, value: object) -> None:
    assert parse_value(text) == value
