//! The kernel's receive path of one host, one component per host
//! ([`RxPath`], its fields private): the hard IRQ, the NAPI poll of a
//! receive queue with its budget, napi_complete's re-arm or deferral
//! (napi_defer_hard_irqs with a gro_flush_timeout timer), the split
//! claims' hard handler (`tx_reap = "hard-irq"`), the Open-MX receive
//! handler (`handler`: a frame's price and the handler's [`Verdict`] on
//! it), what each of these costs (irq_entry, napi_poll with the NAPI
//! state's cache lines, irq_rearm), and the host's interrupt and frame
//! counters.
//!
//! The interface is small, in the library's style (`crate::library`): the
//! world calls it with a context ([`Cx`]: the time, the costs, the cache
//! model, the receive queue the item works on) and it answers with what it
//! wants done, as a value the world routes: [`Start`] when a work item
//! begins (its price, or the ring entry whose driver and handler work the
//! world prices, or a poll that yields), [`Done`] when it ends (the next
//! item of the poll on the same core, a received frame to hand to the
//! Open-MX handler, the queue's interrupt outcome, a NAPI timer). Its
//! entry points:
//!
//! * [`RxPath::irq`]: the work an interrupt of a queue queues on its core;
//! * [`RxPath::napi_timer`]: the work a deferred NAPI's timer queues;
//! * [`RxPath::start`] and [`RxPath::entry_cost`]: a work item begins;
//! * [`RxPath::finish`]: it ends;
//! * [`handler_price`] and [`RxPath::handle`]: a received frame's driver
//!   and handler work, and what the handler makes of it.
//!
//! It does not own the cores, their queues and dispatch (`crate::host::core`
//! and the world's `sim/kernel.rs`), the events, nor where a verdict goes
//! (the world routes it: the library's ring, the drivers' pulls), nor the
//! queue's own decisions (`crate::nic`).

use crate::costs::Costs;
use crate::host::{CacheCosts, CacheStats, Obj, ObjClass, Side, Topology};
use crate::nic::{Outcome, RingEntry, RxQueue};
use crate::time::{Duration, Instant};

/// Kernel work queued on a core (runs before the application).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KWork {
    /// Hard-IRQ entry for queue `q`.
    Irq {
        q: u8,
    },
    /// Threaded NAPI: the interrupt of queue `q` (or, `timer`, a deferred
    /// NAPI's hrtimer interrupt) wakes the queue's NAPI kernel thread
    /// instead of polling after itself (`____napi_schedule`:
    /// `wake_up_process(napi->thread)` when the instance is threaded;
    /// net/core/dev.c). The world places the thread ([`Done::Wake`]).
    IrqThread {
        q: u8,
        timer: bool,
    },
    /// Threaded NAPI: queue `q`'s kernel thread runs its poll
    /// (`napi_threaded_poll`), after the switch into it: a poll with a
    /// full budget, which goes on as `Napi` on the thread's core, looping
    /// while the budget is spent (`napi_threaded_poll_loop`: repoll).
    ThreadNapi {
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
    /// out, which keeps this type in eight bytes: see `sim::Ev`).
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
    /// Sending the next pull reply of a pull request being served (the
    /// driver's, `sim/pull.rs`).
    PullReply {
        serve: u32,
    },
    /// An NI clock interrupt for process `p`: the hard IRQ and the signal
    /// that runs its library (`sim/clock.rs`).
    Signal {
        p: u16,
    },
    /// The NET_TX softirq the hard IRQ raised on this core: it frees the
    /// reaped skbs and runs their Open-MX destructors (`net_tx`, priced
    /// and ended by the world's `sim/net_tx.rs`).
    NetTx,
    /// The kernel's periodic tick on this core (`sim/tick.rs`).
    Tick,
}

const _: () = assert!(std::mem::size_of::<KWork>() == 8);
// A core's front queue slot holds an item in eight bytes.
const _: () = assert!(std::mem::size_of::<Option<KWork>>() == 8);

impl KWork {
    /// The item polls its queue's ring when it starts (a frame may then
    /// enter from a stopped link first: `nic.flow_control`).
    #[inline(always)]
    pub(crate) fn polls(self) -> bool {
        matches!(self, KWork::Irq { .. } | KWork::Napi { .. } | KWork::TimerNapi { .. } | KWork::ThreadNapi { .. })
    }

    /// The receive queue of an item of the receive path; `None` for the
    /// driver's pull replies, the NI clock's signal and NET_TX (the world's).
    #[inline(always)]
    pub(crate) fn rx_queue(self) -> Option<u8> {
        match self {
            KWork::Irq { q }
            | KWork::IrqThread { q, .. }
            | KWork::ThreadNapi { q }
            | KWork::HardIrq { q, .. }
            | KWork::Napi { q, .. }
            | KWork::EntryRx { q, .. }
            | KWork::EntryTxDone { q, .. }
            | KWork::Rearm { q }
            | KWork::Defer { q }
            | KWork::TimerNapi { q } => Some(q),
            KWork::PullReply { .. } | KWork::Signal { .. } | KWork::NetTx | KWork::Tick => None,
        }
    }
}

/// What the receive path reads for one call, made by the world.
pub(crate) struct Cx<'a> {
    pub now: Instant,
    pub c: &'a Costs,
    pub cc: &'a CacheCosts,
    pub topo: &'a Topology,
    /// The host's cache counters.
    pub cache: &'a mut CacheStats,
    /// The receive queue the work item works on.
    pub queue: &'a mut RxQueue,
}

/// A work item began ([`RxPath::start`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Start {
    /// The core works on `w` for `cost`.
    Run(Duration, KWork),
    /// The poll took `entry`: the core works on `w` for `cost` plus the
    /// entry's driver and handler work, which the world prices and hands
    /// to [`RxPath::entry_cost`].
    Entry { cost: Duration, entry: RingEntry, w: KWork },
    /// The hard handler reaps `n` transmit completions (the world prices
    /// the reap when `n` > 0): the core works on `w` for `cost` plus that.
    Reap { cost: Duration, n: u32, w: KWork },
    /// The poll's budget is spent: it yields, and `w` goes to the back of
    /// the core's queue (nothing runs now).
    Yield(KWork),
}

/// A work item ended ([`RxPath::finish`]): what the world does, in this
/// order.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Done {
    /// The bottom half took received frame `frame`: the poll goes on with
    /// `next` at the front of the core's queue, the driver's last work on
    /// the frame (`tail`) is the start of the next segment, and the frame
    /// goes to the Open-MX handler.
    Frame { next: KWork, tail: Duration, frame: u32 },
    /// The poll goes on with `next` at the front of the core's queue.
    Next(KWork),
    /// The queue's interrupt `out` (a re-arm, `nic::RxQueue`), then, if
    /// any, `next` at the front of the core's queue. `claim`: the claim
    /// was written but reaches the NIC only after `nic.claim_latency_ns`
    /// (`Some(true)`: the receive claim, `Some(false)`: the interrupt
    /// claim); the world applies it then, and `out` is empty.
    Irq { out: Outcome, next: Option<KWork>, claim: Option<bool> },
    /// A deferred NAPI's gro_flush_timeout timer at `at`.
    Timer { at: Instant },
    /// Threaded NAPI: the hard IRQ woke queue `q`'s kernel thread, which
    /// the world places on a core (`crate::host::Core::wake_target`).
    Wake { q: u8 },
}

/// The kernel's receive path of one host (see the module's documentation).
pub(crate) struct RxPath {
    /// NAPI/driver receive state, one per queue.
    napi_objs: Vec<Obj>,
    /// Interrupts the NIC raised to this host, those that report received
    /// frames (schedule NAPI), and hard IRQs handled.
    irq_raised: u64,
    irq_rx: u64,
    irq_handled: u64,
    /// Frames the handler (or the host's kernel echo) took.
    rx_frames: u64,
    /// Threaded NAPI: the core each queue's kernel thread last ran on (the
    /// scheduler's `prev_cpu`; at first, none: `u16::MAX`).
    thread_core: Vec<u16>,
}

impl RxPath {
    pub(crate) fn new(queues: usize) -> Self {
        RxPath {
            napi_objs: vec![Obj::new(ObjClass::Napi); queues],
            irq_raised: 0,
            irq_rx: 0,
            irq_handled: 0,
            rx_frames: 0,
            thread_core: vec![u16::MAX; queues],
        }
    }

    /// Threaded NAPI: the core queue `q`'s kernel thread last ran on, if
    /// it has run.
    pub(crate) fn thread_core(&self, q: u8) -> Option<u16> {
        let c = self.thread_core[q as usize];
        (c != u16::MAX).then_some(c)
    }

    /// Threaded NAPI: queue `q`'s kernel thread is placed on `core`.
    pub(crate) fn thread_placed(&mut self, q: u8, core: u16) {
        self.thread_core[q as usize] = core;
    }

    /// Interrupts raised to this host.
    pub(crate) fn irq_raised(&self) -> u64 {
        self.irq_raised
    }

    /// Interrupts raised that report received frames.
    pub(crate) fn irq_rx(&self) -> u64 {
        self.irq_rx
    }

    /// Hard IRQs handled.
    pub(crate) fn irq_handled(&self) -> u64 {
        self.irq_handled
    }

    /// Received frames handled.
    pub(crate) fn rx_frames(&self) -> u64 {
        self.rx_frames
    }

    /// The NIC raised an interrupt (`rx`: it reports received frames).
    #[inline(always)]
    pub(crate) fn raised(&mut self, rx: bool) {
        self.irq_rx += rx as u64;
        self.irq_raised += 1;
    }

    /// A received frame was handled (by the handler or the kernel echo).
    #[inline(always)]
    pub(crate) fn frame_handled(&mut self) {
        self.rx_frames += 1;
    }

    /// The work an interrupt of queue `q` queues at the front of its core
    /// (`rx`: it reports received frames; `split`: the queue's claims are
    /// split, `tx_reap = "hard-irq"`; `threaded`: its NAPI runs in a
    /// kernel thread, which the hard IRQ wakes).
    #[inline(always)]
    pub(crate) fn irq(q: u8, rx: bool, split: bool, threaded: bool) -> KWork {
        if split {
            KWork::HardIrq { q, rx }
        } else if threaded {
            KWork::IrqThread { q, timer: false }
        } else {
            KWork::Irq { q }
        }
    }

    /// The work a deferred NAPI's gro_flush_timeout timer queues at the
    /// back of its core: the hrtimer interrupt re-polls queue `q`, or
    /// (`threaded`) wakes its kernel thread.
    #[inline(always)]
    pub(crate) fn napi_timer(q: u8, threaded: bool) -> KWork {
        if threaded {
            KWork::IrqThread { q, timer: true }
        } else {
            KWork::TimerNapi { q }
        }
    }

    /// Work item `w` of the receive path begins on `core` (the hard IRQ
    /// schedules NAPI, which runs right after it on this core: one item
    /// covers both, one event fewer).
    #[inline(always)]
    pub(crate) fn start(&mut self, cx: &mut Cx<'_>, core: u16, w: KWork) -> Start {
        let c = cx.c;
        match w {
            KWork::IrqThread { timer, .. } => {
                // The handler wakes the thread: no poll on this core.
                self.irq_handled += !timer as u64;
                Start::Run(c.host.irq_entry + c.host.napi_thread_wake, w)
            }
            KWork::Irq { q } | KWork::Napi { q, .. } | KWork::TimerNapi { q } | KWork::ThreadNapi { q } => {
                let (mut cost, mut budget) = match w {
                    KWork::Napi { budget, .. } => (Duration::ZERO, budget),
                    KWork::TimerNapi { .. } => (c.host.irq_entry, c.napi_budget),
                    KWork::ThreadNapi { .. } => (c.host.napi_thread_switch, c.napi_budget),
                    _ => {
                        self.irq_handled += 1;
                        (c.host.irq_entry, c.napi_budget)
                    }
                };
                if budget == 0 {
                    // Budget exhausted: the poll yields and is rescheduled.
                    cx.queue.restock();
                    return Start::Yield(KWork::Napi { q, budget: c.napi_budget });
                }
                if budget == c.napi_budget {
                    let at = cx.topo.cpu(core);
                    let obj = &mut self.napi_objs[q as usize];
                    cost +=
                        c.host.napi_poll + cx.cc.access(cx.topo, cx.cache, obj, at, Side::Kernel, c.cache.napi_lines);
                }
                match cx.queue.take() {
                    None => {
                        // napi_complete_done: defer (a gro_flush_timeout
                        // timer re-polls) or re-arm.
                        let did_work = budget < c.napi_budget;
                        if cx.queue.napi_poll_empty(did_work, c.defer_hard_irqs, !c.gro_flush.is_zero()) {
                            Start::Run(cost, KWork::Defer { q })
                        } else {
                            Start::Run(cost + c.host.irq_rearm, KWork::Rearm { q })
                        }
                    }
                    Some(entry) => {
                        budget -= 1;
                        let w = match entry {
                            RingEntry::Rx(frame) => KWork::EntryRx { q, budget, frame },
                            RingEntry::TxDone(n) => KWork::EntryTxDone { q, budget, n },
                        };
                        Start::Entry { cost, entry, w }
                    }
                }
            }
            KWork::HardIrq { .. } => {
                // myri10ge_intr: reap every transmit completion reported so far.
                self.irq_handled += 1;
                Start::Reap { cost: c.host.irq_entry, n: cx.queue.take_tx_done(), w }
            }
            KWork::EntryRx { .. } | KWork::EntryTxDone { .. } | KWork::Rearm { .. } | KWork::Defer { .. } => {
                unreachable!("queued only as Napi")
            }
            KWork::PullReply { .. } | KWork::Signal { .. } | KWork::NetTx | KWork::Tick => {
                unreachable!("not the receive path's")
            }
        }
    }

    /// The price of a poll's item ([`Start::Entry`]) given its entry's
    /// driver and handler work `e`: the end of the driver's work on a
    /// received frame comes after its event is posted (it opens the next
    /// segment: [`Done::Frame`]'s `tail`).
    #[inline(always)]
    pub(crate) fn entry_cost(c: &Costs, cost: Duration, entry: RingEntry, e: Duration) -> Duration {
        cost + match entry {
            RingEntry::Rx(_) => e.saturating_sub(c.host.driver_rx_tail),
            RingEntry::TxDone(_) => e,
        }
    }

    /// Work item `w` of the receive path ended.
    #[inline(always)]
    pub(crate) fn finish(&mut self, cx: &mut Cx<'_>, w: KWork) -> Done {
        let c = cx.c;
        match w {
            KWork::EntryRx { q, budget, frame } => {
                Done::Frame { next: KWork::Napi { q, budget }, tail: c.host.driver_rx_tail, frame }
            }
            KWork::EntryTxDone { q, budget, .. } => Done::Next(KWork::Napi { q, budget }),
            // myri10ge_poll: put_be32(htonl(3), ss->irq_claim), a posted
            // PIO write the firmware acts on `claim_latency` later.
            KWork::Rearm { .. } if !c.nic.claim_latency.is_zero() => {
                Done::Irq { out: Outcome::default(), next: None, claim: Some(true) }
            }
            KWork::Rearm { .. } => Done::Irq { out: cx.queue.napi_done(cx.now), next: None, claim: None },
            KWork::Defer { .. } => Done::Timer { at: cx.now + cx.queue.gro_flush(c.gro_flush) },
            KWork::HardIrq { q, rx } => {
                // put_be32(htonl(3), ss->irq_claim + 1), then the softirq.
                let next = rx.then_some(KWork::Napi { q, budget: c.napi_budget });
                if c.nic.claim_latency.is_zero() {
                    Done::Irq { out: cx.queue.rearm_claim(cx.now), next, claim: None }
                } else {
                    Done::Irq { out: Outcome::default(), next, claim: Some(false) }
                }
            }
            KWork::IrqThread { q, .. } => Done::Wake { q },
            KWork::Irq { .. } | KWork::Napi { .. } | KWork::TimerNapi { .. } | KWork::ThreadNapi { .. } => {
                unreachable!("converted to Entry/Rearm/Defer when started")
            }
            KWork::PullReply { .. } | KWork::Signal { .. } | KWork::NetTx | KWork::Tick => {
                unreachable!("not the receive path's")
            }
        }
    }
}

mod handler;
mod net_tx;
pub(crate) use handler::{price as handler_price, HandlerCx, RxBy, Verdict};
pub(crate) use net_tx::{NetTx, TxDtor};

#[cfg(test)]
mod tests;
