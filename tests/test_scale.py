"""Large runs finish in bounded memory: NAS IS on 64 processes (8 hosts of 8),
the case that once grew by tens of MB/s without end (issue 15), measured as
the peak resident set of a fresh interpreter that runs it. And a case the
widened property draws found that does not finish (see its test)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import nicsim

pytestmark = pytest.mark.core

#: What the IS runs below add to the peak resident set of an interpreter that
#: has imported nicsim: under 10 MiB; the unbounded growth was 25-100 MB/s.
PEAK_RSS_GROWTH_BOUND_MIB = 100

_PROBE = """
import json, resource, sys
import nicsim
scenario = json.loads(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
metrics = nicsim.run(scenario)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"growth_MiB": (after - before) / 1024, "exec_time_s": metrics["exec_time_s"]}))
"""


@pytest.mark.parametrize("nas_class", ["S", "B"])
def test_nas_is_on_64_processes_finishes_in_bounded_memory(nas_class: str) -> None:
    scenario = {
        "platform": {"topology": {"hosts": 8}},
        "workload": {"kind": "nas-is", "class": nas_class, "procs_per_host": 8, "iterations": 1},
    }
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(scenario)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["exec_time_s"] > 0
    assert out["growth_MiB"] < PEAK_RSS_GROWTH_BOUND_MIB, out


def test_a_ring_too_small_for_whole_message_resends_is_named() -> None:
    """Found by the property draws: IS class S on 2 hosts of 16 ranks
    (``modern``), 64-slot rings, MTU 576. The first allreduce step sends one
    4,116-byte MEDIUM message (8 fragments) from each rank to its partner on
    the other host: 128 fragments into a 64-slot ring. Open-MX resends a
    message whole, so each round of resends puts the same fragments on the
    wire in the same order and the ring keeps the same leading ones: the
    tails never arrive. The run ends with the library's give-up error naming
    the ring's key (not a hang), and the same run on a 512-slot ring finishes."""
    scenario = {
        "preset": "modern",
        "platform": {"nic": {"ring_slots": 64}, "link": {"mtu": 576}},
        "workload": {"kind": "nas-is", "class": "S", "iterations": 1, "procs_per_host": 16},
    }
    with pytest.raises(
        nicsim.NicsimError, match=r"dropped at full receive rings.*`nic.ring_slots` = 64"
    ):
        nicsim.run(scenario)
    scenario["platform"]["nic"]["ring_slots"] = 512
    assert float(nicsim.run(scenario)["exec_time_s"]) > 0


def test_a_give_up_names_the_ring_when_a_resend_round_overflowed_it() -> None:
    """Found by the property draws: a 0-byte linear all-to-all of 80 ranks
    on 4 ``modern`` hosts, one 32-slot ring a host, every interrupt on one core.
    Each resend round puts the same burst of resends and duplicate acks on
    the wire in the same order, and the ring drops the same ack each time:
    rank 1 gives up on rank 65 after 500 s. Other messages complete between
    those drops, so the give-up reads the ring's last drop against the lost
    message's last resend (not against the last completion) and names the
    key; on the preset's 1,024-slot ring the same run finishes."""
    scenario = {
        "preset": "modern",
        "nic": {
            "coalescing": "disabled",
            "flow_control": False,
            "steering": "single-core",
            "irq_core": 56,
        },
        "host": {"tx_reap": "hard-irq"},
        "workload": {
            "kind": "alltoall",
            "alltoall_algorithm": "linear",
            "iterations": 1,
            "procs_per_host": 20,
            "size_bytes": 0,
            "warmup": 0,
        },
        "platform": {"topology": {"hosts": 4}, "nic": {"ring_slots": 32}},
    }
    with pytest.raises(
        nicsim.NicsimError,
        match=r"^peer unreachable: .*dropped at full receive rings \(host \d\) after the last "
        r"resend.*`nic.ring_slots` = 32",
    ):
        nicsim.run(scenario)
    scenario["platform"]["nic"]["ring_slots"] = 1024
    assert float(nicsim.run(scenario)["time_us"]) > 0


_THP_PROBE = """
import nicsim._core as core
core.bench("alltoall", 64)
rollup = open("/proc/self/smaps_rollup").read().splitlines()
print(next(int(line.split()[1]) for line in rollup if line.startswith("AnonHugePages:")))
"""


def _huge_kib(env: dict[str, str]) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", _THP_PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **env},
        check=True,
    )
    return int(proc.stdout.split()[-1])


def _thp_mode() -> str | None:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.index("[") + 1 : text.index("]")]


@pytest.mark.skipif(_thp_mode() in (None, "never"), reason="the kernel gives no huge pages")
def test_the_core_asks_the_kernel_for_huge_pages() -> None:
    """The core's allocator (mimalloc) asks for transparent huge pages, which
    a kernel in THP "madvise" mode gives only on request: with 4 KiB pages a
    1,024-rank run's reads missed the TLB as well as the caches. The probe
    imports no numpy, the only other library here that asks."""
    assert _huge_kib({}) >= 2048
    if _thp_mode() == "madvise":
        # The check can fail: without the request there are none.
        assert _huge_kib({"MIMALLOC_ALLOW_THP": "0"}) == 0


# -- the memory a run may hold -----------------------------------------------

#: A run well past the core's first interrupt check (1,024 events).
_SMALL_RUN = {"workload": {"kind": "pingpong", "iterations": 2000, "warmup": 0}}


def test_a_run_over_its_memory_limit_stops_with_its_size_and_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run that holds more than its limit stops with an error that names
    both, instead of growing until the allocator or the kernel ends it."""
    monkeypatch.setenv("NICSIM_MEMORY_LIMIT_MIB", "1")
    limit = r"over its limit of 1 MiB \(NICSIM_MEMORY_LIMIT_MIB = 1\)"
    with pytest.raises(nicsim.NicsimError, match=limit):
        nicsim.run(_SMALL_RUN)
    monkeypatch.setenv("NICSIM_MEMORY_LIMIT_MIB", "100000")
    assert nicsim.run(_SMALL_RUN)["events"] > 4096


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("NICSIM_MEMORY_LIMIT_MIB", "2GB"),
        ("NICSIM_MEMORY_LIMIT_MIB", "0"),
        ("NICSIM_MEMORY_SHARES", "-1"),
    ],
)
def test_an_invalid_memory_setting_is_named_before_the_run(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str
) -> None:
    monkeypatch.delenv("NICSIM_MEMORY_LIMIT_MIB", raising=False)
    monkeypatch.setenv(var, value)
    with pytest.raises(nicsim.NicsimError, match=f'invalid value for `{var}`: "{value}"'):
        nicsim.run(_SMALL_RUN)


def test_the_command_line_names_the_limit_in_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "nicsim", "run", "--workload", "pingpong"],
        capture_output=True,
        text=True,
        env={**os.environ, "NICSIM_MEMORY_LIMIT_MIB": "1"},
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: the run of workload `pingpong` was stopped holding ")
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_a_campaigns_workers_share_the_memory_limit() -> None:
    """Local workers run at once: each run's default limit is its share."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from nicsim import executor

    with ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=executor._init_worker,
        initargs=(os.getpid(), 3),
    ) as pool:
        assert pool.submit(os.getenv, executor.MEMORY_SHARES_ENV).result() == "3"
