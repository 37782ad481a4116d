"""The command line: output and the one-line ``error:`` contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import nicsim
from nicsim.cli import app
from nicsim.cli.run import _format
from nicsim.scenario import Scenario, parse_value

ROOT = Path(__file__).resolve().parents[1]


def nicsim_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process the way the console script does."""
    with pytest.raises(SystemExit) as exit_info:
        app(args=list(args), prog_name="nicsim")
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


def assert_one_error_line(err: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--set", "nic.delay_us"], "key.path=value"),
        (["run", "--set", "bogus.key=1"], "bogus"),
        (["run", "--coalescing", "fast"], "fast"),
        (["run", "--size", "lots"], "--size"),
        (["reproduce", "omx-coal", "--out", "x", "--jobs", "0"], "jobs = 0"),
        (["bench", "--kind", "nope"], "nope"),
        (["bench", "--count", "0"], "--count 0"),
        (["bench", "--kind", "alltoall", "--repeat", "0"], "--repeat 0: must be from 1 to 100"),
        (["reproduce", "no-such-exp", "--out", "x"], "no-such-exp"),
        (["reproduce", "omx-coal"], "--out"),
        (["no-such-command"], "no-such-command"),
        (["bench", "--count", str(2**64)], "--count 18446744073709551616: must be from 1 to"),
        (["run", "--size", str(10**20)], "`workload.size_bytes`: 100000000000000000000"),
        (["run", "--scenario", "/dev/zero"], "'/dev/zero' is a character device"),
        (["reproduce", "omx-coal", "--preset", "/dev/zero", "--out", "x"], "is a character device"),
        (["model", "--preset", "lci2000"], '"echo-nic" on preset "lci2000"'),
    ],
)
def test_bad_input_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    code, _, err = nicsim_cli(capsys, *args)
    assert code == 2
    assert_one_error_line(err)
    assert needle in err


def test_presets_copy_refuses_to_overwrite(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dest = tmp_path / "p.toml"
    assert nicsim_cli(capsys, "presets", "copy", "omx2009", str(dest))[0] == 0
    assert dest.read_text().strip()
    code, _, err = nicsim_cli(capsys, "presets", "copy", "omx2009", str(dest))
    assert code == 2
    assert_one_error_line(err)


def test_presets_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = nicsim_cli(capsys, "presets", "list")
    assert code == 0 and "omx2009" in out.split()
    lines = dict(line.split("\t") for line in out.splitlines())
    assert lines["lci2000"].startswith("64 x Pentium Pro 200 MHz"), lines
    code, out, _ = nicsim_cli(capsys, "presets", "show", "omx2009")
    assert code == 0 and out.strip()


@pytest.mark.core
def test_presets_show_prints_a_preset_file_it_accepts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mine = tmp_path / "mine.toml"
    code, _, err = nicsim_cli(capsys, "presets", "copy", "omx2009", str(mine))
    assert code == 0, err
    text = mine.read_text().replace("# Platform preset", "# My preset, from")
    mine.write_text(text)
    code, out, err = nicsim_cli(capsys, "presets", "show", str(mine))
    assert (code, out, err) == (0, text, "")
    # Checked before it is printed: a key the core refuses, a missing file.
    mine.write_text(text + "\n[grid.colour]\nx = 1\n")
    code, out, err = nicsim_cli(capsys, "presets", "show", str(mine))
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert f"preset file {json.dumps(str(mine))}: unknown key `grid.colour`" in err
    code, out, err = nicsim_cli(capsys, "presets", "show", str(tmp_path / "none.toml"))
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert f"cannot read preset file {str(tmp_path / 'none.toml')!r}" in err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = nicsim_cli(capsys, "--help")
    assert code == 0 and "reproduce" in out


@pytest.mark.core
def test_run_json_prints_metrics(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = nicsim_cli(
        capsys, "run", "--workload", "pingpong", "--set", "workload.iterations=20", "--json"
    )
    assert code == 0
    metrics = json.loads(out)
    assert metrics["latency_us"] > 0
    # Every metric of the run, not only the summary's.
    expected = nicsim.run({"workload": {"kind": "pingpong", "iterations": 20}})
    assert sorted(metrics) == sorted(expected) and "host1_cache_dma_misses" in metrics


def _rows(out: str) -> list[str]:
    """The first word of each line of a table: the metric names, in order."""
    return [line.split()[0] for line in out.splitlines() if line.split()]


#: Small runs of each kind of headline, and what their summary shows, in order.
SUMMARIES = [
    (
        ["--workload", "pingpong", "--set", "workload.iterations=20"],
        ["latency_us", "throughput_MiBps", "interrupts_per_msg", "interrupts",
         "host0_cpu_cores", "host0_cpu_pct", "host1_cpu_cores", "host1_cpu_pct", "dropped"],
    ),
    (
        ["--workload", "stream", "--set", "workload.messages=300"],
        ["msg_rate_per_s", "throughput_MiBps", "interrupts_per_msg", "interrupts",
         "host0_cpu_cores", "host1_cpu_cores", "dropped"],
    ),
    (
        ["--workload", "flood", "--set", "workload.packets=300"],
        ["overhead_ns_per_packet", "interrupts_per_msg", "interrupts", "host0_cpu_cores",
         "host1_cpu_cores", "dropped", "dropped_no_endpoint"],
    ),
    (
        ["--workload", "alltoall", "--set", "workload.iterations=2",
         "--set", "workload.procs_per_host=1"],
        ["time_us", "interrupts", "host0_cpu_cores", "host1_cpu_cores", "dropped"],
    ),
    (
        ["--workload", "nas-is", "--set", "workload.class='S'", "--set", "workload.iterations=1",
         "--set", "workload.procs_per_host=1"],
        ["exec_time_s", "interrupts", "interrupts_timed", "host0_cpu_cores", "host1_cpu_cores",
         "dropped"],
    ),
    (
        ["--preset", "lci2000", "--workload", "pingpong", "--set", "protocol.stack='lci'",
         "--set", "workload.iterations=20"],
        ["latency_us", "throughput_MBps", "interrupts"],
    ),
    (
        ["--preset", "lci2000", "--workload", "pingpong", "--set", "workload.iterations=20"],
        ["latency_us", "throughput_MiBps", "interrupts_per_msg", "interrupts",
         "host0_cpu_cores", "host0_cpu_pct", "host1_cpu_cores", "host1_cpu_pct", "dropped"],
    ),
]  # fmt: skip


@pytest.mark.core
@pytest.mark.parametrize(("args", "rows"), SUMMARIES, ids=lambda v: " ".join(v)[:40])
def test_run_prints_the_workloads_headline_first(
    capsys: pytest.CaptureFixture[str], args: list[str], rows: list[str]
) -> None:
    code, out, _ = nicsim_cli(capsys, "run", *args)
    assert code == 0
    metrics = nicsim.run(_scenario_of(args))
    shown = [name for name in _rows(out) if name in metrics]
    assert shown == rows  # the headline first, then interrupts, CPU per host, drops
    for name in rows:  # each with its value as the table formats it
        line = next(line for line in out.splitlines() if line.split()[:1] == [name])
        assert line.split()[1] == _format(metrics[name])
    assert "host0_cache_dma_misses" not in out and "sim_time_us" not in out
    assert f"all {len(metrics)} metrics: --all, or --json" in " ".join(out.split())


def _scenario_of(args: list[str]) -> Scenario:
    """The scenario ``nicsim run ARGS`` runs (the options these tests use)."""
    built = Scenario()
    for option, value in zip(args[::2], args[1::2], strict=True):
        if option == "--set":
            key, _, text = value.partition("=")
            built.set(key, parse_value(text, key))
        else:
            built.set({"--workload": "workload.kind", "--preset": "preset"}[option], value)
    return built


@pytest.mark.core
def test_run_all_prints_every_metric_once_in_groups(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--workload", "stream", "--set", "workload.messages=300"]
    code, out, _ = nicsim_cli(capsys, *args, "--all")
    assert code == 0
    code, as_json, _ = nicsim_cli(capsys, *args, "--json")
    metrics = json.loads(as_json)
    summary, _, everything = out.partition("every metric")
    # Below the header and its rule: group titles, their metrics indented under them.
    lines = [line for line in everything.splitlines() if line.strip()][2:]
    depth = {len(line) - len(line.lstrip()) for line in lines}
    title_at, name_at = sorted(depth)
    titles = [line.strip() for line in lines if len(line) - len(line.lstrip()) == title_at]
    names = [line.split()[0] for line in lines if len(line) - len(line.lstrip()) == name_at]
    assert titles == ["headline", "interrupts", "drops", "host CPU", "NIC", "cache", "protocol",
                      "run"]  # fmt: skip
    assert sorted(names) == sorted(metrics)  # every metric, each once
    group_of = {}
    for line in lines:
        if len(line) - len(line.lstrip()) == title_at:
            title = line.strip()
        elif len(line) - len(line.lstrip()) == name_at:
            group_of[line.split()[0]] = title
    assert group_of["msg_rate_per_s"] == "headline"
    assert group_of["host0_cpu_cores"] == "host CPU"
    assert group_of["host1_nic_rx_ns_per_frame"] == "NIC"
    assert group_of["host1_cache_dma_misses"] == "cache"
    assert group_of["host1_interrupts"] == "interrupts"
    assert group_of["dropped_ring_full"] == "drops"
    assert group_of["events"] == "run"
    assert "msg_rate_per_s" in _rows(summary)


@pytest.mark.core
@pytest.mark.parametrize(
    "args",
    [
        ["run", "--set", "nic.no_such_key=1"],
        ["run", "--preset", "no-such-preset"],
        ["run", "--set", "workload.size_bytes=-5"],
        ["run", "--size", "-1"],
        ["run", "--delay-us", "-3"],
        ["presets", "show", "no-such-preset"],
    ],
)
def test_core_errors_via_python_m_nicsim(args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "nicsim", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert_one_error_line(proc.stderr)
    assert proc.stdout == ""


@pytest.mark.core
def test_size_bench_gives_the_median_of_its_repeats_and_their_range(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["bench", "--kind", "alltoall", "--procs", "4", "--repeat", "3"]
    code, out, _ = nicsim_cli(capsys, *args)
    assert code == 0 and "median of 3 rounds" in out
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in (["2"], ["4"])]
    assert [r[0] for r in rows] == ["2", "4"]
    for r in rows:
        median = float(r[3])
        low, high = (float(x) for x in r[4].split("-"))
        assert low <= median <= high, r
    assert rows[0][5] == "1.00"
    assert float(rows[1][5]) == pytest.approx(float(rows[1][3]) / float(rows[0][3]), abs=0.02)


class DriftingCore:
    """A stand-in core's size bench whose N = 2 gets slower with each round,
    as a VM's load may drift; it records the N of every call."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, kind: str, n: int) -> dict[str, float]:
        self.calls.append(n)
        rounds = self.calls.count(n)
        ns = {2: 10.0 * rounds, 4: 30.0, 8: 45.0}[n]
        return {
            "ns_per_event": ns,
            "events": 1000.0 * n,
            # Short runs are made again: fewer of them as N grows.
            "runs": {2: 40.0, 4: 20.0, 8: 1.0}[n] + rounds - 1,
            "min_loop_s": 0.25,
            "messages_per_rank": 4096.0,
            "build_s": 0.001,
            "wall_s": 0.01,
            # What the allocator kept from the larger runs of the round
            # before counts in a later round's peak.
            "peak_rss_MiB": 10.0 * n + 100.0 * (rounds - 1),
            "dropped": 0.0,
            "sim_time_ms": 1.0,
        }


def test_size_bench_goes_round_the_sizes_and_divides_by_n2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every N must be run once per round, in turn.
    bench = DriftingCore()
    monkeypatch.setattr("nicsim.cli.bench._core.bench", bench)
    args = ["bench", "--kind", "alltoall", "--procs", "8", "--repeat", "3"]
    code, out, _ = nicsim_cli(capsys, *args)
    assert code == 0, out
    assert bench.calls == [2, 4, 8] * 3
    lines = (line.split() for line in out.splitlines())
    rows = {r[0]: r for r in lines if r[:1] in (["2"], ["4"], ["8"])}
    # Runs of each N's world: the median over the rounds.
    assert [rows[n][2] for n in "248"] == ["41", "21", "2"]
    # N = 2's median is 20 (10, 20, 30): 4 is 1.5x it, 8 2.25x.
    assert [rows[n][3] for n in "248"] == ["20.0", "30.0", "45.0"]
    assert [rows[n][5] for n in "248"] == ["1.00", "1.50", "2.25"]
    # Peak RSS: the first round's, the least.
    assert [rows[n][8] for n in "248"] == ["20.0", "40.0", "80.0"]
    assert "add up to 0.25 s" in " ".join(out.split())


def test_size_bench_writes_the_table_as_csv_in_full(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import csv

    from nicsim import bench

    monkeypatch.setattr("nicsim.cli.bench._core.bench", DriftingCore())
    out = tmp_path / "alltoall.csv"
    args = ["bench", "--kind", "exchange", "--procs", "8", "--repeat", "3", "--out", str(out)]
    code, printed, _ = nicsim_cli(capsys, *args)
    assert code == 0 and f"wrote {out}" in " ".join(printed.split())
    with out.open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0]) == list(bench.COLUMNS)
    assert [r["procs"] for r in table] == ["2", "4", "8"]
    assert {r["kind"] for r in table} == {"exchange"} and {r["rounds"] for r in table} == {"3"}
    assert [float(r["ns_per_event"]) for r in table] == [20.0, 30.0, 45.0]
    assert (table[0]["ns_per_event_min"], table[0]["ns_per_event_max"]) == ("10.0", "30.0")
    # Full precision, not the table's two decimals: 45 / 20.
    assert [float(r["x_n2"]) for r in table] == [1.0, 1.5, 2.25]
    assert [float(r["runs"]) for r in table] == [41.0, 21.0, 2.0]
    assert [float(r["peak_rss_MiB"]) for r in table] == [20.0, 40.0, 80.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alltoall.csv"]


def test_simple_bench_writes_one_row(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    figures = {"events": 1000.0, "events_per_s": 1.0 / 3.0, "wall_s": 3000.0}
    monkeypatch.setattr("nicsim.cli.bench._core.bench", lambda kind, count: dict(figures))
    out = tmp_path / "engine.csv"
    code, _, _ = nicsim_cli(capsys, "bench", "--count", "1000", "--out", str(out))
    assert code == 0
    header, row = out.read_text().splitlines()
    assert header == "kind,count,events,events_per_s,wall_s,build"
    assert row.split(",")[:5] == ["engine", "1000", "1000.0", repr(1.0 / 3.0), "3000.0"]


@pytest.mark.parametrize(
    ("kind", "procs", "out", "needles"),
    [
        ("alltoall", 4, "b.txt", ("--out {out}", "unknown file type '.txt' (allowed: .csv)")),
        ("alltoall", 4, "no/dir/b.csv", ("--out {out}", "does not exist")),
        # One rank per host for the all-to-all and the exchange: past 1,024
        # the run of N = 2,048 used to fail on `topology.hosts`, after the
        # smaller sizes had run.
        ("alltoall", 3000, None, ("--procs 3000: must be from 2 to 1024 for alltoall",)),
        ("exchange", 1025, None, ("--procs 1025: must be from 2 to 1024 for exchange",)),
        ("nas-is", 16384, None, ("--procs 16384: must be from 2 to 8192 for nas-is",)),
        ("alltoall", 1, None, ("--procs 1: must be from 2 to 1024 for alltoall",)),
    ],
)
def test_bench_arguments_are_checked_before_any_run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    kind: str,
    procs: int,
    out: str | None,
    needles: tuple[str, ...],
) -> None:
    bench = DriftingCore()
    monkeypatch.setattr("nicsim.cli.bench._core.bench", bench)
    args = ["bench", "--kind", kind, "--procs", str(procs)]
    path = None if out is None else tmp_path / out
    if path is not None:
        args += ["--out", str(path)]
    code, _, err = nicsim_cli(capsys, *args)
    assert code == 2 and bench.calls == []
    assert_one_error_line(err)
    for needle in needles:
        assert needle.format(out=path) in err, err


def test_an_interrupted_bench_leaves_the_previous_csv(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    drifting = DriftingCore()

    def bench(kind: str, n: int) -> dict[str, float]:
        if n == 8:
            raise KeyboardInterrupt
        return drifting(kind, n)

    monkeypatch.setattr("nicsim.cli.bench._core.bench", bench)
    out = tmp_path / "b.csv"
    out.write_text("previous\n")
    code, _, err = nicsim_cli(
        capsys, "bench", "--kind", "alltoall", "--procs", "8", "--out", str(out)
    )
    assert (code, err) == (130, "error: interrupted\n")
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.csv"]


def test_size_bench_draws_its_progress_in_ranks_on_a_terminal() -> None:
    from io import StringIO

    from rich.console import Console

    from nicsim import bench
    from nicsim.progress import Reporter

    shown = Reporter("nicsim bench alltoall", unit="ranks")
    screen = StringIO()
    shown._console = Console(file=screen, force_terminal=True, width=150)
    rows = bench.size_rows("alltoall", 8, 2, bench=DriftingCore(), reporter=shown)
    assert [r["procs"] for r in rows] == [2, 4, 8]
    # Two rounds of 2 + 4 + 8 ranks: an N's run counts N.
    drawn = screen.getvalue()
    assert "28/28" in drawn and "ranks/s" in drawn and "nicsim bench alltoall" in drawn
