"""A replay of a scenario file (``nicsim replay --scenario``), and what a replay reports of itself.

The scenario file is what ``nicsim presets from-ethtool`` writes from a
NIC's ``ethtool -c`` (the fixtures of ``test_ethtool``), or any scenario
without a workload: the capture is the replay's workload.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap

import nicsim
from nicsim import _core
from nicsim._core import NicsimError
from nicsim.cli.replay import IGNORED
from nicsim.scenario import Scenario
from test_cli import assert_one_error_line, nicsim_cli
from test_ethtool import MLX5_DEFAULT, MLX5_STATIC, RINGS
from test_replay import COLUMN, HOST, OTHER, udp_bursts

pytestmark = pytest.mark.core


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bursts") / "cap.pcap"
    udp_bursts(path)
    return path


def _from_ethtool(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, name: str) -> Path:
    (tmp_path / f"{name}.txt").write_text(text)
    (tmp_path / "g.txt").write_text(RINGS)
    out = tmp_path / f"{name}.toml"
    code, _, err = nicsim_cli(
        capsys, "presets", "from-ethtool", str(tmp_path / f"{name}.txt"), "--preset", "modern",
        "--rings", str(tmp_path / "g.txt"), "--out", str(out),
    )  # fmt: skip
    assert (code, err) == (0, ""), err
    return out


def _row(out: str, label: str) -> list[str]:
    """Return the table row of policy point ``label``, split into its cells."""
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == [label]]
    assert len(rows) == 1, out
    # "delay µs" is one header but the cells are one word each.
    return rows[0]


def test_from_ethtool_then_replay_scenario_runs_the_nics_settings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, capture: Path
) -> None:
    static = _from_ethtool(capsys, tmp_path, MLX5_STATIC, "static")
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(capture), "--scenario", str(static))
    assert (code, err) == (0, ""), err
    assert ", modern" in out  # the file's preset
    row = _row(out, "timeout")  # the file's policy, with rx-usecs 16 in force
    assert row[COLUMN["delay µs"]] == "16"
    # The same settings given as flags and keys replay the same interrupts.
    settings = Scenario.load(static)
    alike = nicsim.replay(capture, scenario=settings)
    assert int(row[COLUMN["irqs"]]) == alike.metrics["replay_interrupts"]
    flags = nicsim.replay(capture, preset="modern", coalescing="timeout", delay_us=16.0)
    assert flags.metrics["replay_interrupts"] != alike.metrics["replay_interrupts"]  # rx-frames 32
    # A flag over the file replaces its value, and says so on stderr.
    args = ["replay", "--pcap", str(capture), "--scenario", str(static), "--delay-us", "50"]
    code, out, err = nicsim_cli(capsys, *args)
    assert code == 0 and _row(out, "timeout")[COLUMN["delay µs"]] == "50"
    where = f"scenario file {str(static)!r}"
    assert err == f"note: --delay-us 50.0 replaces nic.delay_us = 16.0 of {where}\n"
    # mlx5's defaults: DIM on both sides, the file's policy names the row.
    dim = _from_ethtool(capsys, tmp_path, MLX5_DEFAULT, "dim")
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(capture), "--scenario", str(dim))
    assert (code, err) == (0, ""), err
    assert _row(out, "adaptive")[COLUMN["delay µs"]] == "adaptive"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[workload]\nkind = "pingpong"\n', "does not read workload.kind"),
        ('pcap = "x.pcap"\n', "does not read pcap"),
    ],
)
def test_a_scenario_files_keys_a_replay_ignores_are_refused_by_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, capture: Path, text: str, needle: str
) -> None:
    path = tmp_path / "sc.toml"
    path.write_text('preset = "modern"\n' + text)
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(capture), "--scenario", str(path))
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert needle in err and f"scenario file {str(path)!r}" in err


def test_json_says_what_was_read_and_not_replayed_by_cause(
    capsys: pytest.CaptureFixture[str], capture: Path
) -> None:
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(capture), "--json")
    assert (code, err) == (0, ""), err
    printed = json.loads(out)
    assert list(printed) == ["capture", "replayed", "policies"]
    read, replayed = printed["capture"], printed["replayed"]
    # udp_bursts: 20 bursts of 32 frames to HOST, and one frame back from it per burst.
    assert (read["records"], read["frames"], read["stopped_at_byte"]) == (660, 660, None)
    assert read["not_replayed"] == {} and read["damage"] == []
    assert (replayed["frames_to_host"], replayed["sent_by_host"]) == (640, 20)
    assert list(printed["policies"]) == ["timeout"]
    assert printed["policies"]["timeout"]["replay_frames"] == 640
    # Seen from the other host, the bursts are its transmissions; its 20 frames are received.
    args = ["replay", "--pcap", str(capture), "--json", "--host-mac", OTHER]
    code, out, err = nicsim_cli(capsys, *args)
    assert code == 0, err
    replayed = json.loads(out)["replayed"]
    assert (replayed["frames_to_host"], replayed["sent_by_host"]) == (20, 640)


def test_json_counts_the_frames_to_other_hosts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "three.pcap"
    frames = [Ether(dst=HOST, src=OTHER) / IP() / UDP() for _ in range(10)]
    frames += [Ether(dst="02:00:00:00:00:03", src=OTHER) / IP() / UDP() for _ in range(3)]
    for i, pkt in enumerate(frames):
        pkt.time = Decimal(1_700_000_000) + Decimal(i) / 10**5
    wrpcap(str(path), frames)
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(path), "--json")
    assert code == 0, err
    printed = json.loads(out)
    assert printed["capture"]["not_replayed"] == {"to other hosts": 3}
    assert printed["replayed"]["host_mac"] == HOST


def test_the_policy_label_is_the_cores_name_for_what_it_runs() -> None:
    for preset, policy in (("omx2009", "timeout"), ("modern", "adaptive")):
        assert _core.coalescing(f'preset = "{preset}"\n[workload]\nkind = "flood"\n') == policy
    text = '[nic]\ncoalescing = "openmx"\n[workload]\nkind = "flood"\n'
    assert _core.coalescing(text) == "openmx"
    with pytest.raises(NicsimError, match="coalescing"):
        _core.coalescing('[nic]\ncoalescing = "fast"\n')


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["--set", "seed=3"], "seed"),
        (["--set", "host.busy_poll=true"], "host.busy_poll"),
        (["--set", "host.busy_poll_budget=64"], "host.busy_poll_budget"),
        (["--set", "host={binding=2}"], "host.binding"),
        (["--set", "protocol.loss=0.1"], "protocol.loss"),
        (["--set", "protocol.jitter_ns=100"], "protocol.jitter_ns"),
        (["--set", "nic.host0.delay_us=5"], "nic.host0.delay_us"),
    ],
)
def test_keys_a_replay_does_not_read_are_refused_by_name(
    capsys: pytest.CaptureFixture[str], capture: Path, args: list[str], key: str
) -> None:
    code, out, err = nicsim_cli(capsys, "replay", "--pcap", str(capture), *args)
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert f"a replay does not read {key} (" in err


def _allowed(table: str) -> set[str]:
    """Return the keys the core takes in ``[table]`` (its unknown-key error lists them)."""
    with pytest.raises(NicsimError) as err:
        _core.check(f'[{table}]\nno_such_key = 1\n[workload]\nkind = "flood"\n')
    listed = re.search(r"allowed here: ([^)]*)\)", str(err.value))
    assert listed is not None, err.value
    return {f"{table}.{k.strip().strip('`')}" for k in listed[1].split(",")}


#: The keys of host and protocol a replay reads (the rest it refuses).
READ = {
    "host.sleep", "host.soaker", "host.napi_defer_hard_irqs", "host.gro_flush_timeout_ns",
    "host.gro_flush_timeout_us", "host.napi", "host.napi_threaded", "host.dca", "host.tx_reap",
    "protocol.stack",
}  # fmt: skip


def test_every_host_and_protocol_key_is_read_or_refused_by_a_replay() -> None:
    keys = _allowed("host") | _allowed("protocol")
    assert keys >= READ
    assert keys - READ == {k for k in IGNORED if k.startswith(("host.", "protocol."))}
