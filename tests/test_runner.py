"""Runner unit tests against the fake core (``fake_run``): order, seeds, errors."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from nicsim import NicsimError, runner
from nicsim.studies.experiments import EXPERIMENTS, GROUPS
from nicsim.studies.report import write_table

RunFn = Callable[[str], dict[str, float | int | str]]


def test_table_rows_follow_configuration_order(fake_run: RunFn) -> None:
    exp = EXPERIMENTS["coalescing-msgrate"]
    table = runner.run_experiment(exp.id, jobs=1, run_fn=fake_run)
    assert list(table.columns) == list(exp.columns)
    assert table[list(exp.parameters)].to_dict("records") == exp.configurations(False)


def test_pingpong_throughput_is_zero_at_size_zero(fake_run: RunFn) -> None:
    table = runner.run_experiment("coalescing-pingpong", jobs=1, quick=True, run_fn=fake_run)
    assert (table.loc[table["size_bytes"] == 0, "throughput_MiBps"] == 0).all()
    assert (table.loc[table["size_bytes"] > 0, "throughput_MiBps"] > 0).all()


def test_each_row_has_its_derived_seed_and_preset() -> None:
    exp = EXPERIMENTS["coalescing-irq-overhead"]
    jobs = runner.plan(exp, seed=9, preset="mine.toml")
    for job in jobs:
        data = tomllib.loads(job.toml)
        assert data["seed"] == runner.derive_seed(9, exp.id, job.index)
        assert data["preset"] == "mine.toml"


def test_same_seed_same_bytes_other_seed_other_bytes(fake_run: RunFn, tmp_path: Path) -> None:
    def csv(seed: int, name: str) -> bytes:
        table = runner.run_experiment("coalescing-msgrate", jobs=1, seed=seed, run_fn=fake_run)
        return write_table(table, tmp_path, name)[0].read_bytes()

    assert csv(1, "a") == csv(1, "b")
    assert csv(1, "a") != csv(2, "c")


def test_run_experiments_splits_one_pool_back_into_tables(fake_run: RunFn) -> None:
    ids = list(GROUPS["omx-coal"])
    tables = runner.run_experiments(ids, jobs=1, quick=True, run_fn=fake_run)
    assert list(tables) == ids
    for exp_id, table in tables.items():
        assert len(table) == len(EXPERIMENTS[exp_id].configurations(True))
        alone = runner.run_experiment(exp_id, jobs=1, quick=True, run_fn=fake_run)
        assert table.equals(alone)


def _bad_run(scenario_toml: str) -> dict[str, float | int | str]:
    raise NicsimError("nic.coalescing: nope")


def _no_metrics(scenario_toml: str) -> dict[str, float | int | str]:
    return {"events": 1}


def test_core_errors_are_labelled_with_the_row() -> None:
    with pytest.raises(NicsimError, match=r"coalescing-irq-overhead\[0\] strategy=disabled"):
        runner.run_experiment("coalescing-irq-overhead", jobs=1, run_fn=_bad_run)


def test_missing_metric_is_reported() -> None:
    with pytest.raises(RuntimeError, match="no overhead_ns_per_packet"):
        runner.run_experiment("coalescing-irq-overhead", jobs=1, run_fn=_no_metrics)


def test_jobs_must_be_positive(fake_run: RunFn) -> None:
    with pytest.raises(NicsimError, match="jobs = 0"):
        runner.run_experiment("coalescing-irq-overhead", jobs=0, run_fn=fake_run)


@pytest.mark.core
def test_parallel_pool_matches_serial_with_fake(fake_run: RunFn) -> None:
    # Workers are spawned and must import nicsim, hence the real core.
    serial = runner.run_experiment("coalescing-msgrate", jobs=1, run_fn=fake_run)
    parallel = runner.run_experiment("coalescing-msgrate", jobs=2, run_fn=fake_run)
    assert serial.equals(parallel)
