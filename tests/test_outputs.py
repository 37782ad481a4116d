"""The output rules every command follows (:mod:`nicsim.outputs`).

Devices and FIFOs are written in place; an output never names an input or
another output of the same command; a sweep writes no per-run file; a
command that wrote nothing leaves no directory behind; a trace cut by its
cap says so; a traced run's memory is bounded per kept event.
"""

from __future__ import annotations

import json
import os
import select
import signal
import stat
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import nicsim
from nicsim import capture, outputs
from nicsim._core import NicsimError
from nicsim.executor import RunFn
from nicsim.studies import campaign
from test_cli import assert_one_error_line, nicsim_cli

SMALL = ["--workload", "pingpong", "--size", "0", "--set", "workload.iterations=20"]
PINGPONG = {"workload": {"kind": "pingpong", "size_bytes": 0, "iterations": 20}}
PCAP_MAGICS = (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1")


class FifoReader:
    """Reads everything written into a FIFO, from before the writer opens it.

    The read end is opened at once (non-blocking), so a writer's ``open``
    does not wait; a writer that never comes leaves ``data`` empty after
    ``timeout`` instead of hanging the test.
    """

    def __init__(self, path: Path, timeout: float = 60.0) -> None:
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = bytearray()
        self.deadline = time.monotonic() + timeout
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            while time.monotonic() < self.deadline:
                select.select([self.fd], [], [], 0.05)
                try:
                    chunk = os.read(self.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if chunk:
                    self.data += chunk
                elif self.data:
                    return  # the writer closed its end
                else:
                    time.sleep(0.01)  # no writer yet: a FIFO reads as ended
        finally:
            os.close(self.fd)

    def join(self, writer_done: bool = True) -> bytes:
        """Wait for the writer's end of file (shortly, if the writer has finished)."""
        if writer_done:
            self.deadline = min(self.deadline, time.monotonic() + 5)
        self.thread.join()
        return bytes(self.data)


def _is_fifo(path: Path) -> bool:
    return stat.S_ISFIFO(os.lstat(path).st_mode)


# -- devices and FIFOs are written in place ----------------------------------


@pytest.mark.core
def test_a_trace_into_a_fifo_is_streamed_to_its_reader_and_the_fifo_stays(tmp_path: Path) -> None:
    fifo = tmp_path / "timeline"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    nicsim.run(PINGPONG, trace=fifo)
    data = reader.join()
    assert _is_fifo(fifo)
    assert json.loads(data)["otherData"]["events"] > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["timeline"]  # no temporary left


@pytest.mark.core
def test_a_pcap_into_a_fifo_is_streamed_to_its_reader_and_the_fifo_stays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "frames"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    code, _, err = nicsim_cli(capsys, "run", *SMALL, "--pcap", str(fifo))
    data = reader.join()
    assert code == 0, err
    assert _is_fifo(fifo)
    assert data[:4] in PCAP_MAGICS and len(data) > 24
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frames"]


@pytest.mark.core
@pytest.mark.parametrize("option", ["--pcap", "--trace"])
def test_ctrl_c_while_a_fifo_waits_for_its_reader_ends_the_run(tmp_path: Path, option: str) -> None:
    fifo = tmp_path / "nobody-reads"
    os.mkfifo(fifo)
    root = Path(__file__).resolve().parents[1]
    command = subprocess.Popen(
        [sys.executable, "-m", "nicsim", "run", *SMALL, option, str(fifo)],
        stderr=subprocess.PIPE, text=True,
        env={"PYTHONPATH": str(root / "python"), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    time.sleep(2)  # started, and waiting for a reader
    command.send_signal(signal.SIGINT)
    try:
        _, err = command.communicate(timeout=20)
    finally:
        if command.poll() is None:  # still blocked: unblock it before failing
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
            command.kill()
            command.wait()
    assert command.returncode == 130, err
    assert err.strip() == "error: interrupted"
    assert _is_fifo(fifo)


def _null_device(tmp_path: Path) -> Path:
    """A character device like /dev/null (1, 3) in ``tmp_path``; skip unless root may make one."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        with open(node, "wb") as probe:
            probe.write(b"x")
    except OSError as err:  # a container without CAP_MKNOD, a nodev mount
        pytest.skip(f"cannot make or open a device node here: {err}")
    return node


@pytest.mark.core
@pytest.mark.parametrize("option", ["--trace", "--pcap"])
@pytest.mark.parametrize("through_link", [False, True])
def test_a_device_output_is_written_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, through_link: bool
) -> None:
    node = _null_device(tmp_path)
    target = node
    if through_link:
        target = tmp_path / "discard"
        target.symlink_to(node)
    code, _, err = nicsim_cli(capsys, "run", *SMALL, option, str(target))
    assert code == 0, err
    assert stat.S_ISCHR(os.stat(node).st_mode) and os.stat(node).st_rdev == os.makedev(1, 3)
    assert target.is_symlink() == through_link
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({"null", target.name})


def test_a_link_to_a_regular_file_stays_a_link_and_its_file_is_replaced(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with outputs.atomic_file(link) as temp:
        temp.write_text("new")
    assert link.is_symlink() and real.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt"]


def test_a_failed_write_into_a_fifo_leaves_the_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    reader = FifoReader(fifo, timeout=10)
    written: list[Path] = []

    def write_part() -> None:
        with outputs.atomic_file(fifo) as path:
            written.append(path)
            path.write_text("part")
            raise RuntimeError

    with pytest.raises(RuntimeError):
        write_part()
    assert written == [fifo]
    assert reader.join() == b"part" and _is_fifo(fifo)


def test_a_socket_is_refused_by_name(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(NicsimError, match="is a socket"):
            outputs.check_file(path, "--trace")


# -- an output never names an input or another output ------------------------


def _scenario_file(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "sc.toml"
    path.write_text(f'{extra}[workload]\nkind = "pingpong"\niterations = 20\n')
    return path


def _unchanged(tmp_path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir()) if p.is_file()}


def _preset_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text(nicsim.preset_toml("omx2009"))
    return path


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--scenario", "{sc}", "--trace", "{sc}"], ("--trace", "--scenario")),
        (["--scenario", "{sc}", "--pcap", "{sc}"], ("--pcap", "--scenario")),
        (["--scenario", "{sc}", "--trace", "{link}"], ("--trace", "--scenario")),
        (["--workload", "pingpong", "--trace", "{x}", "--pcap", "{x}"], ("--pcap", "--trace")),
        (["--workload", "pingpong", "--trace", "{x}", "--set", 'pcap="{x}"'], ("pcap", "--trace")),
        (["--preset", "{preset}", "--trace", "{preset}"], ("--trace", "--preset")),
        (["--set", 'preset="{preset}"', "--pcap", "{preset}"], ("--pcap", "preset")),
    ],
)
def test_run_refuses_an_output_naming_an_input_or_the_other_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], names: tuple[str, str]
) -> None:
    sc = _scenario_file(tmp_path)
    preset = _preset_file(tmp_path, "mine.toml")
    (tmp_path / "link.toml").symlink_to(sc)
    before = _unchanged(tmp_path)
    places = {"sc": sc, "link": tmp_path / "link.toml", "x": tmp_path / "x", "preset": preset}
    code, _, err = nicsim_cli(capsys, "run", *[a.format(**places) for a in args])
    assert code == 2
    assert_one_error_line(err)
    first, second = names
    assert f"{first} " in err and f" and {second} " in err and "the same file" in err
    assert _unchanged(tmp_path) == before
    assert (tmp_path / "link.toml").is_symlink() and not (tmp_path / "x").exists()


def test_run_refuses_a_scenario_files_pcap_naming_the_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc = tmp_path / "sc.toml"
    sc.write_text(f'pcap = "{sc}"\n[workload]\nkind = "pingpong"\niterations = 20\n')
    before = sc.read_bytes()
    code, _, err = nicsim_cli(capsys, "run", "--scenario", str(sc))
    assert code == 2
    assert_one_error_line(err)
    assert f"pcap {sc} and --scenario {sc}: the same file" in err
    assert sc.read_bytes() == before


def test_the_python_run_refuses_an_output_naming_its_scenario_file(tmp_path: Path) -> None:
    sc = _scenario_file(tmp_path)
    before = sc.read_bytes()
    with pytest.raises(NicsimError, match=r"^trace .* and scenario .*: the same file"):
        nicsim.run(sc, trace=sc)
    with pytest.raises(NicsimError, match=r"^pcap .* and trace .*: the same file"):
        nicsim.run(PINGPONG, trace=tmp_path / "t", pcap=str(tmp_path / "t"))
    assert sc.read_bytes() == before and not (tmp_path / "t").exists()


def test_sweep_refuses_an_out_naming_its_scenario_or_preset_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sc = tmp_path / "sc.csv"  # a scenario file may have any name
    sc.write_text('[workload]\nkind = "stream"\nmessages = 50\n')
    preset = _preset_file(tmp_path, "p.csv")
    before = _unchanged(tmp_path)
    axis = ["--axis", "nic.delay_us=0,5", "--jobs", "1"]
    code, _, err = nicsim_cli(capsys, "sweep", "--scenario", str(sc), *axis, "--out", str(sc))
    assert code == 2
    assert_one_error_line(err)
    assert f"--out {sc} and --scenario {sc}: the same file" in err
    sets = ["--set", f'preset="{preset}"', "--set", 'workload.kind="stream"']
    code, _, err = nicsim_cli(capsys, "sweep", *sets, *axis, "--out", str(preset))
    assert code == 2
    assert_one_error_line(err)
    assert f"--out {preset} and preset {preset}: the same file" in err
    assert _unchanged(tmp_path) == before


def test_reproduce_refuses_an_out_whose_set_would_replace_its_preset(
    tmp_path: Path, fake_run: RunFn
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    preset = _preset_file(out, "report.md")
    before = preset.read_bytes()
    with pytest.raises(NicsimError, match=r"--out .* and --preset .*: the output holds the input"):
        campaign.reproduce(
            ["coalescing-irq-overhead"], out, jobs=1, preset=str(preset), option="--out",
            run_fn=fake_run,
        )  # fmt: skip
    assert preset.read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["report.md"]
    # A preset beside the set's files, under a name of its own, is the user's.
    mine = _preset_file(out, "mine.toml")
    campaign.reproduce(["coalescing-irq-overhead"], out, jobs=1, preset=str(mine), run_fn=fake_run)
    assert mine.read_text() == nicsim.preset_toml("omx2009")


def _tiny_pcap(path: Path) -> Path:
    """A classic pcap of one Ethernet frame (IPv4, 60 bytes)."""
    frame = bytes(6) + bytes.fromhex("020000000001") + b"\x08\x00" + bytes(46)
    header = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    record = struct.pack("<IIII", 1, 0, len(frame), len(frame))
    path.write_bytes(header + record + frame)
    return path


def test_replay_refuses_an_out_whose_set_would_replace_its_capture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    cap = _tiny_pcap(out / "timeline.csv")
    before = cap.read_bytes()
    code, _, err = nicsim_cli(capsys, "replay", "--pcap", str(cap), "--out", str(out))
    assert code == 2
    assert_one_error_line(err)
    assert f"--out {out} and --pcap {cap}: the output holds the input" in err
    assert cap.read_bytes() == before and sorted(p.name for p in out.iterdir()) == ["timeline.csv"]


def test_model_refuses_a_plot_naming_its_preset_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preset = tmp_path / "emo.toml"
    preset.write_text(nicsim.preset_toml("emo2004"))
    before = preset.read_bytes()
    code, _, err = nicsim_cli(capsys, "model", "--preset", str(preset), "--plot", str(preset))
    assert code == 2
    assert_one_error_line(err)
    assert f"--plot {preset} and --preset {preset}: the same file" in err
    assert preset.read_bytes() == before


def test_presets_copy_refuses_a_dest_that_is_its_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preset = _preset_file(tmp_path, "mine.toml")
    link = tmp_path / "same.toml"
    link.symlink_to(preset)
    before = preset.read_bytes()
    code, _, err = nicsim_cli(capsys, "presets", "copy", str(preset), str(link), "--force")
    assert code == 2
    assert_one_error_line(err)
    assert f"dest {link} and name {preset}: the same file" in err
    assert preset.read_bytes() == before and link.is_symlink()


def test_check_apart_compares_files_not_spellings(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    a.write_text("{}")
    os.link(a, tmp_path / "hard.json")
    with pytest.raises(NicsimError, match="the same file"):
        outputs.check_apart([("--trace", tmp_path / "hard.json")], [("--scenario", a)])
    with pytest.raises(NicsimError, match="the same file"):
        outputs.check_apart([("--trace", tmp_path / "new"), ("--pcap", tmp_path / "." / "new")])
    outputs.check_apart([("--trace", tmp_path / "t"), ("--pcap", tmp_path / "p")], [("x", a)])


# -- a sweep writes no per-run file ------------------------------------------


@pytest.mark.parametrize(
    "pcap_args",
    [["--set", 'pcap="{dir}/sw.pcap"'], ["--axis", 'pcap="{dir}/a.pcap","{dir}/b.pcap"']],
)
def test_a_sweep_refuses_a_pcap_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pcap_args: list[str]
) -> None:
    args = [a.format(dir=tmp_path) for a in pcap_args]
    code, _, err = nicsim_cli(
        capsys, "sweep", "--set", 'workload.kind="stream"', "--set", "workload.messages=50",
        *args, "--axis", "nic.delay_us=0,5", "--out", str(tmp_path / "s.csv"), "--jobs", "2",
    )  # fmt: skip
    assert code == 2
    assert_one_error_line(err)
    assert "pcap" in err and "nicsim run --pcap" in err
    assert list(tmp_path.iterdir()) == []


def test_the_python_sweep_refuses_a_pcap(tmp_path: Path) -> None:
    base = {"workload": {"kind": "stream", "messages": 50}, "pcap": str(tmp_path / "sw.pcap")}
    with pytest.raises(NicsimError, match=r"^sweep: pcap = .*a sweep makes many runs"):
        nicsim.sweep(base, {"nic.delay_us": [0, 5]}, jobs=1)
    assert list(tmp_path.iterdir()) == []


# -- nothing left behind by a command that wrote nothing ---------------------


def _interrupt(toml: str) -> dict[str, float | int | str]:
    raise KeyboardInterrupt


@pytest.mark.parametrize("existed", [False, True])
def test_a_reproduction_interrupted_before_its_first_run_leaves_no_directory(
    tmp_path: Path, existed: bool
) -> None:
    out = tmp_path / "out"
    if existed:
        out.mkdir()
    with pytest.raises(KeyboardInterrupt):
        campaign.reproduce(["coalescing-irq-overhead"], out, jobs=1, run_fn=_interrupt)
    # One it made is gone; one that was there stays, as it was (empty).
    assert out.exists() == existed
    assert list(tmp_path.iterdir()) == ([out] if existed else [])
    if existed:
        assert list(out.iterdir()) == []


@pytest.mark.core
def test_a_reproduce_command_interrupted_before_its_first_run_says_nothing_was_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from nicsim import _core

    def interrupted(toml: str, progress: object = None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(_core, "run", interrupted)
    out = tmp_path / "out"
    args = ["reproduce", "coalescing-irq-overhead", "--quick", "--jobs", "1", "--quiet"]
    code, _, err = nicsim_cli(capsys, *args, "--out", str(out))
    assert code == 130
    assert err == "error: interrupted; no run had finished, nothing was written\n"
    assert list(tmp_path.iterdir()) == []


def test_a_failed_replay_out_leaves_no_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cap = _tiny_pcap(tmp_path / "c.pcap")

    def fail(*args: object, **kwargs: object) -> None:
        raise NicsimError("replay: the run failed")

    monkeypatch.setattr(capture, "replay", fail)
    out = tmp_path / "out"
    code, _, err = nicsim_cli(capsys, "replay", "--pcap", str(cap), "--out", str(out))
    assert code == 2
    assert_one_error_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.pcap"]


def test_an_output_lock_removes_only_the_directory_it_made(tmp_path: Path) -> None:
    made = tmp_path / "made"
    with outputs.OutputLock(made / ".nicsim", made, "--out"):
        assert made.is_dir()
    assert not made.exists()
    kept = tmp_path / "kept"
    with outputs.OutputLock(kept / ".nicsim", kept, "--out"):
        (kept / "result.csv").write_text("1")
    assert sorted(p.name for p in kept.iterdir()) == ["result.csv"]


# -- a trace cut by its cap says so -------------------------------------------


@pytest.mark.core
def test_a_trace_cut_by_its_cap_is_one_line_after_the_timeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.json"
    code, out, err = nicsim_cli(capsys, "run", *SMALL, "--trace", str(path), "--trace-cap", "50")
    assert code == 0, err
    left_out = json.loads(path.read_text())["otherData"]["left_out_by_cap"]
    line = (
        f"timeline cut by --trace-cap 50: {left_out:,} events left out "
        "(a larger --trace-cap keeps more, up to 20,000,000)"
    )
    assert out.endswith(f"\n{line}\n") and out.index("timeline: ") < out.index(line)
    assert err == ""
    code, out, _ = nicsim_cli(capsys, "run", *SMALL, "--trace", str(path))
    assert code == 0 and "timeline cut" not in out
    code, out, err = nicsim_cli(capsys, "run", *SMALL, "--json", "--trace", str(path),
                                "--trace-cap", "50")  # fmt: skip
    assert code == 0 and json.loads(out)["events"] > 0
    assert err.startswith("timeline cut by --trace-cap 50: ")


# -- a traced run's memory is bounded per kept event -------------------------

_PEAK = """
import resource, sys, nicsim
scenario = {"workload": {"kind": "stream", "size_bytes": 0, "messages": 60000}}
nicsim.run(scenario, trace=sys.argv[1], trace_cap=int(sys.argv[2]))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


@pytest.mark.core
def test_a_traced_run_holds_at_most_96_bytes_per_kept_event(tmp_path: Path) -> None:
    """The bound of :mod:`nicsim.trace`: records, their packed copy, never the JSON text.

    The slope between two caps (the run records more events than either)
    leaves the untraced run's memory out.
    """

    def peak(cap: int) -> int:
        done = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", _PEAK, str(tmp_path / "t.json"), str(cap)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return int(done.stdout)

    small, large = 50_000, 450_000
    per_event = (peak(large) - peak(small)) / (large - small)
    data = json.loads((tmp_path / "t.json").read_text())["otherData"]
    assert data["events"] == small and data["cut_by_cap"]  # the last run: cut, as planned
    assert (tmp_path / "t.json").stat().st_size / small > 96  # the text is larger than the bound
    assert per_event <= 96, per_event
