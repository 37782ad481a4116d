"""Replaying a packet capture into a receiving host: :func:`replay`.

This module owns reading a capture (pcap or pcapng, Ethernet link type,
with scapy's raw readers: no packet is parsed here by hand), choosing the
frames that arrive at the receiving host (the destination MAC most frames
go to, or the one given), and handing their arrival times, wire lengths and
header bytes to the core (``_core.replay``), which decodes the Open-MX ones
(EtherType 0x86DF) and runs them through the chosen NIC policy and
steering into host 1 of the chosen preset. It does not simulate anything,
nor print or plot (:mod:`nicsim.cli.replay`, :mod:`nicsim.plots_replay`).

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

import math
import os
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
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
        """Destination MACs with their frame counts, most frames first (ties: lowest MAC)."""
        counts = Counter(self._macs(0))
        return sorted(((_mac(m), n) for m, n in counts.items()), key=lambda kv: (-kv[1], kv[0]))

    def to_host(self, host_mac: str | None) -> tuple[str, array[int], array[int]]:
        """Return the receiving host's MAC, the frames to it and the frames it sent (indexes).

        The host is by default the MAC most frames go to.
        """
        macs = self.host_macs()
        if host_mac is None:
            mac = macs[0][0]
        else:
            mac = _parse_mac(host_mac)
            if mac not in dict(macs):
                busiest = ", ".join(f"{m} ({n})" for m, n in macs[:3])
                raise NicsimError(
                    f"host_mac {host_mac}: no frame of {self.path} goes to it "
                    f"(most go to {busiest})"
                )
        raw = bytes.fromhex(mac.replace(":", ""))
        to = array("I", (i for i, dst in enumerate(self._macs(0)) if dst == raw))
        sent = array(
            "I",
            (
                i
                for i, (dst, src) in enumerate(zip(self._macs(0), self._macs(6), strict=True))
                if src == raw and dst != raw
            ),
        )
        return mac, to, sent


@dataclass
class ReplayResult:
    """A replay's metrics and per-frame series (arrival order, 64-bit arrays)."""

    metrics: dict[str, Any]
    host_mac: str
    arrival_ps: array[int] = field(repr=False)
    #: From arrival at the NIC to the handler finishing the frame; -1: dropped.
    delay_ps: array[int] = field(repr=False)
    #: Interrupts the host had raised when the frame arrived.
    irq_before: array[int] = field(repr=False)

    def summary(self) -> dict[str, float | int | None]:
        """Return the numbers ``nicsim replay`` prints (``None``: not measured)."""
        m = self.metrics
        return {
            "frames": m["replay_frames"],
            "interrupts": m["replay_interrupts"],
            "interrupts_per_frame": m["replay_interrupts_per_frame"],
            "cpu_ns_per_frame": m["replay_cpu_ns_per_frame"],
            "delay_p50_us": m["replay_delay_p50_us"],
            "delay_p99_us": m["replay_delay_p99_us"],
            "delay_max_us": m["replay_delay_max_us"],
            "dropped": m["replay_dropped"],
        }


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


def _pcapng_reader(handle: IO[bytes]) -> Any:
    """Open a pcapng capture with scapy's reader, corrected for a replay.

    Per draft-ietf-opsawg-pcapng: a Section Header Block (section 4.1)
    starts a section, and an Interface ID (section 4.2) numbers the
    Interface Description Blocks of its own section, from 0; scapy keeps
    the interfaces of every section in one list. A Simple Packet Block
    (section 4.4) has no timestamp (and a length bounded by the
    interface's snaplen, where 0 means none), so it cannot be replayed.
    """
    from scapy.utils import RawPcapNgReader

    class SectionedPcapNgReader(RawPcapNgReader):
        sections = 0

        def _read_block_shb(self) -> None:
            super()._read_block_shb()
            self.interfaces = []
            self.sections += 1

        def _read_block_spb(self, block: bytes, size: int) -> Any:
            raise _SimplePacketBlockError

    # scapy's readers take a file object too (PcapReader_metaclass.open).
    return SectionedPcapNgReader(handle)  # type: ignore[arg-type]


def _open_reader(handle: IO[bytes]) -> Any:
    """Return scapy's raw reader of ``handle``: pcap, or pcapng by :func:`_pcapng_reader`."""
    import gzip

    from scapy.utils import RawPcapReader

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
    # scapy's readers take a file object too (PcapReader_metaclass.open).
    return RawPcapReader(handle)  # type: ignore[arg-type]


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


def read_capture(path: str | os.PathLike[str]) -> Capture:
    """Read every frame of a pcap or pcapng capture of Ethernet frames.

    Raises
    ------
    NicsimError
        A missing or unreadable file, one above the size cap, not a capture,
        a link type other than Ethernet, no frames, more than
        :data:`MAX_FRAMES` frames, a record without a time (a pcapng Simple
        Packet Block) or with one that is not a time, frames that span more
        than :data:`MAX_TIME_NS`, or more memory held than the limit while
        reading (one line naming the file).
    """
    p = check_file(path)
    from scapy.error import Scapy_Exception

    size = p.stat().st_size
    handle = p.open("rb")
    try:
        reader = _open_reader(handle)
    except (Scapy_Exception, OSError, EOFError) as err:
        handle.close()
        raise NicsimError(f"pcap {p}: not a pcap or pcapng capture ({err})") from None
    at_ns: array[int] = array("q")
    wire_len: array[int] = array("I")
    heads = bytearray()
    head_end: array[int] = array("Q")
    nano = bool(getattr(reader, "nano", False))
    first: int | None = None
    # (ns from the first frame, record) of the earliest frame and of the latest.
    lo = hi = (0, 0)
    records = 0
    try:
        for data, meta in reader:
            records += 1
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
                raise NicsimError(
                    f"pcap {p}: record {records:,}{where}: link type {link}, not Ethernet "
                    f"({LINKTYPE_ETHERNET}); nicsim replays Ethernet frames"
                )
            if len(at_ns) == MAX_FRAMES:
                raise NicsimError(
                    f"pcap {p}: more than {MAX_FRAMES:,} frames, the cap of a replay; cut it first"
                )
            if len(data) < 14:
                continue  # not even an Ethernet header: nothing a NIC would take
            t = _time_ns(p, records, meta, nano)
            if first is None:
                first, lo, hi = t, (0, records), (0, records)
            t -= first
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
            wire_len.append(min(max(int(meta.wirelen), len(data)), 0xFFFF_FFFF))
            heads += data[:HEAD_BYTES]
            head_end.append(len(heads))
    except _SimplePacketBlockError:
        raise NicsimError(
            f"pcap {p}: record {records + 1:,} is a Simple Packet Block, which has no "
            "timestamp; a replay needs each frame's time (capture with Enhanced Packet Blocks)"
        ) from None
    except Scapy_Exception as err:
        raise NicsimError(f"pcap {p}: unreadable record ({err})") from None
    finally:
        handle.close()
    if not at_ns:
        raise NicsimError(f"pcap {p}: no Ethernet frames in the capture")
    return Capture(p, at_ns, wire_len, heads, head_end)


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
    scenario: Scenario | Mapping[str, Any] | None = None,
    policy: Callable[[], CoalescingPolicy] | None = None,
    mark: Callable[[bytes], bool] | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> ReplayResult:
    """Replay a capture's frames to one host into host 1 of a preset.

    Parameters
    ----------
    capture
        A pcap or pcapng file of Ethernet frames (or a :class:`Capture`
        already read). The timestamps of the frames to the receiving host
        are taken as their arrival times at its NIC; the frames it sent
        leave its NIC at theirs (first bit on the wire), and their transmit
        completions reach its coalescing policy and interrupts as in a run
        (with ``nic.tx_done_interrupts``; the work of sending them is not
        replayed).
    preset, coalescing, steering, delay_us
        The receiving host's platform and NIC policy (``nic.coalescing``,
        ``nic.steering``, ``nic.delay_us``); ``scenario`` gives any other
        key (its workload is replaced by the capture).
    host_mac
        The receiving host's MAC; by default the destination MAC most frames
        go to.
    policy
        A coalescing policy written in Python (:mod:`nicsim.policy`), made
        once per receive queue; replaces ``coalescing``.
    mark
        Called with the header bytes of each frame that is not Open-MX:
        true marks it latency-sensitive (default: unmarked).

    Returns
    -------
    ReplayResult
        ``metrics`` (``replay_interrupts``, ``replay_cpu_ns_per_frame``,
        ``replay_delay_p50_us``/``p99``/``max``, ``replay_dropped``, ... and
        the run's other metrics) and per-frame series.

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
    from nicsim.scenario import Scenario

    if not isinstance(capture, Capture):
        _check_path_type(capture)
    if policy is not None and not callable(policy):
        raise NicsimError(
            f"policy = {policy!r}: expected a callable returning a nicsim.policy.CoalescingPolicy"
        )
    if mark is not None and not callable(mark):
        raise NicsimError(f"mark = {mark!r}: expected a callable mark(header_bytes) -> bool")
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
    if not isinstance(capture, Capture):
        capture = read_capture(capture)
    mac, frames, sent = capture.to_host(host_mac)
    multiqueue = built.to_dict().get("nic", {}).get("steering") == "multiqueue"
    rows = _rows(capture, frames, sent, mark, multiqueue)
    metrics, (arrival, delay, irq) = _core.replay(built.to_toml(), rows, policy, progress)
    return ReplayResult(metrics, mac, _array("Q", arrival), _array("q", delay), _array("Q", irq))


def _array(code: str, raw: bytes) -> array[int]:
    """Return the 64-bit integers of ``raw`` (the machine's byte order) as an array."""
    out: array[int] = array(code)
    out.frombytes(raw)
    return out


def _rows(
    capture: Capture,
    frames: array[int],
    sent: array[int],
    mark: Callable[[bytes], bool] | None,
    multiqueue: bool,
) -> Iterator[tuple[int, int, bytes, bool, int, bool]]:
    """Yield the frames to the host, then those it sent, as ``_core.replay`` takes them.

    One at a time: the core takes them in as they come. Times count from the
    earliest of them. An exception ``mark`` raises is a :class:`NicsimError`
    naming the frame (as a policy's is); ``KeyboardInterrupt`` passes.
    """
    t0 = min(capture.at_ns[i] for batch in (frames, sent) for i in batch)
    for out, batch in ((False, frames), (True, sent)):
        for i in batch:
            head = capture.head(i)
            other = head[12:14] != ETHERTYPE_OMX.to_bytes(2, "big")
            marked = False
            if mark is not None and other and not out:
                try:
                    marked = bool(mark(head))
                except Exception as err:
                    raise NicsimError(
                        f"mark: {type(err).__name__}: {err} (frame {i + 1:,} of {capture.path})"
                    ) from None
            flow = _flow(head) if multiqueue and other else 0
            yield (capture.at_ns[i] - t0, capture.wire_len[i], head, marked, flow, out)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (as the core computes the delays')."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = min(max(math.ceil(q * len(ordered)), 1), len(ordered))
    return float(ordered[rank - 1])
