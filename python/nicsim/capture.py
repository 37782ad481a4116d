"""Replaying a packet capture into a receiving host: :func:`replay`.

This module owns reading a capture (pcap or pcapng, Ethernet link type,
with scapy's raw readers: no packet is parsed here by hand), choosing the
frames that arrive at the receiving host (the destination MAC most frames
go to, or the one given), and handing their arrival times, wire lengths and
header bytes to the core (``_core.replay``), which decodes the Open-MX ones
(EtherType 0x86DF) and runs them through the chosen NIC policy and
steering into host 1 of the chosen preset. It does not simulate anything,
nor print or plot (:mod:`nicsim.cli_replay`, :mod:`nicsim.plots_replay`).

A frame that is not Open-MX is generic traffic: unmarked unless ``mark``
says otherwise, through the driver at its per-frame cost and the handler's
drop cost (the simulator has no IP stack), where it counts as delivered.

Bounds: a capture file above :data:`MAX_FILE_BYTES` is refused before it is
read, with its size and the cap; one with more than :data:`MAX_FRAMES`
frames is refused as soon as the reader passes the cap.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nicsim import _core
from nicsim._core import NicsimError

if TYPE_CHECKING:
    from nicsim.policy import CoalescingPolicy
    from nicsim.scenario import Scenario

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_FRAMES",
    "Capture",
    "ReplayResult",
    "read_capture",
    "replay",
]

#: The largest capture file read (1 GiB): reading is about 1 µs per kB.
MAX_FILE_BYTES = 1 << 30
#: The most frames a capture may hold (the core's cap on a replay).
MAX_FRAMES = 1_000_000
#: ``LINKTYPE_ETHERNET`` (tcpdump.org link-type list).
LINKTYPE_ETHERNET = 1
#: Header bytes kept per frame: more than the largest Open-MX header (96 B)
#: and an IPv6 + TCP header behind Ethernet.
HEAD_BYTES = 128
#: The Open-MX EtherType (``common/omx_wire.h``).
ETHERTYPE_OMX = 0x86DF


@dataclass(frozen=True)
class Frame:
    """One captured frame: arrival (ns from the epoch of the capture), wire length, header."""

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
    """The frames of a capture file, in file order."""

    path: Path
    frames: tuple[Frame, ...]

    def host_macs(self) -> list[tuple[str, int]]:
        """Destination MACs with their frame counts, most frames first (ties: lowest MAC)."""
        counts = Counter(f.dst_mac for f in self.frames)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def to_host(self, host_mac: str | None) -> tuple[str, list[Frame], list[Frame]]:
        """Return the receiving host's MAC, the frames to it and the frames it sent.

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
        to = [f for f in self.frames if f.dst_mac == mac]
        sent = [f for f in self.frames if f.src_mac == mac and f.dst_mac != mac]
        return mac, to, sent


@dataclass
class ReplayResult:
    """A replay's metrics and per-frame series (arrival order)."""

    metrics: dict[str, Any]
    host_mac: str
    arrival_ps: list[int] = field(repr=False)
    #: From arrival at the NIC to the handler finishing the frame; -1: dropped.
    delay_ps: list[int] = field(repr=False)
    #: Interrupts the host had raised when the frame arrived.
    irq_before: list[int] = field(repr=False)

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


def check_file(path: str | Path) -> Path:
    """Check that ``path`` is a readable file within :data:`MAX_FILE_BYTES`; return it."""
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


def _time_ns(meta: Any, nano: bool) -> int:
    """Return a record's time in integer ns (exact; floored for an odd pcapng resolution)."""
    if hasattr(meta, "tsresol"):  # pcapng: ticks of 1/tsresol s
        ticks = (meta.tshigh << 32) | meta.tslow
        return int(ticks * 1_000_000_000 // meta.tsresol)
    return int(meta.sec) * 1_000_000_000 + int(meta.usec) * (1 if nano else 1000)


def read_capture(path: str | Path) -> Capture:
    """Read every frame of a pcap or pcapng capture of Ethernet frames.

    Raises
    ------
    NicsimError
        A missing or unreadable file, one above the size cap, not a capture,
        a link type other than Ethernet, no frames, or more than
        :data:`MAX_FRAMES` frames (one line naming the file).
    """
    p = check_file(path)
    from scapy.error import Scapy_Exception
    from scapy.utils import RawPcapReader

    handle = p.open("rb")
    try:
        # scapy's readers take a file object too (PcapReader_metaclass.open).
        reader = RawPcapReader(handle)  # type: ignore[arg-type]
    except (Scapy_Exception, OSError, EOFError) as err:
        handle.close()
        raise NicsimError(f"pcap {p}: not a pcap or pcapng capture ({err})") from None
    frames: list[Frame] = []
    nano = bool(getattr(reader, "nano", False))
    try:
        for data, meta in reader:
            link = getattr(meta, "linktype", getattr(reader, "linktype", None))
            if link != LINKTYPE_ETHERNET:
                raise NicsimError(
                    f"pcap {p}: link type {link}, not Ethernet ({LINKTYPE_ETHERNET}); "
                    "nicsim replays Ethernet frames"
                )
            if len(frames) == MAX_FRAMES:
                raise NicsimError(
                    f"pcap {p}: more than {MAX_FRAMES:,} frames, the cap of a replay; cut it first"
                )
            if len(data) < 14:
                continue  # not even an Ethernet header: nothing a NIC would take
            frames.append(
                Frame(
                    _time_ns(meta, nano),
                    max(int(meta.wirelen), len(data)),
                    bytes(data[:HEAD_BYTES]),
                )
            )
    except Scapy_Exception as err:
        raise NicsimError(f"pcap {p}: unreadable record ({err})") from None
    finally:
        handle.close()
    if not frames:
        raise NicsimError(f"pcap {p}: no Ethernet frames in the capture")
    return Capture(p, tuple(frames))


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
    t0 = min(f.at_ns for f in (*frames, *sent))
    rows = [
        (
            f.at_ns - t0,
            f.wire_len,
            f.head,
            bool(mark(f.head)) if mark is not None and not f.is_omx and not out else False,
            _flow(f.head) if multiqueue and not f.is_omx else 0,
            out,
        )
        for out, batch in ((False, frames), (True, sent))
        for f in batch
    ]
    metrics, (arrival, delay, irq) = _core.replay(built.to_toml(), rows, policy, progress)
    return ReplayResult(metrics, mac, list(arrival), list(delay), list(irq))


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (as the core computes the delays')."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = min(max(math.ceil(q * len(ordered)), 1), len(ordered))
    return float(ordered[rank - 1])
