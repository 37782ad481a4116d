"""Bad input: one line naming the thing, before any work where it can be known
before, and nothing left half-done.

Deeply nested values, a full disk during a campaign, sweep axes given twice
or checked late, limits in messages, file modes and the lock of a run that
failed, and what ``nicsim`` shows of itself.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import nicsim
from nicsim import outputs, runner, store
from nicsim._core import NicsimError
from nicsim.executor import RunFn
from nicsim.scenario import MAX_DEPTH, Scenario, check_depth, parse_value
from nicsim.studies import campaign, report, validation
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
        ("inline", ["line 1: `bar` nests more than 32 levels"]),
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


@pytest.mark.parametrize(
    "command",
    [
        ["run"],
        ["reproduce", "coalescing-pingpong", "--quick", "--out", "out"],
        ["model"],
        ["replay", "--pcap", "any.pcap"],
    ],
    ids=["run", "reproduce", "model", "replay"],
)
def test_a_deep_preset_file_is_one_line_naming_the_file_and_key(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    preset = tmp_path / "mine.toml"
    preset.write_text("[nic]\nfoo = " + "[" * 600 + "]" * 600 + "\n")
    code, out, err = nicsim_cli(capsys, *command, "--preset", str(preset))
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert f"preset file {str(preset)!r}: line 2: `foo` nests more than {MAX_DEPTH} levels" in err
    assert "(allowed: at most 32 levels of dotted-key parts, tables and lists)" in err
    assert not (tmp_path / "out").exists()


def test_a_preset_file_with_a_deep_dotted_key_names_the_key(tmp_path: Path) -> None:
    preset = tmp_path / "mine.toml"
    preset.write_text(f"{DOTTED} = 1\n")
    with pytest.raises(NicsimError, match=r"^preset file '.*mine\.toml': `a\.a\.a.*nests more"):
        nicsim.run({"workload": {"kind": "pingpong"}}, preset=str(preset))


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


# -- a full disk ---------------------------------------------------------------


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def _entries(out: Path) -> dict[str, bytes]:
    found = sorted((out / ".nicsim" / "store").glob("*/*.json"))
    return {p.name: p.read_bytes() for p in found}


def _disk_full(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as a write() does: no file name


@pytest.fixture
def previous_set(tmp_path: Path, fake_run: RunFn) -> Path:
    """An --out holding a whole reproduction (seed 1), and its store."""
    out = tmp_path / "out"
    campaign.reproduce(["coalescing-irq-overhead"], out, jobs=1, seed=1, run_fn=fake_run)
    return out


@pytest.mark.parametrize(
    ("target", "failing"),
    [
        ("coalescing-irq-overhead.png", "plot"),
        ("coalescing-irq-overhead.csv", "to_csv"),
        ("validation.md", "validation"),
        ("report.md", "report"),
    ],
)
def test_a_full_disk_names_the_file_and_keeps_the_previous_set(
    previous_set: Path, fake_run: RunFn, monkeypatch: pytest.MonkeyPatch, target: str, failing: str
) -> None:
    out = previous_set
    before, stored = _files(out), _entries(out)
    if failing == "plot":
        monkeypatch.setattr(report, "plot", _disk_full)
    elif failing == "to_csv":
        import pandas as pd

        monkeypatch.setattr(pd.DataFrame, "to_csv", _disk_full)
    elif failing == "validation":
        from nicsim.studies import validation

        monkeypatch.setattr(validation, "write", _disk_full)
    else:
        real = Path.write_text

        def full_for_report(self: Path, *args: Any, **kwargs: Any) -> int:
            if self.name == "report.md":
                _disk_full()
            return real(self, *args, **kwargs)

        monkeypatch.setattr(Path, "write_text", full_for_report)
    with pytest.raises(NicsimError) as err:
        campaign.reproduce(
            ["coalescing-irq-overhead"], out, jobs=1, seed=2, run_fn=fake_run, option="--out"
        )
    message = str(err.value)
    assert message == (
        f"--out {out}: cannot write {out / target}: No space left on device; "
        f"the files {out} held before are kept"
    )
    assert _files(out) == before  # the seed-1 set, whole
    now = _entries(out)
    assert {k: v for k, v in now.items() if k in stored} == stored  # kept, and seed 2's added
    assert len(now) > len(stored)
    assert sorted(p.name for p in (out / ".nicsim").iterdir()) == ["manifest.json", "store"]


def test_a_full_disk_in_the_store_names_the_entry_and_keeps_the_others(
    tmp_path: Path, fake_run: RunFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "s.csv"
    base = Scenario(workload={"kind": "stream"})
    campaign.sweep_to_file(base, {"nic.delay_us": [0, 25]}, table, jobs=1, run_fn=fake_run)
    before = table.read_bytes()
    entries = tmp_path / ".s.csv.nicsim" / "store"
    stored = {p: p.read_bytes() for p in entries.glob("*/*.json")}
    real = Path.write_text
    written: list[Path] = []

    def full_after_one(self: Path, *args: Any, **kwargs: Any) -> int:
        if self.name.endswith(store.TEMP_SUFFIX):
            written.append(self)
            if len(written) > 1:
                _disk_full()
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_after_one)
    axes = {"nic.delay_us": [0, 25, 50, 75, 100]}
    with pytest.raises(NicsimError) as err:
        campaign.sweep_to_file(base, axes, table, jobs=1, run_fn=fake_run, option="--out")
    message = str(err.value)
    assert message.startswith(f"cannot write {entries}/")
    assert ".json: No space left on device (the results store" in message
    assert "\n" not in message
    assert table.read_bytes() == before
    now = {p: p.read_bytes() for p in entries.glob("*/*.json")}
    assert {p: now[p] for p in stored} == stored and len(now) == len(stored) + 1
    assert not list(entries.glob("*/.*"))  # no half-written entry
    assert not (tmp_path / ".s.csv.nicsim" / "lock").exists()


def test_a_full_disk_writing_the_table_keeps_the_previous_one(
    tmp_path: Path, fake_run: RunFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pandas as pd

    table = tmp_path / "s.csv"
    base = Scenario(workload={"kind": "stream"})
    campaign.sweep_to_file(base, {"nic.delay_us": [0, 25]}, table, jobs=1, run_fn=fake_run)
    before = table.read_bytes()
    monkeypatch.setattr(pd.DataFrame, "to_csv", _disk_full)
    with pytest.raises(NicsimError) as err:
        campaign.sweep_to_file(base, {"nic.delay_us": [0, 5]}, table, jobs=1, run_fn=fake_run)
    assert str(err.value) == (
        f"cannot write {table}: No space left on device; its previous content is kept"
    )
    assert table.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".s.csv.nicsim", "s.csv"]


def test_a_full_disk_writing_the_lock_names_it_and_leaves_none(
    tmp_path: Path, fake_run: RunFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outputs.os, "pwrite", _disk_full)
    out = tmp_path / "out"
    with pytest.raises(NicsimError) as err:
        campaign.reproduce(
            ["coalescing-irq-overhead"], out, jobs=1, run_fn=fake_run, option="--out"
        )
    assert str(err.value) == (
        f"--out {out}: cannot write {out / '.nicsim' / 'lock'}: No space left on device"
    )
    assert not (out / ".nicsim").exists()


@pytest.mark.core
def test_a_full_disk_on_the_command_line_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "plot", _disk_full)
    out = tmp_path / "out"
    args = ["reproduce", "coalescing-irq-overhead", "--quick", "--jobs", "1", "--quiet"]
    code, _, err = nicsim_cli(capsys, *args, "--out", str(out))
    assert code == 2
    assert_one_error_line(err)
    assert f"cannot write {out / 'coalescing-irq-overhead.png'}: No space left on device" in err
    assert len(_entries(out)) == 4  # the runs are kept: the same command resumes


@pytest.mark.core
def test_a_full_disk_writing_a_pcap_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: object) -> None:
        raise NicsimError("pcap: No space left on device (os error 28)")

    monkeypatch.setattr(nicsim, "_run_core", full)
    target = tmp_path / "t.pcap"
    with pytest.raises(NicsimError) as err:
        nicsim.run({"workload": {"kind": "pingpong"}}, pcap=str(target))
    assert (
        str(err.value) == f"pcap {target}: cannot write it: No space left on device (os error 28)"
    )
    assert list(tmp_path.iterdir()) == []


# -- sweeps: axes, and every check before the first run ----------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--axis", f"nic.delay_us=0,{DEEP}"], "`nic.delay_us` nests"),
        (["--axis", "nic.delay_us=0", "--set", f"nic.frames={DEEP}"], "`nic.frames` nests"),
    ],
)
def test_a_deep_sweep_value_names_its_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], needle: str
) -> None:
    code, _, err = nicsim_cli(capsys, "sweep", *args, "--out", str(tmp_path / "s.csv"))
    assert code == 2
    assert_one_error_line(err)
    assert needle in err and "more than 32 levels" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.core
def test_a_deep_sweep_axis_raises_nicsim_error_from_python() -> None:
    with pytest.raises(NicsimError, match=r"^`nic\.delay_us\[0\]"):
        nicsim.sweep({"workload": {"kind": "stream"}}, {"nic.delay_us": [0, _nested(100)]})


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--axis", "nic.delay_us=0,25", "--axis", "nic.delay_us=75"],
         "--axis nic.delay_us is given twice; give its values once, e.g. "
         "--axis nic.delay_us=0,25,75"),
        (["--axis", "nic.delay_us=0,25", "--set", "nic.delay_us=5"],
         "--set nic.delay_us=5 and --axis nic.delay_us: nic.delay_us is fixed (--set) or swept "
         "(--axis), not both"),
        (["--axis", "nic.delay_us=0,25", "--set", "nic={delay_us=5}"],
         "--set nic={delay_us=5} and --axis nic.delay_us: nic.delay_us is fixed"),
        (["--axis", "nic.delay_us=0,25,0"],
         "sweep axis 'nic.delay_us': value 0 is listed twice"),
        (["--axis", "nic=3", "--axis", "nic.delay_us=0"],
         "sweep axes 'nic' and 'nic.delay_us': one sets the other"),
    ],
)  # fmt: skip
def test_a_sweep_key_given_twice_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], needle: str
) -> None:
    code, _, err = nicsim_cli(capsys, "sweep", *args, "--out", str(tmp_path / "s.csv"))
    assert code == 2
    assert_one_error_line(err)
    assert needle in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "verb",
    [
        ["run", "--workload", "pingpong"],
        ["sweep", "--axis", "nic.frames=1"],
        ["replay", "--pcap", "x.pcap"],
    ],
)
def test_a_set_key_given_twice_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, verb: list[str]
) -> None:
    # Before, the second value silently won.
    out = ["--out", str(tmp_path / "s.csv")] if verb[0] == "sweep" else []
    args = [*verb, "--set", "nic.delay_us=0", "--set", "nic.delay_us=25", *out]
    code, _, err = nicsim_cli(capsys, *args)
    assert code == 2
    assert_one_error_line(err)
    assert "nic.delay_us given twice: --set nic.delay_us=0 and --set nic.delay_us=25" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.core
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--axis", "nic.delay_us=0,25,-5"],
         "sweep[2] nic.delay_us=-5: invalid value for `nic.delay_us`: -5"),
        (["--axis", "workload.size_bytes=0,64", "--axis", "nic.frames=1,-1"],
         "sweep[1] workload.size_bytes=0 nic.frames=-1: invalid value for `nic.frames`: -1 "
         "(allowed: an integer 0 ..= 1048576)"),
        (["--axis", "nic.delay_us=0,25", "--metric", "latency_us"],
         "metric 'latency_us' is not reported by sweep[0] nic.delay_us=0 (workload.kind = "
         "'stream'); workload.kind = pingpong, echo-nic, echo-kernel report it;"),
        (["--axis", "workload.kind=stream,pingpong", "--metric", "msg_rate_per_s"],
         "metric 'msg_rate_per_s' is not reported by sweep[1] workload.kind=pingpong"),
        (["--axis", "nic.delay_us=0", "--metric", "msg_rate_per_s", "--metric", "bogus"],
         "metric 'bogus' is not reported by sweep[0]"),
    ],
)  # fmt: skip
def test_a_sweep_checks_every_point_and_metric_before_any_run(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    needle: str,
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a run started before every point was checked")

    monkeypatch.setattr(runner, "run_jobs", refuse)
    out = tmp_path / "s.csv"
    fixed = ["--set", "workload.kind=stream", "--set", "workload.messages=100"]
    if "workload.kind" in " ".join(args):
        fixed = []
    code, _, err = nicsim_cli(capsys, "sweep", *args, *fixed, "--out", str(out), "--jobs", "1")
    assert code == 2
    assert_one_error_line(err)
    assert needle in err
    assert list(tmp_path.iterdir()) == []  # no table, no store, no lock


@pytest.mark.core
def test_the_python_sweep_checks_every_point_and_metric_before_any_run(tmp_path: Path) -> None:
    base = {"workload": {"kind": "stream", "messages": 100}}
    with pytest.raises(NicsimError, match=r"^sweep\[1\] nic\.delay_us=-5: "):
        nicsim.sweep(base, {"nic.delay_us": [0, -5]}, jobs=1, store=tmp_path / "store")
    with pytest.raises(NicsimError, match=r"^metric 'latency_us' is not reported by sweep\[0\]"):
        nicsim.sweep(
            base, {"nic.delay_us": [0]}, metrics="latency_us", jobs=1, store=tmp_path / "store"
        )
    assert list(tmp_path.iterdir()) == []  # nothing ran, so nothing was stored


@pytest.mark.core
def test_a_campaign_checks_every_run_before_the_first(tmp_path: Path) -> None:
    good = Scenario(workload={"kind": "stream", "messages": 100}).to_toml()
    bad = Scenario(workload={"kind": "stream", "messages": 0}).to_toml()
    jobs = [runner.Job("x", 0, {"n": 0}, good), runner.Job("x", 1, {"n": 1}, bad)]
    kept = store.Store(tmp_path / "store")
    with pytest.raises(NicsimError, match=r"^x\[1\] n=1: invalid value for `workload.messages`"):
        runner.run_jobs(jobs, workers=1, store=kept)
    assert kept.done() == 0


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


# -- file modes and locks --------------------------------------------------------


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.parametrize("mask", [0o022, 0o027], ids=["umask-022", "umask-027"])
def test_every_output_gets_the_mode_of_a_new_file(
    tmp_path: Path, fake_run: RunFn, mask: int
) -> None:
    out = tmp_path / "out"
    table = tmp_path / "s.csv"
    with _umask(mask):
        campaign.reproduce(["coalescing-irq-overhead"], out, jobs=1, run_fn=fake_run)
        base = Scenario(workload={"kind": "stream"})
        campaign.sweep_to_file(base, {"nic.delay_us": [0]}, table, jobs=1, run_fn=fake_run)
    want = 0o666 & ~mask
    files = [*out.iterdir(), table, *tmp_path.glob(".s.csv.nicsim/store/*/*.json")]
    assert "validation.md" in [p.name for p in files]
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in files if p.is_file()}
    assert modes == dict.fromkeys(modes, want), modes


def test_the_validation_command_writes_the_mode_of_a_new_file(
    tmp_path: Path, fake_run: RunFn
) -> None:
    out = tmp_path / "out"
    campaign.reproduce(["coalescing-irq-overhead"], out, jobs=1, run_fn=fake_run)
    target = tmp_path / "validation.md"
    with _umask(0o022):
        assert validation.main(["--tables", str(out), "--out", str(target)]) == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_a_failed_campaign_leaves_no_lock(tmp_path: Path, fake_run: RunFn) -> None:
    def fail_on_delay(toml: str) -> dict[str, float | int | str]:
        if "delay_us = 25" in toml:
            raise NicsimError("invalid value for `nic.delay_us`: a stand-in refusal")
        return fake_run(toml)

    table = tmp_path / "s.csv"
    base = Scenario(workload={"kind": "stream"})
    with pytest.raises(NicsimError, match="a stand-in refusal"):
        campaign.sweep_to_file(base, {"nic.delay_us": [25]}, table, jobs=1, run_fn=fail_on_delay)
    assert list(tmp_path.iterdir()) == []  # no lock, nor its empty state directory
    with pytest.raises(NicsimError, match="a stand-in refusal"):
        campaign.sweep_to_file(base, {"nic.delay_us": [0, 25]}, table, jobs=1, run_fn=fail_on_delay)
    state = tmp_path / ".s.csv.nicsim"
    assert sorted(p.name for p in state.iterdir()) == ["store"]  # the finished run, no lock
    campaign.sweep_to_file(base, {"nic.delay_us": [0]}, table, jobs=1, run_fn=fail_on_delay)
    assert sorted(p.name for p in state.iterdir()) == ["store"]


def test_a_lock_file_removed_by_its_holder_is_not_taken(tmp_path: Path) -> None:
    # One holder ends while another opened the old lock file: the second
    # takes the lock on the file now at the path, never on the removed one.
    out = tmp_path / "out"
    first = outputs.OutputLock(out / ".nicsim", out, "--out")
    first.acquire()
    stale = os.open(first.path, os.O_RDWR)
    first.release()
    try:
        second = outputs.OutputLock(out / ".nicsim", out, "--out")
        with second:
            assert second.path.exists()
            third = outputs.OutputLock(out / ".nicsim", out, "--out")
            with pytest.raises(NicsimError, match="in use by another nicsim"):
                third.acquire()
    finally:
        os.close(stale)


# -- the package's names -------------------------------------------------------


def test_dir_lists_the_api_and_the_submodules_only() -> None:
    listed = set(dir(nicsim))
    for name in ["Any", "Callable", "Iterable", "Mapping", "Path", "TYPE_CHECKING", "os",
                 "importlib", "annotations", "pd", "_core", "_launch", "_as_scenario"]:  # fmt: skip
        assert name not in listed, name
    public = {name for name in listed if not name.startswith("__")} | {"__version__"}
    assert set(nicsim.__all__) <= public
    for name in public - set(nicsim.__all__):  # the submodules, loaded on first use
        assert getattr(nicsim, name).__name__ == f"nicsim.{name}"
    for name in nicsim.__all__:
        assert getattr(nicsim, name) is not None


def test_star_import_gives_the_api() -> None:
    namespace: dict[str, Any] = {}
    exec("from nicsim import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(nicsim.__all__)
    assert namespace["run"] is nicsim.run and namespace["NicsimError"] is NicsimError


def test_the_mx_wire_below_its_mtu_names_the_wire_and_the_least_mtu() -> None:
    # omx2009-mq runs Open-MX 0.9.2's MX wire, whose frames are 4 KiB.
    with pytest.raises(nicsim.NicsimError) as err:
        nicsim.run(
            {
                "preset": "omx2009-mq",
                "platform": {"link": {"mtu": 1500}},
                "workload": {"kind": "pingpong", "iterations": 1},
            }
        )
    message = str(err.value)
    assert "`library.wire`" in message and "4144" in message and "open-mx-1.0" in message
    # The 1.0 wire runs there.
    m = nicsim.run(
        {
            "preset": "omx2009-mq",
            "platform": {"link": {"mtu": 1500}, "library": {"wire": "open-mx-1.0"}},
            "workload": {"kind": "pingpong", "iterations": 1},
        }
    )
    assert m["latency_us"] > 0
