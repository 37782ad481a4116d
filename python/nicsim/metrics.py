"""What a run reports: the names of its metrics, its headline, and their groups.

This module owns three views of the metrics the core returns:

* **Names.** :func:`reported` lists what a run of a workload kind may
  report, in each world (Open-MX, or LCI for the LCI stack's runs on a
  preset of that family: ``nicsim._core.check`` tells which), so
  that ``nicsim sweep --metric`` and :func:`nicsim.sweep`'s ``metrics`` are
  checked before any run (:func:`check_names`).
* **Headline.** :func:`summary` picks the rows ``nicsim run`` prints first:
  the workload's headline (latency and throughput of a ping-pong, message
  rate and throughput of a stream, execution time of NAS or an all-to-all,
  host overhead per packet of a flood), interrupts, CPU per host, drops.
* **Groups.** :func:`groups` sorts every metric of a run into the groups of
  ``nicsim run --all`` (headline, interrupts, drops, host CPU, NIC, I/O bus,
  cache, protocol, run).

* **Validity.** :class:`Metrics` is what a run returns: a dict of the
  metrics by name, where a metric the run could not measure (a rate over
  fewer messages than the window, a ratio over zero events) has the value
  ``None`` and its reason in :attr:`Metrics.not_measured`. Every table,
  claim and output shows it as *not measured*, never as a number
  (:func:`shown`, :func:`why_not`).

It computes nothing: the core does (``crates/nicsim/src/sim/metrics.rs``,
``crates/nicsim/src/lci/``). ``tests/test_metrics.py`` runs every workload
kind of both stacks (Open-MX and LCI) and checks that each name it reports is listed here, so
a metric added to the core without a name here fails that test.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nicsim._core import NicsimError

__all__ = [
    "NOT_MEASURED",
    "WORLDS",
    "Metrics",
    "as_json",
    "check_names",
    "groups",
    "is_measured",
    "reported",
    "summary",
    "why_not",
]

#: How a metric a run could not measure is shown in text.
NOT_MEASURED = "not measured"

Value = float | int | str | None


class Metrics(dict[str, Value]):
    """The metrics of one run: name → value, ``None`` for one not measured.

    A metric the run could not measure (too few messages for a rate, a
    ratio over zero events, a throughput above the link's line rate from a
    run too short) is a key with the value ``None``; :attr:`not_measured`
    maps each such name to the reason, one sentence naming the scenario
    keys that would make it measurable. A measured value is a finite
    number (or a string for a few descriptive entries).

    Parameters
    ----------
    values
        The metrics by name (``None`` for those not measured).
    not_measured
        Name → why it was not measured; each name is also a key of the
        dict, with the value ``None``.

    Examples
    --------
    >>> m = Metrics({"latency_us": 9.5}, {"throughput_MiBps": "run at least 64 messages"})
    >>> m["throughput_MiBps"] is None, m.not_measured["throughput_MiBps"]
    (True, 'run at least 64 messages')
    >>> is_measured(m, "latency_us"), is_measured(m, "throughput_MiBps")
    (True, False)
    """

    not_measured: dict[str, str]

    def __init__(
        self,
        values: Mapping[str, Value] | None = None,
        not_measured: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(values or {})
        self.not_measured = dict(not_measured or {})
        for name in self.not_measured:
            self[name] = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self), self.not_measured))

    def __repr__(self) -> str:
        if not self.not_measured:
            return dict.__repr__(self)
        return f"Metrics({dict.__repr__(self)}, not_measured={self.not_measured!r})"

    def copy(self) -> Metrics:
        """Return a shallow copy that keeps the reasons."""
        return Metrics(self, self.not_measured)


def is_measured(metrics: Mapping[str, object], name: str) -> bool:
    """Whether ``metrics`` has a measured value for ``name`` (present, not ``None`` nor NaN)."""
    value = metrics.get(name)
    if value is None:
        return False
    return not (isinstance(value, float) and math.isnan(value))


def why_not(metrics: Mapping[str, object], name: str) -> str:
    """Return why ``name`` was not measured (a generic reason when ``metrics`` gives none)."""
    reasons = getattr(metrics, "not_measured", None)
    if isinstance(reasons, Mapping) and name in reasons:
        return str(reasons[name])
    if name not in metrics:
        return "the run does not report it"
    return "the run could not measure it"


def as_json(metrics: Mapping[str, object]) -> dict[str, object]:
    """Return the metrics as a JSON object, with the reasons of those not measured.

    Each metric not measured is ``null``; then, when there are any,
    ``"not_measured"`` maps each of their names to the reason.

    Examples
    --------
    >>> as_json(Metrics({"events": 3}, {"latency_us": "why"}))
    {'events': 3, 'latency_us': None, 'not_measured': {'latency_us': 'why'}}
    """
    out: dict[str, object] = dict(metrics)
    reasons = {name: why_not(metrics, name) for name in metrics if not is_measured(metrics, name)}
    if reasons:
        out["not_measured"] = reasons
    return out


#: The worlds a scenario runs in (``nicsim._core.check`` tells which).
WORLDS = ("open-mx", "lci")

#: Hosts whose own metrics (``host0_*``, ``host1_*``) a run reports: the
#: two of the point-to-point workloads.
_HOSTS = (0, 1)

# -- Open-MX world (crates/nicsim/src/sim/metrics.rs) ----------------------

_OPEN_MX = frozenset(
    {"interrupts", "sim_time_us", "events", "queue_peak", "frames", "dropped", "dropped_loss",
     "dropped_ring_full", "dropped_no_endpoint", "duplicates", "cache_miss_rate",
     "medium_messages", "deferral_success_rate",
     # set with Open-MX's transmit completions (host.tx_softirq = true)
     "frag_done_consumed", "frag_done_posted", "region_puts",
     # set when a run had drops or resends
     "dropped_event_queue_full", "dropped_tx_queue", "pull_timeouts", "resends", "peak_ring_slots",
     "peak_outbox", "peak_unexpected", "peak_early", "peak_need_region", "peak_frames_live",
     # set when the polling watchdog is on (nic.watchdog_us > 0)
     "watchdog_held", "watchdog_saved", "watchdog_fetches",
     # set when the NI clock is on (nic.clock_period_us > 0)
     "clock_ticks", "clock_interrupts", "clock_signals", "timers_missed", "timer_late_us_mean",
     "timer_late_us_max", "clock_signal_wait_us_max",
     # set with packet-shifting delivery (nic.rx_delivery = "shifted")
     "rx_dma_writes", "rx_dma_writes_ring", "rx_poll_lines", "rx_poll_lines_ring",
     # set when the kernel tick is on (host.tick.hz > 0)
     "kernel_ticks",
     # set with link-level back-pressure (nic.flow_control = true)
     "flow_control_held", "flow_control_overflow", "flow_control_stops", "flow_control_wait_us_max",
     "flow_control_wait_us_mean", "flow_control_gave_up", "flow_control_given_up_frames"}
)  # fmt: skip
_CACHE_OBJECTS = ("endpoint", "event_ring", "napi", "tx_ring", "dma", "pull_handle", "recvq",
                  "driver", "private", "app_buffer", "code")  # fmt: skip
_OPEN_MX_HOST = frozenset(
    {"interrupts", "rx_interrupts", "kernel_us", "kernel_cores", "coalesce_delay_us", "cpu_cores",
     "tx_contended", "wakes_remote",
     # set with TX DIM (nic.adaptive_tx = true)
     "tx_coalesce_delay_us",
     "nic_rx_ns_per_frame", "kernel_miss_rate", "user_miss_rate",
     # the same, counted on the first process's core (what PAPI counts for that thread)
     "thread_kernel_miss_rate", "thread_user_miss_rate",
     *(f"cache_{obj}_{what}" for obj in _CACHE_OBJECTS for what in ("hits", "misses")),
     # the same per side, counted on the first process's core
     *(f"thread_cache_{obj}_{side}_{what}" for obj in _CACHE_OBJECTS
       for side in ("kernel", "user") for what in ("hits", "misses")),
     # set with a shared I/O bus (nic.dma_shared_bus: emo2004, lci2000), as the LCI stack's
     "bus_busy_frac", "bus_wait_us", "dmas", "dma_bytes", "pio_reads", "pio_writes"}
)  # fmt: skip
_ROUND_TRIP = frozenset(
    {"latency_us", "throughput_MiBps", "interrupts_per_msg", "host0_cpu_pct", "host1_cpu_pct"}
)
_STREAM = frozenset(
    {"msg_rate_per_s", "throughput_MiBps", "interrupts_per_msg", "stream_start_us",
     "stream_end_us"}
)  # fmt: skip
_NAS = frozenset({"exec_time_s", "interrupts_timed"})
_OPEN_MX_KINDS: dict[str, frozenset[str]] = {
    "pingpong": _ROUND_TRIP,
    "echo-nic": _ROUND_TRIP,
    "echo-kernel": _ROUND_TRIP,
    "stream": _STREAM,
    "uniband": _STREAM,
    "flood": frozenset({"overhead_ns_per_packet", "interrupts_per_msg"}),
    "alltoall": frozenset({"time_us"}),
    "exchange": frozenset({"time_us"}),
    "bcast": frozenset(
        {"time_us", "mcast_forwards", "host0_work_us_per_bcast", "host1_work_us_per_bcast"}
    ),
    "nas-is": _NAS,
    "nas-cg": _NAS,
    "nas-mg": _NAS,
    "nas-ft": _NAS,
    "nas-bt": _NAS,
    "nas-ep": _NAS,
    "nas-lu": _NAS,
    "nas-sp": _NAS,
    "asp": frozenset({"exec_time_s", "mcast_forwards"}),
    "qr": frozenset({"exec_time_s", "mcast_forwards"}),
    "fft-alltoall": frozenset({"exec_time_s"}),
}

# -- LCI stack (crates/nicsim/src/lci/) -------------------------------------

_LCI = frozenset(
    {"sim_time_us", "events", "packets", "packets_delivered", "interrupts", "polls_failed",
     "polls_ok", "upcalls", "host_dmas", "host_counter_fetches", "watchdog_interrupts",
     "watchdog_fetches", "clock_interrupts", "signals_returned_at_once", "signals_merged",
     "ni_host_fetches", "explicit_acks", "piggybacked_acks", "window_full_polls"}
)  # fmt: skip
_LCI_HOST = frozenset(
    {"bus_busy_frac", "bus_wait_us", "dmas", "dma_bytes", "pio_reads", "pio_writes"}
)
_MULTICAST = frozenset(
    {"ni_forwards", "ni_forward_waits", "host_forward_copies", "mc_packets_consumed",
     "mc_bytes_consumed", "pio_writes"}
)  # fmt: skip
_STUCK = frozenset({"exec_time_s", "stuck", "stuck_at_us"})
_LCI_KINDS: dict[str, frozenset[str]] = {
    "stream": frozenset({"msg_rate_per_s", "throughput_MBps", "elapsed_us"}),
    "pingpong": frozenset({"latency_us", "throughput_MBps"}),
    "bcast": _MULTICAST | {"latency_us", "throughput_MBps", "burst_us"},
    "asp": _MULTICAST | {"exec_time_s"},
    "qr": _MULTICAST | {"exec_time_s"},
    "dsm": _STUCK | {"remote_ops", "invalidations", "stuck_waiting_procs"},
    "fft-alltoall": _STUCK,
}

_WORLD_TABLES = {
    "open-mx": (_OPEN_MX, _OPEN_MX_HOST, _OPEN_MX_KINDS),
    "lci": (_LCI, _LCI_HOST, _LCI_KINDS),
}


def reported(world: str, kind: str) -> frozenset[str]:
    """Every metric name a run of workload ``kind`` in ``world`` may report.

    Some are reported only when they apply (drops and resends after a loss,
    ``medium_messages`` when medium messages were sent).

    Examples
    --------
    >>> "latency_us" in reported("open-mx", "pingpong")
    True
    >>> "latency_us" in reported("open-mx", "stream")
    False
    """
    common, host, kinds = _WORLD_TABLES[world]
    per_host = {f"host{i}_{name}" for i in _HOSTS for name in host}
    return common | per_host | kinds.get(kind, frozenset())


#: The command that lists every metric a run reports, for error messages.
LIST_METRICS = "to list every metric it reports, run `nicsim run --all` with the same settings"


def check_names(names: Sequence[str], world: str, kind: str, where: str) -> None:
    """Raise :class:`NicsimError` for the first of ``names`` a run of ``kind`` does not report.

    ``where`` names the run (e.g. ``"sweep[2] workload.kind=stream"``). The
    message is one short line: the workload kinds that do report the name,
    else the closest names this run reports, and the command that lists
    them all (``nicsim run --all``).
    """
    known = reported(world, kind)
    for name in names:
        if name in known:
            continue
        _, _, kinds = _WORLD_TABLES[world]
        others = [k for k, listed in kinds.items() if name in listed]
        if others:
            hint = f"; workload.kind = {', '.join(others)} report it"
        else:
            close = difflib.get_close_matches(name, known, n=3)
            hint = f"; closest: {', '.join(map(repr, close))}" if close else ""
        raise NicsimError(
            f"metric {name!r} is not reported by {where} (workload.kind = {kind!r}){hint}; "
            f"{LIST_METRICS}"
        )


# -- the summary of `nicsim run` -------------------------------------------

#: The workload's headline metrics, in the order shown, with what each is.
HEADLINE: dict[str, str] = {
    "latency_us": "one-way latency (half a round trip), µs",
    "msg_rate_per_s": "messages per second at the receiver",
    "throughput_MiBps": "payload throughput, MiB/s",
    "throughput_MBps": "payload throughput, MB/s",
    "time_us": "time per repetition (rank 0), µs",
    "exec_time_s": "execution time, s",
    "overhead_ns_per_packet": "receiver's kernel time per packet, ns",
    "burst_us": "time of the back-to-back broadcasts, µs",
    "stuck": "1: the program could not go on",
}
_INTERRUPTS: dict[str, str] = {
    "interrupts_per_msg": "interrupts per message",
    "interrupts": "interrupts raised, every host",
    "interrupts_timed": "interrupts raised in the timed part",
}
#: Shown only when not zero.
_INTERRUPTS_IF_ANY: dict[str, str] = {
    "watchdog_interrupts": "interrupts of the polling watchdog",
    "clock_interrupts": "interrupts of the NI clock",
}
_CPU = re.compile(r"^host(\d+)_(cpu_cores|cpu_pct)$")
_CPU_WORDS = {
    "cpu_cores": "host {}: cores busy, run average",
    "cpu_pct": "host {}: % of its cores, timed part",
}
_DROPS: dict[str, str] = {"dropped": "frames dropped"}
_DROPS_IF_ANY: dict[str, str] = {
    "dropped_loss": "  lost on the wire (protocol.loss)",
    "dropped_ring_full": "  receive ring full",
    "dropped_no_endpoint": "  no endpoint (invalid packets)",
    "dropped_event_queue_full": "  event queue full",
    "dropped_tx_queue": "  sender's transmit queue full (nic.tx_queue_len)",
    "pull_timeouts": "pull timers that asked again (library.pull_timeout_us)",
    "duplicates": "frames received twice",
    "resends": "frames sent again",
}


def summary(metrics: Mapping[str, object]) -> list[tuple[str, str]]:
    """Return (metric, what it is) of the rows ``nicsim run`` prints first, in order.

    The workload's headline, interrupts, CPU per host and drops, each row
    one the run reported (a counter that is usually zero only when it is
    not).

    Examples
    --------
    >>> rows = summary({"latency_us": 9.9, "interrupts": 4, "dropped": 0, "duplicates": 0})
    >>> [name for name, _ in rows]
    ['latency_us', 'interrupts', 'dropped']
    """
    rows = [(k, v) for k, v in HEADLINE.items() if k in metrics]
    if "stuck_at_us" in metrics and metrics.get("stuck"):
        rows.append(("stuck_at_us", "when it stopped, µs"))
    rows += [(k, v) for k, v in _INTERRUPTS.items() if k in metrics]
    rows += [(k, v) for k, v in _INTERRUPTS_IF_ANY.items() if metrics.get(k)]
    cpu = sorted(
        (int(m.group(1)), m.group(2), key) for key in metrics if (m := _CPU.match(key)) is not None
    )
    rows += [(key, _CPU_WORDS[what].format(host)) for host, what, key in cpu]
    rows += [(k, v) for k, v in _DROPS.items() if k in metrics]
    rows += [(k, v) for k, v in _DROPS_IF_ANY.items() if metrics.get(k)]
    return rows


# -- the groups of `nicsim run --all` ---------------------------------------

_GROUPS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (title, re.compile(pattern))
    for title, pattern in (
        ("interrupts", r"interrupts"),
        ("drops", r"^(dropped.*|duplicates|resends|pull_timeouts)$"),
        (
            "host CPU",
            r"^host\d+_(cpu_.*|kernel_us|kernel_cores|tx_contended|wakes_remote"
            r"|work_us_per_bcast)$|^kernel_ticks$",
        ),
        (
            "NIC",
            r"^host\d+_(nic_.*|(tx_)?coalesce_.*)$|^(ni_.*|host_dmas|host_counter_fetches"
            r"|host_forward_copies|watchdog_.*|mcast_forwards|clock_.*|rx_dma_writes.*|rx_poll_lines.*"
            r"|flow_control_.*)$",
        ),
        ("I/O bus", r"^host\d+_(bus_.*|dmas|dma_bytes|pio_.*)$|^pio_writes$"),
        ("cache", r"cache|miss_rate"),
        (
            "protocol",
            r"^(medium_messages|deferral_success_rate|frag_done_.*|region_puts|stream_.*|packets.*|polls_.*|upcalls"
            r"|signals_.*|.*_acks|window_full_polls|mc_.*|elapsed_us|remote_ops|invalidations"
            r"|stuck.*|timers_missed|timer_late_.*)$",
        ),
        ("run", r"^(sim_time_us|events|frames|queue_peak|peak_.*)$"),
    )
)


def groups(names: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Sort metric names into the groups of ``nicsim run --all``; each name in one group.

    Groups come in a fixed order (headline, interrupts, drops, host CPU,
    NIC, I/O bus, cache, protocol, run, other); names keep their order
    within a group, and empty groups are left out.

    Examples
    --------
    >>> groups(["events", "latency_us", "host0_cpu_cores", "host0_interrupts"])
    [('headline', ['latency_us']), ('interrupts', ['host0_interrupts']), \
('host CPU', ['host0_cpu_cores']), ('run', ['events'])]
    """
    titles = ["headline", *(title for title, _ in _GROUPS), "other"]
    found: dict[str, list[str]] = {title: [] for title in titles}
    for name in names:
        if name in HEADLINE:
            found["headline"].append(name)
            continue
        title = next((t for t, pattern in _GROUPS if pattern.search(name)), "other")
        found[title].append(name)
    return [(title, found[title]) for title in titles if found[title]]
