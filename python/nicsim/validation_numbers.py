"""The published numbers of ``docs/validation.md`` that no experiment carries.

:data:`NUMBERS`: not simulated, with the reason, and the platform and
workload parameters the presets take. Re-exported by :mod:`nicsim.validation`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from nicsim.studies import Ref

# -- published numbers no experiment carries --------------------------------

Kind = Literal["result", "input"]


@dataclass(frozen=True)
class PublishedNumber:
    """A number a study prints that no experiment simulates.

    Attributes
    ----------
    quantity, value, source, printed, scale
        As in :class:`~nicsim.exp_base.Published`.
    reason
        Why it is not simulated (a configuration not run, a metric not
        measured), or, for an input, where nicsim takes it.
    kind
        ``"result"`` (a measurement) or ``"input"`` (a platform, protocol or
        workload parameter of the study).
    fit
        For a result some calibration was fitted to (e.g. a latency only
        the fit runs): that calibration.
    """

    quantity: str
    value: float
    source: Ref
    printed: str
    reason: str
    kind: Kind = "result"
    scale: float = 1.0
    fit: str | None = None


def _n(
    study: str,
    where: str,
    quantity: str,
    printed: str,
    value: float,
    reason: str,
    *,
    kind: Kind = "result",
    fit: str | None = None,
) -> PublishedNumber:
    return PublishedNumber(quantity, value, Ref(study, where), printed, reason, kind, fit=fit)


def _table(
    study: str,
    where: str,
    rows: Sequence[tuple[str, Sequence[tuple[str, str]]]],
    reasons: Mapping[tuple[str, str], str],
    default: str,
) -> list[PublishedNumber]:
    """Numbers of a table: ``(row label, [(column label, printed), ...])`` each."""
    out = []
    for label, cells in rows:
        for column, printed in cells:
            reason = reasons.get((label, column), reasons.get((label, "*"), default))
            value = float(printed.split()[0].replace("+", ""))
            out.append(
                _n(study, where, f"{label}, {column}", printed, value, reason, kind="result")
            )
    return out


_COAL_TABLE_IV = [
    (label, list(zip(("default timeout", "disabled", "openmx", "stream"), times, strict=True)))
    for label, times in (
        ("bt.C.16", ("271.2", "272.8", "273.3", "272.6")),
        ("ep.C.16", ("31.30", "31.45", "31.49", "31.36")),
        ("lu.C.16", ("203.8", "202.4", "203.2", "206.6")),
        ("sp.C.16", ("549.1", "551.1", "546.8", "546.1")),
    )
] + [("lu.C.16", [("stream speedup", "-1.4 %")])]
_NO_SKELETON = "nicsim has no {} skeleton"

_COAL_NUMBERS = [
    *_table(
        "omx-coal",
        "Table IV",
        _COAL_TABLE_IV,
        {
            ("bt.C.16", "*"): _NO_SKELETON.format("BT"),
            ("ep.C.16", "*"): _NO_SKELETON.format("EP"),
            ("lu.C.16", "*"): _NO_SKELETON.format("LU"),
            ("sp.C.16", "*"): _NO_SKELETON.format("SP"),
        },
        "",
    ),
    _n(
        "omx-coal",
        "§IV-C4",
        "interrupts the stream firmware can defer, packets",
        "by 3 or 4 packets",
        3,
        "no metric counts how far a deferral reaches",
    ),
    _n(
        "omx-coal",
        "§IV-C3",
        "pull requests of the 234 kiB message",
        "5 pull requests",
        5,
        "not measured; nicsim's protocol needs 6 (239616 B in 1468 B replies: 164 replies "
        "in blocks of 32, crates/nicsim/src/wire/frag.rs)",
    ),
    _n(
        "omx-coal",
        "§IV-C3",
        "packets exchanged for the 234 kiB message",
        "162 packets",
        162,
        "not measured; nicsim sends 1 rendezvous, 6 pull requests, 164 replies and 1 notify",
    ),
    _n(
        "omx-coal",
        "§IV-C2",
        "share of ACKs in the traffic, %",
        "up to 20 % of the traffic",
        20,
        "not measured: no table counts ack frames (nicsim sends one explicit ack per 4 "
        "messages, `library.ack_after = 4`: 1 frame in 5 of a 0 B stream)",
    ),
    # inputs
    _n(
        "omx-coal",
        "§IV-B1",
        "stream message size, bytes",
        "stream of 128 bytes messages",
        128,
        "coalescing-delay-sweep: `size_bytes = 128`",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§IV-B1",
        "coalescing delay meaning disabled, µs",
        "(0 µs delay)",
        0,
        "coalescing-delay-sweep: `delay_us = 0` (a timeout of 0)",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§IV-C3",
        "transfer size, kiB",
        "The 234 kiB size",
        234,
        "coalescing-transfer and coalescing-marking: 239616 B",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§IV-C4",
        "mis-ordered medium message, kiB",
        "32 kiB medium message",
        32,
        "coalescing-misorder: 32768 B",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§IV-A",
        "host clock, GHz",
        "2.33 GHz",
        2.33,
        "preset omx2009 `host.clock_ghz`",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§IV-A",
        "MTU, bytes",
        "(MTU) of 1500 bytes",
        1500,
        "preset omx2009 `link.mtu`",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§IV-B1",
        "Myri-10G default coalescing delay, µs",
        "75 µs on Myri-10G NICs",
        75,
        "preset omx2009 `nic.default_delay_us`",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§III-A",
        "largest small message, bytes",
        "Up to 128 bytes",
        128,
        "`wire::SMALL_MAX` (crates/nicsim/src/wire/frag.rs)",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§III-A",
        "largest medium message, kiB",
        "Up to 32 kiB",
        32,
        "`wire::DEFAULT_RNDV_THRESHOLD` = 32 KiB",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§III-A",
        "pull replies requested at once, per request",
        "up to 32 fragments at once",
        32,
        "`wire::PULL_BLOCK_REPLIES`",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§IV-C3",
        "pull requests the driver pipelines",
        "pipeline 4 requests",
        4,
        "`wire::PULL_BLOCKS_OUTSTANDING`",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§IV-C4",
        "packets of a 32 kiB medium message",
        "(23 packets)",
        23,
        "the same in nicsim (`wire::Layout::medium_frag_count`; "
        "test `medium_32k_at_1500_is_23_fragments`)",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§IV-B2",
        "flood packet size, bytes",
        "invalid 128 bytes packets",
        128,
        "coalescing-irq-overhead floods 128 B packets (20000 of them, not a million: the "
        "per-packet overhead is steady long before)",
        kind="input",
    ),
    _n(
        "omx-coal",
        "§IV-D",
        "NAS processes per node",
        "8 processes were used per node",
        8,
        "coalescing-nas-is, coalescing-nas: `procs_per_host = 8`, 2 hosts",
        kind="input",
    ),
]

_MQ_NUMBERS = [
    _n(
        "omx-mq",
        "§4.1",
        "native Open-MX ping-pong latency, µs",
        "8 µs with a native Open-MX ping-pong",
        8,
        "no experiment runs the native (non-MPI) ping-pong at SC; the joint fit does "
        "(`python -m nicsim.fit`, target 'native 0 B latency, SC')",
        fit="open-mx",
    ),
    _n(
        "omx-mq",
        "§4.2",
        "packets that cross caches on the way to user space (round-robin)",
        "seven out of eight packets",
        7 / 8,
        "not measured: no metric reports it (the model's answer is 7 of 8, see the mechanisms)",
    ),
    _n(
        "omx-mq",
        "§4.6",
        "cache misses, single queue / multiqueue, on IS",
        "by a factor of about 11",
        11,
        "not tabulated: multiqueue-nas keeps SPEC §4's columns; the run metric "
        "`cache_miss_rate` gives 0.41 / 0.51 = 0.8 on is.B.16 (see the mechanisms)",
    ),
    # inputs
    _n(
        "omx-mq",
        "§4.1",
        "host clock, GHz",
        "(2.33 GHz)",
        2.33,
        "preset omx2009-mq `host.clock_ghz`",
        kind="input",
    ),
    _n(
        "omx-mq",
        "§4.1",
        "processors per host",
        "with 2 Intel Xeon E5345",
        2,
        "preset omx2009-mq `topology.sockets`",
        kind="input",
    ),
    _n(
        "omx-mq",
        "§4.1",
        "dies per processor (two cores sharing an L2)",
        "2 dual-core sub-chips",
        2,
        "preset omx2009-mq `topology.dies_per_socket`, `cores_per_die`",
        kind="input",
    ),
    _n(
        "omx-mq",
        "§4.1",
        "process/interrupt bindings",
        "4 possible process/interrupt bindings",
        4,
        "`host.binding` = SC, S$, SP, OP",
        kind="input",
    ),
    _n(
        "omx-mq",
        "§4.3",
        "idle cores with one communicating process",
        "7 out of 8 cores are idle",
        7,
        "multiqueue-idle runs only the two communicating ranks",
        kind="input",
    ),
    _n(
        "omx-mq",
        "§4.4",
        "L1 cache size, kB",
        "32 kB L1 caches",
        32,
        "not modelled: the cache model has one L2 per die and no capacity",
        kind="input",
    ),
    _n(
        "omx-mq",
        "§3.1",
        "destination endpoint id width, bits",
        "8-bit destination endpoint",
        8,
        "the multiqueue hash takes the 8-bit endpoint (`Steering::queue_for`)",
        kind="input",
    ),
]

_LCI_NUMBERS = [
    _n(
        "lci",
        "§3.1",
        "LCI-ni one-way null latency, µs",
        "(12 µs)",
        12,
        "no experiment runs the LCI ping-pong; the fit and the test "
        "`null_latency_is_the_fitted_12_us` do",
        fit="lci2000",
    ),
    _n(
        "lci",
        "§3.3",
        "message size at which every strategy peaks, Kbyte",
        "peak throughput with 1 Kbyte messages",
        1,
        "not reduced to a number: lci-polling's table and plot show where each strategy peaks",
    ),
    _n(
        "lci",
        "§3.1",
        "kernel interrupt dispatch, µs",
        "approximately 8 µs",
        8,
        "preset lci2000 `host.kernel_dispatch_ns` ([fact])",
        kind="input",
    ),
    _n(
        "lci",
        "§3.1",
        "user signal handler dispatch, µs",
        "an additional 17 µs",
        17,
        "preset lci2000 `host.signal_handler_ns` ([fact])",
        kind="input",
    ),
    _n(
        "lci",
        "§3.1",
        "failed poll of a cached flag, ns",
        "5 nanoseconds",
        5,
        "preset lci2000 `host.poll_hit_ns` ([fact])",
        kind="input",
    ),
    _n(
        "lci",
        "§3.1",
        "successful poll (cache miss), ns",
        "74 nanoseconds",
        74,
        "preset lci2000 `host.poll_miss_ns` ([fact])",
        kind="input",
    ),
    _n(
        "lci",
        "§3.1",
        "poll across the I/O bus, ns",
        "467 nanoseconds",
        467,
        "preset lci2000 `pci.pio_read_ns` ([fact])",
        kind="input",
    ),
    _n(
        "lci",
        "§2",
        "cluster nodes",
        "128-node",
        128,
        "preset lci2000 models 64 of them (`grid.hosts`)",
        kind="input",
    ),
    _n(
        "lci",
        "§2",
        "host clock, MHz",
        "200 MHz Intel Pentium Pro",
        200,
        "preset lci2000 `host.clock_mhz`",
        kind="input",
    ),
    _n(
        "lci",
        "§2",
        "host memory, Mbyte",
        "128 Mbyte of DRAM",
        128,
        "not modelled (no memory capacity)",
        kind="input",
    ),
    _n(
        "lci",
        "§2",
        "PCI bus width, bits",
        "32-bit, 33 MHz PCI bus",
        32,
        "preset lci2000 `pci.dma_MBps` = 132 (32 bit × 33 MHz)",
        kind="input",
    ),
    _n(
        "lci",
        "§2",
        "PCI bus clock, MHz",
        "33 MHz PCI bus",
        33,
        "preset lci2000 `pci.dma_MBps` = 132 (32 bit × 33 MHz)",
        kind="input",
    ),
    _n(
        "lci",
        "§2",
        "LANai clock, MHz",
        "33 MHz LANai 4.1",
        33,
        "preset lci2000 `ni.clock_mhz`",
        kind="input",
    ),
    _n(
        "lci",
        "§2",
        "NI SRAM, Mbyte",
        "1 Mbyte of SRAM",
        1,
        "preset lci2000 `ni.sram_bytes`",
        kind="input",
    ),
    _n(
        "lci",
        "§2",
        "switch ports",
        "8-port switches",
        8,
        "preset lci2000 `grid.switch_ports`",
        kind="input",
    ),
    _n(
        "lci",
        "§2",
        "link rate, Gbit/s",
        "1.28 Gbit/s links",
        1.28,
        "preset lci2000 `link.rate_MBps` = 160",
        kind="input",
    ),
    _n(
        "lci",
        "§2",
        "send buffer, Kbyte",
        "1 Kbyte send buffer",
        1,
        "preset lci2000 `ni.buffer_bytes`",
        kind="input",
    ),
    _n(
        "lci",
        "§3.3",
        "static split threshold, bytes",
        "less than 512 bytes",
        512,
        "`config::DEFAULT_SPLIT_BYTES` (`nic.split_bytes`)",
        kind="input",
    ),
    _n(
        "lci",
        "§4.3",
        "processors in the multicast runs",
        "on 64 processors",
        64,
        "lci-multicast and lci-multicast-apps run 64 processes",
        kind="input",
    ),
    _n(
        "lci",
        "§4.3",
        "ASP row broadcast, Kbyte",
        "4 Kbyte matrix row",
        4,
        "lci-multicast-apps: 1024 × 1024 32-bit distances",
        kind="input",
    ),
    _n(
        "lci",
        "§5.1",
        "processors in the watchdog runs",
        "run on 64 processors",
        64,
        "not matched: lci-watchdog runs 16 processes",
        kind="input",
    ),
    _n(
        "lci",
        "§5.2",
        "processors in the timer runs",
        "on 64 processors",
        64,
        "not matched: lci-timers runs 16 processes",
        kind="input",
    ),
    _n(
        "lci",
        "§5.2",
        "NI send buffers of LCI-host",
        "64 NI send buffers",
        64,
        "lci-timers: `protocol.send_buffers = 64`",
        kind="input",
    ),
    _n(
        "lci",
        "§5.2",
        "operating-system timer granularity, ms",
        "at least ten milliseconds",
        10,
        "lci-timers sweeps the NI clock period up to 10 ms",
        kind="input",
    ),
]

_EMO_NUMBERS = [
    _n(
        "emo",
        "§4",
        "host clock, MHz",
        "933 MHz Pentium III",
        933,
        "preset emo2004 `host.clock_ghz`",
        kind="input",
    ),
    _n(
        "emo",
        "§4.1.1",
        "smallest message, bytes",
        "from 100 byte messages",
        100,
        "emo-latency and emo-overhead sizes",
        kind="input",
    ),
    _n(
        "emo",
        "§4.1.1",
        "largest message, bytes",
        "through 8900 byte messages",
        8900,
        "emo-latency and emo-overhead sizes (two Open-MX fragments of 8192 B, where the "
        "study's UDP datagram was one frame: model and simulation part there)",
        kind="input",
    ),
    _n(
        "emo",
        "§4.1.1",
        "page size, KB",
        "is 4KB",
        4,
        "not modelled: copies are priced per byte, page crossings cost nothing",
        kind="input",
    ),
    _n(
        "emo",
        "§4.1.1",
        "no coalescing: thresholds and inter-arrival times",
        "were set to 0",
        0,
        "`nicsim.model.coalescing_options('none')`",
        kind="input",
    ),
    _n(
        "emo",
        "§4.1.1",
        "maximum coalescing: frame threshold",
        "set to 1000",
        1000,
        "`nicsim.model.coalescing_options('max')`",
        kind="input",
    ),
    _n(
        "emo",
        "§4.1.1",
        "maximum coalescing: inter-arrival time, µs",
        "set to 100 $\\mu$ s",
        100,
        "`nicsim.model.coalescing_options('max')`",
        kind="input",
    ),
    _n(
        "emo",
        "§4.1.2",
        "NIC processor clock, MHz",
        "(88 MHz)",
        88,
        "preset emo2004 (Tigon-2 at 88 MHz: firmware costs and the echo copy)",
        kind="input",
    ),
    _n(
        "emo",
        "§4.1.2",
        "DMA start-up, µs",
        "approximately 5 $\\mu$ s",
        5,
        "preset emo2004 `nic.dma_startup_ns`",
        kind="input",
    ),
    _n(
        "emo",
        "§4.2.4",
        "jumbo frame size, bytes",
        "approaches 9000 bytes",
        9000,
        "preset emo2004 `link.mtu`",
        kind="input",
    ),
    _n(
        "emo",
        "§4.1.4",
        "NIC copy cycles per byte",
        "was 4",
        4,
        "preset emo2004 (the firmware echo's copy)",
        kind="input",
    ),
]

#: Published numbers no experiment simulates, and the studies' parameters.
NUMBERS: tuple[PublishedNumber, ...] = tuple(
    _COAL_NUMBERS + _MQ_NUMBERS + _LCI_NUMBERS + _EMO_NUMBERS
)
