"""[OMX-MQ] experiments: a cache-efficient multiqueue Open-MX receive stack.

This module owns the experiments of Goglin, "NIC-assisted cache-efficient
receive stack for message passing over Ethernet" (CCPE 23(2), 2011; Euro-Par
2009) on the ``omx2009-mq`` preset: IMB PingPong per interrupt steering,
process binding and I/OAT, with busy or idle cores; the cache misses of the
receive stack and the library; IMB Alltoall against native MX; and the NAS
kernels. Each :class:`~nicsim.exp_base.Experiment` carries its published
values and plot (:mod:`nicsim.plots_mq`); :mod:`nicsim.experiments` lists
them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from nicsim import plots_mq
from nicsim.exp_base import Experiment, Params, Published, ScenarioDict, at, grid, scaled
from nicsim.exp_coal import pingpong_scenario, zero_throughput_at_size_zero

__all__ = ["ALLTOALL", "CACHE", "IDLE", "MQ_PRESET", "NAS", "OMX_MQ", "PINGPONG"]

OMX_MQ = "[OMX-MQ] Cache-efficient Open-MX receive stack (2009/2011)"
#: The [OMX-MQ] software (Open-MX 0.9.2, Open MPI 1.2.6) on the omx2009 hosts.
MQ_PRESET = "omx2009-mq"
MQ_SIZES = (0, 1, 16, 128, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)
#: (steering, binding): the single interrupt on core 0 with the process on the
#: same core (SC), the core sharing its L2 (S$), the other die (SP), the other
#: socket (OP); multiqueue with automatic binding; and DCA beyond the study.
MQ_CONFIGS = (
    ("single-core", "SC"),
    ("single-core", "S$"),
    ("single-core", "SP"),
    ("single-core", "OP"),
    ("multiqueue", "auto"),
    ("multiqueue", "auto+dca"),
)


def _mq_host(binding: str, **extra: Any) -> dict[str, Any]:
    host: dict[str, Any] = {"binding": binding.removesuffix("+dca"), **extra}
    if binding.endswith("+dca"):
        host["dca"] = True
    return host


def _mq_pingpong_configs(quick: bool) -> list[Params]:
    return [
        {"steering": st, "binding": b, "ioat": io, "size_bytes": size}
        for st, b in MQ_CONFIGS
        for io in ("off", "on")
        for size in MQ_SIZES
    ]


def _mqpingpong_scenario(p: Params, quick: bool) -> ScenarioDict:
    # IMB PingPong: the other ranks busy-wait in a barrier, so no core idles
    # (modelled as busy cores); coalescing off as Open-MX recommends.
    scenario = pingpong_scenario({"strategy": "disabled", "size_bytes": p["size_bytes"]}, quick)
    scenario["nic"]["steering"] = p["steering"]
    scenario["host"] = _mq_host(str(p["binding"]), soaker=True, ioat=p["ioat"] == "on")
    return scenario


PINGPONG = Experiment(
    id="multiqueue-pingpong",
    preset=MQ_PRESET,
    title="IMB PingPong: interrupt steering, process binding, I/OAT (busy idle ranks)",
    parameters=("steering", "binding", "ioat", "size_bytes"),
    metrics=("latency_us", "throughput_MiBps"),
    configurations=_mq_pingpong_configs,
    scenario=_mqpingpong_scenario,
    plot=plots_mq.pingpong,
    figsize=(13.0, 5.5),
    finish=zero_throughput_at_size_zero,
    published=(
        Published(
            "0 B latency, single IRQ on core 0, process on the same core",
            10.96,
            at("latency_us", steering="single-core", binding="SC", ioat="off", size_bytes=0),
            OMX_MQ + " (calibration target)",
        ),
        Published(
            "4 MiB throughput, SC",
            719.0,
            at(
                "throughput_MiBps",
                steering="single-core",
                binding="SC",
                ioat="off",
                size_bytes=4 << 20,
            ),
            OMX_MQ + " (calibration target)",
        ),
        Published(
            "4 MiB throughput, SC, I/OAT",
            1056.0,
            at(
                "throughput_MiBps",
                steering="single-core",
                binding="SC",
                ioat="on",
                size_bytes=4 << 20,
            ),
            OMX_MQ + " (calibration target)",
        ),
    ),
)


def _mq_idle_scenario(p: Params, quick: bool) -> ScenarioDict:
    # Only the two communicating ranks: idle cores sleep. The single
    # interrupt goes to core 0; the process is there (yes) or on the other die.
    scenario = pingpong_scenario({"strategy": "disabled", "size_bytes": p["size_bytes"]}, quick)
    scenario["nic"]["steering"] = "single-core"
    scenario["host"] = {"binding": "SC" if p["irq_on_process_core"] == "yes" else "SP"}
    return scenario


IDLE = Experiment(
    id="multiqueue-idle",
    preset=MQ_PRESET,
    title="IMB PingPong with idle (sleeping) cores: interrupt on the process core or not",
    parameters=("irq_on_process_core", "size_bytes"),
    metrics=("latency_us", "throughput_MiBps"),
    configurations=lambda quick: grid(irq_on_process_core=("yes", "no"), size_bytes=MQ_SIZES),
    scenario=_mq_idle_scenario,
    plot=plots_mq.idle,
    figsize=(12.0, 4.5),
    finish=zero_throughput_at_size_zero,
)


def _mq_cache_metrics(p: Params, metrics: dict[str, Any]) -> dict[str, Any]:
    # Receiving host; see docs/design.md for the definition over modelled accesses.
    metrics["kernel_miss_rate"] = metrics["host1_kernel_miss_rate"]
    metrics["user_miss_rate"] = metrics["host1_user_miss_rate"]
    return metrics


def _mq_cache_scenario(p: Params, quick: bool) -> ScenarioDict:
    steering, binding = str(p["steering/binding"]).split("/")
    scenario = pingpong_scenario({"strategy": "disabled", "size_bytes": p["size_bytes"]}, quick)
    scenario["nic"]["steering"] = steering
    scenario["host"] = _mq_host(binding, soaker=True)
    return scenario


CACHE = Experiment(
    id="multiqueue-cache",
    preset=MQ_PRESET,
    title="Cache misses of the receive stack (kernel) and library (user) per steering/binding",
    parameters=("steering/binding", "size_bytes"),
    metrics=("kernel_miss_rate", "user_miss_rate"),
    configurations=lambda quick: grid(
        **{
            "steering/binding": (
                "single-rr/none",
                "single-core/SC",
                "single-core/OP",
                "multiqueue/auto",
            ),
            "size_bytes": (0, 128, 4096, 65536, 1048576),
        }
    ),
    scenario=_mq_cache_scenario,
    plot=plots_mq.cache,
    figsize=(13.0, 4.8),
    finish=_mq_cache_metrics,
)

MQ_A2A_SIZES = (1, 16, 256, 4096, 65536, 1048576, 4194304)
MQ_A2A_CONFIGS = (
    ("single-rr", "open-mx"),
    ("single-core", "open-mx"),
    ("multiqueue", "open-mx"),
    ("multiqueue+dca", "open-mx"),
    ("none", "native-mx"),
)


def _mq_a2a_scenario(p: Params, quick: bool) -> ScenarioDict:
    size = int(p["size_bytes"])
    steering = str(p["steering"])
    host: dict[str, Any] = {}
    if steering.endswith("+dca"):
        host["dca"] = True
    return {
        "nic": {
            "coalescing": "disabled",
            "steering": "single-rr" if steering == "none" else steering.removesuffix("+dca"),
        },
        "host": host,
        "protocol": {"stack": p["stack"]},
        "workload": {
            "kind": "alltoall",
            "size_bytes": size,
            "procs_per_host": 8,
            "iterations": scaled(
                20 if quick else 100, size * 16, 16 << 20 if quick else 128 << 20, 1
            ),
            "warmup": 1,
        },
    }


def _relative_to_native(table: pd.DataFrame) -> pd.DataFrame:
    native = table[table["stack"] == "native-mx"].set_index("size_bytes")["time_us"]
    table = table.copy()
    table["relative_to_native"] = [
        t / native[s] if s in native.index and native[s] > 0 else float("nan")
        for t, s in zip(table["time_us"], table["size_bytes"], strict=True)
    ]
    return table


def _reserve_relative_column(p: Params, metrics: dict[str, Any]) -> dict[str, Any]:
    metrics["relative_to_native"] = float("nan")  # computed over the table by _relative_to_native
    return metrics


ALLTOALL = Experiment(
    id="multiqueue-alltoall",
    preset=MQ_PRESET,
    title="IMB Alltoall, 8 processes per host: time relative to native MX",
    parameters=("steering", "size_bytes", "stack"),
    metrics=("time_us", "relative_to_native"),
    configurations=lambda quick: [
        {"steering": st, "size_bytes": size, "stack": stack}
        for st, stack in MQ_A2A_CONFIGS
        for size in MQ_A2A_SIZES
    ],
    scenario=_mq_a2a_scenario,
    plot=plots_mq.alltoall,
    figsize=(12.0, 4.8),
    finish=_reserve_relative_column,
    post=_relative_to_native,
)

MQ_NAS_CONFIGS = ("single-rr/open-mx", "multiqueue/open-mx", "native/native-mx")


def _mq_nas_scenario(p: Params, quick: bool) -> ScenarioDict:
    steering, stack = str(p["steering/stack"]).split("/")
    bench, cls, _ = str(p["benchmark"]).split(".")
    return {
        "nic": {
            "coalescing": "disabled",
            "steering": "single-rr" if steering == "native" else steering,
        },
        "protocol": {"stack": stack},
        "workload": {"kind": f"nas-{bench}", "class": cls, "procs_per_host": 8},
    }


#: IS (both classes, its compute fitted to the targets) and the CG, MG, FT
#: skeletons of class B (compute from NPB's operation counts).
MQ_NAS_BENCHMARKS = ("is.B.16", "is.C.16", "cg.B.16", "mg.B.16", "ft.B.16")

NAS = Experiment(
    id="multiqueue-nas",
    preset=MQ_PRESET,
    title="NAS IS, CG, MG, FT, 16 processes: execution time per steering/stack",
    parameters=("benchmark", "steering/stack"),
    metrics=("exec_time_s",),
    configurations=lambda quick: grid(
        **{"benchmark": MQ_NAS_BENCHMARKS, "steering/stack": MQ_NAS_CONFIGS}
    ),
    scenario=_mq_nas_scenario,
    plot=plots_mq.nas,
    published=tuple(
        Published(
            f"{b}, single interrupt round-robin, s",
            t,
            at("exec_time_s", **{"benchmark": b, "steering/stack": "single-rr/open-mx"}),
            OMX_MQ + " (calibration target: sets the IS compute cost)",
        )
        for b, t in (("is.B.16", 11.84), ("is.C.16", 14.69))
    ),
)
