"""The experiment registry: SPEC §4 ids, columns and grids; one list; claims show their check."""

from __future__ import annotations

import dataclasses
import operator
import re
from collections.abc import Callable
from types import ModuleType

import pandas as pd
import pytest

from nicsim.scenario import Scenario
from nicsim.studies import (
    exp_coal,
    exp_coal_nas,
    exp_coal_transfer,
    exp_emo,
    exp_lci,
    exp_mq,
    exp_napi,
    experiments,
)
from nicsim.studies.exp_base import Claim, Experiment
from nicsim.studies.experiments import EXPERIMENTS, GROUPS

# SPEC.md §4, copied verbatim.
SPEC_COLUMNS = {
    "coalescing-pingpong": (("strategy", "size_bytes"), ("latency_us", "throughput_MiBps")),
    "coalescing-delay-sweep": (
        ("delay_us", "irq_binding", "sleep", "size_bytes"),
        ("msg_rate_per_s", "interrupts_per_msg"),
    ),
    "coalescing-msgrate": (("strategy", "size_bytes"), ("msg_rate_per_s", "interrupts_per_msg")),
    "coalescing-irq-overhead": (("strategy", "irq_binding"), ("overhead_ns_per_packet",)),
    "coalescing-transfer": (("strategy", "size_bytes"), ("transfer_time_us", "interrupts")),
    "coalescing-marking": (("unmarked_class",), ("transfer_time_us",)),
    "coalescing-misorder": (("strategy", "degree"), ("transfer_time_us", "deferral_success_rate")),
    "coalescing-nas-is": (("class", "strategy"), ("exec_time_s", "interrupts")),
    "multiqueue-pingpong": (
        ("steering", "binding", "ioat", "size_bytes"),
        ("latency_us", "throughput_MiBps"),
    ),
    "multiqueue-idle": (("irq_on_process_core", "size_bytes"), ("latency_us", "throughput_MiBps")),
    "multiqueue-cache": (
        ("steering/binding", "size_bytes"),
        ("kernel_miss_rate", "user_miss_rate"),
    ),
    "multiqueue-alltoall": (("steering", "size_bytes", "stack"), ("time_us", "relative_to_native")),
    "multiqueue-nas": (("benchmark", "steering/stack"), ("exec_time_s",)),
    # Beyond SPEC §4: Table IV's CG, MG and FT rows, which SPEC's list leaves out.
    "coalescing-nas": (("benchmark", "strategy"), ("exec_time_s", "interrupts")),
    # Beyond SPEC §4: today's Linux knobs on the modern preset.
    "napi-knobs": (
        ("config", "workload"),
        ("latency_us", "msg_rate_per_s", "cpu_cores", "interrupts_per_msg"),
    ),
}

# Every id of SPEC §4: a registered experiment must be one of these.
SPEC_IDS = {
    *SPEC_COLUMNS,
    "lci-polling", "lci-multicast", "lci-multicast-apps", "lci-watchdog",
    "lci-timers", "emo-latency", "emo-overhead",
    "emo-cache",  # beyond SPEC §4: the EMO cache layer
}  # fmt: skip


def test_registered_ids_are_spec_ids() -> None:
    assert set(EXPERIMENTS) <= SPEC_IDS
    assert set(SPEC_COLUMNS) <= set(EXPERIMENTS)


@pytest.mark.parametrize("exp_id", sorted(SPEC_COLUMNS))
def test_columns_match_spec(exp_id: str) -> None:
    exp = EXPERIMENTS[exp_id]
    params, metrics = SPEC_COLUMNS[exp_id]
    assert (exp.parameters, exp.metrics) == (params, metrics)
    for quick in (False, True):
        for row in exp.configurations(quick):
            assert tuple(row) == params


def test_omx_coal_group() -> None:
    assert set(GROUPS["omx-coal"]) | set(GROUPS["omx-mq"]) == set(SPEC_COLUMNS)
    assert not set(GROUPS["omx-coal"]) & set(GROUPS["omx-mq"])
    assert experiments.expand(["omx-coal", "coalescing-msgrate"]) == list(GROUPS["omx-coal"])


def test_unknown_experiment_names_choices() -> None:
    with pytest.raises(ValueError, match="coalescing-pingpong"):
        experiments.expand(["no-such-thing"])


def test_grids() -> None:
    pingpong = EXPERIMENTS["coalescing-pingpong"].configurations(False)
    sizes = [r["size_bytes"] for r in pingpong if r["strategy"] == "disabled"]
    assert sizes == [0] + [2**k for k in range(23)]
    published = {"disabled", "timeout", "openmx", "stream"}
    # The published rows keep their names; adaptive ones are extra rows.
    assert {r["strategy"] for r in pingpong} == published | {"adaptive", "openmx-adaptive"}
    sweep = EXPERIMENTS["coalescing-delay-sweep"].configurations(False)
    assert sorted({r["delay_us"] for r in sweep}) == [0, 5, 10, 25, 50, 75, 100, 150, 200]
    assert len(sweep) == 9 * 2 * 2 and {r["size_bytes"] for r in sweep} == {128}
    msgrate = EXPERIMENTS["coalescing-msgrate"].configurations(False)
    assert sorted({r["size_bytes"] for r in msgrate}) == [0, 32768, 1048576]
    assert len(EXPERIMENTS["coalescing-irq-overhead"].configurations(False)) == 4


@pytest.mark.parametrize("exp_id", sorted(SPEC_COLUMNS))
def test_configurations_are_deterministic_and_quick_keeps_rows(exp_id: str) -> None:
    exp = EXPERIMENTS[exp_id]
    assert exp.configurations(False) == exp.configurations(False)
    assert exp.configurations(False) == exp.configurations(True)


@pytest.mark.parametrize("exp_id", sorted(SPEC_COLUMNS))
def test_scenarios_build_and_quick_is_smaller(exp_id: str) -> None:
    exp = EXPERIMENTS[exp_id]
    for params in exp.configurations(False):
        full = exp.scenario(params, False)
        quick = exp.scenario(params, True)
        Scenario.from_dict(full).to_toml()
        for key in ("iterations", "messages", "packets"):
            if key in full["workload"]:
                assert quick["workload"][key] <= full["workload"][key]


def test_delay_zero_is_timeout_with_zero_delay() -> None:
    exp = EXPERIMENTS["coalescing-delay-sweep"]
    row = {"delay_us": 0, "irq_binding": "single", "sleep": "off", "size_bytes": 128}
    scenario = exp.scenario(row, False)
    assert scenario["nic"] == {"coalescing": "timeout", "delay_us": 0.0, "steering": "single-core"}
    assert scenario["host"] == {"sleep": False}
    assert scenario["workload"]["kind"] == "stream"


def test_irq_overhead_is_a_flood_with_soaker() -> None:
    exp = EXPERIMENTS["coalescing-irq-overhead"]
    scenario = exp.scenario({"strategy": "timeout", "irq_binding": "rr"}, False)
    assert scenario["workload"]["kind"] == "flood"
    assert scenario["host"]["soaker"] is True
    assert scenario["nic"]["steering"] == "single-rr"


def test_published_values_are_the_spec_numbers() -> None:
    values = {
        exp_id: sorted(p.value for p in EXPERIMENTS[exp_id].published) for exp_id in SPEC_COLUMNS
    }
    # The SPEC §5 calibration targets, and the ratios the study states beside them.
    assert values["coalescing-msgrate"] == [2, 2, 252000, 423000, 435000, 490000]
    assert values["coalescing-delay-sweep"] == [0.5, 433000]
    assert values["coalescing-irq-overhead"] == [20, 40, 774, 965]
    assert values["coalescing-pingpong"] == [10, 75]


# -- the one list ----------------------------------------------------------

STUDY_MODULES = [exp_coal, exp_coal_transfer, exp_coal_nas, exp_napi, exp_mq, exp_lci, exp_emo]


def test_all_names_every_group_and_runs_every_experiment() -> None:
    assert GROUPS["all"] == ("omx-coal", "napi", "omx-mq", "lci", "emo")
    assert experiments.expand(["all"]) == list(EXPERIMENTS)
    every_group = [exp_id for group in experiments.STUDIES for exp_id in GROUPS[group]]
    assert set(EXPERIMENTS) == set(every_group)


@pytest.mark.parametrize("module", STUDY_MODULES, ids=lambda m: m.__name__)
def test_every_experiment_of_a_study_module_is_listed(module: ModuleType) -> None:
    defined = [v for v in vars(module).values() if isinstance(v, Experiment)]
    assert defined
    for exp in defined:
        assert EXPERIMENTS[exp.id] is exp, f"{module.__name__}: {exp.id} not in STUDIES"


def test_two_experiments_with_one_id_are_refused() -> None:
    twin = dataclasses.replace(exp_coal.PINGPONG, title="another")
    with pytest.raises(ValueError, match="coalescing-pingpong"):
        experiments._by_id({"a": (exp_coal.PINGPONG,), "b": (twin,)})


# -- claims: the text shows the check --------------------------------------

#: The comparison and bound at the end of a claim's text (and its unit).
CLAIM_TAIL = re.compile(r" (?P<op><=|>=|<|>) (?P<bound>-?[0-9.e+-]+)(?: (?P<unit>\S+))?$")
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
ALL_CLAIMS = [
    pytest.param(claim, id=f"{exp.id}[{i}]")
    for exp in EXPERIMENTS.values()
    for i, claim in enumerate(exp.claims)
]


@pytest.mark.parametrize("claim", ALL_CLAIMS)
def test_claim_text_states_the_check_it_makes(claim: Claim) -> None:
    tail = CLAIM_TAIL.search(claim.text)
    assert tail, claim.text
    written = float(tail["bound"])
    assert written == claim.bound
    assert (tail["unit"] or "") == claim.unit
    compare = COMPARE[tail["op"]]
    step = max(abs(written), 1.0) * 1e-6
    for value in (written - 1, written - step, written, written + step, written + 1):
        assert claim.holds(value) == compare(value, written), (claim.text, value)
    # The statement itself carries no second comparison that could drift.
    assert not CLAIM_TAIL.search(claim.statement), claim.statement


@pytest.mark.parametrize(
    ("make", "below", "at", "above", "symbol"),
    [
        (Claim.below, True, False, False, "<"),
        (Claim.at_most, True, True, False, "<="),
        (Claim.above, False, False, True, ">"),
        (Claim.at_least, False, True, True, ">="),
    ],
)
def test_claim_constructors(
    make: Callable[..., Claim], below: bool, at: bool, above: bool, symbol: str
) -> None:
    claim = make(lambda t: None, 0.75, text="x: r", source="s", unit="ns")
    assert claim.text == f"x: r {symbol} 0.75 ns"
    assert (claim.holds(0.5), claim.holds(0.75), claim.holds(1.0)) == (below, at, above)
    assert claim.check(pd.DataFrame()) is None


def test_claim_refuses_a_bound_its_text_would_round() -> None:
    with pytest.raises(ValueError, match="bound"):
        Claim.below(lambda t: 0.0, 1 / 3, text="x", source="s")


def test_coalescing_nas_runs_table_iv_rows_and_reads_its_speedups() -> None:
    exp = EXPERIMENTS["coalescing-nas"]
    for row in exp.configurations(False):
        bench, cls, procs = str(row["benchmark"]).split(".")
        scenario = exp.scenario(row, False)
        assert scenario["workload"] == {"kind": f"nas-{bench}", "class": cls, "procs_per_host": 8}
        assert 2 * scenario["workload"]["procs_per_host"] == int(procs)
        assert scenario["nic"] == {"coalescing": row["strategy"]}
    times = [p for p in exp.published if p.cell is not None]
    assert len(times) == 28 and {p.source.where for p in exp.published} == {"Table IV"}
    # The printed speedups are 100 (time(timeout) / time(strategy) - 1) of the printed times.
    table = pd.DataFrame(
        [
            {"benchmark": b, "strategy": s, "exec_time_s": float(t)}
            for b, cells in exp_coal_nas.TABLE_IV.items()
            for s, t in cells.items()
        ]
    )
    speedups = [p for p in exp.published if p.cell is None]
    assert [p.value for p in speedups] == [-1.6, -2.5, -1.4]
    for p in speedups:
        simulated = p.simulated(table)
        assert simulated is not None and round(simulated, 1) == p.value


def test_the_omx_coal_micro_benchmarks_run_native_open_mx_and_its_nas_runs_mpi() -> None:
    # [OMX-COAL] §IV-B1 "between two Open-MX processes", §IV-B3 "an Open-MX
    # ping-pong benchmark"; §IV-D runs the NAS through Open MPI 1.3.0.
    from nicsim.studies.experiments import STUDIES

    for exp in STUDIES["omx-coal"]:
        if exp.preset is not None or exp.id == "coalescing-irq-overhead":
            continue  # another platform; a flood has no library
        params = exp.configurations(True)[0]
        mpi = exp.scenario(params, True).get("protocol", {}).get("mpi", True)
        assert mpi is exp.id.startswith("coalescing-nas"), exp.id
