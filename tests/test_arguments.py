"""Bad arguments to the Python API and the CLI: a one-line NicsimError naming them.

Every entry point refuses the same seeds with the same message (the core's),
and a scenario without ``workload.kind`` is refused naming that key.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import nicsim
from nicsim import runner
from nicsim._core import SEED_LIMIT
from nicsim.scenario import Scenario, check_seed

ROOT = Path(__file__).resolve().parents[1]
BASE = {"workload": {"kind": "pingpong", "iterations": 5, "warmup": 1}}
SEED_ERROR = "invalid value for `seed`: {!r} (allowed: an integer 0 ..= 9223372036854775807)"


@pytest.mark.parametrize("scenario", [None, 5, ["workload"], 2.5])
def test_run_refuses_a_scenario_of_the_wrong_type(scenario: Any) -> None:
    with pytest.raises(nicsim.NicsimError, match=r"^scenario = .*expected a nicsim\.Scenario"):
        nicsim.run(scenario)
    with pytest.raises(nicsim.NicsimError, match=r"^scenario = "):
        nicsim.sweep(scenario, {"seed": [1]})


def test_sweep_refuses_axes_that_are_not_a_dict() -> None:
    with pytest.raises(nicsim.NicsimError, match=r"^axes = "):
        nicsim.sweep(BASE, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", [3, "openmx", object()])
def test_run_refuses_a_policy_that_is_not_callable(policy: Any) -> None:
    with pytest.raises(nicsim.NicsimError, match=r"^policy = .*expected a callable"):
        nicsim.run(BASE, policy=policy)


@pytest.mark.parametrize("pcap", [5, 1.5, ["a.pcap"]])
def test_pcap_must_be_a_path(pcap: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(nicsim.NicsimError, match=r"^pcap = .*expected a file path"):
        nicsim.run(BASE, pcap=pcap)
    with pytest.raises(nicsim.NicsimError, match=r"^pcap = "):
        nicsim.run({**BASE, "pcap": pcap})
    assert list(tmp_path.iterdir()) == [], "nothing written"
    assert Scenario().set("pcap", tmp_path / "t.pcap").pcap == tmp_path / "t.pcap"


BAD_SEEDS = [-1, SEED_LIMIT, 2**64, True, "1", 1.0]


@pytest.mark.parametrize("seed", BAD_SEEDS)
def test_one_seed_range_and_one_message_everywhere(seed: Any, fake_run: runner.RunFn) -> None:
    message = "^" + _escape(SEED_ERROR.format(seed))
    with pytest.raises(nicsim.NicsimError, match=message):
        check_seed(seed)
    with pytest.raises(nicsim.NicsimError, match=message):
        nicsim.run(BASE, seed=seed)
    with pytest.raises(nicsim.NicsimError, match=message):
        nicsim.run({**BASE, "seed": seed})
    with pytest.raises(nicsim.NicsimError, match=message):
        nicsim.sweep(BASE, {"seed": [1, seed]}, jobs=1)
    with pytest.raises(nicsim.NicsimError, match=message):
        runner.run_experiment("coalescing-msgrate", jobs=1, quick=True, seed=seed, run_fn=fake_run)


def test_the_seed_bounds_are_allowed() -> None:
    assert check_seed(0) == 0
    assert check_seed(SEED_LIMIT - 1) == SEED_LIMIT - 1
    assert SEED_LIMIT == 2**63 == 1 << runner.SEED_BITS


@pytest.mark.core
def test_the_core_gives_the_same_seed_message() -> None:
    with pytest.raises(nicsim.NicsimError, match="^" + _escape(SEED_ERROR.format(-1))):
        nicsim._core.run('seed = -1\n[workload]\nkind = "pingpong"\n')


@pytest.mark.core
@pytest.mark.parametrize("workload", [{}, {"size_bytes": 8}])
def test_a_missing_kind_is_named(workload: dict[str, Any]) -> None:
    message = r"^missing key `workload\.kind` \(required: one of pingpong"
    with pytest.raises(nicsim.NicsimError, match=message):
        nicsim.run({"workload": workload})


@pytest.mark.core
def test_type_errors_name_the_key() -> None:
    with pytest.raises(
        nicsim.NicsimError,
        match=r'^invalid value for `workload\.size_bytes`: "big" \(allowed: an integer 0 \.\.=',
    ):
        nicsim.run({"workload": {"kind": "stream", "size_bytes": "big"}})
    message = r"^invalid value for `nic\.coalescing`: 3 \(allowed: one of"
    with pytest.raises(nicsim.NicsimError, match=message):
        nicsim.run({**BASE, "nic": {"coalescing": 3}})


@pytest.mark.core
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--seed", "-1"], SEED_ERROR.format(-1)),
        (
            ["reproduce", "coalescing-msgrate", "--quick", "--out", "OUT", "--seed", "-1"],
            SEED_ERROR.format(-1),
        ),
        (["sweep", "--axis", "seed=1,-1", "--out", "OUT/s.csv"], SEED_ERROR.format(-1)),
        (["run", "--scenario", "NOKIND"], "missing key `workload.kind`"),
        (["run", "--set", 'workload.size_bytes="big"'], "`workload.size_bytes`"),
    ],
)
def test_cli_errors_are_one_line(args: list[str], needle: str, tmp_path: Path) -> None:
    nokind = tmp_path / "nokind.toml"
    nokind.write_text("[workload]\nsize_bytes = 8\n")
    args = [str(nokind) if a == "NOKIND" else a.replace("OUT", str(tmp_path / "out")) for a in args]
    proc = subprocess.run(
        [sys.executable, "-m", "nicsim", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "python")},
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert needle in lines[0]
    assert not (tmp_path / "out").exists(), "nothing written"


def _escape(text: str) -> str:
    return re.escape(text)


# -- every argument of the wrong type is named, before any work ----------------

QUICK = "coalescing-irq-overhead"
#: (call, start of the message): nothing runs, nothing is written.
WRONG_TYPES: list[tuple[str, Any, str]] = [
    ("run progress", lambda: nicsim.run(BASE, progress=5), r"progress = 5: expected a callable"),
    (
        "None value",
        lambda: nicsim.run(BASE, nic__delay_us=None),
        r"invalid value for `nic\.delay_us`: None \(allowed: a num",
    ),
    (
        "object value",
        lambda: nicsim.run(BASE, nic__delay_us=object()),
        r"invalid value for `nic\.delay_us`: <object",
    ),
    (
        "int beyond 64 bits",
        lambda: nicsim.run(BASE, workload__size_bytes=2**70),
        r"invalid value for `workload\.size_bytes`: 1180591620717411303424 \(allowed",
    ),
    ("non-string key", lambda: nicsim.run({5: 1}), r"key 5: expected a dotted key string"),
    (
        "nested non-string key",
        lambda: nicsim.run({**BASE, "nic": {5: 1}}),
        r"nic: key 5 is not a string",
    ),
    (
        "preset None",
        lambda: nicsim.run({**BASE, "preset": None}),
        r"invalid value for `preset`: None",
    ),
    (
        "axis of one value",
        lambda: nicsim.sweep(BASE, {"nic.delay_us": 5}),
        r"axes\['nic\.delay_us'\] = 5: expected a list",
    ),
    (
        "axis of a string",
        lambda: nicsim.sweep(BASE, {"nic.delay_us": "0,25"}),
        r"axes\['nic\.delay_us'\] = '0,25'",
    ),
    (
        "jobs text",
        lambda: nicsim.sweep(BASE, {"seed": [1]}, jobs="2"),
        r"jobs = '2': expected a number of workers",
    ),
    (
        "dask_local float",
        lambda: nicsim.sweep(BASE, {"seed": [1]}, dask_local=1.5),
        r"dask_local = 1\.5",
    ),
    (
        "scheduler int",
        lambda: nicsim.sweep(BASE, {"seed": [1]}, scheduler=5),
        r"scheduler = 5: expected an address",
    ),
    (
        "store int",
        lambda: nicsim.sweep(BASE, {"seed": [1]}, jobs=1, store=5),
        r"store = 5: expected a path",
    ),
    (
        "experiment preset",
        lambda: nicsim.run_experiment(QUICK, preset=5),
        r"preset = 5: expected a path",
    ),
    ("experiment jobs", lambda: nicsim.run_experiment(QUICK, jobs=True), r"jobs = True"),
    (
        "experiments int",
        lambda: nicsim.reproduce(5, "out"),
        r"experiments = 5: expected a name or a list",
    ),
    (
        "out_dir int",
        lambda: nicsim.reproduce([QUICK], 5),
        r"out_dir = 5: expected a directory path",
    ),
    ("preset name int", lambda: nicsim.preset_toml(5), r"name = 5: expected a preset name"),
    ("set key int", lambda: Scenario().set(5, 1), r"key 5: expected a dotted key string"),
    ("from_dict int", lambda: Scenario.from_dict(5), r"scenario = 5: expected a dict"),
    ("from_toml int", lambda: Scenario.from_toml(5), r"scenario = 5: expected TOML text"),
    ("load int", lambda: Scenario.load(5), r"scenario file = 5: expected a path"),
    ("update int", lambda: Scenario().update(5), r"overrides = 5: expected a dict"),
    ("section int", lambda: Scenario(workload=5).to_toml(), r"workload = 5: expected a table"),
    (
        "model sizes negative",
        lambda: nicsim.model.evaluate(sizes=[-1]),
        r"sizes = \[-1\]: expected a list",
    ),
    ("model sizes int", lambda: nicsim.model.evaluate(sizes=5), r"sizes = 5: expected a list"),
]


@pytest.mark.parametrize(
    ("call", "message"), [c[1:] for c in WRONG_TYPES], ids=[c[0] for c in WRONG_TYPES]
)
def test_an_argument_of_the_wrong_type_is_a_named_error_before_any_work(
    call: Any, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(nicsim.NicsimError, match="^" + message):
        call()
    assert list(tmp_path.iterdir()) == [], "nothing written"


def test_numbers_of_other_types_are_written_as_plain_toml() -> None:
    """NumPy numbers (a sweep over np.arange, say) are numbers, not a type error."""
    import numpy as np

    s = Scenario(workload={"kind": "stream", "size_bytes": np.int64(128)})
    s.set("nic.delay_us", np.float64(25.0)).set("platform.nic.ring_slots", np.uint16(256))
    assert "size_bytes = 128\n" in s.to_toml() and "delay_us = 25.0\n" in s.to_toml()
    assert "ring_slots = 256\n" in s.to_toml()


@pytest.mark.core
def test_one_metric_or_experiment_may_be_given_as_a_string() -> None:
    table = nicsim.sweep(BASE, {"seed": [1]}, metrics="latency_us", jobs=1)
    assert list(table.columns) == ["seed", "latency_us"]
