"""The experiment registry matches SPEC §4 (ids, columns, grids)."""

from __future__ import annotations

import pytest

from nicsim import experiments
from nicsim.experiments import EXPERIMENTS, GROUPS
from nicsim.scenario import Scenario

# SPEC.md §4, copied verbatim for the experiments implemented so far.
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
    # Beyond SPEC §4 (issue: today's Linux knobs on the modern preset).
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
    "emo-cache",  # beyond SPEC §4: the EMO cache layer (issue 6, item 4)
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
    assert values["coalescing-msgrate"] == [252000, 423000, 435000, 490000]
    assert values["coalescing-delay-sweep"] == [433000]
    assert values["coalescing-irq-overhead"] == [40, 774, 965]
    assert values["coalescing-pingpong"] == [10, 75]
