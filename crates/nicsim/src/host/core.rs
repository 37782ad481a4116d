//! The cores of a host: what each one runs (kernel work before the
//! application, its current segment and that segment's number), its queue
//! of kernel work, the process bound to it, its idle and sleep
//! bookkeeping, the stall and driver tail it owes, and the kernel time it
//! has used; and when a die sleeps and what waking it costs.
//!
//! This module owns that state and the decisions that read only it: a
//! segment begins, is preempted or ends (its methods return the segment's
//! end and number, and the world schedules the event), a core goes idle or
//! spins, and a core that starts work pays its die's sleep exit. It does
//! not decide what runs nor price it: the kernel work items (`KWork`),
//! their costs and the dispatch that picks the next item are
//! `crate::kernel`'s and `crate::sim`'s `kernel`'s, since the items name
//! the world's frames, pull replies and processes. The queue and the core
//! are generic over the work item (`W`) for that reason: the world names
//! them with `crate::kernel::KWork`.
//!
//! A core whose process's NI interrupts reach it as signals (a user-level
//! library without a kernel receive path: the \[LCI] stack's hosts) is a
//! [`SignalledCore`]: where its process is (in the library, computing, in
//! the signal handler, asleep, [`Mode`]), the interrupts-enabled word in
//! host memory that follows from it, and what a signal does to it
//! ([`SignalledCore::deliver`]: merged, handled, or returned from at once
//! and paid now or owed), with the compute segment's number and the time a
//! signal owes as a `Core`'s segment number and stall, and the signals it
//! counted. The library that prices the delivery and acts on what it
//! returns is `crate::library::lci`'s (`Lib::signal`).

use super::Topology;
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// A core's queue of kernel work, with its front item kept apart.
///
/// Most kernel work is pushed to the front and taken back at once (a hard
/// IRQ queued and then dispatched, the next NAPI poll of a ring): with the
/// front in a slot of its own that is a move in and a move out, not two
/// ring-buffer updates. Invariant: `front` is `None` only if `rest` is empty.
pub(crate) struct KQueue<W> {
    front: Option<W>,
    rest: VecDeque<W>,
}

impl<W: Copy> KQueue<W> {
    pub(crate) fn with_capacity(n: usize) -> Self {
        KQueue { front: None, rest: VecDeque::with_capacity(n) }
    }

    #[inline]
    pub(crate) fn push_front(&mut self, w: W) {
        if let Some(old) = self.front.replace(w) {
            self.rest.push_front(old);
        }
    }

    #[inline]
    pub(crate) fn push_back(&mut self, w: W) {
        if self.front.is_none() {
            self.front = Some(w);
        } else {
            self.rest.push_back(w);
        }
    }

    #[inline]
    pub(crate) fn pop_front(&mut self) -> Option<W> {
        let w = self.front.take()?;
        if !self.rest.is_empty() {
            self.front = self.rest.pop_front();
        }
        Some(w)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.front.is_none()
    }

    /// Front to back.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &W> {
        self.front.iter().chain(self.rest.iter())
    }
}

/// What a core is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cur<W> {
    Idle,
    Kernel(W),
    App,
}

/// When an idle die sleeps and what waking it costs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sleep {
    /// Idle dies sleep (the scenario's sleep states, and no cycle soaker
    /// keeping every core awake).
    pub on: bool,
    /// How long a die's cores must all have been idle for it to sleep.
    pub after: Duration,
    /// The exit latency paid by the core that wakes it (C1E exit).
    pub exit: Duration,
}

/// A segment a core has begun: when it ends and its number (stale once the
/// core is preempted or begins another). The world schedules its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub end: Instant,
    pub gen: u32,
}

pub(crate) struct Core<W> {
    pub(crate) kq: KQueue<W>,
    pub(crate) cur: Cur<W>,
    pub(crate) gen: u32,
    /// Since when the core has been idle (None: busy, or spinning).
    pub(crate) idle_since: Option<Instant>,
    /// The process bound to this core.
    pub(crate) app: Option<u16>,
    pub(crate) end: Instant,
    pub(crate) kernel_time: Duration,
    /// Stall owed by this core for contention it suffered during a segment
    /// already scheduled: paid at the start of its next segment.
    pub(crate) stall: Duration,
    /// Kernel work owed after a frame's event was posted (the end of the
    /// driver's receive work, `host.driver_rx_tail_ns`): paid by the next
    /// kernel item on this core, before the application gets the core back.
    pub(crate) tail: Duration,
}

impl<W: Copy> Core<W> {
    /// An idle core since time zero, with room for `kq` queued items.
    pub(crate) fn new(kq: usize) -> Self {
        Core {
            kq: KQueue::with_capacity(kq),
            cur: Cur::Idle,
            gen: 0,
            idle_since: Some(Instant::ZERO),
            app: None,
            end: Instant::ZERO,
            kernel_time: Duration::ZERO,
            stall: Duration::ZERO,
            tail: Duration::ZERO,
        }
    }

    /// Process `p` is bound to this core, which spins from the start (it
    /// is not idle while its process has work).
    pub(crate) fn bind(&mut self, p: u16) {
        self.app = Some(p);
        self.idle_since = None;
    }

    /// Nothing runs nor is queued on this core.
    pub(crate) fn is_quiet(&self) -> bool {
        matches!(self.cur, Cur::Idle) && self.kq.is_empty()
    }

    /// The core has nothing to run: idle from `now`, unless it already was.
    pub(crate) fn go_idle(&mut self, now: Instant) {
        if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    /// The core's process spins on it: not idle (its die does not sleep).
    #[inline]
    pub(crate) fn spin(&mut self) {
        self.idle_since = None;
    }

    /// Exit latency paid by core `core` of `cores` when it starts work: the
    /// C1E exit if its whole die has been idle long enough to sleep. A core
    /// whose die sibling is busy (or spinning) does not sleep: "a core only
    /// sleeps if the entire dual-core sub-chip is idle" ([OMX-MQ] §4.3,
    /// footnote). Dies are `cores_per_die` consecutive cores. A core that
    /// was not idle (busy, or spinning) pays nothing: checked inline, the
    /// rest is out of line.
    #[inline(always)]
    pub(crate) fn wake_cost(cores: &mut [Core<W>], topo: &Topology, core: usize, s: &Sleep, now: Instant) -> Duration {
        if cores[core].idle_since.is_none() {
            return Duration::ZERO;
        }
        Self::wake_cost_idle(cores, topo, core, s, now)
    }

    /// The die went to sleep when its last core became idle, if that was
    /// `s.after` ago: the latest idle start of its cores, a busy one
    /// counting as never idle (no branch per core, nor on the outcome).
    #[inline(never)]
    fn wake_cost_idle(cores: &mut [Core<W>], topo: &Topology, core: usize, s: &Sleep, now: Instant) -> Duration {
        let per_die = topo.cores_per_die as usize;
        let first = topo.die_of(core as u16) as usize * per_die;
        let busy = u64::MAX;
        let die_idle = cores[first..first + per_die].iter().map(|o| o.idle_since.map_or(busy, |t| t.as_ps())).max();
        cores[core].idle_since = None;
        let die_idle = die_idle.unwrap_or(busy);
        let slept = s.on & (die_idle != busy) & (now.as_ps().saturating_sub(die_idle) >= s.after.as_ps());
        if slept {
            s.exit
        } else {
            Duration::ZERO
        }
    }

    /// Idle and quiet: nothing runs, nothing queued, no process spinning
    /// (the scheduler's `available_idle_cpu`).
    #[inline]
    fn is_idle(&self) -> bool {
        self.is_quiet() && self.idle_since.is_some()
    }

    /// Where the scheduler places a kernel thread woken from `waker`'s
    /// hard IRQ that last ran on `prev` (threaded NAPI), as Linux's
    /// `select_task_rq_fair` does for a wake-up (kernel/sched/fair.c
    /// `wake_affine_idle`, then `select_idle_sibling`), simplified: the
    /// waker's core if it is idle (the thread's previous core instead if
    /// that is idle too and shares its last-level cache: its die here);
    /// else the previous core if idle; else the first idle core of the
    /// waker's die, scanning from the waker's next (`select_idle_cpu`:
    /// `for_each_cpu_wrap(cpu, cpus, target + 1)`); else the waker's core,
    /// where the thread then competes with what runs there. Load
    /// balancing, `wake_wide` and capacity checks are not modelled.
    pub(crate) fn wake_target(cores: &[Core<W>], topo: &Topology, waker: usize, prev: Option<usize>) -> usize {
        let same_llc = |a: usize, b: usize| topo.die_of(a as u16) == topo.die_of(b as u16);
        let prev_idle = prev.filter(|&p| cores[p].is_idle());
        if cores[waker].is_idle() {
            return prev_idle.filter(|&p| same_llc(p, waker)).unwrap_or(waker);
        }
        if let Some(p) = prev_idle {
            return p;
        }
        let per_die = topo.cores_per_die as usize;
        let first = topo.die_of(waker as u16) as usize * per_die;
        (1..per_die)
            .map(|i| first + (waker - first + i) % per_die)
            .find(|&c| c < cores.len() && cores[c].is_idle())
            .unwrap_or(waker)
    }

    /// Begins a segment that ends at `end`.
    #[inline]
    fn begin(&mut self, end: Instant) -> Segment {
        self.gen = self.gen.wrapping_add(1);
        self.end = end;
        Segment { end, gen: self.gen }
    }

    /// Begins kernel work `w` at `at` (after any wake-up) for `cost` plus
    /// the stall the core owes: returns the kernel time charged and the
    /// segment.
    #[inline]
    pub(crate) fn begin_kernel(&mut self, w: W, at: Instant, cost: Duration) -> (Duration, Segment) {
        self.cur = Cur::Kernel(w);
        let cost = cost + std::mem::take(&mut self.stall);
        self.kernel_time += cost;
        (cost, self.begin(at + cost))
    }

    /// Begins (or resumes) the application at `at` for `cost` plus the
    /// stall the core owes: returns the application time charged and the
    /// segment.
    #[inline]
    pub(crate) fn begin_app(&mut self, at: Instant, cost: Duration) -> (Duration, Segment) {
        self.cur = Cur::App;
        let cost = cost + std::mem::take(&mut self.stall);
        (cost, self.begin(at + cost))
    }

    /// New kernel work preempts the application if it runs a segment: the
    /// core is idle again, the segment stale, and the time it had left is
    /// returned. `None` if the core was not running the application.
    #[inline]
    pub(crate) fn preempt(&mut self, now: Instant) -> Option<Duration> {
        if !matches!(self.cur, Cur::App) {
            return None;
        }
        let remaining = self.end.since(now);
        self.gen = self.gen.wrapping_add(1);
        self.cur = Cur::Idle;
        Some(remaining)
    }

    /// Segment `gen` is the core's current one (not stale: the core was
    /// not preempted since it began).
    #[inline(always)]
    pub(crate) fn is_current(&self, gen: u32) -> bool {
        self.gen == gen
    }

    /// The current segment ended: what the core was running (the core is
    /// idle again).
    #[inline(always)]
    pub(crate) fn end_segment(&mut self) -> Cur<W> {
        std::mem::replace(&mut self.cur, Cur::Idle)
    }
}

/// Where a signalled core's process is (SPEC §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// In the library: polling, sending, consuming (interrupts disabled).
    Library,
    /// Computing until `end`: outside the library, interrupts enabled
    /// (`irq`), or in it, interrupts disabled (a program its upcalls
    /// drive), where a signal does not preempt it.
    Compute { end: Instant, irq: bool },
    /// In the signal handler, which runs the library; then resumes the
    /// computation with `resume` left, or sleeps (`None`).
    Handler { resume: Option<Duration> },
    /// Asleep outside the library, waiting for a signal (interrupts enabled).
    Sleep,
}

/// What a signal does to a signalled core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Interrupts enabled: the handler runs the library, then the program
    /// resumes (`resume` of computation left) or sleeps again.
    Handle { resume: Option<Duration> },
    /// Interrupts disabled: the handler returns at once; the core pays the
    /// delivery (kernel dispatch + user handler entry) and nothing else.
    ReturnAtOnce,
    /// Already in the handler: the signal is blocked and merged with the one
    /// being handled (POSIX signals do not queue), whose library run will
    /// see the new packet anyway.
    Merged,
}

/// What a signal's delivery ([`SignalledCore::deliver`]) leaves the
/// stack to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Merged with the signal being handled: nothing.
    Merged,
    /// The handler runs the library (interrupts now disabled in host
    /// memory); the core is busy until `until`.
    Handled { until: Instant },
    /// Interrupts were disabled and the process spun in the library: the
    /// handler returned at once, and the core paid the delivery until
    /// `until` (the spin ends).
    ReturnedWhileSpinning { until: Instant },
    /// Interrupts were disabled during a busy library action: the handler
    /// returned at once; the delivery is owed, paid before the next action.
    Owed,
}

/// Where a process whose library has nothing left to do in a signal
/// handler goes back to ([`SignalledCore::handler_exit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The computation the signal preempted, with this much left.
    Compute(Duration),
    /// Sleep, until the next signal.
    Sleep,
}

/// A core whose process's NI interrupts reach it as signals: the
/// process's [`Mode`], the number of its compute segment (stale once a
/// signal preempts it, as a [`Core`]'s segment), the signal time it owes,
/// paid before its next library action (as a [`Core`]'s stall), and the
/// signals it returned from at once or merged.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SignalledCore {
    mode: Mode,
    gen: u32,
    owed: Duration,
    returned_at_once: u64,
    merged: u64,
}

impl SignalledCore {
    /// A core whose process starts in `mode`.
    pub(crate) fn new(mode: Mode) -> Self {
        SignalledCore { mode, gen: 0, owed: Duration::ZERO, returned_at_once: 0, merged: 0 }
    }

    /// A signal reaches the process at `now` (`spinning`: the library
    /// spins on a cached flag; `cost`: kernel dispatch + user handler
    /// entry). Counts a signal merged or returned from at once.
    pub(crate) fn deliver(&mut self, now: Instant, spinning: bool, cost: Duration) -> Delivery {
        match self.on_signal(now) {
            Signal::Merged => {
                self.merged += 1;
                Delivery::Merged
            }
            Signal::ReturnAtOnce => {
                self.returned_at_once += 1;
                if spinning {
                    Delivery::ReturnedWhileSpinning { until: now + cost }
                } else {
                    self.owe(cost);
                    Delivery::Owed
                }
            }
            Signal::Handle { resume } => {
                self.enter_handler(resume);
                Delivery::Handled { until: now + cost }
            }
        }
    }

    /// In the signal handler: where the process goes once its library has
    /// nothing left to do. `None` outside the handler (the program decides).
    pub(crate) fn handler_exit(&self) -> Option<Exit> {
        match self.mode {
            Mode::Handler { resume: Some(d) } => Some(Exit::Compute(d)),
            Mode::Handler { resume: None } => Some(Exit::Sleep),
            _ => None,
        }
    }

    /// Signals returned from at once (interrupts disabled) and signals
    /// merged with one being handled.
    pub(crate) fn signals(&self) -> (u64, u64) {
        (self.returned_at_once, self.merged)
    }

    #[cfg(test)]
    fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether the process is in the library (interrupts disabled): it
    /// runs it (polls, sends, consumes), or computes in it.
    pub(crate) fn in_library(&self) -> bool {
        matches!(self.mode, Mode::Library | Mode::Handler { .. } | Mode::Compute { irq: false, .. })
    }

    /// The interrupts-enabled word in host memory (\[LCI] §5.1: the NI's
    /// watchdog reads it): the library runs with interrupts disabled, so
    /// the word is set exactly while the process is outside it, computing
    /// or asleep.
    pub(crate) fn irq_enabled(&self) -> bool {
        !self.in_library()
    }

    /// A signal reaches the process at `now`: the handler runs the library
    /// if interrupts are enabled ([`SignalledCore::irq_enabled`]), returns
    /// at once if not, and is merged in the handler.
    fn on_signal(&self, now: Instant) -> Signal {
        match self.mode {
            Mode::Handler { .. } => Signal::Merged,
            Mode::Compute { end, irq: true } => Signal::Handle { resume: Some(end.since(now)) },
            Mode::Sleep => Signal::Handle { resume: None },
            Mode::Library | Mode::Compute { irq: false, .. } => Signal::ReturnAtOnce,
        }
    }

    /// The handler runs the library (a compute segment under way is stale);
    /// then the process resumes `resume` of computation, or sleeps.
    fn enter_handler(&mut self, resume: Option<Duration>) {
        self.gen = self.gen.wrapping_add(1);
        self.mode = Mode::Handler { resume };
    }

    /// The process computes for `d` from `now`, having left the library
    /// with interrupts enabled (`irq`) or in it: the segment, whose end the
    /// stack schedules.
    pub(crate) fn begin_compute(&mut self, now: Instant, d: Duration, irq: bool) -> Segment {
        self.gen = self.gen.wrapping_add(1);
        let end = now + d;
        self.mode = Mode::Compute { end, irq };
        Segment { end, gen: self.gen }
    }

    /// Compute segment `gen` ended: the process is back in the library
    /// (running it), or `false` if the segment is stale (a signal
    /// preempted it).
    pub(crate) fn end_compute(&mut self, gen: u32) -> bool {
        if self.gen != gen || !matches!(self.mode, Mode::Compute { .. }) {
            return false;
        }
        self.mode = Mode::Library;
        true
    }

    /// The process leaves the library to sleep until a signal.
    pub(crate) fn sleep(&mut self) {
        self.mode = Mode::Sleep;
    }

    /// A signal took `d` from a busy library action.
    fn owe(&mut self, d: Duration) {
        self.owed += d;
    }

    /// The signal time owed, now paid.
    pub(crate) fn take_owed(&mut self) -> Duration {
        std::mem::replace(&mut self.owed, Duration::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::{Core, Cur, Delivery, Exit, KQueue, Mode, Segment, Signal, SignalledCore, Sleep, Topology};
    use crate::time::{Duration, Instant};
    use std::collections::VecDeque;

    #[test]
    fn kqueue_keeps_the_order_of_a_deque() {
        // Pushes at both ends and pops, against a plain VecDeque.
        let (mut kq, mut dq) = (KQueue::with_capacity(2), VecDeque::new());
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..10_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 3 {
                0 => {
                    kq.push_front(i);
                    dq.push_front(i);
                }
                1 => {
                    kq.push_back(i);
                    dq.push_back(i);
                }
                _ => assert_eq!(kq.pop_front(), dq.pop_front()),
            }
            assert_eq!(kq.is_empty(), dq.is_empty());
            assert!(kq.iter().eq(dq.iter()));
        }
    }

    #[test]
    fn a_preempted_segment_is_stale_and_returns_its_time_left() {
        let mut c: Core<u32> = Core::new(1);
        let t = |us| Instant::ZERO + Duration::from_us(us);
        let (charged, seg) = c.begin_app(t(1), Duration::from_us(10));
        assert_eq!((charged, seg.end), (Duration::from_us(10), t(11)));
        assert_eq!(c.preempt(t(4)), Some(Duration::from_us(7)));
        assert!(!c.is_current(seg.gen));
        assert_eq!(c.preempt(t(5)), None);
        c.stall = Duration::from_us(2);
        let (charged, seg2) = c.begin_kernel(9, t(5), Duration::from_us(1));
        assert_eq!(seg2, Segment { end: t(8), gen: seg.gen + 2 });
        assert_eq!((charged, c.kernel_time, c.stall), (Duration::from_us(3), Duration::from_us(3), Duration::ZERO));
        assert!(c.is_current(seg2.gen));
        assert_eq!(c.end_segment(), Cur::Kernel(9));
        assert!(c.is_quiet());
    }

    #[test]
    fn a_handler_that_finds_interrupts_disabled_returns_at_once() {
        let c = SignalledCore::new(Mode::Library);
        assert!(!c.irq_enabled(), "the library runs with interrupts disabled");
        assert_eq!(c.on_signal(Instant::ZERO), Signal::ReturnAtOnce);
        let mut c = SignalledCore::new(Mode::Library);
        let seg = c.begin_compute(Instant::ZERO, Duration::from_us(100), true);
        assert!(c.irq_enabled(), "enabled while it computes outside the library");
        assert_eq!(
            c.on_signal(Instant::ZERO + Duration::from_us(30)),
            Signal::Handle { resume: Some(Duration::from_us(70)) }
        );
        assert_eq!(SignalledCore::new(Mode::Sleep).on_signal(Instant::ZERO), Signal::Handle { resume: None });
        let h = SignalledCore::new(Mode::Handler { resume: None });
        assert!(!h.irq_enabled(), "the handler runs the library");
        assert_eq!(h.on_signal(Instant::ZERO), Signal::Merged);
        // A signal handled preempts the computation: its end is stale.
        c.enter_handler(Some(Duration::from_us(70)));
        assert!(c.in_library());
        assert!(!c.end_compute(seg.gen));
        let seg = c.begin_compute(Instant::ZERO, Duration::from_us(70), true);
        assert!(!c.in_library());
        assert!(c.end_compute(seg.gen));
        assert_eq!(c.mode(), Mode::Library);
        c.owe(Duration::from_us(2));
        c.owe(Duration::from_us(1));
        assert_eq!((c.take_owed(), c.take_owed()), (Duration::from_us(3), Duration::ZERO));
    }

    #[test]
    fn a_delivery_says_what_the_signal_leaves_to_do_and_counts_it() {
        let (t, cost) = (Instant::ZERO + Duration::from_us(30), Duration::from_us(25));
        let mut c = SignalledCore::new(Mode::Library);
        let seg = c.begin_compute(Instant::ZERO, Duration::from_us(100), true);
        assert_eq!(c.handler_exit(), None);
        assert_eq!(c.deliver(t, false, cost), Delivery::Handled { until: t + cost });
        assert_eq!(c.handler_exit(), Some(Exit::Compute(Duration::from_us(70))));
        assert!(!c.end_compute(seg.gen));
        // In the handler: merged; in the library: paid now if it spins, else owed.
        assert_eq!(c.deliver(t, false, cost), Delivery::Merged);
        let mut l = SignalledCore::new(Mode::Library);
        assert_eq!(l.deliver(t, true, cost), Delivery::ReturnedWhileSpinning { until: t + cost });
        assert_eq!(l.deliver(t, false, cost), Delivery::Owed);
        assert_eq!((l.take_owed(), c.signals(), l.signals()), (cost, (0, 1), (2, 0)));
        let mut s = SignalledCore::new(Mode::Sleep);
        assert_eq!(s.deliver(t, false, cost), Delivery::Handled { until: t + cost });
        assert_eq!(s.handler_exit(), Some(Exit::Sleep));
    }

    #[test]
    fn a_compute_in_the_library_keeps_interrupts_disabled_and_a_signal_does_not_preempt_it() {
        let (t, cost) = (Instant::ZERO + Duration::from_us(30), Duration::from_us(25));
        let mut c = SignalledCore::new(Mode::Library);
        let seg = c.begin_compute(Instant::ZERO, Duration::from_us(100), false);
        assert!(c.in_library() && !c.irq_enabled(), "a program its upcalls drive computes in the library");
        assert_eq!(c.deliver(t, false, cost), Delivery::Owed, "the handler returns at once, paid later");
        assert_eq!(c.handler_exit(), None);
        assert!(c.end_compute(seg.gen), "not preempted: its end is current");
        assert_eq!((c.mode(), c.take_owed(), c.signals()), (Mode::Library, cost, (1, 0)));
    }

    #[test]
    fn a_die_sleeps_only_when_all_its_cores_were_idle_long_enough() {
        let topo = Topology::with_shape(1, 2, 2);
        let s = Sleep { on: true, after: Duration::from_us(10), exit: Duration::from_us(3) };
        let t = |us| Instant::ZERO + Duration::from_us(us);
        let mut cores: Vec<Core<u32>> = (0..4).map(|_| Core::new(1)).collect();
        // Core 1 busy: core 0's die stays awake.
        cores[1].idle_since = None;
        assert_eq!(Core::wake_cost(&mut cores, &topo, 0, &s, t(100)), Duration::ZERO);
        assert_eq!(cores[0].idle_since, None);
        // Both cores of die 1 idle since 0: the first to wake pays the exit.
        assert_eq!(Core::wake_cost(&mut cores, &topo, 2, &s, t(100)), Duration::from_us(3));
        // Not idle long enough.
        cores[2].go_idle(t(95));
        assert_eq!(Core::wake_cost(&mut cores, &topo, 2, &s, t(100)), Duration::ZERO);
        // Without sleep states nothing is paid.
        cores[2].go_idle(t(0));
        let off = Sleep { on: false, ..s };
        assert_eq!(Core::wake_cost(&mut cores, &topo, 2, &off, t(100)), Duration::ZERO);
    }
}
