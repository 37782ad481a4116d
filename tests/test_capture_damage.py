"""What a replay reads of a capture, and says of what it could not: damage, groups, GRO.

The captures are built here from bytes (``struct``) to the pcap record
layout (pcap-savefile(5): a 24-byte file header, then per record 16 bytes
of seconds, fraction, caplen, orig_len and caplen bytes) and to the pcapng
draft's blocks (draft-ietf-opsawg-pcapng), so each damage is exactly the
one named; the GRO capture holds IPv4/TCP headers built by scapy.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

import nicsim
from nicsim import capture
from nicsim._core import NicsimError
from test_capture_input import FRAME, HOST, OTHER, epb, idb, pcap, shb, write
from test_cli import assert_one_error_line, nicsim_cli

pytestmark = pytest.mark.core

HOST_MAC = "02:00:00:00:00:01"
#: Five frames to HOST, 1 ms apart.
FIVE = [(1, i * 1000) for i in range(5)]


def record(sec: int, frac: int, data: bytes, orig: int | None = None) -> bytes:
    return struct.pack("<IIII", sec, frac, len(data), len(data) if orig is None else orig) + data


def replay_cli(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, str, str]:
    return nicsim_cli(capsys, "replay", "--pcap", str(path), "--coalescing", "disabled", *args)


def warnings_of(err: str) -> list[str]:
    """The stderr lines, each of which must be nicsim's own ``warning:`` line."""
    lines = err.strip().splitlines()
    assert all(line.startswith("warning: pcap ") for line in lines), err
    assert "WARNING" not in err and "Traceback" not in err, err
    return lines


def test_a_capture_cut_at_every_byte_of_its_last_record_replays_the_rest_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    whole = pcap(FIVE)
    last = len(whole) - (16 + len(FRAME))
    for cut in range(last, len(whole)):
        path = write(tmp_path, "cut.pcap", whole[:cut])
        read = capture.read_capture(path)
        assert read.report is not None and len(read) == 4 and read.report.records == 4
        if cut == last:  # the end of a record: nothing is damaged
            assert read.report.damage() == []
            continue
        assert read.report.stopped_at == last, cut
        assert read.report.unread_bytes == cut - last
        with pytest.raises(NicsimError, match=f"stopped at byte {last:,}"):
            capture.read_capture(path, strict=True)
    # Through the command: the whole frames replayed, one warning naming
    # where reading stopped; --strict refuses in one line.
    for cut in (last + 1, last + 15, last + 16, len(whole) - 1):
        path = write(tmp_path, "cut.pcap", whole[:cut])
        code, out, err = replay_cli(capsys, path)
        assert code == 0, err
        (line,) = warnings_of(err)
        assert f"reading stopped at byte {last:,} after record 4" in line, line
        assert f"{cut - last:,} bytes from there not read" in line
        assert "4 Ethernet frames" in out and "where reading stopped" in out
        code, out, err = replay_cli(capsys, path, "--strict")
        assert code == 2 and out == ""
        assert_one_error_line(err)
        assert "damaged" in err and "strict" in err


def test_a_pcapng_cut_at_every_byte_of_its_last_block_says_so_in_nicsims_own_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    whole = shb() + idb(1) + b"".join(epb(0, i * 1000) for i in range(5))
    last = len(whole) - len(epb(0, 0))
    for cut in range(last + 1, len(whole)):
        read = capture.read_capture(write(tmp_path, "cut.pcapng", whole[:cut]))
        assert read.report is not None and len(read) == 4, cut
        assert read.report.stopped_at == last, cut
    code, _out, err = replay_cli(capsys, write(tmp_path, "cut.pcapng", whole[: last + 30]))
    assert code == 0, err
    (line,) = warnings_of(err)
    assert f"stopped at byte {last:,}" in line


@pytest.mark.parametrize(
    ("tail", "said"),
    [
        # An absurd caplen (0x7FFFFFFF): scapy read 4 frames of a capture and stopped.
        (struct.pack("<IIII", 2, 0, 0x7FFF_FFFF, 60) + FRAME, "caplen 2,147,483,647 bytes"),
        (b"\xde\xad\xbe\xef\x00", "5 bytes left, not a whole 16-byte record header"),
        (bytes(range(200, 240)), "stopped at byte"),
    ],
    ids=["caplen-0x7fffffff", "junk-5-bytes", "junk-40-bytes"],
)
def test_what_follows_the_last_whole_record_stops_reading_and_is_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tail: bytes, said: str
) -> None:
    path = write(tmp_path, "tail.pcap", pcap(FIVE) + tail)
    read = capture.read_capture(path)
    assert len(read) == 5 and read.report is not None
    assert read.report.stopped_at == len(pcap(FIVE))
    code, _, err = replay_cli(capsys, path)
    assert code == 0, err
    (line,) = warnings_of(err)
    assert said in line, line
    assert replay_cli(capsys, path, "--strict")[0] == 2


def test_a_snaplen_of_0xffffffff_is_said_and_records_are_read_within_the_bound(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = bytearray(pcap(FIVE))
    data[16:20] = struct.pack("<I", 0xFFFF_FFFF)
    path = write(tmp_path, "snap.pcap", bytes(data))
    assert len(capture.read_capture(path, strict=True)) == 5
    code, _out, err = replay_cli(capsys, path)
    assert code == 0, err
    (line,) = warnings_of(err)
    assert "snaplen 4,294,967,295 is not a record length" in line


def test_an_orig_len_of_4_gib_is_skipped_and_counted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    head = pcap([])
    body = b"".join(record(1, i, FRAME) for i in range(3)) + record(1, 9, FRAME, 0xFFFF_FFFF)
    path = write(tmp_path, "orig.pcap", head + body + record(2, 0, FRAME))
    read = capture.read_capture(path)
    assert len(read) == 4 and read.report is not None and read.report.bad_wire_len == 1
    assert max(read.wire_len) == len(FRAME)
    code, out, err = replay_cli(capsys, path)
    assert code == 0, err
    (line,) = warnings_of(err)
    assert "record 4, 4,294,967,295 bytes" in line
    assert "1 damaged (orig_len)" in out
    assert replay_cli(capsys, path, "--strict")[0] == 2


def test_times_going_backwards_are_said_and_replayed_in_time_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "back.pcap", pcap([(1, 0), (1, 500), (1, 200), (1, 900)]))
    read = capture.read_capture(path)
    assert read.report is not None and read.report.backwards == 1
    assert read.report.first_backwards == (3, 300_000)
    with pytest.warns(capture.CaptureDamaged, match="stamped earlier") as seen:
        r = nicsim.replay(path, coalescing="disabled")
    assert seen[0].filename == __file__  # said at the caller
    assert list(r.arrival_ps) == sorted(r.arrival_ps) == [0, 200e6, 500e6, 900e6]
    assert [r.record_number(k) for k in range(4)] == [1, 3, 2, 4]
    code, _, err = replay_cli(capsys, path)
    assert code == 0
    (line,) = warnings_of(err)
    assert "1 frame(s) stamped earlier than a frame before them (first: record 3" in line
    code, _, err = replay_cli(capsys, path, "--strict")
    assert code == 2 and "stamped earlier" in err


def test_a_400_day_span_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "days.pcap", pcap([(0, 0), (1, 0), (400 * 86_400, 0)]))
    code, out, err = replay_cli(capsys, path)
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert "34,560,000 s (400.0 days)" in err and "(at most 8,640,000 s (100.0 days))" in err


def test_a_record_of_another_link_type_in_a_pcapng_is_skipped_and_counted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mixed = shb() + idb(1) + idb(113) + epb(0, 1) + epb(1, 2) + epb(0, 3)
    read = capture.read_capture(write(tmp_path, "mixed.pcapng", mixed))
    assert len(read) == 2 and read.report is not None and read.report.link_types == {113: 1}
    code, out, err = replay_cli(capsys, tmp_path / "mixed.pcapng")
    assert code == 0, err
    assert "1 link type 113, not Ethernet" in out


def frames_pcap(path: Path, frames: list[bytes]) -> Path:
    head = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    body = b"".join(
        record(1, i * 100, f + bytes(max(60 - len(f), 0))) for i, f in enumerate(frames)
    )
    path.write_bytes(head + body)
    return path


def test_a_capture_mostly_of_broadcast_picks_a_unicast_host_and_delivers_broadcast_to_it(
    tmp_path: Path,
) -> None:
    arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=OTHER.hex(":")) / ARP())
    mdns = bytes(Ether(dst="01:00:5e:00:00:fb", src=OTHER.hex(":")) / IP(dst="224.0.0.251"))
    unicast = FRAME
    path = frames_pcap(tmp_path / "bcast.pcap", [arp] * 10 + [mdns] * 2 + [unicast] * 3)
    read = capture.read_capture(path)
    assert read.host_macs() == [(HOST_MAC, 3)]
    chosen = read.select()
    assert chosen.mac == HOST_MAC and len(chosen.to) == 13
    assert (chosen.group_delivered, chosen.group_not_delivered) == (10, 2)
    r = nicsim.replay(path, coalescing="disabled")
    assert r.metrics["replay_frames"] == 13
    with pytest.raises(NicsimError, match="group address"):
        capture.replay(path, host_mac="ff:ff:ff:ff:ff:ff")
    only_bcast = frames_pcap(tmp_path / "only.pcap", [arp] * 4)
    with pytest.raises(NicsimError, match="no frame goes to a unicast MAC"):
        capture.replay(only_bcast)


def test_the_host_is_chosen_by_ipv4_or_ipv6(tmp_path: Path) -> None:
    a, b = "02:00:00:00:00:0a", "02:00:00:00:00:0b"
    v4 = bytes(Ether(dst=a, src=b) / IP(src="10.0.0.2", dst="10.0.0.1") / TCP())
    v6 = bytes(Ether(dst=b, src=a) / IPv6(src="fe80::a", dst="fe80::b") / TCP())
    path = frames_pcap(tmp_path / "ip.pcap", [v4] * 5 + [v6] * 2)
    read = capture.read_capture(path)
    assert read.select(host_ip="10.0.0.1").mac == a
    assert read.select(host_ip="10.0.0.2").mac == b
    assert read.select(host_ip="fe80::b").mac == b
    assert read.select(host_ip="fe80::a").mac == a
    r = nicsim.replay(path, host_ip="fe80::b", coalescing="disabled")
    assert r.host_mac == b and r.metrics["replay_frames"] == 2
    with pytest.raises(NicsimError, match=re.escape("host_ip 10.9.9.9: no frame")):
        read.select(host_ip="10.9.9.9")
    with pytest.raises(NicsimError, match="not an IP address"):
        nicsim.replay(path, host_ip="10.0.0")


#: A TCP segment's headers: Ethernet 14, IPv4 20, TCP 32 (with timestamps).
TCP_HEADERS = 14 + 20 + 32
#: A GRO super-frame of 44 full 1,448-byte segments (MSS at MTU 1500).
GRO_SEGMENTS = 44
GRO_LEN = TCP_HEADERS + GRO_SEGMENTS * 1448


def gro_pcap(path: Path, *, caplen: int | None, frames: int = 50) -> Path:
    """``frames`` GRO super-frames to HOST 200 µs apart, cut at ``caplen`` (None: whole)."""
    pkt = Ether(dst=HOST_MAC, src=OTHER.hex(":")) / IP(src="10.0.0.2", dst="10.0.0.1")
    pkt = pkt / TCP(sport=5001, dport=40000, options=[("NOP", None)] * 12)
    head = bytes(pkt)
    assert len(head) == TCP_HEADERS
    data = (head + bytes(GRO_LEN - len(head)))[: caplen or GRO_LEN]
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, caplen or 262144, 1)]
    out += [record(1, i * 200, data, GRO_LEN) for i in range(frames)]
    path.write_bytes(b"".join(out))
    return path


def test_a_headers_only_gro_capture_replays_as_the_wire_frames_it_was(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    headers = gro_pcap(tmp_path / "gro96.pcap", caplen=96)
    whole = gro_pcap(tmp_path / "gro.pcap", caplen=None)
    r = nicsim.replay(headers, coalescing="timeout")
    m = r.metrics
    wire = 50 * GRO_SEGMENTS
    assert r.split == (50, wire)
    # Every wire frame reached the host: no 64 KB frame dropped at the ring.
    assert m["replay_frames"] == m["replay_handled_frames"] == wire
    assert m["replay_dropped"] == 0
    assert set(r.wire_len(k) for k in range(wire)) == {1514}
    # Per-frame figures divide by the wire frames.
    assert m["replay_interrupts_per_frame"] == pytest.approx(m["replay_interrupts"] / wire)
    # Back to back at line rate (10 Gb/s, 24 B of overhead: 1,230.4 ns), the last at the time.
    gaps = {r.arrival_ps[k + 1] - r.arrival_ps[k] for k in range(GRO_SEGMENTS - 1)}
    assert gaps == {1_230_000}
    assert r.arrival_ps[GRO_SEGMENTS - 1] + 200_000_000 == r.arrival_ps[2 * GRO_SEGMENTS - 1]
    # The headers-only capture replays as the whole one does.
    assert nicsim.replay(whole, coalescing="timeout").metrics == m
    code, out, err = replay_cli(capsys, headers)
    assert code == 0, err
    assert f"50 GRO/TSO super-frames above the MTU split into {wire:,} wire frames" in out


def test_a_frame_within_the_mtu_is_not_split(tmp_path: Path) -> None:
    r = nicsim.replay(frames_pcap(tmp_path / "small.pcap", [FRAME] * 3), coalescing="disabled")
    assert r.split == (0, 0) and r.metrics["replay_frames"] == 3
    assert list(r.segment) == [0, 0, 0]
    _ = HOST


def test_a_gzipped_capture_cut_short_replays_its_whole_records_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import gzip

    packed = gzip.compress(pcap(FIVE))
    path = write(tmp_path, "cut.pcap.gz", packed[:-10])
    read = capture.read_capture(path)
    assert len(read) == 4 and read.report is not None and read.report.stopped_at is not None
    code, _, err = replay_cli(capsys, path)
    assert code == 0, err
    (line,) = warnings_of(err)
    assert "the compressed stream is damaged" in line
    assert replay_cli(capsys, path, "--strict")[0] == 2
    assert len(capture.read_capture(write(tmp_path, "whole.pcap.gz", packed), strict=True)) == 5


def test_a_pcapng_packet_block_whose_caplen_overruns_it_stops_reading_there(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from test_capture_input import block

    lying = block(6, struct.pack("<IIIII", 0, 0, 9, 1000, 1000) + FRAME)
    start = shb() + idb(1) + epb(0, 1) + epb(0, 2)
    path = write(tmp_path, "lying.pcapng", start + lying + epb(0, 3))
    read = capture.read_capture(path)
    assert len(read) == 2 and read.report is not None and read.report.stopped_at == len(start)
    code, _, err = replay_cli(capsys, path)
    assert code == 0, err
    (line,) = warnings_of(err)
    assert "caplen 1,000 is longer than the block" in line
