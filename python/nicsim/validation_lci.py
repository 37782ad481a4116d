"""The mechanisms of [LCI] in ``docs/validation.md``.

[LCI]: network-interface support for LCI on Myrinet.

:data:`MECHANISMS`: every cause the study's prose gives for a result,
quoted, with whether nicsim models it. Joined with the other studies' in
:mod:`nicsim.validation_mechanisms`.
"""

from __future__ import annotations

from nicsim.validation_records import SRC as _SRC
from nicsim.validation_records import Mechanism
from nicsim.validation_records import code_at as _c
from nicsim.validation_records import quote as _q
from nicsim.validation_records import test_at as _t

_LCI_T = _SRC + "lci/tests.rs"
_PRESET_LCI = "presets/lci2000.toml"

MECHANISMS: tuple[Mechanism, ...] = (
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
        (_c(_SRC + "nic/delivery.rs", "pub fn plan"),),
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
        (_c(_SRC + "nic/delivery.rs", "pub fn plan"),),
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
        (_c(_SRC + "nic/delivery.rs", "pub fn plan"),),
        (_t(_SRC + "nic/delivery.rs", "static_split_switches_at_512"),),
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
        (_c(_SRC + "nic/delivery.rs", "pub fn plan"),),
        (
            _t(
                _SRC + "nic/delivery.rs",
                "packet_shifting_is_one_dma_with_the_flag_at_the_buffer_end",
            ),
        ),
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
        (_c(_SRC + "lci/ni_mc.rs", "pub fn start_forward"),),
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
        (_c(_SRC + "nic/timers.rs", "pub fn on_fetch"),),
        (
            _t(
                _SRC + "nic/timers.rs",
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
        (_c(_SRC + "nic/timers.rs", "pub struct SoftTimers"),),
        (_t(_SRC + "nic/timers.rs", "soft_timers_fire_when_polled_after_the_deadline"),),
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
