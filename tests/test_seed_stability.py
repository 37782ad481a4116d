"""Every value and claim of the cheap experiments is the same under five seeds (issue 46 item 3).

Issue 46: "Every predicted value and claim is the same to within ±5 % over
5 seeds (a test)". This runs the experiments whose quick mode is cheap
(:data:`CHEAP`, about 25 s of CPU for the five seeds) under base seeds 1-5
and asserts, row by row, the rule of :mod:`nicsim.studies.seeds` (a value
within 5 % of its median; a claim with the same verdict under every seed,
and within 5 % of its median or clear of its bound by 5 %). The rows known
to be unstable today are listed in :data:`UNSTABLE`, each with its spread
and why, and expected to fail (strict): the test fails when one of them
becomes stable (take it off the list) or when any other row stops being
stable. ``python -m nicsim.studies.seeds --seeds 5`` checks every
experiment at full length.
"""

from __future__ import annotations

import pytest

from nicsim.studies import seeds
from nicsim.studies.seeds import Spread

pytestmark = pytest.mark.core

#: The experiments whose quick mode runs in seconds. Left out: the NAS
#: runs (coalescing-nas-is, coalescing-nas, multiqueue-nas: minutes each in
#: quick mode), lci-timers (about 8 s a seed), and multiqueue-idle and
#: emo-cache, which publish no value and check no claim; the full check
#: covers them.
CHEAP = (
    "coalescing-pingpong",
    "coalescing-delay-sweep",
    "coalescing-msgrate",
    "coalescing-irq-overhead",
    "coalescing-transfer",
    "coalescing-marking",
    "coalescing-misorder",
    "napi-knobs",
    "multiqueue-pingpong",
    "multiqueue-cache",
    "multiqueue-alltoall",
    "lci-polling",
    "lci-multicast",
    "lci-multicast-apps",
    "lci-watchdog",
    "emo-latency",
    "emo-overhead",
)

#: (experiment, value or claim) -> its spread over seeds 1-5 in quick mode
#: and why it moves. Each is expected to fail the rule.
UNSTABLE: dict[tuple[str, str], str] = {
    (
        "coalescing-msgrate",
        "disabling coalescing cuts the rate of 1 MiB messages too: "
        "rate(disabled) / rate(timeout) < 1",
    ): (
        "1.037, 0.575, 0.620, 0.928, 0.950 (holds on 4 of 5; full length: 1.009, 0.881, "
        "0.881, 0.966, 1.685). 16 pulls of 128 replies in flight overflow the receiver's "
        "1,024-slot ring (an estimate: the 2009 firmware's size is not found), the receiver "
        "takes a reply in ~2.4 us against the wire's 1.2 us, and the dropped blocks come "
        "back after Open-MX's 1 s pull timer (OMX_PULL_RETRANSMIT_TIMEOUT_MS). A run lasts "
        "a fraction of a second plus one or two such timer rounds, and which blocks the "
        "drops hit decides how many (docs/paths-2009.md, §IV-C2)."
    ),
    (
        "multiqueue-cache",
        "kernel L2 miss rate, round-robin IRQ, 32768 B",
    ): (
        "0.3470, 0.3465, 0.3465, 0.3691, 0.3463 (6.5 %), quick mode only (full length: "
        "0.3556-0.3642, 2.4 %). The rate counts what runs on the receiving process's core; "
        "with the interrupt sent round-robin over 8 cores, which of a quick run's 331 "
        "receive interrupts land there depends on the phase the seed's jitter gives the "
        "sequence (seed 4: 4 transmit-completion interrupts fewer, 6x the DMA misses and 551 "
        "recvq misses against none on that core)."
    ),
}


#: What ``python -m nicsim.studies.seeds --seeds 5 --jobs 1`` finds unstable
#: at full length in the experiments the suite cannot afford (their spread
#: over seeds 1-5, and why), beside the 1 MiB claim above: 166 of 171 values
#: and claims are stable. The suite checks only that these rows exist.
UNSTABLE_AT_FULL_LENGTH: dict[tuple[str, str], str] = {
    (
        "coalescing-nas-is",
        "openmx shortens is.B.16: time(openmx) / time(timeout) < 1",
    ): (
        "0.977, 0.998, 1.009, 0.998, 0.914 (holds on 4 of 5). Each row is the mean of 16 "
        "runs whose times move in whole 1 s pull-timer rounds (docs/paths-2009.md measured "
        "about 92 % of is.B.16 as timer waits): the linear alltoallv asks 8,192 replies "
        "of a host's 1,024-slot ring at once, and which strategy waits out one more round "
        "decides the ratio (docs/paths-2009.md, §IV-D)."
    ),
    (
        "coalescing-nas-is",
        "stream loses openmx's gain on is.B.16: time(stream) / time(openmx) > 1",
    ): "1.019, 1.015, 1.00002, 1.030, 1.088: holds on every seed, by 0.002 % on seed 3; "
    "the same rounds.",
    (
        "coalescing-nas-is",
        "stream loses openmx's gain on is.C.16: time(stream) / time(openmx) > 1",
    ): "1.047, 1.008, 1.033, 1.111, 1.003: holds on every seed, by 0.3 % on seed 5; "
    "the same rounds.",
    (
        "multiqueue-nas",
        "is.C.16, single interrupt round-robin, s",
    ): "47.09, 43.10, 45.28, 46.68, 47.13 s (7.7 %): the same overflow of the ring by the "
    "linear alltoallv, and 1 s rounds, on Open-MX 0.9.2's identical pull timer.",
}


def _keys() -> list[tuple[str, str]]:
    return [(exp_id, name) for exp_id in CHEAP for name in seeds.names(exp_id)]


def test_the_known_unstable_rows_are_rows_of_the_cheap_experiments() -> None:
    # A row renamed or moved out of CHEAP must leave the list too; an
    # experiment with nothing to check has no place in CHEAP.
    assert set(UNSTABLE) <= set(_keys())
    assert all(seeds.names(exp_id) for exp_id in CHEAP)
    full = {(e, n) for e, _ in UNSTABLE_AT_FULL_LENGTH for n in seeds.names(e)}
    assert set(UNSTABLE_AT_FULL_LENGTH) <= full
    assert not {e for e, _ in UNSTABLE_AT_FULL_LENGTH} & set(CHEAP)


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], Spread]:
    spreads = seeds.run(CHEAP, seeds.SEEDS, jobs=1, quick=True)
    return {(r.experiment, r.name): r for r in spreads}


@pytest.mark.parametrize(
    "key",
    [
        pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=UNSTABLE[k]))
        if k in UNSTABLE
        else k
        for k in _keys()
    ],
    ids=[f"{e}: {n}" for e, n in _keys()],
)
def test_every_value_and_claim_is_the_same_under_five_seeds(
    rows: dict[tuple[str, str], Spread], key: tuple[str, str]
) -> None:
    row = rows[key]
    assert row.stable, (row.values, row.holds, row.departure, row.margin)
