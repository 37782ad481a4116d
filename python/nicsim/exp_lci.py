"""[LCI] experiments: NI-level mechanisms of LCI on Myrinet (c. 2000).

Registers the LCI experiments into :data:`nicsim.experiments.EXPERIMENTS`
and the ``lci`` group (``nicsim reproduce lci``). Every experiment runs on
the ``lci2000`` preset, whose ``family = "lci"`` makes the core run the LCI
world (``crates/nicsim/src/lci``). Scenario sections for the LCI world:
``nic.polling`` (and ``nic.split_bytes``), ``workload.kind`` =
``stream``/``pingpong`` with ``size_bytes``, ``messages``/``iterations``,
``warmup``, ``src``, ``dst``; ``platform`` overrides the preset's tables.

Extending: the multicast and watchdog/timers phases add their experiments
here with :func:`nicsim.experiments.register` and append their ids to
``GROUPS["lci"]``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from nicsim.experiments import (
    GROUPS,
    Claim,
    Experiment,
    Params,
    Reader,
    ScenarioDict,
    at,
    grid,
    ratio,
    register,
)

__all__ = [
    "CLOCK_PERIODS_US",
    "DSM_APPS",
    "LCI",
    "LCI_PRESET",
    "PAYLOADS",
    "POLLING_STRATEGIES",
    "WATCHDOG_DELAYS",
]

LCI = "[LCI] NI-level mechanisms in LCI on Myrinet (c. 2000)"
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
        "nic": {"polling": p["strategy"]},
        "workload": {
            "kind": "stream",
            "size_bytes": size,
            "messages": min(messages, 20000),
            "warmup": 20,
        },
    }


register(
    Experiment(
        id="lci-polling",
        title="Small-message stream throughput per arrival-detection strategy",
        parameters=("strategy", "payload_bytes"),
        metrics=("throughput_MBps", "msg_rate_per_s"),
        configurations=lambda quick: grid(
            strategy=POLLING_STRATEGIES, payload_bytes=QUICK_PAYLOADS if quick else PAYLOADS
        ),
        scenario=_polling_scenario,
        preset=LCI_PRESET,
        claims=(
            Claim(
                "packet shifting beats double DMA on small packets: "
                "throughput(packet-shifting) / throughput(double-dma) at 64 B > 1",
                ratio(
                    at("throughput_MBps", strategy="packet-shifting", payload_bytes=64),
                    at("throughput_MBps", strategy="double-dma", payload_bytes=64),
                ),
                lambda r: r > 1.0,
                LCI + " (packet shifting: one DMA per packet)",
            ),
            Claim(
                "packet shifting beats full-packet DMA on small packets: "
                "throughput(packet-shifting) / throughput(full-packet) at 64 B > 1",
                ratio(
                    at("throughput_MBps", strategy="packet-shifting", payload_bytes=64),
                    at("throughput_MBps", strategy="full-packet", payload_bytes=64),
                ),
                lambda r: r > 1.0,
                LCI + " (full-packet wastes bus bandwidth on small payloads)",
            ),
            Claim(
                "cached-flag polling beats polling NI memory across PCI: "
                "throughput(packet-shifting) / throughput(pio) at 64 B > 1",
                ratio(
                    at("throughput_MBps", strategy="packet-shifting", payload_bytes=64),
                    at("throughput_MBps", strategy="pio", payload_bytes=64),
                ),
                lambda r: r > 1.0,
                LCI + " (a PIO poll costs 467 ns of bus time)",
            ),
        ),
    )
)

#: ``nicsim reproduce lci``; later phases append their experiment ids.
GROUPS["lci"] = ("lci-polling",)

# -- polling watchdog (SPEC §2.4, §4 ``lci-watchdog``) ------------------------

#: CRL-like DSM mixes (``crates/nicsim/src/lci/dsm.rs`` documents their parameters).
DSM_APPS = ("barnes", "fft", "radix")
#: Watchdog delays: ``none`` = interrupt at once per packet, ``inf`` = no interrupts.
WATCHDOG_DELAYS = ("none", "1", "3", "10", "30", "100", "300", "1000", "inf")
#: Processes and shared-region operations per process (full, quick).
DSM_PROCS = 16
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


register(
    Experiment(
        id="lci-watchdog",
        title="DSM execution time and interrupts vs polling-watchdog delay",
        parameters=("app", "delay_us"),
        metrics=("exec_time_s", "interrupts", "stuck"),
        configurations=lambda quick: grid(app=DSM_APPS, delay_us=WATCHDOG_DELAYS),
        scenario=_watchdog_scenario,
        finish=_keep_stuck,
        preset=LCI_PRESET,
        claims=tuple(
            Claim(
                f"{app}: interrupts fall as the watchdog delay grows: "
                f"interrupts(1 us) / interrupts(1000 us) > 1",
                _interrupts_ratio(app, "1", "1000"),
                lambda r: r > 1.0,
                LCI + " (polling watchdog)",
            )
            for app in DSM_APPS
        )
        + tuple(
            Claim(
                f"{app}: interrupting at once costs more than a moderate delay: "
                f"exec_time(none) / exec_time(30 us) > 1",
                ratio(
                    at("exec_time_s", app=app, delay_us="none"),
                    at("exec_time_s", app=app, delay_us="30"),
                ),
                lambda r: r > 1.0,
                LCI + " (optimistic interrupt protection)",
            )
            for app in DSM_APPS
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
  rises again at 300-1000 us; the minimum lies at a moderate delay (10-100 us
  in our runs: about the compute grain of the mix or below it).
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
""",
    )
)

# -- fine-grain timers (SPEC §2.4, §4 ``lci-timers``) -------------------------

#: NI clock periods, 10 us ... 10 ms.
CLOCK_PERIODS_US = (10, 30, 100, 300, 1000, 3000, 10000)
#: FFT all-to-all: processes and iterations (full, quick).
FFT_PROCS = 16
FFT_ITERATIONS = (5, 2)


def _difference(a: Reader, b: Reader) -> Reader:
    def read(table: pd.DataFrame) -> float | None:
        x, y = a(table), b(table)
        return None if x is None or y is None else x - y

    return read


def _timers_scenario(p: Params, quick: bool) -> ScenarioDict:
    return {
        "nic": {"clock_period_us": float(p["clock_period_us"])},
        "protocol": {"send_buffers": 64},
        "workload": {
            "kind": "fft-alltoall",
            "procs": FFT_PROCS,
            "iterations": FFT_ITERATIONS[1] if quick else FFT_ITERATIONS[0],
        },
    }


register(
    Experiment(
        id="lci-timers",
        title="FFT all-to-all over the reliable protocol vs NI clock period",
        parameters=("clock_period_us",),
        metrics=("exec_time_s", "clock_interrupts", "explicit_acks", "window_full_polls"),
        configurations=lambda quick: grid(clock_period_us=CLOCK_PERIODS_US),
        scenario=_timers_scenario,
        preset=LCI_PRESET,
        claims=(
            Claim(
                "very short clock periods cost interrupt overhead: "
                "exec_time(10 us) / exec_time(1000 us) > 1",
                ratio(
                    at("exec_time_s", clock_period_us=10),
                    at("exec_time_s", clock_period_us=1000),
                ),
                lambda r: r > 1.0,
                LCI + " (NI-assisted fine-grain timers)",
            ),
            Claim(
                "very long clock periods delay acks and stall senders: "
                "window_full_polls(10000 us) - window_full_polls(300 us) > 0",
                _difference(
                    at("window_full_polls", clock_period_us=10000),
                    at("window_full_polls", clock_period_us=300),
                ),
                lambda d: d > 0.0,
                LCI + " (64 NI send buffers, delayed explicit acks)",
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
  is overlapped with the butterflies (a 64 KB block is sent after each of the 15
  compute chunks, ~4.3 ms each), so a process enters the library every chunk;
  a sender's 64-buffer window is one block, and it runs out
  (`window_full_polls`) when receivers' acks wait for their next entry instead
  of a clock interrupt. Both effects are small in our runs (execution time
  within about 2% over the whole sweep, and `window_full_polls` is noisy: the
  10 us run also runs out of buffers; we have not isolated why): the
  all-to-all is limited by PIO and link bandwidth, and most acks go out at the
  next library entry anyway. With a quarter of the data per iteration (16 KB
  blocks, 5 ms compute) the window never ran out and only the
  short-period overhead showed.
* Workload sizes are estimates (a 2^20-point FFT on 16 processes, see
  `config/lci.rs`), not the study's program; only the shape is comparable.
""",
    )
)

GROUPS["lci"] = (*GROUPS["lci"], "lci-watchdog", "lci-timers")
