//! The world's metrics at the end of a run, whichever library its hosts
//! run: this module names every metric of both catalogues
//! (`nicsim.metrics`: "open-mx" for Open-MX and native MX, "lci" for the
//! LCI stack) from the components' counters, one name per concept (a
//! shared I/O bus's counters, `crate::host::bus`, the watchdog's fetches,
//! the NI clock's interrupts); the programs name their own measurements.
//! It also owns the end-of-run invariant checks.

use super::World;
use crate::config::{RxDelivery, Workload};
use crate::host::{ObjClass, Side};
use crate::library::Peaks;
use crate::metrics::{exec_time, pingpong, stream_rate, LinkBound, MB_PER_S, MIB_PER_S};
use crate::nic::flow::Class;
use crate::time::Instant;
use crate::{Metrics, SimError};

/// Why a ratio over an empty part of a run is not measured.
const NO_TIME: &str = "the run took no simulated time";
const NO_TIMED_TIME: &str = "the timed part took no simulated time; raise workload.iterations";
const NO_ACCESS: &str = "no cache line was accessed";
const NO_MESSAGES: &str = "no message was timed";

impl World {
    /// Packet conservation, interrupt accounting and request accounting
    /// (on the \[LCI] stack, whose NIs count their own packets: no NI
    /// delivered more packets than the NIs sent, each being delivered, in
    /// an NI queue or on the wire).
    pub(crate) fn check_invariants(&self) -> Result<(), SimError> {
        if self.run.lci.is_some() {
            let (sent, delivered) = self.ni_packets();
            if delivered > sent {
                return Err(SimError(format!("invariant: {sent} packets sent, {delivered} delivered")));
            }
            return Ok(());
        }
        let d = &self.frames.drops;
        let dropped_before_handler = d.loss + d.ring_full + d.malformed + d.tx_queue_paused;
        let accounted = self.frames.handled + dropped_before_handler + self.frames.live;
        if self.frames.sent != accounted {
            return Err(SimError(format!(
                "invariant: {} frames sent but {} handled + {} dropped + {} in flight",
                self.frames.sent, self.frames.handled, dropped_before_handler, self.frames.live
            )));
        }
        for (i, h) in self.hosts.iter().enumerate() {
            let in_flight: u64 = h
                .cores
                .iter()
                .map(|c| c.kq.iter().filter(|w| matches!(w, super::KWork::Irq { .. })).count() as u64)
                .sum();
            if h.rx.irq_raised() < h.rx.irq_handled() || h.rx.irq_raised() > h.rx.irq_handled() + in_flight + 1 {
                return Err(SimError(format!(
                    "invariant: host {i} raised {} interrupts, handled {}",
                    h.rx.irq_raised(),
                    h.rx.irq_handled()
                )));
            }
            for pr in &h.procs {
                if pr.window_overruns() > 0 {
                    return Err(SimError(format!(
                        "invariant: rank {} (host {i}) sent {} message(s) beyond a full send window",
                        pr.rank(),
                        pr.window_overruns()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Drops at the event ring, resends, and the largest allocation of each
    /// per-process queue over every process (a memory proxy: each queue's
    /// capacity is its high-water mark, rounded up to a power of two). Set
    /// only when a run had drops or resends, so that every other run's
    /// metrics stay as they were.
    fn bound_metrics(&self, m: &mut Metrics) {
        let resent: u64 = self.hosts.iter().flat_map(|h| &h.procs).map(|p| p.resent()).sum();
        let d = &self.frames.drops;
        if resent == 0 && d.event_queue_full == 0 && d.ring_full == 0 && d.loss == 0 && d.at_sender() == 0 {
            return;
        }
        m.set("dropped_event_queue_full", d.event_queue_full as f64);
        m.set("dropped_tx_queue", d.at_sender() as f64);
        m.set("pull_timeouts", self.pulls.timeouts as f64);
        m.set("resends", resent as f64);
        let peak = |f: fn(&Peaks) -> usize| {
            self.hosts.iter().flat_map(|h| &h.procs).map(|p| f(&p.peaks())).max().unwrap_or(0) as f64
        };
        m.set("peak_ring_slots", peak(|p| p.ring));
        m.set("peak_outbox", peak(|p| p.outbox));
        m.set("peak_unexpected", peak(|p| p.unexpected));
        m.set("peak_early", peak(|p| p.early));
        m.set("peak_need_region", peak(|p| p.need_region));
        m.set("peak_frames_live", self.frames.slots() as f64);
    }

    /// Packets the \[LCI] NIs sent and delivered so far (their counters
    /// summed): the stall watch's progress and the invariant's count.
    pub(super) fn ni_packets(&self) -> (u64, u64) {
        self.hosts.iter().map(|h| h.nic.fw_ni_ref()).fold((0, 0), |(s, d), n| (s + n.packets_sent, d + n.delivered))
    }

    /// The LCI stack's catalogue: its libraries', NIs' and buses'
    /// counters, its multicast schemes' (a multicast study's program), its
    /// watchdogs' and NI clocks', its signalled cores' and its reliable
    /// protocol's; whether a program that can be stuck was.
    fn lci_metrics(&self, s: &crate::lci::Running, m: &mut Metrics) {
        let libs = || self.hosts.iter().map(|h| h.lib_ref());
        let nis = || self.hosts.iter().map(|h| h.nic.fw_ni_ref());
        let (sent, delivered) = self.ni_packets();
        m.set("packets", sent as f64);
        m.set("packets_delivered", delivered as f64);
        let sum = |f: fn(&crate::library::lci::Lib) -> u64| libs().map(f).sum::<u64>() as f64;
        m.set("interrupts", sum(|h| h.interrupts));
        m.set("polls_failed", sum(|h| h.polls_failed));
        m.set("polls_ok", sum(|h| h.polls_ok));
        m.set("upcalls", sum(|h| h.upcalls));
        m.set("host_dmas", nis().map(|n| n.host_dmas).sum::<u64>() as f64);
        m.set("host_counter_fetches", nis().map(|n| n.refreshes).sum::<u64>() as f64);
        let buses = || self.hosts.iter().filter_map(|h| h.nic.bus());
        for (i, b) in buses().enumerate().take(2) {
            b.report(i, self.q.now().since(Instant::ZERO), &mut |k, v| m.set(k, v));
        }
        if matches!(self.run.workload, Workload::Asp { .. } | Workload::Qr { .. } | Workload::BcastBench { .. }) {
            // A multicast study's program: the schemes' forwards, by the NIs and by the hosts.
            let mc = || libs().map(|l| &l.mc);
            m.set("ni_forwards", nis().map(|n| n.mc.forwards).sum::<u64>() as f64);
            m.set("ni_forward_waits", nis().map(|n| n.credits.refused(Class::Forward)).sum::<u64>() as f64);
            m.set("host_forward_copies", mc().map(|c| c.host_forward_copies).sum::<u64>() as f64);
            m.set("mc_packets_consumed", mc().map(|c| c.mc_packets_consumed).sum::<u64>() as f64);
            m.set("mc_bytes_consumed", mc().map(|c| c.mc_bytes_consumed).sum::<u64>() as f64);
            m.set("pio_writes", buses().map(|b| b.pio_writes).sum::<u64>() as f64);
        }
        if s.stuck_is_a_result() {
            m.set("stuck", if self.programs_left == 0 { 0.0 } else { 1.0 });
        }
        // The NIs' interrupts: the watchdogs' and, with `"none"`, one per delivered packet.
        let wds = || nis().filter_map(|n| n.watchdog.as_ref());
        let raised = nis().map(|n| n.packet_irqs).sum::<u64>() + wds().map(|w| w.raised).sum::<u64>();
        m.set("watchdog_interrupts", raised as f64);
        m.set("watchdog_fetches", wds().map(|w| w.fetches).sum::<u64>() as f64);
        // The NI clock's interrupts (`clock`: a signal to the library).
        let (ticks, clock_irqs) = self.clock.as_deref().map_or((0, 0), |c| (c.ticks, c.interrupts));
        m.set("clock_interrupts", clock_irqs as f64);
        let (at_once, merged) = libs().map(|h| h.core.signals()).fold((0, 0), |(a, b), (x, y)| (a + x, b + y));
        m.set("signals_returned_at_once", at_once as f64);
        m.set("signals_merged", merged as f64);
        // The NIs' fetches of host words: the watchdogs' and one per clock tick.
        m.set("ni_host_fetches", (wds().map(|w| w.fetches).sum::<u64>() + ticks) as f64);
        m.set("explicit_acks", libs().map(|h| h.explicit_acks).sum::<u64>() as f64);
        m.set("piggybacked_acks", libs().map(|h| h.piggybacked_acks).sum::<u64>() as f64);
        m.set("window_full_polls", libs().map(|h| h.window_full_polls).sum::<u64>() as f64);
    }

    pub(crate) fn metrics(&self) -> Metrics {
        let mut m = Metrics::default();
        m.set("sim_time_us", self.q.now().as_us_f64());
        if let Some(t) = self.ticks.as_deref() {
            m.set("kernel_ticks", t.ran as f64);
        }
        m.set("events", self.q.popped() as f64);
        if let Some(s) = &self.run.lci {
            self.lci_metrics(s, &mut m);
            self.program_metrics(&mut m);
            return m;
        }
        debug_assert_eq!(self.run.irq_raised_all, self.hosts.iter().map(|h| h.rx.irq_raised()).sum::<u64>());
        m.set("interrupts", self.run.irq_raised_all as f64);
        m.set("queue_peak", self.q.peak() as f64);
        m.set("frames", self.frames.sent as f64);
        let d = &self.frames.drops;
        m.set(
            "dropped",
            (d.loss + d.ring_full + d.malformed + d.no_endpoint + d.event_queue_full + d.at_sender()) as f64,
        );
        m.set("dropped_loss", d.loss as f64);
        m.set("dropped_ring_full", d.ring_full as f64);
        m.set("dropped_no_endpoint", d.no_endpoint as f64);
        m.set("duplicates", d.duplicate as f64);
        self.bound_metrics(&mut m);
        for (i, h) in self.hosts.iter().enumerate().take(2) {
            m.set(&format!("host{i}_interrupts"), h.rx.irq_raised() as f64);
            m.set(&format!("host{i}_rx_interrupts"), h.rx.irq_rx() as f64);
            m.set(&format!("host{i}_kernel_us"), h.kernel_time.as_us_f64());
            // How many cores did interrupt/bottom-half work (steering at a glance).
            let irq_cores = h.cores.iter().filter(|c| !c.kernel_time.is_zero()).count();
            m.set(&format!("host{i}_kernel_cores"), irq_cores as f64);
            if let Some(d) = h.nic.queues[0].coalescing_delay() {
                // Adaptive policies: where the delay ended up.
                m.set(&format!("host{i}_coalesce_delay_us"), d.as_us_f64());
            }
            if let Some(d) = h.nic.queues[0].tx_coalescing_delay() {
                // TX DIM: where the transmit completions' delay ended up.
                m.set(&format!("host{i}_tx_coalesce_delay_us"), d.as_us_f64());
            }
            // Average cores kept busy: kernel work, application segments, spinning.
            let span = self.q.now().as_s_f64();
            let busy = (h.kernel_time + h.app_time + h.spin_time).as_s_f64();
            m.ratio(&format!("host{i}_cpu_cores"), busy, span, NO_TIME);
            m.set(&format!("host{i}_tx_contended"), h.mem.tx.contended() as f64);
            if h.wakes_remote > 0 {
                m.set(&format!("host{i}_wakes_remote"), h.wakes_remote as f64);
            }
            if h.nic.fw_rx_frames > 0 {
                let per = h.nic.fw_rx_busy.as_ns_f64() / h.nic.fw_rx_frames as f64;
                m.set(&format!("host{i}_nic_rx_ns_per_frame"), per);
            }
            for (side, name) in [(Side::Kernel, "kernel"), (Side::User, "user")] {
                let (accesses, misses) = h.mem.cache.side_totals(side);
                m.ratio(&format!("host{i}_{name}_miss_rate"), misses as f64, accesses as f64, NO_ACCESS);
                // The same, of the accesses made on the first process's core
                // (what PAPI counts for that thread: `CacheStats::watch`).
                if let Some((accesses, misses)) = h.mem.cache.thread_side_totals(side) {
                    m.ratio(&format!("host{i}_thread_{name}_miss_rate"), misses as f64, accesses as f64, NO_ACCESS);
                }
            }
            for c in ObjClass::ALL {
                let [k, u] = h.mem.cache.counts[c as usize];
                m.set(&format!("host{i}_cache_{}_misses", c.name()), (k.misses + u.misses) as f64);
                m.set(&format!("host{i}_cache_{}_hits", c.name()), (k.hits + u.hits) as f64);
                // The same, of the accesses made on the first process's core.
                for (side, name) in [(Side::Kernel, "kernel"), (Side::User, "user")] {
                    if let Some(t) = h.mem.cache.thread_count(c, side) {
                        m.set(&format!("host{i}_thread_cache_{}_{name}_misses", c.name()), t.misses as f64);
                        m.set(&format!("host{i}_thread_cache_{}_{name}_hits", c.name()), t.hits as f64);
                    }
                }
            }
            // A shared I/O bus (`nic.dma_shared_bus`) reports what the LCI stack's do.
            if let Some(b) = h.nic.bus() {
                b.report(i, self.q.now().since(Instant::ZERO), &mut |k, v| m.set(k, v));
            }
        }
        // L2 misses per access over every host and side.
        let (accesses, misses) =
            self.hosts.iter().map(|h| h.mem.cache.totals()).fold((0, 0), |(a, m), (x, y)| (a + x, m + y));
        m.ratio("cache_miss_rate", misses as f64, accesses as f64, NO_ACCESS);
        if self.hosts[0].nic.queues[0].watchdog().is_some() {
            let dogs = || self.hosts.iter().flat_map(|h| &h.nic.queues).filter_map(|q| q.watchdog());
            m.set("watchdog_held", dogs().map(|w| w.holds).sum::<u64>() as f64);
            m.set("watchdog_saved", dogs().map(|w| w.saved).sum::<u64>() as f64);
            m.set("watchdog_fetches", dogs().map(|w| w.fetches).sum::<u64>() as f64);
        }
        if let Some(c) = self.clock.as_deref() {
            m.set("clock_ticks", c.ticks_at_end(self.q.now()) as f64);
            m.set("clock_interrupts", c.interrupts as f64);
            m.set("clock_signals", c.signals as f64);
            m.set("timers_missed", c.missed as f64);
            m.ratio("timer_late_us_mean", c.late_sum.as_us_f64(), c.missed as f64, "no timer was missed");
            m.set("timer_late_us_max", c.late_max.as_us_f64());
            m.set("clock_signal_wait_us_max", c.signal_wait_max.as_us_f64());
        }
        if self.hosts[0].nic.flow.is_some() {
            // Link-level back-pressure: frames that waited at a stopped
            // link, how long, and those dropped at the FIFO's bound.
            let mut all = crate::nic::flow::FlowStats::default();
            for f in self.hosts.iter().filter_map(|h| h.nic.flow.as_deref()) {
                let s = f.stats;
                (all.held, all.overflow, all.stops) =
                    (all.held + s.held, all.overflow + s.overflow, all.stops + s.stops);
                (all.admitted, all.wait_sum) = (all.admitted + s.admitted, all.wait_sum + s.wait_sum);
                all.wait_max = all.wait_max.max(s.wait_max);
                (all.gave_up, all.given_up_frames) = (all.gave_up + s.gave_up, all.given_up_frames + s.given_up_frames);
            }
            m.set("flow_control_held", all.held as f64);
            m.set("flow_control_gave_up", all.gave_up as f64);
            m.set("flow_control_given_up_frames", all.given_up_frames as f64);
            m.set("flow_control_overflow", all.overflow as f64);
            m.set("flow_control_stops", all.stops as f64);
            m.set("flow_control_wait_us_max", all.wait_max.as_us_f64());
            let none = "no frame passed a stopped link";
            m.ratio("flow_control_wait_us_mean", all.wait_sum.as_us_f64(), all.admitted as f64, none);
        }
        if self.hosts[0].nic.rx_extra_bytes > 0 {
            // Packet shifting: per received frame, the DMA writes and the
            // lines the poller reads (the ring's beside them).
            let [ring, ours] = super::build::rx_delivery_plan(RxDelivery::Shifted, self.env.c.cache.line_bytes);
            let frames = self.hosts.iter().map(|h| h.nic.fw_rx_frames).sum::<u64>() as f64;
            m.set("rx_dma_writes", frames * ours.0 as f64);
            m.set("rx_dma_writes_ring", frames * ring.0 as f64);
            m.set("rx_poll_lines", frames * ours.1 as f64);
            m.set("rx_poll_lines_ring", frames * ring.1 as f64);
        }
        if self.env.c.tx_softirq {
            // Open-MX's transmit completions (`host.tx_softirq`): FRAG_DONE
            // events posted by the NET_TX softirqs and consumed by the
            // senders' libraries, region refcounts put.
            let procs = self.hosts.iter().flat_map(|h| h.procs.iter());
            m.set("frag_done_consumed", procs.map(|p| p.frag_done_consumed()).sum::<u64>() as f64);
            m.set("frag_done_posted", self.hosts.iter().map(|h| h.net_tx.frag_done_posted).sum::<u64>() as f64);
            m.set("region_puts", self.hosts.iter().map(|h| h.net_tx.region_puts).sum::<u64>() as f64);
        }
        if self.run.medium_msgs > 0 {
            m.set("medium_messages", self.run.medium_msgs as f64);
            m.set("deferral_success_rate", self.run.medium_one_irq as f64 / self.run.medium_msgs as f64);
        }
        self.program_metrics(&mut m);
        m
    }

    /// Where rank `r` passed its marks (0: its start, 1: its end), as its
    /// process holds them: an Open-MX process, or the process its host's
    /// \[LCI] library holds.
    fn marks(&self, r: usize) -> [Option<Instant>; 2] {
        let (h, ep) = self.env.ranks[r];
        let hs = &self.hosts[h as usize];
        match hs.lci.as_deref() {
            Some(lib) => [0, 1].map(|i| lib.process().and_then(|p| p.mark(i))),
            None => [0, 1].map(|i| hs.procs[hs.eps[ep as usize].map_or(0, usize::from)].mark(i)),
        }
    }

    /// The least time the network carries messages in: its links', or on
    /// the \[LCI] stack the grid's, whose packets carry the NI's header
    /// and at most one NI buffer of payload.
    fn link_bound(&self) -> LinkBound {
        match &self.wire.net.grid {
            Some(grid) if self.run.lci.is_some() => {
                let (spec, h0) = (grid.spec(), &self.hosts[0]);
                LinkBound {
                    bytes_per_s: spec.bytes_per_s as f64,
                    frame_extra_bytes: (h0.nic.fw_ni_ref().header() + spec.overhead_bytes) as u64,
                    frame_payload: h0.lib_ref().packet_bytes() as u64,
                }
            }
            _ => self.wire.net.link_bound(),
        }
    }

    /// The program's measurements from its processes' marks, whichever
    /// library runs them (the LCI catalogue names a rate in MB/s, the
    /// Open-MX one in MiB/s: [`crate::metrics::Throughput`]), and what
    /// only one library's processes count (interrupts between the marks,
    /// CPU shares, forwards).
    fn program_metrics(&self, m: &mut Metrics) {
        let lci = self.run.lci.as_deref();
        let rate = if lci.is_some() { MB_PER_S } else { MIB_PER_S };
        match self.run.workload {
            Workload::PingPong { size, iterations, .. } | Workload::Echo { size, iterations, .. } => {
                let [Some(a), Some(b)] = self.marks(0) else { return };
                pingpong(m, size, iterations, b - a, &self.link_bound(), rate);
                if lci.is_some() {
                    return;
                }
                let pr = &self.hosts[0].procs[0];
                // Interrupts raised on both hosts per one-way transfer.
                let irq = pr.irqs_all_between_marks() as f64;
                m.ratio("interrupts_per_msg", irq, (2 * iterations) as f64, NO_MESSAGES);
                // [EMO] host overhead: share of each host's CPU taken from
                // a cycle soaker between the marks (kernel + library time).
                let span = (b - a).as_s_f64();
                for i in 0..2 {
                    let busy = (self.run.busy_at_mark[1][i].saturating_sub(self.run.busy_at_mark[0][i])).as_s_f64();
                    let cores = self.hosts[i].cores.len() as f64;
                    m.ratio(&format!("host{i}_cpu_pct"), 100.0 * busy, span * cores, NO_TIMED_TIME);
                }
            }
            Workload::Stream { size, messages, warmup, window, .. }
            | Workload::Uniband { size, messages, warmup, window } => {
                let [start, Some(end)] = self.marks(1) else { return };
                let start = start.unwrap_or(Instant::ZERO);
                let secs = (end - start).as_s_f64();
                if lci.is_some() {
                    // The LCI sender posts every message at once: no window to fill.
                    stream_rate(m, (messages, 0, 0), size, secs, &self.link_bound(), rate);
                    m.set("elapsed_us", secs * 1e6);
                    return;
                }
                stream_rate(m, (messages, warmup, window as u64), size, secs, &self.link_bound(), rate);
                let irq = self.hosts[1].procs[0].irqs_between_marks() as f64;
                m.ratio("interrupts_per_msg", irq, messages as f64, NO_MESSAGES);
                m.set("stream_start_us", start.as_us_f64());
                m.set("stream_end_us", end.as_us_f64());
            }
            Workload::Alltoall { iterations, .. } | Workload::Exchange { iterations, .. } => {
                let pr = &self.hosts[0].procs[0];
                if let (Some(a), Some(b)) = (pr.mark(0), pr.mark(1)) {
                    // IMB reports the time per repetition (rank 0's view).
                    m.set("time_us", (b - a).as_us_f64() / iterations as f64);
                }
            }
            Workload::Bcast { iterations, warmup, .. } => {
                let pr = &self.hosts[0].procs[0];
                if let (Some(a), Some(b)) = (pr.mark(0), pr.mark(1)) {
                    // Per repetition (broadcast and ack), rank 0's view.
                    m.set("time_us", (b - a).as_us_f64() / iterations as f64);
                }
                // Host CPU work (kernel and library, spinning apart) per
                // repetition, every repetition: with one rank per host,
                // host 1 is an inner node of every tree of three ranks or more.
                for (i, h) in self.hosts.iter().enumerate().take(2) {
                    let work = (h.kernel_time + h.app_time).as_us_f64();
                    m.set(&format!("host{i}_work_us_per_bcast"), work / (iterations + warmup) as f64);
                }
                m.set("mcast_forwards", self.hosts.iter().map(|h| h.nic.forwards).sum::<u64>() as f64);
            }
            Workload::NasIs { .. } | Workload::NasKernel { .. } => {
                let pr = &self.hosts[0].procs[0];
                if let (Some(a), Some(b)) = (pr.mark(0), pr.mark(1)) {
                    m.set("exec_time_s", (b - a).as_s_f64());
                    m.set("interrupts_timed", pr.irqs_all_between_marks() as f64);
                }
            }
            Workload::Flood { .. } => {
                if let Some(f) = &self.run.flood {
                    let to = &self.hosts[super::flood::Flood::TO];
                    let packets = f.packets() as f64;
                    let none = "the flood sent no packet; raise workload.packets";
                    m.ratio("overhead_ns_per_packet", to.kernel_time.as_ns_f64(), packets, none);
                    m.ratio("interrupts_per_msg", to.rx.irq_raised() as f64, packets, none);
                }
            }
            Workload::Asp { .. } | Workload::Qr { .. } | Workload::FftAlltoall { .. } => {
                // [LCI]'s execution time: from the start to the last rank's end.
                exec_time(m, (0..self.env.ranks.len()).map(|r| self.marks(r)[1]));
                if lci.is_none() && !matches!(self.run.workload, Workload::FftAlltoall { .. }) {
                    m.set("mcast_forwards", self.hosts.iter().map(|h| h.nic.forwards).sum::<u64>() as f64);
                }
            }
            Workload::Replay => self.replay_metrics(m),
            // The \[LCI] broadcast benchmark (its root's marks): the
            // one-at-a-time broadcasts end at its start mark, the
            // back-to-back ones at its end.
            Workload::BcastBench { root, size, iterations, count, .. } => {
                let [t0, t1] = self.marks(root as usize).map(|t| t.unwrap_or(Instant::ZERO));
                if iterations > 0 {
                    m.set("latency_us", t0.since(Instant::ZERO).as_us_f64() / iterations as f64);
                }
                if count > 0 {
                    let s = t1.since(t0).as_s_f64();
                    m.set("burst_us", s * 1e6);
                    if s > 0.0 {
                        m.set(rate.name, (size * count as u64) as f64 / s / rate.bytes);
                    } else {
                        m.unmeasured(rate.name, "the broadcasts took no simulated time");
                    }
                }
            }
            // The whole-job DSM measures itself (`crate::lci::Dsm::metrics`).
            Workload::Dsm { .. } => {
                if let Some(j) = lci.and_then(|r| r.whole.as_deref()) {
                    j.metrics(m);
                }
            }
        }
    }
}
