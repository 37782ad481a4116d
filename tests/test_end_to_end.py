"""End-to-end with the compiled core: determinism, serial vs parallel, reports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import nicsim
from nicsim import runner
from nicsim.studies.report import write_table

pytestmark = pytest.mark.core

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["coalescing-irq-overhead", "coalescing-msgrate"]
# Metrics every run reports; each workload adds its own (pingpong: latency).
METRIC_KEYS = {
    "latency_us", "throughput_MiBps", "interrupts", "interrupts_per_msg",
    "sim_time_us", "events", "frames", "dropped",
}  # fmt: skip


def test_run_returns_the_documented_metrics() -> None:
    metrics = nicsim.run({"workload": {"kind": "pingpong", "iterations": 50, "warmup": 5}})
    assert set(metrics) >= METRIC_KEYS
    for key in ("interrupts", "events", "frames", "dropped"):
        assert isinstance(metrics[key], int)


def test_same_seed_twice_is_identical() -> None:
    scenario = {"seed": 42, "workload": {"kind": "stream", "size_bytes": 128, "messages": 500}}
    assert nicsim.run(scenario) == nicsim.run(scenario)


def test_unknown_key_is_a_nicsim_error_naming_it() -> None:
    with pytest.raises(nicsim.NicsimError, match="no_such_key"):
        nicsim.run({"workload": {"kind": "stream", "no_such_key": 1}})


def test_uniband_reports_a_rate_and_refuses_an_empty_window() -> None:
    scenario = {"workload": {"kind": "uniband", "messages": 640, "window": 64}}
    assert float(nicsim.run(scenario)["msg_rate_per_s"]) > 0
    with pytest.raises(nicsim.NicsimError, match=r"workload\.window.*0"):
        nicsim.run({"workload": {"kind": "uniband", "window": 0}})


# Every world and the model columns: Open-MX, LCI (with NaN rows of stuck
# runs), EMO.
DETERMINISM = [*SMALL, "lci-watchdog", "lci-multicast", "emo-latency"]


@pytest.mark.parametrize("exp_id", DETERMINISM)
def test_serial_and_parallel_csv_are_byte_identical(exp_id: str, tmp_path: Path) -> None:
    serial = runner.run_experiment(exp_id, jobs=1, quick=True)
    parallel = runner.run_experiment(exp_id, jobs=2, quick=True)
    again = runner.run_experiment(exp_id, jobs=1, quick=True)
    a = write_table(serial, tmp_path, "serial")[0].read_bytes()
    b = write_table(parallel, tmp_path, "parallel")[0].read_bytes()
    c = write_table(again, tmp_path, "again")[0].read_bytes()
    assert a == b == c


def test_reproduce_cli_writes_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "nicsim", "reproduce", *SMALL, "--out", str(out), "--quick"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    for exp_id in SMALL:
        for suffix in (".csv", ".parquet", ".png"):
            assert (out / f"{exp_id}{suffix}").stat().st_size > 0
    report = (out / "report.md").read_text()
    assert "Simulated vs published" in report and "quick" in report


def test_stub_matches_module() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy.stubtest",
            "nicsim._core",
            "--mypy-config-file",
            "pyproject.toml",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
