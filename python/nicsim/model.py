"""The EMO analytic model ([EMO], SPEC §2.5) from the simulator's own inputs.

This module owns the Python face of the model: the [EMO] measurement
scenarios (echo server in the NIC, in the kernel, or an application; the
coalescing settings none/default/max) and the evaluation of the model on
them. The equations and the preset → variable mapping live in the Rust core
(``crates/nicsim/src/model``, documented in ``docs/emo.md``); nothing here
computes a cost, so model and simulator read one scenario and share every
input.

Examples
--------
>>> from nicsim import model
>>> [e] = model.evaluate("emo2004", path="to-kernel", coalescing="none", sizes=[1000])
>>> round(e.latency_us, 2), round(e.overhead_pct, 2)
(65.59, 7.62)
>>> [name for name, _ in e.echo_terms_us]
['C_N/R_N', 'L_NH', 'C_H/R_H', 'L_W']
>>> mpi = model.Layer("mpi-matching", cycles=880, on="nic", latency_ns=1000)
>>> [m] = model.evaluate("emo2004", path="to-kernel", coalescing="none", sizes=[1000], layers=[mpi])
>>> round(m.latency_us - e.latency_us, 2)  # 10 us + 1 us, on the client's to-app half
5.5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nicsim import _core
from nicsim._core import NicsimError
from nicsim.scenario import Scenario

__all__ = [
    "COALESCING",
    "PATHS",
    "Evaluation",
    "Layer",
    "coalescing_options",
    "echo_scenario",
    "evaluate",
    "evaluate_scenario",
    "sums",
]

#: The [EMO] measurement paths: where the echo server runs.
PATHS = ("to-nic", "to-kernel", "to-app")
#: The [EMO] coalescing settings.
COALESCING = ("none", "default", "max")
#: Workload kind of each path (to-app is the application ping-pong).
PATH_WORKLOADS = {"to-nic": "echo-nic", "to-kernel": "echo-kernel", "to-app": "pingpong"}
#: AceNIC receive frame threshold with jumbo frames: Linux
#: drivers/net/ethernet/alteon/acenic.c DEF_JUMBO_RX_MAX_DESC = 6 (the delay
#: is the preset's NIC default, DEF_JUMBO_RX_COAL = 30 us in ``emo2004``).
DEFAULT_FRAMES = 6


@dataclass(frozen=True)
class Layer:
    """An extra layer of the extensible model, added to both sums.

    Attributes
    ----------
    name
        Shown in the terms, e.g. ``"mpi-matching"``.
    cycles
        C_m: the layer's protocol cycles, on the clock of ``on``.
    on
        ``"nic"`` or ``"host"``.
    latency_ns
        L_am: latency of the layer's crossing.
    overhead_cycles
        O_am: host cycles of the layer's crossing.
    """

    name: str
    cycles: float
    on: str = "nic"
    latency_ns: float = 0.0
    overhead_cycles: float = 0.0

    def as_tuple(self) -> tuple[str, float, str, float, float]:
        """Return the tuple form the core takes."""
        return (self.name, self.cycles, self.on, self.latency_ns, self.overhead_cycles)


@dataclass(frozen=True)
class Evaluation:
    """The model's answer for one path and size.

    Latencies are half the echo round trip (client to-app latency + echo
    path latency) in µs, as the simulator's ``latency_us``; the overhead is
    the echo host's CPU share (all cores). Terms are ``(name, value)``.
    ``frames`` is the number of frames the simulator cuts the message into
    at the MTU; EMO prices the message as one unit whatever it is.
    """

    path: str
    size_bytes: int
    frames: int
    latency_us: float
    rtt_us: float
    overhead_cycles: float
    overhead_pct: float
    gap_us: float
    coalescing_wait_us: float
    client_terms_us: list[tuple[str, float]]
    echo_terms_us: list[tuple[str, float]]
    overhead_terms_cycles: list[tuple[str, float]]
    layers: list[str]
    client: dict[str, float]
    echo: dict[str, float]

    @classmethod
    def from_core(cls, d: Mapping[str, Any]) -> Evaluation:
        """Build from one dict of :func:`nicsim._core.emo_echo`."""
        return cls(
            path=str(d["path"]),
            size_bytes=int(d["size_bytes"]),
            frames=int(d["frames"]),
            latency_us=float(d["latency_us"]),
            rtt_us=float(d["rtt_us"]),
            overhead_cycles=float(d["overhead_cycles"]),
            overhead_pct=float(d["overhead_pct"]),
            gap_us=float(d["gap_us"]),
            coalescing_wait_us=float(d["coalescing_wait_us"]),
            client_terms_us=[(str(n), float(v)) for n, v in d["client_terms_us"]],
            echo_terms_us=[(str(n), float(v)) for n, v in d["echo_terms_us"]],
            overhead_terms_cycles=[(str(n), float(v)) for n, v in d["overhead_terms_cycles"]],
            layers=[str(n) for n in d["layers"]],
            client={str(k): float(v) for k, v in d["client"].items()},
            echo={str(k): float(v) for k, v in d["echo"].items()},
        )


def _check(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise NicsimError(f"invalid value for `{name}`: {value!r} (allowed: {', '.join(allowed)})")


def coalescing_options(setting: str) -> dict[str, Any]:
    """Return the ``[nic]`` options of an [EMO] coalescing setting.

    ``none``: frame threshold and maximum wait 0 (an interrupt per frame);
    ``default``: the NIC driver's defaults (the preset's delay, AceNIC frame
    threshold 6); ``max``: threshold 1000 frames and 100 µs (SPEC §5).

    Examples
    --------
    >>> coalescing_options("max")
    {'coalescing': 'timeout', 'delay_us': 100.0, 'frames': 1000}
    """
    _check("coalescing", setting, COALESCING)
    if setting == "none":
        return {"coalescing": "timeout", "delay_us": 0.0, "frames": 0}
    if setting == "max":
        return {"coalescing": "timeout", "delay_us": 100.0, "frames": 1000}
    return {"coalescing": "timeout", "frames": DEFAULT_FRAMES}


def echo_scenario(
    path: str,
    coalescing: str,
    size_bytes: int,
    *,
    iterations: int = 300,
    warmup: int = 10,
) -> dict[str, Any]:
    """Return the scenario dict (no preset/seed) of one [EMO] measurement.

    The application on host 0 ping-pongs with the echo server of ``path`` on
    host 1; both libraries block while they wait, and a cycle soaker runs on
    the hosts so that host overhead is the CPU share taken from it. The
    coalescing setting is host 1's: host 0 keeps the driver's defaults, as
    the study's Host A did ("Host A remains constant throughout the
    measurements", [EMO] §4).
    """
    _check("path", path, PATHS)
    return {
        "nic": {**coalescing_options(coalescing), "host0": {"frames": DEFAULT_FRAMES}},
        "host": {"wait": "block", "soaker": True},
        "workload": {
            "kind": PATH_WORKLOADS[path],
            "size_bytes": int(size_bytes),
            "iterations": int(iterations),
            "warmup": int(warmup),
        },
    }


def sums(
    variables: Mapping[str, float], config: str = "full", layers: Sequence[Layer] = ()
) -> dict[str, Any]:
    """Evaluate the EMO sums of a configuration for variables you choose.

    Parameters
    ----------
    variables
        ``C_N_cycles``, ``R_N_hz``, ``L_NH_us``, ``C_H_cycles``, ``R_H_hz``,
        ``L_HA_us``, ``L_NA_us``, ``C_A_cycles``, ``O_NH_cycles``,
        ``O_HA_cycles``, ``O_NA_cycles``, ``L_W_us`` (missing: 0).
    config
        ``"full"``, ``"traditional"``, ``"coalesced"`` or ``"offload"``.
    layers
        Extra :class:`Layer` s.

    Returns
    -------
    dict
        ``latency_us``, ``overhead_cycles``, ``gap_us``, ``latency_terms_us``
        and ``overhead_terms_cycles``.

    Examples
    --------
    >>> v = {"C_N_cycles": 880, "R_N_hz": 88e6, "L_NH_us": 7, "C_H_cycles": 1000,
    ...      "R_H_hz": 1e9, "L_HA_us": 3, "O_NH_cycles": 300, "O_HA_cycles": 400}
    >>> r = sums(v, "traditional")
    >>> round(r["latency_us"], 6), r["overhead_cycles"]
    (21.0, 1700.0)
    """
    return _core.emo_sums(
        {k: float(x) for k, x in variables.items()},
        config,
        [layer.as_tuple() for layer in layers],
    )


def evaluate_scenario(
    scenario_toml: str, path: str, sizes: Sequence[int], layers: Sequence[Layer] = ()
) -> list[Evaluation]:
    """Evaluate the model on a scenario TOML text (the one the simulator runs)."""
    _check("path", path, PATHS)
    raw = _core.emo_echo(
        scenario_toml, path, [int(s) for s in sizes], [layer.as_tuple() for layer in layers]
    )
    return [Evaluation.from_core(d) for d in raw]


def evaluate(
    preset: str = "emo2004",
    *,
    path: str = "to-app",
    coalescing: str = "none",
    sizes: Sequence[int] = (100, 1000, 4000, 8000),
    layers: Sequence[Layer] = (),
    overrides: Mapping[str, Any] | None = None,
) -> list[Evaluation]:
    """Evaluate the EMO model for a preset, path and coalescing setting.

    Parameters
    ----------
    preset
        Embedded preset name or a preset TOML file.
    path
        ``"to-nic"``, ``"to-kernel"`` or ``"to-app"``.
    coalescing
        ``"none"``, ``"default"`` or ``"max"``.
    sizes
        Message sizes in bytes (up to the rendezvous threshold; several
        frames are priced as one message).
    layers
        Extra :class:`Layer` s (the preset's ``[[emo.layer]]`` are always in).
    overrides
        Scenario keys to set, by dotted path (e.g. ``{"host.wait": "poll"}``,
        ``{"platform.host.clock_ghz": 1.0}``).

    Returns
    -------
    list of Evaluation
        One per size.

    Raises
    ------
    NicsimError
        Bad preset/path/coalescing/size; the message names the key.
    """
    _check("path", path, PATHS)
    sizes_ok = isinstance(sizes, Sequence) and not isinstance(sizes, str)
    if not sizes_ok or not all(type(s) is int and s >= 0 for s in sizes):
        raise NicsimError(f"sizes = {sizes!r}: expected a list of byte counts (integers >= 0)")
    # The sizes are the model's own (it prices each up to the rendezvous
    # threshold); the scenario's workload only has to be valid.
    scenario = Scenario.from_dict(echo_scenario(path, coalescing, 0))
    scenario.set("preset", preset)
    for key, value in (overrides or {}).items():
        scenario.set(key, value)
    text = scenario.to_toml()
    huge = next((s for s in sizes if s > _SIZE_PROBE), None)
    if huge is not None:
        # Beyond what the core reads (64 bits): its refusal of the largest
        # size it reads gives the range, with the size given.
        try:
            evaluate_scenario(text, path, [_SIZE_PROBE], layers)
        except NicsimError as err:
            raise NicsimError(str(err).replace(str(_SIZE_PROBE), str(huge))) from None
        raise NicsimError(f"sizes: {huge} is beyond 64 bits (allowed: 0 ..= {_SIZE_PROBE})")
    return evaluate_scenario(text, path, sizes, layers)


#: The largest message size the model is asked about when a size is beyond
#: what the core reads: the largest signed 64-bit integer.
_SIZE_PROBE = 2**63 - 1
