//! The timeline recorder: what each core ran and when (hard IRQ, the NAPI
//! poll's items with the Open-MX receive handler, the library, compute,
//! spinning, sleep and wake-up), what each NIC receive queue did (DMA, the
//! coalescing timer armed and fired, interrupts raised, frames dropped at a
//! full ring), what each NIC put on the wire, and each frame from the
//! sending NIC to the receiving one.
//! Compact [`Record`]s, which the Python front writes as a Chrome
//! trace-event file (`nicsim.trace`).
//!
//! This module owns the records, the time window and the cap. It decides
//! nothing in the simulation: the stages call it where a core segment
//! starts or is preempted, where a poll ends and where the NIC acts, and
//! only when a trace was asked for (`World::trace` is `None` otherwise: one
//! branch per call site, no allocation). A traced run's metrics are those
//! of the same run untraced.
//!
//! A core's records do not overlap except by nesting: the pieces of one
//! segment follow each other (sleep, wake-up, hard IRQ, the work), and a
//! spin, which the CPU metrics count whole (`spin_time`), holds the kernel
//! segments that ran on its core meanwhile. The busy records (categories
//! `kernel`, `app`, `spin`) add up to the time the metrics count busy, less
//! [`Tracer::spin_overlap`] (a spin the metrics count over kernel work that
//! a record cannot hold).

use super::{KWork, World};
use crate::library::Action;
use crate::time::{Duration, Instant};
use crate::workload::Op;

/// The records kept: those that overlap `[from, until]`, at most `cap`.
#[derive(Clone, Copy, Debug)]
pub struct TraceCfg {
    pub from: Instant,
    pub until: Instant,
    pub cap: u64,
}

/// Track numbers within a host (a host is a process of the trace): core
/// `c` is track `c` (at most 256 cores), the NIC's transmit side
/// [`TRACK_NIC_TX`], receive queue `q` [`TRACK_RX_QUEUE`] + `q`.
pub const TRACK_NIC_TX: u16 = 512;
pub const TRACK_RX_QUEUE: u16 = 1024;

macro_rules! whats {
    ($($v:ident = ($name:literal, $cat:literal, $ph:literal, $arg:literal),)*) => {
        /// What a record shows: its name, category, Chrome phase (`X` a
        /// slice, `i` an instant, `s`/`f` the two ends of a frame's arrow)
        /// and the name of its argument (empty: none).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum What { $($v,)* }
        impl What {
            pub const ALL: &'static [What] = &[$(What::$v,)*];
            pub fn describe(self) -> (&'static str, &'static str, &'static str, &'static str) {
                match self { $(What::$v => ($name, $cat, $ph, $arg),)* }
            }
        }
    };
}

whats! {
    HardIrq = ("hard IRQ", "kernel", "X", "queue"),
    Handler = ("NAPI poll: rx frame, Open-MX handler", "kernel", "X", "queue"),
    TxReap = ("NAPI poll: tx completions", "kernel", "X", "completions"),
    NapiComplete = ("NAPI complete, IRQ re-armed", "kernel", "X", "queue"),
    NapiDefer = ("NAPI complete, IRQ kept masked", "kernel", "X", "queue"),
    PullReply = ("bottom half: pull reply sent", "kernel", "X", ""),
    ClockSignal = ("NI clock interrupt: signal, library run", "kernel", "X", "process"),
    NetTx = ("NET_TX softirq: skbs freed, Open-MX destructors", "kernel", "X", ""),
    Tick = ("kernel tick: timer interrupt, scheduler_tick", "kernel", "X", ""),
    Send = ("library: frame to the driver", "app", "X", ""),
    Consume = ("library: ring event", "app", "X", ""),
    ExpEvents = ("library: FRAG_DONE events", "app", "X", "events"),
    SendPost = ("library: MPI send posted", "app", "X", "bytes"),
    RecvPost = ("library: MPI receive posted", "app", "X", ""),
    Block = ("library: blocking call", "app", "X", ""),
    BusyPoll = ("library: busy poll", "app", "X", ""),
    Compute = ("application compute", "app", "X", ""),
    ProcWake = ("process wake-up", "app", "X", ""),
    Spin = ("library: spinning on its ring", "spin", "X", ""),
    Sleep = ("sleep (C1E)", "idle", "X", ""),
    WakeUp = ("wake-up (C1E exit)", "idle", "X", ""),
    Wire = ("frame on the wire", "nic", "X", "bytes"),
    Dma = ("firmware + DMA", "nic", "X", "bytes"),
    TimerArmed = ("coalescing timer armed", "nic", "i", "fires_in_ns"),
    TimerFired = ("coalescing timer fired", "nic", "i", ""),
    IrqRaised = ("interrupt raised", "nic", "i", "rx"),
    WatchdogFired = ("polling watchdog: expiry or fetch back", "nic", "i", ""),
    LinkStopped = ("flow control: link stopped (ring full)", "nic", "i", ""),
    LinkRestarted = ("flow control: link restarted", "nic", "i", ""),
    RingDrop = ("frame dropped: receive ring full", "nic", "i", "pull_reply"),
    FrameOut = ("frame", "frame", "s", ""),
    FrameIn = ("frame", "frame", "f", ""),
    Deleted = ("", "", "", ""),
}

/// One trace event: 32 bytes. `id` is a frame arrow's id.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    pub ts: u64,
    pub dur: u64,
    pub id: u32,
    pub arg: u32,
    pub host: u16,
    pub track: u16,
    pub what: What,
}

const _: () = assert!(std::mem::size_of::<Record>() == 32);

const NONE: (u32, u32) = (u32::MAX, u32::MAX);

/// What the recorder keeps of one core: the records of the application
/// segment running (first, last), what it runs, where its wake-up ends and
/// what is left of that wake-up after a preemption; the kernel segment
/// last started (start, end); until when the core was last busy or
/// spinning (where its idle time starts, for the sleep records).
#[derive(Clone, Copy)]
struct CoreTrace {
    app_open: (u32, u32),
    app_what: What,
    wake_end: u64,
    resume_wake: u64,
    kernel_seg: (u64, u64),
    busy_until: u64,
}

/// A run's timeline so far (see the module notes).
pub struct Tracer {
    cfg: TraceCfg,
    records: Vec<Record>,
    /// Records in the window that the cap left out.
    pub over_cap: u64,
    /// Per host: spinning (ps) that the CPU metrics count and the records
    /// leave out, where a spin overlapped a kernel segment it cannot hold
    /// (see `Tracer::spin`).
    pub spin_overlap: Vec<u64>,
    /// Per host and core.
    cores: Vec<Vec<CoreTrace>>,
    /// Per host and receive queue: where its last DMA record ends.
    dma_end: Vec<Vec<u64>>,
    /// Per frame slot: the sending host and when the frame left.
    departed: Vec<(u16, u64)>,
    next_flow: u32,
    /// Per host: the interrupts its cores had handled at its last kernel
    /// record (a kernel segment that handled one more began with a hard
    /// IRQ's entry).
    irq_handled: Vec<u64>,
    /// Per host: cores and receive queues (for the track names).
    shape: Vec<(u16, u16)>,
    /// Cores per die, and the idle time after which a die sleeps.
    cores_per_die: usize,
    idle_before_sleep: u64,
}

impl Tracer {
    /// A recorder for hosts of the given (cores, receive queues), whose
    /// dies of `cores_per_die` sleep after `idle_before_sleep`.
    pub(crate) fn new(cfg: TraceCfg, shape: Vec<(u16, u16)>, cores_per_die: u16, idle_before_sleep: Duration) -> Self {
        let core = CoreTrace {
            app_open: NONE,
            app_what: What::Compute,
            wake_end: 0,
            resume_wake: 0,
            kernel_seg: (0, 0),
            busy_until: 0,
        };
        Tracer {
            cfg,
            records: Vec::new(),
            over_cap: 0,
            spin_overlap: vec![0; shape.len()],
            cores: shape.iter().map(|&(c, _)| vec![core; c as usize]).collect(),
            dma_end: shape.iter().map(|&(_, q)| vec![0; q as usize]).collect(),
            departed: Vec::new(),
            next_flow: 0,
            irq_handled: vec![0; shape.len()],
            shape,
            cores_per_die: cores_per_die.max(1) as usize,
            idle_before_sleep: idle_before_sleep.as_ps(),
        }
    }

    pub fn cfg(&self) -> TraceCfg {
        self.cfg
    }

    /// Every track: (host, track, name), hosts in order.
    pub fn tracks(&self) -> Vec<(u16, u16, String)> {
        let mut out = Vec::new();
        for (h, &(cores, queues)) in self.shape.iter().enumerate() {
            let h = h as u16;
            out.extend((0..cores).map(|c| (h, c, format!("core {c}"))));
            out.push((h, TRACK_NIC_TX, "NIC tx (wire)".to_string()));
            out.extend((0..queues).map(|q| (h, TRACK_RX_QUEUE + q, format!("NIC rx queue {q}"))));
        }
        out
    }

    /// The records, sorted by time (longer first at equal times, so that a
    /// parent comes before what it holds), preempted pieces dropped.
    pub fn into_records(self) -> Vec<Record> {
        let mut r = self.records;
        r.retain(|x| x.what != What::Deleted);
        r.sort_by_key(|x| (x.ts, std::cmp::Reverse(x.dur)));
        r
    }

    fn in_window(&self, ts: u64, dur: u64) -> bool {
        ts <= self.cfg.until.as_ps() && ts + dur >= self.cfg.from.as_ps()
    }

    /// Keeps `n` records if they fit under the cap (counted as left out
    /// otherwise).
    fn room(&mut self, n: u64) -> bool {
        if self.records.len() as u64 + n <= self.cfg.cap {
            return true;
        }
        self.over_cap += n;
        false
    }

    #[allow(clippy::too_many_arguments)]
    fn push(&mut self, ts: u64, dur: u64, host: usize, track: u16, what: What, arg: u32, id: u32) -> Option<u32> {
        if !self.in_window(ts, dur) || !self.room(1) {
            return None;
        }
        self.records.push(Record { ts, dur, id, arg, host: host as u16, track, what });
        Some(self.records.len() as u32 - 1)
    }

    /// A core starts a segment at `now`, paying the exit latency `wake`
    /// (its record) if its die slept: since the die's cores were last busy
    /// and then idle for `idle_before_sleep` (the sleep's record).
    fn leave_idle(&mut self, h: usize, core: usize, now: Instant, wake: Duration) -> (u64, Option<u32>) {
        let (t, w) = (now.as_ps(), wake.as_ps());
        if w == 0 {
            return (t, None);
        }
        let first = core / self.cores_per_die * self.cores_per_die;
        let die = &self.cores[h][first..(first + self.cores_per_die).min(self.cores[h].len())];
        let idle = die.iter().map(|c| c.busy_until).max().unwrap_or(0);
        let slept = idle + self.idle_before_sleep;
        if slept < t {
            self.push(slept, t - slept, h, core as u16, What::Sleep, 0, 0);
        }
        (t + w, self.push(t, w, h, core as u16, What::WakeUp, 0, 0))
    }

    /// A kernel segment working on `w_out` for `cost`; `irq_handled`, the
    /// host's count of interrupts handled, tells whether it began with a
    /// hard IRQ's entry (`irq_entry`).
    #[allow(clippy::too_many_arguments)]
    fn kernel(
        &mut self,
        h: usize,
        core: usize,
        now: Instant,
        wake: Duration,
        w_out: KWork,
        cost: Duration,
        (irq_entry, irq_handled): (Duration, u64),
    ) {
        let entered = std::mem::replace(&mut self.irq_handled[h], irq_handled) < irq_handled;
        let mut t = self.leave_idle(h, core, now, wake).0;
        let end = t + cost.as_ps();
        let ct = &mut self.cores[h][core];
        (ct.kernel_seg, ct.busy_until) = ((t, end), end);
        let track = core as u16;
        let entry = match w_out {
            KWork::HardIrq { .. } | KWork::PullReply { .. } | KWork::Signal { .. } | KWork::NetTx | KWork::Tick => None,
            KWork::EntryRx { q, .. } | KWork::EntryTxDone { q, .. } | KWork::Rearm { q } | KWork::Defer { q }
                if entered =>
            {
                Some((What::HardIrq, q))
            }
            _ => None,
        };
        if let Some((what, q)) = entry {
            let d = irq_entry.as_ps().min(end - t);
            self.push(t, d, h, track, what, q as u32, 0);
            t += d;
        }
        let (what, arg) = match w_out {
            KWork::HardIrq { q, .. } | KWork::IrqThread { q, .. } => (What::HardIrq, q as u32),
            KWork::EntryRx { q, .. } => (What::Handler, q as u32),
            KWork::EntryTxDone { n, .. } => (What::TxReap, n),
            KWork::Rearm { q } => (What::NapiComplete, q as u32),
            KWork::Defer { q } => (What::NapiDefer, q as u32),
            KWork::PullReply { .. } => (What::PullReply, 0),
            KWork::Signal { p } => (What::ClockSignal, p as u32),
            KWork::NetTx => (What::NetTx, 0),
            KWork::Tick => (What::Tick, 0),
            KWork::Irq { q } | KWork::Napi { q, .. } | KWork::TimerNapi { q } | KWork::ThreadNapi { q } => {
                (What::Handler, q as u32)
            }
        };
        if end > t {
            self.push(t, end - t, h, track, what, arg, 0);
        }
    }

    /// An application segment: the process's wake-up (`extra`), then
    /// `cost` of `action`.
    #[allow(clippy::too_many_arguments)]
    fn app(
        &mut self,
        h: usize,
        core: usize,
        now: Instant,
        wake: Duration,
        extra: Duration,
        cost: Duration,
        action: Action,
    ) {
        let (t, woke) = self.leave_idle(h, core, now, wake);
        let track = core as u16;
        let (what, arg) = match action {
            Action::None => (What::Compute, 0),
            Action::Send => (What::Send, 0),
            Action::Consume => (What::Consume, 0),
            Action::Op(Op::Send { size, .. }) => (What::SendPost, size.min(u32::MAX as u64) as u32),
            Action::Op(_) => (What::RecvPost, 0),
            Action::Ob1(b) => match b.as_send() {
                Op::Send { size, .. } => (What::SendPost, size.min(u32::MAX as u64) as u32),
                _ => (What::RecvPost, 0),
            },
            Action::Block => (What::Block, 0),
            Action::BusyPoll(_) | Action::BusyPollStop => (What::BusyPoll, 0),
            Action::ExpEvents(k) => (What::ExpEvents, k),
        };
        let first = if extra.is_zero() { None } else { self.push(t, extra.as_ps(), h, track, What::ProcWake, 0, 0) };
        let last = self.push(t + extra.as_ps(), cost.as_ps(), h, track, what, arg, 0);
        let first = woke.or(first).or(last);
        let last = last.or(first);
        let ct = &mut self.cores[h][core];
        (ct.app_what, ct.wake_end, ct.busy_until) = (what, t, t + extra.as_ps() + cost.as_ps());
        ct.app_open = first.zip(last).unwrap_or(NONE);
    }

    /// A preempted application segment resumes at `now` for `rest`: what
    /// was left of its wake-up, then its work.
    #[cold]
    #[inline(never)]
    pub(crate) fn app_resume(&mut self, h: usize, core: usize, now: Instant, rest: Duration) {
        let ct = self.cores[h][core];
        let (t, rest) = (now.as_ps(), rest.as_ps());
        let w = ct.resume_wake.min(rest);
        let woke = if w > 0 { self.push(t, w, h, core as u16, What::WakeUp, 0, 0) } else { None };
        let work = self.push(t + w, rest - w, h, core as u16, ct.app_what, 0, 0);
        let ct = &mut self.cores[h][core];
        (ct.wake_end, ct.resume_wake, ct.busy_until) = (t + w, 0, t + rest);
        ct.app_open = woke.or(work).zip(work.or(woke)).unwrap_or(NONE);
    }

    /// Kernel work preempts the application segment of `core` at `now`:
    /// its records end there.
    #[cold]
    #[inline(never)]
    pub(crate) fn preempt(&mut self, h: usize, core: usize, now: Instant) {
        let now = now.as_ps();
        let ct = &mut self.cores[h][core];
        (ct.resume_wake, ct.busy_until) = (ct.wake_end.saturating_sub(now), now);
        let (a, b) = std::mem::replace(&mut ct.app_open, NONE);
        if a == u32::MAX {
            return;
        }
        for r in &mut self.records[a as usize..=b as usize] {
            if r.ts >= now {
                r.what = What::Deleted;
            } else {
                r.dur = r.dur.min(now - r.ts);
            }
        }
    }

    /// A process spun on core `core` from `since` until `now`. Kernel
    /// segments of that core in between nest in the spin. A spin that ends
    /// while a kernel segment of its core runs (notified from another core)
    /// ends at that segment's start: the CPU metrics count the rest twice
    /// (spinning and kernel work), the records once; `spin_overlap` keeps
    /// the difference.
    #[cold]
    #[inline(never)]
    pub(crate) fn spin(&mut self, h: usize, core: usize, since: Instant, now: Instant) {
        let ct = &mut self.cores[h][core];
        ct.busy_until = ct.busy_until.max(now.as_ps());
        let (s, e) = ct.kernel_seg;
        let (t0, mut t1) = (since.as_ps(), now.as_ps());
        if s > t0 && s < t1 && e > t1 {
            self.spin_overlap[h] += t1 - s;
            t1 = s;
        }
        self.push(t0, t1 - t0, h, core as u16, What::Spin, 0, 0);
    }

    /// Host `h`'s NIC put frame slot `frame` on the wire over `[start, end]`.
    #[cold]
    #[inline(never)]
    pub(crate) fn wire(&mut self, h: usize, frame: u32, start: Instant, end: Instant, bytes: u32) {
        let (s, e) = (start.as_ps(), end.as_ps());
        self.push(s, e - s, h, TRACK_NIC_TX, What::Wire, bytes, 0);
        let f = frame as usize;
        if self.departed.len() <= f {
            self.departed.resize(f + 1, (u16::MAX, 0));
        }
        self.departed[f] = (h as u16, s);
    }

    /// Frame slot `frame` reached host `h`'s queue `q` at `now`; its DMA
    /// completes at `done`. Its arrow from the sending NIC is kept when
    /// both ends are in the window.
    #[cold]
    #[inline(never)]
    pub(crate) fn dma(&mut self, h: usize, q: usize, frame: u32, now: Instant, done: Instant, bytes: u32) {
        let track = TRACK_RX_QUEUE + q as u16;
        // DMAs of one queue overlap while they are pipelined: each record
        // starts where the previous one ends.
        let start = now.as_ps().max(self.dma_end[h][q]);
        let done = done.as_ps();
        if start >= done {
            return;
        }
        self.dma_end[h][q] = done;
        self.push(start, done - start, h, track, What::Dma, bytes, 0);
        let (src, left) =
            self.departed.get_mut(frame as usize).map_or((u16::MAX, 0), |d| std::mem::replace(d, (u16::MAX, 0)));
        if src == u16::MAX || !self.in_window(left, 0) || !self.in_window(start, 0) || !self.room(2) {
            return;
        }
        let id = self.next_flow;
        self.next_flow += 1;
        let out = Record { ts: left, dur: 0, id, arg: 0, host: src, track: TRACK_NIC_TX, what: What::FrameOut };
        self.records.push(out);
        self.records.push(Record { ts: start, dur: 0, id, arg: 0, host: h as u16, track, what: What::FrameIn });
    }

    /// Host `h`'s queue `q` armed its coalescing timer at `now` for `at`.
    #[cold]
    #[inline(never)]
    pub(crate) fn timer_armed(&mut self, h: usize, q: usize, now: Instant, at: Instant) {
        let ns = at.max(now).since(now).as_ps() / 1000;
        self.nic(h, q, now, What::TimerArmed, ns.min(u32::MAX as u64) as u32);
    }

    /// An instant on host `h`'s receive queue `q`.
    #[cold]
    #[inline(never)]
    pub(crate) fn nic(&mut self, h: usize, q: usize, now: Instant, what: What, arg: u32) {
        self.push(now.as_ps(), 0, h, TRACK_RX_QUEUE + q as u16, what, arg, 0);
    }
}

/// The argument of a [`What::RingDrop`] instant: what the dropped frame
/// was to its receiver (a pull reply's pull decides: Open-MX's
/// `frames_missing_bitmap`, `omx_recv_pull_reply`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum DropClass {
    /// Not a pull reply.
    Other = 0,
    /// A pull reply its pull still misses: the pull waits for a re-request.
    Wanted = 1,
    /// A pull reply its pull already holds, or one for a closed pull: the
    /// drop costs nothing.
    Unwanted = 2,
}

impl World {
    /// A kernel segment of `core` started at `now` (see `dispatch_at`):
    /// the sleep exit `wake`, then `cost` working on `w`.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_kernel(
        &mut self,
        now: Instant,
        h: usize,
        core: usize,
        wake: Duration,
        w: KWork,
        cost: Duration,
    ) {
        let handled = self.hosts[h].rx.irq_handled();
        if let Some(t) = self.trace.as_deref_mut() {
            t.kernel(h, core, now, wake, w, cost, (self.env.c.host.irq_entry, handled));
        }
    }

    /// Frame `frame`, steered to queue `q` of host `h`, was dropped at `now`
    /// because the ring was full: an instant on the queue's track with the
    /// frame's [`DropClass`].
    #[cold]
    #[inline(never)]
    pub(super) fn trace_ring_drop(&mut self, now: Instant, h: usize, q: usize, frame: u32) {
        let class = self.drop_class(h, frame);
        if let Some(t) = self.trace.as_deref_mut() {
            t.nic(h, q, now, What::RingDrop, class as u32);
        }
    }

    /// An application segment of `core` started at `now`: the sleep exit
    /// `wake`, the process's wake-up `extra` (if it was blocked), then
    /// `cost` of its action.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_app(
        &mut self,
        now: Instant,
        h: usize,
        core: usize,
        wake: Duration,
        extra: Duration,
        cost: Duration,
    ) {
        let Some(p) = self.hosts[h].cores[core].app else { return };
        let action = self.hosts[h].procs[p as usize].action();
        if let Some(t) = self.trace.as_deref_mut() {
            t.app(h, core, now, wake, extra, cost, action);
        }
    }
}
