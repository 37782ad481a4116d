"""Captures a replay refuses or reads within bounds: block layouts, times, memory.

The captures are built here from bytes (``struct``), to the layouts of the
pcap format and of the pcapng draft (draft-ietf-opsawg-pcapng: Section
Header Block 4.1, Interface Description Block 4.2, Enhanced Packet Block
4.3, Simple Packet Block 4.4), so each case is exactly the one named.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

import nicsim
from nicsim import capture
from nicsim._core import NicsimError
from test_cli import assert_one_error_line, nicsim_cli

HOST = bytes.fromhex("020000000001")
OTHER = bytes.fromhex("020000000002")
#: A minimal Ethernet frame to HOST: IPv4 EtherType, zero payload (60 bytes).
FRAME = HOST + OTHER + b"\x08\x00" + bytes(46)
LINKTYPE_ETHERNET = 1
LINKTYPE_LINUX_SLL = 113


def pcap(records: list[tuple[int, int]], *, nano: bool = False, frame: bytes = FRAME) -> bytes:
    """A little-endian pcap of ``frame`` at each (sec, fraction) of ``records``."""
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = [struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, LINKTYPE_ETHERNET)]
    for sec, frac in records:
        out.append(struct.pack("<IIII", sec, frac, len(frame), len(frame)) + frame)
    return b"".join(out)


def block(kind: int, body: bytes) -> bytes:
    """A pcapng block: type, total length, body padded to 32 bits, total length."""
    body += bytes(-len(body) % 4)
    length = 12 + len(body)
    return struct.pack("<II", kind, length) + body + struct.pack("<I", length)


def shb() -> bytes:
    return block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))


def idb(link: int, snaplen: int = 0) -> bytes:
    return block(1, struct.pack("<HHI", link, 0, snaplen))


def epb(interface: int, ticks: int, frame: bytes = FRAME) -> bytes:
    """An Enhanced Packet Block at ``ticks`` (microseconds: no if_tsresol option)."""
    head = struct.pack(
        "<IIIII", interface, ticks >> 32, ticks & 0xFFFF_FFFF, len(frame), len(frame)
    )
    return block(6, head + frame)


def spb(frame: bytes = FRAME) -> bytes:
    return block(3, struct.pack("<I", len(frame)) + frame)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def refused(capsys: pytest.CaptureFixture[str], path: Path, needle: str) -> str:
    """Assert ``nicsim replay --pcap path`` and ``read_capture`` refuse it in one line."""
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(path))
    assert code == 2 and out == "", err
    assert_one_error_line(err)
    assert needle in err and str(path) in err, err
    with pytest.raises(NicsimError, match=re.escape(needle)):
        capture.read_capture(path)
    return err


def test_a_simple_packet_block_has_no_time_and_is_refused_by_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "spb.pcapng", shb() + idb(LINKTYPE_ETHERNET) + epb(0, 5) + spb())
    err = refused(capsys, path, "Simple Packet Block")
    assert "record 2 " in err and "timestamp" in err


def test_interfaces_are_numbered_within_their_own_section(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Section 2's interface 0 is Linux cooked capture (113), not section 1's Ethernet:
    # its record is not replayed, and counted.
    two = shb() + idb(LINKTYPE_ETHERNET) + epb(0, 1) + shb() + idb(LINKTYPE_LINUX_SLL) + epb(0, 2)
    read = capture.read_capture(write(tmp_path, "two.pcapng", two))
    assert len(read) == 1 and read.report is not None and read.report.link_types == {113: 1}
    # With no Ethernet frame at all, the first other link type is named.
    none = shb() + idb(LINKTYPE_ETHERNET) + shb() + idb(LINKTYPE_LINUX_SLL) + epb(0, 2)
    err = refused(capsys, write(tmp_path, "none.pcapng", none), "link type 113")
    assert "record 1 (section 2)" in err
    # And the other way round: section 2 is Ethernet though section 1's interface 0 is not.
    back = shb() + idb(LINKTYPE_LINUX_SLL) + shb() + idb(LINKTYPE_ETHERNET) + epb(0, 1) + epb(0, 3)
    read = capture.read_capture(write(tmp_path, "back.pcapng", back))
    assert list(read.at_ns) == [0, 2000]
    assert read.host_macs() == [("02:00:00:00:00:01", 2)]


def test_a_pcap_fraction_of_a_second_past_the_second_is_refused_naming_the_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "usec.pcap", pcap([(1, 0), (1, 999_999), (2, 1_000_000)]))
    err = refused(capsys, path, "record 3 has 1,000,000 µs past its second")
    assert "0 to 999,999" in err
    nano = write(tmp_path, "nsec.pcap", pcap([(1, 999_999_999), (2, 10**9)], nano=True))
    refused(capsys, nano, "record 2 has 1,000,000,000 ns past its second")
    # The largest fraction is a time.
    fine = capture.read_capture(write(tmp_path, "ok.pcap", pcap([(1, 0), (1, 999_999)])))
    assert list(fine.at_ns) == [0, 999_999_000]


def test_a_pcapng_time_at_the_top_of_64_bits_is_one_line_not_an_overflow(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    top = 2**64 - 1  # microseconds
    path = write(tmp_path, "top.pcapng", shb() + idb(LINKTYPE_ETHERNET) + epb(0, 0) + epb(0, top))
    err = refused(capsys, path, "more than simulated time holds")
    assert "from record 1 to record 2" in err
    # Alone, the same time is the capture's start: nothing to overflow.
    alone = write(tmp_path, "alone.pcapng", shb() + idb(LINKTYPE_ETHERNET) + epb(0, top))
    assert list(capture.read_capture(alone).at_ns) == [0]


def test_a_span_beyond_simulated_time_is_refused_with_the_span_and_the_maximum(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # sec 0 to sec 2^32 - 1: 136 years, which picoseconds in 64 bits (213 days) wrapped;
    # inputs stop at 100 days (_core.MAX_TIME_NS).
    path = write(tmp_path, "long.pcap", pcap([(0, 0), (2**32 - 1, 0)]))
    err = refused(capsys, path, "its frames span 4,294,967,295 s (49,710.3 days)")
    assert "(at most 8,640,000 s (100.0 days))" in err
    # Out of order: the span is from the earliest to the latest.
    refused(capsys, write(tmp_path, "back.pcap", pcap([(2**32 - 1, 0), (5, 0), (0, 0)])), "span")
    # Up to the maximum, a capture is read.
    top = capture.MAX_TIME_NS
    ok = pcap([(0, 0), (top // 10**9, top % 10**9)], nano=True)
    assert list(capture.read_capture(write(tmp_path, "ok.pcap", ok)).at_ns) == [0, top]
    over = pcap([(0, 0), ((top + 1) // 10**9, (top + 1) % 10**9)], nano=True)
    refused(capsys, write(tmp_path, "over.pcap", over), "more than simulated time holds")


def test_the_capture_argument_is_named_when_it_is_not_a_path() -> None:
    for bad in (5, None, b"x.pcap", ["x.pcap"]):
        with pytest.raises(NicsimError, match=r"capture = .*: expected the path of a pcap"):
            nicsim.replay(bad)  # type: ignore[arg-type]


@pytest.mark.core
def test_a_mark_function_that_raises_is_a_nicsim_error_as_a_policys_is(tmp_path: Path) -> None:
    path = write(tmp_path, "m.pcap", pcap([(1, i) for i in range(10)]))

    def mark(head: bytes) -> bool:
        raise ZeroDivisionError("no marks today")

    with pytest.raises(NicsimError, match=r"^mark: ZeroDivisionError: no marks today \(frame 1 "):
        nicsim.replay(path, mark=mark)

    def interrupted(head: bytes) -> bool:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        nicsim.replay(path, mark=interrupted)
    seen: list[bytes] = []
    r = nicsim.replay(path, mark=lambda h: seen.append(h) or True)
    assert r.metrics["replay_frames"] == 10 and seen == [FRAME] * 10


def test_a_frame_is_held_in_flat_arrays_not_objects(tmp_path: Path) -> None:
    n = 10_000
    path = write(tmp_path, "many.pcap", pcap([(i // 1000, i % 1000) for i in range(n)]))
    import scapy.utils  # noqa: F401  (its import is not the capture's memory)

    tracemalloc.start()
    try:
        read = capture.read_capture(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(read) == n
    # Time, length, 60 header bytes and its end: 80 bytes and the arrays' spare
    # room (a frame object with its header held some 240).
    assert peak / n < 150, f"{peak / n:.0f} bytes a frame"


def rss_of_a_bare_replay_process() -> int:
    """KiB a process holds with what ``nicsim replay`` imports, before any capture."""
    probe = (
        "import nicsim.cli, nicsim.capture, scapy.utils\n"
        "print(next(l for l in open('/proc/self/status') if l.startswith('VmRSS')).split()[1])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="memory figures from /proc")
def test_reading_a_capture_keeps_within_the_memory_limit(tmp_path: Path) -> None:
    # 400,000 frames hold about 32 MiB read; the limit leaves 12 MiB above a bare process.
    n = 400_000
    record = struct.pack("<IIII", 0, 0, len(FRAME), len(FRAME))[8:] + FRAME
    body = b"".join(struct.pack("<II", i // 100_000, i % 100_000) + record for i in range(n))
    path = write(tmp_path, "big.pcap", pcap([]) + body)
    limit_mib = rss_of_a_bare_replay_process() // 1024 + 12
    env = {**os.environ, "NICSIM_MEMORY_LIMIT_MIB": str(limit_mib), "COLUMNS": "200"}
    env.pop("NICSIM_MEMORY_SHARES", None)
    nicsim_bin = Path(sys.executable).with_name("nicsim")
    started = time.monotonic()
    done = subprocess.run(
        [str(nicsim_bin), "replay", "--pcap", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    took = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert_one_error_line(done.stderr)
    err = done.stderr
    assert err.startswith(f"error: reading capture {path} (record "), err
    assert f"over its limit of {limit_mib} MiB (NICSIM_MEMORY_LIMIT_MIB = {limit_mib})" in err
    assert "replay a slice of it (e.g. editcap -r" in err and "NICSIM_MEMORY_LIMIT_MIB" in err
    assert "all-to-all" not in err and "ranks" not in err
    got = re.search(r"\(record ([\d,]+), ([\d,]+) of ([\d,]+) bytes\)", err)
    assert got is not None, err
    records, offset, size = (int(g.replace(",", "")) for g in got.groups())
    assert records < n and offset < size == path.stat().st_size, err
    assert took < 30, f"{took:.1f} s"


@pytest.mark.core
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="memory figures from /proc")
@pytest.mark.parametrize(
    ("args", "doing", "advice"),
    [
        (["run", "--workload", "stream"], "the run of workload `stream`", "smaller messages"),
        (["run", "--workload", "alltoall"], "the run of workload `alltoall`, 16", "fewer ranks"),
        (["bench", "--kind", "pingpong", "--count", "2000"], "the benchmark `pingpong`", "--count"),
        (["replay", "--pcap", "{pcap}"], "the replay, taking in the capture", "a slice of the"),
    ],
)
def test_the_memory_limit_names_what_each_command_was_doing(
    tmp_path: Path, args: list[str], doing: str, advice: str
) -> None:
    path = write(tmp_path, "small.pcap", pcap([(1, i) for i in range(10)]))
    env = {**os.environ, "NICSIM_MEMORY_LIMIT_MIB": "1"}
    nicsim_bin = Path(sys.executable).with_name("nicsim")
    argv = [str(nicsim_bin), *(a.replace("{pcap}", str(path)) for a in args)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert_one_error_line(done.stderr)
    err = done.stderr
    assert err.startswith(f"error: {doing}") and advice in err, err
    assert "over its limit of 1 MiB (NICSIM_MEMORY_LIMIT_MIB = 1)" in err
    if "alltoall" not in args:
        assert "all-to-all" not in err, err
