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

__all__ = ["LCI", "LCI_PRESET", "PAYLOADS", "POLLING_STRATEGIES"]

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
