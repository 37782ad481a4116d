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

from nicsim.experiments import (
    GROUPS,
    Claim,
    Experiment,
    Params,
    ScenarioDict,
    at,
    grid,
    ratio,
    register,
)

__all__ = [
    "FORWARDINGS",
    "LCI",
    "LCI_PRESET",
    "MC_APPS",
    "MC_SIZES",
    "PAYLOADS",
    "POLLING_STRATEGIES",
    "QUICK_MC_SIZES",
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


register(
    Experiment(
        id="lci-multicast",
        title="Broadcast over 64 processes: latency to the last receiver and sender throughput",
        parameters=("forwarding", "size_bytes"),
        metrics=("latency_us", "throughput_MBps"),
        configurations=lambda quick: grid(
            forwarding=FORWARDINGS, size_bytes=QUICK_MC_SIZES if quick else MC_SIZES
        ),
        scenario=_multicast_scenario,
        preset=LCI_PRESET,
        claims=(
            Claim(
                "NI forwarding beats host-packet forwarding on latency to the last receiver: "
                "latency(host-packet) / latency(ni) at 4 KB > 1",
                ratio(
                    at("latency_us", forwarding="host-packet", size_bytes=4096),
                    at("latency_us", forwarding="ni", size_bytes=4096),
                ),
                lambda r: r > 1.0,
                LCI + " (NI forwarding: the host is off the critical path)",
            ),
            Claim(
                "host-packet forwarding beats message forwarding on latency: "
                "latency(host-message) / latency(host-packet) at 4 KB > 1",
                ratio(
                    at("latency_us", forwarding="host-message", size_bytes=4096),
                    at("latency_us", forwarding="host-packet", size_bytes=4096),
                ),
                lambda r: r > 1.0,
                LCI + " (packets are forwarded as they arrive, copied to the NI once)",
            ),
            Claim(
                "NI forwarding gives the sender at least the throughput of host forwarding: "
                "throughput(ni) / throughput(host-message) at 16 KB >= 1",
                ratio(
                    at("throughput_MBps", forwarding="ni", size_bytes=16384),
                    at("throughput_MBps", forwarding="host-message", size_bytes=16384),
                ),
                lambda r: r >= 1.0,
                LCI + " (NI-level multicast)",
            ),
            Claim(
                "throughput(ni) / throughput(host-packet) at 16 KB >= 1",
                ratio(
                    at("throughput_MBps", forwarding="ni", size_bytes=16384),
                    at("throughput_MBps", forwarding="host-packet", size_bytes=16384),
                ),
                lambda r: r >= 1.0,
                LCI + " (NI-level multicast)",
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
)

register(
    Experiment(
        id="lci-multicast-apps",
        title="ASP and QR on 64 processes per multicast forwarding scheme",
        parameters=("app", "forwarding"),
        metrics=("exec_time_s",),
        configurations=lambda quick: grid(app=MC_APPS, forwarding=FORWARDINGS),
        scenario=_multicast_apps_scenario,
        preset=LCI_PRESET,
        claims=(
            Claim(
                "NI forwarding speeds up ASP: exec_time(host-message) / exec_time(ni) > 1",
                ratio(
                    at("exec_time_s", app="asp", forwarding="host-message"),
                    at("exec_time_s", app="asp", forwarding="ni"),
                ),
                lambda r: r > 1.0,
                LCI + " (receivers compute; the NI forwards without them)",
            ),
            Claim(
                "NI forwarding speeds up QR: exec_time(host-message) / exec_time(ni) > 1",
                ratio(
                    at("exec_time_s", app="qr", forwarding="host-message"),
                    at("exec_time_s", app="qr", forwarding="ni"),
                ),
                lambda r: r > 1.0,
                LCI + " (column broadcast + reduce-to-all per iteration)",
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
)

#: ``nicsim reproduce lci``; later phases append their experiment ids.
GROUPS["lci"] = ("lci-polling", "lci-multicast", "lci-multicast-apps")
