//! The kernel on the cores, the world's side: an interrupt's arrival and
//! a deferred NAPI's timer (the work the host's receive path names,
//! queued on a core), the dispatch that picks what a core runs next
//! (kernel work before the application, preemption), each kernel work
//! item's start and end, and the events a core's segments schedule.
//!
//! The hard IRQ, the NAPI poll and their prices are the host's receive
//! path's (`crate::kernel::RxPath`, called with its context from `rx_parts`);
//! this module routes its answers: a ring entry to price (`entry_cost`,
//! with `handler_cost` beside the handler), transmit completions to reap
//! (`reap_cost`, through the send-path state `host::TxPath`), a frame to
//! the handler, an interrupt outcome to the NIC path, a NAPI timer to the
//! event queue. The driver's pull replies and the NI clock's signal are
//! priced and ended here. The cores' own state and the decisions that read
//! only it (the kernel queue, what a core runs, segment numbers, idle and
//! sleep bookkeeping, the wake-up cost) are `crate::host::core`'s, generic
//! over the work item (`crate::kernel::KWork`). It does not own what a
//! handled frame does nor its price (`handler`, `handler_cost`), nor what
//! the library runs (`crate::library`).

use super::{Ev, RxBy, World};
use crate::engine::EventQueue;
use crate::host::cache::footprint::Path;
use crate::host::Segment;
pub(crate) use crate::kernel::KWork;
use crate::kernel::{Cx, Done, RxPath, Start};
use crate::library::PState;
use crate::nic::RingEntry;
use crate::time::{Duration, Instant};

/// The cores of a host, running this module's work items
/// (`crate::host::core`).
pub(crate) type Core = crate::host::Core<KWork>;
/// What a core is doing.
type Cur = crate::host::Cur<KWork>;

/// Schedules the end of a segment that core `core` of host `h` began.
#[inline]
fn schedule(q: &mut EventQueue<Ev>, h: usize, core: usize, seg: Segment) {
    q.push(seg.end, h as u32, Ev::CoreDone { host: h as u16, core: core as u8, gen: seg.gen });
}

impl World {
    /// The irq_suspend_timeout timer of queue `q` fired (`Ev::SuspendTimer`):
    /// the queue's suspension decides (`crate::nic::suspend`: it lasts while
    /// a poll keeps finding work or runs, and is parked without a timer
    /// while a process busy polls the empty queue, which sees every new
    /// descriptor: `dma_done` wakes it, and its next poll starts the timer
    /// again). Its next timer is scheduled here, and when it ends the
    /// interrupt enabled again (raised at once if frames wait).
    pub(super) fn suspend_timer(&mut self, now: Instant, h: usize, q: usize) {
        let hs = &mut self.hosts[h];
        let polled = hs.poller_of(q).is_some();
        let (next, out) = hs.nic.queues[q].suspend_timer(now, self.c.irq_suspend, polled);
        if let Some(at) = next {
            self.q.push(at, h as u32, Ev::SuspendTimer { host: h as u16, q: q as u8 });
        }
        self.nic_outcome(now, h, q, out);
    }

    /// The interrupt of queue `q` reaches its core (`Ev::IrqArrive`; `rx`:
    /// it reports received frames). A hard IRQ runs before any pending
    /// bottom-half work of the core (softirqs run with interrupts enabled).
    pub(super) fn irq_arrive(&mut self, now: Instant, h: usize, q: u8, rx: bool) {
        let hs = &mut self.hosts[h];
        let core = hs.steering.irq_core(q as usize) as usize;
        let queue = &hs.nic.queues[q as usize];
        let w = RxPath::irq(q, rx, queue.split_claims(), queue.threaded(self.c.napi_threaded));
        hs.cores[core].kq.push_front(w);
        self.kick(now, h, core);
    }

    /// The gro_flush_timeout of a NAPI deferred on `core` expired
    /// (`Ev::NapiTimer`): the hrtimer interrupt re-polls queue `q`, or
    /// wakes its kernel thread (threaded NAPI).
    pub(super) fn napi_timer(&mut self, now: Instant, h: usize, q: u8, core: usize) {
        let hs = &mut self.hosts[h];
        let threaded = hs.nic.queues[q as usize].threaded(self.c.napi_threaded);
        hs.cores[core].kq.push_back(RxPath::napi_timer(q, threaded));
        self.kick(now, h, core);
    }

    /// Threaded NAPI: the hard IRQ on `waker` woke queue `q`'s kernel
    /// thread (`Done::Wake`). The scheduler places it
    /// (`crate::host::Core::wake_target`) and it runs its poll there
    /// (`KWork::ThreadNapi`, after the switch into it) as kernel work
    /// before the application: on a core running the application it
    /// preempts it, as wake-up preemption does for a thread that slept
    /// (kernel/sched/fair.c `check_preempt_wakeup_fair`; a SCHED_FIFO
    /// thread always does), and on an idle core the core wakes first.
    #[cold]
    #[inline(never)]
    pub(super) fn wake_napi_thread(&mut self, now: Instant, h: usize, q: u8, waker: usize) {
        let hs = &mut self.hosts[h];
        let prev = hs.rx.thread_core(q).map(usize::from);
        let core = Core::wake_target(&hs.cores, &self.topo, waker, prev);
        hs.rx.thread_placed(q, core as u16);
        hs.cores[core].kq.push_back(KWork::ThreadNapi { q });
        if core != waker {
            self.kick(now, h, core);
        }
    }

    /// New kernel work was queued on `core`: preempt the application if it
    /// is running a segment, then dispatch.
    #[inline(always)]
    pub(crate) fn kick(&mut self, now: Instant, h: usize, core: usize) {
        let cs = &mut self.hosts[h].cores[core];
        if let Some(remaining) = cs.preempt(now) {
            if let Some(p) = cs.app {
                self.hosts[h].procs[p as usize].preempt(remaining);
            }
            if let Some(t) = self.trace.as_deref_mut() {
                t.preempt(h, core, now);
            }
        }
        self.dispatch_at(now, h, core);
    }

    pub(super) fn dispatch(&mut self, h: usize, core: usize) {
        let now = self.q.now();
        self.dispatch_at(now, h, core);
    }

    /// Starts the next work item on an idle core: kernel work first, then
    /// the application.
    pub(crate) fn dispatch_at(&mut self, now: Instant, h: usize, core: usize) {
        // Each pass looks the core up once: the checks and the application
        // part below share that lookup (this runs for most events).
        loop {
            let hs = &mut self.hosts[h];
            let cs = &mut hs.cores[core];
            if !matches!(cs.cur, Cur::Idle) {
                return;
            }
            if let Some(w) = cs.kq.pop_front() {
                if let Some((cost, w)) = self.start_kernel(now, h, core, w) {
                    let hs = &mut self.hosts[h];
                    let wake = Core::wake_cost(&mut hs.cores, &self.topo, core, &self.c.sleep, now);
                    let cs = &mut hs.cores[core];
                    let cost = cost + std::mem::take(&mut cs.tail);
                    if (wake + cost).is_zero() {
                        // Takes no time (e.g. a re-arm that is a posted write):
                        // complete it now instead of scheduling an event (the
                        // core stays idle).
                        self.finish_kernel_out(now, h, core, w);
                        continue;
                    }
                    // Marked busy here rather than in `start_kernel`: the
                    // core is already looked up.
                    let (cost, seg) = cs.begin_kernel(w, now + wake, cost);
                    schedule(&mut self.q, h, core, seg);
                    hs.kernel_time += cost;
                    if self.trace.is_some() {
                        self.trace_kernel(now, h, core, wake, w, cost);
                    }
                    return;
                }
                continue; // the work vanished (e.g. empty ring): try the next
            }
            let Some(p) = cs.app else {
                cs.go_idle(now);
                return;
            };
            let p = p as usize;
            let pr = &mut hs.procs[p];
            match pr.state() {
                PState::Preempted(rem) => {
                    pr.resume();
                    // A stall owed since is paid now: CPU time like the rest
                    // (`rem` was charged when the segment first began).
                    let (rem_stall, seg) = cs.begin_app(now, rem);
                    hs.app_time += rem_stall - rem;
                    let rem = rem_stall;
                    schedule(&mut self.q, h, core, seg);
                    if let Some(t) = self.trace.as_deref_mut() {
                        t.app_resume(h, core, now, rem);
                    }
                    return;
                }
                PState::Ready | PState::Waking => {
                    let extra = if pr.state() == PState::Waking { self.c.host.wakeup } else { Duration::ZERO };
                    let step = self.lib_step(now, h, p);
                    let hs = &mut self.hosts[h];
                    match step {
                        Some((cost, action)) => {
                            let wake = Core::wake_cost(&mut hs.cores, &self.topo, core, &self.c.sleep, now);
                            let (cost, seg) = hs.cores[core].begin_app(now + wake + extra, cost);
                            hs.app_time += extra + cost;
                            hs.procs[p].begin(action);
                            schedule(&mut self.q, h, core, seg);
                            if self.trace.is_some() {
                                self.trace_app(now, h, core, wake, extra, cost);
                            }
                        }
                        None => {
                            // Polling, blocked or done: nothing to run.
                            let cs = &mut hs.cores[core];
                            if hs.procs[p].state() == PState::Polling {
                                cs.spin();
                            } else {
                                cs.go_idle(now);
                            }
                        }
                    }
                    return;
                }
                PState::Polling => {
                    cs.spin();
                    return;
                }
                PState::Running => unreachable!("running process on an idle core"),
                PState::Blocked | PState::Done => {
                    cs.go_idle(now);
                    return;
                }
            }
        }
    }

    /// The segment numbered `gen` of a core ended; stale if the core has
    /// since been preempted (checked here, where the core is looked up
    /// anyway). Inlined into the event loop (its only caller, `handle`).
    #[inline(always)]
    pub(super) fn core_done(&mut self, now: Instant, h: usize, core: usize, gen: u32) {
        let hs = &mut self.hosts[h];
        let cs = &mut hs.cores[core];
        if !cs.is_current(gen) {
            return;
        }
        match cs.end_segment() {
            Cur::Kernel(w) => self.finish_kernel(now, h, core, w),
            Cur::App => {
                if let Some(p) = cs.app {
                    let p = p as usize;
                    let action = hs.procs[p].end_segment();
                    self.lib_apply(now, h, p, action);
                }
            }
            Cur::Idle => {}
        }
        self.dispatch_at(now, h, core);
    }

    /// The host's send-path state touched at `now` by `core`, which then
    /// works on it for `hold` (`crate::host::TxPath::touch`): its cost to
    /// `core`, the stall it makes a core of another die owe charged to it.
    pub(crate) fn tx_touch(&mut self, now: Instant, h: usize, core: usize, hold: Duration) -> Duration {
        let hs = &mut self.hosts[h];
        let kernel = &mut hs.lines.kernel[core];
        let (cost, owed) =
            hs.tx.touch(&self.cc, &self.topo, &self.c.cache, &mut hs.cache, kernel, now, core as u16, hold);
        if let Some((other, stall)) = owed {
            hs.cores[other as usize].stall += stall;
        }
        cost
    }

    /// The host's receive path (`crate::kernel::RxPath`) and its context
    /// for work on queue `q` (a pair rather than a call taking a closure:
    /// the closure in the event loop was not inlined).
    #[inline(always)]
    fn rx_parts(&mut self, now: Instant, h: usize, q: u8) -> (&mut RxPath, Cx<'_>) {
        let hs = &mut self.hosts[h];
        let cx = Cx {
            now,
            c: &self.c,
            cc: &self.cc,
            topo: &self.topo,
            cache: &mut hs.cache,
            queue: &mut hs.nic.queues[q as usize],
        };
        (&mut hs.rx, cx)
    }

    /// Computes the cost of a kernel work item and the item the core then
    /// works on (the caller marks the core busy with it); `None` if the item
    /// turned out to have nothing to do. The receive path's items are the
    /// host's `RxPath`'s to start; the world prices the ring entries they
    /// take (`entry_cost`) and the driver's pull replies and the NI clock's
    /// signals.
    pub(super) fn start_kernel(&mut self, now: Instant, h: usize, core: usize, w: KWork) -> Option<(Duration, KWork)> {
        let Some(q) = w.rx_queue() else {
            let cost = match w {
                KWork::PullReply { serve } => {
                    let s = &self.pulls.serves[serve as usize];
                    if !s.live {
                        return None;
                    }
                    let ep = s.ep;
                    let send = self.c.host.driver_tx + self.c.nic.doorbell;
                    send + self.tx_touch(now, h, core, send)
                        + self.region_touch(h, core, ep)
                        + self.path_lines(h, core, Path::OmxSend, 0)
                }
                KWork::Signal { p } => self.signal_cost(h, p as usize),
                KWork::NetTx => self.net_tx_cost(h, core)?,
                _ => unreachable!("an item of the receive path"),
            };
            return Some((cost, w));
        };
        if w.polls() {
            // The poll takes a frame or restocks: room for a frame waiting
            // at a stopped link (`nic.flow_control`)?
            self.flow_kick(now, h);
        }
        let lines = self.path_lines_at_start(h, core, q, w);
        let (rx, mut cx) = self.rx_parts(now, h, q);
        match rx.start(&mut cx, core as u16, w) {
            Start::Run(cost, w) => Some((cost + lines, w)),
            Start::Entry { cost, entry, w } => {
                let e = self.entry_cost(now, h, core, q, entry);
                Some((RxPath::entry_cost(&self.c, cost + lines, entry, e), w))
            }
            Start::Reap { cost, n, w } => {
                let reap = if n > 0 { self.reap_cost(now, h, core, n) } else { Duration::ZERO };
                if n > 0 && self.c.tx_softirq {
                    // dev_kfree_skb_irq: the skbs join this core's
                    // completion queue, for its NET_TX softirq.
                    self.hosts[h].net_tx.reap(q as usize, core);
                }
                Some((cost + lines + reap, w))
            }
            Start::Yield(w) => {
                self.hosts[h].cores[core].kq.push_back(w);
                None
            }
        }
    }

    /// `finish_kernel` for the rare zero-cost items of `dispatch_at`: kept
    /// out of line there, inlined in `core_done` (every kernel segment).
    #[inline(never)]
    pub(super) fn finish_kernel_out(&mut self, now: Instant, h: usize, core: usize, w: KWork) {
        self.finish_kernel(now, h, core, w);
    }

    #[inline(always)]
    pub(super) fn finish_kernel(&mut self, now: Instant, h: usize, core: usize, w: KWork) {
        let Some(q) = w.rx_queue() else {
            match w {
                KWork::PullReply { serve } => self.send_pull_reply(now, h, RxBy::Core(core), serve),
                KWork::Signal { p } => self.signal_done(now, h, p as usize),
                KWork::NetTx => self.net_tx_done(now, h, core),
                _ => unreachable!("an item of the receive path"),
            }
            return;
        };
        let (rx, mut cx) = self.rx_parts(now, h, q);
        match rx.finish(&mut cx, w) {
            Done::Frame { next, tail, frame } => {
                let cs = &mut self.hosts[h].cores[core];
                cs.kq.push_front(next);
                cs.tail = tail;
                self.handle_frame(now, h, RxBy::Core(core), frame);
            }
            Done::Next(next) => {
                self.hosts[h].cores[core].kq.push_front(next);
                if matches!(w, KWork::EntryTxDone { .. }) && self.c.tx_softirq {
                    // The poll freed the skbs it reaped (`poll_dtors`).
                    self.net_tx_done(now, h, core);
                }
            }
            Done::Irq { out, next } => {
                self.nic_outcome(now, h, q as usize, out);
                let hs = &mut self.hosts[h];
                if let Some(next) = next {
                    hs.cores[core].kq.push_front(next);
                }
                if matches!(w, KWork::HardIrq { .. }) && self.c.tx_softirq && hs.net_tx.irq_exit(core) {
                    // irq_exit -> __do_softirq: NET_TX (2) before NET_RX (3).
                    hs.cores[core].kq.push_front(KWork::NetTx);
                }
            }
            Done::Timer { at } => self.q.push(at, h as u32, Ev::NapiTimer { host: h as u16, q, core: core as u8 }),
            Done::Wake { q } => self.wake_napi_thread(now, h, q, core),
        }
    }

    /// Reaping `n` transmit completions on core `core`: freeing the
    /// skbs and touching the send-path state shared with the sender.
    pub(super) fn reap_cost(&mut self, now: Instant, h: usize, core: usize, n: u32) -> Duration {
        let free = self.c.host.tx_done.times(n as u64);
        free + self.tx_touch(now, h, core, free) + self.path_lines(h, core, Path::TxDone, 0)
    }

    /// The footprint's lines of a path (`host/cache/footprint.rs`) that
    /// receive queue `q`'s work item `w` runs as it starts on `core`: the
    /// hard IRQ (`myri10ge_intr`) for an interrupt, the NAPI poll's for a
    /// poll that begins (a full budget).
    #[inline(always)]
    fn path_lines_at_start(&mut self, h: usize, core: usize, q: u8, w: KWork) -> Duration {
        let napi_budget = self.c.napi_budget;
        let (irq, poll) = match w {
            KWork::Irq { .. } => (true, true),
            KWork::HardIrq { .. } => (true, false),
            KWork::TimerNapi { .. } | KWork::ThreadNapi { .. } => (false, true),
            KWork::IrqThread { timer, .. } => (!timer, false),
            KWork::Napi { budget, .. } => (false, budget == napi_budget),
            _ => (false, false),
        };
        let mut cost = Duration::ZERO;
        if irq {
            cost += self.path_lines(h, core, Path::HardIrq, q as usize);
        }
        if poll {
            cost += self.path_lines(h, core, Path::NapiPoll, q as usize);
        }
        cost
    }

    /// One run of `path` for receive queue `q` on `core`: its footprint's
    /// lines through the cache model (`HostLines::path`); the stall.
    #[inline(always)]
    pub(super) fn path_lines(&mut self, h: usize, core: usize, path: Path, q: usize) -> Duration {
        let hs = &mut self.hosts[h];
        hs.lines.path(&self.cc, &self.topo, &mut hs.cache, path, q, self.topo.cpu(core as u16))
    }

    /// CPU cost of handling one ring entry of queue `q` in the bottom half:
    /// reaping transmit completions (and, with `host.tx_softirq`, their
    /// skbs' destructors: `poll_dtors`), or a received frame's driver and
    /// handler work (`handler_cost`, beside the handler) or the kernel
    /// echo's.
    pub(super) fn entry_cost(&mut self, now: Instant, h: usize, core: usize, q: u8, entry: RingEntry) -> Duration {
        match entry {
            RingEntry::TxDone(n) if self.c.tx_softirq => {
                self.reap_cost(now, h, core, n) + self.poll_dtors(h, core, q as usize)
            }
            RingEntry::TxDone(n) => self.reap_cost(now, h, core, n),
            RingEntry::Rx(frame) => {
                if self.hosts[h].echoes_at(crate::config::EchoAt::Kernel) {
                    return self.kernel_echo_cost(now, h, core, frame);
                }
                self.handler_cost(h, core, frame)
            }
        }
    }
}
