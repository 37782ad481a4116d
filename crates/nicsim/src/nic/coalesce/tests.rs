//! Packet-trace tests of every coalescing policy (STYLE rule 7).
//!
//! A tiny stand-in for the NIC queue and the host drives each policy: it owns
//! the single timer, masks the line between a raise and the host's re-arm,
//! holds a raise requested while masked, and checks the policy contract on
//! every answer (no timer at or before `now`, no raise from `on_irq_raised`).
//! Traces are written as "frame at t µs" lines and the asserted result is the
//! exact list of interrupt instants.

use super::*;
use crate::config::DimSpec;
use crate::time::{Duration, Instant};
use rstest::rstest;

fn us(x: u64) -> Instant {
    Instant::ZERO + Duration::from_us(x)
}
fn ns(x: u64) -> Instant {
    Instant::ZERO + Duration::from_ns(x)
}
fn at_us(list: &[u64]) -> Vec<Instant> {
    list.iter().map(|&x| us(x)).collect()
}

const MYRI: TimeoutSpec = TimeoutSpec::myri10g_default();
const MARKED: bool = true;
const UNMARKED: bool = false;
const TINY: u32 = 32 + 48;
const FULL: u32 = 1500;

/// A NIC receive queue with one policy, and a host behind it.
struct Queue<C: Coalescer + ?Sized> {
    policy: Box<C>,
    now: Instant,
    timer: Option<Instant>,
    /// The line is masked between a raise and the host's re-arm.
    masked: bool,
    /// A raise was requested while the line was masked.
    held: bool,
    /// Frames in the host ring, not yet consumed by the host.
    ring: u32,
    /// Host: interrupt-to-re-arm time (`None`: instantaneous) and frames
    /// consumed per drain.
    service: Option<Duration>,
    budget: u32,
    rearm_at: Option<Instant>,
    consumed: u64,
    irqs: Vec<Instant>,
}

impl Queue<dyn Coalescer> {
    fn new(spec: CoalesceSpec) -> Self {
        Queue::with(spec.build())
    }
}

impl<C: Coalescer + ?Sized> Queue<C> {
    fn with(policy: Box<C>) -> Self {
        Queue {
            policy,
            now: Instant::ZERO,
            timer: None,
            masked: false,
            held: false,
            ring: 0,
            service: None,
            budget: u32::MAX,
            rearm_at: None,
            consumed: 0,
            irqs: Vec::new(),
        }
    }

    fn slow_host(mut self, service: Duration, budget: u32) -> Self {
        self.service = Some(service);
        self.budget = budget;
        self
    }

    fn apply(&mut self, d: Decision) {
        match d.timer {
            TimerCmd::Keep => {}
            TimerCmd::Arm(at) => {
                assert!(at > self.now, "{} armed its timer at {at}, not after now = {}", self.policy.name(), self.now);
                self.timer = Some(at);
            }
            TimerCmd::Cancel => self.timer = None,
        }
        if d.raise {
            if self.masked {
                self.held = true;
            } else {
                self.raise();
            }
        }
    }

    fn raise(&mut self) {
        self.irqs.push(self.now);
        self.masked = true;
        self.held = false;
        let d = self.policy.on_irq_raised(self.now);
        assert!(!d.raise, "{} raised from on_irq_raised", self.policy.name());
        self.apply(d);
        match self.service {
            None => self.drain(),
            Some(s) => self.rearm_at = Some(self.now + s),
        }
    }

    /// The host consumes what it can and re-arms the interrupt.
    fn drain(&mut self) {
        let n = self.ring.min(self.budget);
        self.ring -= n;
        self.consumed += u64::from(n);
        self.masked = false;
        self.rearm_at = None;
        let d = self.policy.on_rearm(self.now, self.ring);
        self.apply(d);
        let held = std::mem::take(&mut self.held);
        if held && self.ring > 0 {
            self.raise();
        }
    }

    /// Run timers and host re-arms due up to `t` (re-arm first on a tie).
    fn advance(&mut self, t: Instant) {
        assert!(t >= self.now, "trace goes backwards");
        loop {
            let rearm = self.rearm_at.filter(|&r| r <= t);
            let timer = self.timer.filter(|&x| x <= t);
            match (rearm, timer) {
                (Some(r), x) if x.is_none_or(|x| r <= x) => {
                    self.now = r;
                    self.drain();
                }
                (_, Some(x)) => {
                    self.now = x;
                    self.timer = None;
                    let d = self.policy.on_timer(x);
                    self.apply(d);
                }
                _ => break,
            }
        }
        self.now = t;
    }

    /// A frame's DMA into the host ring completes at `t`.
    fn dma(&mut self, t: Instant, marked: bool, bytes: u32, other_pending: u32) -> &mut Self {
        self.advance(t);
        self.ring += 1;
        let d = self.policy.on_dma_complete(t, DmaCompletion { marked, bytes, other_pending });
        self.apply(d);
        self
    }

    fn frame(&mut self, t: Instant, marked: bool) -> &mut Self {
        self.dma(t, marked, TINY, 0)
    }
}

// ---------------------------------------------------------------------------
// One frame, every policy
// ---------------------------------------------------------------------------

#[rstest]
#[case::disabled_marked(CoalesceSpec::Disabled, MARKED, &[10])]
#[case::disabled_unmarked(CoalesceSpec::Disabled, UNMARKED, &[10])]
#[case::timeout_marked(CoalesceSpec::Timeout(MYRI), MARKED, &[85])]
#[case::timeout_unmarked(CoalesceSpec::Timeout(MYRI), UNMARKED, &[85])]
#[case::openmx_marked(CoalesceSpec::OpenMx(MYRI), MARKED, &[10])]
#[case::openmx_unmarked(CoalesceSpec::OpenMx(MYRI), UNMARKED, &[85])]
#[case::stream_marked(CoalesceSpec::Stream(MYRI), MARKED, &[10])]
#[case::stream_unmarked(CoalesceSpec::Stream(MYRI), UNMARKED, &[85])]
#[case::dim_marked(CoalesceSpec::Adaptive(AdaptiveSpec::Dim(DimSpec::EQE)), MARKED, &[18])]
#[case::dim_unmarked(CoalesceSpec::Adaptive(AdaptiveSpec::Dim(DimSpec::EQE)), UNMARKED, &[18])]
#[case::itr_first_frame(CoalesceSpec::Adaptive(AdaptiveSpec::Itr), UNMARKED, &[10])]
#[case::openmx_adaptive_marked(CoalesceSpec::OpenMxAdaptive(DimSpec::EQE), MARKED, &[10])]
#[case::openmx_adaptive_unmarked(CoalesceSpec::OpenMxAdaptive(DimSpec::EQE), UNMARKED, &[18])]
fn one_tiny_frame(#[case] spec: CoalesceSpec, #[case] marked: bool, #[case] expect: &[u64]) {
    let mut q = Queue::new(spec);
    q.frame(us(10), marked);
    q.advance(us(1_000));
    assert_eq!(q.irqs, at_us(expect));
    assert_eq!(q.consumed, 1);
}

// ---------------------------------------------------------------------------
// Markers and deferral ([OMX-COAL] Algorithms 1 and 2)
// ---------------------------------------------------------------------------

/// t=10 marked, two more frames still arriving; t=11 unmarked, one pending;
/// t=12 unmarked, nothing pending.
#[rstest]
#[case::timeout(CoalesceSpec::Timeout(MYRI), &[85])]
#[case::openmx(CoalesceSpec::OpenMx(MYRI), &[10, 86])]
#[case::stream(CoalesceSpec::Stream(MYRI), &[12])]
#[case::disabled(CoalesceSpec::Disabled, &[10, 11, 12])]
fn marked_frame_with_others_pending(#[case] spec: CoalesceSpec, #[case] expect: &[u64]) {
    let mut q = Queue::new(spec);
    q.dma(us(10), MARKED, TINY, 2).dma(us(11), UNMARKED, FULL, 1).dma(us(12), UNMARKED, FULL, 0);
    q.advance(us(1_000));
    assert_eq!(q.irqs, at_us(expect));
}

/// The deferred interrupt is taken by the first completion that finds no DMA
/// pending, even if that frame is unmarked; a second marked frame while
/// deferred does not raise early.
#[test]
fn stream_deferred_interrupt_waits_for_the_last_pending_dma() {
    let mut q = Queue::new(CoalesceSpec::Stream(MYRI));
    q.dma(us(0), MARKED, FULL, 3).dma(us(1), MARKED, FULL, 2).dma(us(2), UNMARKED, FULL, 1);
    assert!(q.irqs.is_empty());
    q.dma(us(3), UNMARKED, FULL, 0);
    assert_eq!(q.irqs, at_us(&[3]));
    q.dma(us(4), UNMARKED, FULL, 0);
    q.advance(us(1_000));
    assert_eq!(q.irqs, at_us(&[3, 79]));
}

/// Deferred at t=0; whatever interrupt comes next clears the flag, so the
/// unmarked frame at t=200 waits for its own timeout.
#[rstest]
#[case::timer(TimeoutSpec::absolute(Duration::from_us(75), 0), &[75, 275])]
#[case::frame_threshold(TimeoutSpec::absolute(Duration::from_us(75), 2), &[1, 275])]
fn stream_deferred_flag_never_survives_a_timeout_raise(#[case] fallback: TimeoutSpec, #[case] expect: &[u64]) {
    let mut q = Queue::new(CoalesceSpec::Stream(fallback));
    q.dma(us(0), MARKED, TINY, 1);
    if fallback.frames == 2 {
        q.dma(us(1), UNMARKED, FULL, 1);
    }
    q.advance(us(199));
    q.dma(us(200), UNMARKED, TINY, 0);
    q.advance(us(1_000));
    assert_eq!(q.irqs, at_us(expect));
}

#[test]
fn stream_flag_state_step_by_step() {
    let mut s = Stream::new(MYRI);
    let marked_busy = DmaCompletion { marked: true, bytes: TINY, other_pending: 1 };
    let idle = DmaCompletion { marked: false, bytes: TINY, other_pending: 0 };
    assert_eq!(s.on_dma_complete(us(0), marked_busy), Decision::arm(us(75)));
    assert!(s.deferred());
    assert_eq!(s.on_timer(us(75)), Decision::raise_and(TimerCmd::Cancel));
    assert!(!s.deferred(), "a timeout raise clears DeferredInterrupt");
    // The NIC held that raise (line masked): a later idle completion must not
    // be taken for a deferred interrupt; it raises only because the timeout
    // already expired.
    assert_eq!(s.on_dma_complete(us(76), idle), Decision::raise_and(TimerCmd::Cancel));
    s.on_irq_raised(us(80));
    assert_eq!(s.on_dma_complete(us(90), marked_busy), Decision::arm(us(165)));
    assert!(s.deferred());
    s.on_irq_raised(us(91));
    assert!(!s.deferred(), "any interrupt clears DeferredInterrupt");
    assert_eq!(s.on_dma_complete(us(92), idle), Decision::arm(us(167)));
}

// ---------------------------------------------------------------------------
// Timeout variants
// ---------------------------------------------------------------------------

#[test]
fn absolute_with_frames_32_raises_on_the_32nd() {
    let mut q = Queue::new(CoalesceSpec::Timeout(TimeoutSpec::absolute(Duration::from_us(75), 32)));
    for t in 0..40 {
        q.frame(us(t), UNMARKED);
        if t == 30 {
            assert!(q.irqs.is_empty());
        }
    }
    q.advance(us(1_000));
    // frames 0..=31 -> 32nd at t=31; frames 32..=39 -> timer at 32 + 75
    assert_eq!(q.irqs, at_us(&[31, 107]));
    assert_eq!(q.consumed, 40);
}

/// The same trace under each timer variant: frames every 8 µs from 0 to 48,
/// then one at 100.
#[rstest]
#[case::absolute_10us(TimeoutSpec::absolute(Duration::from_us(10), 0), &[10, 26, 42, 58, 110])]
#[case::absolute_every_frame(TimeoutSpec::absolute(Duration::ZERO, 0), &[0, 8, 16, 24, 32, 40, 48, 100])]
#[case::absolute_3_frames(TimeoutSpec::absolute(Duration::from_us(100), 3), &[16, 40, 148])]
#[case::packet_10us_cap_50(TimeoutSpec::packet_timer(Duration::from_us(10), Duration::from_us(50)), &[50, 110])]
#[case::packet_10us_no_cap(TimeoutSpec::packet_timer(Duration::from_us(10), Duration::ZERO), &[58, 110])]
#[case::packet_20us_cap_30(TimeoutSpec::packet_timer(Duration::from_us(20), Duration::from_us(30)), &[30, 62, 120])]
#[case::throttle_20us(TimeoutSpec::throttle(Duration::from_us(20)), &[0, 20, 40, 60, 100])]
#[case::throttle_zero(TimeoutSpec::throttle(Duration::ZERO), &[0, 8, 16, 24, 32, 40, 48, 100])]
fn timeout_variants_on_one_trace(#[case] spec: TimeoutSpec, #[case] expect: &[u64]) {
    let mut q = Queue::new(CoalesceSpec::Timeout(spec));
    for t in [0, 8, 16, 24, 32, 40, 48, 100] {
        q.frame(us(t), UNMARKED);
    }
    q.advance(us(1_000));
    assert_eq!(q.irqs, at_us(expect));
}

#[test]
fn packet_timer_rearms_at_every_frame_step_by_step() {
    let mut t = Timeout::new(TimeoutSpec::packet_timer(Duration::from_us(10), Duration::from_us(25)));
    let f = DmaCompletion { marked: false, bytes: TINY, other_pending: 0 };
    assert_eq!(t.on_dma_complete(us(0), f), Decision::arm(us(10)));
    assert_eq!(t.on_dma_complete(us(8), f), Decision::arm(us(18)));
    assert_eq!(t.on_dma_complete(us(16), f), Decision::arm(us(25)), "capped at first + 25");
    assert_eq!(t.on_timer(us(25)), Decision::raise_and(TimerCmd::Cancel));
}

#[rstest]
#[case::gap_20us_frames_every_3us(20, 3, 200)]
#[case::gap_7us_frames_every_2us(7, 2, 100)]
#[case::gap_50us_frames_every_1us(50, 1, 300)]
fn throttle_never_raises_twice_within_the_gap(#[case] gap_us: u64, #[case] every_us: u64, #[case] until_us: u64) {
    let mut q = Queue::new(CoalesceSpec::Timeout(TimeoutSpec::throttle(Duration::from_us(gap_us))));
    let mut t = 0;
    while t < until_us {
        q.frame(us(t), UNMARKED);
        t += every_us;
    }
    q.advance(us(until_us + 1_000));
    // Saturated: exactly one interrupt per gap, starting with the first
    // frame. A frame landing on a tick completes just after that tick's
    // interrupt, so the last frame is reported at the next tick.
    let last_frame = (until_us - 1) / every_us * every_us;
    let expect: Vec<u64> = (0..=last_frame / gap_us + 1).map(|k| k * gap_us).collect();
    assert_eq!(q.irqs, at_us(&expect));
}

// ---------------------------------------------------------------------------
// Re-arm by the host
// ---------------------------------------------------------------------------

/// An unmarked frame at 0 arms the fallback timer at `delay`; the host then
/// re-arms at t=5 having seen everything (e.g. it was busy-polling).
#[rstest]
#[case::timeout(CoalesceSpec::Timeout(MYRI), 75)]
#[case::timeout_packet(
    CoalesceSpec::Timeout(TimeoutSpec::packet_timer(Duration::from_us(20), Duration::from_us(90))),
    20
)]
#[case::openmx(CoalesceSpec::OpenMx(MYRI), 75)]
#[case::stream(CoalesceSpec::Stream(MYRI), 75)]
#[case::dim(CoalesceSpec::Adaptive(AdaptiveSpec::Dim(DimSpec::EQE)), 8)]
#[case::openmx_adaptive(CoalesceSpec::OpenMxAdaptive(DimSpec::EQE), 8)]
fn rearm_with_empty_ring_resets(#[case] spec: CoalesceSpec, #[case] delay_us: u64) {
    let f = DmaCompletion { marked: false, bytes: TINY, other_pending: 0 };
    let mut c = spec.build();
    assert_eq!(c.on_dma_complete(us(0), f), Decision::arm(us(delay_us)));
    assert_eq!(c.on_rearm(us(5), 0), Decision { raise: false, timer: TimerCmd::Cancel });
    // Nothing is unreported: a stray (stale) timer does nothing.
    assert_eq!(c.on_timer(us(delay_us)), Decision::NONE);
    // The next frame starts a fresh window.
    assert_eq!(c.on_dma_complete(us(100), f), Decision::arm(us(100 + delay_us)));

    // With frames still in the ring the state is kept.
    let mut c = spec.build();
    c.on_dma_complete(us(0), f);
    assert_eq!(c.on_rearm(us(5), 1), Decision::NONE);
    assert!(c.on_timer(us(delay_us)).raise);
}

#[test]
fn throttle_rearm_with_empty_ring_cancels_the_pending_raise() {
    let f = DmaCompletion { marked: false, bytes: TINY, other_pending: 0 };
    let mut c = Timeout::new(TimeoutSpec::throttle(Duration::from_us(20)));
    assert_eq!(c.on_dma_complete(us(0), f), Decision::raise_and(TimerCmd::Cancel));
    c.on_irq_raised(us(0));
    assert_eq!(c.on_rearm(us(1), 0), Decision { raise: false, timer: TimerCmd::Cancel });
    assert_eq!(c.on_dma_complete(us(2), f), Decision::arm(us(20)));
    assert_eq!(c.on_rearm(us(3), 0), Decision { raise: false, timer: TimerCmd::Cancel });
    assert_eq!(c.on_timer(us(20)), Decision::NONE);
    // The gap still counts from the last interrupt, not from the re-arm.
    assert_eq!(c.on_dma_complete(us(21), f), Decision::raise_and(TimerCmd::Cancel));
}

// ---------------------------------------------------------------------------
// Contract checks on random traces
// ---------------------------------------------------------------------------

/// xorshift64*: a deterministic trace generator for tests.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn all_specs() -> Vec<CoalesceSpec> {
    let mut v = vec![
        CoalesceSpec::Disabled,
        CoalesceSpec::Adaptive(AdaptiveSpec::Dim(DimSpec::EQE)),
        CoalesceSpec::Adaptive(AdaptiveSpec::Itr),
        CoalesceSpec::OpenMxAdaptive(DimSpec::EQE),
    ];
    let timeouts = [
        MYRI,
        TimeoutSpec::absolute(Duration::from_us(10), 16),
        TimeoutSpec::absolute(Duration::ZERO, 0),
        TimeoutSpec::absolute(Duration::from_ns(1), 0),
        TimeoutSpec::packet_timer(Duration::from_us(8), Duration::from_us(30)),
        TimeoutSpec::packet_timer(Duration::from_us(8), Duration::ZERO),
        TimeoutSpec::throttle(Duration::from_us(12)),
    ];
    for t in timeouts {
        v.extend([CoalesceSpec::Timeout(t), CoalesceSpec::OpenMx(t), CoalesceSpec::Stream(t)]);
    }
    v
}

/// Random frames (bursty, some marked, some with DMAs pending) against fast
/// and slow hosts: no policy ever arms its timer at or before `now` (checked
/// in `Queue::apply`) and, with a host that drains everything, every frame is
/// eventually reported and consumed.
#[rstest]
#[case::fast_host(None, u32::MAX, 1)]
#[case::slow_host(Some(Duration::from_us(7)), u32::MAX, 2)]
#[case::slow_host_small_budget(Some(Duration::from_us(3)), 4, 3)]
fn no_timer_in_the_past_on_random_traces(#[case] service: Option<Duration>, #[case] budget: u32, #[case] seed: u64) {
    for spec in all_specs() {
        let mut q = Queue::new(spec);
        if let Some(s) = service {
            q = q.slow_host(s, budget);
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
        let mut t = 0;
        let n = 5_000;
        for _ in 0..n {
            t += match rng.below(4) {
                0 => rng.below(200_000), // idle gap up to 200 µs
                _ => rng.below(3_000),   // burst
            };
            let marked = rng.below(4) == 0;
            let bytes = 60 + rng.below(1_440) as u32;
            let pending = rng.below(3) as u32;
            q.dma(ns(t), marked, bytes, pending);
        }
        q.advance(ns(t) + Duration::from_ms(100));
        if budget == u32::MAX {
            assert_eq!(q.consumed, n, "{spec:?}: frames left unreported");
            assert!(q.timer.is_none() || q.ring == 0);
        }
        assert!(!q.irqs.is_empty());
        assert!(q.irqs.windows(2).all(|w| w[0] <= w[1]));
    }
}

// ---------------------------------------------------------------------------
// Adaptive: DIM and ITR in closed loops
// ---------------------------------------------------------------------------

/// A saturated 10 GbE stream of full frames (one every 1.2 µs) for `ms`.
fn bulk<C: Coalescer + ?Sized>(q: &mut Queue<C>, from: Instant, ms: u64) -> Instant {
    let end = from + Duration::from_ms(ms);
    let mut t = from;
    while t < end {
        q.dma(t, UNMARKED, FULL, 0);
        t += Duration::from_ns(1_200);
    }
    t
}

/// Ping-pong: the next request arrives `turnaround` after the host saw the
/// previous one (i.e. after the interrupt).
fn ping_pong<C: Coalescer + ?Sized>(q: &mut Queue<C>, from: Instant, rounds: u32, turnaround: Duration) -> Instant {
    let mut t = from;
    for _ in 0..rounds {
        let before = q.irqs.len();
        q.dma(t, UNMARKED, TINY, 0);
        let mut step = t;
        while q.irqs.len() == before {
            step += Duration::from_us(1);
            q.advance(step);
        }
        t = *q.irqs.last().unwrap() + turnaround;
    }
    t
}

fn usec(c: &dyn Coalescer) -> u64 {
    c.current_delay().unwrap().as_ps() / 1_000_000
}

#[test]
fn dim_moves_to_high_usec_under_bulk_and_parks() {
    let mut q = Queue::with(Box::new(Dim::new()));
    assert_eq!(usec(&*q.policy), 8, "NET_DIM_DEF_PROFILE_EQE");
    let t = bulk(&mut q, Instant::ZERO, 200);
    assert_eq!(usec(&*q.policy), 256);
    assert_eq!(q.policy.tuner().tune_state(), DimTuneState::ParkingOnTop);
    // Stable traffic: it stays parked there.
    let irqs = q.irqs.len();
    bulk(&mut q, t, 100);
    assert_eq!(usec(&*q.policy), 256);
    assert_eq!(q.policy.tuner().tune_state(), DimTuneState::ParkingOnTop);
    // ~214 frames per 256 µs window: about 3900 interrupts per second.
    assert!((380..=400).contains(&(q.irqs.len() - irqs)), "{}", q.irqs.len() - irqs);
}

#[test]
fn dim_moves_to_low_usec_under_ping_pong_and_parks() {
    let mut q = Queue::with(Box::new(Dim::new()));
    let t = ping_pong(&mut q, Instant::ZERO, 2_000, Duration::from_us(10));
    assert_eq!(usec(&*q.policy), 1);
    assert_eq!(q.policy.tuner().tune_state(), DimTuneState::ParkingOnTop);
    // Then bulk traffic pulls it right, and ping-pong back left again.
    let t = bulk(&mut q, t, 300);
    assert_eq!(usec(&*q.policy), 256);
    ping_pong(&mut q, t, 3_000, Duration::from_us(10));
    assert_eq!(usec(&*q.policy), 1);
}

#[test]
fn openmx_adaptive_marked_frames_skip_the_dim_timer() {
    let mut q = Queue::with(Box::new(OpenMxAdaptive::new()));
    let t = bulk(&mut q, Instant::ZERO, 200);
    assert_eq!(usec(&*q.policy), 256);
    let irqs = q.irqs.len();
    q.advance(t + Duration::from_ms(1));
    let t = t + Duration::from_ms(1);
    q.dma(t, MARKED, TINY, 0);
    assert_eq!(q.irqs.len(), irqs + 2, "drain of the bulk tail, then the marked frame");
    assert_eq!(*q.irqs.last().unwrap(), t);
}

#[test]
fn itr_classifies_bulk_then_latency() {
    let mut q = Queue::with(Box::new(Itr::new()));
    assert_eq!(q.policy.class(), ItrClass::LowestLatency);
    let t = bulk(&mut q, Instant::ZERO, 50);
    assert_eq!(q.policy.class(), ItrClass::BulkLatency);
    // Smoothed toward IXGBE_8K_ITR (500); ixgbe's integer smoothing stalls
    // where the step drops below one unit: 10*500*490 / (9*500 + 490) = 490.98.
    assert_eq!(q.policy.itr(), 490);
    assert_eq!(q.policy.current_delay(), Some(Duration::from_ns(122_500)));
    // Sparse small requests: one class down per interrupt, then the rate
    // climbs toward IXGBE_100K_ITR.
    let mut t = t + Duration::from_ms(1);
    let mut classes = Vec::new();
    for _ in 0..40 {
        q.dma(t, UNMARKED, 64, 0);
        t += Duration::from_us(200);
        classes.push(q.policy.class());
    }
    // Each of these frames is raised at once (the gap is open), so its own
    // interrupt already reclassifies: bulk -> low -> lowest.
    assert_eq!(classes[..3], [ItrClass::LowLatency, ItrClass::LowestLatency, ItrClass::LowestLatency]);
    assert_eq!(q.policy.class(), ItrClass::LowestLatency);
    assert_eq!(q.policy.itr(), 40);
    // Never two interrupts closer than the smallest gap.
    assert!(q.irqs.windows(2).all(|w| w[1].since(w[0]) >= Duration::from_us(10)));
}

// ---------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------

#[rstest]
#[case(CoalesceSpec::Disabled, "disabled")]
#[case(CoalesceSpec::Timeout(MYRI), "timeout")]
#[case(CoalesceSpec::OpenMx(MYRI), "openmx")]
#[case(CoalesceSpec::Stream(MYRI), "stream")]
#[case(CoalesceSpec::Adaptive(AdaptiveSpec::Dim(DimSpec::EQE)), "adaptive")]
#[case(CoalesceSpec::Adaptive(AdaptiveSpec::Itr), "adaptive")]
#[case(CoalesceSpec::OpenMxAdaptive(DimSpec::EQE), "openmx-adaptive")]
fn strategy_names(#[case] spec: CoalesceSpec, #[case] name: &str) {
    assert_eq!(spec.strategy_name(), name);
    assert_eq!(spec.build().name(), name);
    assert!(crate::config::variant_names::<crate::config::Coalescing>().contains(&name));
}
