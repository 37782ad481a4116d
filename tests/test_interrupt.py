"""Ctrl-C on a local campaign (a real ``nicsim sweep`` subprocess): it stops at
once, leaves the previous table whole, keeps what finished, and the same
command then simulates only the rest and writes the same table."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import nicsim
from nicsim.scenario import Scenario

pytestmark = pytest.mark.core

ROOT = Path(__file__).resolve().parents[1]
#: 30 distinct runs of ~0.1-0.2 s each on this VM: several seconds on 2 workers.
DELAYS = list(range(0, 150, 5))
FIXED = ["workload.kind=stream", "workload.messages=20000", "workload.size_bytes=8192"]


def sweep_args(out: Path, *extra: str) -> list[str]:
    args = [sys.executable, "-m", "nicsim", "sweep", "--out", str(out), "--jobs", "2"]
    args += ["--axis", "nic.delay_us=" + ",".join(map(str, DELAYS))]
    for item in FIXED:
        args += ["--set", item]
    return [*args, *extra]


def env() -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}


def entries(store: Path) -> dict[str, tuple[int, int]]:
    """Store entries by name: (inode, mtime_ns); a rewrite changes both."""
    return {
        p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in store.glob("*/*.json")
        if not p.name.startswith(".")
    }


def wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def test_sigint_keeps_finished_runs_and_the_rerun_skips_them(tmp_path: Path) -> None:
    out = tmp_path / "sweep.csv"
    out.write_text("previous,table\n1,2\n")
    store = tmp_path / ".sweep.csv.nicsim" / "store"
    proc = subprocess.Popen(
        sweep_args(out),
        env=env(),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: len(entries(store)) >= 3, 120, "3 finished runs")
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=60)
        stopped_after = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert stopped_after < 5.0  # in-flight runs are abandoned, not awaited
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: interrupted;") and "Traceback" not in err
    kept = entries(store)
    assert 3 <= len(kept) < len(DELAYS), "the interrupt must land mid-campaign"
    assert f"{len(kept)} finished run(s) kept" in lines[-1]
    # The previous table is untouched and no partial file is left beside it.
    assert out.read_text() == "previous,table\n1,2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".sweep.csv.nicsim", "sweep.csv"]
    assert not list(store.glob("*/.*"))  # no half-written store entry either

    again = subprocess.run(
        sweep_args(out),
        env=env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    rest = len(DELAYS) - len(kept)
    assert f"resuming: {len(kept)} of {len(DELAYS)} runs already done" in again.stderr
    assert f"{rest} run(s) simulated, {len(kept)} reused" in again.stderr
    after = entries(store)
    assert len(after) == len(DELAYS)
    assert {name: after[name] for name in kept} == kept  # not one finished run was redone

    base = Scenario(workload={"kind": "stream", "messages": 20000, "size_bytes": 8192})
    reference = nicsim.sweep(base, {"nic.delay_us": DELAYS}, jobs=2)
    reference_csv = tmp_path / "reference.csv"
    reference.to_csv(reference_csv, index=False)
    assert out.read_bytes() == reference_csv.read_bytes()
