"""Campaigns on a real Dask cluster: a ``dask scheduler`` and two ``dask worker``
processes on 127.0.0.1 (random free ports, bounded waits, always torn down).
Tables must be byte-identical to the local run's, also when a worker is
killed in the middle of a campaign."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.core, pytest.mark.cluster]

ROOT = Path(__file__).resolve().parents[1]
#: Bound on every wait for a cluster process.
START_TIMEOUT_S = 90
ENV = {
    "PYTHONPATH": str(ROOT / "python"),
    "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
    # Workers must not pick up a scheduler from the caller's environment.
    "NICSIM_SCHEDULER": "",
}


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def dask_cluster(tmp: Path, workers: int = 2, paths: Sequence[str] = ()) -> Iterator[Cluster]:
    """Start ``dask scheduler`` and ``workers`` single-threaded ``dask worker`` processes.

    ``paths`` gives some workers another ``PYTHONPATH`` (another nicsim).
    """
    if os.environ.get("CI"):
        import distributed  # noqa: F401  CI installs it (scripts/setup.sh): never skip there
    else:
        pytest.importorskip("distributed")
    dask = [sys.executable, "-m", "dask"]
    scheduler_file = tmp / "scheduler.json"
    processes: list[subprocess.Popen[bytes]] = []

    def spawn(args: list[str], log: Path, path: str = ENV["PYTHONPATH"]) -> subprocess.Popen[bytes]:
        with log.open("wb") as sink:
            process = subprocess.Popen(
                args,
                env={**ENV, "PYTHONPATH": path},
                cwd=tmp,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        processes.append(process)
        return process

    try:
        listen = "--host 127.0.0.1 --port 0 --dashboard-address 127.0.0.1:0"
        scheduler = spawn(
            [*dask, "scheduler", *listen.split(), "--scheduler-file", str(scheduler_file)],
            tmp / "scheduler.log",
        )
        wait_for(scheduler_file.exists, START_TIMEOUT_S, "the scheduler file")
        wait_for(lambda: bool(scheduler_file.read_text().strip()), 10, "the scheduler address")
        address = json.loads(scheduler_file.read_text())["address"]
        logs = [tmp / f"worker{n}.log" for n in range(workers)]
        started = [
            spawn(
                [*dask, "worker", address, *["--nthreads", "1", "--no-nanny", "--name"], f"w{n}",
                 "--local-directory", str(tmp / f"w{n}")],
                log,
                *paths[n : n + 1],
            )
            for n, log in enumerate(logs)
        ]  # fmt: skip
        for log in logs:
            wait_for(
                lambda log=log: b"Registered to" in log.read_bytes(),  # type: ignore[misc]
                START_TIMEOUT_S,
                f"{log.stem} to register",
            )
        yield Cluster(address, scheduler, started)
    finally:
        for process in reversed(processes):
            _stop(process)


def nicsim_cli(*args: str, cwd: Path, extra_env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "nicsim", *args],
        env={**ENV, **(extra_env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


SWEEP_AXES = {"nic.coalescing": ["timeout", "openmx", "stream"], "workload.size_bytes": [0, 4096]}
SWEEP_BASE = {"workload": {"kind": "stream", "messages": 2000}}
EXPERIMENTS = ["coalescing-irq-overhead", "lci-watchdog"]


def sweep_args(axes: dict[str, list[object]], base: dict[str, dict[str, object]]) -> list[str]:
    args = ["sweep"]
    for key, values in axes.items():
        args += ["--axis", f"{key}={','.join(map(str, values))}"]
    for section, table in base.items():
        for key, value in table.items():
            args += ["--set", f"{section}.{key}={value}"]
    return args


def local_csv(
    tmp: Path, name: str, axes: dict[str, list[object]], base: dict[str, object]
) -> bytes:
    """The local run of a sweep, written as ``nicsim sweep`` writes it."""
    import nicsim

    path = tmp / name
    nicsim.sweep(base, axes, jobs=2).to_csv(path, index=False)
    return path.read_bytes()


def test_sweep_and_experiments_on_a_cluster_match_the_local_run(tmp_path: Path) -> None:
    from nicsim import runner
    from nicsim.studies.report import write_table

    local_sweep = local_csv(tmp_path, "local.csv", SWEEP_AXES, SWEEP_BASE)
    local = {
        exp_id: write_table(runner.run_experiment(exp_id, jobs=2, quick=True), tmp_path, exp_id)[0]
        for exp_id in EXPERIMENTS
    }
    (tmp_path / "dask").mkdir()
    with dask_cluster(tmp_path) as cluster:
        sweep = sweep_args(SWEEP_AXES, SWEEP_BASE)
        err = nicsim_cli(
            *sweep, "--out", "dask/s.csv", "--scheduler", cluster.address, cwd=tmp_path
        )
        assert f"Dask scheduler {cluster.address}; dashboard: http://" in err
        # Experiments on the scheduler named by the environment variable ...
        nicsim_cli(
            "reproduce",
            *EXPERIMENTS,
            "--quick",
            "--out",
            "dask/r",
            cwd=tmp_path,
            extra_env={"NICSIM_SCHEDULER": cluster.address},
        )
        # ... and by the Python API.
        api = (
            "import sys, nicsim\nfrom pathlib import Path\n"
            "from nicsim.studies.report import write_table\n"
            f"t = nicsim.run_experiment({EXPERIMENTS[0]!r}, quick=True, scheduler=sys.argv[1])\n"
            "write_table(t, Path('dask'), 'api')"
        )
        subprocess.run(
            [sys.executable, "-c", api, cluster.address],
            env=ENV,
            cwd=tmp_path,
            check=True,
            timeout=300,
        )
        assert all(worker.poll() is None for worker in cluster.workers)
        scheduler_log = (tmp_path / "scheduler.log").read_text()
    assert scheduler_log.count("Receive client connection") >= 3  # the runs went through Dask
    assert (tmp_path / "dask/s.csv").read_bytes() == local_sweep
    for exp_id, path in local.items():
        assert (tmp_path / "dask/r" / f"{exp_id}.csv").read_bytes() == path.read_bytes(), exp_id
    assert (tmp_path / "dask/api.csv").read_bytes() == local[EXPERIMENTS[0]].read_bytes()


def test_a_worker_killed_mid_campaign_loses_nothing(tmp_path: Path) -> None:
    axes: dict[str, list[object]] = {"nic.delay_us": list(range(0, 120, 5))}  # 24 runs
    base = {"workload": {"kind": "stream", "messages": 20000, "size_bytes": 8192}}
    grid = sweep_args(axes, base)
    total = len(axes["nic.delay_us"])
    local = local_csv(tmp_path, "local.csv", axes, base)
    store = tmp_path / ".dask.csv.nicsim" / "store"

    def stored() -> int:
        return len([p for p in store.glob("*/*.json") if not p.name.startswith(".")])

    with dask_cluster(tmp_path) as cluster:
        campaign = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nicsim",
                *grid,
                "--out",
                "dask.csv",
                "--scheduler",
                cluster.address,
            ],
            env=ENV,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_for(lambda: stored() >= 2, START_TIMEOUT_S, "2 finished runs")
            victim = cluster.workers[0]
            os.killpg(victim.pid, signal.SIGKILL)
            done_at_kill = stored()
            _, err = campaign.communicate(timeout=300)
        finally:
            if campaign.poll() is None:
                campaign.kill()
                campaign.wait()
        assert victim.wait(timeout=10) == -signal.SIGKILL
        scheduler_log = (tmp_path / "scheduler.log").read_text()
    assert campaign.returncode == 0, err
    assert done_at_kill < total - 2, "the kill must land mid-campaign"
    assert "Remove worker" in scheduler_log  # the scheduler saw the worker go
    assert f"{total} run(s) simulated, 0 reused" in err
    assert (tmp_path / "dask.csv").read_bytes() == local


@pytest.mark.parametrize(
    ("store_py", "needle"),
    [
        (None, "a worker cannot load nicsim (ModuleNotFoundError"),
        ("def build_id():\n    return '0.0.0-elsewhere'\n", "runs nicsim 0.0.0-elsewhere"),
    ],
    ids=["no-nicsim", "other-build"],
)
def test_workers_that_cannot_run_this_nicsim_are_refused_before_work(
    tmp_path: Path, store_py: str | None, needle: str
) -> None:
    other = tmp_path / "other" / "nicsim"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("")
    if store_py is not None:
        (other / "store.py").write_text(store_py)
    with dask_cluster(tmp_path, workers=2, paths=[ENV["PYTHONPATH"], str(other.parent)]) as cluster:
        proc = subprocess.run(
            [sys.executable, "-m", "nicsim", *sweep_args(SWEEP_AXES, SWEEP_BASE), "--out",
             "s.csv", "--scheduler", cluster.address],
            env=ENV, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: ")
    assert needle in proc.stderr and "install the same nicsim wheel" in proc.stderr
    assert not list((tmp_path / ".s.csv.nicsim").glob("store/*/*.json"))  # nothing ran


def test_a_dask_local_cluster_gives_the_local_table(tmp_path: Path) -> None:
    local = local_csv(tmp_path, "local.csv", SWEEP_AXES, SWEEP_BASE)
    sweep = sweep_args(SWEEP_AXES, SWEEP_BASE)
    err = nicsim_cli(*sweep, "--out", "dask.csv", "--dask-local", "2", cwd=tmp_path)
    assert "Dask LocalCluster of 2 workers; dashboard: http://" in err
    assert (tmp_path / "dask.csv").read_bytes() == local


def shares_seen(client: Any) -> list[str]:
    """The memory shares a task sees on each of the client's workers ("unset": none)."""
    from nicsim import executor

    seen = functools.partial(os.getenv, executor.MEMORY_SHARES_ENV)
    workers = list(client.scheduler_info()["workers"])
    futures = [
        client.submit(executor.run_task, seen, "unset", workers=[w], pure=False) for w in workers
    ]
    return sorted(f.result()[1] for f in futures)


def test_a_dask_workers_runs_share_the_memory_as_dask_shares_it() -> None:
    """A worker's runs are told the machine's memory over the worker's limit."""
    import distributed
    from distributed.system import MEMORY_LIMIT

    def shares(**cluster: Any) -> list[str]:
        with (
            distributed.LocalCluster(
                threads_per_worker=1, processes=True, dashboard_address=None, **cluster
            ) as local,
            distributed.Client(local) as client,
        ):
            return shares_seen(client)

    # Two workers of half the machine each.
    assert shares(n_workers=2, memory_limit=0.5) == ["2", "2"]
    # A worker given a third of the machine (as `dask worker --memory-limit`).
    assert shares(n_workers=1, memory_limit=int(MEMORY_LIMIT / 3)) == ["3"]
    # No limit: the runs' default is left alone (one run's share).
    assert shares(n_workers=1, memory_limit=0) == ["unset"]
    # The environment's word stands.
    assert shares(n_workers=2, env={"NICSIM_MEMORY_SHARES": "5"}) == ["5", "5"]


def test_a_dask_local_clusters_workers_share_the_machine_as_a_local_pools_do() -> None:
    from nicsim import executor

    dask = executor.DaskExecutor(local_workers=2)
    dask.start()
    try:
        assert shares_seen(dask._client) == ["2", "2"]
    finally:
        dask.close()


def test_a_lost_scheduler_ends_the_campaign_in_one_line_keeping_its_runs(tmp_path: Path) -> None:
    axes: dict[str, list[object]] = {"nic.delay_us": list(range(0, 100, 5))}
    base = {"workload": {"kind": "stream", "messages": 20000, "size_bytes": 8192}}
    store = tmp_path / ".s.csv.nicsim" / "store"
    with dask_cluster(tmp_path, workers=1) as cluster:
        campaign = subprocess.Popen(
            [sys.executable, "-m", "nicsim", *sweep_args(axes, base), "--out", "s.csv",
             "--scheduler", cluster.address],
            env=ENV, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            wait_for(lambda: len(list(store.glob("*/*.json"))) >= 2, START_TIMEOUT_S, "2 runs")
            os.killpg(cluster.scheduler.pid, signal.SIGKILL)
            _, err = campaign.communicate(timeout=120)
        finally:
            if campaign.poll() is None:
                campaign.kill()
                campaign.wait()
    assert campaign.returncode == 2, err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: ") and "scheduler-connection-lost" in lines[-1]
    assert "Traceback" not in err
    assert len(list(store.glob("*/*.json"))) >= 2  # what finished is kept for a resume
    assert not (tmp_path / "s.csv").exists()
