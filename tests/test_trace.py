"""The timeline (``nicsim run --trace``): tracks, nesting, arrows, CPU, window, cap."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import nicsim
from nicsim.cli import app
from nicsim.trace import TraceCut

pytestmark = pytest.mark.core

PINGPONG = {"workload": {"kind": "pingpong", "size_bytes": 0, "iterations": 200}}
STREAM = {"workload": {"kind": "stream", "size_bytes": 0, "messages": 2000}}
BUSY = ("kernel", "app", "spin")


def load(path: Path) -> dict[str, Any]:
    """The trace file, its numbers exact (µs with picosecond digits)."""
    data: dict[str, Any] = json.loads(path.read_text(), parse_float=Decimal)
    return data


def ps(value: Decimal) -> int:
    return int(value * 1_000_000)


def slices(data: dict[str, Any]) -> dict[tuple[int, int], list[tuple[int, int, str]]]:
    """The ``X`` slices of each (pid, tid), as (start ps, duration ps, name)."""
    out: dict[tuple[int, int], list[tuple[int, int, str]]] = defaultdict(list)
    for e in data["traceEvents"]:
        if e["ph"] == "X":
            out[(e["pid"], e["tid"])].append((ps(e["ts"]), ps(e["dur"]), e["name"]))
    return out


def partial_overlaps(items: list[tuple[int, int, str]]) -> list[tuple[Any, Any]]:
    """Pairs of slices of one thread that overlap without one holding the other."""
    bad = []
    stack: list[tuple[int, int, str]] = []
    for item in sorted(items, key=lambda s: (s[0], -s[1])):
        start, dur, _ = item
        while stack and stack[-1][0] + stack[-1][1] <= start:
            stack.pop()
        if stack and start + dur > stack[-1][0] + stack[-1][1]:
            bad.append((stack[-1], item))
        stack.append(item)
    return bad


def thread_names(data: dict[str, Any]) -> dict[tuple[int, int], str]:
    return {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in data["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }


@pytest.mark.parametrize(
    ("scenario", "coalescing"),
    [
        (PINGPONG, "openmx"),
        (PINGPONG, "timeout"),
        (STREAM, "openmx"),
        (STREAM, "disabled"),
    ],
)
def test_trace_has_the_tracks_nests_pairs_arrows_and_adds_up_to_the_cpu_metrics(
    tmp_path: Path, scenario: dict[str, Any], coalescing: str
) -> None:
    path = tmp_path / "t.json"
    metrics = nicsim.run(scenario, nic__coalescing=coalescing, trace=path)
    data = load(path)
    assert data["displayTimeUnit"] == "ns"
    names = thread_names(data)
    processes = {
        e["pid"]: e["args"]["name"] for e in data["traceEvents"] if e["name"] == "process_name"
    }
    assert processes == {0: "host 0", 1: "host 1"}
    for host in (0, 1):
        cores = [t for (p, t), n in names.items() if p == host and n.startswith("core ")]
        assert len(cores) == 8  # omx2009: 2 sockets x 2 dies x 2 cores
        assert names[(host, 1024)] == "NIC rx queue 0"
        assert names[(host, 512)] == "NIC tx (wire)"
    by_thread = slices(data)
    seen = Counter(name for items in by_thread.values() for _, _, name in items)
    for name in ("hard IRQ", "NAPI poll: rx frame, Open-MX handler", "library: ring event",
                 "firmware + DMA", "frame on the wire"):  # fmt: skip
        assert seen[name] > 0, name
    instants = Counter(e["name"] for e in data["traceEvents"] if e["ph"] == "i")
    assert instants["interrupt raised"] == metrics["interrupts"]
    assert instants["frame dropped: receive ring full"] == metrics["dropped_ring_full"]
    if coalescing != "disabled":
        assert instants["coalescing timer armed"] > 0
    # Slices of one thread nest: none overlaps another without holding it.
    for thread, items in by_thread.items():
        assert partial_overlaps(items) == [], (names[thread], partial_overlaps(items)[:3])
    # Every frame's arrow has both ends: from a NIC's wire track to the
    # other host's receive queue, forwards in time.
    ends: dict[int, dict[str, Any]] = defaultdict(dict)
    for e in data["traceEvents"]:
        if e["ph"] in ("s", "f"):
            assert e["ph"] not in ends[e["id"]], e
            ends[e["id"]][e["ph"]] = e
    assert ends and all(set(pair) == {"s", "f"} for pair in ends.values())
    for pair in ends.values():
        out, into = pair["s"], pair["f"]
        assert (out["tid"], into["tid"], into["bp"]) == (512, 1024, "e")
        assert out["pid"] != into["pid"] and ps(into["ts"]) >= ps(out["ts"])
    assert len(ends) == metrics["frames"]
    # The busy slices of each host's cores add up to its CPU metric.
    busy: Counter[int] = Counter()
    for e in data["traceEvents"]:
        if e["ph"] == "X" and e["cat"] in BUSY:
            busy[e["pid"]] += ps(e["dur"])
    assert data["otherData"]["busy_categories"] == list(BUSY)
    overlap = data["otherData"]["spin_overlap_us"]
    sim_ps = metrics["sim_time_us"] * 1e6
    for host in (0, 1):
        counted = (busy[host] + float(overlap[host]) * 1e6) / sim_ps
        assert counted == pytest.approx(metrics[f"host{host}_cpu_cores"], rel=1e-9)
        # What a slice cannot show is a small part.
        assert float(overlap[host]) * 1e6 < 0.002 * busy[host]


def test_trace_leaves_the_metrics_as_they_were_and_repeats_byte_for_byte(tmp_path: Path) -> None:
    plain = nicsim.run(STREAM, nic__coalescing="openmx")
    first = nicsim.run(STREAM, nic__coalescing="openmx", trace=tmp_path / "a.json")
    again = nicsim.run(STREAM, nic__coalescing="openmx", trace=tmp_path / "b.json")
    assert json.dumps(first) == json.dumps(plain) == json.dumps(again)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_trace_keeps_its_window_and_its_cap_and_says_so(tmp_path: Path) -> None:
    whole = tmp_path / "whole.json"
    nicsim.run(PINGPONG, trace=whole)
    total = load(whole)["otherData"]["events"]
    path = tmp_path / "window.json"
    nicsim.run(PINGPONG, trace=path, trace_from_us=1000, trace_until_us=1200)
    data = load(path)
    window = data["otherData"]["window_us"]
    assert (window["from"], window["until"]) == (1000, 1200)
    events = [e for e in data["traceEvents"] if e["ph"] != "M"]
    assert 0 < len(events) < total
    for e in events:
        start = ps(e["ts"])
        end = start + ps(e.get("dur", Decimal(0)))
        assert end >= 1000 * 10**6 and start <= 1200 * 10**6, e
    assert data["otherData"]["cut_by_cap"] is False
    capped = tmp_path / "capped.json"
    with pytest.warns(TraceCut, match="events left out") as warned:
        nicsim.run(PINGPONG, trace=capped, trace_cap=500)
    data = load(capped)
    other = data["otherData"]
    assert (other["event_cap"], other["cut_by_cap"]) == (500, True)
    events = [e for e in data["traceEvents"] if e["ph"] != "M"]
    assert len(events) == other["events"] <= 500
    assert other["events"] + other["left_out_by_cap"] >= total
    cut = warned[0].message
    assert isinstance(cut, TraceCut) and (cut.cap, cut.left_out) == (500, other["left_out_by_cap"])
    assert warned[0].filename == __file__  # the warning points at the caller's line


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"trace_cap": 10}, "trace_cap: needs trace"),
        ({"trace": "T", "trace_cap": 0}, "trace_cap = 0"),
        ({"trace": "T", "trace_cap": 1.5}, "trace_cap = 1.5"),
        ({"trace": "T", "trace_from_us": -1}, "trace_from_us = -1"),
        ({"trace": "T", "trace_from_us": float("nan")}, "trace_from_us = nan"),
        ({"trace": "T", "trace_from_us": 5, "trace_until_us": 5}, "must be above"),
        ({"trace": "T", "trace_until_us": "soon"}, "trace_until_us = 'soon'"),
        ({"trace": "no/such/dir/t.json"}, "does not exist"),
        ({"trace": "T", "preset": "lci2000", "protocol": {"stack": "lci"}}, "no timeline"),
    ],
)
def test_bad_trace_options_are_one_line_before_any_run(
    tmp_path: Path, options: dict[str, Any], needle: str
) -> None:
    calls: list[int] = []
    if options.get("trace") == "T":
        options = {**options, "trace": tmp_path / "t.json"}
    with pytest.raises(nicsim.NicsimError, match=needle.replace("(", r"\(")) as err:
        nicsim.run(PINGPONG, progress=lambda t, n: calls.append(n), **options)
    assert "\n" not in str(err.value)
    assert calls == [] and list(tmp_path.iterdir()) == []


def test_cli_run_trace_writes_the_file_and_refuses_bad_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pp.json"
    args = ["run", "--workload", "pingpong", "--size", "0", "--set", "workload.iterations=50"]
    with pytest.raises(SystemExit) as done:
        app(args=[*args, "--trace", str(path), "--trace-until", "500"], prog_name="nicsim")
    out, _ = capsys.readouterr()
    assert done.value.code in (0, None) and f"timeline: {path}" in out
    assert load(path)["otherData"]["window_us"]["until"] == 500
    with pytest.raises(SystemExit) as done:
        app(args=[*args, "--trace", str(path), "--trace-from", "9", "--trace-until", "2"])
    _, err = capsys.readouterr()
    assert done.value.code == 2
    assert err.strip() == "error: --trace-until = 2.0: must be above --trace-from = 9.0"
