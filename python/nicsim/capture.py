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

import math
import zlib
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nicsim import _core
from nicsim._core import NicsimError
from nicsim.capture_file import (
    ETH_HEADER_LEN,
    ETHERTYPE_OMX,
    MAX_FILE_BYTES,
    MAX_FRAMES,
    MAX_TIME_NS,
    Capture,
    CaptureDamaged,
    ReadReport,
    Selection,
    _headers_len,
    _l3,
    _parse_ip,
    _parse_mac,
)
from nicsim.capture_read import _check_path_type, read_capture

if TYPE_CHECKING:
    from nicsim.policy import CoalescingPolicy
    from nicsim.scenario import Scenario

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_FRAMES",
    "MAX_TIME_NS",
    "Capture",
    "CaptureDamaged",
    "ReadReport",
    "ReplayResult",
    "read_capture",
    "replay",
]


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
    """Refuse an LCI preset (LANai NIs: a ``[lanai]`` table) as a replay's, saying why.

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
        lanai = "lanai" in loads(text, f"preset {preset!r}")
    except NicsimError:
        return
    if lanai:
        raise NicsimError(
            f"preset {preset!r} is an LCI preset (LANai NIs: a [lanai] table): a replay feeds "
            "the capture to an Open-MX host's NIC, driver and interrupts, which LCI hosts do "
            "not have (they poll their NI); allowed: an Open-MX preset, e.g. "
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
