//! A walk: one core's accesses to objects of one class, made in turn with
//! the die's fill clock and the class's counters kept between them
//! ([`Walk`]), for the footprints' paths (`footprint`), and the stall of
//! a path's lines as the core overlaps them ([`Step`]): of any accesses
//! by their lines in flight ([`Flight`], [`Walk::settle`]), of a
//! footprint row's two in closed form (`Walk::settle_two`, the same
//! stall).

use super::*;

/// Where a path's lines stand in its dependency chain: lines at the same
/// step are independent (their addresses are known before any of them
/// arrives, and no locked instruction stands between their loads), so the
/// core has them in flight together; a line at step `s + 1` waits for one
/// at step `s` (its address is read from it, a pointer chase, or a locked
/// instruction orders it after: "Reads or writes cannot be reordered with
/// I/O instructions, locked instructions, or serializing instructions",
/// Intel 64 and IA-32 Architectures Software Developer's Manual, Vol. 3A
/// §8.2.2). A path's stall is the sum over its steps of each step's
/// (`Walk::settle`), its critical path, not the sum over its lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The step of the first line.
    pub first: u8,
    /// Whether each line waits for the one before (steps `first`,
    /// `first + 1`, ...), or all are at step `first`.
    pub chain: bool,
}

impl Step {
    /// Lines in flight together at step `s`.
    pub const fn at(s: u8) -> Step {
        Step { first: s, chain: false }
    }

    /// Lines one after another from step `s`: each waits for the one
    /// before.
    pub const fn chain(s: u8) -> Step {
        Step { first: s, chain: true }
    }
}

/// Steps of a path's chain a walk keeps apart; lines past the last are
/// priced one after another.
const STEPS: usize = 4;

/// Lines of an access of `n` lines at `step` that are at step `s` of the
/// path's chain.
#[inline(always)]
const fn at_step(n: u32, step: Step, s: usize) -> u64 {
    let f = step.first as usize;
    if step.chain {
        (s >= f && s < f + n as usize) as u64
    } else if s == f {
        n as u64
    } else {
        0
    }
}

/// Step `s`'s stall in [`Walk::settle_two`] of accesses `a` and `b`, with
/// `fb` fill buffers: its slowest line while its lines fit them, else as
/// many waves as it takes, each the step's mean transfer.
#[inline(always)]
fn step_cost(fb: u64, a: (Duration, u32, Step), b: (Duration, u32, Step), s: usize) -> Duration {
    let ((la, na, sa), (lb, nb, sb)) = (a, b);
    let ka = if la.is_zero() { 0 } else { at_step(na, sa, s) };
    let kb = if lb.is_zero() { 0 } else { at_step(nb, sb, s) };
    let n = ka + kb;
    if n == 0 {
        return Duration::ZERO;
    }
    let slowest = (if ka > 0 { la } else { Duration::ZERO }).max(if kb > 0 { lb } else { Duration::ZERO });
    if n <= fb {
        slowest
    } else {
        let waves = n.div_ceil(fb);
        slowest.max(Duration::from_ps((la.times(ka) + lb.times(kb)).as_ps() * waves / n))
    }
}

/// Lines of an access of `n` lines at `step` past the [`STEPS`] a walk
/// keeps apart.
#[inline(always)]
const fn past(n: u32, step: Step) -> u64 {
    let mut kept = 0;
    let mut s = 0;
    while s < STEPS {
        kept += at_step(n, step, s);
        s += 1;
    }
    n as u64 - kept
}

/// The transfer one line of `obj` costs on a miss by die `die`: from
/// another die's L2 while the lines last there, else from memory (this
/// die's own lines, if not a hit, were evicted). Out of line: every
/// footprint row's access shares this one copy, which keeps a path's hot
/// code small (docs/performance.md).
#[inline(never)]
fn miss_line(cc: &CacheCosts, topo: &Topology, stats: &CacheStats, obj: &Obj, die: u16) -> Duration {
    match obj.owner.die_index() {
        Some(d) if d != die && stats.resident(d, obj.stamp) => cc.line(topo, obj.owner, die),
        _ => cc.memory,
    }
}

/// The lines of one step in flight: how many, their transfers' sum and
/// the slowest.
#[derive(Clone, Copy, Debug, Default)]
struct InFlight {
    lines: u64,
    sum: Duration,
    slowest: Duration,
}

/// One path's lines in flight by step ([`Walk::access_at`]), priced by
/// [`Walk::settle`]: the pricing of any number of accesses, which
/// `Walk::settle_two` gives in closed form for a footprint row's two
/// (the tests compare them). Kept by the path's caller, apart from the
/// [`Walk`]: a walk of one access (`CacheCosts::access`, on most events)
/// then stays small enough for its fields to live in registers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flight([InFlight; STEPS]);

/// One core's accesses to objects of one class from one side, made in
/// turn: each is [`CacheCosts::access`]'s (a hit, a miss, the stall of a
/// line from another die or from memory, the object then in this die's L2
/// and this core's L1), and the die's fill clock and the class's counters
/// are kept here between them, written back once by [`Walk::end`]. A path
/// of the 2009 stack (`footprint`) touches up to six objects on one core;
/// walking them costs one update of the clock and the counters instead of
/// one per object. Every outcome is the one the accesses made one by one
/// in the same order give (the tests compare them).
#[derive(Debug)]
#[must_use = "a walk's counts and fill clock reach the cache only by `Walk::end`"]
pub struct Walk {
    at: Cpu,
    class: ObjClass,
    side: Side,
    /// Die `at.die`'s fill clock, with the lines the walk brought in.
    fill: u64,
    hits: u64,
    misses: u64,
    /// The stall of the walk's accesses so far.
    cost: Duration,
}

impl Walk {
    /// A walk of core `at` through objects of `class`, from `side`.
    #[inline(always)]
    pub fn begin(stats: &CacheStats, at: Cpu, class: ObjClass, side: Side) -> Walk {
        Walk { at, class, side, fill: stats.fill[at.die as usize], hits: 0, misses: 0, cost: Duration::ZERO }
    }

    /// Accesses `lines` lines of `obj` (of the walk's class): a hit if they
    /// are in this die's L2, else a miss that brings them in, charged a
    /// transfer from the die whose L2 still has them or from memory (lines
    /// this die evicted come from memory); a hit on lines modified in a
    /// sibling core's L1 counts as a miss (`CacheStats::in_sibling_l1`)
    /// and costs nothing. `obj` is then in this die's L2, stamped after
    /// the lines a miss brought in, and in this core's L1. Written without
    /// a branch on the hit but for the stall (a hit leaves the owner and
    /// the fill clock as they are), which hits and misses alternating
    /// unpredictably would mispredict.
    #[inline(always)]
    pub fn access(&mut self, cc: &CacheCosts, topo: &Topology, stats: &CacheStats, obj: &mut Obj, lines: u32) {
        let line = self.take(cc, topo, stats, obj, lines);
        if !line.is_zero() {
            self.cost += line.times(lines as u64);
        }
    }

    /// [`Walk::access`] of `lines` lines of `obj` at step `step` of the
    /// current path's chain: a miss's transfers wait in `flight` for
    /// [`Walk::settle`] to price the path's steps.
    #[inline(always)]
    pub fn access_at(
        &mut self,
        cc: &CacheCosts,
        topo: &Topology,
        stats: &CacheStats,
        obj: &mut Obj,
        lines: u32,
        step: Step,
        flight: &mut Flight,
    ) {
        let line = self.take(cc, topo, stats, obj, lines);
        if line.is_zero() {
            return;
        }
        if step.chain {
            for i in 0..lines as usize {
                self.in_flight(flight, step.first as usize + i, line, 1);
            }
        } else {
            self.in_flight(flight, step.first as usize, line, lines as u64);
        }
    }

    /// `n` lines of one transfer `line` each at step `step`.
    #[inline(always)]
    fn in_flight(&mut self, flight: &mut Flight, step: usize, line: Duration, n: u64) {
        match flight.0.get_mut(step) {
            Some(s) => {
                s.lines += n;
                s.sum += line.times(n);
                s.slowest = s.slowest.max(line);
            }
            None => self.cost += line.times(n),
        }
    }

    /// Prices the current path's lines in flight and starts the next
    /// path's: each step costs its slowest line while its lines fit the
    /// core's outstanding misses (`cc.fill_buffers`), else as many waves
    /// of them as it takes, each the step's mean transfer (one fill buffer:
    /// the sum of its lines, every line after the one before). The paths
    /// of a walk follow one another (each ends in a locked instruction or
    /// hundreds of instructions before the next begins), so their steps
    /// add up.
    #[inline(always)]
    pub fn settle(&mut self, cc: &CacheCosts, flight: &mut Flight) {
        let b = cc.fill_buffers;
        for s in &mut flight.0 {
            if s.lines > 0 {
                // In one wave the lines' mean is at most the slowest: no
                // division on the common path (a step of a few lines).
                self.cost += if s.lines <= b {
                    s.slowest
                } else {
                    let waves = s.lines.div_ceil(b);
                    s.slowest.max(Duration::from_ps(s.sum.as_ps() * waves / s.lines))
                };
                *s = InFlight::default();
            }
        }
    }

    /// Prices the lines in flight of a path of two accesses, `a` then `b`,
    /// each the transfer one of its lines costs (as [`Walk::take`] returns
    /// it: [`Duration::ZERO`] for none), its lines and their [`Step`]: the
    /// stall [`Walk::access_at`] of each then [`Walk::settle`] charge, in
    /// closed form. Every count it uses but the fill buffers is a constant
    /// of the footprint's row at each call, so the steps no access reaches
    /// fold away and a step of one access costs its transfer (or its
    /// waves); no array of steps is kept.
    #[inline(always)]
    pub(super) fn settle_two(&mut self, cc: &CacheCosts, a: (Duration, u32, Step), b: (Duration, u32, Step)) {
        let ((la, na, sa), (lb, nb, sb), fb) = (a, b, cc.fill_buffers);
        // Lines past the steps kept apart: one after another.
        let mut cost = la.times(past(na, sa)) + lb.times(past(nb, sb));
        // The steps written out (`STEPS` of them), each at a constant
        // index: a loop over them stays a loop where three paths inline.
        const { assert!(STEPS == 4) };
        cost += step_cost(fb, a, b, 0) + step_cost(fb, a, b, 1) + step_cost(fb, a, b, 2) + step_cost(fb, a, b, 3);
        self.cost += cost;
    }

    /// The accounting of [`Walk::access`]; returns the transfer one line
    /// of a miss that is charged costs ([`Duration::ZERO`]: a hit, or
    /// lines that cost nothing).
    #[inline(always)]
    pub(super) fn take(
        &mut self,
        cc: &CacheCosts,
        topo: &Topology,
        stats: &CacheStats,
        obj: &mut Obj,
        lines: u32,
    ) -> Duration {
        debug_assert_eq!(obj.class, self.class, "a walk is through objects of one class");
        if lines == 0 {
            return Duration::ZERO;
        }
        let (n, die) = (lines as u64, self.at.die);
        let here = obj.owner == Owner::die(die);
        let age = self.fill.wrapping_sub(obj.stamp);
        let hit = here & (age < stats.capacity);
        let line = if hit { Duration::ZERO } else { miss_line(cc, topo, stats, obj, die) };
        let sibling = here & (obj.core != self.at.core) & (obj.core != NO_CORE) & (age < stats.l1_capacity);
        let miss = if hit { 0 } else { n };
        let counted = if sibling { n } else { miss };
        self.hits += n - counted;
        self.misses += counted;
        self.fill += miss;
        obj.owner = Owner::die(die);
        obj.stamp = self.fill;
        obj.core = self.at.core;
        line
    }

    /// Reads `lines` lines of `obj`, which another core writes, through the
    /// reader's copy `rc`: [`CacheCosts::read`]'s rule (counted, charged
    /// nothing, the owner left as it is) on the walk's fill clock. `obj`
    /// is of the walk's class.
    #[inline(always)]
    pub fn read(&mut self, stats: &CacheStats, obj: &Obj, rc: &mut ReadCopy, lines: u32) {
        debug_assert_eq!(obj.class, self.class, "a walk is through objects of one class");
        if lines == 0 {
            return;
        }
        let (n, at) = (lines as u64, self.at);
        let now = (obj.owner, obj.core, obj.stamp);
        let holds =
            |owner: Owner, stamp: u64| owner == Owner::die(at.die) && self.fill.wrapping_sub(stamp) < stats.capacity;
        let fresh = rc.seen == now && holds(rc.copy.owner, rc.copy.stamp);
        let sibling = obj.owner == Owner::die(at.die)
            && obj.core != at.core
            && obj.core != NO_CORE
            && self.fill.wrapping_sub(obj.stamp) < stats.l1_capacity;
        let in_l2 = holds(obj.owner, obj.stamp) && !sibling;
        let miss = if fresh || in_l2 { 0 } else { n };
        self.hits += n - miss;
        self.misses += miss;
        self.fill += miss;
        rc.copy.owner = Owner::die(at.die);
        rc.copy.stamp = self.fill;
        rc.seen = now;
    }

    /// Counts `lines` accesses of the walk's class with no object of their
    /// own, `miss` of them lines brought into this die's L2 (what a DMA
    /// wrote) and the rest hits (per-CPU lines that stay in the core's
    /// caches).
    #[inline(always)]
    pub fn count(&mut self, lines: u64, miss: u64) {
        self.hits += lines - miss;
        self.misses += miss;
        self.fill += miss;
    }

    /// The walk's counts and fill clock into `stats` (its counts also the
    /// measured thread's if the walk's core is watched: `Thread`, as
    /// `CacheStats::count` counts each access); returns its stall.
    #[inline(always)]
    pub fn end(self, stats: &mut CacheStats) -> Duration {
        let (c, s) = (self.class as usize, self.side as usize);
        let k = &mut stats.counts[c][s];
        k.hits += self.hits;
        k.misses += self.misses;
        if self.at.core == stats.thread.core {
            let t = &mut stats.thread.counts[c][s];
            t.hits += self.hits;
            t.misses += self.misses;
        }
        stats.fill[self.at.die as usize] = self.fill;
        self.cost
    }
}
