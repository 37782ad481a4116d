r"""What ``ethtool -c`` (and ``-g``, ``-l``) print, as a nicsim scenario.

This module owns ``nicsim presets from-ethtool``: it reads the text ethtool
prints for a device's interrupt coalescing (``ethtool -c``), and when given
its ring sizes (``ethtool -g``) and channels (``ethtool -l``), maps each value
to a scenario key, and lists every value it could not map with the reason.
It neither runs ethtool nor simulates: the scenario it writes is checked by
the core (as ``nicsim run --scenario`` would) before it is written.

The formats read are ethtool's: the netlink reply printers of ethtool 5.x and
6.x (``netlink/coalesce.c`` ``coalesce_reply_cb``, ``netlink/rings.c``
``rings_reply_cb``, ``netlink/channels.c`` ``channels_reply_cb``: a
``label:<tabs>value`` line per attribute, ``n/a`` for what the driver does not
report, ``Adaptive RX: on  TX: on`` and ``CQE mode RX: on  TX: off`` on one
line each) and the older ioctl printers (``ethtool.c`` ``dump_coalesce``,
``dump_ring``, ``dump_channels``: ``label: value``). The meaning of each
value is the kernel's (include/uapi/linux/ethtool.h ``struct
ethtool_coalesce``); how nicsim models it is in ``docs/presets.md``.

Examples
--------
>>> text = "Adaptive RX: off  TX: off\nrx-usecs: 50\nrx-frames: 0\nrx-usecs-irq: n/a\n"
>>> c = convert(text, "modern")
>>> c.scenario["nic"]
{'coalescing': 'timeout', 'delay_us': 50.0, 'frames': 0}
>>> [u.key for u in c.unmapped]
['rx-usecs-irq']
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from nicsim._core import NicsimError

__all__ = ["Conversion", "Unmapped", "convert", "parse", "report", "scenario_text", "write"]

#: A value ethtool prints for an attribute the driver does not report.
NOT_REPORTED = "n/a"
#: Largest microseconds or frames a coalescing value may carry (``__u32``).
U32_MAX = (1 << 32) - 1
#: The two-value lines, ``Adaptive RX: on  TX: on`` and ``CQE mode RX: ..``,
#: read as the keys ethtool -C takes for them.
_PAIRS = {
    "adaptive": ("adaptive-rx", "adaptive-tx"),
    "cqe mode": ("cqe-mode-rx", "cqe-mode-tx"),
}
_PAIR = re.compile(r"^(Adaptive|CQE mode)\s+RX:\s*(\S+)\s+TX:\s*(\S+)\s*$", re.IGNORECASE)
_VALUE = re.compile(r"^([A-Za-z][\w -]*?):\s*(.*?)\s*$")
#: One profile of ``rx-profile`` / ``tx-profile`` (ethtool 6.12+ prints one
#: ``{.usec = N, .pkts = N, .comps = N,}`` per line under its label).
_PROFILE = re.compile(r"\.usec\s*=\s*(\S+?)\s*,\s*\.pkts\s*=\s*(\S+?)\s*,")
#: Values of ``-c`` read from another value's line, or printed as a header.
_HEADERS = ("coalesce parameters for", "ring parameters for", "channel parameters for")


@dataclass(frozen=True)
class Unmapped:
    """A value the converter could not map: its ethtool key, value and why."""

    key: str
    value: str
    why: str

    def line(self) -> str:
        """Return ``key: value (why)``."""
        return f"{self.key}: {self.value} ({self.why})"


@dataclass
class Conversion:
    """A scenario made from ethtool's output, and what it could not map."""

    scenario: dict[str, Any]
    unmapped: list[Unmapped] = field(default_factory=list)
    #: Mapped values with what the model changes (``key: value -> how``).
    notes: list[str] = field(default_factory=list)


def parse(text: str, what: str) -> dict[str, str]:
    r"""Read ethtool's ``label: value`` lines into a dict (the last of a label wins).

    ``Adaptive RX: on  TX: off`` becomes ``adaptive-rx`` and ``adaptive-tx``;
    ``CQE mode RX/TX`` becomes ``cqe-mode-rx`` and ``cqe-mode-tx``; a profile
    label (``rx-profile:``) collects the profile lines under it as
    ``usec,pkts`` pairs joined with ``_``. Labels are lower-cased with spaces
    as dashes (``RX Jumbo`` -> ``rx-jumbo``). ``what`` names the file in errors.

    Examples
    --------
    >>> parse("Adaptive RX: on  TX: off\nrx-usecs:\t8\n", "-c")
    {'adaptive-rx': 'on', 'adaptive-tx': 'off', 'rx-usecs': '8'}
    """
    values: dict[str, str] = {}
    profile: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            profile = None
            continue
        if profile is not None and (m := _PROFILE.search(line)):
            values[profile] += ("_" if values[profile] else "") + f"{m[1]},{m[2]}"
            continue
        if any(line.lower().startswith(h) for h in _HEADERS):
            continue
        if pair := _PAIR.match(line):
            rx, tx = _PAIRS[pair[1].lower()]
            values[rx], values[tx] = pair[2].lower(), pair[3].lower()
            continue
        m = _VALUE.match(line)
        if m is None:
            raise NicsimError(f"{what}: line {line!r} is not what ethtool prints (label: value)")
        key = "-".join(m[1].lower().split())
        if key.endswith("-profile") and not m[2]:
            profile = key
            values[key] = ""
            continue
        values[key] = m[2]
    return values


def _number(key: str, value: str, what: str) -> int:
    if not value.isdigit() or int(value) > U32_MAX:
        raise NicsimError(
            f"{what}: {key}: {value!r} is not a count (allowed: 0 ..= {U32_MAX} or n/a)"
        )
    return int(value)


def _current(values: dict[str, str]) -> dict[str, str]:
    """Return the ``Current hardware settings`` of ``-g`` / ``-l`` output.

    Both print ``Pre-set maximums:`` and then ``Current hardware settings:``
    with the same labels; :func:`parse` keeps the last of each label, which
    is the current one.
    """
    return {
        k: v
        for k, v in values.items()
        if k not in ("pre-set-maximums", "current-hardware-settings")
    }


def _profile(key: str, value: str, what: str) -> list[list[int]]:
    """Return a printed profile table as ``[[usec, frames], ...]``."""
    rows = [pair.split(",") for pair in value.split("_") if pair]
    if len(rows) != 5 or any(len(r) != 2 for r in rows):
        raise NicsimError(f"{what}: {key}: expected 5 profiles of usec and pkts, read {value!r}")
    return [[_number(key, usec, what), _number(key, pkts, what)] for usec, pkts in rows]


def _cores(preset: str) -> int:
    """Return the cores of one host of ``preset`` (its ``[topology]``)."""
    from nicsim import preset_toml, presets
    from nicsim.scenario import loads, read_toml_file

    text = preset_toml(preset) if preset in presets() else read_toml_file(preset, "preset file")
    topo = loads(text, f"preset {preset!r}").get("topology", {})
    return (
        int(topo.get("sockets", 1))
        * int(topo.get("dies_per_socket", 1))
        * int(topo.get("cores_per_die", 1))
    )


#: Why rx-usecs-irq, rx-frames-irq, tx-usecs-irq and tx-frames-irq (a
#: moderation while an interrupt is pending) are not mapped: bnxt and tg3
#: honour them, the drivers of nicsim's NICs do not (myri10ge takes
#: rx-usecs only, mlx5 rx/tx-usecs, -frames, adaptive and CQE mode, acenic
#: has no ethtool coalescing), and the core refuses ``nic.rx_usecs_irq``
#: and its kin with that reason (crates/nicsim/src/config/nic_opts.rs,
#: ``IRQ_MODERATION``).
_IRQ_MODERATION = (
    "a moderation while an interrupt is pending, honoured by bnxt and tg3, "
    "not by the drivers of nicsim's NICs (myri10ge, mlx5, acenic)"
)

#: Keys of ``-c`` the model has no counterpart for, with why.
_NO_MODEL = {
    "stats-block-usecs": "statistics DMA period: no statistics block is modelled",
    "sample-interval": "the old driver-side adaptive scheme (pkt-rate-low/high): not modelled",
    "pkt-rate-low": "the old driver-side adaptive scheme: not modelled",
    "pkt-rate-high": "the old driver-side adaptive scheme: not modelled",
    **{f"{d}-{what}-irq": _IRQ_MODERATION for d in ("rx", "tx") for what in ("usecs", "frames")},
    "tx-aggr-max-bytes": "transmit aggregation: not modelled",
    "tx-aggr-max-frames": "transmit aggregation: not modelled",
    "tx-aggr-time-usecs": "transmit aggregation: not modelled",
    "rx-cqe-frames": "completion-entry coalescing: not modelled",
    "rx-cqe-nsecs": "completion-entry coalescing: not modelled",
    **{
        f"{d}-{what}-{level}": "the old driver-side adaptive scheme: not modelled"
        for d in ("rx", "tx")
        for what in ("usecs", "frame", "frames")
        for level in ("low", "high")
    },
}


def convert(
    coalesce: str,
    preset: str,
    rings: str | None = None,
    channels: str | None = None,
    source: str = "ethtool -c",
) -> Conversion:
    """Map ``ethtool -c`` output (and ``-g``, ``-l`` output) onto a scenario of ``preset``.

    Adaptive RX on becomes ``nic.coalescing = "adaptive"`` (Linux DIM) with
    ``nic.adaptive_tx``, ``nic.cqe_mode_rx``/``_tx``, ``nic.rx_profile``/
    ``tx_profile`` from what is printed; off, the fixed timer:
    ``nic.coalescing = "timeout"`` with ``delay_us``/``frames`` (rx-usecs,
    rx-frames; CQE mode RX on: the timer restarted at each completion,
    ``timeout_mode = "packet"``). tx-usecs/tx-frames become the transmit
    completions' own timer. The ring's RX size becomes
    ``platform.nic.ring_slots``; more than one channel becomes
    ``nic.steering = "multiqueue"``. Every other value is in
    :attr:`Conversion.unmapped`, with why.
    """
    v = parse(coalesce, source)
    nic: dict[str, Any] = {}
    out = Conversion({"preset": preset, "nic": nic})
    done: set[str] = set()

    def skip(key: str, why: str) -> None:
        if key in v and key not in done:
            out.unmapped.append(Unmapped(key, v[key], why))
        done.add(key)

    def given(key: str) -> str | None:
        value = v.get(key)
        return None if value is None or value == NOT_REPORTED else value

    def flag(key: str) -> bool | None:
        value = given(key)
        if value is None:
            return None
        if value not in ("on", "off"):
            raise NicsimError(f"{source}: {key}: {value!r} (allowed: on, off, n/a)")
        return value == "on"

    if "adaptive-rx" not in v:
        raise NicsimError(
            f"{source}: no 'Adaptive RX: on|off' line: is this what ethtool -c prints?"
        )
    adaptive_rx, adaptive_tx = flag("adaptive-rx"), flag("adaptive-tx")
    cqe_rx, cqe_tx = flag("cqe-mode-rx"), flag("cqe-mode-tx")
    done.update(("adaptive-rx", "adaptive-tx", "cqe-mode-rx", "cqe-mode-tx"))
    if adaptive_rx:
        nic["coalescing"] = "adaptive"
        nic["adaptive"] = "dim"
        for key in ("rx-usecs", "rx-frames"):
            skip(key, "DIM sets it: the driver shows the profile in force")
        if cqe_rx is not None:
            nic["cqe_mode_rx"] = cqe_rx
        if adaptive_tx is not None:
            nic["adaptive_tx"] = adaptive_tx
        # CQE mode TX applies to TX DIM's timer or to a fixed tx-usecs one.
        tx_timer = adaptive_tx or given("tx-usecs") is not None or given("tx-frames") is not None
        if cqe_tx is not None and tx_timer:
            nic["cqe_mode_tx"] = cqe_tx
        elif cqe_tx:
            why = "no transmit timer of its own to apply it to"
            out.unmapped.append(Unmapped("cqe-mode-tx", "on", why))
        if given("rx-profile") is not None:
            nic["rx_profile"] = _profile("rx-profile", v["rx-profile"], source)
        done.add("rx-profile")
        if adaptive_tx:
            for key in ("tx-usecs", "tx-frames"):
                skip(key, "TX DIM sets it: the driver shows the profile in force")
            if given("tx-profile") is not None:
                nic["tx_profile"] = _profile("tx-profile", v["tx-profile"], source)
            done.add("tx-profile")
        else:
            skip("tx-profile", "TX DIM's table, and adaptive TX is off")
    else:
        nic["coalescing"] = "timeout"
        if given("rx-usecs") is not None:
            nic["delay_us"] = float(_number("rx-usecs", v["rx-usecs"], source))
        if given("rx-frames") is not None:
            nic["frames"] = _number("rx-frames", v["rx-frames"], source)
        done.update(("rx-usecs", "rx-frames"))
        if cqe_rx:
            nic["timeout_mode"] = "packet"
        if adaptive_tx:
            out.unmapped.append(
                Unmapped(
                    "adaptive-tx", "on", "TX DIM without RX DIM: nicsim runs TX DIM beside RX DIM"
                )
            )
        if cqe_tx:
            out.unmapped.append(
                Unmapped("cqe-mode-tx", "on", "the fixed transmit timer is absolute")
            )
        for key in ("rx-profile", "tx-profile"):
            skip(key, "DIM's table, and adaptive RX is off")
    if not (adaptive_rx and adaptive_tx):
        if given("tx-usecs") is not None:
            nic["tx_delay_us"] = float(_number("tx-usecs", v["tx-usecs"], source))
        if given("tx-frames") is not None:
            nic["tx_frames"] = _number("tx-frames", v["tx-frames"], source)
        done.update(("tx-usecs", "tx-frames"))
    for key, why in _NO_MODEL.items():
        skip(key, why)
    for key in v:
        skip(key, "no counterpart in nicsim")
    if rings is not None:
        _rings(parse(rings, "ethtool -g"), out)
    if channels is not None:
        _channels(parse(channels, "ethtool -l"), preset, out)
    return out


def _rings(values: dict[str, str], out: Conversion) -> None:
    cur = _current(values)
    rx = cur.pop("rx", None)
    if rx is None or rx == NOT_REPORTED:
        raise NicsimError("ethtool -g: no 'RX:' ring size: is this what ethtool -g prints?")
    out.scenario.setdefault("platform", {}).setdefault("nic", {})["ring_slots"] = _number(
        "RX", rx, "ethtool -g"
    )
    for key, value in cur.items():
        why = (
            "the send ring is not bounded in nicsim" if key == "tx" else "ring setting not modelled"
        )
        out.unmapped.append(Unmapped(f"rings {key}", value, why))


def _channels(values: dict[str, str], preset: str, out: Conversion) -> None:
    cur = _current(values)
    count = {
        k: _number(k, cur[k], "ethtool -l")
        for k in ("combined", "rx")
        if cur.get(k, NOT_REPORTED) != NOT_REPORTED
    }
    queues = sum(count.values())
    if queues == 0:
        raise NicsimError(
            "ethtool -l: no 'Combined:' or 'RX:' channel count: is this what ethtool -l prints?"
        )
    if queues > 1:
        cores = _cores(preset)
        out.scenario["nic"]["steering"] = "multiqueue"
        out.notes.append(
            f'channels: {queues} -> nic.steering = "multiqueue" (nicsim gives each of the '
            f"preset's {cores} cores a queue of its own)"
        )
    for key, value in cur.items():
        if key not in ("combined", "rx"):
            out.unmapped.append(
                Unmapped(f"channels {key}", value, "separate TX / other channels are not modelled")
            )


def _unmapped_lines(c: Conversion) -> list[str]:
    """Return one line per value not mapped; those the driver does not report, on one line."""
    shown = [u.line() for u in c.unmapped if u.value != NOT_REPORTED]
    silent = [u.key for u in c.unmapped if u.value == NOT_REPORTED]
    if silent:
        text = f"n/a (the driver does not report them): {', '.join(silent)}"
        shown += textwrap.wrap(text, width=76, subsequent_indent="  ", break_on_hyphens=False)
    return shown


def scenario_text(c: Conversion, sources: list[str]) -> str:
    """Return the scenario TOML, opening with where it came from and what was not mapped."""
    head = [f"# Written by nicsim presets from-ethtool from {', '.join(sources)}."]
    head += [f"# {note}" for note in c.notes]
    if c.unmapped:
        head.append(f"# Not mapped ({len(c.unmapped)}):")
        head += [f"#   {line}" for line in _unmapped_lines(c)]
    return "\n".join(head) + "\n" + tomli_w.dumps(c.scenario)


def write(
    coalesce: Path,
    preset: str,
    out: Path,
    rings: Path | None = None,
    channels: Path | None = None,
    force: bool = False,
) -> Conversion:
    """Read the files, check the scenario with the core, write it whole to ``out``.

    Raises :class:`NicsimError` (one line) for an unreadable file, output
    ethtool does not print, a scenario the core refuses, or an ``out`` that
    exists (without ``force``) or is one of the inputs.
    """
    from nicsim import _core, outputs
    from nicsim.scenario import read_toml_file

    inputs = [("FILE", coalesce), ("--rings", rings), ("--channels", channels)]
    outputs.check_apart([("--out", out)], inputs)
    outputs.check_file(out, "--out")
    if out.exists() and not force:
        raise NicsimError(f"--out {out} exists; pass --force to overwrite")
    text = {name: read_toml_file(p, f"{name} file") for name, p in inputs if p is not None}
    c = convert(
        text["FILE"], preset, text.get("--rings"), text.get("--channels"), source=str(coalesce)
    )
    body = scenario_text(c, [str(p) for _, p in inputs if p is not None])
    _core.check(body + '\n[workload]\nkind = "pingpong"\n')
    with outputs.atomic_file(out) as temp:
        temp.write_text(body, encoding="utf-8")
    return c


def report(c: Conversion, out: Path) -> str:
    """Return what ``nicsim presets from-ethtool`` prints: file, keys, values not mapped."""
    lines = [f"wrote {out}"]
    nic = {f"nic.{k}": x for k, x in c.scenario["nic"].items()}
    platform = {
        f"platform.nic.{k}": x for k, x in c.scenario.get("platform", {}).get("nic", {}).items()
    }
    lines += [
        f"  {k} = {tomli_w.dumps({'v': x})[4:].strip()}" for k, x in {**nic, **platform}.items()
    ]
    lines += [f"  note: {n}" for n in c.notes]
    if c.unmapped:
        lines.append(f"not mapped ({len(c.unmapped)}):")
        lines += [f"  {line}" for line in _unmapped_lines(c)]
    return "\n".join(lines) + "\n"
