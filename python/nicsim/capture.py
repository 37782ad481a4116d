"""Replaying a packet capture into a receiving host: :func:`replay`.

This module owns reading a capture (pcap or pcapng, Ethernet link type,
with scapy's raw readers; a pcap record header is checked here, and what
cannot be read is said in a :class:`ReadReport`), choosing the receiving
host (by MAC, by IP, or the unicast MAC most frames go to) and the frames
its NIC takes (:meth:`Capture.select`: unicast to it, broadcast, the
multicast groups it is in), laying out the wire frames (a GRO/TSO
super-frame above the MTU split into the frames the wire carried,
:func:`_plan`), and handing their arrival times, wire lengths and header
bytes to the core (``_core.replay``), which decodes the Open-MX ones
(EtherType 0x86DF) and runs them through the chosen NIC policy and
steering into host 1 of the chosen preset. It does not simulate anything,
nor print or plot (:mod:`nicsim.cli.replay`, :mod:`nicsim.plots_replay`).
Headers are read at the fixed offsets of their RFCs (IP addresses, header
lengths); no packet is dissected field by field.

A frame that is not Open-MX is generic traffic: unmarked unless ``mark``
says otherwise, through the driver at its per-frame cost and the handler's
drop cost (the simulator has no IP stack), where it counts as delivered.

Where scapy's pcapng reader is wrong for a replay, it is corrected here
(:func:`_pcapng_reader`): interface IDs count within a section (a second
section's frames are not matched to the first's interfaces), and a Simple
Packet Block, which has no timestamp, is refused.

Bounds: a capture file above :data:`MAX_FILE_BYTES` is refused before it is
read, with its size and the cap; one with more than :data:`MAX_FRAMES`
frames is refused as soon as the reader passes the cap; one whose frames
span more than simulated time holds (:data:`MAX_TIME_NS`) is refused, as
is a record whose time is not a time. A frame is held as its time, wire
length and first :data:`HEAD_BYTES` bytes, in flat arrays (about 150 bytes
a frame), and the memory limit of the core (``NICSIM_MEMORY_LIMIT_MIB``)
is watched while the capture is read and while its frames are handed over:
past it, reading stops with one line naming the capture and how far it got.
"""

from __future__ import annotations

import logging
import math
import os
import struct
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from nicsim import _core
from nicsim._core import NicsimError

if TYPE_CHECKING:
    from nicsim.policy import CoalescingPolicy
    from nicsim.scenario import Scenario

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_FRAMES",
    "MAX_TIME_NS",
    "Capture",
    "CaptureDamaged",
    "ReplayResult",
    "read_capture",
    "replay",
]

#: The largest capture file read (1 GiB): reading is about 1 µs per kB.
MAX_FILE_BYTES = 1 << 30
#: The most frames a capture may hold (the core's cap on a replay).
MAX_FRAMES = 1_000_000
#: The longest span of a capture, in ns: the latest time a replayed frame
#: may have (``_core.MAX_TIME_NS``, 100 days). Simulated time is picoseconds
#: in an unsigned 64-bit integer (crates/nicsim/src/time.rs), which wraps
#: after about 213.5 days; inputs stop at 100 so that a run has room left
#: to finish (it stops with an error past 110 days).
MAX_TIME_NS: int = _core.MAX_TIME_NS
#: ``LINKTYPE_ETHERNET`` (tcpdump.org link-type list).
LINKTYPE_ETHERNET = 1
#: The longest record a capture may hold, whatever its header's snaplen
#: says: libpcap's ``MAXIMUM_SNAPLEN`` (262,144, ``pcap-int.h``), which
#: Wireshark's reader shares. A record header with a caplen above it is
#: damaged, not a frame: reading stops there.
MAX_CAPLEN = 262_144
#: The longest frame a record may say the wire carried (orig_len): a GRO or
#: TSO super-frame is at most ``GSO_MAX_SIZE``, 512 KiB with BIG TCP
#: (``include/linux/netdevice.h``). A record saying more is skipped as
#: damaged.
MAX_WIRE_LEN = 524_288
#: The Ethernet header: the least a NIC takes.
ETH_HEADER_LEN = 14
#: Header bytes kept per frame: more than the largest Open-MX header (96 B)
#: and an IPv6 + TCP header behind Ethernet.
HEAD_BYTES = 128
#: The Open-MX EtherType (``common/omx_wire.h``).
ETHERTYPE_OMX = 0x86DF
#: Frames read between two looks at the memory limit (a look reads /proc,
#: about 20 µs; reading this many frames takes some 10 ms).
LOOK_EVERY_FRAMES = 4096
#: The pcapng Section Header Block's type, which is also the file's magic
#: (draft-ietf-opsawg-pcapng, section 4.1).
PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"


@dataclass(frozen=True)
class Frame:
    """One captured frame: arrival (ns from the first frame of the capture), wire length, header."""

    at_ns: int
    wire_len: int
    head: bytes

    @property
    def dst_mac(self) -> str:
        return _mac(self.head[0:6])

    @property
    def src_mac(self) -> str:
        return _mac(self.head[6:12])

    @property
    def is_omx(self) -> bool:
        return self.head[12:14] == ETHERTYPE_OMX.to_bytes(2, "big")


class CaptureDamaged(UserWarning):
    """A capture :func:`replay` read is damaged; its whole records were replayed.

    The message says each damage (:meth:`ReadReport.damage`); ``report``
    holds the counts. ``strict=True`` makes the damage an error instead.
    """

    def __init__(self, report: ReadReport) -> None:
        super().__init__(f"pcap {report.path}: " + "; ".join(report.damage()))
        self.report = report


class _CutError(Exception):
    """Reading stopped at byte ``offset`` of the capture: ``why``."""

    def __init__(self, offset: int, why: str) -> None:
        super().__init__(why)
        self.offset = offset
        self.why = why


@dataclass
class ReadReport:
    """What reading a capture found: what it holds, and what it could not read.

    ``records`` counts the whole packet records read; ``frames`` the
    Ethernet frames among them (kept), ``wire_bytes`` their lengths on the
    wire, ``span_ns`` from the earliest to the latest. The rest is what
    cannot be replayed: records of another link type (by link type), too
    short for an Ethernet header, or whose orig_len is not a frame's
    (skipped); ``stopped_at``, the byte where reading stopped before the end
    (``stop_why``; ``unread_bytes`` from there to the end); ``backwards``,
    frames stamped earlier than the frame before them (replayed in time
    order); ``notes``, what the file header says that cannot be taken as it
    is.
    """

    path: Path
    file_bytes: int
    records: int = 0
    frames: int = 0
    wire_bytes: int = 0
    span_ns: int = 0
    short: int = 0
    link_types: dict[int, int] = field(default_factory=dict)
    bad_wire_len: int = 0
    first_bad_wire_len: tuple[int, int] = (0, 0)
    backwards: int = 0
    #: (record, ns earlier than the latest before it) of the first.
    first_backwards: tuple[int, int] = (0, 0)
    stopped_at: int | None = None
    stop_why: str = ""
    unread_bytes: int | None = None
    notes: list[str] = field(default_factory=list)

    def damage(self) -> list[str]:
        """Return what the capture holds that is not as a capture should be, one phrase each."""
        out = []
        if self.stopped_at is not None:
            unread = (
                f"; {self.unread_bytes:,} bytes from there not read"
                if self.unread_bytes is not None
                else ""
            )
            out.append(
                f"reading stopped at byte {self.stopped_at:,} after record {self.records:,} "
                f"({self.stop_why}){unread}"
            )
        if self.bad_wire_len:
            record, length = self.first_bad_wire_len
            out.append(
                f"{self.bad_wire_len:,} record(s) skipped whose orig_len is not a frame's "
                f"(first: record {record:,}, {length:,} bytes; at most {MAX_WIRE_LEN:,})"
            )
        if self.backwards:
            record, back = self.first_backwards
            out.append(
                f"{self.backwards:,} frame(s) stamped earlier than a frame before them "
                f"(first: record {record:,}, {back / 1e3:,.3f} µs back), replayed in time order"
            )
        return out

    def skipped(self) -> dict[str, int]:
        """Return the records read but not replayed, by cause (none: not listed)."""
        out: dict[str, int] = {}
        if self.short:
            out[f"shorter than an Ethernet header ({ETH_HEADER_LEN} B)"] = self.short
        for link, n in sorted(self.link_types.items()):
            out[f"link type {link}, not Ethernet"] = n
        if self.bad_wire_len:
            out["damaged (orig_len)"] = self.bad_wire_len
        return out

    def summary(self) -> str:
        """One line: the file, its frames, bytes and span."""
        return (
            f"read {self.path.name}: {self.records:,} records, {self.frames:,} Ethernet frames, "
            f"{self.wire_bytes:,} bytes on the wire, span {_duration(self.span_ns)}"
        )


def _duration(ns: int) -> str:
    """Return ``ns`` in the unit that reads best: "12.345 ms", "3.2 s", "2.1 days"."""
    if ns < 1_000_000:
        return f"{ns / 1e3:,.3f} µs"
    if ns < 10**10:
        return f"{ns / 1e6:,.3f} ms"
    if ns < 86_400 * 10**9:
        return f"{ns / 1e9:,.3f} s"
    return _span(ns)


@dataclass(frozen=True)
class Capture:
    """The frames of a capture file, in file order, held as flat arrays.

    Frame ``i`` arrived ``at_ns[i]`` ns after the capture's first frame (a
    frame written out of order is before it), is ``wire_len[i]`` bytes on
    the wire, and begins with ``heads[head_end[i - 1]:head_end[i]]``.
    """

    path: Path
    at_ns: array[int]
    wire_len: array[int]
    heads: bytearray
    head_end: array[int]
    report: ReadReport | None = field(default=None, compare=False)
    #: Each frame's record number in the file (from 1, as Wireshark numbers them).
    record_no: array[int] | None = field(default=None, compare=False)

    def number(self, i: int) -> int:
        """Return frame ``i``'s record number in the file (from 1)."""
        return self.record_no[i] if self.record_no is not None else i + 1

    def __len__(self) -> int:
        return len(self.at_ns)

    def head(self, i: int) -> bytes:
        """Return frame ``i``'s first bytes (at most :data:`HEAD_BYTES`)."""
        return bytes(self.heads[self.head_end[i - 1] if i else 0 : self.head_end[i]])

    def frame(self, i: int) -> Frame:
        """Return frame ``i``."""
        return Frame(self.at_ns[i], self.wire_len[i], self.head(i))

    @property
    def frames(self) -> Iterator[Frame]:
        """The frames, in file order (made one at a time)."""
        return (self.frame(i) for i in range(len(self)))

    def _macs(self, offset: int) -> Iterator[bytes]:
        heads, ends = self.heads, self.head_end
        start = 0
        for end in ends:
            yield bytes(heads[start + offset : start + offset + 6])
            start = end

    def host_macs(self) -> list[tuple[str, int]]:
        """Unicast destination MACs with their frame counts, most frames first (ties: lowest MAC).

        A group address (broadcast, multicast: the I/G bit of its first
        byte, IEEE 802 section 8.2) is no host's.
        """
        counts = Counter(m for m in self._macs(0) if not m[0] & 1)
        return sorted(((_mac(m), n) for m, n in counts.items()), key=lambda kv: (-kv[1], kv[0]))

    def ip_macs(self, ip: str) -> list[tuple[str, int]]:
        """Return the MACs frames to or from IP ``ip`` (v4 or v6) carry for it, most first."""
        want = _parse_ip(ip)
        counts: Counter[bytes] = Counter()
        for i in range(len(self)):
            head = self.head(i)
            src, dst = _ip_addresses(head)
            if dst == want and not head[0] & 1:
                counts[head[0:6]] += 1
            if src == want:
                counts[head[6:12]] += 1
        return sorted(((_mac(m), n) for m, n in counts.items()), key=lambda kv: (-kv[1], kv[0]))

    def to_host(self, host_mac: str | None) -> tuple[str, array[int], array[int]]:
        """Return the receiving host's MAC, the frames to it and the frames it sent (indexes)."""
        chosen = self.select(host_mac)
        return chosen.mac, chosen.to, chosen.sent

    def select(self, host_mac: str | None = None, host_ip: str | None = None) -> Selection:
        """Choose the receiving host (by MAC, by IP, or the busiest unicast MAC) and its frames.

        The frames to it are those a NIC with its address takes: unicast to
        its MAC, broadcast, and multicast to a group it is a member of
        (:func:`_groups`); the frames it sent are those from its MAC.
        """
        if host_mac is not None and host_ip is not None:
            raise NicsimError("host_mac and host_ip: give one of them (both name the host)")
        macs = self.host_macs()
        if host_ip is not None:
            found = self.ip_macs(host_ip)
            if not found:
                raise NicsimError(f"host_ip {host_ip}: no frame of {self.path} is to or from it")
            mac = found[0][0]
        elif host_mac is None:
            if not macs:
                raise NicsimError(
                    f"pcap {self.path}: no frame goes to a unicast MAC (all are broadcast or "
                    "multicast); name the host with host_mac or host_ip"
                )
            mac = macs[0][0]
        else:
            mac = _parse_mac(host_mac)
            if int(mac[:2], 16) & 1:
                raise NicsimError(
                    f"host_mac {host_mac}: a group address (broadcast or multicast), not a "
                    "host's; allowed: a unicast MAC (the low bit of its first byte clear)"
                )
            sends = any(src == bytes.fromhex(mac.replace(":", "")) for src in self._macs(6))
            if mac not in dict(macs) and not sends:
                busiest = ", ".join(f"{m} ({n})" for m, n in macs[:3])
                raise NicsimError(
                    f"host_mac {host_mac}: no frame of {self.path} goes to it "
                    f"(most go to {busiest})"
                )
        raw = bytes.fromhex(mac.replace(":", ""))
        groups = _groups(raw, self)
        out = Selection(mac, array("I"), array("I"))
        for i, (dst, src) in enumerate(zip(self._macs(0), self._macs(6), strict=True)):
            if dst == raw:
                out.to.append(i)
            elif src == raw:
                out.sent.append(i)
            elif dst[0] & 1:
                if dst in groups:
                    out.to.append(i)
                    out.group_delivered += 1
                else:
                    out.group_not_delivered += 1
            else:
                out.other_hosts += 1
        return out


@dataclass
class Selection:
    """The receiving host's MAC, the frames to it and those it sent (capture indexes).

    ``other_hosts``: unicast frames to another MAC; ``group_delivered`` /
    ``group_not_delivered``: broadcast and multicast frames the host's NIC
    takes, or filters out (a group it is not a member of).
    """

    mac: str
    to: array[int]
    sent: array[int]
    other_hosts: int = 0
    group_delivered: int = 0
    group_not_delivered: int = 0


#: The multicast groups every IP host is a member of on its link: IPv4
#: all-hosts 224.0.0.1 (RFC 1112 section 4, ``01:00:5e:00:00:01``) and IPv6
#: all-nodes ff02::1 (RFC 4291 section 2.7.1, ``33:33:00:00:00:01``).
ALL_HOSTS_GROUPS = (bytes.fromhex("01005e000001"), bytes.fromhex("333300000001"))


def _groups(mac: bytes, capture: Capture) -> set[bytes]:
    """Return the group MACs a NIC with unicast address ``mac`` takes frames to.

    Broadcast; the all-hosts and all-nodes groups (:data:`ALL_HOSTS_GROUPS`);
    the IPv6 solicited-node groups of its addresses (RFC 4291 section 2.7.1:
    ``33:33:ff`` and the address's last three bytes; RFC 2464 section 7),
    for its link-local address (the MAC's last three bytes, by EUI-64) and
    for each IPv6 address it sends from; and each group it sends to itself
    (a member hears its group's answers: mDNS, SSDP). Other groups, which
    a host joins by IGMP or MLD reports a capture may not hold, are taken as
    not joined.
    """
    out = {b"\xff" * 6, *ALL_HOSTS_GROUPS, b"\x33\x33\xff" + mac[3:6]}
    for i in range(len(capture)):
        head = capture.head(i)
        if head[6:12] != mac:
            continue
        if head[0] & 1:
            out.add(head[0:6])
        src, _ = _ip_addresses(head)
        if src is not None and len(src) == 16:
            out.add(b"\x33\x33\xff" + src[13:16])
    return out


#: EtherTypes of a VLAN tag (IEEE 802.1Q, 802.1ad), whose EtherType follows 4 bytes on.
VLAN_ETHERTYPES = (0x8100, 0x88A8)


def _l3(head: bytes) -> tuple[int, int]:
    """Return the EtherType of ``head`` and where its payload starts (past VLAN tags)."""
    offset = 12
    ethertype = int.from_bytes(head[12:14], "big") if len(head) >= 14 else 0
    while ethertype in VLAN_ETHERTYPES and len(head) >= offset + 8:
        offset += 4
        ethertype = int.from_bytes(head[offset : offset + 2], "big")
    return ethertype, offset + 2


def _ip_addresses(head: bytes) -> tuple[bytes | None, bytes | None]:
    """Return the source and destination IP addresses of ``head`` (4 or 16 bytes; None: not IP).

    Offsets: IPv4 source at 12, destination at 16 (RFC 791 section 3.1);
    IPv6 source at 8, destination at 24 (RFC 8200 section 3).
    """
    ethertype, at = _l3(head)
    if ethertype == 0x0800 and len(head) >= at + 20:
        return head[at + 12 : at + 16], head[at + 16 : at + 20]
    if ethertype == 0x86DD and len(head) >= at + 40:
        return head[at + 8 : at + 24], head[at + 24 : at + 40]
    return None, None


def _parse_ip(text: str) -> bytes:
    import ipaddress

    try:
        return ipaddress.ip_address(text.strip()).packed
    except ValueError:
        raise NicsimError(
            f"host_ip {text!r}: not an IP address; expected IPv4 (10.0.0.1) or IPv6 (fe80::1)"
        ) from None


def _headers_len(head: bytes) -> int:
    """Return the bytes of IP and TCP/UDP headers after the Ethernet header (0: not IP).

    What each wire frame of a GRO/TSO super-frame repeats: the IPv4 header's
    IHL (RFC 791), IPv6's fixed 40 bytes (RFC 8200; extension headers are
    not followed), TCP's data offset (RFC 9293 section 3.1), UDP's 8 bytes.
    """
    ethertype, at = _l3(head)
    if ethertype == 0x0800 and len(head) > at:
        ip_len, proto = (head[at] & 0x0F) * 4, head[at + 9] if len(head) > at + 9 else 0
    elif ethertype == 0x86DD and len(head) > at + 6:
        ip_len, proto = 40, head[at + 6]
    else:
        return 0
    l4 = at + ip_len
    if proto == 6 and len(head) > l4 + 12:
        return ip_len + (head[l4 + 12] >> 4) * 4
    if proto == 17:
        return ip_len + 8
    return ip_len


@dataclass
class ReplayResult:
    """A replay's metrics and per-frame series (wire frames to the host, in arrival order).

    ``record[k]`` is the capture's frame (from 0, in file order among its
    Ethernet frames) that wire frame ``k`` is, and ``segment[k]`` which of
    the wire frames a GRO/TSO super-frame was split into (0 for a frame
    within the MTU).
    """

    metrics: dict[str, Any]
    host_mac: str
    arrival_ps: array[int] = field(repr=False)
    #: From arrival at the NIC to the handler finishing the frame; -1: dropped.
    delay_ps: array[int] = field(repr=False)
    #: Interrupts the host had raised when the frame arrived.
    irq_before: array[int] = field(repr=False)
    #: The host's interrupts when the handler took the frame (the one it rode on); 0: dropped.
    irq: array[int] = field(default_factory=lambda: array("Q"), repr=False)
    #: The receive queue of each frame (255: dropped before steering).
    queue: bytes = field(default=b"", repr=False)
    record: array[int] = field(default_factory=lambda: array("I"), repr=False)
    segment: array[int] = field(default_factory=lambda: array("I"), repr=False)
    #: What reading the capture and choosing the host left out.
    read: ReadReport | None = field(default=None, repr=False)
    selection: Selection | None = field(default=None, repr=False)
    #: Super-frames above the MTU, and the wire frames they were split into.
    split: tuple[int, int] = (0, 0)
    #: The coalescing delay in force (µs), or the policy that sets it itself.
    delay: str = ""

    def summary(self) -> dict[str, float | int | str | None]:
        """Return the numbers ``nicsim replay`` prints (``None``: not measured)."""
        m = self.metrics
        return {
            "frames": m["replay_frames"],
            "interrupts": m["replay_interrupts"],
            "rx_interrupts": m.get("replay_rx_interrupts"),
            "tx_interrupts": m.get("replay_tx_interrupts"),
            "interrupts_per_frame": m["replay_interrupts_per_frame"],
            "cpu_ns_per_frame": m["replay_cpu_ns_per_frame"],
            "delay_p50_us": m["replay_delay_p50_us"],
            "delay_p99_us": m["replay_delay_p99_us"],
            "delay_max_us": m["replay_delay_max_us"],
            "dropped": m["replay_dropped"],
            "delay_in_force_us": self.delay,
        }

    #: Wire length of each frame (bytes), in the order of the series.
    lengths: array[int] = field(default_factory=lambda: array("I"), repr=False)
    #: Record number in the file of each captured frame (from 1).
    numbers: array[int] | None = field(default=None, repr=False)

    def record_number(self, k: int) -> int:
        """Return the file's record number (from 1) of wire frame ``k``."""
        i = self.record[k] if k < len(self.record) else k
        return self.numbers[i] if self.numbers is not None else i + 1

    def wire_len(self, k: int) -> int:
        """Return wire frame ``k``'s length on the wire (bytes; 0: not known)."""
        return self.lengths[k] if k < len(self.lengths) else 0

    def drop_reason(self, k: int) -> str:
        """Why wire frame ``k`` was dropped before the handler ("" if it was not)."""
        if self.delay_ps[k] >= 0:
            return ""
        return "malformed Open-MX header" if self.queue[k] == 255 else "ring full"


def _mac(raw: bytes) -> str:
    return ":".join(f"{b:02x}" for b in raw)


def _parse_mac(text: str) -> str:
    parts = text.replace("-", ":").lower().split(":")
    if len(parts) != 6 or not all(
        len(p) == 2 and all(c in "0123456789abcdef" for c in p) for p in parts
    ):
        raise NicsimError(f"host_mac {text!r}: expected six hex bytes, e.g. 02:00:00:00:00:01")
    return ":".join(parts)


def _check_path_type(path: object) -> None:
    """Refuse a capture that is neither a path nor a :class:`Capture`, naming it."""
    if not isinstance(path, str | os.PathLike | Capture):
        raise NicsimError(
            f"capture = {path!r}: expected the path of a pcap or pcapng file "
            "(str or pathlib.Path) or a nicsim.capture.Capture"
        )


def check_file(path: str | os.PathLike[str]) -> Path:
    """Check that ``path`` is a readable file within :data:`MAX_FILE_BYTES`; return it."""
    _check_path_type(path)
    p = Path(path)
    if not p.exists():
        raise NicsimError(f"pcap {p}: no such file")
    if not p.is_file():
        raise NicsimError(f"pcap {p}: not a file")
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise NicsimError(
            f"pcap {p}: {size:,} bytes, above the cap of {MAX_FILE_BYTES:,} bytes (1 GiB) "
            "a replay reads; cut it first (e.g. editcap -r)"
        )
    if size == 0:
        raise NicsimError(f"pcap {p}: empty file, not a capture")
    return p


class _SimplePacketBlockError(Exception):
    """A pcapng Simple Packet Block: a frame without a timestamp."""


class _Silenced(logging.Filter):
    """Holds back scapy's runtime warnings while a capture is read; keeps the last.

    What the reader warns about is said in nicsim's own line (the damage it
    names), not as a third-party logger's.
    """

    def __init__(self) -> None:
        super().__init__()
        self.last = ""

    def filter(self, record: logging.LogRecord) -> bool:
        self.last = record.getMessage()
        return False


def _pcap_reader(handle: IO[bytes]) -> Any:
    """Open a classic pcap capture with scapy's reader, made strict about record headers.

    A record (pcap-savefile(5)) is a 16-byte header (seconds, fraction,
    caplen, orig_len) and caplen bytes. scapy's reader stops at a record
    cut short with a logged warning only, and reads a caplen up to 4 GiB;
    here a record header cut short, a caplen above :data:`MAX_CAPLEN` or
    data cut short stops reading with :class:`_CutError` naming the byte.
    """
    from scapy.utils import RawPcapReader

    class StrictPcapReader(RawPcapReader):
        def _read_packet(self, size: int = 0) -> Any:
            start = self.f.tell()
            try:
                return self._read_record(start)
            except (OSError, EOFError, zlib.error) as err:  # a gzip'd capture cut or damaged
                raise _CutError(start, f"the compressed stream is damaged: {err}") from None

        def _read_record(self, start: int) -> Any:
            header = self.f.read(16)
            if not header:
                return None
            if len(header) < 16:
                raise _CutError(
                    start, f"{len(header)} bytes left, not a whole 16-byte record header"
                )
            sec, frac, caplen, wirelen = struct.unpack(self.endian + "IIII", header)
            if caplen > MAX_CAPLEN:
                raise _CutError(
                    start,
                    f"a record header with caplen {caplen:,} bytes, above the {MAX_CAPLEN:,} "
                    "a record holds: not a record",
                )
            data = self.f.read(caplen)
            if len(data) < caplen:
                raise _CutError(start, f"a record cut after {len(data):,} of its {caplen:,} bytes")
            return data, self.PacketMetadata(sec=sec, usec=frac, wirelen=wirelen, caplen=caplen)

        def __next__(self) -> Any:
            record = self._read_packet()
            if record is None:
                raise StopIteration
            return record

    # scapy's readers take a file object too (PcapReader_metaclass.open).
    return StrictPcapReader(handle)  # type: ignore[arg-type]


def _pcapng_reader(handle: IO[bytes]) -> Any:
    """Open a pcapng capture with scapy's reader, corrected for a replay.

    Per draft-ietf-opsawg-pcapng: a Section Header Block (section 4.1)
    starts a section, and an Interface ID (section 4.2) numbers the
    Interface Description Blocks of its own section, from 0; scapy keeps
    the interfaces of every section in one list. A Simple Packet Block
    (section 4.4) has no timestamp (and a length bounded by the
    interface's snaplen, where 0 means none), so it cannot be replayed. A
    block that scapy cannot read (cut short, lengths that disagree) ends
    its reading with a logged warning; here it stops reading with
    :class:`_CutError` naming the block's byte and scapy's reason.
    """
    from scapy.utils import RawPcapNgReader

    class SectionedPcapNgReader(RawPcapNgReader):
        sections = 0
        block_start = 0
        silenced: _Silenced | None = None

        def _read_block_shb(self) -> None:
            super()._read_block_shb()
            self.interfaces = []
            self.sections += 1

        def _read_block_spb(self, block: bytes, size: int) -> Any:
            raise _SimplePacketBlockError

        def _read_block_epb(self, block: bytes, size: int) -> Any:
            # Section 4.3: Captured Packet Length at offset 12 of the body,
            # the packet data from 20; scapy slices what there is.
            (caplen,) = struct.unpack(self.endian + "I", block[12:16]) if len(block) >= 16 else (0,)
            if 20 + caplen > len(block):
                raise _CutError(
                    self.block_start,
                    f"an Enhanced Packet Block whose caplen {caplen:,} is longer than the block",
                )
            return super()._read_block_epb(block, size)

        def _read_block(self, size: int = 0) -> Any:
            start = self.block_start = self.f.tell()
            if self.silenced is not None:
                self.silenced.last = ""
            try:
                return super()._read_block(size)
            except (EOFError, OSError, OverflowError, zlib.error, struct.error) as err:
                if self.f.tell() == start and not isinstance(err, OSError | zlib.error):
                    raise EOFError from None  # the end of the file, between blocks
                why = (self.silenced.last if self.silenced else "") or str(err) or "a block cut"
                raise _CutError(start, f"a block scapy cannot read: {why}") from None

    # scapy's readers take a file object too (PcapReader_metaclass.open).
    return SectionedPcapNgReader(handle)  # type: ignore[arg-type]


def _open_reader(handle: IO[bytes]) -> Any:
    """Return scapy's raw reader of ``handle``: pcap (:func:`_pcap_reader`) or pcapng."""
    import gzip

    magic = handle.read(4)
    if magic[:2] == b"\x1f\x8b":
        handle.seek(0)
        with gzip.GzipFile(fileobj=handle) as inner:
            try:
                magic = inner.read(4)
            except (OSError, EOFError, zlib.error):
                magic = b""
    handle.seek(0)
    if magic == PCAPNG_MAGIC:
        return _pcapng_reader(handle)
    return _pcap_reader(handle)


def _time_ns(p: Path, n: int, meta: Any, nano: bool) -> int:
    """Return record ``n``'s time in integer ns (exact; floored for an odd pcapng resolution).

    A pcap record's fraction of a second at or above one second is refused:
    the capture is damaged.
    """
    if hasattr(meta, "tsresol"):  # pcapng: ticks of 1/tsresol s
        ticks = (meta.tshigh << 32) | meta.tslow
        return int(ticks * 1_000_000_000 // meta.tsresol)
    per_second, unit = (1_000_000_000, "ns") if nano else (1_000_000, "µs")
    if meta.usec >= per_second:
        raise NicsimError(
            f"pcap {p}: record {n:,} has {meta.usec:,} {unit} past its second "
            f"(allowed: 0 to {per_second - 1:,}); the capture is damaged"
        )
    return int(meta.sec) * 1_000_000_000 + int(meta.usec) * (1 if nano else 1000)


def _span(ns: int) -> str:
    """Return a span of ``ns`` in seconds and days, e.g. "4,294,967,295 s (49,710.3 days)"."""
    seconds = ns / 1e9
    return f"{seconds:,.0f} s ({seconds / 86400:,.1f} days)"


def _left(stream: Any, start: int, size: int | None) -> int | None:
    """Return the bytes of ``stream`` from ``start`` to its end (``None``: not known)."""
    if size is not None:
        return max(size - start, 0)
    try:  # a gzip stream: its length is known once read
        stream.seek(start)
        n = 0
        while chunk := stream.read(1 << 20):
            n += len(chunk)
            if n > MAX_FILE_BYTES:
                return None
        return n
    except (OSError, EOFError, zlib.error):
        return None


def read_capture(path: str | os.PathLike[str], *, strict: bool = False) -> Capture:
    """Read every frame of a pcap or pcapng capture of Ethernet frames.

    What cannot be replayed is counted in the capture's :class:`ReadReport`
    (``Capture.report``): records of another link type, too short for an
    Ethernet header, or whose orig_len is above :data:`MAX_WIRE_LEN`, are
    skipped; at a record or block that cannot be read (cut short, a caplen
    above :data:`MAX_CAPLEN`, bytes after the last record that are no
    record), reading stops and the whole records before it are kept.
    Frames stamped earlier than one before them are kept (a replay runs
    them in time order) and counted.

    Parameters
    ----------
    strict
        Refuse a capture that is damaged (reading stopped before its end, a
        record skipped for its orig_len) or whose times go backwards.

    Raises
    ------
    NicsimError
        A missing or unreadable file, one above the size cap, not a capture,
        no Ethernet frames, more than :data:`MAX_FRAMES` frames, a record
        without a time (a pcapng Simple Packet Block) or with one that is not
        a time, frames that span more than :data:`MAX_TIME_NS`, more memory
        held than the limit while reading (one line naming the file), or,
        ``strict``, a damaged capture.
    """
    p = check_file(path)
    from scapy.error import Scapy_Exception

    size = p.stat().st_size
    silenced = _Silenced()
    logger = logging.getLogger("scapy.runtime")
    logger.addFilter(silenced)
    handle = p.open("rb")
    try:
        try:
            reader = _open_reader(handle)
        except (Scapy_Exception, OSError, EOFError) as err:
            raise NicsimError(f"pcap {p}: not a pcap or pcapng capture ({err})") from None
        reader.silenced = silenced
        gz = reader.f is not handle
        report = ReadReport(p, size)
        capture = _read_records(p, reader, report, handle, size)
        if report.stopped_at is not None:
            report.unread_bytes = _left(reader.f, report.stopped_at, None if gz else size)
    finally:
        logger.removeFilter(silenced)
        handle.close()
    if strict and report.damage():
        raise NicsimError(
            f"pcap {p}: damaged: {'; '.join(report.damage())} (strict: a capture must be whole; "
            "without it, the whole records are replayed and the rest is said)"
        )
    return capture


def _read_records(
    p: Path, reader: Any, report: ReadReport, handle: IO[bytes], size: int
) -> Capture:
    """Read the records of ``reader`` into a :class:`Capture`, counting in ``report``."""
    from scapy.error import Scapy_Exception

    snaplen = getattr(reader, "snaplen", None)
    if snaplen is not None and not 0 < snaplen <= MAX_CAPLEN:
        report.notes.append(
            f"the file header's snaplen {snaplen:,} is not a record length "
            f"(records are read up to {MAX_CAPLEN:,} bytes)"
        )
    at_ns: array[int] = array("q")
    wire_len: array[int] = array("I")
    heads = bytearray()
    head_end: array[int] = array("Q")
    record_no: array[int] = array("I")
    nano = bool(getattr(reader, "nano", False))
    first: int | None = None
    # (ns from the first frame, record) of the earliest frame and of the latest.
    lo = hi = (0, 0)
    last = 0
    records = 0
    first_link: tuple[int, object, str] | None = None
    try:
        for data, meta in reader:
            records += 1
            report.records = records
            if records % LOOK_EVERY_FRAMES == 0:
                _core.memory_check(
                    f"reading capture {p} (record {records:,}, "
                    f"{handle.tell():,} of {size:,} bytes)",
                    f"replay a slice of it (e.g. editcap -r {p} slice.pcap 1-{records // 2}), "
                    f"or raise {_core.MEMORY_LIMIT_VAR}",
                )
            link = getattr(meta, "linktype", getattr(reader, "linktype", None))
            if link != LINKTYPE_ETHERNET:
                section = getattr(reader, "sections", 1)
                where = f" (section {section})" if section > 1 else ""
                if first_link is None:
                    first_link = (records, link, where)
                kind = int(link) if isinstance(link, int) else -1
                report.link_types[kind] = report.link_types.get(kind, 0) + 1
                continue
            if len(at_ns) == MAX_FRAMES:
                raise NicsimError(
                    f"pcap {p}: more than {MAX_FRAMES:,} frames, the cap of a replay; cut it first"
                )
            if len(data) < ETH_HEADER_LEN:
                report.short += 1
                continue  # not even an Ethernet header: nothing a NIC would take
            wire = max(int(meta.wirelen), len(data))
            if wire > MAX_WIRE_LEN:
                if not report.bad_wire_len:
                    report.first_bad_wire_len = (records, int(meta.wirelen))
                report.bad_wire_len += 1
                continue
            t = _time_ns(p, records, meta, nano)
            if first is None:
                first, lo, hi, last = t, (0, records), (0, records), 0
            t -= first
            if t < last:
                if not report.backwards:
                    report.first_backwards = (records, last - t)
                report.backwards += 1
            last = max(last, t)
            if t < lo[0]:
                lo = (t, records)
            elif t > hi[0]:
                hi = (t, records)
            if hi[0] - lo[0] > MAX_TIME_NS:
                raise NicsimError(
                    f"pcap {p}: its frames span {_span(hi[0] - lo[0])} from record {lo[1]:,} "
                    f"to record {hi[1]:,}, more than simulated time holds (at most "
                    f"{_span(MAX_TIME_NS)}); cut it first (e.g. editcap -A/-B)"
                )
            at_ns.append(t)
            wire_len.append(wire)
            report.wire_bytes += wire
            heads += data[:HEAD_BYTES]
            head_end.append(len(heads))
            record_no.append(records)
    except _CutError as cut:
        report.stopped_at, report.stop_why = cut.offset, cut.why
    except _SimplePacketBlockError:
        raise NicsimError(
            f"pcap {p}: record {records + 1:,} is a Simple Packet Block, which has no "
            "timestamp; a replay needs each frame's time (capture with Enhanced Packet Blocks)"
        ) from None
    except Scapy_Exception as err:
        raise NicsimError(f"pcap {p}: unreadable record ({err})") from None
    if not at_ns:
        if first_link is not None:
            record, link, where = first_link
            raise NicsimError(
                f"pcap {p}: record {record:,}{where}: link type {link}, not Ethernet "
                f"({LINKTYPE_ETHERNET}); nicsim replays Ethernet frames"
            )
        stop = f" ({report.damage()[0]})" if report.damage() else ""
        raise NicsimError(f"pcap {p}: no Ethernet frames in the capture{stop}")
    report.frames = len(at_ns)
    report.span_ns = hi[0] - lo[0]
    return Capture(p, at_ns, wire_len, heads, head_end, report, record_no)


def _flow(head: bytes) -> int:
    """Hash the flow of a frame that is not Open-MX (RSS-like: addresses, ports)."""
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether

    pkt = Ether(head)
    key: tuple[Any, ...] = (bytes(head[6:12]),)
    for layer in (IP, IPv6):
        if layer in pkt:
            ip = pkt[layer]
            key = (ip.src, ip.dst)
            for l4 in (TCP, UDP):
                if l4 in pkt:
                    key += (l4.__name__, pkt[l4].sport, pkt[l4].dport)
            break
    return zlib.crc32(repr(key).encode())


def check_replay_preset(preset: str) -> None:
    """Refuse an LCI preset (``family = "lci"``) as a replay's, saying why.

    A replay feeds the capture to an Open-MX host's NIC, its driver and its
    interrupts (the host of a flood): the LCI hosts have none of them, they
    poll their NI by programmed I/O, and the LCI hardware runs Open-MX for
    MPI programs only. A preset that cannot be read is left to the core's
    check, which names it.
    """
    from nicsim.scenario import is_preset_file, loads, read_toml_file

    try:
        if is_preset_file(preset) and preset not in _core.presets():
            text = read_toml_file(preset, "preset file")
        else:
            text = _core.preset_toml(preset)
        family = loads(text, f"preset {preset!r}").get("family")
    except NicsimError:
        return
    if family == "lci":
        raise NicsimError(
            f'preset {preset!r} is an LCI preset (family = "lci"): a replay feeds the capture '
            "to an Open-MX host's NIC, driver and interrupts, which LCI hosts do not have (they "
            "poll their NI); allowed: an Open-MX preset, e.g. "
            + ", ".join(p for p in _core.presets() if p != preset)
        )


def replay(
    capture: str | Path | Capture,
    *,
    preset: str | None = None,
    coalescing: str | None = None,
    steering: str | None = None,
    delay_us: float | None = None,
    host_mac: str | None = None,
    host_ip: str | None = None,
    scenario: Scenario | Mapping[str, Any] | None = None,
    policy: Callable[[], CoalescingPolicy] | None = None,
    mark: Callable[[bytes], bool] | None = None,
    progress: Callable[[int, int], object] | None = None,
    strict: bool = False,
    trace: str | Path | None = None,
) -> ReplayResult:
    """Replay a capture's frames to one host into host 1 of a preset.

    Parameters
    ----------
    capture
        A pcap or pcapng file of Ethernet frames (or a :class:`Capture`
        already read). The timestamps of the frames to the receiving host
        are taken as their arrival times at its NIC (in time order: a
        frame stamped earlier than one before it is counted in
        ``result.read.backwards``); the frames it sent leave its NIC at
        theirs (first bit on the wire), and their transmit completions
        reach its coalescing policy and interrupts as in a run (with
        ``nic.tx_done_interrupts``; the work of sending them is not
        replayed). A frame to the host longer than the link's MTU (its
        orig_len) is a GRO/TSO super-frame: it arrives as the MTU-sized
        wire frames it was, back to back at line rate, the last at its
        captured time (``result.split``); a frame the host sent is one
        transmit completion, as a TSO send is.
    preset, coalescing, steering, delay_us
        The receiving host's platform and NIC policy (``nic.coalescing``,
        ``nic.steering``, ``nic.delay_us``); ``scenario`` gives any other
        key (its workload is replaced by the capture).
    host_mac, host_ip
        The receiving host, by its MAC or by an IP address (v4 or v6) of
        it; by default the unicast destination MAC most frames go to. It
        takes the frames to its MAC, broadcast, and multicast to the groups
        of :func:`_groups`.
    policy
        A coalescing policy written in Python (:mod:`nicsim.policy`), made
        once per receive queue; replaces ``coalescing``.
    mark
        Called with the header bytes of each frame that is not Open-MX:
        true marks it latency-sensitive (default: unmarked).
    strict
        Refuse a damaged capture (:func:`read_capture`); without it, a
        damaged capture read here is replayed whole records only and a
        :class:`CaptureDamaged` warning says what was not.
    trace
        Write the replay's timeline there (Perfetto / Chrome trace-event
        JSON, as ``nicsim.run(trace=...)`` writes a run's).

    Returns
    -------
    ReplayResult
        ``metrics`` (``replay_interrupts``, ``replay_rx_interrupts``,
        ``replay_tx_interrupts``, ``replay_cpu_ns_per_frame``,
        ``replay_delay_p50_us``/``p99``/``max``, ``replay_dropped``, ... and
        the run's other metrics; per-frame figures count the wire frames)
        and per-frame series.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import nicsim
    >>> pcap = Path(tempfile.mkdtemp()) / "run.pcap"
    >>> _ = nicsim.run({"workload": {"kind": "stream", "messages": 200}}, pcap=str(pcap))
    >>> r = replay(pcap, coalescing="disabled")
    >>> r.summary()["frames"] > 200 and r.metrics["replay_interrupts"] > 0
    True
    """
    from nicsim import trace as timeline
    from nicsim.scenario import Scenario

    if not isinstance(capture, Capture):
        _check_path_type(capture)
    if policy is not None and not callable(policy):
        raise NicsimError(
            f"policy = {policy!r}: expected a callable returning a nicsim.policy.CoalescingPolicy"
        )
    if mark is not None and not callable(mark):
        raise NicsimError(f"mark = {mark!r}: expected a callable mark(header_bytes) -> bool")
    if host_mac is not None:
        _parse_mac(host_mac)
    if host_ip is not None:
        _parse_ip(host_ip)
    built = (
        Scenario.from_dict(dict(scenario))
        if isinstance(scenario, Mapping)
        else (scenario or Scenario())
    )
    built = Scenario.from_dict(built.to_dict())
    for path, value in (
        ("preset", preset),
        ("nic.coalescing", coalescing),
        ("nic.steering", steering),
        ("nic.delay_us", delay_us),
    ):
        if value is not None:
            built.set(path, value)
    # The scenario checks need a workload: a flood stands in; the core feeds the capture.
    built.workload = {"kind": "flood"}
    built.pcap = None
    check_replay_preset(built.preset)
    _core.check(built.to_toml())
    req = timeline.request(trace, None, None, None)
    if not isinstance(capture, Capture):
        capture = read_capture(capture, strict=strict)
        if capture.report is not None and capture.report.damage():
            import warnings

            # At the caller of nicsim.replay (which calls this).
            warnings.warn(CaptureDamaged(capture.report), stacklevel=3)
    chosen = capture.select(host_mac, host_ip)
    link = link_of(built)
    multiqueue = built.to_dict().get("nic", {}).get("steering") == "multiqueue"
    plan = _plan(capture, chosen.to, link)
    total = len(plan.at_ns) + len(chosen.sent)
    if total > MAX_FRAMES:
        raise NicsimError(
            f"pcap {capture.path}: {total:,} wire frames once its {plan.split[0]:,} GRO/TSO "
            f"super-frames are split at the MTU ({link.mtu} B), more than the {MAX_FRAMES:,} "
            "a replay takes; cut it first (e.g. editcap -r)"
        )
    rows = _rows(capture, plan, chosen.sent, mark, multiqueue)
    toml = built.to_toml()
    if req is None:
        metrics, series, _ = _core.replay(toml, rows, policy, progress)
    else:
        from nicsim import outputs

        until = timeline._UNTIL_NONE if req.until_ps is None else req.until_ps
        with outputs.atomic_file(req.target) as temp:
            metrics, series, data = _core.replay(
                toml, rows, policy, progress, (req.from_ps, until, req.cap)
            )
            assert data is not None
            with open(temp, "w", encoding="utf-8") as out:
                timeline.write(out, data, req, metrics)
    arrival, delay, irq_before, irq, queue = series
    return ReplayResult(
        metrics,
        chosen.mac,
        _array("Q", arrival),
        _array("q", delay),
        _array("Q", irq_before),
        _array("Q", irq),
        queue,
        plan.record,
        plan.segment,
        capture.report,
        chosen,
        plan.split,
        delay_in_force(built),
        plan.wire_len,
        capture.record_no,
    )


@dataclass(frozen=True)
class Link:
    """The receiving host's link: MTU (bytes of Ethernet payload), rate, per-frame overhead."""

    mtu: int
    rate_gbps: float
    overhead_bytes: int

    def serialization_ns(self, frame_len: int) -> float:
        """Return the time a frame of ``frame_len`` bytes holds the wire (ns)."""
        return (frame_len + self.overhead_bytes) * 8 / self.rate_gbps


def _preset_tables(preset: str) -> dict[str, Any]:
    """Return the TOML tables of ``preset`` (embedded, or a file)."""
    from nicsim.scenario import is_preset_file, loads, read_toml_file

    if is_preset_file(preset) and preset not in _core.presets():
        text = read_toml_file(preset, "preset file")
    else:
        text = _core.preset_toml(preset)
    return loads(text, f"preset {preset!r}")


def link_of(built: Scenario) -> Link:
    """Return the link of scenario ``built`` (its preset's ``[link]``, with its overrides)."""
    table = dict(_preset_tables(built.preset).get("link", {}))
    table.update(built.platform.get("link", {}))
    return Link(int(table["mtu"]), float(table["rate_gbps"]), int(table["frame_overhead_bytes"]))


#: Policies that choose their delay themselves (Linux DIM, ixgbe ITR).
ADAPTIVE_POLICIES = ("adaptive", "openmx-adaptive")


def delay_in_force(built: Scenario) -> str:
    """Return the coalescing delay scenario ``built`` runs with, as the table prints it.

    ``nic.delay_us``, or the preset's ``nic.default_delay_us`` (µs); "none"
    for ``disabled``; "adaptive" for a policy that sets it itself.
    """
    nic = built.to_dict().get("nic", {})
    policy = str(nic.get("coalescing", "timeout"))
    if policy == "disabled":
        return "none"
    if policy in ADAPTIVE_POLICIES:
        return "adaptive"
    delay = nic.get("delay_us")
    if delay is None:
        delay = _preset_tables(built.preset).get("nic", {}).get("default_delay_us")
    return "" if delay is None else f"{float(delay):g}"


@dataclass
class _Plan:
    """The wire frames to the host, in arrival order: time, length, capture frame, segment."""

    at_ns: array[int]
    wire_len: array[int]
    record: array[int]
    segment: array[int]
    #: Super-frames split, and the wire frames they became.
    split: tuple[int, int] = (0, 0)


def _segments(wire_len: int, head: bytes, mtu: int) -> list[int]:
    """Return the wire lengths of the frames a super-frame of ``wire_len`` bytes was.

    A frame longer than the MTU allows on the wire is what GRO (at the
    receiver) or TSO/GSO (at the sender) made of several: each wire frame
    repeats the headers (:func:`_headers_len`) and carries up to
    ``mtu`` bytes of IP packet; the last carries the rest.
    """
    _, at = _l3(head)
    if wire_len - at <= mtu:
        return [wire_len]
    headers = _headers_len(head)
    per = mtu - headers
    payload = wire_len - at - headers
    n = -(-payload // per)
    return [at + headers + per] * (n - 1) + [at + headers + payload - per * (n - 1)]


def _plan(capture: Capture, to: array[int], link: Link) -> _Plan:
    """Lay out the wire frames of the frames ``to`` the host, in time order.

    A super-frame's wire frames arrive back to back at line rate, the last
    at its captured time (a receiver stamps a GRO frame once its last
    segment is in).
    """
    at = capture.at_ns
    in_order = all(at[to[k]] <= at[to[k + 1]] for k in range(len(to) - 1))
    # Sorted only when the capture's times go backwards (a list: 40 bytes a frame).
    order = to if in_order else array("I", sorted(to, key=lambda i: at[i]))
    plan = _Plan(array("q"), array("I"), array("I"), array("I"))
    supers = wire = 0
    for i in order:
        length = capture.wire_len[i]
        lengths = (
            _segments(length, capture.head(i), link.mtu)
            if length > link.mtu + ETH_HEADER_LEN
            else [length]
        )
        if len(lengths) > 1:
            supers += 1
            wire += len(lengths)
        end = capture.at_ns[i]
        gaps = [round(link.serialization_ns(n)) for n in lengths[1:]]
        t = end - sum(gaps)
        for k, n in enumerate(lengths):
            plan.at_ns.append(t)
            plan.wire_len.append(n)
            plan.record.append(i)
            plan.segment.append(k)
            if k < len(gaps):
                t += gaps[k]
    plan.split = (supers, wire)
    if supers:
        # Split frames may start before a frame stamped earlier: keep time order.
        keys = sorted(range(len(plan.at_ns)), key=lambda k: plan.at_ns[k])
        for name in ("at_ns", "wire_len", "record", "segment"):
            old = getattr(plan, name)
            setattr(plan, name, array(old.typecode, (old[k] for k in keys)))
    return plan


def _array(code: str, raw: bytes) -> array[int]:
    """Return the 64-bit integers of ``raw`` (the machine's byte order) as an array."""
    out: array[int] = array(code)
    out.frombytes(raw)
    return out


def _rows(
    capture: Capture,
    plan: _Plan,
    sent: array[int],
    mark: Callable[[bytes], bool] | None,
    multiqueue: bool,
) -> Iterator[tuple[int, int, bytes, bool, int, bool]]:
    """Yield the wire frames to the host, then those it sent, as ``_core.replay`` takes them.

    One at a time: the core takes them in as they come. Times count from the
    earliest of them. An exception ``mark`` raises is a :class:`NicsimError`
    naming the frame (as a policy's is); ``KeyboardInterrupt`` passes.
    """
    t0 = min(chain(plan.at_ns[:1], (capture.at_ns[i] for i in sent)), default=0)
    flows: dict[int, int] = {}
    marks: dict[int, bool] = {}
    for k, i in enumerate(plan.record):
        head = capture.head(i)
        other = head[12:14] != ETHERTYPE_OMX.to_bytes(2, "big")
        if i not in marks:  # once per captured frame, whatever its segments
            marks.clear()
            flows.clear()
            marks[i] = _marked(capture, i, head, mark) if other else False
            flows[i] = _flow(head) if multiqueue and other else 0
        yield (plan.at_ns[k] - t0, plan.wire_len[k], head, marks[i], flows[i], False)
    for i in sent:
        head = capture.head(i)
        other = head[12:14] != ETHERTYPE_OMX.to_bytes(2, "big")
        flow = _flow(head) if multiqueue and other else 0
        yield (capture.at_ns[i] - t0, capture.wire_len[i], head, False, flow, True)


def _marked(capture: Capture, i: int, head: bytes, mark: Callable[[bytes], bool] | None) -> bool:
    """Return ``mark(head)`` for frame ``i`` (a raise is a :class:`NicsimError` naming it)."""
    if mark is None:
        return False
    try:
        return bool(mark(head))
    except Exception as err:
        raise NicsimError(
            f"mark: {type(err).__name__}: {err} (frame {capture.number(i):,} of {capture.path})"
        ) from None


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (as the core computes the delays')."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = min(max(math.ceil(q * len(ordered)), 1), len(ordered))
    return float(ordered[rank - 1])
