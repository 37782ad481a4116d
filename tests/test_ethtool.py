"""``nicsim presets from-ethtool``: what ethtool prints, as a scenario the core runs.

The fixtures are in the formats ethtool prints: the netlink printers of
ethtool 6.x (netlink/coalesce.c ``coalesce_reply_cb``: ``label:<tab>value``,
``n/a`` for what the driver does not report, the ``Adaptive`` and ``CQE mode``
pair lines), the ioctl printer of older ethtool (ethtool.c ``dump_coalesce``:
``label: value``), and ``-g`` / ``-l`` (``rings_reply_cb``,
``channels_reply_cb``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nicsim import ethtool
from nicsim._core import NicsimError
from nicsim.cli import app
from nicsim.scenario import loads

#: mlx5 (ConnectX-6 Dx) at its defaults, ethtool 6.x: DIM on both sides,
#: CQE mode on receive only (en_main.c mlx5e_build_nic_params).
MLX5_DEFAULT = """\
Coalesce parameters for ens1f0np0:
Adaptive RX: on  TX: on
stats-block-usecs:\tn/a
sample-interval:\tn/a
pkt-rate-low:\t\tn/a
pkt-rate-high:\t\tn/a

rx-usecs:\t8
rx-frames:\t128
rx-usecs-irq:\tn/a
rx-frames-irq:\tn/a

tx-usecs:\t8
tx-frames:\t128
tx-usecs-irq:\tn/a
tx-frames-irq:\tn/a

rx-usecs-low:\tn/a
rx-frame-low:\tn/a
tx-usecs-low:\tn/a
tx-frame-low:\tn/a

rx-usecs-high:\tn/a
rx-frame-high:\tn/a
tx-usecs-high:\tn/a
tx-frame-high:\tn/a

CQE mode RX: on  TX: off

tx-aggr-max-bytes:\tn/a
tx-aggr-max-frames:\tn/a
tx-aggr-time-usecs:\tn/a

"""

#: The same NIC after `ethtool -C DEV adaptive-rx off adaptive-tx off rx-usecs 16
#: rx-frames 32 tx-usecs 16 tx-frames 32`.
MLX5_STATIC = (
    MLX5_DEFAULT.replace("Adaptive RX: on  TX: on", "Adaptive RX: off  TX: off")
    .replace("rx-usecs:\t8", "rx-usecs:\t16")
    .replace("rx-frames:\t128", "rx-frames:\t32")
    .replace("tx-usecs:\t8", "tx-usecs:\t16")
    .replace("tx-frames:\t128", "tx-frames:\t32")
)

#: An older ethtool's ioctl printout (dump_coalesce) of a driver without
#: adaptive moderation.
IOCTL_STATIC = """\
Coalesce parameters for eth0:
Adaptive RX: off  TX: off
stats-block-usecs: 0
sample-interval: 0
pkt-rate-low: 0
pkt-rate-high: 0

rx-usecs: 75
rx-frames: 0
rx-usecs-irq: 0
rx-frames-irq: 0

tx-usecs: 0
tx-frames: 0
tx-usecs-irq: 0
tx-frames-irq: 0

rx-usecs-low: 0
rx-frame-low: 0
tx-usecs-low: 0
tx-frame-low: 0

rx-usecs-high: 0
rx-frame-high: 0
tx-usecs-high: 0
tx-frame-high: 0

"""

#: A DIM table set with `ethtool -C DEV rx-profile ...` (Linux 6.12+).
WITH_PROFILE = MLX5_DEFAULT.replace(
    "tx-aggr-max-bytes:",
    "rx-profile:\n"
    "{.usec =   2, .pkts = 256, .comps = n/a,},\n"
    "{.usec =   8, .pkts = 128, .comps = n/a,},\n"
    "{.usec =  20, .pkts =  64, .comps = n/a,},\n"
    "{.usec =  40, .pkts =  64, .comps = n/a,},\n"
    "{.usec =  80, .pkts =  64, .comps = n/a,}\n"
    "\ntx-aggr-max-bytes:",
)

RINGS = """\
Ring parameters for ens1f0np0:
Pre-set maximums:
RX:\t\t\t8192
RX Mini:\t\tn/a
RX Jumbo:\t\tn/a
TX:\t\t\t8192
Current hardware settings:
RX:\t\t\t4096
RX Mini:\t\tn/a
RX Jumbo:\t\tn/a
TX:\t\t\t1024
RX Buf Len:\t\tn/a
CQE Size:\t\tn/a
TX Push:\t\toff
TCP data split:\t\toff
"""

CHANNELS = """\
Channel parameters for ens1f0np0:
Pre-set maximums:
RX:\t\tn/a
TX:\t\tn/a
Other:\t\tn/a
Combined:\t63
Current hardware settings:
RX:\t\tn/a
TX:\t\tn/a
Other:\t\tn/a
Combined:\t8
"""


def test_mlx5_defaults_become_dim_on_both_sides() -> None:
    c = ethtool.convert(MLX5_DEFAULT, "modern")
    assert c.scenario["nic"] == {
        "coalescing": "adaptive",
        "adaptive": "dim",
        "cqe_mode_rx": True,
        "adaptive_tx": True,
        "cqe_mode_tx": False,
    }
    unmapped = {u.key: u for u in c.unmapped}
    # DIM's values in force are listed, not taken as fixed settings.
    assert unmapped["rx-usecs"].value == "8" and "DIM sets it" in unmapped["rx-usecs"].why
    assert "TX DIM sets it" in unmapped["tx-frames"].why
    # Every line read is either mapped or listed.
    keys = set(ethtool.parse(MLX5_DEFAULT, "-c"))
    mapped = {"adaptive-rx", "adaptive-tx", "cqe-mode-rx", "cqe-mode-tx"}
    assert keys == mapped | set(unmapped)


def test_static_settings_become_the_fixed_timers() -> None:
    c = ethtool.convert(MLX5_STATIC, "modern")
    assert c.scenario["nic"] == {
        "coalescing": "timeout",
        "delay_us": 16.0,
        "frames": 32,
        "timeout_mode": "packet",  # CQE mode RX on: restarted at each completion
        "tx_delay_us": 16.0,
        "tx_frames": 32,
    }
    old = ethtool.convert(IOCTL_STATIC, "omx2009")
    assert old.scenario["nic"] == {
        "coalescing": "timeout",
        "delay_us": 75.0,
        "frames": 0,
        "tx_delay_us": 0.0,
        "tx_frames": 0,
    }
    assert {u.key for u in old.unmapped} >= {"rx-usecs-irq", "stats-block-usecs", "tx-frame-high"}


def test_a_tuned_profile_table_is_read() -> None:
    c = ethtool.convert(WITH_PROFILE, "modern")
    assert c.scenario["nic"]["rx_profile"] == [[2, 256], [8, 128], [20, 64], [40, 64], [80, 64]]


def test_rings_and_channels() -> None:
    c = ethtool.convert(MLX5_DEFAULT, "modern", rings=RINGS, channels=CHANNELS)
    assert c.scenario["platform"] == {"nic": {"ring_slots": 4096}}
    assert c.scenario["nic"]["steering"] == "multiqueue"
    assert any("channels: 8" in n for n in c.notes)
    unmapped = {u.key: u.value for u in c.unmapped}
    assert unmapped["rings tx"] == "1024" and unmapped["rings tx-push"] == "off"
    assert unmapped["channels other"] == "n/a"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("rx-usecs: 8\n", "no 'Adaptive RX: on|off' line"),
        ("Adaptive RX: maybe  TX: off\n", "'maybe' (allowed: on, off, n/a)"),
        ("Adaptive RX: off  TX: off\nrx-usecs: -3\n", "rx-usecs: '-3' is not a count"),
        ("Adaptive RX: off  TX: off\n%%%\n", "is not what ethtool prints"),
    ],
)
def test_what_ethtool_does_not_print_is_refused(text: str, needle: str) -> None:
    with pytest.raises(NicsimError, match=r"^ethtool -c: ") as err:
        ethtool.convert(text, "modern")
    assert needle in str(err.value)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        app(args=list(args), prog_name="nicsim")
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


def test_the_command_writes_a_scenario_the_core_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "c.txt").write_text(MLX5_STATIC)
    (tmp_path / "g.txt").write_text(RINGS)
    out = tmp_path / "sc.toml"
    code, stdout, err = _cli(
        capsys, "presets", "from-ethtool", str(tmp_path / "c.txt"), "--preset", "modern",
        "--out", str(out), "--rings", str(tmp_path / "g.txt"),
    )  # fmt: skip
    assert (code, err) == (0, ""), err
    assert stdout.startswith(f'wrote {out}\n  nic.coalescing = "timeout"\n')
    assert "not mapped (" in stdout and "tx-push: off (ring setting not modelled)" in stdout
    assert "n/a (the driver does not report them): stats-block-usecs, " in stdout
    text = out.read_text()
    assert text.startswith("# Written by nicsim presets from-ethtool from ")
    assert "#   n/a (the driver does not report them): stats-block-usecs, " in text
    assert loads(text, "sc.toml")["platform"]["nic"]["ring_slots"] == 4096
    # `nicsim run --scenario` takes it (with a workload of the user's).
    code, stdout, err = _cli(
        capsys,
        "run",
        "--scenario",
        str(out),
        "--workload",
        "pingpong",
        "--set",
        "workload.iterations=20",
    )
    assert (code, err) == (0, ""), err
    # An existing file is kept without --force; the one-line error says so.
    code, _, err = _cli(
        capsys,
        "presets",
        "from-ethtool",
        str(tmp_path / "c.txt"),
        "--preset",
        "modern",
        "--out",
        str(out),
    )
    assert code == 2 and err.startswith("error: --out ") and "--force" in err
    # The core checks what it maps: rx-usecs 0 with rx-frames 32 never reports the last
    # frames of a timer started by the first frame (`modern`'s; omx2009's firmware timer is
    # a minimum gap between interrupts, which raises on every frame with no delay).
    bad = IOCTL_STATIC.replace("rx-usecs: 75", "rx-usecs: 0").replace(
        "rx-frames: 0\n", "rx-frames: 32\n"
    )
    (tmp_path / "bad.txt").write_text(bad)
    code, _, err = _cli(
        capsys, "presets", "from-ethtool", str(tmp_path / "bad.txt"), "--preset", "modern",
        "--out", str(tmp_path / "bad.toml"),
    )  # fmt: skip
    assert code == 2 and "nic.frames" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "bad.toml").exists()


def test_cqe_mode_tx_goes_with_a_transmit_timer() -> None:
    text = MLX5_DEFAULT.replace("Adaptive RX: on  TX: on", "Adaptive RX: on  TX: off").replace(
        "CQE mode RX: on  TX: off", "CQE mode RX: on  TX: on"
    )
    c = ethtool.convert(text, "modern")
    assert (c.scenario["nic"]["tx_delay_us"], c.scenario["nic"]["cqe_mode_tx"]) == (8.0, True)
    no_tx = text.replace("tx-usecs:\t8", "tx-usecs:\tn/a")
    alone = ethtool.convert(no_tx.replace("tx-frames:\t128", "tx-frames:\tn/a"), "modern")
    assert "cqe_mode_tx" not in alone.scenario["nic"]
    assert any(u.key == "cqe-mode-tx" and "no transmit timer" in u.why for u in alone.unmapped)


#: bnxt (BCM5750x) at its defaults, ethtool 6.x: it honours the -irq values
#: (bnxt.c bnxt_init_dflt_coal: coal_ticks_irq 1, coal_bufs_irq 2 records).
BNXT_DEFAULT = (
    MLX5_DEFAULT.replace("Adaptive RX: on  TX: on", "Adaptive RX: off  TX: off")
    .replace("rx-usecs-irq:\tn/a", "rx-usecs-irq:\t1")
    .replace("rx-frames-irq:\tn/a", "rx-frames-irq:\t2")
)


def test_the_irq_moderation_values_are_listed_and_their_keys_refused_by_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    c = ethtool.convert(BNXT_DEFAULT, "modern")
    unmapped = {u.key: u for u in c.unmapped}
    assert unmapped["rx-usecs-irq"].value == "1"
    assert "bnxt" in unmapped["rx-frames-irq"].why and "mlx5" in unmapped["rx-frames-irq"].why
    assert not any(k.endswith("irq") for k in c.scenario["nic"])
    # The scenario keys are refused by name, with why (never an unknown key).
    for key in ("rx_usecs_irq", "rx_frames_irq", "tx_usecs_irq", "tx_frames_irq"):
        code, out, err = _cli(capsys, "run", "--set", f"nic.{key}=2")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert f"nic.{key}` is not modelled" in err and "bnxt and tg3" in err, err
