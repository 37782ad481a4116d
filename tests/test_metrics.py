"""The names, headline and groups of what a run reports (:mod:`nicsim.metrics`),
against real runs of every workload kind of both stacks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nicsim
from nicsim import _core
from nicsim.metrics import HEADLINE, check_names, groups, reported, summary
from nicsim.scenario import Scenario
from test_cli import assert_one_error_line, nicsim_cli

#: A small run of every workload kind: (preset, workload table, other tables).
KINDS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("omx2009", {"kind": "pingpong", "iterations": 20, "warmup": 2}, {}),
    ("omx2009", {"kind": "echo-nic", "iterations": 20, "warmup": 2}, {}),
    ("omx2009", {"kind": "echo-kernel", "iterations": 20, "warmup": 2}, {}),
    ("omx2009", {"kind": "stream", "messages": 300}, {}),
    ("omx2009", {"kind": "uniband", "messages": 300}, {}),
    ("omx2009", {"kind": "flood", "packets": 300}, {}),
    ("omx2009", {"kind": "alltoall", "iterations": 2, "warmup": 1, "procs_per_host": 1}, {}),
    ("omx2009", {"kind": "exchange", "iterations": 2, "warmup": 1, "procs_per_host": 1}, {}),
    ("omx2009", {"kind": "nas-is", "class": "S", "iterations": 1, "procs_per_host": 1}, {}),
    ("omx2009", {"kind": "nas-cg", "procs_per_host": 2}, {}),
    # A lossy medium-size stream: drops, resends and medium messages.
    ("omx2009", {"kind": "stream", "messages": 300, "size_bytes": 8192},
     {"protocol": {"loss": 0.01}}),
    # [LCI]'s multicast programs on Open-MX, forwarded by the NICs.
    ("omx2009", {"kind": "asp", "rows": 32, "iterations": 4, "procs_per_host": 1,
                 "forwarding": "ni"}, {"nic": {"multicast_forwarding": True}}),
    ("omx2009", {"kind": "qr", "cols": 16, "iterations": 3, "procs_per_host": 1}, {}),
    ("omx2009", {"kind": "fft-alltoall", "iterations": 1, "procs_per_host": 1, "size_bytes": 4096,
                 "compute_us": 50.0}, {"nic": {"clock_period_us": 20.0}}),
    ("lci2000", {"kind": "stream", "messages": 100}, {}),
    ("lci2000", {"kind": "pingpong", "iterations": 20}, {}),
    ("lci2000", {"kind": "bcast", "iterations": 2, "count": 2}, {}),
    ("lci2000", {"kind": "asp", "rows": 64, "iterations": 2}, {}),
    ("lci2000", {"kind": "qr", "cols": 64, "iterations": 2}, {}),
    ("lci2000", {"kind": "dsm", "procs": 4, "operations": 10}, {}),
    ("lci2000", {"kind": "fft-alltoall", "procs": 4, "iterations": 1, "compute_us": 10.0,
                 "size_bytes": 1024}, {}),
]  # fmt: skip


def _scenario(preset: str, workload: dict[str, Any], other: dict[str, Any]) -> Scenario:
    return Scenario.from_dict({"preset": preset, "workload": workload, **other})


@pytest.fixture(scope="module")
def runs() -> list[tuple[str, str, dict[str, Any]]]:
    """(world, kind, metrics) of each run of :data:`KINDS`."""
    out = []
    for preset, workload, other in KINDS:
        scenario = _scenario(preset, workload, other)
        out.append((_core.check(scenario.to_toml()), workload["kind"], nicsim.run(scenario)))
    return out


@pytest.mark.core
def test_every_metric_a_run_reports_is_listed(runs: list[tuple[str, str, dict[str, Any]]]) -> None:
    for world, kind, metrics in runs:
        unlisted = set(metrics) - reported(world, kind)
        assert not unlisted, f"{world} {kind}: not in nicsim.metrics: {sorted(unlisted)}"


@pytest.mark.core
def test_the_kinds_metrics_are_reported_by_it_alone(
    runs: list[tuple[str, str, dict[str, Any]]],
) -> None:
    # What sets a kind apart (its headline) is listed for it and reported by
    # its run, and not listed for a kind whose run does not report it.
    for world, kind, metrics in runs:
        headline = [name for name in HEADLINE if name in reported(world, kind)]
        assert headline, kind
        assert set(headline) <= set(metrics), kind
    assert "latency_us" not in reported("open-mx", "stream")
    assert "msg_rate_per_s" not in reported("open-mx", "pingpong")
    assert "exec_time_s" in reported("lci", "dsm") and "exec_time_s" not in reported("lci", "bcast")


@pytest.mark.core
def test_every_metric_goes_to_one_named_group(
    runs: list[tuple[str, str, dict[str, Any]]],
) -> None:
    for _, kind, metrics in runs:
        grouped = groups(metrics)
        flat = [name for _, names in grouped for name in names]
        assert sorted(flat) == sorted(metrics), kind  # each exactly once
        assert "other" not in dict(grouped), (kind, dict(grouped).get("other"))


@pytest.mark.core
def test_the_summary_shows_the_headline_interrupts_cpu_and_drops(
    runs: list[tuple[str, str, dict[str, Any]]],
) -> None:
    by_kind = {(world, kind): metrics for world, kind, metrics in runs}
    names = [name for name, _ in summary(by_kind["open-mx", "flood"])]
    assert names == ["overhead_ns_per_packet", "interrupts_per_msg", "interrupts",
                     "host0_cpu_cores", "host1_cpu_cores", "dropped",
                     "dropped_no_endpoint"]  # fmt: skip
    lossy = next(m for w, k, m in runs if k == "stream" and m.get("dropped_loss"))
    names = [name for name, _ in summary(lossy)]
    assert names[:3] == ["msg_rate_per_s", "throughput_MiBps", "interrupts_per_msg"]
    assert {"dropped", "dropped_loss", "resends"} <= set(names)
    dsm = by_kind["lci", "dsm"]
    names = [name for name, _ in summary(dsm)]
    assert names[0] == "exec_time_s"
    assert ("stuck_at_us" in names) == bool(dsm["stuck"])


def test_a_metric_of_another_kind_is_named_with_the_kinds_that_report_it() -> None:
    check_names(["latency_us", "host1_cpu_pct"], "open-mx", "pingpong", "sweep[0]")
    with pytest.raises(nicsim.NicsimError) as err:
        check_names(["interrupts", "latency_us"], "open-mx", "stream", "sweep[3] x=1")
    message = str(err.value)
    assert message.startswith("metric 'latency_us' is not reported by sweep[3] x=1 ")
    assert "workload.kind = pingpong, echo-nic, echo-kernel report it" in message
    assert "\n" not in message
    with pytest.raises(nicsim.NicsimError, match="closest: 'latency_us'"):
        check_names(["latncy_us"], "open-mx", "pingpong", "sweep[0]")


@pytest.mark.core
def test_an_unknown_sweep_metric_is_one_short_line_with_the_closest_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["sweep", "--axis", "nic.delay_us=0,5", "--out", str(tmp_path / "t.csv")]
    code, out, err = nicsim_cli(capsys, *args, "--metric", "host1_interupts")
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert "metric 'host1_interupts' is not reported by sweep[0] nic.delay_us=0" in err
    assert "closest: 'host1_interrupts'" in err
    assert "`nicsim run --all` with the same settings" in err
    assert len(err) < 300, err  # not the list of every metric
    assert "host1_cpu_pct" not in err
