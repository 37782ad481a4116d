"""The mechanisms of [OMX-MQ] in ``docs/validation.md``.

[OMX-MQ]: the NIC-assisted cache-efficient receive stack.

:data:`MECHANISMS`: every cause the study's prose gives for a result,
quoted, with whether nicsim models it. Joined with the other studies' in
:mod:`nicsim.validation_mechanisms`.
"""

from __future__ import annotations

from nicsim.validation_records import MECH as _MECH
from nicsim.validation_records import SRC as _SRC
from nicsim.validation_records import Mechanism
from nicsim.validation_records import code_at as _c
from nicsim.validation_records import quote as _q
from nicsim.validation_records import test_at as _t

_PRESET_MQ = "presets/omx2009-mq.toml"

MECHANISMS: tuple[Mechanism, ...] = (
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
        (
            _c(_SRC + "host/cache.rs", "Relation::SameDie"),
            _c(_SRC + "host/cache.rs", "fn in_sibling_l1"),
            _c(_PRESET_MQ, "event_lines"),
        ),
        (
            _t(
                _SRC + "host/cache.rs",
                "lines_modified_in_the_sibling_core_s_l1_count_as_misses_and_cost_nothing",
            ),
        ),
        ("multiqueue-cache",),
        "The handler writes the event ring (and a small message's receive queue slot) on "
        "its core and the library pulls them to its own: they show in the user-side L2 miss "
        "rate of multiqueue-cache (round-robin against SC, Table II). With 8 round-robin "
        "cores in 4 two-core dies, 7 of 8 packets come from another core's cache: 6 from "
        "another die (a transfer, charged), one from the die partner's L1 (counted as a "
        "miss, charged nothing); the share itself is not reported.",
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
        (_c(_SRC + "sim/kernel.rs", "PState::Polling"),),
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
        "S$ shares the L2, but lines the other core of the die modified come from its L1 "
        "and count as misses (HITM, charged nothing), so S$ misses as often as round-robin, "
        "as in Table II.",
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
            _t(
                _SRC + "workload/nas.rs",
                "cg_exchanges_are_cg_f_s_whole_row_blocks_and_match_pairwise",
            ),
        ),
        ("multiqueue-nas",),
        "The skeletons compute NPB's operation counts and memory traffic at the hosts' "
        "rates (`nas.*`, estimates; 8 ranks share a host's memory bandwidth), nothing "
        "fitted: CG and MG come within 6 % of every Table III column; multiqueue gains "
        "3.9 % on CG (study 2.8 %) and 2.7 % on MG (2.9 %). CG's exchanges are `cg.f`'s: "
        "each row-reduction step and the transpose carry the whole 150 KB row block, and "
        "half the ranks' transposes cross the wire, so Open-MX is 1.4 s (round-robin) "
        "above native MX (study 2.4 s).",
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
