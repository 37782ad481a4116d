"""[OMX-COAL] experiments: interrupt coalescing for Open-MX on Myri-10G.

This module owns the experiments of Goglin & Furmento, "Finding a tradeoff
between host interrupt load and MPI latency over Ethernet" (Cluster 2009):
ping-pong latency per coalescing strategy, the message rate against the
coalescing delay, the receive-stack overhead of an interrupt, the anatomy
of one large transfer, which packets to mark, mis-ordering and NAS IS; and,
beyond the study, ``napi-knobs`` (today's Linux receive knobs on the
``modern`` preset). Each :class:`~nicsim.exp_base.Experiment` carries its
published values, claims and plot (:mod:`nicsim.plots_coal`);
:mod:`nicsim.experiments` lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from nicsim import plots_coal
from nicsim.exp_base import (
    Claim,
    Experiment,
    Params,
    Published,
    Quote,
    Reader,
    Ref,
    ScenarioDict,
    at,
    difference,
    grid,
    percent_above,
    ratio,
    scaled,
)

__all__ = [
    "DELAY_SWEEP",
    "IRQ_OVERHEAD",
    "MARKING",
    "MISORDER",
    "MSGRATE",
    "NAPI_KNOBS",
    "NAS",
    "NAS_IS",
    "OMX_COAL",
    "PINGPONG",
    "QUICK_STREAM_MESSAGES",
    "STRATEGIES",
    "STREAM_MESSAGES",
    "TRANSFER",
    "pingpong_scenario",
    "zero_throughput_at_size_zero",
]

OMX_COAL = "[OMX-COAL] Open-MX interrupt coalescing on Myri-10G (2009)"
#: The study's key in :data:`nicsim.studies.PAPERS`.
STUDY = "omx-coal"
STRATEGIES = ("disabled", "timeout", "openmx", "stream")
#: Extra rows beyond the study: Linux DIM, and DIM driving openmx's fallback timer.
EXTRA_STRATEGIES = ("adaptive", "openmx-adaptive")
PINGPONG_SIZES = (0, *(1 << k for k in range(23)))  # 0, 1, 2, 4, ..., 4 MiB
MSGRATE_SIZES = (0, 32768, 1048576)
DELAYS_US = (0, 5, 10, 25, 50, 75, 100, 150, 200)
BINDINGS = {"rr": "single-rr", "single": "single-core"}  # irq_binding → nic.steering
IRQ_BINDING_SAVING = difference(
    at("overhead_ns_per_packet", strategy="disabled", irq_binding="rr"),
    at("overhead_ns_per_packet", strategy="disabled", irq_binding="single"),
)


def _percent_saved(after: Reader, before: Reader) -> Reader:
    """Reader of ``100 * (1 - after / before)``."""

    def read(table: pd.DataFrame) -> float | None:
        a, b = after(table), before(table)
        return None if a is None or b is None or b == 0 else 100.0 * (1.0 - a / b)

    return read


#: [OMX-COAL]'s micro-benchmarks run Open-MX itself, not MPI: "a unidirectional
#: stream of 128 bytes messages (i.e. Small messages) between two Open-MX
#: processes" (§IV-B1), "the throughput of an Open-MX ping-pong benchmark"
#: (§IV-B3), "a Open-MX ping-pong" (§IV-C1). Only the NAS runs (§IV-D) go
#: through Open MPI 1.3.0.
NATIVE: dict[str, Any] = {"mpi": False}


def pingpong_scenario(p: Params, quick: bool) -> ScenarioDict:
    """Ping-pong of ``size_bytes`` under ``strategy``, repetitions cut for big messages."""
    size = int(p["size_bytes"])
    volume = (8 << 20) if quick else (64 << 20)
    return {
        "nic": {"coalescing": p["strategy"]},
        "workload": {
            "kind": "pingpong",
            "size_bytes": size,
            "iterations": scaled(100 if quick else 1000, size, volume, 4),
            "warmup": scaled(10 if quick else 100, size, volume // 10, 1),
        },
    }


def _native_pingpong_scenario(p: Params, quick: bool) -> ScenarioDict:
    return {**pingpong_scenario(p, quick), "protocol": NATIVE}


def zero_throughput_at_size_zero(p: Params, metrics: dict[str, Any]) -> dict[str, Any]:
    """Report throughput 0 at 0 B (no bytes move; the core's value is meaningless)."""
    if int(p["size_bytes"]) == 0:
        metrics["throughput_MiBps"] = 0.0
    return metrics


#: Messages per stream run (before byte-volume scaling), full and --quick;
#: the calibration fit runs the same lengths.
STREAM_MESSAGES, QUICK_STREAM_MESSAGES = 20000, 2000


def _stream_workload(size: int, quick: bool) -> dict[str, Any]:
    volume = (32 << 20) if quick else (256 << 20)
    messages = QUICK_STREAM_MESSAGES if quick else STREAM_MESSAGES
    return {
        "kind": "stream",
        "size_bytes": size,
        "messages": scaled(messages, size, volume, 20),
    }


def _msgrate_scenario(p: Params, quick: bool) -> ScenarioDict:
    return {
        "nic": {"coalescing": p["strategy"]},
        "protocol": NATIVE,
        "workload": _stream_workload(int(p["size_bytes"]), quick),
    }


def _delay_sweep_scenario(p: Params, quick: bool) -> ScenarioDict:
    # delay 0 means "coalescing disabled" as on the Myri-10G: a timeout of 0.
    return {
        "nic": {
            "coalescing": "timeout",
            "delay_us": float(p["delay_us"]),
            "steering": BINDINGS[str(p["irq_binding"])],
        },
        "host": {"sleep": p["sleep"] == "on"},
        "protocol": NATIVE,
        "workload": _stream_workload(int(p["size_bytes"]), quick),
    }


def _irq_overhead_scenario(p: Params, quick: bool) -> ScenarioDict:
    return {
        "nic": {"coalescing": p["strategy"], "steering": BINDINGS[str(p["irq_binding"])]},
        "host": {"soaker": True},
        "workload": {"kind": "flood", "packets": 2000 if quick else 20000, "packet_bytes": 128},
    }


#: [OMX-COAL] §IV-C5, on the ping-pong (Fig. 6).
SUMMARY_PINGPONG = Quote(
    STUDY,
    "§IV-C5",
    "Results presented in this section first show that our Open-MX-specific coalescing "
    "strategy is able to achieve a low small-message latency (as if coalescing was "
    "disabled) and a high large-message throughput (as if coalescing was enabled).",
)

PINGPONG = Experiment(
    id="coalescing-pingpong",
    title="Ping-pong latency and throughput per coalescing strategy (native Open-MX)",
    parameters=("strategy", "size_bytes"),
    metrics=("latency_us", "throughput_MiBps"),
    configurations=lambda quick: grid(
        strategy=STRATEGIES + EXTRA_STRATEGIES, size_bytes=PINGPONG_SIZES
    ),
    scenario=_native_pingpong_scenario,
    plot=plots_coal.pingpong,
    figsize=(12.0, 4.8),
    finish=zero_throughput_at_size_zero,
    published=(
        Published(
            "0 B latency, coalescing disabled (native Open-MX)",
            10.0,
            at("latency_us", strategy="disabled", size_bytes=0),
            Ref(STUDY, "§IV-B3"),
            printed="about 10 µs",
            fit="open-mx",
        ),
        Published(
            "0 B latency, 75 µs timeout",
            75.0,
            at("latency_us", strategy="timeout", size_bytes=0),
            Ref(STUDY, "§IV-B3"),
            printed="up to 75 µs",
        ),
    ),
    claims=(
        Claim.below(
            ratio(
                at("latency_us", strategy="openmx", size_bytes=0),
                at("latency_us", strategy="disabled", size_bytes=0),
            ),
            1.1,
            text="openmx keeps the small-message latency of disabled: "
            "latency(openmx, 0 B) / latency(disabled, 0 B)",
            source=SUMMARY_PINGPONG,
        ),
        Claim.above(
            ratio(
                at("throughput_MiBps", strategy="openmx", size_bytes=4 << 20),
                at("throughput_MiBps", strategy="timeout", size_bytes=4 << 20),
            ),
            0.95,
            text="openmx keeps the 4 MiB throughput of timeout: "
            "throughput(openmx) / throughput(timeout)",
            source=SUMMARY_PINGPONG,
        ),
        Claim.at_most(
            ratio(
                at("throughput_MiBps", strategy="disabled", size_bytes=4 << 20),
                at("throughput_MiBps", strategy="timeout", size_bytes=4 << 20),
            ),
            1,
            text="disabled never above timeout at 4 MiB: "
            "throughput(disabled) / throughput(timeout)",
            source=Quote(
                STUDY,
                "§IV-B3",
                "However, large-message throughput increase when interrupt coalescing is "
                "enabled since many packets are transmitted and thus causing the lower "
                "per-packet interrupt overhead to become important.",
            ),
        ),
    ),
    discussion=(
        "At 4 MiB the receiver's bottom half is copy-bound (about 1.9 µs per "
        "1468 B pull reply at the fitted copy rate), so NAPI keeps "
        "polling and the receiver takes no per-packet interrupt in any mode; "
        "`timeout` still waits 75 µs three times per message (rendezvous, pull "
        "requests, first replies). What costs `disabled` more is the sender: "
        "myri10ge reaps transmit completions in its hard handler "
        '(`nic.tx_reap = "hard-irq"`), so without coalescing every pull reply\'s '
        "completion interrupts a round-robin core while the bottom half is still "
        "queueing the block, and the two fight over the transmit state "
        "(`cache.tx_contention_lines`, fitted to the message-rate targets only). "
        "That slows the sender below the receiver's copy rate. The same reap costs "
        "`openmx` a few lines of 0 B latency (it is reaped by the next marked "
        "interrupt), within the study's 10 %."
    ),
)

DELAY_SWEEP = Experiment(
    id="coalescing-delay-sweep",
    title="128 B stream message rate vs coalescing delay, interrupt binding and sleep",
    parameters=("delay_us", "irq_binding", "sleep", "size_bytes"),
    metrics=("msg_rate_per_s", "interrupts_per_msg"),
    configurations=lambda quick: grid(
        delay_us=DELAYS_US, irq_binding=tuple(BINDINGS), sleep=("on", "off"), size_bytes=(128,)
    ),
    scenario=_delay_sweep_scenario,
    plot=plots_coal.delay_sweep,
    published=(
        Published(
            "msg rate, 75 µs, rr, sleep on, 128 B",
            433000.0,
            at("msg_rate_per_s", delay_us=75, irq_binding="rr", sleep="on"),
            Ref(STUDY, "§IV-B1"),
            printed="433k",
            fit="open-mx",
        ),
        Published(
            "disabling coalescing (delay 0) cuts the 128 B rate (rr, sleep on): "
            "rate(0 µs) / rate(75 µs)",
            0.5,
            ratio(
                at("msg_rate_per_s", delay_us=0, irq_binding="rr", sleep="on"),
                at("msg_rate_per_s", delay_us=75, irq_binding="rr", sleep="on"),
            ),
            Ref(STUDY, "§IV-B1"),
            printed="more than a factor of two",
            fit="open-mx",
            bound="<",
        ),
    ),
    claims=(
        Claim.above(
            ratio(
                at("msg_rate_per_s", delay_us=75, irq_binding="rr", sleep="off"),
                at("msg_rate_per_s", delay_us=75, irq_binding="rr", sleep="on"),
            ),
            1.05,
            text="disabling sleep raises the message rate (75 µs, rr): "
            "rate(sleep off) / rate(sleep on)",
            source=Quote(
                STUDY,
                "§IV-B1",
                "Then, letting cores go to sleep when idle appears to have a huge overhead "
                "since disabling sleeping significantly improves the message rate.",
            ),
        ),
    ),
    discussion=(
        "Without coalescing the stream is sender-bound: each transmit completion "
        "is reaped alone on another core while the sender keeps sending, and the "
        "two contend for the transmit state (`cache.tx_contention_lines`, fitted "
        "with the 0 B rates to the 2× cut). With coalescing the sender and the "
        "receiver are within a few percent of each other at the fitted costs. At "
        "75 µs one interrupt per batch lands on a sleeping core and no process "
        "waits for it, so turning sleep off changes nothing: the study's sleep "
        "effect needs a mechanism the model lacks, such as a process that waits "
        'on a woken core once per batch. IMB Uniband (`kind = "uniband"`) waits '
        "so, but it also puts `timeout` far below `openmx`, the reverse of the "
        "study (docs/design.md)."
    ),
)

MSGRATE = Experiment(
    id="coalescing-msgrate",
    title="Receiver-side stream message rate per coalescing strategy",
    parameters=("strategy", "size_bytes"),
    metrics=("msg_rate_per_s", "interrupts_per_msg"),
    configurations=lambda quick: grid(
        strategy=STRATEGIES + EXTRA_STRATEGIES, size_bytes=MSGRATE_SIZES
    ),
    scenario=_msgrate_scenario,
    plot=plots_coal.msgrate,
    figsize=(12.0, 4.5),
    published=(
        *(
            Published(
                f"msg rate, 0 B, {strategy}",
                rate,
                at("msg_rate_per_s", strategy=strategy, size_bytes=0),
                Ref(STUDY, "Table I"),
                printed=f"{rate / 1000:g}k",
                fit="open-mx",
            )
            for strategy, rate in (
                ("disabled", 252000.0),
                ("timeout", 490000.0),
                ("openmx", 423000.0),
                ("stream", 435000.0),
            )
        ),
        Published(
            "disabling coalescing cuts the 0 B rate: rate(timeout) / rate(disabled)",
            2.0,
            ratio(
                at("msg_rate_per_s", strategy="timeout", size_bytes=0),
                at("msg_rate_per_s", strategy="disabled", size_bytes=0),
            ),
            Ref(STUDY, "§IV-C2"),
            printed="(by a factor of 2)",
            fit="open-mx",
        ),
        Published(
            "stream raises fewer interrupts than openmx at 0 B: "
            "interrupts per message(openmx) / (stream)",
            2.0,
            ratio(
                at("interrupts_per_msg", strategy="openmx", size_bytes=0),
                at("interrupts_per_msg", strategy="stream", size_bytes=0),
            ),
            Ref(STUDY, "§IV-C2"),
            printed="by about a factor of 2",
            note="nicsim's sender spaces 0 B messages about 1.8 µs apart (its library, "
            "ioctl and driver work per message), more than a 0 B frame's firmware + DMA "
            "(0.7 µs): Algorithm 2 never finds another DMA pending, so stream defers nothing",
        ),
    ),
    claims=tuple(
        Claim.below(
            ratio(
                at("msg_rate_per_s", strategy="disabled", size_bytes=size),
                at("msg_rate_per_s", strategy="timeout", size_bytes=size),
            ),
            1.0,
            text=f"disabling coalescing cuts the rate of {label} messages too: "
            "rate(disabled) / rate(timeout)",
            source=Quote(
                STUDY,
                "§IV-C2",
                "It first confirms again that disabling interrupt coalescing dramatically "
                "reduces message rate, not only for small messages (by a factor of 2) but "
                "also for large messages",
            ),
        )
        for size, label in ((32768, "32 KiB"), (1048576, "1 MiB"))
    ),
    discussion=(
        "Every 0 B message is marked, so `openmx` interrupts the receiving host "
        "about once every three messages (against once a batch of ~35 with "
        "`timeout`). Each interrupt moves the event ring, the endpoint and the "
        "transmit state of the receiver's own acks between a round-robin core "
        "and the receiver's core; `openmx` falls between `disabled` and "
        "`timeout`, in the study's order. `stream` equals `openmx` at 0 B "
        "because each tiny message costs the sender its library, ioctl and "
        "driver work (about 1.8 µs): the frames arrive that far apart while a 0 B "
        "frame's firmware + DMA takes 0.7 µs, so no other DMA is pending when a "
        "marked one completes and Algorithm 2 never defers (the study has "
        "`stream` 3 % above `openmx`, with half the interrupts). At 32 KiB "
        "`timeout`, `openmx` and `stream` give the same rate to the digit: the "
        "receiver's bottom half (driver, handler and the copy of each 1468 B "
        "fragment into the event ring) is slower than the sender, so after the "
        "first messages its ring never drains, NAPI polls without end and no "
        "receive interrupt is raised under any of them; the interrupts left are "
        "the transmit completions of the receiver's explicit acks (one per 4 "
        "messages: 0.25 per message). Without coalescing the ring drains between "
        "bursts, NAPI re-arms, and each re-arm costs an interrupt delivered "
        "`nic.irq_delivery_ns` later (4 a 32 KiB message, 74 a 1 MiB one): "
        "`disabled` is below `timeout` at both sizes, as §IV-C2 says."
    ),
)

IRQ_OVERHEAD = Experiment(
    id="coalescing-irq-overhead",
    title="Per-packet receive-stack overhead in a flood of invalid 128 B packets",
    parameters=("strategy", "irq_binding"),
    metrics=("overhead_ns_per_packet",),
    configurations=lambda quick: grid(
        strategy=("disabled", "timeout"), irq_binding=("rr", "single")
    ),
    scenario=_irq_overhead_scenario,
    plot=plots_coal.irq_overhead,
    published=(
        Published(
            "overhead per packet, disabled, rr",
            965.0,
            at("overhead_ns_per_packet", strategy="disabled", irq_binding="rr"),
            Ref(STUDY, "§IV-B2"),
            printed="965 ns",
            fit="open-mx",
        ),
        Published(
            "overhead per packet, timeout, rr",
            774.0,
            at("overhead_ns_per_packet", strategy="timeout", irq_binding="rr"),
            Ref(STUDY, "§IV-B2"),
            printed="774 ns",
            fit="open-mx",
        ),
        Published(
            "saving of coalescing, % of the disabled overhead (rr)",
            20.0,
            _percent_saved(
                at("overhead_ns_per_packet", strategy="timeout", irq_binding="rr"),
                at("overhead_ns_per_packet", strategy="disabled", irq_binding="rr"),
            ),
            Ref(STUDY, "§IV-B2"),
            printed="roughly 20 %",
            fit="open-mx",
            note="the printed 965 and 774 ns give 19.8 %",
        ),
        Published(
            "saving of binding the interrupt to one core (disabled), ns",
            40.0,
            IRQ_BINDING_SAVING,
            Ref(STUDY, "§IV-B2"),
            printed="roughly 40 ns",
            fit="open-mx",
        ),
    ),
    claims=(
        Claim.above(
            IRQ_BINDING_SAVING,
            0,
            text="binding the interrupt to one core saves time (disabled): "
            "overhead(rr) − overhead(single)",
            source=Quote(
                STUDY,
                "§IV-B2",
                "Moreover, by binding interrupts on a single core, the overhead drops slightly",
            ),
            unit="ns",
        ),
    ),
    discussion=(
        "The saving of binding comes from the one NAPI/driver line that bounces "
        "between interrupt cores (`cache.napi_lines = 1`): round-robin hands the "
        "interrupt to another die on half the hand-overs. The study's ~40 ns sets "
        "the scale of a line transfer (`cache.same_socket_ns`, fitted; "
        "`other_socket_ns` keeps its estimated ratio), which every other "
        "cross-die cost in the model then uses."
    ),
)


# -- [OMX-COAL]: large-message anatomy, marking, mis-ordering ---------------

#: One 234 KiB message (SPEC §4). At MTU 1500 a pull reply carries 1468 B, so
#: this is 164 replies: 5 full blocks of 32 and a sixth of 4.
TRANSFER_SIZE = 239616
UNMARKED_CLASSES = ("none", "rndv", "pull", "last_pull_reply", "notify")
MISORDER_DEGREES = (0, 1, 3)
MEDIUM_32K = 32768


def _transfer_metrics(p: Params, metrics: dict[str, Any]) -> dict[str, Any]:
    # A transfer = one one-way message of a ping-pong (omx_perf style): its
    # time is half the round trip; interrupts are counted on both hosts.
    metrics["transfer_time_us"] = metrics["latency_us"]
    metrics["interrupts"] = metrics["interrupts_per_msg"]
    return metrics


def _transfer_workload(size: int, quick: bool) -> dict[str, Any]:
    return {"kind": "pingpong", "size_bytes": size, "iterations": 20 if quick else 200, "warmup": 2}


def _transfer_scenario(p: Params, quick: bool) -> ScenarioDict:
    return {
        "nic": {"coalescing": p["strategy"]},
        "protocol": NATIVE,
        "workload": _transfer_workload(int(p["size_bytes"]), quick),
    }


def _marking_scenario(p: Params, quick: bool) -> ScenarioDict:
    unmarked = [] if p["unmarked_class"] == "none" else [p["unmarked_class"]]
    return {
        "nic": {"coalescing": "openmx"},
        "protocol": {**NATIVE, "unmarked": unmarked},
        "workload": _transfer_workload(TRANSFER_SIZE, quick),
    }


def _misorder_scenario(p: Params, quick: bool) -> ScenarioDict:
    # Trials = the one-way messages of a ping-pong; arrival jitter (seeded)
    # varies how the DMAs of successive fragments overlap.
    return {
        "nic": {"coalescing": p["strategy"]},
        "protocol": {**NATIVE, "misorder_degree": int(p["degree"]), "jitter_ns": 600.0},
        "workload": _transfer_workload(MEDIUM_32K, quick),
    }


TRANSFER = Experiment(
    id="coalescing-transfer",
    title="One 234 KiB transfer per strategy: time and interrupts on both hosts",
    parameters=("strategy", "size_bytes"),
    metrics=("transfer_time_us", "interrupts"),
    configurations=lambda quick: grid(
        strategy=STRATEGIES + EXTRA_STRATEGIES, size_bytes=(TRANSFER_SIZE,)
    ),
    scenario=_transfer_scenario,
    plot=plots_coal.transfer,
    finish=_transfer_metrics,
    claims=(
        Claim.below(
            ratio(
                at("transfer_time_us", strategy="openmx"),
                at("transfer_time_us", strategy="disabled"),
            ),
            1.1,
            text="openmx transfers as fast as disabled: time(openmx) / time(disabled)",
            source=Quote(
                STUDY,
                "§IV-C3",
                "Our modified firmware is able to achieve almost the same performance "
                "([held] µs instead of [held] µs) while keeping a very small amount of "
                "interrupts.",
            ),
        ),
        Claim.below(
            ratio(at("interrupts", strategy="openmx"), at("interrupts", strategy="disabled")),
            0.5,
            text="openmx raises far fewer interrupts than disabled: "
            "interrupts(openmx) / interrupts(disabled)",
            source=Quote(
                STUDY,
                "§IV-C3",
                "Thus, the best coalescing delay configuration for this micro-benchmark is to "
                "disable it, even if generates more than [held] times more interrupts per "
                "message",
            ),
        ),
        Claim.below(
            ratio(at("interrupts", strategy="openmx"), at("interrupts", strategy="timeout")),
            1,
            text="openmx raises fewer interrupts than the 75 µs timeout: "
            "interrupts(openmx) / interrupts(timeout)",
            source=Quote(
                STUDY,
                "§IV-C3",
                "We even need a bit less interrupts than the usual coalescing strategy.",
            ),
        ),
    ),
    discussion=(
        "`openmx` is slower than `disabled` on the 234 KiB transfer: its "
        "unmarked pull replies wait for the last reply of each block (marked) or the "
        "75 µs fallback, and the receive bottom half then runs a batch instead of "
        "overlapping with the wire."
    ),
)


def _unmarked(cls: str) -> Reader:
    """time(``cls`` unmarked) / time(nothing unmarked), 234 KiB under openmx."""
    return ratio(
        at("transfer_time_us", unmarked_class=cls),
        at("transfer_time_us", unmarked_class="none"),
    )


#: [OMX-COAL] §IV-C3 on the pull requests and the last pull reply of each block.
MARKING_PULL = Quote(
    STUDY,
    "§IV-C3",
    "Marking pull requests and the last pull replies respectively decreases the transfer "
    "time by [held] and [held] µs. They appear less critical than the Rendezvous message "
    "because the driver tries to pipeline 4 requests at the same time.",
)

MARKING = Experiment(
    id="coalescing-marking",
    title="234 KiB transfer under openmx with one marked packet class unmarked in turn",
    parameters=("unmarked_class",),
    metrics=("transfer_time_us",),
    configurations=lambda quick: grid(unmarked_class=UNMARKED_CLASSES),
    scenario=_marking_scenario,
    plot=plots_coal.marking,
    finish=_transfer_metrics,
    claims=(
        Claim.above(
            _unmarked("rndv"),
            1,
            text="marking the rendezvous helps: time(rndv unmarked) / time(none unmarked)",
            source=Quote(
                STUDY,
                "§IV-C3",
                "we observe that marking the initial Rendezvous packet is critical since it "
                "decreases the time by [held] µs.",
            ),
        ),
        *(
            Claim.above(
                _unmarked(cls),
                1,
                text=f"marking {cls} helps: time({cls} unmarked) / time(none unmarked)",
                source=MARKING_PULL,
            )
            for cls in ("pull", "last_pull_reply")
        ),
        *(
            Claim.below(
                ratio(
                    at("transfer_time_us", unmarked_class=cls),
                    at("transfer_time_us", unmarked_class="rndv"),
                ),
                1,
                text=f"{cls} is less critical than the rendezvous (4 pipelined requests): "
                f"time({cls} unmarked) / time(rndv unmarked)",
                source=MARKING_PULL,
            )
            for cls in ("pull", "last_pull_reply")
        ),
        Claim.below(
            _unmarked("notify"),
            1.02,
            text="marking notify is not critical (within 2 %): "
            "time(notify unmarked) / time(none unmarked)",
            source=Quote(
                STUDY,
                "§IV-C3",
                "Marking the Notify packet does not however appear critical. This surprising "
                "result may be caused by some timing coincidence in this specific "
                "microbenchmark.",
            ),
        ),
    ),
    discussion=(
        "In a ping-pong the notify of one message and the rendezvous of the reply "
        "leave the same host back to back for the same host, so the interrupt of the "
        "marked one sweeps the unmarked one up: unmarking the notify costs little (the "
        'study\'s "timing coincidence"), and unmarking the rendezvous costs less than '
        "unmarking the pull requests or the last pull replies, whose waits the pipeline "
        "of 4 requests (`wire::PULL_BLOCKS_OUTSTANDING`) does not hide here: the reverse "
        "of the study's order."
    ),
)


#: [OMX-COAL] §IV-C4 on how often Algorithm 2 defers a mis-ordered message's interrupt.
MISORDER_SUCCESS = Quote(
    STUDY,
    "§IV-C4",
    "However, the success rate of the optimization is limited to [held] % when a single "
    "packet is mis-ordered, and drops to [held] % when 3 packets are mis-ordered. Indeed, "
    "the firmware appears to be able to defer interrupts by 3 or 4 packets but it fails to "
    "do so as soon a small delay between packets appears.",
)

MISORDER = Experiment(
    id="coalescing-misorder",
    title="32 KiB medium message whose marked last fragment arrives early",
    parameters=("strategy", "degree"),
    metrics=("transfer_time_us", "deferral_success_rate"),
    configurations=lambda quick: grid(strategy=("openmx", "stream"), degree=MISORDER_DEGREES),
    scenario=_misorder_scenario,
    plot=plots_coal.misorder,
    finish=_transfer_metrics,
    claims=(
        Claim.below(
            at("deferral_success_rate", strategy="stream", degree=1),
            1,
            text="stream's deferral does not always succeed with one packet mis-ordered: "
            "success(stream, degree 1)",
            source=MISORDER_SUCCESS,
        ),
        Claim.below(
            difference(
                at("deferral_success_rate", strategy="stream", degree=3),
                at("deferral_success_rate", strategy="stream", degree=1),
            ),
            0,
            text="stream's deferral succeeds less often with 3 packets mis-ordered than with "
            "1: success(stream, degree 3) - success(stream, degree 1)",
            source=MISORDER_SUCCESS,
        ),
        *(
            Claim.below(
                ratio(
                    at("transfer_time_us", strategy="stream", degree=degree),
                    at("transfer_time_us", strategy="openmx", degree=degree),
                ),
                1,
                text=f"stream shortens the mis-ordered transfer (degree {degree}): "
                "time(stream) / time(openmx)",
                source=Quote(
                    STUDY,
                    "§IV-C4",
                    "Table III shows that the Stream coalescing firmware indeeds help "
                    "performance in the mis-ordered case since the overall transfer time is "
                    "reduced.",
                ),
            )
            for degree in MISORDER_DEGREES[1:]
        ),
        Claim.below(
            at("deferral_success_rate", strategy="openmx", degree=3),
            0.1,
            text="openmx interrupts on the early marked fragment: success(openmx, degree 3)",
            source=Quote(
                STUDY,
                "§III-C",
                "Indeed, since only the last fragment of medium messages or pull replies is "
                "marked, a mis-ordered fragment may cause the interrupt to be raised before "
                "all fragments are actually received.",
            ),
        ),
    ),
    discussion=(
        "As in the study, degree X marks fragment N-X instead of the last one N, and the "
        "fragments leave in order: one ioctl of about 1.37 µs per 1500 B fragment "
        "against 1.22 µs of wire. Algorithm 2 defers while the next fragment has arrived "
        "whole before the marked one's firmware + DMA (about 1.6 µs) completes, so each "
        "full fragment it must reach leaves it about 0.2 µs of slack, and the seeded "
        "0-600 ns arrival jitter breaks the chain of three (degree 3) part of the time. At "
        "degree 1 the one fragment to reach is the short last one (472 B), which arrives "
        "0.45 µs after the marked one: the jitter never breaks it and the deferral always "
        "succeeds, where the study's success was limited. `openmx`'s early interrupt "
        "shortens the transfer instead of lengthening it: the bottom half, slower than "
        "the wire per fragment, is still polling when the fragments after the marked one "
        "arrive, so none waits for the 75 µs fallback."
    ),
)


NAS_CLASSES = ("B", "C")
#: Table IV's rows beside IS that nicsim has a skeleton for, as the study
#: names them (benchmark.class.processes); BT, EP, LU and SP it has not.
NAS_BENCHMARKS = ("cg.C.16", "mg.C.16", "ft.B.16")
#: Table IV, as printed (seconds), per strategy: the rows of NAS_BENCHMARKS
#: and the visible cells of IS.
TABLE_IV = {
    "cg.C.16": {"timeout": "90.04", "disabled": "91.50", "openmx": "90.76", "stream": "90.70"},
    "mg.C.16": {"timeout": "43.91", "disabled": "43.63", "openmx": "43.75", "stream": "43.72"},
    "ft.B.16": {"timeout": "24.24", "disabled": "24.86", "openmx": "24.21", "stream": "24.20"},
    "is.B.16": {"timeout": "21.98"},
    "is.C.16": {"timeout": "32.75"},
}
#: Table IV's column headings, by strategy.
TABLE_IV_COLUMNS = {
    "timeout": "default coalescing (timeout)",
    "disabled": "coalescing disabled",
    "openmx": "openmx",
    "stream": "stream",
}
#: Table IV's speedups of disabled over timeout, as printed (only the
#: non-negligible ones are), by row.
TABLE_IV_DISABLED_SPEEDUPS = {"cg.C.16": "-1.6", "ft.B.16": "-2.5"}


def _nas_scenario(benchmark: str, cls: str, strategy: str) -> ScenarioDict:
    # 16 ranks on 2 hosts (8 per host, one per core: [OMX-COAL] §IV-D); quick
    # runs the same skeleton (its cost does not depend on the repetitions asked).
    return {
        "nic": {"coalescing": strategy},
        "workload": {"kind": f"nas-{benchmark}", "class": cls, "procs_per_host": 8},
    }


def _nas_is_scenario(p: Params, quick: bool) -> ScenarioDict:
    return _nas_scenario("is", str(p["class"]), str(p["strategy"]))


def _nas_benchmark_scenario(p: Params, quick: bool) -> ScenarioDict:
    benchmark, cls, _ = str(p["benchmark"]).split(".")
    return _nas_scenario(benchmark, cls, str(p["strategy"]))


def _table_iv(row: str, where: Params) -> tuple[Published, ...]:
    """Table IV's visible times of ``row``; ``where`` selects its rows in the experiment."""
    return tuple(
        Published(
            f"{row}, {TABLE_IV_COLUMNS[strategy]}, s",
            float(seconds),
            at("exec_time_s", **where, strategy=strategy),
            Ref(STUDY, "Table IV"),
            printed=seconds,
        )
        for strategy, seconds in TABLE_IV[row].items()
    )


def _disabled_speedup(row: str) -> Published:
    """Table IV's printed speedup of disabled over timeout on ``row``, in percent.

    The study prints it beside the time; by its times it is ``100 * (time(timeout)
    / time(disabled) - 1)``, which the note checks.
    """
    times = {strategy: float(seconds) for strategy, seconds in TABLE_IV[row].items()}
    printed = TABLE_IV_DISABLED_SPEEDUPS[row]
    from_times = 100 * (times["timeout"] / times["disabled"] - 1)
    return Published(
        f"{row}, speedup of disabled, %: 100 (time(timeout) / time(disabled) - 1)",
        float(printed),
        percent_above(
            at("exec_time_s", benchmark=row, strategy="timeout"),
            at("exec_time_s", benchmark=row, strategy="disabled"),
        ),
        Ref(STUDY, "Table IV"),
        printed=f"{printed} %",
        note=f"read from the table: its printed times give {from_times:.2f} % by this formula",
    )


def _nas_ratio(where: Params, numerator: str, denominator: str, metric: str) -> Reader:
    return ratio(at(metric, **where, strategy=numerator), at(metric, **where, strategy=denominator))


def _off_one(reader: Reader) -> Reader:
    """Reader of ``|value - 1|``: how far a ratio is from 1."""

    def read(table: pd.DataFrame) -> float | None:
        value = reader(table)
        return None if value is None else abs(value - 1.0)

    return read


#: [OMX-COAL] §IV-D on disabling coalescing, Table IV.
NAS_DISABLED = Quote(
    STUDY,
    "§IV-D",
    "Table IV first shows that disabling interrupt coalescing never helps performance. "
    "It actually increases the execution time of the benchmarks whose network traffic "
    "is the highest (IS, FT and CG)",
)
#: [OMX-COAL] §IV-D on the Open-MX strategy, Table IV.
NAS_OPENMX = Quote(
    STUDY,
    "§IV-D",
    "Our Open-MX coalescing scheme shows comparable performance to the regular "
    "interrupt coalescing for most tests, except the large-message intensive IS where "
    "the execution time is even reduced by [held] %.",
)
#: A ratio nicsim reads as "comparable" (|ratio - 1| below it): nicsim's
#: reading, not the study's; Table IV's CG, MG and FT rows are within 0.8 %.
COMPARABLE = 0.02

#: A statement on a NAS run: (check, numerator, denominator, metric, text
#: with ``{}`` for the row, e.g. ``is.B.16``, quote); checked against 1.
NasClaim = tuple[Callable[..., Claim], str, str, str, str, Quote]
_NAS_DISABLED_CLAIM: NasClaim = (
    Claim.above,
    "disabled",
    "timeout",
    "exec_time_s",
    "disabling coalescing lengthens {}: time(disabled) / time(timeout)",
    NAS_DISABLED,
)
#: The study's statements on IS.
_NAS_IS_CLAIMS: tuple[NasClaim, ...] = (
    (
        Claim.below,
        "openmx",
        "timeout",
        "exec_time_s",
        "openmx shortens {}: time(openmx) / time(timeout)",
        NAS_OPENMX,
    ),
    _NAS_DISABLED_CLAIM,
    (
        Claim.above,
        "stream",
        "openmx",
        "exec_time_s",
        "stream loses openmx's gain on {}: time(stream) / time(openmx)",
        Quote(
            STUDY,
            "§IV-D",
            "However, our Stream coalescing optimization shows disappointing results since the "
            "IS performance gain mostly disappears.",
        ),
    ),
    (
        Claim.above,
        "openmx",
        "timeout",
        "interrupts",
        "openmx raises more interrupts than timeout on {}: "
        "interrupts(openmx) / interrupts(timeout)",
        Quote(
            STUDY,
            "§IV-D",
            "Table V also shows that our firmware optimizations add [held] % interrupts on the "
            "IS benchmark while reducing the execution time by [held] %.",
        ),
    ),
)


def _nas_claims(claims: Sequence[NasClaim], rows: Mapping[str, Params]) -> tuple[Claim, ...]:
    """Each of ``claims`` on each of ``rows`` (name -> where it is in the table)."""
    return tuple(
        make(
            _nas_ratio(where, numerator, denominator, metric),
            1,
            text=text.format(row),
            source=quote,
        )
        for make, numerator, denominator, metric, text, quote in claims
        for row, where in rows.items()
    )


NAS_IS = Experiment(
    id="coalescing-nas-is",
    title="NAS IS, 16 processes on 2 hosts: execution time and interrupts per strategy",
    parameters=("class", "strategy"),
    metrics=("exec_time_s", "interrupts"),
    configurations=lambda quick: grid(
        **{"class": NAS_CLASSES, "strategy": STRATEGIES + EXTRA_STRATEGIES}
    ),
    scenario=_nas_is_scenario,
    plot=plots_coal.nas("class", "is.{}.16"),
    figsize=(11.0, 7.0),
    published=tuple(p for cls in NAS_CLASSES for p in _table_iv(f"is.{cls}.16", {"class": cls})),
    claims=_nas_claims(_NAS_IS_CLAIMS, {f"is.{cls}.16": {"class": cls} for cls in NAS_CLASSES}),
    discussion=(
        "The skeleton computes NPB IS's work (20 B of memory traffic and 17 "
        "instructions per key, the rank's key range zeroed) at the hosts' rates, "
        "8 ranks sharing a host's ~6 GB/s: 0.06 s per iteration in class B, 0.23 s in "
        "class C. In each iteration's all-to-all-v of keys every rank pulls from its 8 "
        "remote peers at once (Open-MX bounds its pulls only by its 256 registerable "
        "regions, `library.max_pulls`), 8 pull windows of 128 replies a rank, and the "
        "hosts' 1024-slot receive rings overflow: under `timeout`, 155,658 frames are "
        "dropped in class B and 214,988 in class C (`dropped_ring_full`). Open-MX's "
        "driver asks a pull's earlier blocks again as soon as a later block completes, "
        "and otherwise after its 1 s pull timer (`library.pull_timeout_us`): class B "
        "takes 20.85 s and class C 36.89 s against the study's 21.98 s and 32.75 s. "
        "The same runs with `platform.nic.ring_slots = 16384` drop nothing and take "
        "1.25 s (B) and 4.94 s (C). Across strategies the 1024-slot runs take 20.85 s "
        "(timeout) to 27.83 s (disabled) in class B and 32.07 s (disabled) to 38.86 s "
        "(openmx) in class C; with 16384 slots `disabled` is the slowest (+21 % in B, "
        "+21 % in C over `timeout`) and `openmx` and `stream` are within 1.5 % of "
        "`timeout`. nicsim's judgement: the receive ring size, an [estimate] in the "
        "preset (`nic.ring_slots`), and the recovery timers decide these times and the "
        "order of the strategies, more than the coalescing strategy does."
    ),
)

NAS = Experiment(
    id="coalescing-nas",
    title="NAS CG, MG, FT, 16 processes on 2 hosts: execution time and interrupts per strategy",
    parameters=("benchmark", "strategy"),
    metrics=("exec_time_s", "interrupts"),
    configurations=lambda quick: grid(benchmark=NAS_BENCHMARKS, strategy=STRATEGIES),
    scenario=_nas_benchmark_scenario,
    plot=plots_coal.nas("benchmark"),
    figsize=(13.0, 7.0),
    published=(
        *(p for row in NAS_BENCHMARKS for p in _table_iv(row, {"benchmark": row})),
        *(_disabled_speedup(row) for row in TABLE_IV_DISABLED_SPEEDUPS),
    ),
    claims=(
        *_nas_claims(
            (_NAS_DISABLED_CLAIM,), {row: {"benchmark": row} for row in ("cg.C.16", "ft.B.16")}
        ),
        Claim.above(
            _nas_ratio({"benchmark": "mg.C.16"}, "disabled", "timeout", "exec_time_s"),
            1 - COMPARABLE,
            text='disabling coalescing does not speed mg.C.16 up (nicsim reads "never helps" '
            f"as not {100 * COMPARABLE:g} % faster; Table IV has it 0.6 % faster): "
            "time(disabled) / time(timeout)",
            source=NAS_DISABLED,
        ),
        *(
            Claim.below(
                _off_one(_nas_ratio({"benchmark": row}, "openmx", "timeout", "exec_time_s")),
                COMPARABLE,
                text=f'openmx comparable to timeout on {row} (nicsim reads "comparable" as '
                f"within {100 * COMPARABLE:g} %): |time(openmx) / time(timeout) - 1|",
                source=NAS_OPENMX,
            )
            for row in NAS_BENCHMARKS
        ),
    ),
    discussion=(
        "CG, MG and FT are the skeletons of `multiqueue-nas`: NPB's operation counts and "
        "memory traffic at the hosts' rates, 8 ranks a host. cg.C.16 drops no frame: "
        "every strategy takes 82.5 to 82.7 s (0.92x of the study's 90.04 s), within "
        "0.3 % of each other, and its resends are of messages left unacknowledged for "
        "the 0.5 s resend delay without any loss. mg.C.16 and ft.B.16 drop nothing on "
        "the hosts' 1024-slot rings: each rank pulls from one remote peer at a time (MG's "
        "2 x 2 x 4 grid, `mg.f` `setup`, puts one neighbour of each rank on the other "
        "host; FT's transpose is Open MPI's pairwise all-to-all). mg takes 41.7 to 42.1 s "
        "under every strategy (0.95x of the study's 43.9 s; its 258 x 258 stencil planes "
        "miss the 2 MB of L2 a rank has, so its stencils read them three times), ft 19.2 "
        "to 19.3 s with coalescing and 21.2 s disabled (0.79x and 0.85x), and the "
        "study's relations hold (disabled 0.7 % above timeout in mg and 10 % in ft, "
        "openmx within 0.5 % of timeout). On 512 slots both drop frames and the 0.5 and "
        '1 s timers then decide their times (docs/presets.md, "Receive rings").'
    ),
)


# -- Beyond the study: today's Linux receive knobs on the `modern` preset ---

#: label -> (nic coalescing, host options). Deferral and IRQ suspension run
#: with NIC coalescing off, as Documentation/networking/napi.rst recommends.
NAPI_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "irq, default coalescing": ("timeout", {}),
    "irq, coalescing off": ("disabled", {}),
    "defer 2 + gro_flush 20us": (
        "disabled",
        {"napi_defer_hard_irqs": 2, "gro_flush_timeout_us": 20.0},
    ),
    # Plain busy polling keeps the NIC's own coalescing: the poller gets there first.
    "busy poll": ("timeout", {"busy_poll": True}),
    "busy poll + irq_suspend 100us": (
        "disabled",
        {
            "busy_poll": True,
            "irq_suspend_timeout_us": 100.0,
            "napi_defer_hard_irqs": 2,
            "gro_flush_timeout_us": 20.0,
        },
    ),
}


def _napi_scenario(p: Params, quick: bool) -> ScenarioDict:
    coalescing, host = NAPI_CONFIGS[str(p["config"])]
    if p["workload"] == "pingpong":
        workload: dict[str, Any] = {"kind": "pingpong", "iterations": 200 if quick else 2000}
    else:
        workload = {"kind": "stream", "messages": 2000 if quick else 20000}
    return {"nic": {"coalescing": coalescing}, "host": host, "workload": workload}


def _napi_metrics(p: Params, metrics: dict[str, Any]) -> dict[str, Any]:
    # One row per (configuration, workload): latency from the ping-pong,
    # message rate from the stream; CPU use of the receiving host in cores.
    nan = float("nan")
    if p["workload"] == "pingpong":
        metrics["msg_rate_per_s"] = nan
    else:
        metrics["latency_us"] = nan
    metrics["cpu_cores"] = metrics["host1_cpu_cores"]
    return metrics


NAPI_KNOBS = Experiment(
    id="napi-knobs",
    title="Linux NAPI knobs on a modern host: latency, message rate and CPU use",
    parameters=("config", "workload"),
    metrics=("latency_us", "msg_rate_per_s", "cpu_cores", "interrupts_per_msg"),
    configurations=lambda quick: grid(config=tuple(NAPI_CONFIGS), workload=("pingpong", "stream")),
    scenario=_napi_scenario,
    plot=plots_coal.napi_knobs,
    figsize=(13.0, 4.0),
    finish=_napi_metrics,
    preset="modern",
    claims=(
        Claim.below(
            ratio(
                at("latency_us", config="busy poll", workload="pingpong"),
                at("latency_us", config="irq, coalescing off", workload="pingpong"),
            ),
            1,
            text="busy polling cuts 0 B latency below interrupt-driven: "
            "latency(busy poll) / latency(irq, coalescing off)",
            source="Linux Documentation/networking/napi.rst (busy polling)",
        ),
        Claim.below(
            at("interrupts_per_msg", config="busy poll + irq_suspend 100us", workload="stream"),
            0.01,
            text="irq suspension removes interrupts under a busy-polling stream: "
            "interrupts per message",
            source="Linux Documentation/networking/napi.rst (IRQ suspension)",
        ),
    ),
)
