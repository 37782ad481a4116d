"""[LCI] experiments: registration, scenarios (fake core) and one real run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nicsim import experiments, runner
from nicsim.exp_lci import PAYLOADS, POLLING_STRATEGIES
from nicsim.plots import PLOTTERS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _fake_lci_run(scenario_toml: str) -> dict[str, float | int | str]:
    data = tomllib.loads(scenario_toml)
    assert data["preset"] == "lci2000"
    size = int(data["workload"]["size_bytes"])
    return {"throughput_MBps": size / 20.0, "msg_rate_per_s": 50000.0, "interrupts": 0}


def test_lci_polling_is_registered_in_the_lci_group() -> None:
    assert experiments.expand(["lci"]) == ["lci-polling"]
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
    for suffix in (".csv", ".parquet", ".png"):
        assert (out / f"lci-polling{suffix}").stat().st_size > 0
    import pandas as pd

    table = pd.read_csv(out / "lci-polling.csv")
    shift = table[(table.strategy == "packet-shifting") & (table.payload_bytes == 64)]
    pio = table[(table.strategy == "pio") & (table.payload_bytes == 64)]
    assert float(shift.throughput_MBps.iloc[0]) > float(pio.throughput_MBps.iloc[0]) > 0
