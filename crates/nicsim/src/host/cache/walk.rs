//! A walk: one core's accesses to objects of one class, made in turn with
//! the die's fill clock and the class's counters kept between them
//! ([`Walk`]), for the footprints' paths (`footprint`).

use super::*;

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
        debug_assert_eq!(obj.class, self.class, "a walk is through objects of one class");
        if lines == 0 {
            return;
        }
        let (n, die) = (lines as u64, self.at.die);
        let here = obj.owner == Owner::die(die);
        let age = self.fill.wrapping_sub(obj.stamp);
        let hit = here & (age < stats.capacity);
        if !hit {
            // Another die's L2 while the lines last there, else memory
            // (this die's own lines, if not a hit, were evicted).
            let line = match obj.owner.die_index() {
                Some(d) if d != die && stats.resident(d, obj.stamp) => cc.line(topo, obj.owner, die),
                _ => cc.memory,
            };
            self.cost += line.times(n);
        }
        let sibling = here & (obj.core != self.at.core) & (obj.core != NO_CORE) & (age < stats.l1_capacity);
        let miss = if hit { 0 } else { n };
        let counted = if sibling { n } else { miss };
        self.hits += n - counted;
        self.misses += counted;
        self.fill += miss;
        obj.owner = Owner::die(die);
        obj.stamp = self.fill;
        obj.core = self.at.core;
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
