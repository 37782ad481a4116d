"""Reading a packet capture: :func:`read_capture`, a :class:`Capture` and what was not read.

This module owns the file: pcap and pcapng records through scapy's raw
readers, each pcap record header checked here (a caplen past
:data:`MAX_CAPLEN`, an orig_len past :data:`MAX_WIRE_LEN`, a record cut
short, bytes after the last record), what was read and what was not, by
cause (:class:`ReadReport`), the frames in flat arrays (:class:`Capture`),
and which of them a host with a given MAC or IP address receives
(:meth:`Capture.select`: unicast to it, broadcast, its multicast groups).
Headers are read at the fixed offsets of their RFCs (IP addresses, header
lengths); no packet is dissected field by field. Replaying the frames is
:mod:`nicsim.capture`'s.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nicsim import _core
from nicsim._core import NicsimError

if TYPE_CHECKING:
    pass

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_FRAMES",
    "MAX_TIME_NS",
    "Capture",
    "CaptureDamaged",
    "ReadReport",
    "Selection",
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


def _mac(raw: bytes) -> str:
    return ":".join(f"{b:02x}" for b in raw)


def _parse_mac(text: str) -> str:
    parts = text.replace("-", ":").lower().split(":")
    if len(parts) != 6 or not all(
        len(p) == 2 and all(c in "0123456789abcdef" for c in p) for p in parts
    ):
        raise NicsimError(f"host_mac {text!r}: expected six hex bytes, e.g. 02:00:00:00:00:01")
    return ":".join(parts)


def _span(ns: int) -> str:
    """Return a span of ``ns`` in seconds and days, e.g. "4,294,967,295 s (49,710.3 days)"."""
    seconds = ns / 1e9
    return f"{seconds:,.0f} s ({seconds / 86400:,.1f} days)"
