"""The commands ``test_cli_properties`` draws: Hypothesis strategies, one per family.

Each family (``run``, ``sweep``, ``replay``, ``model``, ``presets``,
``bench`` and a few others) mixes good and bad values, huge and negative
sizes, keys given twice and outputs that name the traps of the sandbox
(:data:`TRAPS`: an existing file, a directory, a FIFO, a link, a missing
directory, an input). :data:`COMMANDS` draws from all of them; the captures a
replay reads are drawn as pcap or pcapng bytes (:func:`pcap_bytes`,
:func:`pcapng_bytes`). The harness that runs a command is ``_cli_harness``,
the properties and the tests ``test_cli_properties``.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Sequence
from typing import TypeVar

from hypothesis import strategies as st

from _cli_harness import (
    DEVICE,
    SB,
    Command,
)

T = TypeVar("T")


def mostly(good: Sequence[T], bad: Sequence[T]) -> st.SearchStrategy[T]:
    """A good value three times in four, else a bad one.

    A command is drawn from several choices; were each as often bad as
    good, nearly every command would be refused by its first check, and the
    outputs would seldom be written.
    """
    return st.one_of(*[st.sampled_from(good)] * 3, st.sampled_from(bad))


def one_in(n: int) -> st.SearchStrategy[bool]:
    """True once in ``n`` draws (last of the choices: Hypothesis favours the first)."""
    return st.sampled_from([False] * (n - 1) + [True])


def spelled(name: str) -> st.SearchStrategy[str]:
    """A sandbox path spelled as a user might: bare, ``./``, or absolute."""
    if name.startswith("/"):
        return st.just(name)
    return st.sampled_from([name, f"./{name}", f"{SB}/{name}"])


#: Where an output may land besides a new name: every trap of the sandbox.
TRAPS = ["old.txt", "adir", "fifo", "link", "missing/x.out", "sc.toml", "sc-link.toml"]
TRAPS += [DEVICE] if DEVICE else []


def file_target(*fresh: str) -> st.SearchStrategy[str]:
    """Where a file output may point: a new name half the time, else a trap."""
    traps = st.sampled_from(TRAPS).flatmap(spelled)
    if not fresh:
        return traps
    return st.one_of(st.sampled_from(fresh).flatmap(spelled), traps)


#: Traps a correct build writes without complaint: a file, a FIFO, a device, a link.
SAFE_TRAPS = ["old.txt", "fifo", "link", *([DEVICE] if DEVICE else [])]


@dataclasses.dataclass(frozen=True)
class Mix:
    """How a command's choices are drawn: all good (``clean``), or good three times in four.

    Half the commands are clean, so that they run and write their outputs
    (where the worst defects are) rather than stop at a bad value.
    """

    clean: bool

    def of(self, good: Sequence[T], bad: Sequence[T]) -> st.SearchStrategy[T]:
        return st.sampled_from(good) if self.clean else mostly(good, bad)

    def target(self, *fresh: str) -> st.SearchStrategy[str]:
        if not self.clean:
            return file_target(*fresh)
        return st.one_of(st.sampled_from(fresh or SAFE_TRAPS), st.sampled_from(SAFE_TRAPS)).flatmap(
            spelled
        )


MIXES = st.builds(Mix, st.booleans())


INTS_BAD = ["-1", "-5", str(2**63), str(2**64), str(10**20), "x", ""]
FLOATS_GOOD = ["0", "5", "25", "75.5"]
FLOATS_BAD = ["-3", "1e9", "1e30", "nan", "inf", "-inf", "x", "", "-0.0", "1e-320"]
SIZES_SMALL = ["0", "1", "64", "1500", "8192", "65536", str(1 << 20)]
SIZES_HUGE = [str(16 << 20), str(1 << 30)]
SIZES_BAD = ["-1", "-5", "lots", "1e3", "0x10", "", "1.5", " 7", str((1 << 30) + 1), str(1 << 31)]
SIZES_BAD += [str(2**63 - 1), str(2**63), str(2**64), str(10**20)]
COALESCING = ["disabled", "timeout", "openmx", "stream", "adaptive", "openmx-adaptive"]
COALESCING_BAD = ["fast", "OPENMX", "", "none"]

#: ``--set`` items of ``run``: valid ones, and unknown, malformed or odd ones.
RUN_SETS = [
    "nic.delay_us=25",
    'nic.coalescing="openmx"',
    "nic.coalescing=disabled",
    'nic={coalescing="disabled"}',
    "host.sleep=true",
    "seed=3",
    "protocol.jitter_ns=10",
    'nic.steering="multiqueue"',
    "platform.library.spin_ns=100",
    'preset="modern"',
    'protocol.stack="native-mx"',
]
RUN_SETS_BAD = [
    "seed=-1",
    f"seed={2**64}",
    'preset="lci2000"',
    'workload.kind="stream"',
    "workload.size_bytes=-5",
    'workload.size_bytes="big"',
    "bogus.key=1",
    'nic.colour="red"',
    "workload.bogus=1",
    "nic.delay_us",
    "=5",
    "nic.delay_us=",
    "a.b.c.d.e.f=1",
    "nic.delay_us=[1,2]",
    "nic.delay_us=1e400",
]


@st.composite
def workload_cap(draw: st.DrawFn, kind: str, size_big: bool) -> list[str]:
    """``--set`` items keeping a ping-pong or a stream tiny (one message when it is huge)."""
    warmup = draw(st.sampled_from(["0"] if size_big else ["0", "1", "2"]))
    if kind == "stream":
        messages = draw(st.sampled_from(["1"] if size_big else ["1", "2", "5", "50"]))
        return ["--set", f"workload.messages={messages}", "--set", f"workload.warmup={warmup}"]
    iterations = draw(st.sampled_from(["1"] if size_big else ["1", "5", "20"]))
    return ["--set", f"workload.iterations={iterations}", "--set", f"workload.warmup={warmup}"]


@st.composite
def run_commands(draw: st.DrawFn) -> Command:
    """``nicsim run``: workloads, sizes, policies, keys given twice, traces and captures."""
    mix = draw(MIXES)
    argv = ["run"]
    inputs: list[str] = []
    outputs: list[tuple[str, str]] = []
    use_scenario = draw(st.booleans())
    if use_scenario:
        path = draw(st.sampled_from(["sc.toml", "sc.toml", "sc-link.toml"]).flatmap(spelled))
        argv += ["--scenario", path]
        inputs.append(path)
    # A scenario's own workload keys fit its kind: another kind does not run.
    kinds = [None, "pingpong", "stream"] if not use_scenario else [None]
    kind = draw(st.sampled_from(kinds if mix.clean else [*kinds, "stream"]))
    if kind is not None:
        argv += ["--workload", kind]
    if draw(st.booleans()):
        preset = draw(mix.of(["omx2009", "modern", "preset.toml"], ["lci2000", "emo2004", "nope"]))
        argv += ["--preset", preset]
        if preset.endswith(".toml"):
            inputs.append(preset)
    with_pcap = draw(one_in(3))
    set_pcap = draw(one_in(5))
    size_big = False
    if draw(st.booleans()):
        # A capture of huge messages is as big: gigabytes on disk.
        good = SIZES_SMALL if with_pcap or set_pcap else SIZES_SMALL * 3 + SIZES_HUGE
        size = draw(mix.of(good, SIZES_BAD))
        size_big = size in SIZES_HUGE
        argv += ["--size", size]
    if not use_scenario or kind is not None:
        argv += draw(workload_cap(kind or "pingpong", size_big))
    if draw(st.booleans()):
        argv += ["--coalescing", draw(mix.of(COALESCING, COALESCING_BAD))]
    if draw(st.booleans()):
        argv += ["--delay-us", draw(mix.of(FLOATS_GOOD, FLOATS_BAD))]
    for item in draw(st.lists(mix.of(RUN_SETS, RUN_SETS_BAD), max_size=2)):
        argv += ["--set", item]
    if set_pcap:
        argv += ["--set", 'pcap="p2.pcap"']
        outputs.append(("p2.pcap", "file"))
    if draw(one_in(4)):
        argv += ["--seed", draw(mix.of(["1", "5", str(2**32)], INTS_BAD))]
    if draw(st.booleans()):
        trace = draw(mix.target("t.json", "out.bin"))
        argv += ["--trace", trace]
        outputs.append((trace, "file"))
        if draw(st.booleans()):
            argv += ["--trace-cap", draw(mix.of(["1", "100"], ["0", "-1", "x"]))]
        if draw(one_in(3)):
            argv += ["--trace-from", draw(mix.of(FLOATS_GOOD, FLOATS_BAD))]
    elif not mix.clean and draw(one_in(8)):
        argv += ["--trace-cap", "10"]  # without --trace
    if with_pcap:
        pcap = draw(mix.target("p.pcap", "out.bin"))
        argv += ["--pcap", pcap]
        outputs.append((pcap, "file"))
    argv += draw(st.sampled_from([[], [], ["--json"], ["--all"]]))
    optional: tuple[str, ...] = ()
    if with_pcap and ("p2.pcap", "file") in outputs:
        optional = ("p2.pcap", argv[argv.index("--pcap") + 1])
    return Command(tuple(argv), tuple(outputs), tuple(inputs), optional=optional)


SWEEP_AXES = [
    "nic.delay_us=0,25",
    'nic.coalescing="openmx","disabled"',
    "nic.coalescing=openmx,disabled",
    "seed=1,2",
    "workload.size_bytes=0,64",
    "nic.delay_us=0,0",
    "workload.messages=5,5",
]
SWEEP_AXES_BAD = ["nic.delay_us=-1,5", "bogus.key=1,2", "nic.delay_us", "nic.delay_us=", "=1,2"]


@st.composite
def sweep_commands(draw: st.DrawFn) -> Command:
    """``nicsim sweep``: small grids, repeated values and axes, every kind of ``--out``."""
    mix = draw(MIXES)
    argv = ["sweep"]
    inputs: list[str] = []
    outputs: list[tuple[str, str]] = []
    per_point = ""
    if draw(one_in(4)):
        path = draw(spelled("sc.toml"))
        argv += ["--scenario", path]
        inputs.append(path)
    else:
        argv += ["--set", 'workload.kind="stream"', "--set", "workload.messages=5"]
        argv += ["--set", "workload.warmup=0"]
    points = 1
    for axis in draw(st.lists(mix.of(SWEEP_AXES, SWEEP_AXES_BAD), min_size=1, max_size=2)):
        argv += ["--axis", axis]
        points *= len({v.strip() for v in axis.partition("=")[2].split(",")})
    if draw(one_in(4)):
        argv += ["--set", draw(mix.of(["nic.delay_us=5", "seed=3"], ["bogus=1"]))]
    if draw(one_in(5)):
        argv += ["--set", 'pcap="sw.pcap"']
        outputs.append(("sw.pcap", "file"))
        per_point = "sw"
    if mix.clean or draw(one_in(4)) is False:
        fresh = ("s.csv", "s.parquet") if mix.clean else ("s.csv", "s.parquet", "s.txt", "s")
        out = draw(mix.target(*fresh))
        argv += ["--out", out]
        outputs.append((out, "file"))
    argv += ["--jobs", draw(mix.of(["1", "1", "1", "2"], ["0", "-1"]))]
    argv += draw(st.sampled_from([["--quiet"], [], ["--fresh"], ["--metric", "latency_us"]]))
    point_files = min(points, 2) if per_point and points > 1 else 0
    return Command(tuple(argv), tuple(outputs), tuple(inputs), per_point, point_files=point_files)


ETHER_OMX = 0x86DF
MACS = [bytes.fromhex("020000000001"), bytes.fromhex("020000000002")]


@st.composite
def frames(draw: st.DrawFn, clean: bool) -> list[tuple[int, int, bytes, int]]:
    """Frames as ``(sec, usec, bytes, orig_len)``: Open-MX, IPv4, IPv6, ARP, short ones.

    Unless ``clean``: times past the 32-bit span, usec of 10^6 and more,
    frames shorter than an Ethernet header, original lengths past 2^31.
    """
    out = []
    for _ in range(draw(st.integers(1 if clean else 0, 12))):
        dst, src = draw(st.permutations(MACS))
        ether = draw(st.sampled_from([ETHER_OMX, 0x0800, 0x86DD, 0x0806]))
        body = draw(st.binary(min_size=0, max_size=64))
        data = dst + src + struct.pack(">H", ether) + body
        sec, usec, orig = draw(st.integers(0, 10)), draw(st.integers(0, 999_999)), len(data)
        if not clean:
            if draw(one_in(4)):
                data = data[: draw(st.integers(0, 13))]
            sec = draw(mostly([sec], [2**31, 2**32 - 1]))
            usec = draw(mostly([usec], [10**6, 2**32 - 1]))
            orig = len(data) + draw(mostly([0], [100, 2**31]))
        out.append((sec, usec, data, orig))
    return out


@st.composite
def pcap_bytes(draw: st.DrawFn, clean: bool) -> bytes:
    """A classic pcap, clean or damaged: cut, bad magic, odd link type, snap length, lengths."""
    endian = draw(st.sampled_from(["<", ">"]))
    magic = draw(st.sampled_from([0xA1B2C3D4, 0xA1B23C4D]))
    link = 1 if clean else draw(st.sampled_from([1, 113, 0]))
    snaplen = 65535 if clean else draw(st.sampled_from([65535, 64, 0]))
    blob = struct.pack(endian + "IHHiIII", magic, 2, 4, 0, 0, snaplen, link)
    for sec, usec, data, orig in draw(frames(clean)):
        blob += struct.pack(endian + "IIII", sec, usec, len(data), orig) + data
    damage = "none" if clean else draw(st.sampled_from(["none", "cut", "magic", "caplen"]))
    if damage == "cut":
        blob = blob[: draw(st.integers(1, len(blob) - 1))]
    elif damage == "magic":
        blob = b"\x00\x01\x02\x03" + blob[4:]
    elif damage == "caplen":
        blob += struct.pack(endian + "IIII", 0, 0, 2**31, 2**31) + b"\x00" * 16
    return blob


def pcapng_block(kind: int, body: bytes) -> bytes:
    """One pcapng block: type, total length, body padded to 32 bits, total length."""
    body += b"\x00" * (-len(body) % 4)
    length = 12 + len(body)
    return struct.pack("<II", kind, length) + body + struct.pack("<I", length)


@st.composite
def pcapng_bytes(draw: st.DrawFn, clean: bool) -> bytes:
    """A pcapng: one or two sections, enhanced and simple packet blocks, huge timestamps."""
    blob = b""
    for _ in range(1 if clean else draw(st.integers(1, 2))):
        blob += pcapng_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
        link = 1 if clean else draw(st.sampled_from([1, 113]))
        options = b""
        if draw(st.booleans()):  # if_tsresol = 9: nanoseconds
            options = struct.pack("<HHB3x", 9, 1, 9) + struct.pack("<HH", 0, 0)
        blob += pcapng_block(0x00000001, struct.pack("<HHI", link, 0, 65535) + options)
        for sec, usec, data, orig in draw(frames(clean)):
            if not clean and draw(one_in(4)):
                blob += pcapng_block(0x00000003, struct.pack("<I", orig) + data)  # simple packet
                continue
            ticks = sec * 10**6 + usec
            if not clean:
                ticks = draw(mostly([ticks], [2**64 - 1, 2**63, 2**32 * 10**6]))
            iface = 0 if clean else draw(mostly([0], [1]))
            head = struct.pack("<IIIII", iface, ticks >> 32, ticks & 0xFFFFFFFF, len(data), orig)
            blob += pcapng_block(0x00000006, head + data)
    if not clean and draw(one_in(4)):
        blob = blob[: draw(st.integers(1, len(blob) - 1))]
    return blob


CLEAN_CAPTURES = st.one_of(pcap_bytes(True), pcapng_bytes(True))
CAPTURES = st.one_of(
    pcap_bytes(False),
    pcap_bytes(False),
    pcapng_bytes(False),
    st.sampled_from([b"", b"not a capture\n"]),
)


@st.composite
def replay_commands(draw: st.DrawFn) -> Command:
    """``nicsim replay``: small generated captures, clean and damaged; every ``--out``."""
    mix = draw(MIXES)
    capture = draw(CLEAN_CAPTURES if mix.clean else st.one_of(CLEAN_CAPTURES, CAPTURES))
    source = draw(mix.of(["in.pcap"], ["missing.pcap", "adir", "fifo", "old.txt", "sc.toml"]))
    source = draw(spelled(source))
    argv = ["replay", "--pcap", source]
    outputs: list[tuple[str, str]] = []
    policy = draw(st.sampled_from(["", "", "coalescing", "compare"]))
    if policy == "coalescing":
        argv += ["--coalescing", draw(mix.of(COALESCING, COALESCING_BAD))]
    elif policy == "compare":
        lists = mix.of(["disabled,timeout,openmx"], ["openmx,openmx", ",", "x"])
        argv += ["--compare", draw(lists)]
    if draw(one_in(4)):
        argv += ["--delay-us", draw(mix.of(FLOATS_GOOD, FLOATS_BAD))]
    if draw(one_in(4)):
        argv += ["--preset", draw(mix.of(["omx2009", "modern"], ["lci2000", "nope"]))]
    if draw(one_in(4)):
        macs = mix.of(["02:00:00:00:00:01"], ["zz", "02:00:00:00:00:09"])
        argv += ["--host-mac", draw(macs)]
    sets = mix.of(["nic.delay_us=5", "seed=2"], ['workload.kind="stream"', "bogus=1"])
    for item in draw(st.lists(sets, max_size=1)):
        argv += ["--set", item]
    if draw(st.booleans()):
        dirs = st.sampled_from(["rdir", "rdir", "adir", "missing/r"]).flatmap(spelled)
        out = draw(spelled("rdir") if mix.clean else st.one_of(dirs, mix.target()))
        argv += ["--out", out]
        outputs.append((out, "dir"))
    argv += draw(st.sampled_from([[], ["--json"]]))
    return Command(tuple(argv), tuple(outputs), (source,), capture=capture)


@st.composite
def model_commands(draw: st.DrawFn) -> Command:
    """``nicsim model``: presets, sizes, layers, and ``--plot`` with good and bad names."""
    mix = draw(MIXES)
    argv = ["model"]
    outputs: list[tuple[str, str]] = []
    if draw(st.booleans()):
        argv += ["--preset", draw(mix.of(["emo2004"], ["omx2009", "lci2000", "nope"]))]
    if draw(st.booleans()):
        bad_sizes = ["-1", "x", str(10**20), "", "100,,200", str(2**63), "1e3"]
        argv += ["--sizes", draw(mix.of(["100,1000", "0", "8000"], bad_sizes))]
    if draw(one_in(3)):
        argv += ["--coalescing", draw(mix.of(["none", "default", "max"], ["bad"]))]
    if draw(one_in(3)):
        argv += ["--path", draw(mix.of(["to-nic", "to-kernel", "to-app"], ["bad"]))]
    if draw(one_in(4)):
        argv += ["--layer", draw(mix.of(["mpi:100:app"], ["x:y:z", "a:1", "b:1e400:app"]))]
    if draw(one_in(4)):
        argv += ["--set", draw(mix.of(["host.wait=poll"], ["bogus=1", "host.wait"]))]
    if draw(st.booleans()):
        names = ["p.png", "p.pdf", "p.svg"]
        names += [] if mix.clean else ["p.csv", "p", "p.PNG", "p.png.txt", "p.jpeg"]
        plot = draw(mix.target(*names))
        argv += ["--plot", plot]
        outputs.append((plot, "file"))
    return Command(tuple(argv), tuple(outputs))


@st.composite
def presets_commands(draw: st.DrawFn) -> Command:
    """``nicsim presets list/show/copy``: names, preset files, every destination."""
    mix = draw(MIXES)
    verb = draw(st.sampled_from(["list", "show", "copy", "copy"]))
    if verb == "list":
        return Command(("presets", "list"))
    bad = ["nope", "sc.toml", "adir", "fifo", "missing.toml", *([DEVICE] if DEVICE else [])]
    name = draw(mix.of(["omx2009", "lci2000", "preset.toml"], bad))
    name = draw(spelled(name)) if name not in ("omx2009", "lci2000", "nope") else name
    inputs = (name,) if name not in ("omx2009", "lci2000", "nope") else ()
    if verb == "show":
        return Command(("presets", "show", name), inputs=inputs)
    dest = draw(mix.target("y.toml", "y"))
    force = draw(st.sampled_from([[], ["--force"]]))
    return Command(("presets", "copy", name, dest, *force), ((dest, "file"),), inputs)


@st.composite
def bench_commands(draw: st.DrawFn) -> Command:
    """``nicsim bench``: small counts, small systems, bad options, every ``--out``."""
    mix = draw(MIXES)
    kind = draw(mix.of(["engine", "pingpong", "stream", "alltoall", "exchange"], ["nope"]))
    argv = ["bench", "--kind", kind]
    if kind in ("alltoall", "exchange"):
        argv += ["--procs", draw(mix.of(["2", "4"], ["1", "0", "3", "100000", "x"]))]
        if draw(st.booleans()):
            argv += ["--repeat", draw(mix.of(["1", "2"], ["0", "101"]))]
        if draw(one_in(4)):
            argv += ["--count", "100"]
    else:
        # Above the core's real limit (2^32): refused, or an engine bench of minutes.
        over = [str(2**32 + 1)] if kind != "engine" else []
        argv += ["--count", draw(mix.of(["1", "10", "1000"], ["0", "-1", str(2**64), "x", *over]))]
        if not mix.clean and draw(one_in(4)):
            argv += ["--procs", draw(st.sampled_from(["64", "2"]))]  # not read by these kinds
    outputs: list[tuple[str, str]] = []
    if draw(st.booleans()):
        out = draw(mix.target("b.csv", "b.csv", "b.txt"))
        argv += ["--out", out]
        outputs.append((out, "file"))
    return Command(tuple(argv), tuple(outputs))


MISC = st.sampled_from(
    [
        Command(("version",)),
        Command(("no-such-command",)),
        Command(("run", "--help")),
        Command(("run", "--size")),
        Command(("reproduce", "no-such-exp", "--out", "rep"), (("rep", "dir"),)),
        Command(()),
    ]
)

COMMANDS = st.one_of(
    run_commands(),
    run_commands(),
    sweep_commands(),
    replay_commands(),
    model_commands(),
    presets_commands(),
    bench_commands(),
    MISC,
)
