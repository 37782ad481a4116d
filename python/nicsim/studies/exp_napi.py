"""Beyond the studies: today's Linux receive knobs on the ``modern`` preset.

This module owns ``napi-knobs``: interrupt coalescing, NAPI deferral with
``gro_flush_timeout``, busy polling and IRQ suspension
(Documentation/networking/napi.rst), each on a ping-pong and a stream, with
the latency, message rate and CPU use they give and the claims the kernel's
documentation makes about them. :mod:`nicsim.studies.experiments` lists it.
"""

from __future__ import annotations

from typing import Any

from nicsim.studies import plots_coal
from nicsim.studies.exp_base import (
    Claim,
    Experiment,
    Params,
    ScenarioDict,
    at,
    grid,
    ratio,
)

__all__ = ["NAPI_KNOBS"]


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
