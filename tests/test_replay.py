"""Replaying a capture into a receiving host (``nicsim replay``, ``nicsim.replay``)."""

from __future__ import annotations

import copy
import errno
import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import PcapNgWriter, PcapWriter

import nicsim
from nicsim import capture, capture_read
from nicsim._core import NicsimError
from test_cli import assert_one_error_line, nicsim_cli

HOST = "02:00:00:00:00:01"
OTHER = "02:00:00:00:00:02"
POLICIES = ["disabled", "timeout", "openmx", "stream", "adaptive"]
#: The table's column of each header (a row split on blanks: "delay µs" is one cell).
COLUMN = {
    name: i
    for i, name in enumerate(
        ["policy", "delay µs", "irqs", "rx irqs", "tx-only irqs", "irq/frame", "CPU ns/frame",
         "p50 µs", "p99 µs", "max µs", "drops"]
    )
}  # fmt: skip


def udp_bursts(
    path: Path, *, bursts: int = 20, per_burst: int = 32, gap_us: int = 500, ng: bool = False
) -> int:
    """Write bursts of 1,000 B UDP frames to HOST, 5 us apart; return the count.

    A few frames to OTHER are mixed in, so that HOST is the busiest MAC, not the only one.
    """
    writer = PcapNgWriter(str(path)) if ng else PcapWriter(str(path), nano=True)
    frames = 0
    packets = []
    for b in range(bursts):
        for i in range(per_burst):
            t_ns = 1_700_000_000 * 10**9 + b * gap_us * 1000 + i * 5000
            pkt = Ether(dst=HOST, src=OTHER) / IP(src="10.0.0.2", dst="10.0.0.1")
            pkt = pkt / UDP(sport=4000 + b % 2, dport=5000) / Raw(b"\0" * 958)
            pkt.time = Decimal(t_ns) / 10**9
            packets.append(pkt)
            frames += 1
        back = Ether(dst=OTHER, src=HOST) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP()
        back.time = Decimal(1_700_000_000 * 10**9 + b * gap_us * 1000 + 100_000) / 10**9
        packets.append(back)
    for pkt in sorted(packets, key=lambda p: p.time):  # in time order, as a capture is
        writer.write(pkt)
    writer.close()
    return frames


@pytest.fixture(scope="module")
def bursts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("bursts") / "udp.pcap"
    return path, udp_bursts(path)


@pytest.mark.core
def test_udp_bursts_interrupt_as_each_policy_says(bursts: tuple[Path, int]) -> None:
    path, n = bursts
    r = {p: nicsim.replay(path, coalescing=p) for p in ["disabled", "timeout", "openmx"]}
    for res in r.values():
        m = res.metrics
        assert res.host_mac == HOST
        assert m["replay_frames"] == n and m["replay_other_frames"] == n
        assert m["replay_omx_frames"] == 0 and m["replay_marked_frames"] == 0
        assert m["replay_dropped"] == 0
    irq = {p: res.metrics["replay_interrupts"] for p, res in r.items()}
    p50 = {p: res.metrics["replay_delay_p50_us"] for p, res in r.items()}
    # disabled raises again as soon as the host re-arms (every frame or
    # two, a sleeping core's exit included); the 75 us timeout two or three
    # times per 160 us burst.
    assert irq["disabled"] >= n // 2
    assert 2 * 20 <= irq["timeout"] <= 3 * 20
    assert irq["disabled"] > 4 * irq["timeout"]
    # Unmarked frames: Open-MX coalescing falls back to its timeout.
    assert irq["openmx"] == irq["timeout"]
    # The timeout holds a burst's frames back; disabled delivers at once.
    # omx2009's timer is a minimum gap of 75 us between interrupts
    # (`nic.default_timeout_mode`): no frame waits longer than the gap.
    assert p50["disabled"] < 10 < p50["timeout"]
    assert 60 < r["timeout"].metrics["replay_delay_max_us"] <= 75
    # Every frame marked (a user's choice): Open-MX raises as disabled does,
    # but for the completions of the host's own frames (one a burst), which
    # are unmarked: disabled raises for them at once, openmx within its
    # timeout, mostly with the next burst's interrupt.
    marked = nicsim.replay(path, coalescing="openmx", mark=lambda head: True)
    assert marked.metrics["replay_marked_frames"] == n
    assert r["disabled"].metrics["replay_sent_frames"] == 20
    assert irq["disabled"] - 20 <= marked.metrics["replay_interrupts"] < irq["disabled"]


@pytest.mark.core
def test_pcapng_gives_what_pcap_gives(bursts: tuple[Path, int], tmp_path: Path) -> None:
    path, n = bursts
    ng = tmp_path / "udp.pcapng"
    assert udp_bursts(ng, ng=True) == n
    assert nicsim.replay(ng).metrics == nicsim.replay(path).metrics


@pytest.mark.core
def test_a_python_policy_decides_the_interrupts(bursts: tuple[Path, int]) -> None:
    from nicsim.policy import CoalescingPolicy, Decision

    class EveryEighth(CoalescingPolicy):
        def __init__(self) -> None:
            self.n = 0

        def on_dma_complete(
            self, now_ps: int, marked: bool, size_bytes: int, other_pending: int
        ) -> Decision | None:
            self.n += size_bytes > 0  # received frames, not transmit completions
            return Decision(raise_irq=True) if size_bytes > 0 and self.n % 8 == 0 else None

        def on_timer(self, now_ps: int) -> Decision | None:
            return None

        def on_irq_raised(self, now_ps: int) -> Decision | None:
            return None

    path, n = bursts
    m = nicsim.replay(path, policy=EveryEighth).metrics
    assert 0 < m["replay_interrupts"] <= n // 8


@pytest.mark.core
def test_multiqueue_steers_the_flows_apart(bursts: tuple[Path, int]) -> None:
    path, _ = bursts
    single = nicsim.replay(path, steering="single-core").metrics
    multi = nicsim.replay(path, steering="multiqueue").metrics
    assert single["host1_kernel_cores"] == 1
    # Two UDP flows in (source ports 4000, 4001), and the completions of the
    # host's own frames on the queue their flow hashes to.
    assert multi["host1_kernel_cores"] == 3


@pytest.mark.core
def test_replay_of_a_run_pcap_compares_policies_and_writes_its_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pcap = tmp_path / "pingpong.pcap"
    code, _, err = nicsim_cli(capsys, "run", "--workload", "pingpong", "--pcap", str(pcap))
    assert code == 0, err
    outs = []
    for i in range(2):
        out = tmp_path / f"out{i}"
        args = ["replay", "--pcap", str(pcap), "--compare", ",".join(POLICIES), "--out", str(out)]
        code, stdout, err = nicsim_cli(capsys, *args)
        assert code == 0, err
        outs.append(out)
    rows = {line.split()[0]: line.split() for line in stdout.splitlines() if line.split()}
    assert all(p in rows for p in POLICIES)
    # A ping-pong (here under the preset's 75 us timer, a minimum gap between
    # interrupts, so 150 us a round trip): one frame at a time, one interrupt
    # each whatever the policy, and one for the completion of each of the
    # host's replies, but the timeout holds each frame until 75 us after the
    # host's last interrupt where the marked ones raise at once.
    irq = {p: int(rows[p][COLUMN["irqs"]]) for p in POLICIES}
    p50 = {p: float(rows[p][COLUMN["p50 µs"]]) for p in POLICIES}
    assert set(irq.values()) == {1101 + 1100}  # frames to the busiest host, and its replies
    assert p50["openmx"] < 10 and p50["disabled"] < 10
    assert 60 < p50["timeout"] < 75
    files = sorted(p.name for p in outs[0].iterdir() if p.name != ".nicsim")
    assert files == ["frames.csv", "summary.csv", "timeline.csv", "timeline.png"]
    for name in files:  # deterministic: the same bytes twice
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()
    summary = (outs[0] / "summary.csv").read_text().splitlines()
    assert summary[0].startswith("policy,frames,interrupts") and len(summary) == 1 + len(POLICIES)


@pytest.mark.core
def test_a_single_policy_replay_labels_its_row_with_the_policy_it_ran(
    capsys: pytest.CaptureFixture[str], bursts: tuple[Path, int]
) -> None:
    path, _ = bursts
    runs = {
        "": ["replay", "--pcap", str(path), "--json"],
        "timeout": ["replay", "--pcap", str(path), "--json", "--coalescing", "timeout"],
        "set": ["replay", "--pcap", str(path), "--json", "--set", 'nic.coalescing="openmx"'],
    }
    printed = {}
    for key, args in runs.items():
        code, out, err = nicsim_cli(capsys, *args)
        assert code == 0, err
        printed[key] = json.loads(out)
    # No policy given: the core's default, timeout, by name and by its numbers.
    assert printed[""] == printed["timeout"]
    assert list(printed["set"]["policies"]) == ["openmx"]
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(path))
    assert code == 0, err
    rows = [line.split()[0] for line in out.splitlines() if line.split()]
    assert "timeout" in rows and "preset's" not in rows


@pytest.mark.core
def test_a_replay_that_fails_writing_its_plot_keeps_the_previous_set_whole(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    bursts: tuple[Path, int],
    tmp_path: Path,
) -> None:
    path, _ = bursts
    out = tmp_path / "out"
    args = ["replay", "--pcap", str(path), "--out", str(out)]
    code, _, err = nicsim_cli(capsys, *args, "--coalescing", "timeout")
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert sorted(before) == ["frames.csv", "summary.csv", "timeline.csv", "timeline.png"]

    def disk_full(self: Figure, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Figure, "savefig", disk_full)
    # Another policy: its tables differ from the ones kept.
    code, _, err = nicsim_cli(capsys, *args, "--coalescing", "disabled")
    assert code == 2
    assert_one_error_line(err)
    assert f"cannot write {out / 'timeline.png'}: No space left on device" in err
    assert f"the files {out} held before are kept" in err
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after == before
    assert sorted(p.name for p in out.iterdir()) == [
        ".nicsim", "frames.csv", "summary.csv", "timeline.csv", "timeline.png"
    ]  # fmt: skip
    assert not list((out / ".nicsim").glob("staging-*"))
    assert not (out / ".nicsim" / "lock").exists()


# The receiving host of a stream, as far as a replay can be it: the replay
# host runs no process, so what the receiving process adds to its host is
# taken out of both runs: its handler work on an open endpoint (the replay's
# frames go to no endpoint and cost handler_drop_ns, so handler_ns is set to
# the same 140 ns and the endpoint and event lines to none) and the core it
# keeps awake (sleep: in the replay every core is idle and would pay C-state
# exits the run does not). The acks it sends are in the capture: the replay
# sends them, and their transmit completions reach the policy as in the run.
RECEIVER_AS_REPLAYED: dict[str, Any] = {
    "platform": {
        "host": {"handler_ns": 140.0},
        "cache": {"endpoint_lines": 0, "event_lines": 0, "path_footprints": False},
    },
    "host": {"sleep": False},
}


def stream_and_replay(
    policy: str, scenario: dict[str, Any], tmp_path: Path
) -> tuple[dict[str, Any], nicsim.ReplayResult]:
    pcap = tmp_path / f"stream-{policy}.pcap"
    s = copy.deepcopy(scenario)
    s["workload"] = {"kind": "stream", "size_bytes": 0, "messages": 1500}
    s["nic"] = {"coalescing": policy}
    run = nicsim.run(s, pcap=str(pcap))
    return run, nicsim.replay(pcap, coalescing=policy, scenario=scenario)


@pytest.mark.core
@pytest.mark.parametrize("policy", POLICIES)
def test_replaying_a_streams_capture_gives_the_receivers_interrupts(
    policy: str, tmp_path: Path
) -> None:
    run, r = stream_and_replay(policy, RECEIVER_AS_REPLAYED, tmp_path)
    # The frames to host 1: the stream's messages (warm-up included); the
    # frames it sent: its acks.
    assert r.host_mac == "02:4f:4d:58:00:01"
    assert r.metrics["replay_frames"] == 1500 + 1000
    assert r.metrics["replay_sent_frames"] == run["frames"] - 2500 > 0
    # Transmit completions raise interrupts of their own in both.
    assert run["host1_interrupts"] > run["host1_rx_interrupts"] or policy != "disabled"
    # Within 3 %: the replay host is the receiver less its process; what
    # still differs (its acks leave at their captured instants, not when
    # the receiving process sends them) moves 1-2 % of the interrupts with
    # the presets' hosts (disabled: 2,984 against 3,050).
    assert r.metrics["replay_interrupts"] == pytest.approx(run["host1_interrupts"], rel=0.03)
    assert r.metrics["replay_rx_interrupts"] == pytest.approx(run["host1_rx_interrupts"], rel=0.03)


@pytest.mark.core
@pytest.mark.parametrize("policy", POLICIES)
def test_on_the_plain_preset_a_replay_comes_within_15_percent_of_the_runs_interrupts(
    policy: str, tmp_path: Path
) -> None:
    # What the replay host lacks (the receiving process's handler work,
    # event writes and awake core) moves the interrupts by 0 (timeout) to
    # 12 % (openmx, stream) on this stream.
    run, r = stream_and_replay(policy, {}, tmp_path)
    assert r.metrics["replay_interrupts"] == pytest.approx(run["host1_interrupts"], rel=0.15)


@pytest.mark.core
def test_the_hosts_own_frames_in_a_capture_report_their_transmit_completions(
    tmp_path: Path,
) -> None:
    pcap = tmp_path / "stream.pcap"
    nicsim.run(
        {"workload": {"kind": "stream", "size_bytes": 0, "messages": 1500}},
        pcap=str(pcap),
    )
    with_tx = nicsim.replay(pcap, coalescing="disabled")
    quiet = {"platform": {"nic": {"tx_done_interrupts": False}}}
    without = nicsim.replay(pcap, coalescing="disabled", scenario=quiet)
    sent = with_tx.metrics["replay_sent_frames"]
    assert sent == without.metrics["replay_sent_frames"] > 0
    # Coalescing disabled: a completion raises an interrupt unless one is
    # already pending; the received frames' interrupts stay about the same.
    extra = with_tx.metrics["replay_interrupts"] - without.metrics["replay_interrupts"]
    assert 0.5 * sent < extra <= sent


def write_header_only(path: Path) -> None:
    # scapy writes the file header with the first packet: this one is by hand.
    path.write_bytes(bytes.fromhex("d4c3b2a1020004000000000000000000ffff000001000000"))


def write_raw_ip_capture(path: Path) -> None:
    writer = PcapWriter(str(path), linktype=101)  # LINKTYPE_RAW: IP, no Ethernet
    writer.write(IP() / UDP())
    writer.close()


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (None, "no such file"),
        (lambda p: p.write_text("hello, not a capture\n"), "not a pcap or pcapng capture"),
        (lambda p: p.write_bytes(b""), "empty file"),
        (write_raw_ip_capture, "link type 101, not Ethernet (1)"),
        (write_header_only, "no Ethernet frames"),
    ],
    ids=["missing", "not-a-capture", "empty-file", "raw-ip", "no-frames"],
)
def test_bad_captures_are_one_line_before_any_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make: Any, needle: str
) -> None:
    path = tmp_path / "bad.pcap"
    if make is not None:
        make(path)
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(path))
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert needle in err
    with pytest.raises(NicsimError, match=needle.split(",")[0]):
        nicsim.replay(path)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--compare", "disabled,fast"], "unknown policy 'fast'"),
        (["--compare", "timeout,timeout"], "listed twice"),
        (["--compare", "timeout", "--coalescing", "openmx"], "give one of them"),
        (["--host-mac", "nope"], "six hex bytes"),
        (["--set", "nic.colour=1"], "colour"),
        (["--out", "/no/such/dir/out"], "does not exist"),
    ],
)
def test_bad_options_are_one_line_before_the_capture_is_read(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    needle: str,
) -> None:
    def never(path: Any) -> Any:
        raise AssertionError("read the capture")

    monkeypatch.setattr(capture, "read_capture", never)
    code, _, err = nicsim_cli(capsys, "replay", "--pcap", "any.pcap", *args)
    assert code == 2
    assert_one_error_line(err)
    assert needle in err


def test_a_capture_above_the_cap_is_refused_with_its_size_and_the_cap(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "big.pcap"
    path.write_bytes(b"\0" * 2000)
    # The reader's bound (nicsim.capture re-exports it).
    monkeypatch.setattr(capture_read, "MAX_FILE_BYTES", 1000)
    with pytest.raises(NicsimError, match="2,000 bytes, above the cap of 1,000 bytes"):
        capture.read_capture(path)


def test_frames_beyond_the_frame_cap_are_refused(
    monkeypatch: pytest.MonkeyPatch, bursts: tuple[Path, int]
) -> None:
    monkeypatch.setattr(capture_read, "MAX_FRAMES", 10)
    with pytest.raises(NicsimError, match="more than 10 frames"):
        capture.read_capture(bursts[0])


@pytest.mark.core
def test_host_mac_picks_the_receiving_host(bursts: tuple[Path, int]) -> None:
    path, _ = bursts
    assert capture.read_capture(path).host_macs()[0][0] == HOST
    other = nicsim.replay(path, host_mac=OTHER.upper())
    assert other.host_mac == OTHER and other.metrics["replay_frames"] == 20
    with pytest.raises(NicsimError, match=r"no frame of .* goes to it"):
        nicsim.replay(path, host_mac="02:00:00:00:00:09")


@pytest.mark.core
def test_an_unknown_policy_is_refused_before_the_capture_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(path: Any) -> Any:
        raise AssertionError("read the capture")

    monkeypatch.setattr(capture, "read_capture", never)
    with pytest.raises(NicsimError, match="fast"):
        nicsim.replay("any.pcap", coalescing="fast")


@pytest.mark.core
def test_a_capture_that_pauses_longer_than_the_stall_window_replays(tmp_path: Path) -> None:
    # 3,000 frames, ten simulated minutes and more of silence, 3,000 more.
    path = tmp_path / "pause.pcap"
    writer = PcapWriter(str(path), nano=True)
    for i in range(6000):
        pkt = Ether(dst=HOST, src=OTHER) / IP() / UDP()
        pkt.time = Decimal(i * 2_000 + (700 * 10**9 if i >= 3000 else 0)) / 10**9
        writer.write(pkt)
    writer.close()
    m = nicsim.replay(path, coalescing="timeout").metrics
    assert m["replay_handled_frames"] == 6000
    assert m["replay_span_us"] > 700e6


@pytest.mark.core
def test_the_table_is_whole_when_piped_and_shows_interrupts_apart_and_the_delay(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, bursts: tuple[Path, int]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    path, frames = bursts
    args = [
        "replay",
        "--pcap",
        str(path),
        "--compare",
        "disabled,timeout@8,timeout@50,openmx-adaptive",
    ]
    code, out, err = nicsim_cli(capsys, *args)
    assert code == 0, err
    assert "…" not in out
    header = next(line for line in out.splitlines() if "tx-only irqs" in line)
    assert header.split()[:2] == ["policy", "delay"] and "p99 µs" in header
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()}
    assert rows["timeout@8"][1] == "8" and rows["timeout@50"][1] == "50"
    assert rows["disabled"][1] == "none" and rows["openmx-adaptive"][1] == "adaptive"
    for name in ("disabled", "timeout@8", "timeout@50", "openmx-adaptive"):
        irqs, rx, tx = (int(rows[name][COLUMN[c]]) for c in ("irqs", "rx irqs", "tx-only irqs"))
        assert irqs == rx + tx and rx > 0
    # The host sent one frame per burst: a completion each, without frames under disabled.
    assert int(rows["disabled"][COLUMN["tx-only irqs"]]) == 20
    assert int(rows["timeout@8"][COLUMN["irqs"]]) > int(rows["timeout@50"][COLUMN["irqs"]])
    assert f"{frames:,} frames to the host" in out and "read udp.pcap" in out


@pytest.mark.core
def test_frames_csv_has_a_row_per_frame_with_its_delay_interrupt_and_queue(
    capsys: pytest.CaptureFixture[str], bursts: tuple[Path, int], tmp_path: Path
) -> None:
    import csv

    path, frames = bursts
    target = tmp_path / "frames.csv"
    args = ["replay", "--pcap", str(path), "--coalescing", "timeout", "--frames", str(target)]
    code, _out, err = nicsim_cli(capsys, *args)
    assert code == 0, err
    with target.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == frames
    assert list(rows[0]) == [
        "policy", "record", "segment", "bytes", "arrival_us", "delivery_us", "delay_us", "irq",
        "queue", "dropped",
    ]  # fmt: skip
    r = nicsim.replay(path, coalescing="timeout")
    for k, row in enumerate(rows):
        assert float(row["delay_us"]) == pytest.approx(r.delay_ps[k] / 1e6)
        assert float(row["delivery_us"]) == pytest.approx(
            float(row["arrival_us"]) + float(row["delay_us"])
        )
        # It rode on an interrupt raised after it arrived (or on the poll it found running).
        assert int(row["irq"]) >= r.irq_before[k]
        assert row["queue"] == "0" and row["dropped"] == ""
    # Frames of one burst ride on few interrupts: a 75 us timeout holds them.
    assert len({row["irq"] for row in rows}) == r.metrics["replay_rx_interrupts"]


@pytest.mark.core
def test_a_dropped_frame_says_why_in_the_frames_table(tmp_path: Path) -> None:
    from nicsim import plots_replay

    path = tmp_path / "flood.pcap"
    writer = PcapWriter(str(path), nano=True)
    for i in range(3000):  # 1,000 B frames 100 ns apart: faster than any host takes them
        pkt = Ether(dst=HOST, src=OTHER) / IP() / UDP() / Raw(b"\0" * 958)
        pkt.time = Decimal(i * 100) / 10**9
        writer.write(pkt)
    writer.close()
    r = nicsim.replay(
        path, coalescing="timeout", scenario={"platform": {"nic": {"ring_slots": 64}}}
    )
    m = r.metrics
    assert m["replay_dropped"] > 0
    # Per frame the wire carried, as irq/frame is (no process: the host's CPU is its kernel's).
    per_frame = m["host1_kernel_us"] * 1000 / m["replay_frames"]
    assert m["replay_cpu_ns_per_frame"] == pytest.approx(per_frame)
    plots_replay.write_frames({"timeout": r}, tmp_path / "f.csv")
    text = (tmp_path / "f.csv").read_text()
    assert text.count(",ring full\n") == r.metrics["replay_dropped"]


@pytest.mark.core
def test_replay_trace_writes_the_timeline_run_trace_writes(
    capsys: pytest.CaptureFixture[str], bursts: tuple[Path, int], tmp_path: Path
) -> None:
    path, _ = bursts
    target = tmp_path / "replay.json"
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(path), "--trace", str(target))
    assert code == 0, err
    assert "timeline:" in out
    data = json.loads(target.read_text())
    names = {e["name"] for e in data["traceEvents"]}
    assert "irq raised" in names or any("irq" in n.lower() for n in names)
    assert data["otherData"]["events"] > 0
    run = tmp_path / "run.json"
    code, _, err = nicsim_cli(capsys, "run", "--workload", "stream", "--trace", str(run))
    assert code == 0, err
    assert set(json.loads(run.read_text())["otherData"]) == set(data["otherData"])
    code, _, err = nicsim_cli(
        capsys, "replay", "--pcap", str(path), "--trace", str(target), "--compare", "timeout,openmx"
    )
    assert code == 2 and "--trace records one replay" in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--set", "workload.kind=pingpong"], "does not read workload.kind"),
        (["--compare", "timeout@x"], "the delay after @ is µs"),
        (["--compare", "adaptive@8"], "adaptive takes no delay"),
        (["--compare", "timeout@8", "--delay-us", "5"], "give the delay once"),
        (["--host-ip", "10.0.0"], "not an IP address"),
        (["--host-mac", "02:00:00:00:00:01", "--host-ip", "10.0.0.1"], "give one of them"),
    ],
)
def test_replay_options_that_cannot_apply_are_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    bursts: tuple[Path, int],
    args: list[str],
    needle: str,
) -> None:
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(bursts[0]), *args)
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert needle in err


def test_the_frames_and_trace_files_never_replace_the_capture_or_the_outs_set(
    capsys: pytest.CaptureFixture[str], bursts: tuple[Path, int], tmp_path: Path
) -> None:
    path, _ = bursts
    before = path.read_bytes()
    for flag in ("--frames", "--trace"):
        code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(path), flag, str(path))
        assert code == 2 and out == ""
        assert_one_error_line(err)
        assert "the same file" in err
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    args = ["--out", str(out_dir), "--frames", str(out_dir / "frames.csv")]
    code, _, err = nicsim_cli(capsys, "replay", "--pcap", str(path), *args)
    assert code == 2 and "--frames" in err
    assert path.read_bytes() == before
