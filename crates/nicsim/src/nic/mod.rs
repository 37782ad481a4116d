//! The NIC: receive firmware, DMA engines, receive queues with their
//! interrupt line and coalescing policy, steering, and the transmit path.
//!
//! This module owns NIC-side state and timing: the firmware is a FIFO server
//! (per-frame time), DMA engines are FIFO servers (start-up + bytes /
//! bandwidth, in order per engine) or, with `nic.dma_shared_bus`,
//! transactions on the host's I/O bus (`crate::host::bus`), each receive
//! queue has a ring of completed descriptors, an interrupt line that is
//! masked from a raise until the host re-arms it (or while a busy poller
//! holds it suspended, `suspend`), and a coalescing policy (`coalesce`). A
//! receive queue's state is private: its methods (`RxQueue::frame_arrived`,
//! `frame_delivered`, `tx_completion`, `busy_poll`, the timers) decide and
//! return what to schedule. It does not run host code: raising an interrupt
//! yields an event for `crate::sim`.

pub mod coalesce;
pub mod delivery;
pub mod flow;
pub mod multicast;
pub mod steering;
pub mod suspend;
pub mod timers;
pub mod watchdog;

use crate::config::{BusTimes, NicCfg, NicTimes};
use crate::host::bus::{Bus, BusOp};
use crate::time::{Duration, Instant, Rate};
use coalesce::{Coalescer, Decision, TimerCmd};
use flow::{FlowControl, Held, Hold};
use multicast::ForwardTable;
use std::collections::VecDeque;
use suspend::Suspension;
use watchdog::{Expiry, Watchdog};

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
    small_in_ring: u32,
    big_in_ring: u32,
    /// Buffers of the big and the small ring posted and not yet processed
    /// by the driver (myri10ge's `fill_cnt - cnt`): the NIC can fill those
    /// not already holding a frame.
    posted: [u32; 2],
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
            timer_gen: 0,
            timer_at: None,
            interrupts: 0,
            napi_sched: false,
            defer_left: 0,
            suspension: Suspension::default(),
            watchdog: None,
            delivered: 0,
            taken: 0,
        }
    }

    /// myri10ge's two claims (`tx_reap = "hard-irq"`, see `split_claims`).
    pub fn with_split_claims(mut self, split: bool) -> Self {
        self.split_claims = split;
        self
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
        let out = self.apply(now, d);
        let watchdog = if self.watchdog.is_some() { self.watchdog_delivered(now) } else { None };
        (out, watchdog)
    }

    /// A transmit completion reported on this queue's line
    /// (`other_pending`: DMA of other queues still under way): the policy
    /// decides, and the outcome to schedule.
    #[inline]
    pub fn tx_completion(&mut self, now: Instant, other_pending: u32) -> Outcome {
        self.tx_completed();
        let dc = coalesce::DmaCompletion { marked: false, bytes: 0, other_pending };
        let d = self.policy.on_dma_complete(now, dc);
        self.apply(now, d)
    }

    /// An application busy polls the queue (`suspend`: irq_suspend_timeout,
    /// zero for none). Nothing while NAPI is scheduled (`None`); otherwise
    /// the interrupt is suspended (with a timeout), one entry is taken and
    /// the rings are restocked, as a poll of its own.
    #[inline]
    pub fn busy_poll(&mut self, now: Instant, suspend: Duration) -> Option<BusyPoll> {
        if self.napi_sched {
            return None;
        }
        let suspend_timer = if suspend.is_zero() { None } else { self.busy_poll_suspend(now, suspend) };
        let entry = self.take();
        self.restock();
        Some(BusyPoll { suspend_timer, entry })
    }

    /// A busy poller found work: the suspension lasts `timeout` from now
    /// (`Suspension::found_work`); its timer event to schedule, if none is
    /// pending.
    pub fn poller_found_work(&mut self, now: Instant, timeout: Duration) -> Option<Instant> {
        self.suspension.found_work(now, timeout)
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
        self.interrupts += 1;
        out.raise = true;
        out.rx = rx;
        if let Some(w) = self.watchdog.as_deref_mut() {
            w.on_irq_raised();
        }
        let d2 = self.policy.on_irq_raised(now);
        self.apply_timer(d2.timer, out);
    }

    /// A frame's DMA into the ring completed: the watchdog's timer starts
    /// if it has one and none runs (the event to schedule).
    #[inline]
    pub fn watchdog_delivered(&mut self, now: Instant) -> Option<(Instant, u32)> {
        self.watchdog.as_deref_mut()?.on_delivered(now)
    }

    /// The watchdog's event of generation `gen` fired: the interrupt it
    /// lets out when the host made no progress, and its next event (at
    /// this instant, this generation). When the host picked every frame
    /// up, a raise the policy asked for is dropped and the policy is told
    /// the host saw every frame (a re-arm with none pending). Kept apart
    /// from [`Outcome`], which every frame's path returns.
    pub fn watchdog_timer(&mut self, now: Instant, gen: u32) -> (Outcome, Option<(Instant, u32)>) {
        let Some(w) = self.watchdog.as_deref_mut() else { return (Outcome::default(), None) };
        match w.on_timer(now, gen, self.delivered, self.taken) {
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
    /// false to re-arm ([`RxQueue::napi_done`]).
    #[inline]
    pub fn napi_poll_empty(&mut self, did_work: bool, defer_hard_irqs: u32, gro_flush: bool) -> bool {
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

    /// A busy poll of the queue with no NAPI scheduled masks the interrupt
    /// and suspends it until `now + timeout` (`Suspension::busy_poll`): the
    /// suspension's timer event to schedule, if none is pending.
    pub fn busy_poll_suspend(&mut self, now: Instant, timeout: Duration) -> Option<Instant> {
        self.irq_enabled = false;
        self.suspension.busy_poll(now, timeout)
    }

    /// The suspension's timer fired (`Suspension::on_timer`; `polled`: a
    /// process busy polls this queue): its next event, and the outcome of
    /// the interrupt enabled again if the suspension ended.
    pub fn suspend_timer(&mut self, now: Instant, timeout: Duration, polled: bool) -> (Option<Instant>, Outcome) {
        let parked = self.pending() == 0 && polled;
        match self.suspension.on_timer(now, timeout, self.napi_sched, parked) {
            suspend::Expiry::Stale | suspend::Expiry::Parked => (None, Outcome::default()),
            suspend::Expiry::Again(at) => (Some(at), Outcome::default()),
            suspend::Expiry::Over => (None, self.rearm(now)),
        }
    }

    /// The host re-enabled the interrupt after draining the ring.
    pub fn rearm(&mut self, now: Instant) -> Outcome {
        self.irq_enabled = true;
        let pending = self.pending();
        let d = self.policy.on_rearm(now, pending);
        let mut out = self.apply(now, d);
        if !out.raise && self.fire_wanted {
            self.fire_wanted = false;
            if pending > 0 {
                let mut o2 = Outcome::default();
                self.request_raise(now, &mut o2);
                out.raise = o2.raise;
                out.rx = o2.rx;
                if o2.timer.is_some() {
                    out.timer = o2.timer;
                }
            }
        }
        out
    }
}

/// NIC timing resources.
pub struct Nic {
    pub queues: Vec<RxQueue>,
    /// Frames that have fully arrived whose DMA has not completed (in the
    /// firmware or in DMA): the "other DMAs pending" of [OMX-COAL]
    /// Algorithm 2 (see [`Nic::other_pending`]).
    pub pending: u32,
    /// When the receive firmware is free (it is a FIFO server).
    pub fw_free: Instant,
    pub dma_free: Vec<Instant>,
    pub tx_free: Instant,
    /// Firmware time per received frame, the policy's and the steering's
    /// own work included.
    fw_rx: Duration,
    fw_tx: Duration,
    /// Firmware time spent on received frames, and their number.
    pub fw_rx_busy: Duration,
    pub fw_rx_frames: u64,
    dma_startup: Duration,
    /// DMA transfer rate, one memo per direction (see `Rate`).
    rx_dma: Rate,
    tx_dma: Rate,
    tx_dma_startup: Duration,
    pub irq_delivery: Duration,
    pub ring_slots: usize,
    /// Frames of at most this many bytes use the small ring (0: none).
    pub small_bytes: u32,
    pub in_dma: u32,
    /// Of `in_dma`, the frames bound for small-ring buffers, and the
    /// big-ring buffers the others fill.
    pub in_dma_small: u32,
    pub in_dma_big: u32,
    /// `nic.dma_shared_bus`: the host's I/O bus both DMA directions use
    /// (`None`: each direction has its own engines). Its per-DMA overhead
    /// is `dma_startup`.
    bus: Option<Box<Bus>>,
    /// On the shared bus, the transmit DMA's set-up before its bus
    /// transaction: `tx_dma_startup` beyond the bus's per-DMA overhead
    /// (firmware work, \[LCI]'s `dma_setup_cycles`; zero on emo2004).
    tx_dma_setup: Duration,
    /// The multicast forwarding table (`nic.multicast_forwarding`, set by
    /// the build for a multicast workload), and the firmware's time per
    /// forward on top of its transmit work (`nic.mcast_fwd_ns`).
    pub forwarding: Option<ForwardTable>,
    fw_fwd: Duration,
    /// Copies the firmware forwarded.
    pub forwards: u64,
    /// Bytes each receive DMA writes besides the frame: 0 for myri10ge's
    /// ring (its completion entry is a write of its own, not priced),
    /// the status word with packet shifting (`nic.rx_delivery`, `delivery`).
    pub rx_extra_bytes: u32,
    /// Link-level back-pressure (`nic.flow_control`, `flow`): the frames
    /// waiting at the stopped link, and whether any does (the one check
    /// an arriving frame and a freed buffer make).
    pub flow: Option<Box<FlowControl>>,
    flow_waiting: bool,
}

impl Nic {
    /// A NIC whose receive firmware spends `fw_rx_extra` per frame on top of
    /// `t.fw_rx` (the coalescing policy's and the steering's own work).
    pub fn new(cfg: &NicCfg, t: &NicTimes, queues: Vec<RxQueue>, fw_rx_extra: Duration) -> Self {
        Nic {
            queues,
            pending: 0,
            fw_free: Instant::ZERO,
            dma_free: vec![Instant::ZERO; cfg.rx_dma_engines as usize],
            tx_free: Instant::ZERO,
            fw_rx: t.fw_rx + fw_rx_extra,
            fw_tx: t.fw_tx,
            fw_rx_busy: Duration::ZERO,
            fw_rx_frames: 0,
            dma_startup: t.dma_startup,
            rx_dma: Rate::new(t.dma_bytes_per_s),
            tx_dma: Rate::new(t.dma_bytes_per_s),
            tx_dma_startup: t.tx_dma_startup,
            irq_delivery: t.irq_delivery,
            ring_slots: cfg.ring_slots as usize,
            small_bytes: cfg.small_bytes,
            in_dma: 0,
            in_dma_small: 0,
            in_dma_big: 0,
            bus: cfg.dma_shared_bus.then(|| Box::new(Bus::new(&BusTimes::dma_only(t.dma_bytes_per_s, t.dma_startup)))),
            tx_dma_setup: t.tx_dma_startup.saturating_sub(t.dma_startup),
            forwarding: None,
            fw_fwd: t.mcast_fwd,
            forwards: 0,
            rx_extra_bytes: 0,
            flow: None,
            flow_waiting: false,
        }
    }

    /// The host's shared I/O bus (`nic.dma_shared_bus`), with its counters.
    pub fn bus(&self) -> Option<&Bus> {
        self.bus.as_deref()
    }

    /// Frames wait at the stopped link (`flow`): an arriving frame queues
    /// behind them, and freed ring space must let them in.
    #[inline(always)]
    pub fn flow_waiting(&self) -> bool {
        self.flow_waiting
    }

    /// A frame waits at the stopped link (flow control is on). `None`
    /// without flow control: the frame is dropped.
    pub fn flow_hold(&mut self, h: Held) -> Option<Hold> {
        let f = self.flow.as_deref_mut()?;
        let r = f.hold(h);
        self.flow_waiting = f.waiting() > 0;
        Some(r)
    }

    /// The frame at the head of the stopped link enters the NIC at `now`
    /// if its ring has room for it (its slab id and queue); `None` if
    /// nothing waits or it still does not fit (it stays at the head, and
    /// so do the frames behind it).
    pub fn flow_admit(&mut self, now: Instant) -> Option<(u32, usize)> {
        let head = *self.flow.as_deref()?.head()?;
        if self.ring_full(head.q as usize, head.small, head.bufs) {
            return None;
        }
        let f = self.flow.as_deref_mut()?;
        let h = f.admit(now)?;
        self.flow_waiting = f.waiting() > 0;
        Some((h.frame, h.q as usize))
    }

    /// A frame's last bit arrived at `now`: run the firmware, then book the
    /// earliest-free DMA engine. Returns the DMA completion time.
    ///
    /// An engine is busy for the transfer itself (bytes / bandwidth); the
    /// start-up latency (PCIe write posting) overlaps with the next transfer,
    /// as PCIe keeps several requests in flight. With `nic.dma_shared_bus`
    /// the transfer is a [`BusOp::Dma`] on the host's bus, which it holds
    /// from its start-up to its last byte, in turn with the transmit DMAs.
    pub fn receive(&mut self, now: Instant, frame_len: usize) -> Instant {
        let frame_len = frame_len + self.rx_extra_bytes as usize;
        let fw_done = now.max(self.fw_free) + self.fw_rx;
        self.fw_free = fw_done;
        self.fw_rx_busy += self.fw_rx;
        self.fw_rx_frames += 1;
        if let Some(bus) = self.bus.as_deref_mut() {
            return bus.request(fw_done, BusOp::Dma { bytes: frame_len as u32 }).1;
        }
        let (i, free) =
            self.dma_free.iter().copied().enumerate().min_by_key(|&(i, t)| (t, i)).unwrap_or((0, Instant::ZERO));
        let xfer_done = fw_done.max(free) + self.rx_dma.time(frame_len as u64);
        if let Some(slot) = self.dma_free.get_mut(i) {
            *slot = xfer_done;
        }
        xfer_done + self.dma_startup
    }

    /// The host rang the doorbell at `now` for a frame of `frame_len` bytes:
    /// DMA read + firmware. Returns when the frame is ready for the wire.
    /// Reads are pipelined like receive DMAs: the read latency overlaps with
    /// the next frame's transfer. On a shared bus the firmware sets the DMA
    /// up (`tx_dma_setup`), then the read is a [`BusOp::Dma`] holding the
    /// bus for the per-DMA overhead and the bytes.
    pub fn transmit(&mut self, now: Instant, frame_len: usize) -> Instant {
        if let Some(bus) = self.bus.as_deref_mut() {
            let (_, done) = bus.request(now + self.tx_dma_setup, BusOp::Dma { bytes: frame_len as u32 });
            return done + self.fw_tx;
        }
        let xfer_done = now.max(self.tx_free) + self.tx_dma.time(frame_len as u64);
        self.tx_free = xfer_done;
        xfer_done + self.tx_dma_startup + self.fw_tx
    }

    /// \[EMO] firmware echo: receive processing, a byte copy of `copy`
    /// between NIC buffers, transmit processing; returns when the reply is
    /// ready for the wire (the firmware is busy until then).
    pub fn firmware_echo(&mut self, now: Instant, copy: Duration) -> Instant {
        let done = now.max(self.fw_free) + self.fw_rx + copy + self.fw_tx;
        self.fw_free = done;
        done
    }

    /// \[LCI] NI-level multicast: the firmware forwards one copy of a
    /// frame that sits in its receive buffer (a table lookup and a header
    /// rewrite, then transmit processing; no DMA: the data never leave the
    /// NIC). Returns when the copy is ready for the wire (the firmware is
    /// busy until then). Called once per child, after the frame's own
    /// receive processing, so the copies leave in send order.
    pub fn firmware_forward(&mut self, now: Instant) -> Instant {
        let done = now.max(self.fw_free) + self.fw_fwd + self.fw_tx;
        self.fw_free = done;
        self.forwards += 1;
        done
    }

    /// Frames other than the one whose DMA just completed that the NIC has
    /// received whole and not yet delivered (in the firmware or in DMA): the
    /// "other DMA pending" test of [OMX-COAL] Algorithm 2, whose firmware
    /// creates a descriptor and submits its DMA when "a packet arrives". A
    /// frame still coming in off the wire does not count: the NIC stores a
    /// frame whole (its FCS ends it) before the firmware sees it. So the
    /// deferral window of a marked frame is its own firmware + DMA time
    /// (about 1.6 us for a 1500 B frame on omx2009), and the next frame must
    /// have arrived whole within it: back to back on the wire (1.2 us at
    /// 10 Gb/s) it has; "as soon a small delay between packets appears"
    /// ([OMX-COAL] IV-C4) of more than the difference it has not.
    #[inline]
    pub fn other_pending(&self) -> u32 {
        self.pending
    }

    /// Whether a frame of `len` bytes takes a small-ring buffer: myri10ge's
    /// firmware fills a buffer of `rx_small` for a frame of at most
    /// `small_bytes`, of `rx_big` for a larger one (`myri10ge_clean_rx_done`).
    #[inline]
    pub fn is_small(&self, len: usize) -> bool {
        len <= self.small_bytes as usize
    }

    /// Big-ring buffers a frame of `len` bytes fills (one below a page).
    #[inline]
    pub fn big_bufs(len: usize) -> u32 {
        (len + MXGEFW_PAD).div_ceil(BIG_BUFFER_BYTES) as u32
    }

    /// Whether queue `q` has too few free buffers for a frame of this ring
    /// class that fills `bufs` of them (1 for the small ring): the buffers
    /// of that class in DMA and in the ring, and the frame's, exceed what
    /// is posted.
    pub fn ring_full(&self, q: usize, small: bool, bufs: u32) -> bool {
        let qu = &self.queues[q];
        let used = if small { qu.small_in_ring + self.in_dma_small } else { qu.big_in_ring + self.in_dma_big };
        used + bufs > qu.posted[small as usize]
    }
}

#[cfg(test)]
mod tests;
