//! The kernel on the cores: the kernel work items (hard IRQ, NAPI polls
//! with their budget, re-arming or deferring the interrupt, serving pull
//! replies, the NI clock's signal), an interrupt's arrival, the dispatch
//! that picks what a core runs next (kernel work before the application,
//! preemption), what each item costs, including the send-path state shared
//! between cores (`tx_touch`), and the events a core's segments schedule.
//!
//! This module owns the work items and the world's side of running them:
//! pricing (with the scenario's costs and the cache model), frames, pull
//! replies, processes and events. The cores' own state and the decisions
//! that read only it (the kernel queue, what a core runs, segment numbers,
//! idle and sleep bookkeeping, the wake-up cost) are `crate::host::core`'s,
//! generic over the work item: `KWork` stays here because its items name
//! the world's frames, pull replies and processes, and `Core` and `Cur`
//! name the host's types with it. It does not own what a handled frame does
//! nor its price (`handler`, `handler_cost`), nor what the library runs
//! (`crate::library`).

use super::{Ev, RxBy, World};
use crate::engine::EventQueue;
use crate::host::Segment;
use crate::library::PState;
use crate::nic::RingEntry;
use crate::time::{Duration, Instant};

/// Kernel work queued on a core (runs before the application).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KWork {
    /// Hard-IRQ entry for queue `q`.
    Irq {
        q: u8,
    },
    /// Split claims (`tx_reap = "hard-irq"`): the hard handler alone, which
    /// reaps transmit completions, re-arms the interrupt claim and, if the
    /// interrupt reported received frames (`rx`), schedules NAPI.
    HardIrq {
        q: u8,
        rx: bool,
    },
    /// NAPI poll of queue `q` with `budget` packets left in this poll.
    Napi {
        q: u8,
        budget: u16,
    },
    /// One ring entry being handled by the bottom half (set when started):
    /// a received frame, or `n` transmit completions (`RingEntry` spelled
    /// out, which keeps this type in eight bytes: see `Ev`).
    EntryRx {
        q: u8,
        budget: u16,
        frame: u32,
    },
    EntryTxDone {
        q: u8,
        budget: u16,
        n: u32,
    },
    /// napi_complete + re-arm of the interrupt.
    Rearm {
        q: u8,
    },
    /// napi_complete with the interrupt kept masked: a gro_flush_timeout
    /// timer will re-poll (napi_defer_hard_irqs).
    Defer {
        q: u8,
    },
    /// The hrtimer interrupt of a deferred NAPI: entry, then a poll.
    TimerNapi {
        q: u8,
    },
    /// Sending the next pull reply of a pull request being served.
    PullReply {
        serve: u32,
    },
    /// An NI clock interrupt for process `p`: the hard IRQ and the signal
    /// that runs its library (`clock`).
    Signal {
        p: u16,
    },
}

const _: () = assert!(std::mem::size_of::<KWork>() == 8);

/// The cores of a host, running this module's work items
/// (`crate::host::core`).
pub(crate) type Core = crate::host::Core<KWork>;
/// What a core is doing.
type Cur = crate::host::Cur<KWork>;

// A core's front queue slot holds an item in eight bytes.
const _: () = assert!(std::mem::size_of::<Option<KWork>>() == 8);

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
        let w = if hs.nic.queues[q as usize].split_claims() { KWork::HardIrq { q, rx } } else { KWork::Irq { q } };
        hs.cores[core].kq.push_front(w);
        self.kick(now, h, core);
    }

    /// The gro_flush_timeout of a NAPI deferred on `core` expired
    /// (`Ev::NapiTimer`): the hrtimer interrupt re-polls queue `q`.
    pub(super) fn napi_timer(&mut self, now: Instant, h: usize, q: u8, core: usize) {
        self.hosts[h].cores[core].kq.push_back(KWork::TimerNapi { q });
        self.kick(now, h, core);
    }

    /// New kernel work was queued on `core`: preempt the application if it
    /// is running a segment, then dispatch.
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

    /// Computes the cost of a kernel work item and the item the core then
    /// works on (the caller marks the core busy with it); `None` if the item
    /// turned out to have nothing to do.
    pub(super) fn start_kernel(&mut self, now: Instant, h: usize, core: usize, w: KWork) -> Option<(Duration, KWork)> {
        if let KWork::Irq { .. } | KWork::Napi { .. } | KWork::TimerNapi { .. } = w {
            // The poll takes a frame or restocks: room for a frame waiting
            // at a stopped link (`nic.flow_control`)?
            self.flow_kick(now, h);
        }
        let at = self.topo.cpu(core as u16);
        let c = &self.c;
        let (cost, w) = match w {
            KWork::Irq { q } | KWork::Napi { q, .. } | KWork::TimerNapi { q } => {
                let hs = &mut self.hosts[h];
                // The hard IRQ schedules NAPI, which runs right after it on
                // this core: one work item covers both (one event fewer).
                let (mut cost, mut budget) = match w {
                    KWork::Napi { budget, .. } => (Duration::ZERO, budget),
                    KWork::TimerNapi { .. } => (c.host.irq_entry, c.napi_budget),
                    _ => {
                        hs.irq_handled += 1;
                        (c.host.irq_entry, c.napi_budget)
                    }
                };
                if budget == 0 {
                    // Budget exhausted: the poll yields and is rescheduled.
                    hs.nic.queues[q as usize].restock();
                    hs.cores[core].kq.push_back(KWork::Napi { q, budget: c.napi_budget });
                    return None;
                }
                if budget == c.napi_budget {
                    cost += c.host.napi_poll
                        + self.cc.access(
                            &self.topo,
                            &mut hs.cache,
                            &mut hs.napi_objs[q as usize],
                            at,
                            crate::host::Side::Kernel,
                            c.cache.napi_lines,
                        );
                }
                let qu = &mut hs.nic.queues[q as usize];
                match qu.take() {
                    None => {
                        // napi_complete_done: defer (a gro_flush_timeout
                        // timer re-polls) or re-arm.
                        if qu.napi_poll_empty(budget < c.napi_budget, c.defer_hard_irqs, !c.gro_flush.is_zero()) {
                            (cost, KWork::Defer { q })
                        } else {
                            (cost + c.host.irq_rearm, KWork::Rearm { q })
                        }
                    }
                    Some(entry) => {
                        budget -= 1;
                        // The end of the driver's work on a received frame
                        // comes after its event is posted (`Core::tail`).
                        let e = self.entry_cost(now, h, core, entry);
                        cost += match entry {
                            RingEntry::Rx(_) => e.saturating_sub(self.c.host.driver_rx_tail),
                            RingEntry::TxDone(_) => e,
                        };
                        let w = match entry {
                            RingEntry::Rx(frame) => KWork::EntryRx { q, budget, frame },
                            RingEntry::TxDone(n) => KWork::EntryTxDone { q, budget, n },
                        };
                        (cost, w)
                    }
                }
            }
            KWork::HardIrq { q, .. } => {
                // myri10ge_intr: reap every transmit completion reported so far.
                let hs = &mut self.hosts[h];
                hs.irq_handled += 1;
                let n = hs.nic.queues[q as usize].take_tx_done();
                let reap = if n > 0 { self.reap_cost(now, h, core, n) } else { Duration::ZERO };
                (self.c.host.irq_entry + reap, w)
            }
            KWork::EntryRx { .. } | KWork::EntryTxDone { .. } | KWork::Rearm { .. } | KWork::Defer { .. } => {
                unreachable!("queued only as Napi")
            }
            KWork::PullReply { serve } => {
                if !self.pulls.serves[serve as usize].live {
                    return None;
                }
                let send = self.c.host.driver_tx + self.c.nic.doorbell;
                (send + self.tx_touch(now, h, core, send), w)
            }
            KWork::Signal { p } => (self.signal_cost(h, p as usize), w),
        };
        Some((cost, w))
    }

    /// `finish_kernel` for the rare zero-cost items of `dispatch_at`: kept
    /// out of line there, inlined in `core_done` (every kernel segment).
    #[inline(never)]
    pub(super) fn finish_kernel_out(&mut self, now: Instant, h: usize, core: usize, w: KWork) {
        self.finish_kernel(now, h, core, w);
    }

    #[inline(always)]
    pub(super) fn finish_kernel(&mut self, now: Instant, h: usize, core: usize, w: KWork) {
        match w {
            KWork::EntryRx { q, budget, frame } => {
                let cs = &mut self.hosts[h].cores[core];
                cs.kq.push_front(KWork::Napi { q, budget });
                cs.tail = self.c.host.driver_rx_tail;
                self.handle_frame(now, h, RxBy::Core(core), frame);
            }
            KWork::EntryTxDone { q, budget, .. } => {
                self.hosts[h].cores[core].kq.push_front(KWork::Napi { q, budget });
            }
            KWork::Rearm { q } => {
                let out = self.hosts[h].nic.queues[q as usize].napi_done(now);
                self.nic_outcome(now, h, q as usize, out);
            }
            KWork::Defer { q } => {
                let at = now + self.c.gro_flush;
                self.q.push(at, h as u32, Ev::NapiTimer { host: h as u16, q, core: core as u8 });
            }
            KWork::PullReply { serve } => self.send_pull_reply(now, h, RxBy::Core(core), serve),
            KWork::Signal { p } => self.signal_done(now, h, p as usize),
            KWork::HardIrq { q, rx } => {
                // put_be32(htonl(3), ss->irq_claim + 1), then the softirq.
                let out = self.hosts[h].nic.queues[q as usize].rearm_claim(now);
                self.nic_outcome(now, h, q as usize, out);
                if rx {
                    let budget = self.c.napi_budget;
                    self.hosts[h].cores[core].kq.push_front(KWork::Napi { q, budget });
                }
            }
            KWork::Irq { .. } | KWork::Napi { .. } | KWork::TimerNapi { .. } => {
                unreachable!("converted to Entry/Rearm/Defer when started")
            }
        }
    }

    /// Reaping `n` transmit completions on core `core`: freeing the
    /// skbs and touching the send-path state shared with the sender.
    pub(super) fn reap_cost(&mut self, now: Instant, h: usize, core: usize, n: u32) -> Duration {
        let free = self.c.host.tx_done.times(n as u64);
        free + self.tx_touch(now, h, core, free)
    }

    /// CPU cost of handling one ring entry in the bottom half: reaping
    /// transmit completions, or a received frame's driver and handler work
    /// (`handler_cost`, beside the handler) or the kernel echo's.
    pub(super) fn entry_cost(&mut self, now: Instant, h: usize, core: usize, entry: RingEntry) -> Duration {
        match entry {
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
