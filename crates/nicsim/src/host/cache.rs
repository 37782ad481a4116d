//! The cache model: where each object of the receive path is, per die L2,
//! with the L2s' capacity, and which core's L1 has its latest lines.
//!
//! Every modelled object (endpoint descriptor, event ring, NAPI and transmit
//! state, pull handles, the shared receive queue's data slots, the driver's
//! and the library's private state, application buffers) remembers which die's
//! L2 last touched it and when, on that die's *fill clock*: the number of
//! lines brought into that L2 so far. An object is in the L2 of die `d` if it
//! was last touched there and fewer than the L2's capacity in lines were
//! brought in since (LRU over lines: a line is evicted once the cache filled
//! its capacity after its last use). Counting insertions rather than
//! distinct lines is exact for FIFO replacement; for LRU it errs by the lines
//! that hit in between and were older than the object, at most the hot
//! working set, a few hundred lines against 65 536 in a 4 MB L2. Set
//! conflicts are not modelled (a 16-way L2 behaves close to fully
//! associative for these access streams).
//!
//! An access from another die pays a transfer cost that depends on the
//! relation (same socket, other socket); an object last written by a DMA, or
//! evicted, is in memory. Ownership moves to the accessor: read sharing is
//! not modelled, which is exact for the producer/consumer objects of this
//! stack, each written on every use. Copies stream: the L2 streamer
//! prefetcher covers a sequential copy once it has seen the first misses of
//! each 4 KB page (`prefetch_misses_per_page`), and brings the rest in ahead
//! of the demand accesses.
//!
//! Hits and misses are counted per object class and per side (kernel/user)
//! as the study's counters count them ([OMX-MQ] §4.4, PAPI on Core 2, whose
//! presets are `PAPI_L2_TCA` = `L2_RQSTS:SELF:ANY:MESI`, the L2 requests
//! including prefetches, and `PAPI_L2_TCM` = `L2_LINES_IN:SELF:ANY`, the
//! lines brought into the L2 including prefetched ones; PAPI
//! `src/papi_events.csv`): a line brought in is a miss, every request an
//! access. A cold streamed copy of `n` lines thus makes `n` misses (every
//! line comes in) over `2n - t` accesses (`n` demand requests and the `n - t`
//! prefetches, `t` the demand misses before the prefetcher runs ahead).
//! Every modelled line access is taken as an L2 access (the study: "our
//! overall workload is much larger than the 32 kB L1 caches").
//!
//! Each core's L1 data cache is tracked only for what it does to those
//! counters: an object also remembers the core that touched it last, whose
//! L1 (`cache.l1d_kib`) keeps its lines until that many lines came into the
//! die after them (the die's fill clock, which counts at least the lines
//! the L2 brought in for that core). Lines another core of the same die
//! modified and still holds in its L1 are not in the shared L2 for the
//! requester: its request finds them in
//! the sibling core ("an HITM response indicates that an L1 miss ... found
//! the missed cache line in the other core in a modified state", Intel 64
//! and IA-32 Optimization Reference Manual, Intel Core microarchitecture
//! bus events) and the line comes in, a miss. [OMX-MQ] §4.2 counts the
//! same way ("seven out of eight packets on average have to move from one
//! cache to another" with 8 cores), and its Table II has the interrupt on
//! the core sharing the cache (S$) miss as often as round-robin, far above
//! the same core (SC). Such a transfer stays on the die and is charged
//! nothing: the study finds S$ the fastest binding, "thanks to cache hits
//! in the receive stack" (§4.2).
//!
//! What is charged: a transfer between dies (by relation), a line that the
//! capacity has evicted (one memory access), and a copy at the cold rate when
//! its source is not in the copier's L2. An object's lines accessed alone
//! ([`CacheCosts::access`]) are charged one after another; a path's
//! footprint (`Walk::settle_two`) costs its dependency chain, the lines
//! of one step in flight together ([`Step`], `cache.fill_buffers`). Accesses that are only counted (the
//! NIC-written descriptor and header lines, the private state, the sender's
//! buffer, copy destinations) cost nothing here: their time is part of the
//! fitted per-packet costs (`host.driver_rx_ns`, `library.*`, the copy rates).
//!
//! This module does not decide *who* accesses *what*: the host path does.

use super::topology::{Cpu, Topology};
use crate::config::{CacheTimes, Relation};
use crate::time::Duration;

/// Classes of modelled objects (for miss-rate reporting).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjClass {
    Endpoint = 0,
    EventRing = 1,
    Napi = 2,
    TxRing = 3,
    /// Lines the NIC wrote by DMA: receive descriptors, frame headers and data.
    Dma = 4,
    PullHandle = 5,
    /// The data slots of the receive queue shared with the library.
    Recvq = 6,
    /// State private to a die (driver, skbs) or a process (library, MPI).
    Private = 7,
    /// The application's send and receive buffers.
    AppBuf = 8,
    /// The driver's and the Open-MX interface's state that follows the
    /// interrupt (the paths' written lines: `footprint`).
    Driver = 9,
    /// The paths' code, fetched by a core whose L1 instruction cache lost
    /// it (`code`).
    Code = 10,
}

/// Number of [`ObjClass`] values.
pub const CLASSES: usize = 11;

impl ObjClass {
    pub const ALL: [ObjClass; CLASSES] = [
        ObjClass::Endpoint,
        ObjClass::EventRing,
        ObjClass::Napi,
        ObjClass::TxRing,
        ObjClass::Dma,
        ObjClass::PullHandle,
        ObjClass::Recvq,
        ObjClass::Private,
        ObjClass::AppBuf,
        ObjClass::Driver,
        ObjClass::Code,
    ];
    pub fn name(self) -> &'static str {
        match self {
            ObjClass::Endpoint => "endpoint",
            ObjClass::EventRing => "event_ring",
            ObjClass::Napi => "napi",
            ObjClass::TxRing => "tx_ring",
            ObjClass::Dma => "dma",
            ObjClass::PullHandle => "pull_handle",
            ObjClass::Recvq => "recvq",
            ObjClass::Private => "private",
            ObjClass::AppBuf => "app_buffer",
            ObjClass::Driver => "driver",
            ObjClass::Code => "code",
        }
    }
}

/// Which side of the user/kernel boundary made an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Kernel = 0,
    User = 1,
}

/// Where an object's lines were last put: in memory ([`Owner::MEMORY`]:
/// never touched, or last written by a DMA), or in the L2 of a die
/// ([`Owner::die`], the host-wide die index), unless evicted since. One
/// number, the die's or `u16::MAX` for memory: every access compares it
/// with the accessor's die, one compare where a tag and a die take two.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Owner(u16);

impl Owner {
    /// In memory.
    pub const MEMORY: Owner = Owner(u16::MAX);

    /// In the L2 of die `d` (below `u16::MAX`, as every die of a
    /// [`Topology`] is).
    #[inline(always)]
    pub const fn die(d: u16) -> Owner {
        debug_assert!(d != u16::MAX);
        Owner(d)
    }

    /// The die whose L2 it is in, or `None` for memory.
    #[inline(always)]
    pub fn die_index(self) -> Option<u16> {
        if self == Owner::MEMORY {
            None
        } else {
            Some(self.0)
        }
    }
}

impl std::fmt::Debug for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.die_index() {
            None => f.write_str("Memory"),
            Some(d) => write!(f, "Die({d})"),
        }
    }
}

/// [`Obj::core`] of an object no core has touched since a DMA wrote it.
pub const NO_CORE: u16 = u16::MAX;

/// One modelled object.
#[derive(Clone, Copy, Debug)]
pub struct Obj {
    pub class: ObjClass,
    pub owner: Owner,
    /// The core that touched it last (its L1 has the latest lines while
    /// they last there), or [`NO_CORE`].
    pub core: u16,
    /// The owner die's fill clock just after the object's last touch there.
    pub stamp: u64,
}

impl Obj {
    pub fn new(class: ObjClass) -> Self {
        Obj { class, owner: Owner::MEMORY, core: NO_CORE, stamp: 0 }
    }

    /// Lines just written by a DMA into die `die`'s L2 (DCA) or memory.
    pub fn dma_written(stats: &CacheStats, at: Owner) -> Self {
        let stamp = match at.die_index() {
            Some(d) => stats.fill[d as usize],
            None => 0,
        };
        Obj { class: ObjClass::Dma, owner: at, core: NO_CORE, stamp }
    }
}

/// A reader's copy of lines another core writes ([`CacheCosts::read`]).
#[derive(Clone, Copy, Debug)]
pub struct ReadCopy {
    /// Where the copy is (its class is the written object's).
    copy: Obj,
    /// The written object's die, core and stamp when the copy was made.
    seen: (Owner, u16, u64),
}

impl ReadCopy {
    pub fn new(class: ObjClass) -> Self {
        ReadCopy { copy: Obj::new(class), seen: (Owner::MEMORY, NO_CORE, u64::MAX) }
    }
}

/// Line accesses of one object class from one side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    pub hits: u64,
    pub misses: u64,
}

/// A host's L2s (their fill clocks) and the hit/miss counters. `repr(C)`:
/// the capacities, which every access reads, share a line, ahead of the
/// counters; the fill clocks follow, in the struct itself (a look-up is
/// one load at an offset of the struct, no handle to load first).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct CacheStats {
    /// Lines one L2 holds.
    capacity: u64,
    /// Lines one core's L1 data cache holds.
    l1_capacity: u64,
    /// \[class]\[side]: an access counts a hit and a miss side by side, in
    /// one cache line of the simulator's own.
    pub counts: [[Count; 2]; CLASSES],
    /// The measured thread's counts (`thread_counts`).
    thread: Thread,
    /// Lines brought into each die's L2 so far.
    fill: Fill,
}

/// Most dies a host has (the topology's validation: `sockets *
/// dies_per_socket` at most 64).
pub const MAX_DIES: usize = 64;

/// Each die's fill clock ([`CacheStats`]), indexed by die: a fixed array,
/// so that a look-up, which the cache model makes at every access, is a
/// mask (every die is below [`MAX_DIES`]) where a vector's took a load of
/// its length, a compare and a branch.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Fill([u64; MAX_DIES]);

impl Fill {
    fn new(dies: usize) -> Self {
        assert!(dies <= MAX_DIES, "{dies} dies: a host has at most {MAX_DIES}");
        Fill([0; MAX_DIES])
    }
}

impl std::ops::Index<usize> for Fill {
    type Output = u64;
    #[inline(always)]
    fn index(&self, die: usize) -> &u64 {
        &self.0[die % MAX_DIES]
    }
}

impl std::ops::IndexMut<usize> for Fill {
    #[inline(always)]
    fn index_mut(&mut self, die: usize) -> &mut u64 {
        &mut self.0[die % MAX_DIES]
    }
}

/// The accesses one core makes, counted apart: what PAPI counts for the
/// thread it measures. PAPI counts per thread by default (`PAPI_GRN_THR`,
/// "Count each individual thread", `PAPI_set_granularity(3)`): the kernel
/// saves and restores the thread's counters when it switches threads, not
/// when an interrupt enters, so the thread's kernel domain
/// (`PAPI_DOM_KERNEL`) is its own system calls and whatever interrupts and
/// softirqs run on its core while it runs; an interrupt served on another
/// core is not in its counts. [OMX-MQ] §4.4 measures the ping-pong's process
/// that way ("observed with PAPI during a ping-pong"), so its kernel column
/// holds the receive stack only when the interrupt is on the process's core
/// (SC), one in eight under round-robin, none on the sibling (S$).
#[derive(Clone, Debug)]
struct Thread {
    /// The core of the measured thread (a process bound to it), or
    /// [`NO_CORE`].
    core: u16,
    /// \[class]\[side] of the accesses made on that core.
    counts: [[Count; 2]; CLASSES],
}

impl CacheStats {
    /// `dies` L2s of `capacity_lines` lines each, and L1 data caches of
    /// `l1_lines` lines.
    pub fn new(dies: usize, capacity_lines: u64, l1_lines: u32) -> Self {
        CacheStats {
            counts: [[Count::default(); 2]; CLASSES],
            thread: Thread { core: NO_CORE, counts: [[Count::default(); 2]; CLASSES] },
            fill: Fill::new(dies),
            capacity: capacity_lines.max(1),
            l1_capacity: l1_lines.max(1) as u64,
        }
    }

    /// Whether `obj`'s latest lines are in the L1 of another core than
    /// `at`'s on the same die: modified there (this stack's objects are
    /// written on every use), so the L2 request of `at` finds them in the
    /// sibling core (a snoop HITM) and the line comes in, an L2 miss to the
    /// counters, though nothing leaves the die. The sibling's L1 still has
    /// them while fewer than its capacity in lines came into the die since
    /// its touch (the die's fill clock: a core's L1 takes at least the
    /// lines its L2 brings in for it). [`NO_CORE`] (lines a DMA wrote) is
    /// in no L1.
    #[inline(always)]
    fn in_sibling_l1(&self, obj: &Obj, at: Cpu) -> bool {
        (obj.owner == Owner::die(at.die))
            & (obj.core != at.core)
            & (obj.core != NO_CORE)
            & (self.fill[at.die as usize].wrapping_sub(obj.stamp) < self.l1_capacity)
    }

    /// Whether lines last touched on `owner` at `stamp` are in die `die`'s L2.
    /// Both tests are made (`&`, no short cut: one branch fewer; the
    /// wrapping difference is meaningless, and unused, for another owner).
    #[inline]
    pub fn holds(&self, owner: Owner, stamp: u64, die: u16) -> bool {
        (owner == Owner::die(die)) & (self.fill[die as usize].wrapping_sub(stamp) < self.capacity)
    }

    /// Whether lines put in die `die`'s L2 at `stamp` are still there.
    #[inline]
    fn resident(&self, die: u16, stamp: u64) -> bool {
        self.fill[die as usize] - stamp < self.capacity
    }

    /// Accesses and misses of `side`, over every object class.
    pub fn side_totals(&self, side: Side) -> (u64, u64) {
        let s = side as usize;
        let h: u64 = self.counts.iter().map(|r| r[s].hits).sum();
        let m: u64 = self.counts.iter().map(|r| r[s].misses).sum();
        (h + m, m)
    }

    pub fn miss_rate(&self, side: Side) -> f64 {
        let s = side as usize;
        let h: u64 = self.counts.iter().map(|r| r[s].hits).sum();
        let m: u64 = self.counts.iter().map(|r| r[s].misses).sum();
        if h + m == 0 {
            0.0
        } else {
            m as f64 / (h + m) as f64
        }
    }

    /// (accesses, misses) of both sides and every class.
    pub fn totals(&self) -> (u64, u64) {
        let m: u64 = self.counts.iter().flatten().map(|c| c.misses).sum();
        let h: u64 = self.counts.iter().flatten().map(|c| c.hits).sum();
        (h + m, m)
    }

    /// Counts `lines` accesses of `class` from `side` on core `core`,
    /// `miss` of them misses (and apart if `core` is the measured thread's).
    #[inline]
    fn count(&mut self, core: u16, class: ObjClass, side: Side, lines: u64, miss: u64) {
        let (c, s) = (class as usize, side as usize);
        let k = &mut self.counts[c][s];
        k.hits += lines - miss;
        k.misses += miss;
        if core == self.thread.core {
            let t = &mut self.thread.counts[c][s];
            t.hits += lines - miss;
            t.misses += miss;
        }
    }

    /// Counts `n` misses of `class` from `side` on core `core` (lines that
    /// bounce between two cores: `host::tx`).
    pub fn count_misses(&mut self, core: u16, class: ObjClass, side: Side, n: u64) {
        self.count(core, class, side, n, n);
    }

    /// Counts the accesses made on core `core` apart from now on: the
    /// thread PAPI measures (`Thread`).
    pub fn watch(&mut self, core: u16) {
        self.thread.core = core;
    }

    /// Accesses and misses of `side` made on the watched core (`Thread`),
    /// over every object class; `None` when no core is watched.
    pub fn thread_side_totals(&self, side: Side) -> Option<(u64, u64)> {
        if self.thread.core == NO_CORE {
            return None;
        }
        let s = side as usize;
        let h: u64 = self.thread.counts.iter().map(|r| r[s].hits).sum();
        let m: u64 = self.thread.counts.iter().map(|r| r[s].misses).sum();
        Some((h + m, m))
    }

    /// The watched core's counts of class `class` and side `side`
    /// (`Thread`); `None` when no core is watched.
    pub fn thread_count(&self, class: ObjClass, side: Side) -> Option<Count> {
        (self.thread.core != NO_CORE).then(|| self.thread.counts[class as usize][side as usize])
    }

    /// `lines` lines enter die `die`'s L2; returns its fill clock after.
    #[inline]
    fn insert(&mut self, die: u16, lines: u64) -> u64 {
        let f = &mut self.fill[die as usize];
        *f += lines;
        *f
    }
}

/// Transfer costs by relation, copy bandwidths, and the line geometry.
#[derive(Clone, Debug)]
pub struct CacheCosts {
    /// A line's transfer by the relation of the two dies, indexed by
    /// `Relation as usize` (`Topology::die_distance`).
    by_relation: [Duration; 3],
    /// A line's transfer from die `from` to die `to` at `[from][to]`, for
    /// the topology given to [`CacheCosts::for_topology`]: one look-up
    /// where the relation takes two (the dies' sockets), a fixed array of
    /// [`MAX_DIES`] squared (32 KiB a world) indexed by masks, with no
    /// multiply nor bounds check at a miss. `None` until then
    /// ([`CacheCosts::line`] then finds the relation).
    by_pair: Option<Box<[[Duration; MAX_DIES]; MAX_DIES]>>,
    /// Dies of that topology.
    dies: usize,
    memory: Duration,
    copy_hot_bps: u64,
    copy_cold_bps: u64,
    line_bytes: u64,
    /// Lines of one page the streamer prefetcher works within.
    page_lines: u64,
    /// Demand misses per page of a cold sequential copy.
    prefetch_misses: u64,
    /// Line misses one core keeps in flight at once (`cache.fill_buffers`,
    /// at least 1): a [`Walk`]'s independent lines overlap up to this many.
    pub(super) fill_buffers: u64,
}

/// Bytes of the page the L2 streamer prefetches within: it does not
/// prefetch across a 4 KB boundary (Intel 64 and IA-32 Architectures
/// Optimization Reference Manual, "Hardware prefetching for second-level
/// cache", Intel Core microarchitecture).
const PREFETCH_PAGE_BYTES: u64 = 4096;

impl CacheCosts {
    pub fn new(c: &CacheTimes) -> Self {
        let line_bytes = (c.line_bytes as u64).max(1);
        CacheCosts {
            by_relation: {
                // Within a die the L2 is shared: nothing moves.
                let mut t = [Duration::ZERO; 3];
                t[Relation::SameDie as usize] = Duration::ZERO;
                t[Relation::SameSocket as usize] = c.same_socket;
                t[Relation::OtherSocket as usize] = c.other_socket;
                t
            },
            by_pair: None,
            dies: 0,
            memory: c.memory,
            copy_hot_bps: c.copy_hot_bytes_per_s,
            copy_cold_bps: c.copy_cold_bytes_per_s,
            line_bytes,
            page_lines: (PREFETCH_PAGE_BYTES / line_bytes).max(1),
            prefetch_misses: c.prefetch_misses_per_page as u64,
            fill_buffers: (c.fill_buffers as u64).max(1),
        }
    }

    /// These costs with each pair of `topo`'s dies' line transfer looked
    /// up at once ([`CacheCosts::line`] gives the same durations): the
    /// costs of a world on that topology.
    pub fn for_topology(mut self, topo: &Topology) -> Self {
        let dies = topo.dies() as usize;
        assert!(dies <= MAX_DIES, "{dies} dies: a host has at most {MAX_DIES}");
        let mut t = Box::new([[Duration::ZERO; MAX_DIES]; MAX_DIES]);
        for (from, row) in t.iter_mut().enumerate().take(dies) {
            for (to, d) in row.iter_mut().enumerate().take(dies) {
                *d = self.by_relation[topo.die_distance(from as u16, to as u16)];
            }
        }
        self.by_pair = Some(t);
        self.dies = dies;
        self
    }

    /// Lines `bytes` bytes span.
    #[inline]
    pub fn lines(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.line_bytes)
    }

    /// Cost of one line moving from `from` to a core of die `to`: by the
    /// relation of the two dies (`Topology::die_distance`), looked up by
    /// the pair when these costs are `topo`'s ([`CacheCosts::for_topology`]).
    #[inline(always)]
    pub fn line(&self, topo: &Topology, from: Owner, to: u16) -> Duration {
        match from.die_index() {
            None => self.memory,
            Some(d) => {
                debug_assert!(self.by_pair.is_none() || self.dies == topo.dies() as usize);
                match &self.by_pair {
                    Some(t) => t[d as usize % MAX_DIES][to as usize % MAX_DIES],
                    None => self.by_relation[topo.die_distance(d, to)],
                }
            }
        }
    }

    /// Accesses `lines` lines of `obj` from core `at`; returns the stall and
    /// moves ownership (a [`Walk`] of one access). Out of line: one copy
    /// serves every caller, which keeps a ping-pong's hot code nearer the
    /// size of the instruction cache (inlined at each caller, the bench's
    /// ping-pong took 5 % more CPU time and its stream the same;
    /// docs/performance.md).
    #[inline(never)]
    pub fn access(
        &self,
        topo: &Topology,
        stats: &mut CacheStats,
        obj: &mut Obj,
        at: Cpu,
        side: Side,
        lines: u32,
    ) -> Duration {
        if lines == 0 {
            return Duration::ZERO;
        }
        let mut walk = Walk::begin(stats, at, obj.class, side);
        walk.access(self, topo, stats, obj, lines);
        walk.end(stats)
    }

    /// Counts the read of `lines` lines of `obj`, which another core
    /// writes, from core `at`, through the reader's copy `rc`, and charges
    /// nothing (the read's time is in the caller's fitted cost, as for the
    /// other lines only counted: see the module's documentation). Read
    /// sharing: the reader's copy serves it while the writer has not
    /// written since the last read and the copy is still in the die's L2;
    /// else the lines are a miss unless the writer's are in this die's L2
    /// and not modified in the sibling core's L1. The owner stays the
    /// writer's. A write is seen as the writer's object changing (its die,
    /// core or fill stamp): two writes on one core with no line brought
    /// into its die between them look like one.
    pub fn read(&self, stats: &mut CacheStats, obj: &Obj, rc: &mut ReadCopy, at: Cpu, side: Side, lines: u32) {
        if lines == 0 {
            return;
        }
        let n = lines as u64;
        let now = (obj.owner, obj.core, obj.stamp);
        let fresh = rc.seen == now && stats.holds(rc.copy.owner, rc.copy.stamp, at.die);
        let in_l2 = stats.holds(obj.owner, obj.stamp, at.die) && !stats.in_sibling_l1(obj, at);
        let miss = if fresh || in_l2 { 0 } else { n };
        stats.count(at.core, obj.class, side, n, miss);
        rc.copy.owner = Owner::die(at.die);
        rc.copy.stamp = stats.insert(at.die, miss);
        rc.seen = now;
    }

    /// Counts `lines` accesses of `obj` from core `at` and moves it there,
    /// charging nothing (their time is in a fitted cost; see the module
    /// documentation). Out of line, as [`CacheCosts::access`] is.
    #[inline(never)]
    pub fn touch(&self, stats: &mut CacheStats, obj: &mut Obj, at: Cpu, side: Side, lines: u64) {
        if lines == 0 {
            return;
        }
        // Each caller touches one kind of object (private state that stays
        // in its core's caches, lines a DMA just wrote), whose outcome
        // repeats: a branch on it is predicted, and spares a hit the fill
        // clock's store.
        if stats.holds(obj.owner, obj.stamp, at.die) {
            let sibling = stats.in_sibling_l1(obj, at);
            stats.count(at.core, obj.class, side, lines, if sibling { lines } else { 0 });
            obj.stamp = stats.fill[at.die as usize];
        } else {
            stats.count(at.core, obj.class, side, lines, lines);
            obj.owner = Owner::die(at.die);
            obj.stamp = stats.insert(at.die, lines);
        }
        obj.core = at.core;
    }

    /// Demand misses of a sequential stream over `lines` lines not in the
    /// cache: the first lines of each page, before the prefetcher runs ahead;
    /// the prefetcher requests the others.
    #[inline]
    fn stream_misses(&self, lines: u64) -> u64 {
        let pages = lines.div_ceil(self.page_lines);
        (pages * self.prefetch_misses).min(lines)
    }

    /// Copies `bytes` from `src` into `dst` on core `at`: the cost at the
    /// hot rate if the source is in that core's die's L2, else at the cold
    /// rate. Source and destination lines are counted (streamed: every line
    /// not in the L2 is a miss, and the prefetcher's requests for all but the
    /// first of each page are accesses too) and end in the copier's caches.
    pub fn copy(
        &self,
        stats: &mut CacheStats,
        src: &mut Obj,
        dst: Option<&mut Obj>,
        at: Cpu,
        side: Side,
        bytes: u64,
    ) -> Duration {
        if bytes == 0 {
            return Duration::ZERO;
        }
        let n = self.lines(bytes);
        let hot = stats.holds(src.owner, src.stamp, at.die);
        if let Some(dst) = dst {
            self.stream(stats, dst, at, side, n);
        }
        self.stream(stats, src, at, side, n);
        self.copy_time(hot, bytes)
    }

    /// `n` lines of `obj` streamed through core `at`'s caches.
    #[inline]
    fn stream(&self, stats: &mut CacheStats, obj: &mut Obj, at: Cpu, side: Side, n: u64) {
        if stats.holds(obj.owner, obj.stamp, at.die) {
            let sibling = stats.in_sibling_l1(obj, at);
            stats.count(at.core, obj.class, side, n, if sibling { n } else { 0 });
            obj.stamp = stats.fill[at.die as usize];
        } else {
            // n lines come in: n demand requests, of which all but the first
            // of each page hit a prefetched line, plus the prefetches.
            let prefetched = n - self.stream_misses(n);
            stats.count(at.core, obj.class, side, n + prefetched, n);
            obj.owner = Owner::die(at.die);
            obj.stamp = stats.insert(at.die, n);
        }
        obj.core = at.core;
    }

    /// Copying bytes already in the accessor's cache (e.g. application data).
    pub fn copy_hot(&self, bytes: u64) -> Duration {
        Duration::for_bytes(bytes, self.copy_hot_bps)
    }

    /// Copying `bytes` at the hot or the cold rate.
    pub fn copy_time(&self, hot: bool, bytes: u64) -> Duration {
        Duration::for_bytes(bytes, if hot { self.copy_hot_bps } else { self.copy_cold_bps })
    }
}

mod lines;
pub use lines::{HostLines, ProcLines, RECVQ_SLOTS};

mod walk;
pub use walk::{Flight, Step, Walk};

pub mod footprint;

pub mod code;

#[cfg(test)]
pub(crate) mod tests;
