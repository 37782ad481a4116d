"""The paths' code fetched through each core's L1I (``cache.l1i_kib``, ``host/cache/code.rs``).

On Core 2 ``PAPI_L2_TCA`` counts the instruction fetches the L1I misses as
L2 requests, ``PAPI_L2_TCM`` the lines they bring in. Each path runs its
code lines through the core's L1I; what the code run since pushed out is
requested from the L2. Each test runs [OMX-MQ]'s Table II ping-pong
(``multiqueue-cache``) with the L1I (the preset's 32 KB) and without it
(``l1i_kib = 0``: the code taken to stay in the L1I), and shows the
relation holds only with it.
"""

from __future__ import annotations

from typing import Any

import nicsim
from nicsim.studies import exp_mq

#: Code lines of each path (host/cache/code.rs `CODE`): the process's core
#: runs the send system call's and the driver's transmit (50 + 40), the
#: library's send and receive (50 + 58) and Open MPI's (96 + 96) at every
#: round trip; with the interrupt on it (SC) the receive path's too (hard
#: IRQ 32, NAPI poll 20, frame 38, restock 12, omx_recv 25, reap 10).
SEND_AND_USER = 50 + 40 + 50 + 58 + 96 + 96
RECEIVE = 32 + 20 + 38 + 12 + 25 + 10
#: The Xeon E5345's L1I (``cache.l1i_kib = 32``; the presets leave it off
#: until the data side has an L1 too): 32 KB of 64 B lines.
L1I_LINES = 512


def _run(config: str, size: int, l1i: bool) -> Any:
    scenario = exp_mq._mq_cache_scenario(
        {"steering/binding": config, "size_bytes": size}, quick=True
    )
    scenario["preset"] = exp_mq.MQ_PRESET
    scenario["platform"] = {"cache": {"l1i_kib": 32 if l1i else 0}}
    return nicsim.run(scenario)


def _round_trips(config: str, size: int) -> int:
    scenario = exp_mq._mq_cache_scenario(
        {"steering/binding": config, "size_bytes": size}, quick=True
    )
    return int(scenario["workload"]["iterations"] + scenario["workload"]["warmup"])


def _code(run: Any, side: str) -> tuple[float, float]:
    hits = float(run[f"host1_thread_cache_code_{side}_hits"])
    misses = float(run[f"host1_thread_cache_code_{side}_misses"])
    return hits + misses, misses


def test_without_the_l1i_no_code_is_fetched() -> None:
    off = _run("single-core/SC", 0, l1i=False)
    assert _code(off, "kernel") == (0.0, 0.0)
    assert _code(off, "user") == (0.0, 0.0)


def test_the_kernels_code_is_fetched_again_where_it_shares_an_l1i_too_small_for_all() -> None:
    # With the interrupt on the process's core (SC) the receive path, the
    # send path, the library and Open MPI run on one core: more code than
    # its L1I holds, so a good part of it is fetched from the L2 at every
    # round trip. With the interrupt on the sibling (S$) the core runs the
    # send path and the user side only, less than the L1I holds: its
    # kernel code stays, but for the lines the set-associative L1I's
    # conflicts push out.
    assert SEND_AND_USER + RECEIVE > L1I_LINES > SEND_AND_USER
    n = _round_trips("single-core/SC", 0)
    sc, _ = _code(_run("single-core/SC", 0, l1i=True), "kernel")
    sib, _ = _code(_run("single-core/S$", 0, l1i=True), "kernel")
    assert sc / n > RECEIVE / 4
    assert sib / n < sc / n / 3


def test_code_the_l2_keeps_is_a_hit_and_lowers_a_bound_cores_kernel_rate() -> None:
    # Code is read-only and a 0 B ping-pong brings few lines into the L2:
    # once fetched, every request finds it there. Those hits join the
    # accesses PAPI counts, and the bound kernel's rate falls.
    on = _run("single-core/SC", 0, l1i=True)
    off = _run("single-core/SC", 0, l1i=False)
    requests, misses = _code(on, "kernel")
    assert misses <= SEND_AND_USER + RECEIVE
    assert requests > 20 * misses
    assert on["host1_thread_kernel_miss_rate"] < off["host1_thread_kernel_miss_rate"] * 0.7


def test_round_robin_fetches_the_receive_paths_code_between_sc_and_s_dollar() -> None:
    # Under round-robin one interrupt in eight is served on the process's
    # core: its receive path's code comes in then, and pushes out part of
    # the send path's and the user side's. Its kernel code requests per
    # round trip lie between S$'s (never there) and SC's (every time).
    n = _round_trips("single-core/SC", 0)
    kernel = {
        c: _code(_run(c, 0, l1i=True), "kernel")[0] / n
        for c in ("single-core/S$", "single-rr/none", "single-core/SC")
    }
    assert kernel["single-core/S$"] < kernel["single-rr/none"] < kernel["single-core/SC"]
    # Misses are first fetches only: a ping-pong of a megabyte with I/OAT
    # brings too few lines into the L2 (the copy engine writes around it) to
    # push the code out, so its code misses are the same lines as at 0 B.
    misses = [_code(_run("single-core/SC", size, l1i=True), "user")[1] for size in (0, 1 << 20)]
    assert misses[0] == misses[1] <= SEND_AND_USER
