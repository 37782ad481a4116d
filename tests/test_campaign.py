"""Campaigns: the results store, dispatch order, executors chosen from options,
resuming, and the output rules (checked before work, written whole, locked)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
import pytest

import nicsim
from nicsim import _core, executor, outputs, runner
from nicsim._core import NicsimError
from nicsim.executor import Executor, Outcome, RunFn, Task
from nicsim.scenario import Scenario
from nicsim.store import Store, job_key
from nicsim.studies import campaign, report
from test_cli import assert_one_error_line, nicsim_cli

Metrics = dict[str, float | int | str]
ROOT = Path(__file__).resolve().parents[1]


# -- the results store -------------------------------------------------------


def test_store_gives_back_every_metric_bit_for_bit(tmp_path: Path) -> None:
    store = Store(tmp_path, build="test")
    metrics: Metrics = {
        "a": 0.1 + 0.2,
        "b": 1e-300,
        "c": -0.0,
        "n": 2**62,
        "s": "x|y",
        "nan": math.nan,
    }
    store.put("k" * 32, "seed = 1\n", metrics)
    back = store.get("k" * 32)
    assert back is not None
    assert {k: v for k, v in back.items() if k != "nan"} == {
        k: v for k, v in metrics.items() if k != "nan"
    }
    assert math.isnan(float(back["nan"]))
    assert [type(v) for v in back.values()] == [type(v) for v in metrics.values()]
    assert math.copysign(1.0, float(back["c"])) == -1.0


def test_store_ignores_half_written_and_foreign_entries(tmp_path: Path) -> None:
    store = Store(tmp_path, build="test")
    store.dir.mkdir(parents=True)
    (store.dir / f"{'a' * 32}.json").write_text('{"key": "aaaa", "metr')  # cut short
    (store.dir / f"{'b' * 32}.json").write_text(json.dumps({"key": "c" * 32, "metrics": {}}))
    (store.dir / f".{'d' * 32}.json.1.tmp").write_text("{")
    assert store.get("a" * 32) is None
    assert store.get("b" * 32) is None  # a file under another key's name
    store.remove_temporaries()
    assert not list(store.dir.glob(".*"))
    assert Store(tmp_path, build="other").get("b" * 32) is None
    store.put("e" * 32, "", {"x": 1})
    assert Store(tmp_path, build="test", fresh=True).get("e" * 32) is None


def test_job_key_reads_values_not_spelling(tmp_path: Path) -> None:
    text = 'seed = 1\n[nic]\ndelay_us = 75\n[workload]\nkind = "stream"\n'
    same = 'seed   = 1 # a comment\n[workload]\nkind = "stream"\n[nic]\ndelay_us = 75\n'
    assert job_key(text) == job_key(same)
    assert job_key(text) != job_key(text.replace("75", "76"))
    assert job_key(text) != job_key(text.replace("75", "75.0"))  # another TOML type
    preset = tmp_path / "mine.toml"
    preset.write_text("[nic]\n")
    with_file = f'preset = "{preset}"\n' + text
    before = job_key(with_file)
    preset.write_text("[nic]\ndefault_delay_us = 5\n")
    assert job_key(with_file) != before  # the preset file's bytes count


# -- dispatch: longest first, results in row order ---------------------------


class Recording(Executor):
    """Runs tasks in this process in the order given, and remembers it."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.started = 0

    def start(self) -> None:
        self.started += 1

    def run(
        self, tasks: Sequence[Task], run_fn: RunFn, on_result: Callable[[Task, Outcome], None]
    ) -> None:
        for task in reversed(tasks):  # complete in the opposite order
            self.order.append(task.label)
        for task in reversed(tasks):
            on_result(task, executor.run_task(run_fn, task.toml))


def test_longest_jobs_go_first_and_rows_keep_their_order(fake_run: RunFn) -> None:
    sizes = [0, 1 << 20, 64, 1 << 16]
    base = Scenario(workload={"kind": "stream", "messages": 100})
    jobs = sweeps_plan(base, {"workload.size_bytes": sizes})
    recording = Recording()
    results = runner.run_jobs(jobs, run_fn=fake_run, executor=recording)
    submitted = list(reversed(recording.order))
    assert [label.split("=")[-1] for label in submitted] == ["1048576", "65536", "64", "0"]
    assert results == [fake_run(job.toml) for job in jobs]


def sweeps_plan(base: Scenario, axes: dict[str, list[object]]) -> list[runner.Job]:
    from nicsim import sweeps

    return sweeps.plan_sweep(base, axes)


def test_cost_estimate_orders_the_builtin_heavy_jobs() -> None:
    cost = executor.estimate_cost
    nas_c = cost({"workload": {"kind": "nas-is", "class": "C"}})
    nas_b = cost({"workload": {"kind": "nas-is", "class": "B"}})
    big_stream = cost({"workload": {"kind": "stream", "size_bytes": 1 << 20, "messages": 256}})
    pingpong = cost({"workload": {"kind": "pingpong", "size_bytes": 0, "iterations": 1000}})
    assert nas_c > nas_b > pingpong
    assert big_stream > pingpong
    assert cost({"workload": "not a table"}) == 0.0
    # Collectives by their messages: an exchange sends 2 per rank, an
    # all-to-all P - 1, and both grow with the hosts.
    a2a, exchange = ({"kind": k, "procs_per_host": 1} for k in ("alltoall", "exchange"))

    def on(hosts: int, w: dict[str, object]) -> float:
        return cost({"platform": {"topology": {"hosts": hosts}}, "workload": w})

    assert on(64, a2a) > on(64, exchange) > on(8, exchange) > 0
    assert on(64, exchange) == 8 * on(8, exchange)


def test_identical_scenarios_run_once_and_resume_skips_stored(tmp_path: Path) -> None:
    calls: list[str] = []

    def counting(toml: str) -> Metrics:
        calls.append(toml)
        return {"x": len(calls)}

    base = Scenario(workload={"kind": "stream"})
    # A sweep lists each value once: the same scenarios twice are made here.
    a, b, c = sweeps_plan(base, {"nic.delay_us": [0, 25, 75]})
    jobs = [a, b, *(dataclasses.replace(j, index=i) for i, j in enumerate([a, b, c], 2))]
    store = Store(tmp_path, build="test")
    first = runner.run_jobs(jobs, workers=1, run_fn=counting, store=store)
    assert len(calls) == 3  # three distinct scenarios
    assert first[0] == first[2] and first[1] == first[3]
    # A new campaign over a superset: only the new scenario runs.
    more = sweeps_plan(base, {"nic.delay_us": [0, 25, 75, 100]})
    again = runner.run_jobs(more, workers=1, run_fn=counting, store=store)
    assert len(calls) == 4
    assert again[:3] == [first[0], first[1], first[4]]
    # Fresh: everything runs again.
    runner.run_jobs(
        more, workers=1, run_fn=counting, store=Store(tmp_path, build="test", fresh=True)
    )
    assert len(calls) == 8


def test_nothing_is_started_when_every_job_is_stored(tmp_path: Path, fake_run: RunFn) -> None:
    jobs = sweeps_plan(Scenario(workload={"kind": "stream"}), {"nic.delay_us": [0, 25]})
    store = Store(tmp_path, build="test")
    runner.run_jobs(jobs, run_fn=fake_run, executor=Recording(), store=store)
    idle = Recording()
    runner.run_jobs(jobs, run_fn=fake_run, executor=idle, store=store)
    assert idle.started == 0 and idle.order == []


def test_a_bad_job_stops_the_campaign_but_keeps_what_finished(tmp_path: Path) -> None:
    def bad_at_75(toml: str) -> Metrics:
        if "delay_us = 75" in toml:
            raise NicsimError("nic.delay_us: no")
        return {"x": 1}

    jobs = sweeps_plan(Scenario(workload={"kind": "stream"}), {"nic.delay_us": [0, 25, 75, 100]})
    store = Store(tmp_path, build="test")
    with pytest.raises(NicsimError, match=r"sweep\[2\] nic.delay_us=75: nic.delay_us: no"):
        runner.run_jobs(jobs, workers=1, run_fn=bad_at_75, store=store)
    assert store.done() == 2  # rows 0 and 1 ran first (equal cost keeps row order)


@pytest.mark.core
def test_local_pool_retries_jobs_of_a_worker_that_died(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import _probe

    monkeypatch.setenv("NICSIM_TEST_MARKER", str(tmp_path / "died"))
    base = Scenario(workload={"kind": "stream", "messages": 200})
    jobs = sweeps_plan(base, {"nic.delay_us": [0, 25, 75]})
    results = runner.run_jobs(jobs, workers=2, run_fn=_probe.die_once)
    assert (tmp_path / "died").exists()  # a worker did die
    assert results == [_core.run(job.toml) for job in jobs]


def test_a_stopped_pool_has_killed_its_workers_and_ended_its_manager_thread() -> None:
    """``_stop`` returns once the pool has cleaned up: the command may exit at once.

    Exiting while the pool's manager thread still closed its wake-up pipe could
    print an ``OSError`` after the command's last line (``executor._stop``).
    """
    import multiprocessing
    import signal
    import time
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        max_workers=2,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=executor._init_worker,
        initargs=(os.getpid(), 2),
    )
    futures = [pool.submit(time.sleep, 60) for _ in range(4)]
    processes = list(pool._processes.values())  # type: ignore[attr-defined]
    manager = pool._executor_manager_thread  # type: ignore[attr-defined]
    assert len(processes) == 2 and manager.is_alive()
    started = time.monotonic()
    executor._stop(pool)
    assert time.monotonic() - started < executor.MANAGER_JOIN_S + 1
    if not hasattr(pool, "terminate_workers"):  # Python < 3.14: nicsim's own stop
        assert not manager.is_alive()
    for process in processes:
        process.join(5)
        assert process.exitcode == -signal.SIGTERM
    assert all(f.done() for f in futures)


# -- choosing the executor ---------------------------------------------------


def test_executor_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NICSIM_SCHEDULER", raising=False)
    assert isinstance(executor.choose(), executor.LocalExecutor)
    assert executor.choose(jobs=3).description == "3 local processes"
    with pytest.raises(NicsimError, match="jobs = 2 and scheduler"):
        executor.choose(jobs=2, scheduler="tcp://h:8786")
    with pytest.raises(NicsimError, match="jobs = 0"):
        executor.choose(jobs=0)
    with pytest.raises(NicsimError, match="dask_local = 0"):
        executor.choose(dask_local=0)
    with pytest.raises(NicsimError, match=r"scheduler = 'nowhere'.*tcp://HOST:8786"):
        executor.choose(scheduler="nowhere")
    monkeypatch.setenv("NICSIM_SCHEDULER", "tcp://10.0.0.1:8786")
    chosen = executor.choose()
    assert isinstance(chosen, executor.DaskExecutor) and chosen.address == "tcp://10.0.0.1:8786"
    assert isinstance(executor.choose(jobs=1), executor.LocalExecutor)  # explicit wins
    monkeypatch.setenv("NICSIM_SCHEDULER", "bad address")
    with pytest.raises(NicsimError, match="NICSIM_SCHEDULER = 'bad address'"):
        executor.choose()


def test_without_dask_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name)
    )
    with pytest.raises(NicsimError, match=r"nicsim\[dask\]"):
        executor.choose(scheduler="tcp://127.0.0.1:8786")


def test_unreachable_scheduler_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("distributed")
    code, _, err = nicsim_cli(
        capsys, "sweep", "--axis", "nic.delay_us=0", "--out", str(tmp_path / "s.csv"),
        "--scheduler", "tcp://127.0.0.1:9", "--quiet",
    )  # fmt: skip
    assert code == 2
    assert_one_error_line(err)
    assert "cannot connect" in err


# -- outputs: checked before work --------------------------------------------


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything is simulated or modelled."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("work started before the output was checked")

    monkeypatch.setattr(executor, "run_task", refuse)
    monkeypatch.setattr(_core, "run", refuse)
    monkeypatch.setattr(nicsim.model, "evaluate", refuse)


def _read_only_dir(tmp_path: Path) -> Path:
    """A directory this process cannot create files in (root ignores mode bits)."""
    if os.geteuid() != 0:
        locked = tmp_path / "ro"
        locked.mkdir(mode=0o555)
        return locked
    try:
        handle = os.open("/sys/.nicsim-probe", os.O_CREAT | os.O_WRONLY, 0o644)
    except OSError:
        return Path("/sys")
    os.close(handle)  # pragma: no cover - an unusual /sys
    os.unlink("/sys/.nicsim-probe")
    pytest.skip("no read-only directory available to root here")


@pytest.mark.usefixtures("no_work")
@pytest.mark.parametrize(
    ("verb", "needle"),
    [
        (["reproduce", "coalescing-msgrate", "--out", "{missing}/out"], "does not exist"),
        (["reproduce", "coalescing-msgrate", "--out", "{file}"], "not a directory"),
        (["reproduce", "coalescing-msgrate", "--out", "{ro}/out"], "cannot write"),
        (["reproduce", "coalescing-msgrate", "--out", "{ro}"], "cannot write"),
        (["sweep", "--axis", "nic.delay_us=0", "--out", "{missing}/s.csv"], "does not exist"),
        (["sweep", "--axis", "nic.delay_us=0", "--out", "{ro}/s.csv"], "cannot write"),
        (["sweep", "--axis", "nic.delay_us=0", "--out", "{dir}/t.parquet/"], "is a directory"),
        (["sweep", "--axis", "nic.delay_us=0", "--out", "{file}/s.csv"], "not a directory"),
        (["model", "--plot", "{missing}/x.png"], "does not exist"),
        (["model", "--plot", "{ro}/x.png"], "cannot write"),
        (["run", "--pcap", "{missing}/t.pcap"], "does not exist"),
        (["run", "--pcap", "{ro}/t.pcap"], "cannot write"),
        (["presets", "copy", "omx2009", "{missing}/p.toml"], "does not exist"),
        (["reproduce", "coalescing-msgrate", "--out", "{dir}", "--preset", "nope"], "nope"),
        (
            [
                "reproduce",
                "coalescing-msgrate",
                "--out",
                "{dir}",
                "--jobs",
                "2",
                "--dask-local",
                "2",
            ],
            "give one of",
        ),
        (
            ["sweep", "--axis", "nic.delay_us=0", "--out", "{dir}/s.csv", "--scheduler", "x"],
            "tcp://HOST:8786",
        ),
    ],
)
def test_output_paths_are_checked_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, verb: list[str], needle: str
) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir" / "t.parquet").mkdir(parents=True)
    places = {
        "missing": str(tmp_path / "missing"),
        "file": str(tmp_path / "file"),
        "dir": str(tmp_path / "dir"),
    }
    if any("{ro}" in arg for arg in verb):
        places["ro"] = str(_read_only_dir(tmp_path))
    code, _, err = nicsim_cli(capsys, *[arg.format(**places) for arg in verb])
    assert code == 2
    assert_one_error_line(err)
    assert needle in err
    assert not (tmp_path / "missing").exists()  # no verb creates a missing parent


def test_every_verb_creates_the_named_output_but_no_parent(tmp_path: Path, fake_run: RunFn) -> None:
    out = tmp_path / "new"
    tables = campaign.reproduce(["coalescing-irq-overhead"], out, jobs=1, run_fn=fake_run)
    assert (out / "report.md").is_file() and list(tables) == ["coalescing-irq-overhead"]
    with pytest.raises(NicsimError, match="does not exist"):
        campaign.reproduce(["coalescing-irq-overhead"], tmp_path / "a" / "b", jobs=1)
    table_file = tmp_path / "s.csv"
    campaign.sweep_to_file(
        Scenario(workload={"kind": "stream"}), {"nic.delay_us": [0]}, table_file, jobs=1,
        run_fn=fake_run,
    )  # fmt: skip
    assert table_file.is_file()
    assert not (tmp_path / "a").exists()


# -- outputs: whole or not at all --------------------------------------------


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_an_interrupted_write_leaves_the_previous_set(
    tmp_path: Path, fake_run: RunFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    ids = ["coalescing-irq-overhead", "coalescing-msgrate"]
    campaign.reproduce(ids, out, jobs=1, seed=1, run_fn=fake_run)
    before = _files(out)
    assert "report.md" in before and "coalescing-msgrate.png" in before

    real_plot = report.plot
    drawn: list[str] = []

    def plot_then_interrupt(exp_id: str, *args: object) -> None:
        real_plot(exp_id, *args)  # type: ignore[arg-type]
        drawn.append(exp_id)
        if len(drawn) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(report, "plot", plot_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        campaign.reproduce(ids, out, jobs=1, seed=2, run_fn=fake_run)
    assert _files(out) == before  # the seed-1 set, whole: nothing of seed 2
    # No lock left behind: the interrupted run removed its own.
    assert sorted(p.name for p in (out / ".nicsim").iterdir()) == ["manifest.json", "store"]
    monkeypatch.setattr(report, "plot", real_plot)
    campaign.reproduce(ids, out, jobs=1, seed=2, run_fn=fake_run)
    after = _files(out)
    assert after.keys() == before.keys()
    assert after["coalescing-msgrate.csv"] != before["coalescing-msgrate.csv"]


def test_a_new_set_replaces_the_old_one_as_a_whole(tmp_path: Path, fake_run: RunFn) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    campaign.reproduce(["coalescing-msgrate"], out, jobs=1, run_fn=fake_run)
    campaign.reproduce(["coalescing-irq-overhead"], out, jobs=1, run_fn=fake_run)
    names = set(_files(out))
    assert "coalescing-msgrate.csv" not in names  # the old set's files went with it
    assert {"coalescing-irq-overhead.csv", "report.md", "notes.txt"} <= names


def test_a_move_cut_short_is_finished_by_the_next_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    state = out / ".nicsim"
    staging = state / "staging-1"
    staging.mkdir(parents=True)
    (out / "a.csv").write_text("old a")
    (out / "gone.csv").write_text("old only")
    (out / "b.csv").write_text("new b")  # already moved when the run was killed
    (staging / "a.csv").write_text("new a")
    (staging / "report.md").write_text("new report")
    journal = {
        "staging": "staging-1",
        "files": ["a.csv", "b.csv", "report.md"],
        "remove": ["gone.csv"],
    }
    (state / "commit.json").write_text(json.dumps(journal))
    (state / "staging-2").mkdir()  # abandoned by a run killed while writing
    outputs.recover(out, state)
    assert _files(out) == {"a.csv": b"new a", "b.csv": b"new b", "report.md": b"new report"}
    assert sorted(p.name for p in state.iterdir()) == ["manifest.json"]


def test_atomic_file_keeps_the_old_content_on_error(tmp_path: Path) -> None:
    target = tmp_path / "t.csv"
    target.write_text("old")

    def write_half() -> None:
        with outputs.atomic_file(target) as temp:
            temp.write_text("half")
            raise RuntimeError

    with pytest.raises(RuntimeError):
        write_half()
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


@pytest.mark.core
def test_pcap_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    trace = tmp_path / "t.pcap"
    nicsim.run({"workload": {"kind": "pingpong", "iterations": 5, "warmup": 1}}, pcap=str(trace))
    assert trace.read_bytes()[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1")
    with pytest.raises(NicsimError):
        nicsim.run(
            {"workload": {"kind": "pingpong", "no_such_key": 1}}, pcap=str(tmp_path / "x.pcap")
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.pcap"]


# -- outputs: one writer -----------------------------------------------------


@pytest.mark.usefixtures("no_work")
def test_a_second_reproduce_into_a_busy_out_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    with outputs.OutputLock(out / ".nicsim", out, "--out"):
        code, _, err = nicsim_cli(capsys, "reproduce", "coalescing-msgrate", "--out", str(out))
    assert code == 2
    assert_one_error_line(err)
    assert f"in use by another nicsim (pid {os.getpid()} " in err


def test_a_stale_lock_is_taken_over(tmp_path: Path, fake_run: RunFn) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    out = tmp_path / "out"
    (out / ".nicsim").mkdir(parents=True)
    (out / ".nicsim" / "lock").write_text(f"{gone.stdout.strip()} somehost\n")
    lock = outputs.OutputLock(out / ".nicsim", out, "--out")
    with lock:
        assert lock.stale_pid == gone.stdout.strip()
        assert (out / ".nicsim" / "lock").read_text().split()[0] == str(os.getpid())
    assert not (out / ".nicsim" / "lock").exists()  # released: removed
    campaign.reproduce(["coalescing-irq-overhead"], out, jobs=1, run_fn=fake_run)


# -- the lean start ----------------------------------------------------------


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": f"{ROOT / 'python'}:{ROOT / 'tests'}", "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return set(proc.stdout.split())


# pydantic: typer 0.29 imports it to parse the options of every command.
HEAVY = {"pandas", "pyarrow", "matplotlib", "pydantic"}
# What only a Dask campaign needs (its client's log levels, a probe of the scheduler).
DASK_ONLY = {"logging", "socket"}
# What only a campaign needs (its runner, executor and results store).
CAMPAIGN_ONLY = {"nicsim.runner", "nicsim.executor", "nicsim.store", "hashlib"}


@pytest.mark.core
def test_import_and_run_load_no_table_or_plot_library() -> None:
    assert not HEAVY & _modules_after("import nicsim")
    run_cli = (
        "from nicsim.cli import app\n"
        "try:\n    app(args=['run', '--set', 'workload.iterations=20'], prog_name='nicsim')\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code"
    )
    assert not HEAVY & _modules_after(run_cli)
    assert not DASK_ONLY & (_modules_after("import nicsim") | _modules_after(run_cli))
    assert not CAMPAIGN_ONLY & (_modules_after("import nicsim") | _modules_after(run_cli))
    worker = (
        "from nicsim import executor\n"
        "toml = '[workload]\\nkind = \"stream\"\\nmessages = 50\\n'\n"
        "assert isinstance(executor.run_task(executor.core_run, toml)[1], dict)"
    )
    assert not HEAVY & _modules_after(worker)
    # The check can fail: a table does load pandas.
    assert "pandas" in _modules_after(
        "import nicsim\nnicsim.run_experiment('coalescing-irq-overhead', jobs=1, quick=True)"
    )


@pytest.mark.core
def test_a_json_run_loads_no_rich() -> None:
    """``nicsim run --json`` prints no table: rich (some 40 ms of imports)
    is loaded with the first table or message."""
    run_cli = (
        "from nicsim.cli import app\n"
        "try:\n    app(args=['run', '--set', 'workload.iterations=20'{}], prog_name='nicsim')\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code"
    )
    assert not {m for m in _modules_after(run_cli.format(", '--json'")) if m.startswith("rich")}
    # The check can fail: the metrics table is rich's.
    assert "rich.table" in _modules_after(run_cli.format(""))


def test_the_commands_annotations_are_evaluated_once_at_import() -> None:
    """typer reads every command's annotations on every command line; as
    strings (``from __future__ import annotations``) they were compiled
    again on each run, 14 ms of a small ``nicsim run``."""
    from nicsim.cli import main

    # Every command the app runs, wherever its module in nicsim.cli.
    apps = (main.app, main.presets_app)
    commands = [c.callback for a in apps for c in a.registered_commands if c.callback]
    assert len(commands) >= 8
    for f in commands:
        hints = f.__annotations__
        assert hints and not any(isinstance(h, str) for h in hints.values()), f.__name__


@pytest.mark.core
def test_local_worker_processes_start_without_them() -> None:
    import _probe

    jobs = sweeps_plan(Scenario(workload={"kind": "stream"}), {"nic.delay_us": [0, 25, 75, 100]})
    results = runner.run_jobs(jobs, workers=2, run_fn=_probe.heavy_modules)
    assert {r["heavy"] for r in results} == {"-"}
    assert len({r["pid"] for r in results}) >= 1 and os.getpid() not in {r["pid"] for r in results}


# -- progress ----------------------------------------------------------------


def test_progress_bar_shows_done_total_rate_and_eta(capsys: pytest.CaptureFixture[str]) -> None:
    from io import StringIO

    from rich.console import Console

    from nicsim.progress import Reporter

    shown = Reporter("nicsim demo")
    screen = StringIO()
    shown._console = Console(file=screen, force_terminal=True, width=150)
    with shown.bar(total=4, done=1):
        shown.advance()
        shown._bar.refresh()  # type: ignore[union-attr]
        drawn = screen.getvalue()
    assert "nicsim demo" in drawn and "2/4" in drawn and "jobs/s" in drawn and "ETA" in drawn
    quiet = Reporter(None)
    with quiet.bar(total=4):
        quiet.note("hello")
        quiet.advance()
    piped = Reporter("x")
    piped._console = Console(file=StringIO(), force_terminal=False)
    with piped.bar(total=4):
        assert piped._bar is None  # not a terminal: no bar
    assert capsys.readouterr().err == ""


def test_table_assembly_does_not_depend_on_completion_order(fake_run: RunFn) -> None:
    exp = nicsim.studies.experiments.get("coalescing-msgrate")
    jobs = runner.plan(exp, quick=True)
    in_order = runner.table(exp, jobs, runner.run_jobs(jobs, workers=1, run_fn=fake_run))
    recorded = runner.table(exp, jobs, runner.run_jobs(jobs, run_fn=fake_run, executor=Recording()))
    pd.testing.assert_frame_equal(in_order, recorded)
