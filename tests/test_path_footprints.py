"""The paths' cache footprints (``cache.path_footprints``, ``host/cache/footprint.rs``).

The myri10ge slice state and the Open-MX interface counters are written by
whichever core takes the interrupt: under the single round-robin interrupt
they move with every interrupt, under a bound one they stay ([OMX-MQ] §4.2:
"slower than any other model, due to cache-line bounces"). Each test runs
[OMX-MQ]'s ping-pong with the footprints and without them (the mechanism
off), and shows the relation holds only with them.
"""

from __future__ import annotations

from typing import Any

import pytest

import nicsim
from nicsim.studies import exp_mq

#: Table I's rows besides round-robin (DCA is beyond the study).
OTHERS = exp_mq.TABLE_I_OTHERS

#: Lines the receive paths write per received frame with one frame an
#: interrupt (hard IRQ 2, NAPI poll 3, driver 3 + stats 1, restock 2,
#: omx_recv 2): host/cache/footprint.rs.
WRITTEN_PER_FRAME = 13


def _pingpong(
    steering: str,
    binding: str,
    size: int,
    ioat: bool,
    footprints: bool,
    fill_buffers: int | None = None,
) -> Any:
    params = {"steering": steering, "binding": binding, "ioat": "on" if ioat else "off"}
    scenario = exp_mq._mqpingpong_scenario({**params, "size_bytes": size}, quick=True)
    scenario["preset"] = exp_mq.MQ_PRESET
    # Off: the model without the footprints, its NAPI line as it was
    # (`cache.napi_lines`, which the NAPI poll's footprint replaces).
    cache: dict[str, Any] = (
        {"path_footprints": True} if footprints else {"path_footprints": False, "napi_lines": 1}
    )
    if fill_buffers is not None:
        cache["fill_buffers"] = fill_buffers
    # One Open-MX message per MPI message (the MTL path): the 128 B rows
    # read Open-MX's small send, which ob1's 16-byte match header would
    # make a medium one.
    scenario["platform"] = {"cache": cache, "library": {"mpi_path": "mtl"}}
    return nicsim.run(scenario)


def _rr_over_slowest(metric: str, size: int, ioat: bool, footprints: bool) -> float:
    rr = _pingpong("single-rr", "none", size, ioat, footprints)[metric]
    others = [_pingpong(st, b, size, ioat, footprints)[metric] for st, b in OTHERS]
    slowest = max(others) if metric == "latency_us" else min(others)
    return float(rr / slowest)


def test_round_robin_has_the_largest_0b_latency_only_with_the_footprints() -> None:
    assert _rr_over_slowest("latency_us", 0, False, footprints=True) > 1
    assert _rr_over_slowest("latency_us", 0, False, footprints=False) <= 1


@pytest.mark.parametrize("ioat", [False, True])
def test_round_robin_has_the_lowest_4mib_throughput_only_with_the_footprints(ioat: bool) -> None:
    size = 4 << 20
    assert _rr_over_slowest("throughput_MiBps", size, ioat, footprints=True) < 1
    if not ioat:
        # With I/OAT the copy engine leaves the receiving core so little work
        # that, since the re-fit, round-robin is already the slowest row by
        # 0.02 % without the footprints: only the case without I/OAT shows
        # the claim turning on them.
        assert _rr_over_slowest("throughput_MiBps", size, ioat, footprints=False) >= 1


def test_round_robin_moves_at_least_the_written_lines_per_message() -> None:
    on = _pingpong("single-rr", "none", 0, False, footprints=True)
    bound = _pingpong("single-core", "SC", 0, False, footprints=True)
    off = _pingpong("single-rr", "none", 0, False, footprints=False)
    messages = exp_mq._mqpingpong_scenario(
        {"steering": "single-rr", "binding": "none", "ioat": "off", "size_bytes": 0}, quick=True
    )["workload"]
    count = messages["iterations"] + messages["warmup"]
    # The receiving host takes one message per iteration; under round-robin
    # each one's interrupt lands on the next core, which misses every line
    # the last one wrote (another die's, or modified in the sibling's L1).
    assert on["host1_cache_driver_misses"] / count >= WRITTEN_PER_FRAME * 7 / 8
    # Bound to one core, they stay: only the first touches miss, the line
    # the NIC writes at each interrupt (`mcp_irq_data`) and the head of
    # each frame sent, which the NIC's transmit DMA read.
    sent = bound["host1_interrupts"] + count
    assert bound["host1_cache_driver_misses"] <= sent + 2 * WRITTEN_PER_FRAME
    # Off: no such lines.
    assert off["host1_cache_driver_misses"] == 0


def _cache_run(config: str, size: int, footprints: bool, shares: bool = True) -> Any:
    scenario = exp_mq._mq_cache_scenario(
        {"steering/binding": config, "size_bytes": size}, quick=True
    )
    scenario["preset"] = exp_mq.MQ_PRESET
    cache: dict[str, Any] = (
        {"path_footprints": True} if footprints else {"path_footprints": False, "napi_lines": 1}
    )
    # The preset's: the lines the NIC's transmit DMA read stay Shared.
    cache["tx_dma_read_shares"] = shares
    # One Open-MX message per MPI message (the MTL path): the 128 B rows
    # read Open-MX's small send, which ob1's 16-byte match header would
    # make a medium one.
    scenario["platform"] = {"cache": cache, "library": {"mpi_path": "mtl"}}
    return nicsim.run(scenario)


def test_the_send_queue_copy_misses_on_the_interrupts_core_only_if_the_dma_read_invalidates() -> (
    None
):
    # The copy into the send queue writes lines the NIC's transmit DMA read
    # out of the cache at the slot's last use (`Proc::sendq_copy`). Left
    # Invalid by that read, they miss: the 32 kB user rate on the
    # interrupt's core is high (Table II, 32 kB, SC: 22.56 %). Left Shared
    # (the presets'), the write is an upgrade and every user access of a
    # bound ping-pong hits, as without the footprints (the receive queue's
    # slot was just written on this core, the application's buffers are
    # reused).
    rate = "host1_thread_user_miss_rate"
    invalid = _cache_run("single-core/SC", 32768, footprints=True, shares=False)[rate]
    shared = _cache_run("single-core/SC", 32768, footprints=True)[rate]
    off = _cache_run("single-core/SC", 32768, footprints=False)[rate]
    assert invalid > 0.1
    assert shared < 0.01
    assert off < 0.01


def test_a_bound_kernel_misses_the_send_paths_dma_read_lines_if_the_read_invalidates() -> None:
    # IRQ on SC: with the lines the NIC's transmit DMA read left Invalid,
    # the skb's head and a small send's data miss at every send: 128 B
    # misses more than 0 B by the small send's two data lines. Left Shared,
    # only the received frame's (DMA-written) data adds misses at 128 B.
    def driver_misses(size: int, shares: bool) -> float:
        run = _cache_run("single-core/SC", size, footprints=True, shares=shares)
        return float(run["host1_cache_driver_misses"])

    assert driver_misses(0, False) > 0
    assert driver_misses(128, False) > driver_misses(0, False) * 1.5
    assert driver_misses(128, True) < driver_misses(0, True) * 1.1


@pytest.mark.parametrize(
    "config",
    [
        "single-core/S$",
        # With the paths' code fetched through the L1I (cache.l1i_kib = 32;
        # the presets leave it off), round-robin's kernel rate at 0 B falls
        # to 0.145 and rises to 0.147 at 128 B, where Table II has it fall.
        "single-rr/none",
    ],
)
def test_the_kernel_rate_falls_from_0_to_128b_only_if_the_dma_read_leaves_lines_shared(
    config: str,
) -> None:
    # Table II: with the interrupt on the sibling (S$) the process's kernel
    # side is its send path alone (PAPI counts per thread), and its rate
    # falls from 29.70 % at 0 B to 25.06 % at 128 B (round-robin: 29.80 % to
    # 26.80 %). The lines a 128 B send adds (its data read from the caller's
    # buffer and written into the skb) lower the rate only if fewer than
    # 29.70 % of them miss: so the skb's lines, which the NIC's transmit DMA
    # read at the last send, must be left Shared by that read
    # (`cache.tx_dma_read_shares`, the presets'); left Invalid, half of the
    # added lines miss and the rate rises.
    def rate(size: int, shares: bool) -> float:
        run = _cache_run(config, size, footprints=True, shares=shares)
        return float(run["host1_thread_kernel_miss_rate"])

    assert rate(128, True) < rate(0, True)
    assert rate(128, False) > rate(0, False)


def test_the_library_touches_its_request_partner_and_endpoint_lines() -> None:
    # LIB_FOOTPRINT: 14 lines a message sent (request 6, partner 4,
    # endpoint 3, the ioctl's parameters 1), 13 an event consumed; without
    # the footprints only the MPI layer's (`cache.user_private_lines`).
    on = _cache_run("single-core/SC", 0, footprints=True)
    off = _cache_run("single-core/SC", 0, footprints=False)
    scenario = exp_mq._mq_cache_scenario(
        {"steering/binding": "single-core/SC", "size_bytes": 0}, quick=True
    )
    count = scenario["workload"]["iterations"] + scenario["workload"]["warmup"]

    def private(r: Any) -> float:
        return float(r["host1_cache_private_hits"] + r["host1_cache_private_misses"])

    # Host 1 sends one message and consumes one event per iteration.
    per = (private(on) - private(off)) / count
    assert 14 + 13 <= per <= 14 + 13 + 1


def test_the_cores_misses_in_flight_shorten_only_the_lines_that_move() -> None:
    # A path's independent lines are in flight together (`cache.fill_buffers`,
    # host/cache/walk.rs `Step`): a round-robin interrupt's lines cost its
    # paths' dependency chains, less than the same lines one after another
    # (one fill buffer). Bound to the process's core (SC) no line moves, and
    # the overlap changes nothing.
    rr = {fb: _pingpong("single-rr", "none", 0, False, True, fb) for fb in (1, 8)}
    sc = {fb: _pingpong("single-core", "SC", 0, False, True, fb) for fb in (1, 8)}
    assert rr[8]["latency_us"] < rr[1]["latency_us"]
    assert sc[8]["latency_us"] == sc[1]["latency_us"]
    # The same lines move either way: the overlap is in the time, not the counts.
    assert rr[8]["host1_cache_driver_misses"] == rr[1]["host1_cache_driver_misses"]
    # And round-robin stays the slowest row ([OMX-MQ] §4.2) with the overlap.
    assert _rr_over_slowest("latency_us", 0, False, footprints=True) > 1
