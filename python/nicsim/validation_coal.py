"""The mechanisms of [OMX-COAL] in ``docs/validation.md``.

[OMX-COAL]: interrupt load against MPI latency over Ethernet.

:data:`MECHANISMS`: every cause the study's prose gives for a result,
quoted, with whether nicsim models it. Joined with the other studies' in
:mod:`nicsim.validation_mechanisms`.
"""

from __future__ import annotations

from nicsim.validation_records import IT as _IT
from nicsim.validation_records import MECH as _MECH
from nicsim.validation_records import SRC as _SRC
from nicsim.validation_records import Mechanism
from nicsim.validation_records import code_at as _c
from nicsim.validation_records import quote as _q
from nicsim.validation_records import test_at as _t

_PRESET_COAL = "presets/omx2009.toml"
_COAL_IT = _IT + "coalescing.rs"

MECHANISMS: tuple[Mechanism, ...] = (
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
        (_c(_SRC + "wire/marker.rs", "pub fn marks"), _c(_SRC + "sim/lib_send.rs", "PullStart")),
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
        "A window of 4 blocks of 32 replies is requested at once (Open-MX "
        "`OMX_PULL_BLOCK_DESCS_NR`); it moves on when its first block completes, and a later "
        "block completing first asks the earlier ones again at once (`omx_pull.c`). No test "
        "isolates the overlap. "
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
        "With the preset's 1024-slot receive rings IS drops frames when its ranks pull "
        "from all their peers at once, and Open-MX's early re-requests and pull timer "
        "recover them; nicsim's judgement is that the drops, not the coalescing strategy, "
        "decide the IS times and the order of the strategies (see the two experiments' "
        "discussions). MG and FT, one remote pull a rank, drop nothing. With "
        "`nic.ring_slots = 16384` IS drops nothing either: disabling coalescing then costs "
        "IS 21 % and FT 10 %, and openmx is within 1.5 % of the 75 us timeout, not faster.",
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
