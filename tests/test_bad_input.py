"""Bad input: one line naming the thing, before any work where it can be known
before, and nothing left half-done.

Deeply nested values, and limits and keys in messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nicsim
from nicsim._core import NicsimError
from nicsim.scenario import MAX_DEPTH, Scenario, check_depth, parse_value
from test_cli import assert_one_error_line, nicsim_cli

DEEP = "[" * 500 + "]" * 500
DOTTED = ".".join(["a"] * 1000)


def _nested(depth: int) -> list[Any]:
    """A list nested ``depth`` deep, made without recursion."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


# -- deeply nested values ------------------------------------------------------


@pytest.fixture
def deep_files(tmp_path: Path) -> dict[str, Path]:
    files = {
        "array": tmp_path / "deep.toml",
        "header": tmp_path / "dotted.toml",
        "inline": tmp_path / "inline.toml",
    }
    files["array"].write_text(f'[workload]\nkind = "pingpong"\nfoo = {DEEP}\n')
    files["header"].write_text(f'[workload]\nkind = "pingpong"\n\n[platform.{DOTTED}]\nx = 1\n')
    files["inline"].write_text("bar = " + "{a = " * 300 + "1" + "}" * 300 + "\n")
    return files


@pytest.mark.parametrize(
    ("which", "needles"),
    [
        ("array", ["line 3: `foo` nests more than 32 levels"]),
        ("header", ["`platform.a.a.a.a", "nests more than 32 levels"]),
        ("inline", ["`bar.a.a.a.a", "nests more than 32 levels"]),
    ],
)
def test_a_deep_scenario_file_is_one_line_on_the_command_line(
    capsys: pytest.CaptureFixture[str], deep_files: dict[str, Path], which: str, needles: list[str]
) -> None:
    code, out, err = nicsim_cli(capsys, "run", "--scenario", str(deep_files[which]))
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert f"scenario file {str(deep_files[which])!r}" in err
    for needle in needles:
        assert needle in err
    assert "RecursionError" not in err


@pytest.mark.parametrize("which", ["array", "header", "inline"])
def test_a_deep_scenario_raises_nicsim_error_from_python(
    deep_files: dict[str, Path], which: str
) -> None:
    path = deep_files[which]
    for scenario in (path, str(path), path.read_text()):
        with pytest.raises(NicsimError, match="nests more than 32 levels"):
            nicsim.run(scenario)
    with pytest.raises(NicsimError, match="nests more than 32 levels"):
        Scenario.load(path)


def test_a_deep_value_from_python_names_its_key() -> None:
    with pytest.raises(NicsimError, match=r"^`workload\.foo\[0\]\[0\]"):
        nicsim.run({"workload": {"kind": "pingpong", "foo": _nested(600)}})
    with pytest.raises(NicsimError, match="nests more than 32 levels"):
        nicsim.run({"workload": {"kind": "pingpong"}}, nic__x=_nested(40))
    loop: list[Any] = []
    loop.append(loop)  # a value that holds itself
    with pytest.raises(NicsimError, match=r"^`nic\.x\[0\]\[0\]"):
        Scenario().set("nic.x", loop)
    with pytest.raises(NicsimError, match=r"^`nic\.a\.a\.a"):
        Scenario().set(f"nic.{DOTTED}", 1)


def test_the_depth_bound_is_exact() -> None:
    # A key's dotted parts and the lists around its value count alike:
    # nic.x[0]...[0] with 30 indices is 32 parts, with 31 is 33.
    check_depth(_nested(MAX_DEPTH - 1), "nic.x")
    with pytest.raises(NicsimError):
        check_depth(_nested(MAX_DEPTH), "nic.x")
    check_depth(0, ".".join(["a"] * MAX_DEPTH))
    with pytest.raises(NicsimError):
        check_depth(0, ".".join(["a"] * (MAX_DEPTH + 1)))
    assert parse_value("[[1]]", "nic.x") == [[1]]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--set", f"workload.size_bytes={DEEP}"], "`workload.size_bytes` nests"),
        (["run", "--set", f"nic.{DOTTED}=1"], "`nic.a.a.a.a"),
        (["model", "--set", f"host.wait={DEEP}"], "`host.wait` nests"),
    ],
)  # fmt: skip
def test_a_deep_command_line_value_names_its_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], needle: str
) -> None:
    code, _, err = nicsim_cli(capsys, *(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert code == 2
    assert_one_error_line(err)
    assert needle in err and "more than 32 levels" in err
    assert list(tmp_path.iterdir()) == []  # nothing made


# -- limits and keys in messages -----------------------------------------------


@pytest.mark.core
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"workload": {"kind": "stream", "size_bytes": "big"}},
         'invalid value for `workload.size_bytes`: "big" (allowed: an integer 0 ..= 1073741824)'),
        ({"workload": {"kind": "stream", "size_bytes": 2**40}},
         "invalid value for `workload.size_bytes`: 1099511627776 (allowed: an integer "
         "0 ..= 1073741824)"),
        ({"workload": {"kind": "pingpong"}, "platform": {"topology": {"hosts": -2}}},
         "invalid value for `platform.topology.hosts`: -2 (allowed: an integer 2 ..= 1024)"),
        ({"workload": {"kind": "pingpong"}, "platform": {"topology": {"hosts": 1}}},
         "invalid value for `platform.topology.hosts`: 1 (allowed: an integer 2 ..= 1024)"),
        ({"workload": {"kind": "exchange", "procs_per_host": 256},
          "platform": {"topology": {"hosts": 1024, "sockets": 16, "dies_per_socket": 1,
                                    "cores_per_die": 16}}},
         "invalid value for `workload.procs_per_host`: 256 (allowed: at most 63 with "
         "platform.topology.hosts = 1024: a run has at most 65535 ranks)"),
        ({"workload": {"kind": "uniband", "window": -1}},
         "invalid value for `workload.window`: -1 (allowed: an integer 1 ..= 65536)"),
        ({"preset": "lci2000", "workload": {"kind": "stream"}, "platform": {"grid": {"x": "two"}}},
         'invalid value for `platform.grid.x`: "two" (allowed: an integer 1 ..= 64)'),
    ],
)  # fmt: skip
def test_messages_give_the_real_limits_and_keys_as_written(
    overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(NicsimError) as err:
        nicsim.run(overrides)
    assert str(err.value) == message


@pytest.mark.core
def test_a_key_of_a_preset_file_is_named_as_the_file_names_it(tmp_path: Path) -> None:
    preset = tmp_path / "mine.toml"
    preset.write_text(nicsim.preset_toml("omx2009").replace("hosts = 2", "hosts = 1"))
    with pytest.raises(NicsimError) as err:
        nicsim.run({"preset": str(preset), "workload": {"kind": "pingpong"}})
    assert str(err.value) == (
        f'preset file "{preset}": invalid value for `topology.hosts`: 1 '
        "(allowed: an integer 2 ..= 1024)"
    )
