"""The [LCI] cluster (``lci2000``) as a platform of the main world.

The main world's MPI workloads run on the ``lci2000`` preset's hardware, a
platform of the one shape whose LANai NIs add ``[lanai]``, ``[pci]`` and
``[lci]`` (``crates/nicsim/src/config/lanai.rs``): one 200 MHz Pentium Pro per
host, the LANai NI's firmware at 33 MHz, DMA over a 32-bit/33 MHz PCI bus,
160 MB/s Myrinet links in a grid of cut-through switches. These tests check
relations the hardware implies, each able to fail, with every bound read
from the preset file (no number fitted to a result).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import nicsim
from nicsim import _core

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PRESET: dict[str, Any] = tomllib.loads((ROOT / "presets" / "lci2000.toml").read_text())
MIB = float(1 << 20)


def _run(scenario: dict[str, Any]) -> dict[str, float | int | str]:
    return nicsim.run({"preset": "lci2000", **scenario})


def _num(metrics: dict[str, float | int | str], key: str) -> float:
    value = metrics[key]
    assert isinstance(value, (int, float)), (key, value)
    return float(value)


def _pingpong(size: int, **sections: Any) -> dict[str, float | int | str]:
    workload = {"kind": "pingpong", "size_bytes": size, "iterations": 20, "warmup": 2}
    return _run({**sections, "workload": workload})


def test_mpi_workloads_run_in_the_main_world_and_the_lci_stack_in_its_own() -> None:
    def world(text: str) -> str:
        return str(_core.check(f'preset = "lci2000"\n{text}'))

    assert world('[workload]\nkind = "pingpong"\n') == "open-mx"
    assert world('[workload]\nkind = "alltoall"\n') == "open-mx"
    assert world('[protocol]\nstack = "lci"\n[workload]\nkind = "pingpong"\n') == "lci"
    assert world('[workload]\nkind = "dsm"\n') == "lci"


def test_a_workload_neither_stack_runs_there_is_named() -> None:
    with pytest.raises(nicsim.NicsimError) as e:
        _run({"workload": {"kind": "flood"}})
    msg = str(e.value)
    for needle in ("`workload.kind`", "flood", "lci2000", "alltoall", "fft-alltoall"):
        assert needle in msg, msg


def test_zero_byte_latency_is_that_of_the_slow_pci_and_lanai_path() -> None:
    lci = _num(_pingpong(0), "latency_us")
    omx = nicsim.run(
        {
            "preset": "omx2009",
            "nic": {"coalescing": "disabled"},
            "workload": {"kind": "pingpong", "size_bytes": 0, "iterations": 20, "warmup": 2},
        }
    )
    # Both NIs' firmware (a packet plus a DMA set-up each, at the LANai's
    # clock) and one interrupt reaching the kernel ([LCI] §3.1) lie on the
    # one-way path of the kernel stack.
    ni = PRESET["lanai"]
    cycles = ni["fw_tx_cycles"] + ni["fw_rx_cycles"] + 2 * ni["dma_setup_cycles"]
    firmware_us = cycles / PRESET["emo"]["nic_clock_mhz"]
    floor_us = firmware_us + PRESET["host"]["irq_entry_ns"] / 1e3
    assert lci > floor_us
    assert lci > 3 * _num(omx, "latency_us")
    assert lci < 1000.0
    # OS bypass skips the interrupt and the kernel: faster, still above the firmware.
    native = _num(_pingpong(0, protocol={"stack": "native-mx"}), "latency_us")
    assert firmware_us < native < lci


def test_large_message_throughput_is_bounded_by_the_pci_bus_and_the_link() -> None:
    bound_mib = min(PRESET["nic"]["dma_MBps"], PRESET["link"]["rate_gbps"] * 1e3 / 8) * 1e6 / MIB
    native = _num(_pingpong(1 << 20, protocol={"stack": "native-mx"}), "throughput_MiBps")
    assert 0.6 * bound_mib < native < bound_mib
    # The kernel stack copies every byte out of DMA-written memory on the
    # host's CPU: at most the cold copy's rate, below OS bypass.
    omx = _num(_pingpong(1 << 20), "throughput_MiBps")
    assert omx < PRESET["cache"]["copy_cold_MBps"] * 1e6 / MIB
    assert omx < native


def test_latency_grows_with_the_switches_crossed() -> None:
    one_switch = {"grid": {"hosts": 2, "x": 1, "y": 1, "z": 1, "hosts_per_switch": 2}}
    two_switches = {"grid": {"hosts": 2, "x": 2, "y": 1, "z": 1, "hosts_per_switch": 1}}
    near = _num(_pingpong(0, platform=one_switch), "latency_us")
    far = _num(_pingpong(0, platform=two_switches), "latency_us")
    # Cut-through: one more switch and one more cable per direction, not a
    # second serialization.
    hop_us = (PRESET["link"]["switch_latency_ns"] + PRESET["link"]["propagation_ns"]) / 1e3
    assert far - near == pytest.approx(hop_us, abs=1e-3)


def test_alltoall_on_the_whole_grid_is_bounded_by_each_hosts_receive_work() -> None:
    m = _run({"workload": {"kind": "alltoall", "size_bytes": 1024, "iterations": 3, "warmup": 1}})
    assert m["dropped"] == 0
    # Every host receives a message from each of the others, and its one
    # core runs the driver, the handler and the library for each.
    host, lib = PRESET["host"], PRESET["library"]
    per_msg_us = (host["driver_rx_ns"] + host["handler_ns"] + lib["event_ns"]) / 1e3
    peers = PRESET["grid"]["hosts"] - 1
    assert _num(m, "time_us") > peers * per_msg_us


def test_a_64_kib_alltoall_on_the_whole_grid_stalls_instead_of_dropping() -> None:
    """Myrinet stops a sender whose receiver cannot take a packet ([LCI] §2:
    "the hardware neither drops nor corrupts packets"): the mapping turns
    ``nic.flow_control`` on, and the 64 KiB all-to-all of the 64 hosts, whose
    pulls overflow a host's ring, drops nothing; without it the dropped
    replies wait for Open-MX's timers. The all-to-all is the linear one
    (every pull posted at once), the one that overflows the rings."""
    workload = {
        "kind": "alltoall",
        "size_bytes": 65536,
        "iterations": 3,
        "warmup": 1,
        "alltoall_algorithm": "linear",
    }
    stalled = _run({"workload": workload})
    dropped = _run({"nic": {"flow_control": False}, "workload": workload})
    assert stalled["dropped"] == 0 and stalled["flow_control_overflow"] == 0
    assert _num(stalled, "flow_control_held") > 0
    assert _num(dropped, "dropped_ring_full") > 0
    # A frame waits for its host's next poll, never for a resend timer.
    assert _num(stalled, "flow_control_wait_us_max") < PRESET["library"]["resend_us"]
    assert _num(stalled, "time_us") < _num(dropped, "time_us")


def test_nas_is_runs_on_the_whole_grid() -> None:
    m = _run({"workload": {"kind": "nas-is", "class": "S", "iterations": 2}})
    assert m["dropped"] == 0 and _num(m, "exec_time_s") > 0


def test_the_cli_runs_an_mpi_workload_on_lci2000() -> None:
    args = ["run", "--preset", "lci2000", "--workload", "pingpong", "--json"]
    proc = subprocess.run(
        [sys.executable, "-m", "nicsim", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["latency_us"] > 0


def test_an_lci_preset_key_of_the_old_shape_names_its_new_place() -> None:
    """The LANai's firmware cycles moved from ``[ni]`` to ``[lanai]``: a
    scenario written for the old shape gets one line naming the new key."""
    with pytest.raises(nicsim.NicsimError) as e:
        _pingpong(0, platform={"ni": {"fw_rx_cycles": 33}})
    msg = str(e.value)
    assert "`platform.ni.fw_rx_cycles` = 33" in msg, msg
    assert "`platform.lanai.fw_rx_cycles`" in msg and "\n" not in msg, msg


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("asp_elem_cycles", "workload.elem_cycles"),
        ("qr_norm_cycles", "workload.norm_cycles"),
        ("qr_update_cycles", "workload.update_cycles"),
    ],
)
def test_a_program_cost_in_the_lci_table_names_its_workload_key(old: str, new: str) -> None:
    """ASP's and QR's per-element costs are the program's, on every stack:
    set in ``[lci]``, each gets one line naming its ``workload`` key."""
    workload = {"kind": "qr", "cols": 64, "iterations": 1}
    with pytest.raises(nicsim.NicsimError) as e:
        _run({"platform": {"lci": {old: 6}}, "workload": workload})
    msg = str(e.value)
    assert f"`platform.lci.{old}` = 6" in msg, msg
    assert f"`{new}`" in msg and "\n" not in msg, msg


def test_the_lci_stacks_asp_reads_its_cost_from_the_workload_table() -> None:
    """One ``[workload]`` for every stack: ``elem_cycles`` prices the LCI
    stack's ASP as it does Open-MX's, so doubling it lengthens the run."""

    def exec_time(cycles: float) -> float:
        workload = {"kind": "asp", "rows": 128, "iterations": 4, "elem_cycles": cycles}
        return _num(_run({"protocol": {"stack": "lci"}, "workload": workload}), "exec_time_s")

    assert exec_time(12.0) > exec_time(6.0)


def test_the_lci_stack_sends_on_the_shared_link() -> None:
    """``link.rate_gbps`` is the one link rate: the LCI stack's packets
    cross it too, and at 0.16 Gb/s (20 MB/s, below the PIO and PCI rates)
    a stream of full packets is bound by it."""

    def stream(rate_gbps: float) -> float:
        m = _run(
            {
                "platform": {"link": {"rate_gbps": rate_gbps}},
                "protocol": {"stack": "lci"},
                "workload": {"kind": "stream", "size_bytes": 16384, "messages": 100, "warmup": 5},
            }
        )
        return _num(m, "throughput_MBps")

    preset, slow = stream(PRESET["link"]["rate_gbps"]), stream(0.16)
    assert slow < 0.16e3 / 8 < preset
