"""The compiled nicsim simulator core (Rust, via PyO3).

This stub is hand-written: it documents the binding layer in
``crates/nicsim-py`` and is checked against the compiled module with
``python -m mypy.stubtest nicsim._core``. It owns nothing but the entry
points below (the simulator, presets, bench and the EMO model); scenario
building, sweeps, tables and plots live in the pure Python modules of
:mod:`nicsim`.
"""

from collections.abc import Callable, Iterable
from typing import Any

from nicsim.metrics import Metrics

__all__ = [
    "DEFAULT_PRESET",
    "MAX_TIME_NS",
    "MEMORY_LIMIT_VAR",
    "MEMORY_SHARES_VAR",
    "SCALE_MAX_PROCS",
    "SEED_LIMIT",
    "NicsimError",
    "bench",
    "check",
    "coalescing",
    "emo_echo",
    "emo_sums",
    "memory_check",
    "memory_held_kib",
    "memory_limit_kib",
    "preset_toml",
    "presets",
    "replay",
    "run",
    "run_policy",
    "run_trace",
    "version",
]

DEFAULT_PRESET: str
"""The preset of a scenario that names none (``"omx2009"``, the [OMX-COAL] testbed)."""

SEED_LIMIT: int
"""Seeds are integers ``0 <= seed < SEED_LIMIT`` (2**63: TOML integers are signed 64-bit)."""
MAX_TIME_NS: int
"""The latest time an input may name, in ns (100 days: ``8_640_000_000_000_000``).

A replayed frame's ``time_ns`` (from the first frame) beyond it is refused by
:func:`replay` with an error naming the frame, its time and this limit. A run
may go on ten days past it (a run whose clock passes 110 days stops with an
error); the clock, integer picoseconds in 64 bits, holds 213.5 days.
"""
MEMORY_LIMIT_VAR: str
"""The environment variable that sets a run's memory limit in MiB (``NICSIM_MEMORY_LIMIT_MIB``)."""
MEMORY_SHARES_VAR: str
"""The environment variable that tells a run how many runs share the machine's default limit."""
SCALE_MAX_PROCS: dict[str, int]
"""The most processes of each size benchmark (``"alltoall"``, ``"exchange"``: one rank per
host, at most 1,024 hosts; ``"nas-is"``: 8 ranks per host)."""

class NicsimError(ValueError):
    """Bad input to the simulator.

    Raised for unknown or missing keys, wrong types or units, negative or
    impossible values, impossible topologies and unknown preset names. The
    message is one line naming the offending key, the value given and what is
    allowed, e.g. ``invalid value for `nic.coalescing`: "fast" (allowed: one
    of disabled, timeout, openmx, stream, adaptive, openmx-adaptive)``.
    """

def run(scenario_toml: str, progress: Callable[[int, int], object] | None = None) -> Metrics:
    """Run one scenario and return its metrics.

    The run releases the GIL. After its first 1,024 events and then every
    50 ms of wall time it compares the process's memory with its limit
    (``NICSIM_MEMORY_LIMIT_MIB``), and takes the GIL back to run Python's
    signal handlers and call ``progress``: Ctrl-C stops it with
    ``KeyboardInterrupt``.

    Parameters
    ----------
    scenario_toml
        A scenario as TOML text: optional ``preset``, ``seed``, ``pcap`` and
        the tables ``[platform]``, ``[nic]``, ``[host]``, ``[protocol]`` and
        ``[workload]`` (only ``workload.kind`` is required). Unknown keys are
        errors.
    progress
        Called as ``progress(sim_time_ps, events)`` at those times while the
        run lasts; an exception it raises stops the run and is raised
        unchanged.

    Returns
    -------
    Metrics
        Metric name to value, in name order (:class:`nicsim.metrics.Metrics`,
        a dict): counters (``interrupts``, ``events``, ``frames``,
        ``dropped`` ...) as int, the rest as float, and ``None`` for a
        metric the run could not measure, with its reason in the result's
        ``not_measured`` mapping (name to one sentence).

    Raises
    ------
    NicsimError
        If the scenario is invalid (the message names the key), or the run
        held more memory than its limit (the message gives both).
    KeyboardInterrupt
        If SIGINT arrived during the run (the run stops; a ``pcap`` file
        keeps the frames written until then: the capture is written as the
        run goes, so a caller that wants it whole or not at all gives a
        temporary path and renames it after success).
    """

def replay(
    scenario_toml: str,
    frames: Iterable[tuple[int, int, bytes, bool, int, bool]],
    make_policy: Callable[[], Any] | None = None,
    progress: Callable[[int, int], object] | None = None,
    trace: tuple[int, int, int] | None = None,
) -> tuple[Metrics, tuple[bytes, bytes, bytes, bytes, bytes], dict[str, Any] | None]:
    """Replay captured frames into and out of host 1 of a scenario (its workload is replaced).

    Parameters
    ----------
    scenario_toml
        A scenario as TOML text (its workload stands in for the checks; the core feeds the frames).
    frames
        ``(time_ns, wire_length, header_bytes, marked, flow, sent)`` per
        frame, taken in one at a time (a generator keeps one at a time on
        the Python side; the memory limit is watched as they come); the
        core decodes Open-MX headers (EtherType 0x86DF) itself, and reads
        ``marked`` and ``flow`` only for other frames. ``sent``: the host
        sent the frame (it leaves at ``time_ns``; its transmit
        completion is reported). At most 1,000,000 frames to the host;
        ``time_ns`` at most :data:`MAX_TIME_NS`.
    make_policy, progress
        As for :func:`run_policy` (``None``: the scenario's policy).
    trace
        ``(from_ps, until_ps, cap)``: record the replay's timeline as
        :func:`run_trace` records a run's.

    Returns
    -------
    tuple
        The metrics (``replay_*`` and the run's); per frame to the host
        in arrival order: arrival (ps), delay to the handler's end (ps, -1:
        dropped), the host's interrupts at its arrival and when its handler
        took it; each the bytes of 64-bit integers in the machine's order
        (``array("Q")``, ``array("q")``, ``array("Q")``, ``array("Q")`` read
        them: 8 bytes a frame, not the 40 of a list's integer); then its
        receive queue, a byte each (255: dropped before steering); and the
        timeline (as :func:`run_trace` returns it), or ``None``.

    Raises
    ------
    NicsimError
        An invalid scenario, no frames, too many, a frame later than
        :data:`MAX_TIME_NS` (the message names the frame's index, its time
        and the limit), a policy's error, or more memory held than the
        limit (naming the replay and its frames).
    """

def memory_limit_kib() -> int | None:
    """Return this process's memory limit in KiB (``None``: none is known).

    ``NICSIM_MEMORY_LIMIT_MIB`` if set, else three quarters of the memory
    the process may use (the machine's or its cgroup's), shared among
    ``NICSIM_MEMORY_SHARES`` runs. An invalid value raises
    :class:`NicsimError` naming it.
    """

def memory_held_kib() -> int | None:
    """Return the memory this process holds in KiB (resident; ``None`` where unknown)."""

def memory_check(doing: str, advice: str) -> None:
    """Raise :class:`NicsimError` if the process holds more than its memory limit.

    The error is the one line a run's limit gives: ``"{doing} was stopped
    holding N MiB of memory, over its limit of M MiB (source): {advice}"``.
    A look reads ``/proc`` (about 20 µs): call it every few thousand items
    of a long piece of work. Nothing happens where there is no limit or no
    figure.
    """

def run_policy(
    scenario_toml: str,
    make_policy: Callable[[], Any],
    progress: Callable[[int, int], object] | None = None,
) -> Metrics:
    """Run one scenario with a Python coalescing policy on every receive queue.

    Parameters
    ----------
    scenario_toml
        A scenario as TOML text (as for :func:`run`; its ``nic.coalescing``
        is ignored).
    make_policy
        Called once per receive queue; returns an object with the methods of
        :class:`nicsim.policy.CoalescingPolicy`.
    progress
        As for :func:`run`.

    Raises
    ------
    NicsimError
        If the scenario is invalid, or a policy method raised an
        ``Exception`` or returned something other than ``None`` or a
        :class:`nicsim.policy.Decision` (the message names the method); the
        run stops at the first such error.
    KeyboardInterrupt
        If SIGINT arrived during the run (in a policy method or between
        them): the run stops.
    """

def run_trace(
    scenario_toml: str,
    from_ps: int,
    until_ps: int,
    cap: int,
    make_policy: Callable[[], Any] | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[Metrics, dict[str, Any]]:
    """Run one scenario and record its timeline (:mod:`nicsim.trace` writes it).

    Parameters
    ----------
    scenario_toml
        A scenario as TOML text (as for :func:`run`); not of the LCI stack.
    from_ps, until_ps
        Keep the records that overlap this window of simulated time (ps).
    cap
        Keep at most this many records.
    make_policy
        As for :func:`run_policy`, or ``None``: the scenario's policy.
    progress
        As for :func:`run`.

    Returns
    -------
    tuple
        The metrics (those of the same run untraced) and the timeline:
        ``kinds`` (name, category, Chrome phase, argument name of each record
        kind), ``tracks`` (host, track, name), ``records`` (32 bytes each,
        little-endian: ts and dur in ps, arrow id, argument, host, track,
        kind, 3 bytes of padding), ``over_cap`` (records the cap left out)
        and ``spin_overlap_ps`` (per host, spinning the CPU metrics count
        that the records leave out).
    """

def coalescing(scenario_toml: str) -> str:
    """Return the coalescing strategy a scenario's hosts run, by the core's name for it.

    ``"disabled"``, ``"timeout"``, ``"openmx"``, ``"stream"``,
    ``"adaptive"`` or ``"openmx-adaptive"``: the scenario's
    ``nic.coalescing``, else its preset's ``nic.default_coalescing``, as
    the core resolves it after the checks :func:`run` makes (an Open-MX
    scenario; raises :class:`NicsimError` for one the core refuses).
    """

def check(scenario_toml: str) -> str:
    """Check a scenario as :func:`run` does before it starts, without running it.

    Parsing and every validation of the scenario and its preset; nothing is
    built or simulated, so it takes a fraction of a millisecond.

    Returns
    -------
    str
        The world the scenario runs in: ``"open-mx"``, or ``"lci"`` for a
        preset of the LCI family.

    Raises
    ------
    NicsimError
        If the scenario is invalid (the message is the one :func:`run`
        would raise).
    """

def presets() -> list[str]:
    """Names of the platform presets embedded in the binary, e.g. ``["omx2009"]``."""

def preset_toml(name: str) -> str:
    """Return the TOML text of an embedded preset, with its comments and sources.

    Raises
    ------
    NicsimError
        If ``name`` is not an embedded preset.
    """

def bench(kind: str, count: int) -> dict[str, float]:
    """Time the simulator on a synthetic load.

    Parameters
    ----------
    kind
        ``"engine"`` (bare event queue), ``"pingpong"`` or ``"stream"`` (full
        NIC/interrupt/handler/library path), or ``"alltoall"`` /
        ``"exchange"`` / ``"nas-is"`` (cost per event by system size: 64 B
        all-to-all or IMB Exchange with one rank per host, or NAS IS class S
        with 8 ranks per host, each rank sending about ``messages_per_rank``
        messages whatever the size).
    count
        Number of events (engine), messages / round trips to simulate
        (pingpong, stream), or processes N (alltoall, exchange, nas-is).

    Returns
    -------
    dict
        ``events``, ``events_per_s``, ``wall_s`` and ``messages_per_s``;
        for alltoall, exchange and nas-is: ``procs``, ``events`` (of one
        run), ``runs`` (the world is made and run again until the event
        loops add up to ``min_loop_s`` seconds), ``ns_per_event`` (the event
        loops alone, over all the runs), ``build_s`` and ``wall_s`` (per
        run), ``peak_rss_MiB``, ``dropped``, ``messages_per_rank`` and
        ``sim_time_ms``.

    Raises
    ------
    NicsimError
        If ``kind`` is unknown or ``count`` out of range.
    """

def version() -> str:
    """Version of the compiled core (the Cargo package version)."""

def emo_echo(
    scenario_toml: str,
    path: str,
    sizes: list[int],
    layers: list[tuple[str, float, str, float, float]],
) -> list[dict[str, Any]]:
    """Evaluate the EMO model of an [EMO] echo measurement.

    The variables come from the same scenario the simulator would run (its
    preset and options), so model and simulation share every input.

    Parameters
    ----------
    scenario_toml
        A scenario as TOML text (as for :func:`run`).
    path
        ``"to-nic"``, ``"to-kernel"`` or ``"to-app"``: where the echo server runs.
    sizes
        Message sizes in bytes; a message of several frames is priced as one
        unit (EMO is message-oriented), ``frames`` says how many the
        simulator sends.
    layers
        Extra layers ``(name, cycles, on, latency_ns, overhead_cycles)``,
        ``on`` in ``{"nic", "host"}``; added to both sums of the to-app paths.

    Returns
    -------
    list of dict
        One per size: ``path``, ``size_bytes``, ``frames``, ``latency_us``
        (half round trip), ``rtt_us``, ``overhead_cycles``, ``overhead_pct`` (echo host),
        ``gap_us``, ``coalescing_wait_us``, the terms ``client_terms_us``,
        ``echo_terms_us``, ``overhead_terms_cycles`` (lists of
        ``(name, value)``), ``layers`` (names) and the variables ``client``
        and ``echo`` (dicts such as ``{"C_N_cycles": ..., "L_NH_us": ...}``).

    Raises
    ------
    NicsimError
        Invalid scenario, unknown path, a rendezvous size, or
        a configuration the model does not cover (the message says which).
    """

def emo_sums(
    vars: dict[str, float],
    config: str,
    layers: list[tuple[str, float, str, float, float]],
) -> dict[str, Any]:
    """Evaluate the EMO sums of one configuration for given variables.

    Parameters
    ----------
    vars
        EMO variables by name with their unit: ``C_N_cycles``, ``R_N_hz``,
        ``L_NH_us``, ``C_H_cycles``, ``R_H_hz``, ``L_HA_us``, ``L_NA_us``,
        ``C_A_cycles``, ``O_NH_cycles``, ``O_HA_cycles``, ``O_NA_cycles``,
        ``L_W_us`` (missing: 0; both clocks must be > 0).
    config
        ``"full"``, ``"traditional"``, ``"coalesced"`` or ``"offload"``.
    layers
        Extra layers ``(name, cycles, on, latency_ns, overhead_cycles)``.

    Returns
    -------
    dict
        ``latency_us``, ``overhead_cycles``, ``gap_us`` and the terms
        ``latency_terms_us`` and ``overhead_terms_cycles``.

    Raises
    ------
    NicsimError
        Unknown variable or configuration, a clock <= 0, a bad layer.
    """
