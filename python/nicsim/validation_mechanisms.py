"""The mechanisms of ``docs/validation.md``.

:data:`MECHANISMS`: every mechanism a study's prose gives as the cause of a
result, quoted, with whether nicsim models it (where, and the tests that
show it) or not (why). Re-exported by :mod:`nicsim.validation`, which
joins it with a run's tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nicsim.studies import Quote

# -- mechanisms --------------------------------------------------------------

Status = Literal["modelled", "partly", "not modelled"]
STATUSES: tuple[Status, ...] = ("modelled", "partly", "not modelled")


@dataclass(frozen=True)
class Code:
    """A place in nicsim: a repository file and a name (function, constant, key) in it."""

    path: str
    symbol: str

    def __str__(self) -> str:
        return f"`{self.path}` (`{self.symbol}`)"


@dataclass(frozen=True)
class Test:
    """A test function: its file and name."""

    path: str
    name: str

    def __str__(self) -> str:
        return f"`{self.path}::{self.name}`"


@dataclass(frozen=True)
class Mechanism:
    """A cause the study's prose gives for a result, and whether nicsim models it.

    Attributes
    ----------
    name
        Short name of the mechanism.
    quotes
        The study's sentences that give it (first: the main one).
    explains
        The published result(s) it is the cause of.
    status
        ``"modelled"``, ``"partly"`` or ``"not modelled"``.
    code
        Where nicsim models it (or where it would go).
    tests
        Tests that show it (a relation that fails without it).
    shown_by
        Experiments whose tables show it.
    how
        How nicsim models it and, for ``partly``/``not modelled``, what is
        missing and what that does to the results.
    """

    name: str
    quotes: tuple[Quote, ...]
    explains: str
    status: Status
    code: tuple[Code, ...] = ()
    tests: tuple[Test, ...] = ()
    shown_by: tuple[str, ...] = ()
    how: str = ""

    @property
    def study(self) -> str:
        """The study key of its first quote."""
        return self.quotes[0].study


_SRC = "crates/nicsim/src/"
_IT = "crates/nicsim/tests/integration/"
_MECH = _IT + "mechanisms.rs"
_COAL_IT = _IT + "coalescing.rs"
_LCI_T = _SRC + "lci/tests.rs"
_PRESET_COAL = "presets/omx2009.toml"
_PRESET_MQ = "presets/omx2009-mq.toml"
_PRESET_LCI = "presets/lci2000.toml"
_PRESET_EMO = "presets/emo2004.toml"


def _q(study: str, where: str, text: str) -> Quote:
    return Quote(study, where, text)


def _c(path: str, symbol: str) -> Code:
    return Code(path, symbol)


def _t(path: str, name: str) -> Test:
    return Test(path, name)


_COAL_MECHANISMS = (
    Mechanism(
        "Round-robin interrupts bounce the receive stack's lines between caches",
        (
            _q(
                "omx-coal",
                "§II-B",
                "Moreover, since interrupts are usually scattered across all processor cores "
                "by the hardware chipset in a round-robin manner, each interrupt may require "
                "Open-MX data structures to be evicted from other processor caches and fetched "
                "back into the local cache. Thus, the more interrupts, the more cache-line "
                "bounces between cores.",
            ),
            _q(
                "omx-coal",
                "§IV-B4",
                "Indeed, coalescing reduces the host interrupt load and improves locality "
                "during interrupt processing since more packets are processed at once on the "
                "same core, thus avoiding cache-line bounces.",
            ),
        ),
        "message rate against coalescing delay and interrupt binding (Fig. 4); the cost of "
        "disabling coalescing (Table I)",
        "modelled",
        (
            _c(_SRC + "host/cache.rs", "pub fn access"),
            _c(_SRC + "nic/steering.rs", "pub fn irq_core"),
            _c(_SRC + "sim/kernel.rs", "fn entry_cost"),
        ),
        (_t(_MECH, "round_robin_interrupts_move_the_endpoint_descriptor_between_caches"),),
        ("coalescing-delay-sweep", "coalescing-msgrate"),
        "Each shared object (endpoint, event ring, NAPI and transmit state, pull handle) "
        "remembers the die whose L2 last wrote it; an access from another die pays a line "
        "transfer (`cache.same_socket_ns`, `other_socket_ns`). Each L2 has its capacity "
        "(`cache.l2_kib`): a line that as many lines followed into it is evicted and comes "
        "back from memory (`cache.memory_ns`).",
    ),
    Mechanism(
        "A sleeping core must wake up before it handles an interrupt",
        (
            _q(
                "omx-coal",
                "§IV-B1",
                "It means that if the target core is sleeping when an interrupt is raised (for "
                "instance because the MPI process running on this core is waiting for an I/O "
                "to complete), several microseconds may be needed before the interrupt is "
                "actually processed.",
            ),
            _q(
                "omx-coal",
                "§VI",
                "Indeed, coalescing reduces the host interrupt load and also reduces the risk "
                "of having to wakeup a sleeping idle core.",
            ),
        ),
        "disabling sleep raises the 128 B message rate (Fig. 4)",
        "partly",
        (_c(_SRC + "sim/kernel.rs", "fn wake_cost"), _c(_PRESET_COAL, "sleep_exit_ns")),
        (_t(_MECH, "a_napi_receiver_absorbs_a_dearer_interrupt_by_batching"),),
        ("coalescing-delay-sweep",),
        "A core idle for longer than `host.idle_before_sleep_ns` pays `host.sleep_exit_ns` "
        "before its next work. But the 128 B stream is bound by the two processes' own work "
        "and NAPI absorbs the exit in bigger batches, so turning sleep off leaves the rate "
        "unchanged (the delay-sweep claim fails): no process waits on the woken core once "
        "per batch (docs/design.md).",
    ),
    Mechanism(
        "An interrupt costs a context switch into the handler",
        (
            _q(
                "omx-coal",
                "§II-A",
                "This interrupt suffers from a large hardware and software overhead (several "
                "microseconds) due to the need to switch from the current processor execution "
                "context into a dedicated interrupt handling context.",
            ),
        ),
        "965 against 774 ns per packet in the flood with and without coalescing (§IV-B2); "
        "Table I's disabled column",
        "modelled",
        (
            _c(_PRESET_COAL, "irq_entry_ns"),
            _c(_SRC + "nic/coalesce/timeout.rs", "impl Coalescer for Timeout"),
        ),
        (
            _t(_COAL_IT, "flood_overhead_drops_with_coalescing_and_with_a_single_irq_core"),
            _t(_COAL_IT, "coalescing_cuts_interrupts_per_message_in_a_stream"),
        ),
        ("coalescing-irq-overhead", "coalescing-msgrate"),
        "Each interrupt costs `nic.irq_delivery_ns` + `host.irq_entry_ns` (fitted to the "
        "flood) + the NAPI poll, plus the lines it moves and a C1E exit when the core "
        "sleeps; coalescing shares one interrupt among the frames of a batch.",
    ),
    Mechanism(
        "Binding the interrupt to one core removes a cache miss in the low-level stack",
        (
            _q(
                "omx-coal",
                "§IV-B2",
                "We assume it is related to a cache miss being removed in the low-level "
                "receive stack thanks to all packets being processed on the same core.",
            ),
        ),
        "binding the interrupt to one core saves roughly 40 ns per packet (§IV-B2)",
        "modelled",
        (_c(_PRESET_COAL, "napi_lines"), _c(_SRC + "sim/kernel.rs", "fn start_kernel")),
        (_t(_COAL_IT, "flood_overhead_drops_with_coalescing_and_with_a_single_irq_core"),),
        ("coalescing-irq-overhead",),
        "One line of NAPI/driver state (`cache.napi_lines = 1`) follows the round-robin "
        "interrupts; its transfer cost (`cache.same_socket_ns`) is fitted to the 40 ns.",
    ),
    Mechanism(
        "A lone packet waits for the whole coalescing delay",
        (
            _q(
                "omx-coal",
                "§IV-B3",
                "Indeed, each ping-pong iteration uses a single packet and the host has to "
                "wait for the whole coalescing delay to expire (75 µs on Myri-10G NIC by "
                "default).",
            ),
        ),
        "0 B ping-pong latency from about 10 µs up to 75 µs (Fig. 5)",
        "modelled",
        (_c(_SRC + "nic/coalesce/timeout.rs", "impl Coalescer for Timeout"),),
        (_t(_COAL_IT, "timeout_latency_follows_the_delay"),),
        ("coalescing-pingpong",),
        "The `timeout` policy arms an absolute timer at the first unreported frame "
        "(ethtool `rx-usecs` semantics) and raises the interrupt when it expires.",
    ),
    Mechanism(
        "Coalescing lowers the per-packet interrupt overhead of large messages",
        (
            _q(
                "omx-coal",
                "§IV-B3",
                "However, large-message throughput increase when interrupt coalescing is "
                "enabled since many packets are transmitted and thus causing the lower "
                "per-packet interrupt overhead to become important.",
            ),
        ),
        "large-message throughput higher with coalescing (Fig. 5)",
        "partly",
        (_c(_SRC + "sim/kernel.rs", "fn tx_touch"), _c(_PRESET_COAL, "tx_contention_lines")),
        (
            _t(_MECH, "a_copy_bound_receiver_polls_through_a_large_pull"),
            _t(_MECH, "hard_irq_reaping_puts_the_reap_on_the_marked_path"),
        ),
        ("coalescing-pingpong",),
        "The receiver of a 4 MiB pull is copy-bound, so NAPI polls through the whole "
        "transfer and takes almost no receive interrupt in any mode. `disabled` is slower, "
        "as published, for another reason: the sender's transmit completions interrupt "
        "round-robin cores and contend for the transmit state (`cache.tx_contention_lines`, "
        "fitted to the message-rate targets; docs/design.md).",
    ),
    Mechanism(
        "Marked latency-sensitive packets raise the interrupt at once",
        (
            _q(
                "omx-coal",
                "§IV-C1",
                "As explained in Section III-B, marking small-message packets as "
                "Latency-Sensitive enables low latency without requiring interrupt coalescing "
                "to be disabled. And marking only the last fragment of medium messages or the "
                "last fragment of a stream of pull reply packets prevents the host load from "
                "increasing (if there were too many interrupts), while it also enforces one "
                "interrupt to be raised on time (at the end of the message).",
            ),
        ),
        "openmx keeps the latency of disabled and the throughput of timeout (Fig. 6)",
        "modelled",
        (
            _c(_SRC + "wire/marker.rs", "pub fn marks"),
            _c(_SRC + "nic/coalesce/openmx.rs", "impl Coalescer for OpenMx"),
        ),
        (
            _t(_COAL_IT, "openmx_small_latency_is_within_10_percent_of_disabled"),
            _t(_COAL_IT, "openmx_large_throughput_within_5_percent_of_timeout"),
            _t(_SRC + "wire/marker.rs", "default_marks_per_spec"),
        ),
        ("coalescing-pingpong", "coalescing-transfer"),
        "The sender marks tiny/small messages, the last medium fragment, RNDV, PULL, the "
        "last reply of each pull block and NOTIFY; the NIC copies the mark into the "
        "descriptor and raises at that DMA completion (Algorithm 1).",
    ),
    Mechanism(
        "Unmarked ACKs, up to a fifth of the traffic, let openmx coalesce",
        (
            _q(
                "omx-coal",
                "§IV-C2",
                "The reason is that some other packets are actually transfered (for instance "
                "some ACKs, up to 20 % of the traffic) but these packets are not marked as "
                "Latency-Sensitive. So even if many small packets need an immediate "
                "interrupt, the overall number of interrupts is reduced and the message rate "
                "thus increases.",
            ),
        ),
        "openmx well above disabled at 0 B (Table I)",
        "modelled",
        (
            _c(_SRC + "wire/marker.rs", "PacketKind::Ack => false"),
            _c(_SRC + "proto/endpoint.rs", "pub fn delivered"),
            _c(_PRESET_COAL, "ack_after"),
        ),
        (
            _t(_SRC + "wire/marker.rs", "default_marks_per_spec"),
            _t(_IT + "protocol.rs", "a_stream_sender_takes_in_its_acks_as_it_sends"),
        ),
        ("coalescing-msgrate",),
        "The receiver sends an explicit ack after 4 unacknowledged messages "
        "(`library.ack_after = 4`): one frame in five of a 0 B stream, never marked.",
    ),
    Mechanism(
        "Stream coalescing defers the interrupt while other DMAs are pending",
        (
            _q(
                "omx-coal",
                "§III-C",
                "We thus implemented a Stream-aware variant of our Open-MX coalescing strategy "
                "by looking at the future incoming traffic during the DMA processing time. If "
                "no other packet arrives before the DMA completes, the requested interrupt is "
                "actually raised.",
            ),
            _q(
                "omx-coal",
                "§IV-C2",
                "As expected, the Stream coalescing firmware improves the message rate for "
                "small messages. We observed that it actually reduces the number of "
                "interrupts by about a factor of 2.",
            ),
        ),
        "stream above openmx at 0 B, with half the interrupts (Table I, §IV-C2)",
        "partly",
        (
            _c(_SRC + "nic/coalesce/stream.rs", "impl Coalescer for Stream"),
            _c(_SRC + "nic/mod.rs", "pub fn other_pending"),
        ),
        (
            _t(
                _SRC + "nic/coalesce/tests.rs",
                "stream_deferred_interrupt_waits_for_the_last_pending_dma",
            ),
            _t(_MECH, "stream_defers_while_a_dma_is_pending_and_never_beyond_the_timeout"),
            _t(_MECH, "stream_defers_on_back_to_back_fragments_and_fails_on_a_small_gap"),
        ),
        ("coalescing-msgrate", "coalescing-misorder"),
        "Algorithm 2 is modelled as written: a marked frame's interrupt is deferred while "
        "another frame the NIC has received whole is still in its firmware or DMA. It defers "
        "the fragments of a medium message, which leave the sender back to back (one ioctl "
        "of about 1.37 µs per 1500 B fragment against 1.22 µs of wire, and a receive "
        "firmware + DMA of about 1.6 µs), but not 0 B messages: each costs the sender its "
        "own MPI, library, ioctl and driver work, 1.7 µs on omx2009, so they arrive 1.7 µs "
        "apart (the pcap of a 0 B stream shows 88 % of the gaps at 1.70 µs, the rest longer, "
        "none shorter), while the DMA of a 0 B frame completes 0.7 µs after it arrived. No "
        "DMA is pending when a marked frame completes, and `stream` raises as many "
        "interrupts as `openmx` (0.98). Even a sender made 0.9 µs faster per message "
        "(`host.driver_tx_ns` 150, `library.mpi_send_ns` 0) changes nothing: the receiver "
        "then falls behind, its NAPI poll keeps the line masked, and both policies drop to "
        "the same 0.16 interrupts per message. Halving the interrupts needs 0 B frames "
        "closer together than one DMA, i.e. a sender that emits tiny messages in bursts; "
        "the study does not say what made its sender do so, and nicsim's does not.",
    ),
    Mechanism(
        "The stream firmware does more work in the NIC",
        (
            _q(
                "omx-coal",
                "§IV-C2",
                "Moreover, the Stream coalescing modification requires more work in the NIC "
                "and may thus limit performance under high traffic.",
            ),
            _q(
                "omx-coal",
                "§IV-D",
                "The overhead of this optimization in the firmware may thus reduce the NIC "
                "throughput more than it actually helps the overall performance.",
            ),
            _q(
                "omx-coal",
                "§VI",
                "Moreover, it slightly decreases NAS performance due to more work in the NIC.",
            ),
        ),
        "stream brings no gain for medium and large messages (Table I) and loses openmx's "
        "IS gain (Table IV)",
        "modelled",
        (_c(_SRC + "nic/mod.rs", "pub fn receive"), _c(_PRESET_COAL, "fw_rx_stream_ns")),
        (_t(_MECH, "stream_and_multiqueue_firmware_spend_more_nic_time_per_frame"),),
        ("coalescing-msgrate", "coalescing-nas-is"),
        "The stream policy adds `nic.fw_rx_stream_ns` (55 ns, an estimate: about 20 LANai "
        "cycles for the patch's bookkeeping) to the firmware time of every received frame; "
        "it shows under high packet rates (`host{N}_nic_rx_ns_per_frame`).",
    ),
    Mechanism(
        "Stream's deferral fails as soon as packets are not back to back",
        (
            _q(
                "omx-coal",
                "§IV-C4",
                "Indeed, the firmware appears to be able to defer interrupts by 3 or 4 packets "
                "but it fails to do so as soon a small delay between packets appears. One way "
                "to improve this result would be to look deeper in the future traffic before "
                "deciding whether the interrupt should be raised. However, there is no easy "
                "way to do so in the myri10ge firmware since only the processing time of a "
                "DMA is available as such a timeout.",
            ),
            _q(
                "omx-coal",
                "§VI",
                "It cannot always handle a high-degree of packet mis-ordering due to the "
                "difficulty of looking at the upcoming traffic long in advance.",
            ),
        ),
        "the limited success rate of the deferral with mis-ordered packets (§IV-C4, Table III)",
        "partly",
        (
            _c(_SRC + "nic/mod.rs", "pub fn other_pending"),
            _c(_SRC + "nic/coalesce/stream.rs", "impl Coalescer for Stream"),
            _c(_SRC + "sim/lib_send.rs", "fn carries_mark"),
        ),
        (
            _t(_MECH, "stream_defers_while_a_dma_is_pending_and_never_beyond_the_timeout"),
            _t(_MECH, "stream_defers_on_back_to_back_fragments_and_fails_on_a_small_gap"),
        ),
        ("coalescing-misorder",),
        "The deferral window is the marked frame's own firmware + DMA time, as in the "
        "firmware: the next frame must have arrived whole (not merely started) before that "
        "DMA completes. The sender hands a medium message to the driver one fragment per "
        "ioctl, about 1.37 µs per 1500 B fragment on omx2009 against 1.22 µs of wire, and "
        "the receiver's firmware + DMA of such a frame takes about 1.6 µs: back to back, "
        "the deferral reaches the last fragment; a gap of more than about 0.2 µs between "
        "two full fragments breaks it (a send path 0.3 µs slower per fragment: success 0 "
        "at degree 3). Mis-ordering is injected as the study did, by marking fragment N-X "
        "instead of N; coalescing-misorder adds a seeded 0-600 ns arrival jitter per "
        "frame, which breaks the chain of three full fragments at degree 3 part of the "
        "time. Missing: at degree 1 the only fragment to reach is the short last one "
        "(472 B), which arrives about 0.45 µs after the marked one, well inside its DMA; "
        "the study's limited success there needs delays of about a microsecond between "
        "packets, which neither nicsim's sender nor the configured jitter produces.",
    ),
    Mechanism(
        "The rendezvous and pull round trips are latency-sensitive",
        (
            _q(
                "omx-coal",
                "§III-A",
                "This complex protocol is sensitive to latency since multiple round-trips are "
                "involved, both for the Rendezvous/Notify and for requesting data fragments.",
            ),
        ),
        "marking the rendezvous is critical for a 234 KiB transfer (§IV-C3)",
        "modelled",
        (_c(_SRC + "wire/marker.rs", "pub fn marks"), _c(_SRC + "sim/lib_path.rs", "PullStart")),
        (_t(_MECH, "openmx_interrupts_at_once_on_rendezvous_and_pull"),),
        ("coalescing-marking", "coalescing-transfer"),
        "RNDV, PULL, the pull replies and NOTIFY are frames of their own; an unmarked one "
        "waits for the 75 µs fallback timer unless another interrupt sweeps it up.",
    ),
    Mechanism(
        "Four pipelined pull requests keep the wire busy when one completes late",
        (
            _q(
                "omx-coal",
                "§IV-C3",
                "They appear less critical than the Rendezvous message because the driver "
                "tries to pipeline 4 requests at the same time. So even if one of them "
                "completes later because of interrupt coalescing, the wire may still be used "
                "by the already started next requests.",
            ),
        ),
        "unmarking pull requests or last pull replies costs less than unmarking the "
        "rendezvous (§IV-C3)",
        "modelled",
        (
            _c(_SRC + "wire/frag.rs", "PULL_BLOCKS_OUTSTANDING"),
            _c(_SRC + "sim/pull.rs", "fn pull_reply_arrived"),
        ),
        (),
        ("coalescing-marking",),
        "Up to 4 blocks of 32 replies are requested at once (Open-MX "
        "`OMX_PULL_BLOCK_DESCS_NR`), the next when a block completes. No test isolates it. "
        "The order it explains is not reproduced: in coalescing-marking unmarking a pull "
        "class costs more than unmarking the rendezvous (see the next mechanism).",
    ),
    Mechanism(
        "An unmarked notify is swept up by a neighbouring interrupt",
        (
            _q(
                "omx-coal",
                "§IV-C3",
                "Marking the Notify packet does not however appear critical. This surprising "
                "result may be caused by some timing coincidence in this specific "
                "microbenchmark.",
            ),
        ),
        "marking the notify packet does not matter for the 234 KiB ping-pong (§IV-C3)",
        "modelled",
        (_c(_SRC + "wire/marker.rs", "pub fn marks"),),
        (_t(_MECH, "openmx_interrupts_at_once_on_rendezvous_and_pull"),),
        ("coalescing-marking",),
        "In a ping-pong the notify of one message and the rendezvous of the reply leave the "
        "same host back to back, so the interrupt of the marked one takes the unmarked one "
        "too. The same coincidence hides most of an unmarked rendezvous.",
    ),
    Mechanism(
        "Timeout coalescing may miss packets and need another interrupt",
        (
            _q(
                "omx-coal",
                "§IV-C3",
                "We assume that our modification raises interrupts exactly on time, while the "
                "usual coalescing may sometime miss packets and thus need another additional "
                "interrupt later.",
            ),
        ),
        "openmx needs a few less interrupts than timeout for a 234 KiB message (Table II)",
        "modelled",
        (
            _c(_SRC + "nic/coalesce/timeout.rs", "impl Coalescer for Timeout"),
            _c(_SRC + "nic/coalesce/openmx.rs", "impl Coalescer for OpenMx"),
        ),
        (),
        ("coalescing-transfer",),
        "Emerges from the absolute timer against raising at the marked DMA completion; no "
        "test isolates it (the coalescing-transfer claim checks it).",
    ),
    Mechanism(
        "A lone transfer finds idle cores, so interrupts are cheap",
        (
            _q(
                "omx-coal",
                "§IV-C3",
                "Such a basic communication pattern does not suffer much from interrupt "
                "overhead since no process is actually using any single core. Thus, the best "
                "coalescing delay configuration for this micro-benchmark is to disable it",
            ),
        ),
        "disabled is the fastest strategy for one 234 KiB transfer (Table II)",
        "modelled",
        (_c(_SRC + "sim/kernel.rs", "fn dispatch_at"),),
        (),
        ("coalescing-transfer",),
        "Interrupt work runs at once on an idle core (after its C1E exit if it slept); "
        "preemption of a process happens only where one runs.",
    ),
    Mechanism(
        "Interrupts raised on time speed up IS; without coalescing the hosts are overloaded",
        (
            _q(
                "omx-coal",
                "§IV-D",
                "It confirms that our proposed strategy has the advantages of the usual "
                "coalescing while improving large-message throughput thanks to interrupts "
                "being raised on time.",
            ),
            _q(
                "omx-coal",
                "§IV-D",
                "It confirms that raising a bit more interrupts when really needed actually "
                "enhances performance by waking up the processing host on time.",
            ),
            _q(
                "omx-coal",
                "§IV-D",
                "Table V emphasizes this result by showing that disabling interrupt "
                "coalescing leads to [held] times more interrupts and thus much more host "
                "overhead.",
            ),
        ),
        "IS faster with openmx, slower with coalescing disabled (Tables IV and V)",
        "partly",
        (
            _c(_SRC + "workload/nas.rs", "pub fn nas_is_iteration"),
            _c(_PRESET_COAL, "mem_MBps"),
            _c(_SRC + "sim/kernel.rs", "pub(crate) fn kick"),
        ),
        (
            _t(_SRC + "workload/nas.rs", "nas_is_iteration_shape"),
            _t(_SRC + "workload/nas.rs", "nas_is_messages_per_iteration_follow_npb"),
        ),
        ("coalescing-nas-is", "coalescing-nas"),
        "Marking, interrupt costs and the preemption of computing ranks are modelled, and "
        "IS, CG, MG and FT compute NPB's work at the hosts' rates (no fitted compute). "
        "With the preset's 512-slot receive rings IS, MG and FT drop frames when the "
        "ranks pull at once, and Open-MX's resend and pull timers recover them; nicsim's "
        "judgement is that the drops, not the coalescing strategy, decide those times and "
        "the order of the strategies (see the two experiments' discussions). With "
        "`nic.ring_slots = 4096` nothing is dropped: disabling coalescing then costs IS "
        "16-17 % and FT 8 %, and openmx is within 1.5 % of the 75 us timeout, not faster.",
    ),
    Mechanism(
        "Adaptive coalescing tunes the delay on past traffic",
        (
            _q(
                "omx-coal",
                "§VI",
                "Our early tests with an experimental myri10ge adaptive coalescing support "
                "show that it helps microbenchmarks but cannot help real applications as well "
                "as our firmware modifications do. We assume this is related to the fact that "
                "tuning coalescing depending on the past traffic only works for regular "
                "communication patterns.",
            ),
        ),
        "adaptive coalescing helps microbenchmarks, not applications (§VI, no data shown)",
        "partly",
        (_c(_SRC + "nic/coalesce/adaptive.rs", "impl Coalescer for Dim"),),
        (
            _t(_MECH, "dim_moves_up_under_a_bulk_stream_and_down_under_ping_pong"),
            _t(_SRC + "nic/coalesce/tests.rs", "dim_moves_to_high_usec_under_bulk_and_parks"),
        ),
        ("coalescing-pingpong", "coalescing-nas-is"),
        "nicsim's `adaptive` is Linux net_dim (DIM), a stand-in for the experimental "
        "myri10ge support the study tried, whose algorithm is not published.",
    ),
)

_MQ_MECHANISMS = (
    Mechanism(
        "Round-robin interrupts move the endpoint and pull handle descriptors between caches",
        (
            _q(
                "omx-mq",
                "§4.2",
                "First, it shows that the original model (with a single interrupt dispatched "
                "to all cores in a round-robin manner) is slower than any other model, due to "
                "cache-line bounces. Indeed, consecutive packets are never processed by the "
                "same core in the operating system. So the endpoint and pull handle "
                "descriptors keep moving from one cache to another.",
            ),
        ),
        "round-robin single IRQ slower than every other configuration (Table I)",
        "modelled",
        (_c(_SRC + "sim/kernel.rs", "fn entry_cost"), _c(_SRC + "host/cache.rs", "pub fn access")),
        (_t(_MECH, "round_robin_interrupts_move_the_endpoint_descriptor_between_caches"),),
        ("multiqueue-cache", "multiqueue-alltoall", "multiqueue-pingpong"),
        "As in [OMX-COAL]: the endpoint (`cache.endpoint_lines`) and pull handle "
        "(`cache.pull_lines`) follow the handler's die. multiqueue-pingpong carries Table "
        "I's round-robin row and checks §4.2's claim against the other rows (report).",
    ),
    Mechanism(
        "Seven of eight packets cross caches on the way to user space",
        (
            _q(
                "omx-mq",
                "§4.2",
                "Additionally, the user-space application is running on a single core, so "
                "seven out of eight packets on average have to move from one cache to another "
                "when being delivered to user-space by the driver.",
            ),
        ),
        "round-robin single IRQ slower than every other configuration (Table I)",
        "partly",
        (_c(_SRC + "host/cache.rs", "Relation::SameDie"), _c(_PRESET_MQ, "event_lines")),
        (),
        ("multiqueue-cache",),
        "The handler writes the event ring (and a small message's receive queue slot) on "
        "its die and the library pulls them to its own: they show in the user-side L2 miss "
        "rate of multiqueue-cache (round-robin against SC, Table II). With 8 round-robin "
        "cores in 4 two-core dies that share an L2, 6 of 8 packets cross a cache in the "
        "model (the library's die partner shares its L2), not 7 of 8 per-core caches; the "
        "share itself is not reported.",
    ),
    Mechanism(
        "The library and the handler compete for one core",
        (
            _q(
                "omx-mq",
                "§4.2",
                "Secondly, when binding the single interrupt to a single core, the best "
                "performance is achieved when the process and interrupt handler share a cache "
                "but do not actually use the same core. Indeed, this case reduces the overall "
                "latency thanks to cache hits in the receive stack, while it prevents the "
                "user-space library and interrupt handler from competing for the same core.",
            ),
        ),
        "S$ (shared cache, other core) is the best single-interrupt binding (Table I)",
        "modelled",
        (
            _c(_SRC + "host/cache.rs", "Relation::SameDie"),
            _c(_SRC + "sim/kernel.rs", "fn kick"),
            _c(_PRESET_MQ, "driver_rx_tail_ns"),
        ),
        (
            _t(_MECH, "single_core_relations_order_latency_sc_sdollar_sp_op"),
            _t(_MECH, "sdollar_latency_is_below_sc_when_the_library_polls_on_the_interrupted_core"),
        ),
        ("multiqueue-pingpong", "emo-cache"),
        "Cache sharing: same die, same L2, no transfer. Competition: the driver's work after "
        "a frame's event is posted (`host.driver_rx_tail_ns`, skb free and ring refill, 200 "
        "ns, an estimate) runs on the interrupted core before the library there sees the "
        "event (SC); a library on the die partner (S$) sees it at once.",
    ),
    Mechanism(
        "The multiqueue firmware does more work per packet",
        (
            _q(
                "omx-mq",
                "§4.2",
                "It is related to the multiqueue implementation requiring more work in the NIC "
                "than the single interrupt firmware. This overhead is actually related to the "
                "generic multiqueue support in the firmware.",
            ),
        ),
        "multiqueue a bit slower than the optimally bound single interrupt (Table I)",
        "modelled",
        (
            _c(_SRC + "nic/mod.rs", "pub fn receive"),
            _c(_SRC + "nic/steering.rs", "pub fn queue_for"),
            _c(_PRESET_MQ, "fw_rx_multiqueue_ns"),
        ),
        (_t(_MECH, "stream_and_multiqueue_firmware_spend_more_nic_time_per_frame"),),
        ("multiqueue-pingpong",),
        "Multiqueue steering adds `nic.fw_rx_multiqueue_ns` (110 ns, an estimate: about 40 "
        "LANai cycles for the endpoint decode and the generic multi-slice support) to the "
        "firmware time of every received frame.",
    ),
    Mechanism(
        "An interrupt on an idle core waits for it to wake up",
        (
            _q(
                "omx-mq",
                "§4.3",
                "If an interrupt is raised onto such an idle core, it will likely be asleep "
                "because of power saving, and will thus have to wakeup before processing the "
                "packet. On modern processors, this wakeup overhead is several microseconds, "
                "causing the overall latency to increase significantly.",
            ),
        ),
        "latency and throughput with 7 of 8 cores idle when the interrupt is not on the "
        "process's core (§4.3)",
        "modelled",
        (_c(_SRC + "sim/kernel.rs", "fn wake_cost"), _c(_PRESET_MQ, "sleep_exit_ns")),
        (),
        ("multiqueue-idle",),
        "A core idle for longer than `host.idle_before_sleep_ns` pays `host.sleep_exit_ns`; "
        "no test isolates it (multiqueue-idle shows it).",
    ),
    Mechanism(
        "A core sleeps only when its whole die is idle",
        (
            _q(
                "omx-mq",
                "§4.3",
                "Actually, a core only sleeps if the entire dual-core sub-chip is idle. So "
                "binding to the very next core works too.",
            ),
        ),
        "binding the interrupt to the process's die partner avoids the wake-up too (§4.3)",
        "modelled",
        (_c(_SRC + "sim/kernel.rs", "fn wake_cost"),),
        (_t(_MECH, "an_interrupt_core_whose_die_sibling_polls_does_not_sleep"),),
        ("multiqueue-idle",),
        "A core pays the C1E exit only if every core of its die has been idle for "
        "`host.idle_before_sleep_ns`: a polling or busy die partner keeps it awake.",
    ),
    Mechanism(
        "A busy-polling process keeps its core awake for the packet",
        (
            _q(
                "omx-mq",
                "§4.3",
                "By binding the receive queue interrupt and the application to the same core, "
                "we guarantee that this busy polling core will be the one processing the "
                "incoming packet in the driver. It will be able to process it immediately, "
                "causing the observed latency to be much lower.",
            ),
        ),
        "interrupt on the process's core: low latency with idle cores (§4.3)",
        "modelled",
        (_c(_SRC + "sim/lib_path.rs", "PState::Polling"),),
        (),
        ("multiqueue-idle",),
        "A polling process's core is never idle, so it never sleeps.",
    ),
    Mechanism(
        "One core for the endpoint, the ring and the library avoids bounces",
        (
            _q(
                "omx-mq",
                "§2.1",
                "Having a single core access the endpoint structure or shared ring in the "
                "driver leads to no more cache-line bounces and no more concurrent accesses to "
                "these shared resources. Additionally, all eager packets will also benefit "
                "from having the user-space library run on the same core since a shared ring "
                "is involved.",
            ),
        ),
        "lower kernel and user miss rates with the interrupt on the process's core "
        "(Table II, §4.4)",
        "modelled",
        (
            _c(_SRC + "nic/steering.rs", "pub fn queue_for"),
            _c(_SRC + "host/cache.rs", "pub fn access"),
        ),
        (
            _t(_MECH, "multiqueue_handles_an_endpoint_on_one_core_and_auto_binding_runs_there"),
            _t(_MECH, "round_robin_raises_the_l2_miss_rates_and_sc_leaves_the_library_almost_none"),
        ),
        ("multiqueue-cache", "multiqueue-pingpong"),
        'multiqueue steers an endpoint\'s frames to one queue and core; `binding = "auto"` '
        "runs the process there. The L2 miss rates are misses per L2 access of each side "
        "over the receive path's working set (`host/cache.rs`), as the study's PAPI counts; "
        "S$ shares the L2, so the model gives it SC's rates, while Table II shows S$ near "
        "round-robin in the kernel: per-core L1s, and transfers between the two cores of a "
        "die, are not modelled.",
    ),
    Mechanism(
        "Two copies per eager message pollute the cache",
        (
            _q(
                "omx-mq",
                "§4.4",
                "Indeed, one drawback of the current Open-MX implementation up to 32 kB "
                "messages is the matching of MPI messages in user-space: it requires one copy "
                "from the kernel inside the shared ring and another copy back from the ring "
                "into the application destination buffer. These copies cause too many cache "
                "pollution, which prevents our cache efficiency improvements from being "
                "visible.",
            ),
        ),
        "32 kB miss rates do not improve with binding (Table II)",
        "partly",
        (_c(_SRC + "host/cache.rs", "pub fn copy"), _c(_PRESET_MQ, "l2_kib")),
        (_t(_MECH, "a_working_set_larger_than_the_l2_misses_more_and_runs_slower"),),
        ("multiqueue-cache",),
        "Both copies are modelled line by line: every line a copy brings into the L2 is a "
        "miss (as PAPI counts on Core 2, prefetched lines included), they fill the L2 and "
        "evict what came before (capacity, `cache.l2_kib`), and a copy whose source was "
        "evicted runs at the cold rate. The driver's copy out of DMA memory keeps the "
        "kernel's 32 kB rate high in every binding; but a 32 kB ping-pong's working set fits "
        "the 4 MB L2, so with SC the library's copy (receive queue to application buffer) "
        "hits and its rate falls to near zero where the study's stays at 22 %.",
    ),
    Mechanism(
        "With I/OAT, misses come from the endpoint, the pull handles and other code paths",
        (
            _q(
                "omx-mq",
                "§4.4",
                "Very large messages with I/OAT copy offload do not involve any data copy in "
                "the receive path. Cache misses are thus mostly related to concurrent accesses "
                "to the endpoint and pull handles in the driver.",
            ),
            _q(
                "omx-mq",
                "§4.4",
                "But the overall rate remains high, likely because it involves some code-paths "
                "outside of the Open-MX receive stack (*rendezvous* handshake in user-space, "
                "send stack, ...) which are expensive for large messages.",
            ),
        ),
        "1 MB (I/OAT) miss rates high in every binding (Table II)",
        "partly",
        (_c(_SRC + "sim/pull.rs", "fn pull_reply_arrived"), _c(_PRESET_MQ, "pull_lines")),
        (_t(_MECH, "ioat_copies_take_no_cpu_time_and_raise_large_message_throughput"),),
        ("multiqueue-cache",),
        "I/OAT offload and the pull handle lines are modelled, and multiqueue-cache runs "
        "Table II's 1 MB I/OAT row; the code paths outside the receive stack (rendezvous, "
        "send stack) count only their data lines, so the SC rates come out below the study's.",
    ),
    Mechanism(
        "I/OAT offloads the pull-reply copy",
        (
            _q(
                "omx-mq",
                "§2.1",
                "This copy may be offloaded to Intel *I/O Acceleration Technology* (I/OAT) DMA "
                "engine hardware if available [11].",
            ),
        ),
        "4 MB throughput 1056 against 719 MiB/s with I/OAT (Table I); 9 of 10 Gb/s (§4.1)",
        "modelled",
        (_c(_SRC + "sim/mod.rs", "ioat_free"), _c(_PRESET_MQ, "ioat_MBps")),
        (_t(_MECH, "ioat_copies_take_no_cpu_time_and_raise_large_message_throughput"),),
        ("multiqueue-pingpong",),
        "The copy engine works through its descriptors in order at `host.ioat_MBps` "
        "(fitted); the CPU pays only submission.",
    ),
    Mechanism(
        "A single interrupt core becomes the bottleneck",
        (
            _q(
                "omx-mq",
                "§4.5",
                "As expected, binding this single interrupt to a single core decreases the "
                "performance as soon as the message size increases since the load on this "
                "core becomes the limiting factor.",
            ),
            _q(
                "omx-mq",
                "§5",
                "However, as soon as multiple processes and complex communication patterns "
                "are involved, the performance of this model suffers, especially from load "
                "imbalance between the cores.",
            ),
        ),
        "single IRQ on one core slowest for large Alltoall messages (Fig. 5) and sometimes "
        "for NAS (Table III)",
        "partly",
        (_c(_SRC + "nic/steering.rs", "pub fn irq_core"),),
        (),
        ("multiqueue-alltoall",),
        "All kernel work of the single queue runs on one core and preempts the rank there, "
        "but in multiqueue-alltoall `single-core` is slower than `single-rr` only for small "
        "messages and faster for large ones (the bounces cost more than the load), the "
        "reverse of the study's trend.",
    ),
    Mechanism(
        "Large patterns move more data in the host, so cache efficiency matters more",
        (
            _q(
                "omx-mq",
                "§4.5",
                "We think it is caused by such patterns requiring more data transfer within "
                "the host and thus making cache-efficiency more important.",
            ),
            _q(
                "omx-mq",
                "§5",
                "Communication intensive patterns reveal a large improvement since the impact "
                "of cache pollution is larger when all cores and caches are busy.",
            ),
        ),
        "multiqueue's largest gains on Alltoall and IS (§4.5, §4.6)",
        "partly",
        (_c(_SRC + "host/cache.rs", "pub fn access"),),
        (),
        ("multiqueue-alltoall", "multiqueue-nas"),
        "Line transfers are priced, and each L2 has its capacity: copies and other "
        "processes' traffic on a die evict lines, which then come from memory. The NAS "
        "skeletons' compute is time, not lines, so only communication fills the caches.",
    ),
    Mechanism(
        "The single-queue stack's poor cache efficiency on IS (misses ~11× higher)",
        (
            _q(
                "omx-mq",
                "§4.6",
                "It is likely also caused by poor performance of the initial single-queue "
                "model because of very poor cache efficiency. Indeed, looking at cache miss "
                "rates confirms that they are dramatically reduced by our multiqueue "
                "implementation, by a factor of about 11 on IS.",
            ),
        ),
        "IS's large multiqueue speedup (Table III)",
        "partly",
        (
            _c(_SRC + "host/cache.rs", "pub fn access"),
            _c(_SRC + "workload/nas.rs", "pub fn nas_is_work"),
        ),
        (),
        ("multiqueue-nas",),
        "Every run reports the L2 miss rate over every host and side (`cache_miss_rate`); "
        "multiqueue-nas keeps SPEC §4's columns and does not tabulate it. On is.B.16 "
        "(`nicsim run`, omx2009-mq, 8 ranks a host) it is 0.41 with round-robin and 0.51 "
        "with multiqueue: the skeletons' compute is time, not lines, and the transmit "
        "state's contention transfers (`cache.tx_contention_lines`) among 8 senders "
        "dominate the misses, so the study's 11x reduction is not reproduced.",
    ),
    Mechanism(
        "CG and MG are not communication-intensive",
        (
            _q(
                "omx-mq",
                "§4.6",
                "Most programs show a few percents performance improvement thanks to our work. "
                "This impact is limited by the fact that these applications are not highly "
                "communication intensive.",
            ),
        ),
        "a few percent improvement on CG and MG (Table III)",
        "modelled",
        (
            _c(_SRC + "workload/nas.rs", "pub fn nas_kernel_iteration"),
            _c(_PRESET_MQ, "mem_MBps"),
        ),
        (
            _t(_SRC + "workload/nas.rs", "nas_kernel_op_counts_match_npb_formulas"),
            _t(_SRC + "workload/nas.rs", "nas_kernel_work_is_npb_ops_and_memory_traffic"),
        ),
        ("multiqueue-nas",),
        "The skeletons compute NPB's operation counts and memory traffic at the hosts' "
        "rates (`nas.*`, estimates; 8 ranks share a host's memory bandwidth), nothing "
        "fitted: CG and MG come within 6 % of every Table III column; multiqueue gains "
        "1.1 % on CG (study 2.8 %) and 3.5 % on MG (2.9 %).",
    ),
    Mechanism(
        "The NIC hashes only the 8-bit destination endpoint",
        (
            _q(
                "omx-mq",
                "§3.1",
                "Therefore, the NIC only has to convert the 8-bit destination endpoint "
                "identifier into a queue index.",
            ),
        ),
        "a stateless, cheap multiqueue filter (§3.1, §5)",
        "modelled",
        (_c(_SRC + "nic/steering.rs", "pub fn queue_for"),),
        (_t(_SRC + "nic/steering.rs", "multiqueue_maps_endpoints_to_their_core"),),
        ("multiqueue-pingpong",),
        "Queue = destination endpoint mod queues; pull replies carry it in their magic.",
    ),
)

_LCI_MECHANISMS = (
    Mechanism(
        "Polling a cached flag costs no bus traffic until the NI writes it",
        (
            _q(
                "lci",
                "§3.1",
                "Failed polls are therefore inexpensive and generate neither memory nor I/O "
                "traffic. When the NI writes the flag, the host will incur a cache miss and "
                "read the flag's new value from memory.",
            ),
        ),
        "DMA-based polling strategies keep small-message throughput high (Fig. 3)",
        "modelled",
        (_c(_SRC + "lci/host.rs", "pub fn next_action"), _c(_PRESET_LCI, "poll_hit_ns")),
        (_t(_LCI_T, "failed_polls_are_hits_successful_ones_misses"),),
        ("lci-polling",),
        "A failed poll costs `host.poll_hit_ns`, the successful one `host.poll_miss_ns`; "
        "neither touches the bus.",
    ),
    Mechanism(
        "A PIO poll crosses the I/O bus",
        (
            _q(
                "lci",
                "§3.1",
                "A simple way to implement polling on Myrinet is to let the NI increment a "
                "variable in its memory and to let the host read the variable. This is "
                "inefficient, however, because every poll may cause an I/O bus transfer.",
            ),
            _q(
                "lci",
                "§3.3",
                "This strategy achieves high throughput, but increases the latency of "
                "individual polls.",
            ),
        ),
        "Programmed I/O polling: high throughput, slow polls (Fig. 3)",
        "modelled",
        (_c(_SRC + "lci/bus.rs", "pub fn request"), _c(_PRESET_LCI, "pio_read_ns")),
        (
            _t(_LCI_T, "pio_polls_occupy_the_bus_and_slow_concurrent_dma"),
            _t(_SRC + "lci/bus.rs", "a_poll_in_flight_delays_a_dma_fifo"),
        ),
        ("lci-polling",),
        "Each PIO poll holds the PCI bus for `pci.pio_read_ns` (467 ns) in FIFO order with "
        "the NI's DMAs.",
    ),
    Mechanism(
        "Full-packet DMA always moves the whole 1 KB buffer",
        (
            _q(
                "lci",
                "§3.3",
                "The 'Full packet' strategy always uses a single DMA transfer to copy an "
                "entire 1 Kbyte NI receive buffer to the host, irrespective of the actual "
                "payload.",
            ),
        ),
        "poor small-packet throughput of Full packet (Fig. 3)",
        "modelled",
        (_c(_SRC + "lci/poll.rs", "pub fn plan"),),
        (_t(_LCI_T, "full_packet_always_moves_the_whole_buffer"),),
        ("lci-polling",),
        "",
    ),
    Mechanism(
        "Double DMA pays a second transfer per packet",
        (
            _q(
                "lci",
                "§3.3",
                "The 'Double DMA' strategy always uses two DMA transfers, one for the data and "
                "one for the FULL word. This yields poor throughput, especially for packets "
                "that are more than half-full.",
            ),
        ),
        "poor throughput of Double DMA (Fig. 3)",
        "modelled",
        (_c(_SRC + "lci/poll.rs", "pub fn plan"),),
        (_t(_LCI_T, "packet_shifting_issues_one_dma_per_packet_double_dma_two"),),
        ("lci-polling",),
        "Each DMA pays `pci.dma_overhead_ns` plus its bytes at 132 MB/s on the shared bus.",
    ),
    Mechanism(
        "Static split switches strategy at 512 B",
        (
            _q(
                "lci",
                "§3.3",
                "The 'Static split' strategy is a combination of 'Double DMA' (for packets "
                "with a payload of less than 512 bytes) and 'Full packet' (for packets with a "
                "larger payload).",
            ),
        ),
        "Static split between Double DMA and Packet shifting (Fig. 3)",
        "modelled",
        (_c(_SRC + "lci/poll.rs", "pub fn plan"),),
        (_t(_SRC + "lci/poll.rs", "static_split_switches_at_512"),),
        ("lci-polling",),
        "",
    ),
    Mechanism(
        "Packet shifting: one DMA, the flag at the buffer's end",
        (
            _q(
                "lci",
                "§3.2",
                "This *packet shifting* requires only a few simple calculations on the NI, "
                "works well for large and small packets, and allows the host to poll without "
                "generating I/O bus traffic.",
            ),
        ),
        "Packet shifting attains the highest throughput (Fig. 3)",
        "modelled",
        (_c(_SRC + "lci/poll.rs", "pub fn plan"),),
        (_t(_SRC + "lci/poll.rs", "packet_shifting_is_one_dma_with_the_flag_at_the_buffer_end"),),
        ("lci-polling",),
        "",
    ),
    Mechanism(
        "Messages above 1 KB are fragmented into packets",
        (
            _q(
                "lci",
                "§3.3",
                "All variants achieve their peak throughput with 1 Kbyte messages and maintain "
                "that throughput for larger messages, with the exception of some dips caused "
                "by fragmentation.",
            ),
        ),
        "throughput dips above 1 KB (Fig. 3)",
        "modelled",
        (_c(_SRC + "lci/host.rs", "pub fn packets_for"),),
        (_t(_LCI_T, "messages_above_one_packet_fragment"),),
        ("lci-polling",),
        "",
    ),
    Mechanism(
        "Host forwarding copies each packet back to the NI",
        (
            _q(
                "lci",
                "§4.2",
                "First, since each reinjected packet was already available in NI memory, "
                "host-level forwarding results in an unnecessary host-to-NI data transfer at "
                "each internal tree node of the multicast tree (see Figure 4, left).",
            ),
        ),
        "host-level forwarding slower than NI forwarding (Fig. 5, 6)",
        "modelled",
        (_c(_SRC + "lci/multicast.rs", "pub fn tx_post_shared"),),
        (
            _t(
                _SRC + "lci/mc_tests.rs",
                "host_packet_copies_each_packet_to_the_ni_once_and_posts_one_descriptor_per_child",
            ),
        ),
        ("lci-multicast",),
        "A host forwarder copies each packet into an NI send buffer by PIO once and posts a "
        "descriptor per child.",
    ),
    Mechanism(
        "A host that does not poll delays its subtree",
        (
            _q(
                "lci",
                "§4.2",
                "Second, if one host does not poll the network in a timely manner, multicast "
                "delivery will be delayed in a whole subtree.",
            ),
        ),
        "host-level forwarding hurts ASP and QR (Fig. 6)",
        "modelled",
        (_c(_SRC + "lci/multicast.rs", "Forwarding"),),
        (),
        ("lci-multicast-apps",),
        "A host forwards only when it runs the library, not while it computes (docs/lci.md); "
        "no test isolates it.",
    ),
    Mechanism(
        "NI forwarding takes the host off the critical path",
        (
            _q(
                "lci",
                "§4.2",
                "NI-level forwarding does not require the host-to-NI data transfer and removes "
                "the NI-to-host transfer from the critical path: a packet can be forwarded "
                "independently of the NI-to-host copy.",
            ),
        ),
        "LCI-ni has the lowest multicast latency (Fig. 5)",
        "modelled",
        (_c(_SRC + "lci/multicast.rs", "pub fn start_forward"),),
        (
            _t(
                _SRC + "lci/mc_tests.rs",
                "ni_forwarding_sends_to_children_before_the_host_dma_completes",
            ),
        ),
        ("lci-multicast",),
        "",
    ),
    Mechanism(
        "Message-based forwarding waits for the whole message",
        (
            _q(
                "lci",
                "§4.1",
                "Systems that layer multicasting over message-based point-to-point primitives "
                "delay forwarding until an entire message has been received, which increases "
                "latency and reduces throughput for multipacket messages.",
            ),
        ),
        "MPICH's message-based broadcast slowest (Fig. 5, 6)",
        "modelled",
        (_c(_SRC + "lci/multicast.rs", "Forwarding"),),
        (
            _t(
                _SRC + "lci/mc_tests.rs",
                "host_message_forwards_only_after_the_whole_message_arrived",
            ),
        ),
        ("lci-multicast", "lci-multicast-apps"),
        "",
    ),
    Mechanism(
        "Receivers that do not poll stall the sender's acknowledgements",
        (
            _q(
                "lci",
                "§4.3",
                "MPICH and LCI-host do not process these packets until the receivers invoke a "
                "receive primitive. Consequently, the sender is stalled, because "
                "acknowledgements do not flow back in time.",
            ),
            _q(
                "lci",
                "§4.3",
                "With LCI-ni, the problem does not occur, because acknowledgements are sent by "
                "the NI, not by the host processor.",
            ),
        ),
        "ASP with host forwarding needs application-level polling (Fig. 6)",
        "partly",
        (_c(_SRC + "lci/mod.rs", "fn try_transmit"),),
        (
            _t(
                _SRC + "lci/mc_tests.rs",
                "a_forward_waits_for_a_free_buffer_at_the_child_and_holds_its_own",
            ),
        ),
        ("lci-multicast-apps",),
        "The multicast runs have no acknowledgements: flow control is NI receive buffers "
        "(Myrinet back-pressure), so a computing receiver stalls its parent through full "
        "buffers; the `MPI_probe()` polls the study added to ASP are not modelled.",
    ),
    Mechanism(
        "Failed polls and host forwarding take processor time from the application",
        (
            _q(
                "lci",
                "§4.3",
                "The remaining difference is due to the processor overhead caused by failed "
                "polls and host-level forwarding: the time spent on these activities is not "
                "available to the application.",
            ),
        ),
        "LCI-ni faster on ASP even with application-level polling (Fig. 6)",
        "modelled",
        (_c(_SRC + "lci/multicast.rs", "pub fn tx_post_shared"),),
        (_t(_SRC + "lci/mc_tests.rs", "apps_finish_under_every_scheme_and_ni_is_not_slower"),),
        ("lci-multicast-apps",),
        "",
    ),
    Mechanism(
        "An interrupt costs 8 µs in the kernel and 17 µs more as a signal",
        (
            _q(
                "lci",
                "§3.1",
                "On a 200 MHz Pentium Pro running Linux, for example, dispatching an interrupt "
                "to a kernel interrupt handler costs approximately 8 µs. Dispatching to a "
                "user-level signal handler costs an additional 17 µs.",
            ),
        ),
        "interrupts are worth avoiding (§5); the watchdog and timer results (Fig. 7, 8)",
        "modelled",
        (_c(_SRC + "lci/host.rs", "pub fn signal_cost"), _c(_PRESET_LCI, "kernel_dispatch_ns")),
        (_t(_LCI_T, "a_signal_to_a_polling_host_returns_at_once_and_costs_only_its_delivery"),),
        ("lci-watchdog", "lci-timers"),
        "",
    ),
    Mechanism(
        "The polling watchdog delays interrupts in the hope of a poll",
        (
            _q(
                "lci",
                "§5.1",
                "Briefly, the NI starts a watchdog timer when it receives a packet. The NI "
                "generates an interrupt only if the host does not poll before the timer "
                "expires.",
            ),
        ),
        "interrupts fall and performance improves with a small delay (Fig. 7)",
        "modelled",
        (_c(_SRC + "lci/watchdog.rs", "pub struct Watchdog"),),
        (
            _t(_LCI_T, "interrupts_fall_as_the_watchdog_delay_grows"),
            _t(
                _SRC + "lci/watchdog.rs", "raises_exactly_one_interrupt_per_expiry_without_progress"
            ),
        ),
        ("lci-watchdog",),
        "",
    ),
    Mechanism(
        "The NI checks the host's progress and interrupt flag before interrupting",
        (
            _q(
                "lci",
                "§5.1",
                "If the packet counter indicates that the host has processed all packets "
                "delivered to it by the NI, then the NI cancels the polling watchdog timer. If "
                "the interrupt status flag indicates that the host recently disabled "
                "interrupts or if the packet counter shows that the host consumed *some* of "
                "the packets delivered to it, then the NI does not generate an interrupt, but "
                "restarts the timer.",
            ),
        ),
        "few spurious interrupts with the watchdog (Fig. 7)",
        "modelled",
        (_c(_SRC + "lci/watchdog.rs", "pub fn host_state_fetched"),),
        (
            _t(_SRC + "lci/watchdog.rs", "restarts_without_interrupt_when_disabled_or_progress"),
            _t(_SRC + "lci/watchdog.rs", "never_interrupts_when_the_host_consumed_every_packet"),
        ),
        ("lci-watchdog",),
        "",
    ),
    Mechanism(
        "The signal handler returns at once when interrupts are disabled",
        (
            _q(
                "lci",
                "§5.1",
                "LCI\u2019s signal handler, however, always returns without processing packets if "
                "the interrupt status flag in host memory indicates that interrupts are "
                "disabled.",
            ),
        ),
        "optimistic interrupt protection keeps interrupts cheap (§5.1)",
        "modelled",
        (_c(_SRC + "lci/cpu.rs", "pub fn on_signal"),),
        (_t(_SRC + "lci/cpu.rs", "a_handler_that_finds_interrupts_disabled_returns_at_once"),),
        ("lci-watchdog",),
        "",
    ),
    Mechanism(
        "Without interrupts, requests to computing or finished processes are never served",
        (
            _q(
                "lci",
                "§5.1",
                "In fact, Radix and Barnes do not terminate when interrupts are completely "
                "disabled, unless explicit polls are added to the application.",
            ),
        ),
        "Radix and Barnes do not terminate with interrupts disabled (§5.1)",
        "modelled",
        (_c(_SRC + "lci/dsm.rs", "pub fn control"),),
        (_t(_LCI_T, "watchdog_interrupts_a_computing_home_and_inf_reports_the_stuck_run"),),
        ("lci-watchdog",),
        'A finished process sleeps with interrupts enabled; with `watchdog_us = "inf"` a '
        "request to it is never served and the run is reported stuck (FFT too, where the "
        "study names only Radix and Barnes).",
    ),
    Mechanism(
        "The watchdog's effect at the study's scale: 64 processors",
        (
            _q(
                "lci",
                "§5.1",
                "Figure 7 shows the impact of different watchdog delays on the performance of "
                "three CRL applications run on 64 processors: Barnes, FFT, and Radix.",
            ),
        ),
        "execution time against watchdog delay (Fig. 7)",
        "partly",
        (_c("python/nicsim/exp_lci.py", "DSM_PROCS = 64"),),
        (),
        ("lci-watchdog",),
        "lci-watchdog runs the study's 64 processes, with CRL-like request/reply mixes "
        "whose parameters are estimates, not the study's programs.",
    ),
    Mechanism(
        "Timely acknowledgements keep senders from running out of send buffers",
        (
            _q(
                "lci",
                "§5.2",
                "Since NI memory is small, however, acknowledgements must flow back before the "
                "sender runs out of send buffer space.",
            ),
            _q(
                "lci",
                "§5.2",
                "During these exchanges, processors run out of send buffers unless they "
                "receive timely acknowledgements.",
            ),
        ),
        "FFT slows down when the clock period is too long (Fig. 8)",
        "modelled",
        (_c(_SRC + "lci/reliable.rs", "pub fn can_send"),),
        (
            _t(_SRC + "lci/reliable.rs", "a_full_window_stalls_until_an_ack"),
            _t(_LCI_T, "reliable_protocol_delivers_every_message_once_and_a_full_window_stalls"),
        ),
        ("lci-timers",),
        "",
    ),
    Mechanism(
        "NI clock interrupts only when a timer runs or the host has not polled",
        (
            _q(
                "lci",
                "§5.2",
                "The NI, however, generates these interrupts only when a timer is actually "
                "running or when the host has not recently polled the clock.",
            ),
        ),
        "fine-grain timers without an interrupt every period (Fig. 8)",
        "partly",
        (_c(_SRC + "lci/timers.rs", "pub fn on_fetch"),),
        (
            _t(
                _SRC + "lci/timers.rs",
                "clock_interrupts_only_while_a_timer_runs_and_the_host_is_away",
            ),
        ),
        ("lci-timers",),
        "nicsim interrupts only when a timer runs *and* the host has not polled within the "
        'last period; the sentence says "or".',
    ),
    Mechanism(
        "Operating-system timers are too coarse for acknowledgement timers",
        (
            _q(
                "lci",
                "§5.2",
                "The granularity of operating system timers, typically at least ten "
                "milliseconds, is too coarse for this acknowledgement timer.",
            ),
        ),
        "FFT performance degrades with a long clock period (Fig. 8)",
        "modelled",
        (_c(_SRC + "lci/timers.rs", "pub struct SoftTimers"),),
        (_t(_SRC + "lci/timers.rs", "soft_timers_fire_when_polled_after_the_deadline"),),
        ("lci-timers",),
        "Soft timers are checked at every library entry and at NI clock interrupts; the "
        "sweep reaches 10 ms. The effect is small in lci-timers (see its discussion).",
    ),
    Mechanism(
        "The timers' effect at the study's scale: 64 processors",
        (
            _q(
                "lci",
                "§5.2",
                "Figure 8 shows the impact of different clock granularities on the performance "
                "of a Fast Fourier Transform (FFT) on CRL and on 64 processors.",
            ),
        ),
        "FFT execution time against clock period (Fig. 8)",
        "partly",
        (_c("python/nicsim/exp_lci.py", "FFT_PROCS = 64"),),
        (),
        ("lci-timers",),
        "lci-timers runs an FFT all-to-all on the study's 64 processes with estimated sizes "
        "(64 KB blocks), not the study's CRL FFT.",
    ),
)

_EMO_MECHANISMS = (
    Mechanism(
        "Coalescing amortises the interrupt's host overhead",
        (
            _q(
                "emo",
                "§3.1",
                "Interrupt coalescing amortizes the cost of the  $O_{NH}$  over many messages.",
            ),
        ),
        "overhead with and without coalescing (Fig. 2, 7)",
        "modelled",
        (_c(_SRC + "model/mod.rs", "coalesc"),),
        (_t(_SRC + "model/mod.rs", "overheads_are_the_spec_sums"),),
        ("emo-overhead",),
        "The model's O_NH and the simulator's interrupt cost per batch; both read one "
        "scenario, so they agree (the study compares with measurements instead).",
    ),
    Mechanism(
        "Coalescing moves L_NH: the same slope, a larger offset",
        (
            _q(
                "emo",
                "§4.1.4",
                "Interrupt coalescing can be seen as a move to decrease the overhead effect of "
                "the interrupt  $O_{NH}$  at the cost of the time that an interrupt will reach "
                "the host. This means we expect that  $L_{NH}$  is the variable affected.",
            ),
        ),
        "latency higher with maximum coalescing, slope unchanged (Fig. 5, 6)",
        "modelled",
        (_c(_SRC + "model/mod.rs", "coalesc"),),
        (
            _t(_SRC + "model/mod.rs", "coalescing_wait_moves_only_the_offset"),
            _t(_IT + "emo.rs", "coalescing_raises_model_and_simulated_offset_alike"),
        ),
        ("emo-latency",),
        "",
    ),
    Mechanism(
        "The copy to user space steepens the application path's latency",
        (
            _q(
                "emo",
                "§4.1.4",
                "Also as we expected, the slope of the ToApp latency increases more quickly as "
                "it is dependant on the message size during the crossing of the wire X which "
                "is reflected in the ToKernel slope and on the copy from kernel to user space  "
                "$L_{HA}$ .",
            ),
        ),
        "ToApp latency steeper than ToKernel and ToNIC (Fig. 4)",
        "modelled",
        (_c(_SRC + "sim/echo.rs", "fn kernel_echo"),),
        (_t(_IT + "emo.rs", "model_slope_vs_size_matches_the_simulator_on_each_path"),),
        ("emo-latency",),
        "",
    ),
    Mechanism(
        "The NIC echo includes a firmware byte copy at 88 MHz",
        (
            _q(
                "emo",
                "§4.1.2",
                "Because of the structure of the Acenic firmware, we had to include a bcopy "
                "(byte copy) of the entire message from the receive buffer to a transmit "
                "buffer. This copy is performed at the speed of the Acenic processor (88 MHz).",
            ),
        ),
        "ToNIC latency and its projection without the copy (Fig. 4)",
        "modelled",
        (_c(_SRC + "nic/mod.rs", "pub fn firmware_echo"), _c(_SRC + "sim/echo.rs", "fn nic_echo")),
        (_t(_SRC + "sim/echo.rs", "nic_echo_has_no_host_work_and_kernel_echo_no_application"),),
        ("emo-latency",),
        "",
    ),
    Mechanism(
        "The AceNIC's 5 µs DMA start-up belongs to L_NH",
        (
            _q(
                "emo",
                "§4.1.2",
                "It is important to note that the startup time for the DMA engine on the "
                "Acenic cards is approximately 5 $\\mu$ s. This will be accounted for in the  "
                "$L_{NH}$  portion of the calculation.",
            ),
        ),
        "the ToKernel - ToNIC difference (Fig. 4)",
        "modelled",
        (_c(_PRESET_EMO, "dma_startup_ns"),),
        (_t(_SRC + "model/from_scenario.rs", "emo2004_wire_and_nic_terms_by_hand"),),
        ("emo-latency",),
        "",
    ),
    Mechanism(
        "No host overhead when the echo runs in the NIC",
        (
            _q(
                "emo",
                "§4.2.4",
                "As expected, there was no communication overhead when the UDP echoserver runs "
                "at the NIC level.",
            ),
        ),
        "zero overhead on the NIC path (Fig. 7)",
        "modelled",
        (_c(_SRC + "sim/echo.rs", "fn nic_echo"),),
        (_t(_SRC + "sim/echo.rs", "nic_echo_has_no_host_work_and_kernel_echo_no_application"),),
        ("emo-overhead",),
        "",
    ),
    Mechanism(
        "The kernel echo skips the user copy and the route lookup",
        (
            _q(
                "emo",
                "§4.1.3",
                "The UDP echo server does not perform a copy of data to user space and does "
                "not perform a route lookup.",
            ),
        ),
        "ToKernel latency below ToApp (Fig. 4)",
        "partly",
        (_c(_SRC + "sim/echo.rs", "fn kernel_echo"),),
        (_t(_SRC + "sim/echo.rs", "nic_echo_has_no_host_work_and_kernel_echo_no_application"),),
        ("emo-latency",),
        "The kernel echo has no user copy; nicsim has no IP layer, so there is no route "
        "lookup to skip and the inetd echo's own code path is the Open-MX handler's.",
    ),
    Mechanism(
        "Fewer interrupts per byte as messages approach 9000 B",
        (
            _q(
                "emo",
                "§4.2.4",
                "As the size of the message approaches 9000 bytes, the number of interrupts "
                "decreases and so the overall communication processing overhead also "
                "decreases. This is true for all schemes but the maximum interrupt coalescing "
                "scheme which utilizes large delays in processing interrupts to flatten out "
                "the overhead curve.",
            ),
        ),
        "kernel-path overhead falls with size except with maximum coalescing (Fig. 7)",
        "modelled",
        (_c(_SRC + "model/mod.rs", "coalesc"),),
        (_t(_IT + "emo.rs", "model_and_simulated_overhead_agree_on_the_echo_host"),),
        ("emo-overhead",),
        "A fixed per-message cost over a longer round trip: the overhead share falls with "
        "size; with maximum coalescing the 100 µs wait dominates.",
    ),
    Mechanism(
        "The copy to the application offsets the saved interrupts",
        (
            _q(
                "emo",
                "§4.2.4",
                "We expect that as messages become larger, the increase cost of overhead "
                "associated with the copy of data to the application ( $O_{HA}$ ) is just "
                "offset by the decrease cost of overhead associated with fewer interrupts "
                "( $O_{NH}$ ).",
            ),
        ),
        "application-to-application overhead constant over sizes (Fig. 8)",
        "partly",
        (_c(_SRC + "model/mod.rs", "coalesc"),),
        (),
        ("emo-overhead",),
        "Both terms are modelled, but nicsim's echo host overhead on the application path "
        "falls with size without coalescing and rises with maximum coalescing instead of "
        "staying constant.",
    ),
    Mechanism(
        "EMO prices a message as one unit; the study kept messages in one frame",
        (
            _q(
                "emo",
                "§Abstract",
                "However, the extensible message-oriented offload model (EMO) is the first model "
                "to emphasize the performance of the network protocol itself and models it in a "
                "message-oriented rather than flow-oriented manner.",
            ),
            _q(
                "emo",
                "§4.1.1",
                "We wanted to remain within the jumbo frame size to avoid fragmentation and "
                "reassembly or multiple packets, but we wanted to exercise the crossing of page "
                "boundaries.",
            ),
        ),
        "the model verified on one-frame messages (Fig. 4, 5)",
        "modelled",
        (_c(_SRC + "model/from_scenario.rs", "fn message"),),
        (
            _t(_SRC + "model/from_scenario.rs", "a_message_of_several_frames_is_priced_as_one"),
            _t(
                _IT + "emo.rs",
                "several_frames_part_from_the_message_oriented_sum_more_with_more_frames",
            ),
        ),
        ("emo-latency",),
        "The model prices a message once (per-message costs once, per-byte costs over all "
        "its bytes); the simulator cuts it into Open-MX fragments of 8192 B at MTU 9000, pays "
        "the per-frame costs per frame and overlaps successive frames (EMO's gap, §2.0.3). "
        "One frame: model = simulation (the study's verification). Two to four frames "
        "(8900 B, the study's largest size, is already two in Open-MX where its UDP datagram "
        "was one): the overlap wins on every path and the simulated latency falls below the "
        "model's, by more with more frames.",
    ),
    Mechanism(
        "Larger messages: application overhead slopes up once interrupts stop saving",
        (
            _q(
                "emo",
                "§4.2.4",
                "Measurements for much larger messages should reveal application to "
                "application overheads that begin to slope up with the size of the message, "
                "especially since the savings in interrupts is maximized at 9000 bytes.",
            ),
        ),
        "the study's expectation beyond its measurements (§5: future work)",
        "modelled",
        (_c(_SRC + "sim/echo.rs", "fn kernel_echo"),),
        (_t(_IT + "emo.rs", "each_frame_brings_its_own_host_work_beyond_the_model"),),
        ("emo-overhead",),
        "Beyond one frame each fragment brings its own interrupt, driver and handler work to "
        "the echo host: the simulated overhead rises with size and exceeds the message-oriented "
        "model's, which counts that work once.",
    ),
    Mechanism(
        "The projected ToNIC and the ToKernel latencies share a slope",
        (
            _q(
                "emo",
                "§4.1.4",
                "As we expected, the slope of the ToNIC and ToKernel are the same since we "
                "expect the interrupt latency to be constant.",
            ),
        ),
        "ToNIC less the bcopy parallel to ToKernel (Fig. 4)",
        "partly",
        (_c("python/nicsim/exp_emo.py", "def projected_to_nic"),),
        (),
        ("emo-latency",),
        "emo-latency projects ToNIC as the study does (half a bcopy at 4 cycles/B and 88 MHz "
        "off) and checks the slopes; in nicsim the kernel echo's bytes cross the PCI bus "
        "twice more (receive and transmit DMA at `nic.dma_MBps`), a per-byte part of L_NH, "
        "so ToKernel is about a quarter steeper and the claim does not hold.",
    ),
    Mechanism(
        "Host A keeps default coalescing while Host B's setting varies",
        (
            _q(
                "emo",
                "§4",
                "Host A is a 933 MHz Pentium III running an unmodified Linux 2.4.25 kernel with "
                "the Acenic Gigabit Ethernet card set to default values for interrupt "
                "coalescing and transmit ratios.",
            ),
        ),
        "the coalescing comparison (Fig. 5, 6)",
        "modelled",
        (
            _c("python/nicsim/model.py", "def echo_scenario"),
            _c(_SRC + "model/from_scenario.rs", "pub fn client_coalescing_wait_s"),
        ),
        (
            _t(_SRC + "model/from_scenario.rs", "the_client_keeps_its_own_coalescing"),
            _t(_IT + "emo.rs", "host_a_keeps_default_coalescing_while_host_b_disables_it"),
        ),
        ("emo-latency",),
        "`nic.host0` gives host 0 its own timeout coalescing; the EMO scenarios keep it at "
        "the AceNIC defaults (30 µs, 6 frames) while none/default/max set host 1's, so every "
        "row includes Host A's wait and Host B's setting adds one wait per round trip.",
    ),
    Mechanism(
        "One shared PCI bus for the AceNIC's receive and transmit DMA",
        (
            _q(
                "emo",
                "§4.1.2",
                "It is important to note that the startup time for the DMA engine on the "
                "Acenic cards is approximately 5 $\\mu$ s.",
            ),
        ),
        "the latency of messages of several frames (beyond the study)",
        "modelled",
        (_c(_SRC + "nic/mod.rs", "pub fn receive"), _c(_PRESET_EMO, "dma_shared_bus")),
        (_t(_IT + "emo.rs", "the_shared_pci_bus_slows_only_overlapping_frames"),),
        ("emo-latency",),
        "`nic.dma_shared_bus` (emo2004: the AceNIC's 64-bit/33 MHz PCI slot): receive and "
        "transmit DMA take turns, each holding the bus from its start-up to its last byte. "
        "One-frame echoes never overlap them (model = simulation); the kernel echo of several "
        "frames reads a reply while the next frame is written, so the bus bounds it.",
    ),
)

#: Every mechanism the studies' prose gives as the cause of a result.
MECHANISMS: tuple[Mechanism, ...] = (
    _COAL_MECHANISMS + _MQ_MECHANISMS + _LCI_MECHANISMS + _EMO_MECHANISMS
)
