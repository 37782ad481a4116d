"""[EMO]: the model API, the ``nicsim model`` command and the emo experiments."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from conftest import REAL_CORE
from nicsim import model, runner
from nicsim._core import NicsimError
from nicsim.cli import app
from nicsim.scenario import Scenario
from nicsim.studies import exp_emo
from nicsim.studies.experiments import EXPERIMENTS, GROUPS

# SPEC.md §4 rows, with the frames per message the simulator sends before them.
EMO_COLUMNS = {
    "emo-latency": (
        ("path", "coalescing", "size_bytes"),
        ("frames", "sim_latency_us", "model_latency_us"),
    ),
    "emo-overhead": (
        ("path", "coalescing", "size_bytes"),
        ("frames", "sim_overhead_pct", "model_overhead_pct"),
    ),
}


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        app(args=list(args), prog_name="nicsim")
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


@pytest.mark.parametrize("exp_id", sorted(EMO_COLUMNS))
def test_columns_match_spec(exp_id: str) -> None:
    exp = EXPERIMENTS[exp_id]
    assert (exp.parameters, exp.metrics) == EMO_COLUMNS[exp_id]
    assert exp.preset == "emo2004"


def test_group_and_grid() -> None:
    assert GROUPS["emo"][:2] == ("emo-latency", "emo-overhead")
    rows = EXPERIMENTS["emo-latency"].configurations(False)
    assert {r["path"] for r in rows} == {"to-nic", "to-kernel", "to-app"}
    assert {r["coalescing"] for r in rows} == {"none", "default", "max"}
    sizes = sorted({int(r["size_bytes"]) for r in rows})
    # The study's 100 ... 8900 B, then messages of several frames beyond it.
    assert sizes[0] == 100 and 8900 in sizes and sizes[-1] == 32000
    assert set(exp_emo.STUDY_SIZES) <= set(sizes)
    assert len(rows) == 3 * 3 * len(sizes)


@pytest.mark.parametrize(
    ("setting", "nic"),
    [
        ("none", {"coalescing": "timeout", "delay_us": 0.0, "frames": 0}),
        ("default", {"coalescing": "timeout", "frames": 6}),
        ("max", {"coalescing": "timeout", "delay_us": 100.0, "frames": 1000}),
    ],
)
def test_coalescing_settings_are_the_spec_thresholds(setting: str, nic: dict[str, object]) -> None:
    assert model.coalescing_options(setting) == nic


@pytest.mark.parametrize(
    ("path", "kind"), [("to-nic", "echo-nic"), ("to-kernel", "echo-kernel"), ("to-app", "pingpong")]
)
def test_measurement_scenarios(path: str, kind: str) -> None:
    s = model.echo_scenario(path, "max", 1000, iterations=7)
    assert s["workload"] == {"kind": kind, "size_bytes": 1000, "iterations": 7, "warmup": 10}
    # Overhead the way [EMO] measured it: a cycle soaker, the library blocks.
    assert s["host"] == {"wait": "block", "soaker": True}
    # The setting is Host B's; Host A keeps the AceNIC defaults ([EMO] §4).
    assert s["nic"] == {**model.coalescing_options("max"), "host0": {"frames": 6}}
    Scenario.from_dict(s).to_toml()


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: model.echo_scenario("to-disk", "none", 1), "to-kernel"),
        (lambda: model.coalescing_options("some"), "default"),
        (lambda: model.evaluate(path="x"), "to-app"),
    ],
)
def test_bad_names_raise_naming_the_choices(call: object, needle: str) -> None:
    with pytest.raises(NicsimError, match=needle):
        call()  # type: ignore[operator]


def test_evaluate_passes_layers_and_returns_terms() -> None:
    layer = model.Layer("mpi-matching", cycles=880, on="nic", latency_ns=1000)
    [plain] = model.evaluate(path="to-app", sizes=[1000])
    [with_layer] = model.evaluate(path="to-app", sizes=[1000], layers=[layer])
    assert with_layer.latency_us > plain.latency_us
    assert "mpi-matching" in with_layer.layers
    assert math.isclose(sum(v for _, v in plain.overhead_terms_cycles), plain.overhead_cycles)


def test_model_prices_several_frames_and_refuses_rendezvous() -> None:
    exp = EXPERIMENTS["emo-latency"]
    assert exp.model is not None

    def toml(size: int) -> str:
        params: dict[str, str | int | float] = {
            "path": "to-app",
            "coalescing": "none",
            "size_bytes": size,
        }
        scenario = Scenario.from_dict(exp.scenario(params, True))
        scenario.preset = str(exp.preset)
        return scenario.to_toml()

    m = exp.model({"path": "to-app", "size_bytes": 32000}, toml(32000))
    # MTU 9000: Open-MX medium fragments of 8192 B.
    assert m["frames"] == 4 and m["model_latency_us"] > 0
    assert math.isnan(exp.model({"path": "to-app", "size_bytes": 40000}, toml(40000))["frames"])


def _table() -> pd.DataFrame:
    """Model = simulated on one frame; beyond, the simulated frames overlap (below the model)."""
    rows = []
    for path, base in (("to-nic", 10.0), ("to-kernel", 20.0), ("to-app", 30.0)):
        for setting, wait in (("none", 0.0), ("default", 30.0), ("max", 100.0)):
            for size, frames in ((100, 1), (1000, 1), (8000, 1), (16000, 2), (32000, 4)):
                mod = base + wait + 0.02 * size
                sim = mod - 5.0 * (frames - 1) ** 2
                rows.append((path, setting, size, frames, sim, mod))
    cols = ["path", "coalescing", "size_bytes", "frames", "sim_latency_us", "model_latency_us"]
    return pd.DataFrame(rows, columns=cols)


def test_slopes_offsets_and_departures() -> None:
    table = _table()
    for _, sim, mod in exp_emo.slopes(table):
        assert math.isclose(sim, 0.02) and math.isclose(mod, 0.02)
    raised = {(p, c): (s, m) for p, c, s, m in exp_emo.offsets(table)}
    assert raised[("to-app", "max")] == pytest.approx((100.0, 100.0))
    gone = {(p, n): d for p, n, _, d in exp_emo.departures(table)}
    assert gone[("to-kernel", 8000)] == 0.0 and gone[("to-kernel", 32000)] == -45.0
    notes = EXPERIMENTS["emo-latency"].notes
    assert notes is not None and "Where they part" in notes(table)


def test_claims_hold_on_agreement_and_departure_and_fail_without() -> None:
    from nicsim.studies.report import claims

    exp = EXPERIMENTS["emo-latency"]
    held = {row[0]: row[2] for row in claims(exp, _table())}
    one, several = (c.text for c in exp.claims[:2])
    assert held[one] == "yes" and held[several] == "yes"
    # Without the pipelining (simulated = model on every row), the departure claim fails;
    # with a one-frame disagreement, the agreement claim fails.
    flat = _table().assign(sim_latency_us=lambda t: t["model_latency_us"])
    assert {row[0]: row[2] for row in claims(exp, flat)}[several] != "yes"
    off = _table().assign(sim_latency_us=lambda t: t["model_latency_us"] * 1.1)
    assert {row[0]: row[2] for row in claims(exp, off)}[one] == "no"


def test_decomposition_takes_half_a_bcopy_off_to_nic() -> None:
    d = exp_emo.decomposition(_table(), "none")
    # 8000 B: half of 8000 x 4 cycles at 88 MHz off the ToNIC latency.
    assert d.loc[8000, "sim_to_nic"] - d.loc[8000, "sim_projected_to_nic"] == pytest.approx(
        8000 * 4 / 88 / 2
    )
    assert list(d.index) == [100, 1000, 8000]  # one-frame sizes only


def test_experiment_runs_with_model_columns(fake_run: runner.RunFn) -> None:
    table = runner.run_experiment("emo-overhead", quick=True, jobs=1, run_fn=fake_run)
    assert list(table.columns) == [
        "path",
        "coalescing",
        "size_bytes",
        *EMO_COLUMNS["emo-overhead"][1],
    ]
    assert table["model_overhead_pct"].notna().all()
    assert (table.loc[table["size_bytes"] > 8192, "frames"] > 1).all()


def test_cli_model_prints_terms(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    png = tmp_path / "m.png"
    code, out, err = run_cli(
        capsys, "model", "--path", "to-kernel", "--sizes", "100,1000", "--plot", str(png)
    )
    assert code == 0, err
    assert "C_N/R_N" in out and "latency = RTT/2" in out and "overhead" in out
    assert png.stat().st_size > 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["model", "--sizes", "a,b"], "--sizes"),
        (["model", "--layer", "x:1"], "--layer"),
        (["model", "--layer", "x:y:nic"], "numbers"),
        (["model", "--path", "to-moon"], "to-moon"),
        (["model", "--coalescing", "lots"], "lots"),
    ],
)
def test_cli_model_bad_input_is_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    code, _, err = run_cli(capsys, *args)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err


@pytest.mark.core
def test_real_core_model_matches_simulation_on_emo2004() -> None:
    """End to end: model and simulator from one scenario; slope and offset agree."""
    assert REAL_CORE
    import nicsim

    def pair(path: str, setting: str, size: int) -> tuple[float, float]:
        scenario = Scenario.from_dict(model.echo_scenario(path, setting, size, iterations=100))
        scenario.preset = "emo2004"
        sim = float(nicsim.run(scenario)["latency_us"])
        [e] = model.evaluate_scenario(scenario.to_toml(), path, [size])
        return sim, e.latency_us

    for path in model.PATHS:
        (s1, m1), (s2, m2) = pair(path, "none", 1000), pair(path, "none", 8000)
        assert abs((m2 - m1) - (s2 - s1)) <= 0.10 * (s2 - s1)
        (s3, m3) = pair(path, "max", 1000)
        assert abs((m3 - m1) - (s3 - s1)) <= 0.10 * (s3 - s1)


@pytest.mark.core
def test_real_core_cli_model_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "model", "--sizes", "40000")
    assert code == 2 and "32768" in err
    code, _, err = run_cli(capsys, "model", "--layer", "x:1:gpu")
    assert code == 2 and "layer.on" in err


def test_sums_of_hand_picked_variables() -> None:
    v = {"C_N_cycles": 880.0, "R_N_hz": 88e6, "L_NH_us": 7.0, "R_H_hz": 1e9}
    r = model.sums(v, "full")
    assert r["latency_us"] > 0
    with pytest.raises(NicsimError, match="config"):
        model.sums(v, "fastest")


@pytest.mark.core
def test_real_core_sums_by_hand() -> None:
    v = {
        "C_N_cycles": 880.0, "R_N_hz": 88e6, "L_NH_us": 7.0, "C_H_cycles": 1000.0,
        "R_H_hz": 1e9, "L_HA_us": 3.0, "L_NA_us": 0.5, "C_A_cycles": 2000.0,
        "O_NH_cycles": 300.0, "O_HA_cycles": 400.0, "O_NA_cycles": 50.0, "L_W_us": 4.0,
    }  # fmt: skip
    full = model.sums(v, "full")
    assert full["latency_us"] == pytest.approx(10 + 7 + 1 + 3 + 0.5 + 2 + 4)
    assert full["overhead_cycles"] == pytest.approx(3750)
    assert full["gap_us"] == pytest.approx(9)
    assert model.sums(v, "coalesced")["overhead_cycles"] == pytest.approx(1400)
    assert model.sums(v, "offload")["latency_us"] == pytest.approx(12.5)
    layer = model.Layer("mpi-matching", cycles=176, on="nic", latency_ns=1000)
    assert model.sums(v, "full", [layer])["latency_us"] == pytest.approx(30.5)
    with pytest.raises(NicsimError, match="R_X"):
        model.sums({**v, "R_X": 1.0})


def _slope_gap(dma_mbps: float) -> float:
    """|slope(projected ToNIC) / slope(ToKernel) - 1| on emo2004 at ``dma_mbps``."""
    import nicsim

    rows = []
    for path in ("to-nic", "to-kernel"):
        for size in (100, 2000, 4000, 8000):
            scenario = Scenario.from_dict(model.echo_scenario(path, "default", size, iterations=60))
            scenario.preset = "emo2004"
            scenario.set("platform.nic.dma_MBps", dma_mbps)
            latency = float(nicsim.run(scenario)["latency_us"])
            rows.append((path, "default", size, 1, latency))
    cols = ["path", "coalescing", "size_bytes", "frames", "sim_latency_us"]
    gap = exp_emo._projected_slope_ratio(pd.DataFrame(rows, columns=cols))
    assert gap is not None
    return gap


@pytest.mark.core
def test_real_core_emo_equal_slopes_hang_on_the_bus_speed() -> None:
    """[EMO] §4.1.4's equal slopes are arithmetic on the unstated PCI bus.

    ToKernel crosses the bus twice more per byte than ToNIC (the receive
    DMA in, the transmit DMA out), so its slope exceeds the projected
    ToNIC's by two DMA byte-times: about 2 / (dma rate x ToNIC slope). On a
    64-bit/33 MHz bus (264 MB/s peak) that is more than 15 %; on 64-bit/66
    MHz (528 MB/s) or faster, less. The claim therefore holds or fails with
    the bus, which the study does not state (docs/paths-2009.md, [EMO]).
    """
    assert REAL_CORE
    slow, fast, faster = _slope_gap(264.0), _slope_gap(528.0), _slope_gap(1056.0)
    assert slow > 0.15, f"64-bit/33 MHz: slopes off by {slow:.1%}"
    assert fast < 0.15 and faster < fast, f"66 MHz: {fast:.1%}, 133 MHz: {faster:.1%}"
