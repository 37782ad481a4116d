"""[LCI] experiments: registration, scenarios (fake core) and one real run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nicsim import experiments, runner
from nicsim.exp_lci import (
    FORWARDINGS,
    MC_APPS,
    MC_SIZES,
    PAYLOADS,
    POLLING_STRATEGIES,
    QUICK_MC_SIZES,
)
from nicsim.plots import PLOTTERS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _fake_lci_run(scenario_toml: str) -> dict[str, float | int | str]:
    data = tomllib.loads(scenario_toml)
    assert data["preset"] == "lci2000"
    workload = data["workload"]
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
    exp = experiments.get("lci-polling")
    assert exp.preset == "lci2000"
    assert exp.columns[:3] == ("strategy", "payload_bytes", "throughput_MBps")
    assert "lci-polling" in PLOTTERS


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
    assert "lci-multicast" in PLOTTERS and "lci-multicast-apps" in PLOTTERS


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
