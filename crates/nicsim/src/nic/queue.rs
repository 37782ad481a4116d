//! A receive queue of the NIC: its ring of completed descriptors, its
//! interrupt line (masked from a raise until the host re-arms it, or held
//! while a busy poller suspends it), its coalescing policy, watchdog and
//! claims. Its state is private: its methods decide and return what the
//! world schedules (`Outcome`, `BusyPoll`).

use super::coalesce::{self, Coalescer, Decision, TimerCmd};
use super::suspend::Suspension;
use super::watchdog::{Expiry, Watchdog};
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// Linux busy-poll budget, a setting the scenario reads (`crate::config`).
pub use crate::config::BUSY_POLL_BUDGET;

/// Work the bottom half takes from a queue: a received frame, or all the
/// transmit completions reported so far (reaped together, after the
/// received frames, as myri10ge reaps its send ring).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingEntry {
    Rx(u32),
    TxDone(u32),
}

/// The bit of a ring entry that says its frame took a buffer of the small
/// ring (frame slab ids stay below bit 29, where the buffer count sits).
pub const SMALL_RING_BIT: u32 = 1 << 31;

/// Where a ring entry keeps the big-ring buffers its frame fills, less one
/// (bits 29 and 30: one to four pages).
const BUFS_SHIFT: u32 = 29;
const BUFS_MASK: u32 = 3 << BUFS_SHIFT;

/// Bytes of one big-ring buffer when a frame does not fit a smaller one:
/// myri10ge posts page-sized buffers (`MYRI10GE_ALLOC_SIZE`, one page at
/// `MYRI10GE_ALLOC_ORDER` 0) and `myri10ge_open` sets `big_bytes` to it once
/// `mtu + ETH_HLEN + VLAN_HLEN + MXGEFW_PAD` reaches half a page; a frame
/// longer than a buffer fills several, one ring entry each
/// (`myri10ge_rx_done`: `remainder -= MYRI10GE_ALLOC_SIZE`, `rx->cnt++`).
pub const BIG_BUFFER_BYTES: usize = 4096;

/// Bytes the firmware writes before a frame in its buffer (`MXGEFW_PAD`).
pub const MXGEFW_PAD: usize = 2;

/// One receive queue with its interrupt line.
pub struct RxQueue {
    /// Received frames (slab ids, [`SMALL_RING_BIT`] set for a frame in a
    /// small-ring buffer) in DMA-completion order: one completion ring, as
    /// myri10ge's `rx_done` serves both buffer rings.
    ring: VecDeque<u32>,
    /// Of `ring`, the frames in small-ring buffers, and the big-ring
    /// buffers the others fill.
    pub(super) small_in_ring: u32,
    pub(super) big_in_ring: u32,
    /// Buffers of the big and the small ring posted and not yet processed
    /// by the driver (myri10ge's `fill_cnt - cnt`): the NIC can fill those
    /// not already holding a frame.
    pub(super) posted: [u32; 2],
    /// Restock threshold (`nic.fill_thresh`; 0: restocked frame by frame)
    /// and ring size.
    fill_thresh: u32,
    ring_slots: u32,
    /// Transmit completions not yet reaped.
    tx_done: u32,
    policy: Box<dyn Coalescer>,
    /// The line is armed (not masked). With `split_claims` this is only the
    /// receive claim: received frames are reported (and NAPI scheduled) only
    /// while it is armed.
    irq_enabled: bool,
    /// myri10ge's two claims (`tx_reap = "hard-irq"`): `irq_enabled` is the
    /// receive claim (`irq_claim`, re-armed by napi_complete) and
    /// `irq_armed` the interrupt claim (`irq_claim + 1`, re-armed when the
    /// hard handler returns). Transmit completions interrupt whenever the
    /// interrupt claim is armed, even while the poll runs.
    split_claims: bool,
    irq_armed: bool,
    /// The policy asked for a raise while the line was masked.
    fire_wanted: bool,
    /// Received frames a transmit-only interrupt met in the ring (split
    /// claims, the receive claim masked by a poll under way): reported by
    /// no interrupt, they are owed to the receive claim's re-arm
    /// (`owe_rx`, `rearm`). `Some(true)`: the raise came from a marked
    /// frame's DMA, which raises at once.
    rx_owed: Option<bool>,
    /// The DMA completion being applied is a marked frame's.
    marked_now: bool,
    /// Generation of the policy timer; stale timer events carry an older one.
    timer_gen: u32,
    timer_at: Option<Instant>,
    interrupts: u64,
    /// NAPI is scheduled by an interrupt (from a raise that reports
    /// received frames until the re-arm, deferred re-polls included): a
    /// busy poller cannot take the queue.
    napi_sched: bool,
    /// Empty polls left before the interrupt is re-enabled
    /// (`napi_defer_hard_irqs`).
    defer_left: u32,
    /// The interrupt's suspension by a busy-polling application
    /// (`irq_suspend_timeout`, `suspend`).
    suspension: Suspension,
    /// The polling watchdog (`nic.watchdog_us` > 0): holds the policy's
    /// raises while the host may still poll the frames up (`watchdog`).
    watchdog: Option<Box<Watchdog>>,
    /// Frames the NIC put in the ring, and those the host took out of it
    /// (NAPI or a busy poll): the watchdog's view of the host's progress.
    delivered: u64,
    taken: u64,
    /// The busy poller's poll in progress (`busy_poll`): the process that
    /// polls, the ring entries its budget still lets it take, the budget
    /// (for `busy_poll_stop`'s poll) and where the poll is.
    busy_by: u16,
    busy_left: u16,
    busy_budget: u16,
    busy_phase: BusyPhase,
    /// The queue's own NAPI settings (`[[host.napi]]`, netdev-genl
    /// `napi-set`), which replace the host-wide ones its callers pass;
    /// `None`: the host's.
    napi: Option<QueueNapi>,
}

/// One NAPI instance's settings (netdev-genl `napi-set`, Linux 6.13+).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct QueueNapi {
    /// defer-hard-irqs.
    pub defer_hard_irqs: u32,
    /// gro-flush-timeout.
    pub gro_flush: Duration,
    /// irq-suspend-timeout.
    pub irq_suspend: Duration,
    /// threaded: the instance's poll runs in its kernel thread.
    pub threaded: bool,
}

/// Where a busy poll of a queue is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BusyPhase {
    /// None in progress.
    Off,
    /// The driver poll of `napi_busy_loop` (`rx`: it took a received
    /// frame, so the socket has data and the loop ends after it).
    Loop { rx: bool },
    /// The extra driver poll of `busy_poll_stop`.
    Stop,
}

/// One more step of a busy poll in progress ([`RxQueue::busy_poll_more`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusyStep {
    /// The poll takes `entry`; `poll`: the entry is the first of
    /// `busy_poll_stop`'s poll, which pays a driver poll of its own.
    Entry { entry: RingEntry, poll: bool },
    /// `busy_poll_stop`'s poll is over. `poll`: it found the ring empty
    /// and pays its driver poll here; `rearm`: it took fewer entries than
    /// its budget and `napi_complete_done` re-arms the interrupt (not while
    /// a suspension holds it); `napi`: it took its whole budget and NAPI is
    /// scheduled (`__busy_poll_stop`: `__napi_schedule`), on the poller's
    /// core.
    Stop { poll: bool, rearm: bool, napi: bool },
}

/// What a busy poll of a queue did ([`RxQueue::busy_poll`]).
#[derive(Clone, Copy, Debug)]
pub struct BusyPoll {
    /// The suspension's timer event to schedule.
    pub suspend_timer: Option<Instant>,
    /// The entry the poll took, if the ring held one.
    pub entry: Option<RingEntry>,
}

/// What the NIC must do after a policy decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Raise the interrupt now (the line was armed).
    pub raise: bool,
    /// The raise reports received frames: NAPI is scheduled by it (always,
    /// except for a transmit-only interrupt with split claims).
    pub rx: bool,
    /// Schedule a timer event at this instant with this generation.
    pub timer: Option<(Instant, u32)>,
}

impl Outcome {
    /// Fold a later step's outcome into this one: a raise (and whether it
    /// reports received frames) is kept once made; the later step's timer,
    /// if it wants one, replaces any earlier one (the policy re-armed it).
    fn merge(&mut self, later: Outcome) {
        self.raise |= later.raise;
        self.rx |= later.rx;
        if later.timer.is_some() {
            self.timer = later.timer;
        }
    }
}

impl RxQueue {
    pub fn new(policy: Box<dyn Coalescer>, ring_slots: usize, fill_thresh: u32) -> Self {
        RxQueue {
            ring: VecDeque::with_capacity(ring_slots.min(4096)),
            small_in_ring: 0,
            big_in_ring: 0,
            posted: [ring_slots as u32; 2],
            fill_thresh,
            ring_slots: ring_slots as u32,
            tx_done: 0,
            policy,
            irq_enabled: true,
            split_claims: false,
            irq_armed: true,
            fire_wanted: false,
            rx_owed: None,
            marked_now: false,
            timer_gen: 0,
            timer_at: None,
            interrupts: 0,
            napi_sched: false,
            defer_left: 0,
            suspension: Suspension::default(),
            watchdog: None,
            delivered: 0,
            taken: 0,
            busy_by: 0,
            busy_left: 0,
            busy_budget: 0,
            busy_phase: BusyPhase::Off,
            napi: None,
        }
    }

    /// myri10ge's two claims (`tx_reap = "hard-irq"`, see `split_claims`).
    pub fn with_split_claims(mut self, split: bool) -> Self {
        self.split_claims = split;
        self
    }

    /// The queue's own NAPI settings (`[[host.napi]]`).
    pub fn with_napi(mut self, napi: Option<QueueNapi>) -> Self {
        self.napi = napi;
        self
    }

    /// This queue's irq-suspend-timeout: its own, else the host's `host`.
    #[inline]
    fn irq_suspend(&self, host: Duration) -> Duration {
        self.napi.map_or(host, |n| n.irq_suspend)
    }

    /// Whether this queue's NAPI is threaded: its own setting, else the
    /// host's `host`.
    #[inline]
    pub fn threaded(&self, host: bool) -> bool {
        self.napi.map_or(host, |n| n.threaded)
    }

    /// This queue's gro-flush-timeout: its own, else the host's `host`.
    #[inline]
    pub fn gro_flush(&self, host: Duration) -> Duration {
        self.napi.map_or(host, |n| n.gro_flush)
    }

    /// The polling watchdog (`nic.watchdog_us` > 0).
    pub fn with_watchdog(mut self, watchdog: Option<Box<Watchdog>>) -> Self {
        self.watchdog = watchdog;
        self
    }

    /// Whether the line has two claims: the interrupt then runs a hard
    /// handler of its own before NAPI.
    #[inline]
    pub fn split_claims(&self) -> bool {
        self.split_claims
    }

    /// The queue's polling watchdog, if it has one (its counts).
    pub fn watchdog(&self) -> Option<&Watchdog> {
        self.watchdog.as_deref()
    }

    /// The coalescing delay the policy applies now, if it has one.
    pub fn coalescing_delay(&self) -> Option<Duration> {
        self.policy.current_delay()
    }

    /// The transmit completions' own adaptive delay now (TX DIM), if any.
    pub fn tx_coalescing_delay(&self) -> Option<Duration> {
        self.policy.current_tx_delay()
    }

    /// A frame for this queue reached the NIC (`marked`: it carries the
    /// latency-sensitive marker): the policy decides, and the outcome to
    /// schedule.
    #[inline]
    pub fn frame_arrived(&mut self, now: Instant, marked: bool) -> Outcome {
        let d = self.policy.on_arrival(now, marked);
        self.apply(now, d)
    }

    /// A received frame's DMA completed (`frame`, in a small-ring buffer
    /// or filling `bufs` big-ring ones): it enters the ring, the policy
    /// decides, and the watchdog's timer starts if it has one and none
    /// runs. The outcome, and the watchdog event to schedule (before the
    /// outcome's).
    #[inline]
    pub fn frame_delivered(
        &mut self,
        now: Instant,
        frame: u32,
        small: bool,
        bufs: u32,
        dc: coalesce::DmaCompletion,
    ) -> (Outcome, Option<(Instant, u32)>) {
        self.push_rx(frame, small, bufs);
        let d = self.policy.on_dma_complete(now, dc);
        self.marked_now = dc.marked;
        let out = self.apply(now, d);
        self.marked_now = false;
        let watchdog = if self.watchdog.is_some() { self.watchdog_delivered(now) } else { None };
        (out, watchdog)
    }

    /// A transmit completion of a frame of `bytes` reported on this
    /// queue's line (`other_pending`: DMA of other queues still under way):
    /// the policy decides, and the outcome to schedule.
    #[inline]
    pub fn tx_completion(&mut self, now: Instant, bytes: u32, other_pending: u32) -> Outcome {
        self.tx_completed();
        let d = self.policy.on_tx_complete(now, bytes, other_pending);
        self.apply(now, d)
    }

    /// Applies a policy decision: timer bookkeeping, masking, and the
    /// policy's reset on an actual raise. Returns what to schedule.
    #[inline]
    pub fn apply(&mut self, now: Instant, d: Decision) -> Outcome {
        let mut out = Outcome::default();
        self.apply_timer(d.timer, &mut out);
        if d.raise {
            // The watchdog holds a raise for received frames a process may
            // still poll up (transmit completions alone are not held).
            if let Some(w) = self.watchdog.as_deref_mut() {
                if !self.ring.is_empty() && !w.on_raise_wanted() {
                    return out;
                }
            }
            self.request_raise(now, &mut out);
        }
        out
    }

    /// The line raises now if it can, or remembers the raise.
    fn request_raise(&mut self, now: Instant, out: &mut Outcome) {
        // One claim: the line can fire while armed, and always reports
        // received frames. Split claims: the interrupt claim must be
        // armed and there must be something to report.
        let (can, rx) = if self.split_claims {
            let rx = self.irq_enabled && !self.ring.is_empty();
            (self.irq_armed && (rx || self.tx_done > 0), rx)
        } else {
            (self.irq_enabled, true)
        };
        if can {
            self.raise(now, rx, out);
        } else {
            self.fire_wanted = true;
        }
    }

    fn raise(&mut self, now: Instant, rx: bool, out: &mut Outcome) {
        if rx {
            self.irq_enabled = false;
            self.napi_sched = true;
        }
        self.irq_armed = !self.split_claims;
        self.fire_wanted = false;
        if rx {
            self.rx_owed = None;
        } else if !self.ring.is_empty() {
            self.owe_rx();
        }
        self.interrupts += 1;
        out.raise = true;
        out.rx = rx;
        if let Some(w) = self.watchdog.as_deref_mut() {
            w.on_irq_raised();
        }
        let d2 = self.policy.on_irq_raised(now);
        self.apply_timer(d2.timer, out);
    }

    /// A transmit-only interrupt (split claims, the receive claim still
    /// masked by a poll under way) reports none of the received frames in
    /// the ring, and the policy forgets them as it is told of the raise:
    /// they stay owed to the receive claim, reported after the poll's
    /// re-arm (`rearm`) if it left them there. myri10ge_poll (Linux 2.6.26)
    /// writes `irq_claim` after netif_rx_complete without looking at its
    /// rx_done ring again, and myri10ge_intr's netif_rx_schedule for
    /// `stats->valid & 1` is a no-op while that poll is scheduled: a
    /// completion written in between is reported only by the NIC
    /// interrupting again once the claim comes, never by the driver.
    #[cold]
    fn owe_rx(&mut self) {
        self.rx_owed = Some(self.rx_owed.unwrap_or(false) | self.marked_now);
    }

    /// The receive claim is re-armed with frames a transmit-only interrupt
    /// left owed (`owe_rx`): a marked one raises at once ([OMX-COAL]
    /// Algorithm 1); others are unreported frames again from now, for the
    /// policy's timer (or minimum gap, counted from that interrupt).
    #[cold]
    fn report_owed(&mut self, now: Instant, marked: bool, out: &mut Outcome) {
        if marked {
            self.request_raise(now, out);
            return;
        }
        let dc = coalesce::DmaCompletion { marked: false, bytes: 0, other_pending: 0 };
        let d = self.policy.on_dma_complete(now, dc);
        let o = self.apply(now, d);
        out.merge(o);
    }

    /// A frame's DMA into the ring completed: the watchdog's timer starts
    /// if it has one and none runs (the event to schedule).
    #[inline]
    pub fn watchdog_delivered(&mut self, now: Instant) -> Option<(Instant, u32)> {
        self.watchdog.as_deref_mut()?.on_delivered(now)
    }

    /// Whether the watchdog's event of generation `gen` is its running
    /// timer's expiry: the NIC then fetches the host's progress
    /// (`super::Nic::watchdog_timer`), back when [`RxQueue::watchdog_fetch`]
    /// is told.
    pub fn watchdog_expires(&self, gen: u32) -> bool {
        self.watchdog.as_deref().is_some_and(|w| w.expires(gen))
    }

    /// The watchdog's fetch of the host's progress is back at `back`: its
    /// event then (this instant, this generation).
    pub fn watchdog_fetch(&mut self, back: Instant) -> Option<(Instant, u32)> {
        Some(self.watchdog.as_deref_mut()?.fetch(back))
    }

    /// The watchdog's event of generation `gen` at `now`, its fetch's
    /// return (any other is stale): the interrupt it lets out when the
    /// host made no progress (its flag always reads enabled: a Linux host
    /// never masks the line from user space), and its next event (at this
    /// instant, this generation). When the host picked every frame up, a
    /// raise the policy asked for is dropped and the policy is told the
    /// host saw every frame (a re-arm with none pending). Kept apart from
    /// [`Outcome`], which every frame's path returns.
    pub fn watchdog_fetched(&mut self, now: Instant, gen: u32) -> (Outcome, Option<(Instant, u32)>) {
        let Some(w) = self.watchdog.as_deref_mut() else { return (Outcome::default(), None) };
        match w.on_fetched(now, gen, true, self.delivered, self.taken) {
            Expiry::Stale | Expiry::Drained { held: false } => (Outcome::default(), None),
            Expiry::Arm(at, gen) => (Outcome::default(), Some((at, gen))),
            Expiry::Raise(at, gen) => {
                let mut out = Outcome::default();
                self.request_raise(now, &mut out);
                (out, Some((at, gen)))
            }
            Expiry::Drained { held: true } => {
                let d = self.policy.on_rearm(now, 0);
                (self.apply(now, d), None)
            }
        }
    }

    /// Split claims: the hard handler returned and re-armed the interrupt
    /// claim; a raise the policy wanted meanwhile happens now.
    pub fn rearm_claim(&mut self, now: Instant) -> Outcome {
        self.irq_armed = true;
        if self.fire_wanted && (self.tx_done > 0 || (self.irq_enabled && !self.ring.is_empty())) {
            self.fire_wanted = false;
            let mut out = Outcome::default();
            self.request_raise(now, &mut out);
            return out;
        }
        Outcome::default()
    }

    fn apply_timer(&mut self, cmd: TimerCmd, out: &mut Outcome) {
        match cmd {
            TimerCmd::Keep => {}
            TimerCmd::Cancel => {
                self.timer_gen = self.timer_gen.wrapping_add(1);
                self.timer_at = None;
                out.timer = None;
            }
            TimerCmd::Arm(at) => {
                if self.timer_at != Some(at) {
                    self.timer_gen = self.timer_gen.wrapping_add(1);
                    self.timer_at = Some(at);
                    out.timer = Some((at, self.timer_gen));
                }
            }
        }
    }

    /// The policy timer of generation `gen` fired: what the policy's
    /// decision asks for, or `None` for a timer cancelled or re-armed since.
    #[inline]
    pub fn coal_timer(&mut self, now: Instant, gen: u32) -> Option<Outcome> {
        if self.timer_gen != gen || self.timer_at.is_none() {
            return None;
        }
        self.timer_at = None;
        let d = self.policy.on_timer(now);
        Some(self.apply(now, d))
    }

    /// A frame's DMA completed into a buffer of the small ring, or into
    /// `bufs` (1 to 4) buffers of the big one.
    pub fn push_rx(&mut self, frame: u32, small: bool, bufs: u32) {
        debug_assert!(frame >> BUFS_SHIFT == 0, "frame slab id {frame} too large");
        debug_assert!((1..=4).contains(&bufs), "{bufs} buffers");
        self.delivered += 1;
        if small {
            self.small_in_ring += 1;
            self.ring.push_back(frame | SMALL_RING_BIT);
        } else {
            self.big_in_ring += bufs;
            self.ring.push_back(frame | (bufs - 1) << BUFS_SHIFT);
        }
    }

    /// The end of a poll: a ring with fewer than `fill_thresh` buffers
    /// posted and unprocessed is posted whole again (myri10ge restocks at the
    /// end of `myri10ge_clean_rx_done`).
    pub fn restock(&mut self) {
        for posted in &mut self.posted {
            if *posted < self.fill_thresh {
                *posted = self.ring_slots;
            }
        }
    }

    /// Next work for the bottom half: received frames first.
    pub fn take(&mut self) -> Option<RingEntry> {
        if let Some(f) = self.ring.pop_front() {
            let small = f & SMALL_RING_BIT != 0;
            let bufs = if small { 1 } else { ((f & BUFS_MASK) >> BUFS_SHIFT) + 1 };
            if small {
                self.small_in_ring -= 1;
            } else {
                self.big_in_ring -= bufs;
            }
            if self.fill_thresh > 0 {
                self.posted[small as usize] -= bufs;
            }
            self.taken += 1;
            Some(RingEntry::Rx(f & !(SMALL_RING_BIT | BUFS_MASK)))
        } else if self.tx_done > 0 && !self.split_claims {
            Some(RingEntry::TxDone(std::mem::take(&mut self.tx_done)))
        } else {
            None
        }
    }

    /// A transmit completion the NIC reported on this queue's line.
    #[inline]
    pub fn tx_completed(&mut self) {
        self.tx_done += 1;
    }

    /// Takes the transmit completions not yet reaped (the hard handler's
    /// reap under split claims).
    #[inline]
    pub fn take_tx_done(&mut self) -> u32 {
        std::mem::take(&mut self.tx_done)
    }

    /// Entries waiting for the host.
    pub fn pending(&self) -> u32 {
        self.ring.len() as u32 + self.tx_done
    }

    /// Whether NAPI is scheduled by an interrupt (a busy poller cannot take
    /// the queue meanwhile).
    #[inline]
    pub fn napi_scheduled(&self) -> bool {
        self.napi_sched
    }

    /// A NAPI poll found the ring empty (napi_complete_done,
    /// net/core/dev.c): the rings are restocked, a poll that did work
    /// (`did_work`) reloads the `defer_hard_irqs` count, and while that
    /// count lasts (and a gro_flush_timeout is set, `gro_flush`) the
    /// interrupt stays masked and a timer re-polls instead. True to defer,
    /// false to re-arm ([`RxQueue::napi_done`]). Both settings are the
    /// host's, or the queue's own if it has them.
    #[inline]
    pub fn napi_poll_empty(&mut self, did_work: bool, defer_hard_irqs: u32, gro_flush: bool) -> bool {
        let (defer_hard_irqs, gro_flush) = match self.napi {
            Some(n) => (n.defer_hard_irqs, !n.gro_flush.is_zero()),
            None => (defer_hard_irqs, gro_flush),
        };
        self.restock();
        if did_work {
            self.defer_left = defer_hard_irqs;
        }
        if self.defer_left > 0 && gro_flush {
            self.defer_left -= 1;
            true
        } else {
            false
        }
    }

    /// The poll is complete and NAPI unscheduled: the interrupt is re-armed
    /// ([`RxQueue::rearm`]), unless a busy poller holds it suspended.
    pub fn napi_done(&mut self, now: Instant) -> Outcome {
        self.napi_sched = false;
        if self.suspension.is_active() {
            Outcome::default()
        } else {
            self.rearm(now)
        }
    }

    /// The host re-enabled the interrupt after draining the ring.
    pub fn rearm(&mut self, now: Instant) -> Outcome {
        self.irq_enabled = true;
        let pending = self.pending();
        let d = self.policy.on_rearm(now, pending);
        let mut out = self.apply(now, d);
        if let Some(marked) = self.rx_owed.take() {
            if !out.raise && !self.ring.is_empty() {
                self.report_owed(now, marked, &mut out);
            }
        }
        if !out.raise && self.fire_wanted {
            self.fire_wanted = false;
            if pending > 0 {
                let mut o2 = Outcome::default();
                self.request_raise(now, &mut o2);
                out.merge(o2);
            }
        }
        out
    }
}

mod busy;
#[cfg(test)]
mod tests;
