"""The discipline of inputs: a value given once, every key read, real ranges.

A key given twice on the command line (a flag and a ``--set``, two
``--set``, a ``--set`` of a table holding the key) or in the Python API's
overrides is refused naming both; a flag or a ``--set`` over a scenario
file replaces its value and says so. Every key of every preset is read by
the simulator, and an option a command does not read is refused by name.
Messages give a key's real range, and a sweep's grid is bounded.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import nicsim
from nicsim._core import NicsimError
from nicsim.keys import Given, check_once, leaf_keys
from nicsim.sweeps import MAX_POINTS
from test_cli import assert_one_error_line, nicsim_cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
BASE = {"workload": {"kind": "pingpong", "iterations": 5, "warmup": 1}}


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run the CLI; assert one error line and status 2; return the line."""
    code, out, err = nicsim_cli(capsys, *args)
    assert code == 2, (out, err)
    assert_one_error_line(err)
    return err


# -- one rule for values given twice -----------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--coalescing", "openmx", "--set", "nic.coalescing=disabled"],
         "nic.coalescing given twice: --coalescing openmx and --set nic.coalescing=disabled; "
         "give it once"),
        (["run", "--delay-us", "5", "--set", "nic.delay_us=500"],
         "nic.delay_us given twice: --delay-us 5.0 and --set nic.delay_us=500; give it once"),
        (["run", "--set", "nic.coalescing=openmx", "--set", 'nic={coalescing="disabled"}'],
         'nic.coalescing given twice: --set nic.coalescing=openmx and --set '
         'nic={coalescing="disabled"}'),
        (["run", "--set", "platform.link.mtu=9000", "--set", "platform={link={mtu=1500}}"],
         "platform.link.mtu given twice: --set platform.link.mtu=9000 and --set platform="),
        (["run", "--workload", "stream", "--set", 'workload={kind="pingpong"}'],
         "workload.kind given twice: --workload stream and --set workload="),
        (["run", "--no-sleep", "--set", "host.sleep=true"],
         "host.sleep given twice: --no-sleep and --set host.sleep=true"),
        (["run", "--seed", "3", "--set", "seed=4"], "seed given twice: --seed 3 and --set seed=4"),
        (["replay", "--pcap", "x.pcap", "--coalescing", "openmx", "--set", "nic.coalescing=stream"],
         "nic.coalescing given twice: --coalescing openmx and --set nic.coalescing=stream"),
        (["replay", "--pcap", "x.pcap", "--compare", "openmx,timeout",
          "--set", 'nic={coalescing="stream"}'],
         "nic.coalescing given twice: --compare openmx,timeout and --set nic="),
        (["replay", "--pcap", "x.pcap", "--delay-us", "5", "--set", "nic.delay_us=7"],
         "nic.delay_us given twice: --delay-us 5.0 and --set nic.delay_us=7"),
        (["model", "--coalescing", "max", "--set", "nic.delay_us=5"],
         "nic.delay_us given twice: --coalescing max and --set nic.delay_us=5"),
        (["model", "--set", "preset=omx2009"],
         "preset given twice: --preset emo2004 (the default) and --set preset=omx2009"),
        (["model", "--set", "workload.size_bytes=64"],
         "workload.size_bytes given twice: --sizes and --set workload.size_bytes=64"),
    ],
)  # fmt: skip
def test_a_key_given_twice_on_the_command_line_is_refused_naming_both(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], needle: str
) -> None:
    err = _refused(capsys, *args)
    assert needle in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("given", "both"),
    [
        ([("nic.coalescing", "openmx"), ("nic", {"coalescing": "disabled"})], "nic.coalescing"),
        ([("nic", {"host0": {"frames": 6}}), ("nic.host0", 5)], "nic.host0.frames"),
        ([("nic.host0.frames", 6), ("nic.host0", {"frames": 7})], "nic.host0.frames"),
    ],
)
def test_check_once_sees_keys_inside_tables(given: list[tuple[str, Any]], both: str) -> None:
    items = [Given(path, value, f"#{i}") for i, (path, value) in enumerate(given)]
    with pytest.raises(NicsimError, match=rf"^{re.escape(both)} given twice: #0 and #1; give"):
        check_once(items)


def test_different_keys_of_one_table_are_not_given_twice() -> None:
    check_once([Given("nic.delay_us", 5, "a"), Given("nic", {"coalescing": "openmx"}, "b")])
    assert leaf_keys("nic", {}) == []
    check_once([Given("nic", {}, "a"), Given("nic.delay_us", 5, "b")])


def test_python_overrides_give_a_key_once() -> None:
    # Before, the last of the two silently won and the run went ahead.
    with pytest.raises(
        NicsimError, match=r"^nic\.coalescing given twice: nic__coalescing='openmx'"
    ):
        nicsim.run(BASE, nic__coalescing="openmx", nic={"coalescing": "disabled"})
    with pytest.raises(NicsimError, match=r"^workload\.iterations given twice"):
        nicsim.run(BASE, workload__iterations=3, workload={"iterations": 4})


@pytest.mark.core
def test_a_flag_over_a_scenario_file_replaces_its_value_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sc = tmp_path / "sc.toml"
    sc.write_text(
        '[nic]\ndelay_us = 25\n[workload]\nkind = "pingpong"\niterations = 5\nwarmup = 1\n'
    )
    code, _, err = nicsim_cli(
        capsys, "run", "--scenario", str(sc), "--delay-us", "5", "--set", "workload.iterations=6"
    )
    assert code == 0, err
    notes = err.strip().splitlines()
    assert notes == [
        f"note: --delay-us 5.0 replaces nic.delay_us = 25 of scenario file {str(sc)!r}",
        f"note: --set workload.iterations=6 replaces workload.iterations = 5 of scenario file "
        f"{str(sc)!r}",
    ]
    code, _, err = nicsim_cli(capsys, "run", "--scenario", str(sc), "--set", "seed=3")
    assert code == 0 and err == ""  # the file sets no seed: nothing replaced


@pytest.mark.core
def test_a_sweep_over_a_scenario_file_says_what_its_axes_and_sets_replace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sc = tmp_path / "sc.toml"
    sc.write_text('[nic]\ndelay_us = 25\n[workload]\nkind = "stream"\nmessages = 50\n')
    args = ["sweep", "--scenario", str(sc), "--axis", "nic.delay_us=0,5"]
    args += ["--set", "workload.messages=60", "--metric", "interrupts", "--jobs", "1"]
    code, _, err = nicsim_cli(capsys, *args, "--out", str(tmp_path / "s.csv"))
    assert code == 0, err
    assert (
        f"note: --axis nic.delay_us replaces nic.delay_us = 25 of scenario file {str(sc)!r}" in err
    )
    assert "note: --set workload.messages=60 replaces workload.messages = 50" in err
    code, _, err = nicsim_cli(capsys, *args, "--quiet", "--out", str(tmp_path / "t.csv"))
    assert code == 0 and "note:" not in err


# -- every key read, every option read ------------------------------------------


def _leaves(value: Any, path: list[str]) -> Iterator[list[str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, [*path, key])
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for item in value:
            yield from _leaves(item, path)
    else:
        yield path


def test_every_key_of_every_preset_is_read_by_the_simulator() -> None:
    """A static audit: each preset key's field is read somewhere in the core's source.

    A preset key deserializes into the field of its name (the platform
    types have no renames); a field is read where the source accesses it
    (``.key``, not a method call), or, for a key of a cost table declared
    ``=> unit name``, where the simulator reads its converted value
    (``.name``); ``description`` is read by ``nicsim presets list``. A key
    whose name is read nowhere (``library.spin_ns`` was parsed and
    range-checked only) fails. It cannot tell two fields of one
    name apart: it finds keys nothing reads, not every key read in the wrong
    place.
    """
    sources = "\n".join(p.read_text() for p in (ROOT / "crates/nicsim/src").rglob("*.rs"))
    # A preset's `description` is for its reader: `nicsim presets list` shows it.
    cli = (ROOT / "python/nicsim/cli/main.py").read_text()
    assert '.get("description"' in cli
    sources += "\n.description"
    charged = dict(re.findall(r"pub (\w+)\s*:[^\n]*=>\s*\w+\s+(\w+)\s*,", sources))
    assert charged, "the cost tables' declarations changed: update this audit"
    unread = []
    presets = sorted((ROOT / "presets").glob("*.toml"))
    assert len(presets) >= 5
    for preset in presets:
        for path in _leaves(tomllib.loads(preset.read_text()), []):
            names = [path[-1], *([charged[path[-1]]] if path[-1] in charged else [])]
            if not any(re.search(rf"\.{re.escape(n)}\b(?!\s*\()", sources) for n in names):
                unread.append(f"{preset.name}: {'.'.join(path)}")
    assert unread == []


@pytest.mark.core
@pytest.mark.parametrize(
    "args",
    [
        ["run", "--workload", "pingpong", "--set", "platform.library.spin_ns=100000"],
        ["run", "--workload", "pingpong", "--set", "platform={library={spin_ns=1}}"],
    ],
)
def test_a_key_nothing_reads_is_refused_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    err = _refused(capsys, *args)
    value = args[-1].rsplit("=", 1)[1].rstrip("}")
    assert f"`platform.library.spin_ns` = {value} is no key of a platform" in err
    assert "host.wait" in err


@pytest.mark.core
def test_the_presets_have_no_key_nothing_reads() -> None:
    for name in nicsim.presets():
        assert "spin_ns" not in nicsim.preset_toml(name)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["bench", "--kind", "pingpong", "--procs", "64"],
         "--procs 64: --kind pingpong does not read it (it applies to alltoall, exchange, nas-is)"),
        (["bench", "--kind", "engine", "--repeat", "3"],
         "--repeat 3: --kind engine does not read it"),
        (["bench", "--kind", "alltoall", "--count", "5"],
         "--count 5: --kind alltoall does not read it (it applies to engine, pingpong, stream)"),
        (["replay", "--pcap", "x.pcap", "--set", "workload.kind=stream"],
         "--set workload.kind=stream: a replay does not read workload.kind (the capture is its "
         "workload"),
        (["replay", "--pcap", "x.pcap", "--set", "workload={size_bytes=64}"],
         "a replay does not read workload.size_bytes"),
        (["replay", "--pcap", "x.pcap", "--set", 'pcap="y.pcap"'],
         "a replay does not read pcap (it writes no capture of its own"),
        (["run", "--all", "--json"], "--all and --json"),
    ],
)  # fmt: skip
def test_an_option_the_command_does_not_read_is_refused_by_name(
    capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    assert needle in _refused(capsys, *args)


# -- messages with the real range ----------------------------------------------


@pytest.mark.core
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--size", "99999999999999999999"],
         "invalid value for `workload.size_bytes`: 99999999999999999999 "
         "(allowed: an integer 0 ..= 1073741824)"),
        (["run", "--set", "platform.link.mtu=-99999999999999999999"],
         "(allowed: an integer 576 ..= 9000)"),
        (["bench", "--kind", "pingpong", "--count", "0"],
         "--count 0: must be from 1 to 4294967296 (round trips: workload.iterations"),
        (["bench", "--kind", "stream", "--count", "4294967297"],
         "--count 4294967297: must be from 1 to 4294967296 (messages: workload.messages"),
        (["model", "--sizes", "100,99999999999999999999"],
         "size_bytes = 99999999999999999999 goes by rendezvous and pull (allowed: 0 ..= 32768"),
        (["replay", "--pcap", "x.pcap", "--preset", "lci2000"],
         "preset 'lci2000' is an LCI preset (LANai NIs: a [lanai] table): a replay feeds "
         "the capture to an Open-MX host"),
        (["run", "--preset", "lci2000", "--set", 'protocol.stack="lci"', "--pcap", "x.pcap"],
         "`pcap` (--pcap): the LCI stack writes no capture"),
        # A library that cannot run the workload, or not on this hardware.
        (["run", "--set", 'protocol.stack="lci"'],
         'invalid value for `protocol.stack`: "lci" on preset "omx2009" (allowed: "open-mx" or '
         '"native-mx"; "lci" runs on an LCI-family preset'),
        (["run", "--preset", "lci2000", "--set", 'protocol.stack="lci"', "--workload", "uniband"],
         'invalid value for `workload.kind`: "uniband" with protocol.stack = "lci" (allowed: '
         "one of pingpong, stream, bcast, asp, qr, fft-alltoall, dsm"),
        (["run", "--preset", "lci2000", "--set", 'protocol.stack="native-mx"', "--set",
          'workload.kind="dsm"'],
         'invalid value for `protocol.stack`: "native-mx" with workload.kind = "dsm" (allowed: '
         '"lci": only the LCI stack runs it'),
    ],
)  # fmt: skip
def test_messages_give_the_real_range_and_the_real_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], needle: str
) -> None:
    args = [str(tmp_path / a) if a == "x.pcap" else a for a in args]
    assert needle in _refused(capsys, *args)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.core
@pytest.mark.parametrize(
    ("key", "allowed"),
    [
        ("workload__size_bytes", "an integer 0 ..= 1073741824"),
        ("nic__delay_us", "a number 0 ..= 1000000"),
        ("platform__link__mtu", "an integer 576 ..= 9000"),
    ],
)
def test_none_in_python_gets_the_keys_range(key: str, allowed: str) -> None:
    with pytest.raises(NicsimError) as err:
        nicsim.run(BASE, **{key: None})
    assert f"None (allowed: {allowed}; leave the key out to take the preset's value)" in str(err)


@pytest.mark.core
def test_presets_copy_takes_a_preset_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dest = tmp_path / "y.toml"
    code, _, err = nicsim_cli(
        capsys, "presets", "copy", str(ROOT / "presets/omx2009.toml"), str(dest)
    )
    assert code == 0, err
    assert dest.read_bytes() == (ROOT / "presets/omx2009.toml").read_bytes()


@pytest.mark.core
def test_presets_copy_to_a_directory_says_so_first(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Before, it said "pass --force", and with --force "is a directory".
    err = _refused(capsys, "presets", "copy", "omx2009", str(tmp_path))
    assert "is a directory" in err and "--force" not in err


# -- a sweep's grid -------------------------------------------------------------


def test_a_grid_above_the_maximum_is_refused_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    thousand = ",".join(map(str, range(1000)))
    args = ["--axis", f"nic.delay_us={thousand}", "--axis", f"workload.size_bytes={thousand}"]
    start = time.monotonic()
    err = _refused(capsys, "sweep", *args, "--out", str(tmp_path / "s.csv"))
    assert time.monotonic() - start < 3.0
    assert (
        f"sweep grid of 1,000,000 points (1,000 nic.delay_us x 1,000 workload.size_bytes): more "
        f"than the {MAX_POINTS:,} a sweep runs" in err
    )
    assert list(tmp_path.iterdir()) == []
    start = time.monotonic()
    with pytest.raises(NicsimError, match=r"^sweep grid of 1,000,000 points"):
        nicsim.sweep(BASE, {"nic.delay_us": range(1000), "nic.frames": range(1000)})
    assert time.monotonic() - start < 3.0


def test_a_value_listed_twice_on_an_axis_is_refused() -> None:
    with pytest.raises(NicsimError, match=r"^sweep axis 'nic\.coalescing': value 'openmx' is"):
        nicsim.sweep(BASE, {"nic.coalescing": ["openmx", "disabled", "openmx"]})


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ("a = " + "[" * 600 + "]" * 600, 1, "a"),
        ("s = '''x\n[[\n'''\n# [[[[\nb.c = " + "{d = " * 80 + "1" + "}" * 80, 5, "b.c"),
    ],
)
def test_deep_toml_never_reaches_the_recursive_parser(
    monkeypatch: pytest.MonkeyPatch, text: str, line: int, key: str
) -> None:
    """The depth is found by a scan before ``tomllib`` (which recurses per level) is called."""
    import nicsim.keys
    import nicsim.scenario

    def refuse(_: str) -> None:
        raise AssertionError("text nested too deep reached tomllib")

    assert nicsim.keys.deep_statement(text, nicsim.keys.PARSER_DEPTH) == (line, key)
    monkeypatch.setattr(nicsim.scenario.tomllib, "loads", refuse)
    with pytest.raises(NicsimError, match=rf"line {line}: `{re.escape(key)}` nests more than 32"):
        nicsim.scenario.loads(text, "scenario")
    with pytest.raises(NicsimError, match="nests more than 32"):
        nicsim.keys.parse_value("[" * 600 + "]" * 600, "nic.delay_us")
