"""[LCI] experiments: registration, scenarios (fake core) and one real run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nicsim import runner
from nicsim.studies import experiments, plots_lci
from nicsim.studies.exp_lci import (
    CLOCK_PERIODS_US,
    DSM_APPS,
    FORWARDINGS,
    MC_APPS,
    MC_SIZES,
    PAYLOADS,
    POLLING_STRATEGIES,
    QUICK_MC_SIZES,
    WATCHDOG_DELAYS,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _fake_lci_run(scenario_toml: str) -> dict[str, float | int | str]:
    data = tomllib.loads(scenario_toml)
    assert data["preset"] == "lci2000"
    workload = data["workload"]
    if workload["kind"] == "dsm":
        delay = data["nic"]["watchdog_us"]
        stuck = delay == "inf"
        irq = 0 if stuck else (5000 if delay == "none" else int(2000 / (1 + float(delay))))
        # Requests to a computing home wait up to the delay: the study's U shape.
        wait = 0.0 if delay in ("none", "inf") else float(delay) * 1e-5
        return {
            "exec_time_s": float("nan") if stuck else 0.01 + irq * 25e-6 / 16 + wait,
            "interrupts": irq,
            "stuck": 1.0 if stuck else 0.0,
        }
    if workload["kind"] == "fft-alltoall":
        period = float(data["nic"]["clock_period_us"])
        return {
            "exec_time_s": 0.05 + 1e-3 / period + period * 1e-7,
            "clock_interrupts": int(1e4 / period),
            "explicit_acks": 100,
            "window_full_polls": int(period / 100),
            "stuck": 0.0,
        }
    if workload["kind"] in ("asp", "qr"):
        return {"exec_time_s": 1.0, "interrupts": 0}
    size = int(workload.get("size_bytes", 0))
    return {
        "throughput_MBps": size / 20.0,
        "msg_rate_per_s": 50000.0,
        "latency_us": 10.0 + size,
        "interrupts": 0,
    }


def test_lci_polling_is_registered_in_the_lci_group() -> None:
    assert experiments.expand(["lci"])[:3] == ["lci-polling", "lci-multicast", "lci-multicast-apps"]
    assert {"lci-watchdog", "lci-timers"} <= set(experiments.expand(["lci"]))
    exp = experiments.get("lci-polling")
    assert exp.preset == "lci2000"
    assert exp.columns[:3] == ("strategy", "payload_bytes", "throughput_MBps")
    assert exp.plot is plots_lci.polling


def test_lci_polling_grid_and_scenarios() -> None:
    exp = experiments.get("lci-polling")
    rows = exp.configurations(False)
    assert len(rows) == len(POLLING_STRATEGIES) * len(PAYLOADS)
    assert {1024, 1536, 4096} <= {int(r["payload_bytes"]) for r in rows}
    jobs = runner.plan(exp, quick=True)
    first = tomllib.loads(jobs[0].toml)
    assert first["nic"] == {"polling": "pio"}
    assert first["workload"]["kind"] == "stream"


def test_lci_polling_table_with_a_fake_core() -> None:
    table = runner.run_experiment("lci-polling", jobs=1, quick=True, run_fn=_fake_lci_run)
    assert list(table.columns[:2]) == ["strategy", "payload_bytes"]
    assert len(table) == len(POLLING_STRATEGIES) * 5


def test_lci_watchdog_configurations_and_scenarios() -> None:
    exp = experiments.get("lci-watchdog")
    assert exp.preset == "lci2000" and exp.discussion
    assert exp.columns == ("app", "delay_us", "exec_time_s", "interrupts", "stuck")
    rows = exp.configurations(False)
    assert len(rows) == len(DSM_APPS) * len(WATCHDOG_DELAYS)
    assert [r["delay_us"] for r in rows[: len(WATCHDOG_DELAYS)]] == list(WATCHDOG_DELAYS)
    jobs = {
        (j.params["app"], j.params["delay_us"]): tomllib.loads(j.toml)
        for j in runner.plan(exp, quick=True)
    }
    assert jobs[("radix", "none")]["nic"] == {"watchdog_us": "none"}
    assert jobs[("radix", "inf")]["nic"] == {"watchdog_us": "inf"}
    assert jobs[("fft", "30")]["nic"] == {"watchdog_us": 30.0}
    assert jobs[("fft", "30")]["workload"]["kind"] == "dsm"
    assert jobs[("fft", "30")]["workload"]["mix"] == "fft"
    assert exp.plot is plots_lci.watchdog


def test_lci_watchdog_table_keeps_stuck_rows_with_a_fake_core() -> None:
    table = runner.run_experiment("lci-watchdog", jobs=1, quick=True, run_fn=_fake_lci_run)
    assert len(table) == len(DSM_APPS) * len(WATCHDOG_DELAYS)
    inf = table[table.delay_us == "inf"]
    assert inf.exec_time_s.isna().all() and (inf.stuck == 1).all()
    from nicsim.studies.report import claims

    checked = claims(experiments.get("lci-watchdog"), table)
    assert all(row[2] == "yes" for row in checked), checked


def test_lci_timers_configurations_with_a_fake_core() -> None:
    exp = experiments.get("lci-timers")
    assert [r["clock_period_us"] for r in exp.configurations(True)] == list(CLOCK_PERIODS_US)
    job = tomllib.loads(runner.plan(exp, quick=True)[0].toml)
    assert job["nic"] == {"clock_period_us": 10.0}
    assert job["protocol"] == {"send_buffers": 64}
    assert job["workload"]["kind"] == "fft-alltoall"
    table = runner.run_experiment("lci-timers", jobs=1, quick=True, run_fn=_fake_lci_run)
    assert list(table.columns[:2]) == ["clock_period_us", "exec_time_s"]
    assert exp.plot is plots_lci.timers


@pytest.mark.core
def test_lci_polling_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "nicsim", "reproduce", "lci", "--out", str(out), "--quick"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    for exp_id in ("lci-polling", "lci-multicast", "lci-multicast-apps"):
        for suffix in (".csv", ".parquet", ".png"):
            assert (out / f"{exp_id}{suffix}").stat().st_size > 0
    import pandas as pd

    table = pd.read_csv(out / "lci-polling.csv")
    shift = table[(table.strategy == "packet-shifting") & (table.payload_bytes == 64)]
    pio = table[(table.strategy == "pio") & (table.payload_bytes == 64)]
    assert float(shift.throughput_MBps.iloc[0]) > float(pio.throughput_MBps.iloc[0]) > 0
    mc = pd.read_csv(out / "lci-multicast.csv")
    lat = {
        f: float(mc[(mc.forwarding == f) & (mc.size_bytes == 4096)].latency_us.iloc[0])
        for f in FORWARDINGS
    }
    assert lat["ni"] < lat["host-packet"] < lat["host-message"]
    apps = pd.read_csv(out / "lci-multicast-apps.csv")
    assert (apps.exec_time_s > 0).all()
    for exp_id in ("lci-watchdog", "lci-timers"):
        assert (out / f"{exp_id}.png").stat().st_size > 0
    wd = pd.read_csv(out / "lci-watchdog.csv")
    for app in DSM_APPS:
        rows = wd[wd.app == app].set_index("delay_us")
        assert rows.loc["1", "interrupts"] > rows.loc["1000", "interrupts"]
        assert rows.loc["inf", "interrupts"] == 0
    timers = pd.read_csv(out / "lci-timers.csv")
    assert (timers.exec_time_s > 0).all()
    assert timers.clock_interrupts.iloc[0] > timers.clock_interrupts.iloc[-1]


def test_lci_multicast_grid_and_scenarios() -> None:
    exp = experiments.get("lci-multicast")
    assert exp.preset == "lci2000"
    assert exp.columns == ("forwarding", "size_bytes", "latency_us", "throughput_MBps")
    rows = exp.configurations(False)
    assert len(rows) == len(FORWARDINGS) * len(MC_SIZES)
    assert {0, 1024, 65536} <= {int(r["size_bytes"]) for r in rows}
    jobs = runner.plan(exp, quick=True)
    assert len(jobs) == len(FORWARDINGS) * len(QUICK_MC_SIZES)
    first = tomllib.loads(jobs[0].toml)
    assert first["nic"] == {"forwarding": "host-message"}
    assert first["workload"]["kind"] == "bcast"
    assert 10 <= first["workload"]["count"] <= 100
    assert exp.plot is plots_lci.multicast
    assert experiments.get("lci-multicast-apps").plot is plots_lci.multicast_apps


def test_lci_multicast_apps_scenarios() -> None:
    exp = experiments.get("lci-multicast-apps")
    assert exp.columns == ("app", "forwarding", "exec_time_s")
    assert exp.discussion
    jobs = runner.plan(exp, quick=True)
    assert len(jobs) == len(MC_APPS) * len(FORWARDINGS)
    kinds = {tomllib.loads(j.toml)["workload"]["kind"] for j in jobs}
    assert kinds == {"asp", "qr"}
    asp = next(tomllib.loads(j.toml) for j in jobs if "asp" in j.toml)
    # 4 KB rows of 32-bit distances, a whole number of rows per process.
    assert asp["workload"]["rows"] * 4 == 4096 and asp["workload"]["rows"] % 64 == 0


def test_lci_multicast_tables_with_a_fake_core() -> None:
    table = runner.run_experiment("lci-multicast", jobs=1, quick=True, run_fn=_fake_lci_run)
    assert list(table.columns[:2]) == ["forwarding", "size_bytes"]
    assert len(table) == len(FORWARDINGS) * len(QUICK_MC_SIZES)
    apps = runner.run_experiment("lci-multicast-apps", jobs=1, quick=True, run_fn=_fake_lci_run)
    assert len(apps) == len(MC_APPS) * len(FORWARDINGS)
