"""A tiny stand-in for ``nicsim._core``, for unit tests of the pure-Python layers.

Metrics are a deterministic function of the scenario text (so seeds and
parameters show up in the numbers); nothing is simulated. End-to-end tests
never use this module.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SECTIONS = {"platform", "nic", "host", "protocol", "workload"}
TOP_LEVEL = {"preset", "seed", "pcap", *SECTIONS}


DEFAULT_PRESET = "omx2009"
SEED_LIMIT = 2**63
MEMORY_LIMIT_VAR = "NICSIM_MEMORY_LIMIT_MIB"
MEMORY_SHARES_VAR = "NICSIM_MEMORY_SHARES"
SCALE_MAX_PROCS = {"alltoall": 1024, "exchange": 1024, "nas-is": 8192}
MAX_TIME_NS = 100 * 86_400 * 10**9


class NicsimError(ValueError):
    """Bad input (fake)."""


def _checked(scenario_toml: str) -> dict[str, Any]:
    data = tomllib.loads(scenario_toml)
    for key in data:
        if key not in TOP_LEVEL:
            raise NicsimError(f"{key}: unknown key; allowed: {', '.join(sorted(TOP_LEVEL))}")
    if "kind" not in data.get("workload", {}):
        raise NicsimError("workload.kind: missing; allowed: pingpong, stream, flood")
    return data


def check(scenario_toml: str) -> str:
    _checked(scenario_toml)
    return "open-mx"


def run(scenario_toml: str, progress: object = None) -> dict[str, float | int | str]:
    data = _checked(scenario_toml)
    workload = data["workload"]
    noise = int.from_bytes(hashlib.sha256(scenario_toml.encode()).digest()[:4], "big") / 2**32
    size = int(workload.get("size_bytes", 0))
    latency = 10.0 + size / 1000.0 + noise
    return {
        "latency_us": latency,
        "throughput_MiBps": size / latency,
        "msg_rate_per_s": 400000.0 * (1 + noise / 10),
        "interrupts": 100 + int(noise * 100),
        "interrupts_per_msg": 0.5 + noise / 10,
        "overhead_ns_per_packet": 800.0 + 100 * noise,
        "sim_time_us": 1000.0,
        "events": 1000,
        "frames": 200,
        "dropped": 0,
        "cache_misses": 3,
        "deferral_success_rate": noise,
        "exec_time_s": 20.0 + noise,
        "host1_cpu_cores": 1.0 + noise,
        "host1_kernel_miss_rate": noise,
        "host1_user_miss_rate": noise / 2,
        "host1_thread_kernel_miss_rate": noise,
        "host1_thread_user_miss_rate": noise / 2,
        "time_us": 100.0 + noise,
        "host1_cpu_pct": 10.0 + noise,
    }


PATHS = ("to-nic", "to-kernel", "to-app")


def emo_echo(
    scenario_toml: str,
    path: str,
    sizes: list[int],
    layers: list[tuple[str, float, str, float, float]],
) -> list[dict[str, Any]]:
    """Fake EMO model: linear in size, one term per sum; 8192 B a frame, rendezvous above 32 KiB."""
    tomllib.loads(scenario_toml)
    if path not in PATHS:
        raise NicsimError(f"invalid value for `path`: {path!r} (allowed: {', '.join(PATHS)})")
    out: list[dict[str, Any]] = []
    for size in sizes:
        if size > 32768:
            raise NicsimError(f"model: size_bytes = {size} goes by rendezvous and pull")
        extra = sum(cycles / 1e3 + latency_ns / 1e3 for _, cycles, _, latency_ns, _ in layers)
        latency = 10.0 + size / 1000.0 + extra
        out.append(
            {
                "path": path,
                "size_bytes": size,
                "frames": max(1, -(-size // 8192)),
                "latency_us": latency,
                "rtt_us": 2 * latency,
                "overhead_cycles": 1000.0,
                "overhead_pct": 0.0 if path == "to-nic" else 10.0,
                "gap_us": 1.0,
                "coalescing_wait_us": 0.0,
                "client_terms_us": [("C_N/R_N", latency)],
                "echo_terms_us": [("C_N/R_N", latency)],
                "overhead_terms_cycles": [("C_H", 1000.0)],
                "layers": [name for name, *_ in layers],
                "client": {"C_N_cycles": 1.0},
                "echo": {"C_N_cycles": 1.0},
            }
        )
    return out


def presets() -> list[str]:
    return ["omx2009"]


def preset_toml(name: str) -> str:
    if name != "omx2009":
        raise NicsimError(f"preset = {name!r}: unknown; allowed: omx2009")
    return "# fake preset\n[nic]\ndelay_us = 75.0\n"


def bench(kind: str, count: int) -> dict[str, float]:
    return {
        "events": float(count),
        "events_per_s": 1e7,
        "wall_s": count / 1e7,
        "messages_per_s": 1e6,
    }


def memory_limit_kib() -> int | None:
    return None


def memory_held_kib() -> int | None:
    return None


def memory_check(doing: str, advice: str) -> None:
    return None


def version() -> str:
    return "0.0.0+fake"


def emo_sums(
    vars: dict[str, float],
    config: str,
    layers: list[tuple[str, float, str, float, float]],
) -> dict[str, Any]:
    """Fake: latency = sum of the *_us variables, overhead = sum of the O_* and C_H."""
    if config not in ("full", "traditional", "coalesced", "offload"):
        raise NicsimError(f"invalid value for `config`: {config!r}")
    latency = sum(v for k, v in vars.items() if k.endswith("_us"))
    overhead = sum(v for k, v in vars.items() if k.startswith(("O_", "C_H")))
    return {
        "latency_us": latency,
        "overhead_cycles": overhead,
        "gap_us": 0.0,
        "latency_terms_us": [],
        "overhead_terms_cycles": [],
    }
