"""Sweeps: grid expansion, table shape, serial = parallel, CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import nicsim
from nicsim import sweeps as sw
from nicsim._core import NicsimError
from nicsim.scenario import Scenario
from test_cli import assert_one_error_line, nicsim_cli

BASE = Scenario(workload={"kind": "stream", "messages": 300})
AXES = {"nic.delay_us": [0, 75], "nic.coalescing": ["timeout", "openmx"]}


def test_grid_is_the_product_with_the_last_axis_fastest() -> None:
    jobs = sw.plan_sweep(BASE, AXES)
    assert [tuple(j.params.values()) for j in jobs] == [
        (0, "timeout"), (0, "openmx"), (75, "timeout"), (75, "openmx"),
    ]  # fmt: skip
    assert all("messages = 300" in j.toml for j in jobs)
    # Common random numbers: every configuration keeps the base seed.
    assert len({j.toml.splitlines()[1] for j in jobs}) == 1


def test_empty_axes_are_errors() -> None:
    with pytest.raises(NicsimError, match="no axis"):
        sw.plan_sweep(BASE, {})
    with pytest.raises(NicsimError, match=r"nic\.delay_us"):
        sw.plan_sweep(BASE, {"nic.delay_us": []})


def test_table_has_axis_then_metric_columns(fake_run: sw.runner.RunFn) -> None:
    table = sw.sweep(BASE, AXES, metrics=["msg_rate_per_s"], jobs=1, run_fn=fake_run)
    assert list(table.columns) == ["nic.delay_us", "nic.coalescing", "msg_rate_per_s"]
    assert len(table) == 4
    with pytest.raises(NicsimError, match="unknown"):
        sw.sweep(BASE, AXES, metrics=["colour"], jobs=1, run_fn=fake_run)


@pytest.mark.core
def test_serial_and_parallel_sweeps_are_identical() -> None:
    serial = sw.sweep(BASE, AXES, jobs=1)
    parallel = sw.sweep(BASE, AXES, jobs=2)
    pd.testing.assert_frame_equal(serial, parallel)
    # The sweep measures the mechanism: no delay beats 75 us in interrupts per message.
    timeout = serial[serial["nic.coalescing"] == "timeout"].set_index("nic.delay_us")
    assert timeout.loc[0, "interrupts_per_msg"] > 5 * timeout.loc[75, "interrupts_per_msg"]


@pytest.mark.core
def test_cli_sweep_writes_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.csv"
    code, _, _ = nicsim_cli(
        capsys, "sweep", "--axis", "nic.delay_us=0,75", "--set", "workload.kind=stream",
        "--set", "workload.messages=200", "--metric", "msg_rate_per_s", "--out", str(out),
        "--jobs", "1",
    )  # fmt: skip
    assert code == 0
    table = pd.read_csv(out)
    assert list(table.columns) == ["nic.delay_us", "msg_rate_per_s"]
    assert table["nic.delay_us"].tolist() == [0, 75]


@pytest.mark.parametrize(
    "args",
    [
        ["sweep", "--axis", "nic.delay_us", "--out", "x.csv"],
        ["sweep", "--axis", "nic.delay_us=0", "--out", "x.txt"],
    ],
)
def test_cli_sweep_bad_input(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, _, err = nicsim_cli(capsys, *args)
    assert code == 2
    assert_one_error_line(err)


def test_a_script_without_a_main_guard_is_told_to_add_one(tmp_path: Path) -> None:
    # Spawned workers import the calling script: without the guard each one
    # starts a sweep of its own while it boots, and dies.
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import nicsim\n"
        'base = {"workload": {"kind": "pingpong", "iterations": 10, "warmup": 0}}\n'
        'nicsim.sweep(base, {"nic.delay_us": [0, 75]}, jobs=2)\n'
    )
    env = {**os.environ, "PYTHONPATH": str(Path(nicsim.__file__).parents[1])}
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    # The interpreter's multiprocessing resource tracker may warn about the
    # dead workers' semaphores after the error, at shutdown: not nicsim's line.
    lines = [x for x in proc.stderr.strip().splitlines() if "resource_tracker" not in x]
    last = lines[-1]
    assert last.startswith("_core.NicsimError: a worker process died"), proc.stderr
    assert 'if __name__ == "__main__":' in last
