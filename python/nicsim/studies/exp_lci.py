"""[LCI] experiments: NI-level mechanisms of LCI on Myrinet (c. 2000).

This module owns the [LCI] experiments of SPEC §4: arrival detection
(``lci-polling``), NI-level multicast (``lci-multicast``,
``lci-multicast-apps``), the polling watchdog (``lci-watchdog``) and
NI-assisted fine-grain timers (``lci-timers``). Every experiment runs on the
``lci2000`` preset with the LCI stack (``crates/nicsim/src/lci``), which a
scenario asks for with ``protocol.stack = "lci"``, or with a workload only
that stack has (``bcast``, ``asp``, ``qr``, ``dsm``, ``fft-alltoall``; on
``lci2000`` a ``stream`` or ``pingpong`` without the stack runs Open-MX's
MPI). Scenario sections for the LCI stack:
``nic.polling`` (and ``nic.split_bytes``), ``workload.kind`` =
``stream``/``pingpong`` with ``size_bytes``, ``messages``/``iterations``,
``warmup``, ``src``, ``dst``; ``platform`` overrides the preset's tables.
Each :class:`~nicsim.studies.exp_base.Experiment` carries its claims and plot
(:mod:`nicsim.studies.plots_lci`); :mod:`nicsim.studies.experiments` lists them.
"""

from __future__ import annotations

from typing import Any

from nicsim.studies import plots_lci
from nicsim.studies.exp_base import (
    Claim,
    Experiment,
    Params,
    Quote,
    Reader,
    ScenarioDict,
    at,
    difference,
    grid,
    own,
    ratio,
)

__all__ = [
    "CLOCK_PERIODS_US",
    "DSM_APPS",
    "FORWARDINGS",
    "LCI",
    "LCI_PRESET",
    "MC_APPS",
    "MC_SIZES",
    "MULTICAST",
    "MULTICAST_APPS",
    "PAYLOADS",
    "POLLING",
    "POLLING_STRATEGIES",
    "QUICK_MC_SIZES",
    "TIMERS",
    "WATCHDOG",
    "WATCHDOG_DELAYS",
]

LCI = "[LCI] NI-level mechanisms in LCI on Myrinet (c. 2000)"
#: The study's key in :data:`nicsim.studies.papers.PAPERS`.
STUDY = "lci"
#: The platform of every LCI experiment.
LCI_PRESET = "lci2000"
#: SPEC §2.4 arrival-detection strategies.
POLLING_STRATEGIES = ("pio", "double-dma", "full-packet", "static-split", "packet-shifting")
#: Payloads up to one 1 KB packet, then beyond (fragmentation).
PAYLOADS = (0, 16, 32, 64, 128, 256, 512, 768, 1024, 1536, 2048, 4096)
QUICK_PAYLOADS = (0, 64, 512, 1024, 2048)


def _polling_scenario(p: Params, quick: bool) -> ScenarioDict:
    size = int(p["payload_bytes"])
    # About 1 MB (4 MB) or 200 (1000) messages, whichever is more.
    volume = (1 << 20) if quick else (4 << 20)
    floor = 200 if quick else 1000
    messages = max(floor, volume // max(size, 1)) if size > 0 else floor
    return {
        # The LCI stack: on lci2000 a stream of the main world's MPI runs otherwise.
        "protocol": {"stack": "lci"},
        "nic": {"polling": p["strategy"]},
        "workload": {
            "kind": "stream",
            "size_bytes": size,
            "messages": min(messages, 20000),
            "warmup": 20,
        },
    }


#: [LCI] §3.3: which strategies reach the top of Figure 3.
HIGHEST = Quote(
    STUDY, "§3.3", "'Packet shifting' and 'Programmed I/O' attain the highest throughput."
)

POLLING = Experiment(
    id="lci-polling",
    title="Small-message stream throughput per arrival-detection strategy",
    parameters=("strategy", "payload_bytes"),
    metrics=("throughput_MBps", "msg_rate_per_s"),
    configurations=lambda quick: grid(
        strategy=POLLING_STRATEGIES, payload_bytes=QUICK_PAYLOADS if quick else PAYLOADS
    ),
    scenario=_polling_scenario,
    plot=plots_lci.polling,
    preset=LCI_PRESET,
    claims=(
        Claim.above(
            ratio(
                at("throughput_MBps", strategy="packet-shifting", payload_bytes=64),
                at("throughput_MBps", strategy="double-dma", payload_bytes=64),
            ),
            1,
            text="packet shifting beats double DMA on small packets: "
            "throughput(packet-shifting) / throughput(double-dma) at 64 B",
            source=HIGHEST,
        ),
        Claim.above(
            ratio(
                at("throughput_MBps", strategy="packet-shifting", payload_bytes=64),
                at("throughput_MBps", strategy="full-packet", payload_bytes=64),
            ),
            1,
            text="packet shifting beats full-packet DMA on small packets: "
            "throughput(packet-shifting) / throughput(full-packet) at 64 B",
            source=Quote(
                STUDY,
                "§3.3",
                "This yields poor throughput for small packets and throughput remains worse "
                "than with packet shifting until packets are nearly full.",
            ),
        ),
        Claim.above(
            ratio(
                at("throughput_MBps", strategy="pio", payload_bytes=64),
                at("throughput_MBps", strategy="packet-shifting", payload_bytes=64),
            ),
            0.9,
            text="polling NI memory across PCI also attains the highest throughput: "
            "throughput(pio) / throughput(packet-shifting) at 64 B",
            source=HIGHEST,
        ),
    ),
)


# -- Multicast (SPEC §2.4, §3, §4 rows lci-multicast, lci-multicast-apps) ---------

#: SPEC §2.4 forwarding schemes, slowest first.
FORWARDINGS = ("host-message", "host-packet", "ni")
#: Broadcast sizes: one packet and below, then many packets (1 KB each).
MC_SIZES = (0, 16, 64, 256, 1024, 4096, 16384, 65536)
QUICK_MC_SIZES = (0, 256, 4096, 16384)
#: Multicast applications (SPEC §3).
MC_APPS = ("asp", "qr")


def _multicast_scenario(p: Params, quick: bool) -> ScenarioDict:
    size = int(p["size_bytes"])
    # Latency: broadcasts one at a time; throughput: a back-to-back burst of
    # about 256 KB (1 MB), at least 10 (20) broadcasts, at most 100.
    volume = (256 << 10) if quick else (1 << 20)
    floor = 10 if quick else 20
    count = min(100, max(floor, volume // max(size, 1)))
    return {
        "nic": {"forwarding": p["forwarding"]},
        "workload": {
            "kind": "bcast",
            "size_bytes": size,
            "root": 0,
            "iterations": 3 if quick else 10,
            "count": count,
        },
    }


def _multicast_apps_scenario(p: Params, quick: bool) -> ScenarioDict:
    workload: ScenarioDict
    if p["app"] == "asp":
        # 1024 x 1024 32-bit distances: 4 KB rows, 16 rows per process.
        workload = {"kind": "asp", "rows": 1024, "iterations": 128 if quick else 1024}
    else:
        # 512 x 512 doubles: 8 columns per process, 4 KB pivot column at first.
        workload = {"kind": "qr", "cols": 512, "iterations": 64 if quick else 256}
    return {"nic": {"forwarding": p["forwarding"]}, "workload": workload}


#: [LCI] §4.3 on the sender throughput of Figure 5.
BEST_THROUGHPUT = Quote(
    STUDY,
    "§4.3",
    "LCI-ni also has the best throughput, but the difference with host-level forwarding is "
    "less dramatic than in the latency benchmark",
)

MULTICAST = Experiment(
    id="lci-multicast",
    title="Broadcast over 64 processes: latency to the last receiver and sender throughput",
    parameters=("forwarding", "size_bytes"),
    metrics=("latency_us", "throughput_MBps"),
    configurations=lambda quick: grid(
        forwarding=FORWARDINGS, size_bytes=QUICK_MC_SIZES if quick else MC_SIZES
    ),
    scenario=_multicast_scenario,
    plot=plots_lci.multicast,
    preset=LCI_PRESET,
    claims=(
        Claim.above(
            ratio(
                at("latency_us", forwarding="host-packet", size_bytes=4096),
                at("latency_us", forwarding="ni", size_bytes=4096),
            ),
            1,
            text="NI forwarding beats host-packet forwarding on latency to the last receiver: "
            "latency(host-packet) / latency(ni) at 4 KB",
            source=Quote(STUDY, "§4.3", "LCI-ni clearly attains the lowest latency."),
        ),
        Claim.above(
            ratio(
                at("latency_us", forwarding="host-message", size_bytes=4096),
                at("latency_us", forwarding="host-packet", size_bytes=4096),
            ),
            1,
            text="host-packet forwarding beats message forwarding on latency: "
            "latency(host-message) / latency(host-packet) at 4 KB",
            source=Quote(
                STUDY,
                "§4.1",
                "Systems that layer multicasting over message-based point-to-point primitives "
                "delay forwarding until an entire message has been received, which increases "
                "latency and reduces throughput for multipacket messages.",
            ),
        ),
        Claim.at_least(
            ratio(
                at("throughput_MBps", forwarding="ni", size_bytes=16384),
                at("throughput_MBps", forwarding="host-message", size_bytes=16384),
            ),
            1,
            text="NI forwarding gives the sender at least the throughput of host forwarding: "
            "throughput(ni) / throughput(host-message) at 16 KB",
            source=BEST_THROUGHPUT,
        ),
        Claim.at_least(
            ratio(
                at("throughput_MBps", forwarding="ni", size_bytes=16384),
                at("throughput_MBps", forwarding="host-packet", size_bytes=16384),
            ),
            1,
            text="NI forwarding gives the sender at least the throughput of host-packet "
            "forwarding: throughput(ni) / throughput(host-packet) at 16 KB",
            source=BEST_THROUGHPUT,
        ),
    ),
    discussion=(
        "Latency is the mean time from the root's broadcast call to the upcall of the "
        "last packet at the last of the 63 receivers, broadcasts one at a time (the next "
        "starts when the previous has reached everyone: an ideal barrier). Throughput is "
        "the bytes of a back-to-back burst over the time until the last receiver has the "
        "last broadcast, so it is limited by the slowest forwarder, not only by the "
        "root's injection. For single-packet broadcasts below 1 KB `host-packet` and "
        "`host-message` do the same work (forward at the upcall, one short PIO per child "
        "or one PIO plus one 8 B descriptor per extra child) and are within a few "
        "percent of each other; the study's ordering appears from 1 KB up, where the "
        "second PIO copy and the store-and-forward of whole messages dominate. "
        "No cost in the model is tuned to a multicast result."
    ),
)

MULTICAST_APPS = Experiment(
    id="lci-multicast-apps",
    title="ASP and QR on 64 processes per multicast forwarding scheme",
    parameters=("app", "forwarding"),
    metrics=("exec_time_s",),
    configurations=lambda quick: grid(app=MC_APPS, forwarding=FORWARDINGS),
    scenario=_multicast_apps_scenario,
    plot=plots_lci.multicast_apps,
    preset=LCI_PRESET,
    claims=(
        Claim.above(
            ratio(
                at("exec_time_s", app="asp", forwarding="host-message"),
                at("exec_time_s", app="asp", forwarding="ni"),
            ),
            1,
            text="NI forwarding speeds up ASP: exec_time(host-message) / exec_time(ni)",
            source=Quote(
                STUDY,
                "§4.3",
                "Even with application-level polling in LCI-host and MPICH, LCI-ni performs "
                "better.",
            ),
        ),
        Claim.above(
            ratio(
                at("exec_time_s", app="qr", forwarding="host-message"),
                at("exec_time_s", app="qr", forwarding="ni"),
            ),
            1,
            text="NI forwarding speeds up QR: exec_time(host-message) / exec_time(ni)",
            source=Quote(
                STUDY,
                "§4.3",
                "As with ASP, host-level forwarding increases processor overhead. In addition, "
                "the implementations based on host-level forwarding are sensitive to their "
                "higher broadcast latency.",
            ),
        ),
    ),
    discussion=(
        "ASP: 1024 x 1024 32-bit distances in blocks of 16 rows per process; iteration "
        "k's owner broadcasts row k (4 KB) once it has updated it, every process updates "
        "its rows at 6 cycles per element ([estimate], Pentium Pro 200 MHz). QR: 512 x "
        "512 doubles, columns cyclic; per iteration column norms, a reduce-to-all of the "
        "12-byte pivot candidate (reduce up rank 0's binary tree by point-to-point "
        "messages, then a broadcast with the scheme under test), the Householder vector "
        "at the pivot column's owner, the column broadcast and the update. With "
        "`--quick` only the first 128 (ASP) / 64 (QR) iterations run, so times are for "
        "that part of the factorisation. `host-message` is the MPICH-style "
        "message-based broadcast."
    ),
)


# -- polling watchdog (SPEC §2.4, §4 ``lci-watchdog``) ------------------------

#: CRL-like DSM mixes (``crates/nicsim/src/lci/dsm.rs`` documents their parameters).
DSM_APPS = ("barnes", "fft", "radix")
#: Watchdog delays: ``none`` = interrupt at once per packet, ``inf`` = no interrupts.
WATCHDOG_DELAYS = ("none", "1", "3", "10", "30", "100", "300", "1000", "inf")
#: Processes: "three CRL applications run on 64 processors" ([LCI] §5.1, Figure 7).
DSM_PROCS = 64
#: Shared-region operations per process (full, quick).
DSM_OPERATIONS = (300, 40)


def _watchdog_value(delay: str) -> str | float:
    return delay if delay in ("none", "inf") else float(delay)


def _watchdog_scenario(p: Params, quick: bool) -> ScenarioDict:
    return {
        "nic": {"watchdog_us": _watchdog_value(str(p["delay_us"]))},
        "workload": {
            "kind": "dsm",
            "mix": p["app"],
            "procs": DSM_PROCS,
            "operations": DSM_OPERATIONS[1] if quick else DSM_OPERATIONS[0],
        },
    }


def _keep_stuck(_: Params, metrics: dict[str, Any]) -> dict[str, Any]:
    """Make ``stuck`` an integer (a stuck run has ``exec_time_s = NaN``, ``stuck = 1``)."""
    out = dict(metrics)
    out["stuck"] = int(out.get("stuck", 0))
    return out


def _interrupts_ratio(app: str, numerator: str, denominator: str) -> Reader:
    return ratio(
        at("interrupts", app=app, delay_us=numerator),
        at("interrupts", app=app, delay_us=denominator),
    )


WATCHDOG = Experiment(
    id="lci-watchdog",
    title="DSM execution time and interrupts vs polling-watchdog delay",
    parameters=("app", "delay_us"),
    metrics=("exec_time_s", "interrupts", "stuck"),
    configurations=lambda quick: grid(app=DSM_APPS, delay_us=WATCHDOG_DELAYS),
    scenario=_watchdog_scenario,
    # One program per app, run under every delay (as the study ran each application).
    program=("app",),
    plot=plots_lci.watchdog,
    finish=_keep_stuck,
    preset=LCI_PRESET,
    claims=tuple(
        Claim.above(
            _interrupts_ratio(app, "1", "1000"),
            1,
            text=f"{app}: interrupts fall as the watchdog delay grows: "
            "interrupts(1 us) / interrupts(1000 us)",
            source=Quote(
                STUDY,
                "§5.1",
                "LCI implementations use a *polling watchdog* [12] to avoid generating "
                "interrupts unnecessarily. This mechanism *delays* interrupts in the hope that "
                "the target process will soon poll the network.",
            ),
        )
        for app in DSM_APPS
    )
    + tuple(
        Claim.above(
            ratio(
                at("exec_time_s", app=app, delay_us="none"),
                at("exec_time_s", app=app, delay_us="30"),
            ),
            1,
            text=f"{app}: interrupting at once costs more than a moderate delay: "
            "exec_time(none) / exec_time(30 us)",
            source=Quote(
                STUDY,
                "§5.1",
                "Always generating an interrupt immediately "
                "(the \u2018No delay\u2019 data points) also degrades performance.",
            ),
        )
        for app in DSM_APPS
    )
    + tuple(
        Claim.above(
            ratio(
                at("exec_time_s", app=app, delay_us="1000"),
                at("exec_time_s", app=app, delay_us="30"),
            ),
            1,
            text=f"{app}: a long delay costs more than a moderate one: "
            "exec_time(1000 us) / exec_time(30 us)",
            source=Quote(
                STUDY,
                "§5.1",
                "For all applications, performance degrades when the interrupt delay grows "
                "larger than approximately [held] µs.",
            ),
        )
        for app in DSM_APPS
    )
    + tuple(
        Claim.at_least(
            at("stuck", app=app, delay_us="inf"),
            1,
            text=f"{app} does not terminate with interrupts disabled: stuck({app}, inf)",
            source=Quote(
                STUDY,
                "§5.1",
                "In fact, Radix and Barnes do not terminate when interrupts are completely "
                "disabled, unless explicit polls are added to the application.",
            ),
        )
        for app in ("radix", "barnes")
    ),
    discussion="""\
Mechanism (SPEC §2.4): the NI starts a timer when a packet arrives; at expiry it
fetches the host's interrupts-enabled flag and processed counter with one small
DMA and interrupts only when interrupts are enabled and the host made no
progress. Each interrupt is a signal: 8 us kernel dispatch + 17 us user handler
(SPEC §5). The DSM program (CRL-like, `crates/nicsim/src/lci/dsm.rs`) awaits
replies by polling with interrupts disabled and computes with them enabled, so
requests to a computing home wait for the watchdog.

* `none` interrupts for every delivered packet, including replies to a host that
  is polling: the handler returns at once but costs the 25 us delivery each time.
* Short delays interrupt a computing home almost at once (fast service, many
  interrupts); long delays let requests wait up to the delay, so execution time
  rises again at 300-1000 us; the minimum lies at a short to moderate delay
  (1-100 us in our 64-process runs: about the compute grain of the mix or
  below it).
* `inf` (no interrupts): a process that finished its operations sleeps (an
  interrupt-driven wait for the others), so a request to it is never served and
  the run cannot progress. The simulator ends the run and reports it as
  `exec_time_s = NaN`, `stuck = 1` (rather than hanging). With interrupts
  disabled, requests to computing homes are only served when the home polls
  while awaiting its own reply.
* The mixes' parameters (compute grain, remote fraction, write fraction and
  invalidation fan-out, message sizes) are estimates from the published CRL and
  SPLASH-2 characterisations, not measurements of the original programs, so
  only the shape of the curves is comparable with the study.
* Each mix is one program (one seed) run under every delay, as the study ran
  each application. Over base seeds 1-5 (`python -m nicsim.studies.seeds
  lci-watchdog`) the `none` / 30 us ratios and the `inf` verdicts move by
  less than 5 %; the ratios read at 1000 us move by 7-15 %. At that delay the
  end of the run weighs most: the program has no closing barrier, processes
  finish at different times and sleep, and a request to a sleeping home waits
  for a watchdog expiry (1-2 ms), a few such events per run. Longer runs do
  not narrow it (1,500 operations per process: the same spread, and the
  1000 us ratios shift, since the end grows more slowly than the run).
""",
)

# -- fine-grain timers (SPEC §2.4, §4 ``lci-timers``) -------------------------

#: NI clock periods, 10 us ... 10 ms.
CLOCK_PERIODS_US = (10, 30, 100, 300, 1000, 3000, 10000)
#: Processes: "a Fast Fourier Transform (FFT) on CRL and on 64 processors" ([LCI] §5.2).
FFT_PROCS = 64
#: [estimate] The transpose block one process sends to each other one: 64 KB,
#: so that a process sends more than its 64 one-KB send buffers hold before
#: acks return, as the study's FFT does ("processors run out of send buffers
#: unless they receive timely acknowledgements", §5.2). On 64 processes that
#: is 2^24 complex points (16 B each, 4 MB per process).
FFT_BLOCK_BYTES = 65536
#: [estimate] Compute per iteration and process: 5 N log2 N / P flops for
#: N = 2^24, P = 64 (31.5 Mflop) at ~100 Mflop/s (half the Pentium Pro 200's
#: one-flop-per-cycle peak, the core's estimate for the FFT workload).
FFT_COMPUTE_US = 5 * 2**24 * 24 / FFT_PROCS / 100.0
#: Iterations (full, quick): one iteration of 64 processes is about 4 s of
#: simulation on the 2-core test machine.
FFT_ITERATIONS = (3, 1)


def _timers_scenario(p: Params, quick: bool) -> ScenarioDict:
    return {
        "nic": {"clock_period_us": float(p["clock_period_us"])},
        "protocol": {"send_buffers": 64},
        "workload": {
            "kind": "fft-alltoall",
            "procs": FFT_PROCS,
            "iterations": FFT_ITERATIONS[1] if quick else FFT_ITERATIONS[0],
            "size_bytes": FFT_BLOCK_BYTES,
            "compute_us": float(round(FFT_COMPUTE_US)),
        },
    }


TIMERS = Experiment(
    id="lci-timers",
    title="FFT all-to-all over the reliable protocol vs NI clock period",
    parameters=("clock_period_us",),
    metrics=("exec_time_s", "clock_interrupts", "explicit_acks", "window_full_polls"),
    configurations=lambda quick: grid(clock_period_us=CLOCK_PERIODS_US),
    scenario=_timers_scenario,
    # One FFT, run under every clock period.
    program=(),
    plot=plots_lci.timers,
    preset=LCI_PRESET,
    claims=(
        Claim.above(
            ratio(
                at("exec_time_s", clock_period_us=10),
                at("exec_time_s", clock_period_us=1000),
            ),
            1,
            text="very short clock periods cost interrupt overhead: "
            "exec_time(10 us) / exec_time(1000 us)",
            source=own(
                "each clock interrupt is a 25 µs signal ([LCI] §3.1); the study shows "
                "only the long-period side"
            ),
        ),
        Claim.above(
            difference(
                at("window_full_polls", clock_period_us=10000),
                at("window_full_polls", clock_period_us=300),
            ),
            0,
            text="very long clock periods delay acks and stall senders: "
            "window_full_polls(10000 us) - window_full_polls(300 us)",
            source=Quote(
                STUDY,
                "§5.2",
                "During these exchanges, processors run out of send buffers unless they "
                "receive timely acknowledgements.",
            ),
        ),
        Claim.above(
            ratio(
                at("exec_time_s", clock_period_us=10000),
                at("exec_time_s", clock_period_us=300),
            ),
            1,
            text="very long clock periods slow FFT down: exec_time(10000 us) / exec_time(300 us)",
            source=Quote(
                STUDY,
                "§5.2",
                "Figure 8 shows clearly that performance degrades when the clock period is "
                "larger than [held] millisecond.",
            ),
        ),
    ),
    discussion="""\
Mechanism (SPEC §2.4): acks are piggy-backed on data or sent explicitly when a
host soft timer (50 us after the first unacknowledged packet) is found due; the
host polls its clock on every library entry, and the NI raises a clock
interrupt at a tick only if a timer runs and the host has not polled within the
last period. Senders hold an NI send buffer per unacknowledged packet (64).

* Short periods: a computing host with acks pending takes a 25 us signal about
  every period until the ack goes out, and each handler run consumes the
  packets that arrived meanwhile and arms new timers, so interrupts and
  execution time grow as the period shrinks.
* Long periods: acks wait for the receiver's next library entry. The transpose
  is overlapped with the butterflies (a 64 KB block is sent after each of the 63
  compute chunks, ~5 ms each), so a process enters the library every chunk;
  a sender's 64-buffer window is one block, and it runs out
  (`window_full_polls`) when receivers' acks wait for their next entry instead
  of a clock interrupt. Both effects are small in our runs (execution time
  within about 2% over the whole sweep, and `window_full_polls` is not
  monotone: the shortest periods also run out of buffers, since each clock
  interrupt delays the computing host's own sends; we have not isolated it
  further): the all-to-all is limited by PIO and link bandwidth, and most acks
  go out at the next library entry anyway. The same 2^20-point problem as on
  16 processes would leave 4 KB blocks on 64: 4 packets to a peer per chunk,
  never 64 outstanding, and only the short-period overhead shows.
* Workload sizes are estimates (64 KB blocks, a 2^24-point FFT on the study's
  64 processes: `FFT_BLOCK_BYTES`, `FFT_COMPUTE_US`), not the study's program;
  only the shape is comparable. A full run of the sweep simulates about 100 s
  on the 2-core test machine (`--quick`, one iteration: about 25 s).
* One FFT (one seed) runs under every clock period. Over base seeds 1-5 the
  execution times and both ratio claims move by less than 5 %;
  `window_full_polls(10000 us) - window_full_polls(300 us)` moves by 15 %
  (7,605 to 10,316), never changing sign.
""",
)
