"""Interrupting a local campaign (a real ``nicsim sweep`` subprocess, by Ctrl-C
or SIGKILL): it leaves the previous table whole and keeps what finished, and
the same command then simulates only the rest and writes the same table."""

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


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The uninterrupted table, computed in this process, written as the CLI writes it."""
    base = Scenario(workload={"kind": "stream", "messages": 20000, "size_bytes": 8192})
    path = tmp_path_factory.mktemp("reference") / "sweep.csv"
    nicsim.sweep(base, {"nic.delay_us": DELAYS}, jobs=2).to_csv(path, index=False)
    return path.read_bytes()


def wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_interrupted_campaign_keeps_finished_runs_and_the_rerun_skips_them(
    tmp_path: Path, reference: bytes, signum: signal.Signals
) -> None:
    out = tmp_path / "sweep.csv"
    out.write_text("previous,table\n1,2\n")
    store = tmp_path / ".sweep.csv.nicsim" / "store"
    proc = subprocess.Popen(
        sweep_args(out), env=env(), cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: len(entries(store)) >= 3, 120, "3 finished runs")
        proc.send_signal(signum)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=60)
        stopped_after = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    kept = entries(store)
    assert 3 <= len(kept) < len(DELAYS), "the interrupt must land mid-campaign"
    # In-flight runs are abandoned, not awaited; after SIGKILL the orphaned
    # pool workers end themselves (until then they hold the output pipes).
    assert stopped_after < 5.0
    if signum == signal.SIGINT:
        assert proc.returncode == 130, err
        lines = err.strip().splitlines()
        assert lines[-1].startswith("error: interrupted;") and "Traceback" not in err
        assert f"{len(kept)} finished run(s) kept" in lines[-1]
    else:
        assert proc.returncode == -signal.SIGKILL
    # The previous table is untouched and no partial file is left beside it.
    assert out.read_text() == "previous,table\n1,2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".sweep.csv.nicsim", "sweep.csv"]

    again = subprocess.run(
        sweep_args(out), env=env(), cwd=tmp_path, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    if signum == signal.SIGKILL:  # its lock file still names it: a stale lock
        assert f"took over the lock of pid {proc.pid}, gone" in again.stderr
    rest = len(DELAYS) - len(kept)
    assert f"resuming: {len(kept)} of {len(DELAYS)} runs already done" in again.stderr
    assert f"{rest} run(s) simulated, {len(kept)} reused" in again.stderr
    after = entries(store)
    assert len(after) == len(DELAYS)
    assert {name: after[name] for name in kept} == kept  # not one finished run was redone
    assert not list(store.glob("*/.*"))  # no half-written store entry
    assert out.read_bytes() == reference
