//! The cache ownership model.
//!
//! Every shared object (endpoint descriptor, event ring, NAPI state, transmit
//! ring, packet data) remembers which cache (die L2) last wrote it. An access
//! from another cache pays a transfer cost that depends on the relation
//! (same die: shared L2, free; same socket; other socket); an object last
//! written by a DMA is in memory. Ownership moves to the accessor (a single
//! owner: read sharing is not modelled, which is exact for the
//! producer/consumer objects of this stack, each written on every use).
//! Hits and misses are counted per object class and per side (kernel/user).
//!
//! This module does not decide *who* accesses *what*: the host path does.

use super::topology::Topology;
use crate::config::{CacheTimes, Relation};
use crate::time::Duration;

/// Classes of modelled objects (for miss-rate reporting).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjClass {
    Endpoint = 0,
    EventRing = 1,
    Napi = 2,
    TxRing = 3,
    Data = 4,
    PullHandle = 5,
}

impl ObjClass {
    pub const ALL: [ObjClass; 6] = [
        ObjClass::Endpoint,
        ObjClass::EventRing,
        ObjClass::Napi,
        ObjClass::TxRing,
        ObjClass::Data,
        ObjClass::PullHandle,
    ];
    pub fn name(self) -> &'static str {
        match self {
            ObjClass::Endpoint => "endpoint",
            ObjClass::EventRing => "event_ring",
            ObjClass::Napi => "napi",
            ObjClass::TxRing => "tx_ring",
            ObjClass::Data => "data",
            ObjClass::PullHandle => "pull_handle",
        }
    }
}

/// Which side of the user/kernel boundary made an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Kernel = 0,
    User = 1,
}

/// Where an object's lines currently are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// In memory (never touched, or last written by a DMA).
    Memory,
    /// In the L2 of this die (host-wide die index).
    Die(u16),
}

/// One modelled object.
#[derive(Clone, Copy, Debug)]
pub struct Obj {
    pub class: ObjClass,
    pub owner: Owner,
}

impl Obj {
    pub fn new(class: ObjClass) -> Self {
        Obj { class, owner: Owner::Memory }
    }
}

/// Hit/miss counters: [class][side].
#[derive(Clone, Debug, Default)]
pub struct CacheStats {
    pub hits: [[u64; 2]; 6],
    pub misses: [[u64; 2]; 6],
}

impl CacheStats {
    pub fn miss_rate(&self, side: Side) -> f64 {
        let s = side as usize;
        let h: u64 = self.hits.iter().map(|r| r[s]).sum();
        let m: u64 = self.misses.iter().map(|r| r[s]).sum();
        if h + m == 0 {
            0.0
        } else {
            m as f64 / (h + m) as f64
        }
    }
}

/// Transfer costs by relation, and copy bandwidths.
#[derive(Clone, Debug)]
pub struct CacheCosts {
    same_socket: Duration,
    other_socket: Duration,
    memory: Duration,
    copy_hot_bps: u64,
    copy_cold_bps: u64,
}

impl CacheCosts {
    pub fn new(c: &CacheTimes) -> Self {
        CacheCosts {
            same_socket: c.same_socket,
            other_socket: c.other_socket,
            memory: c.memory,
            copy_hot_bps: c.copy_hot_bytes_per_s,
            copy_cold_bps: c.copy_cold_bytes_per_s,
        }
    }

    /// Cost of one line moving from `from` to a core of die `to`.
    pub fn line(&self, topo: &Topology, from: Owner, to: u16) -> Duration {
        match from {
            Owner::Memory => self.memory,
            Owner::Die(d) if d == to => Duration::ZERO,
            Owner::Die(d) => match topo.die_relation(d, to) {
                Relation::SameDie => Duration::ZERO,
                Relation::SameSocket => self.same_socket,
                Relation::OtherSocket => self.other_socket,
            },
        }
    }

    /// Accesses `lines` lines of `obj` from die `die`; returns the stall and
    /// moves ownership.
    #[inline]
    pub fn access(
        &self,
        topo: &Topology,
        stats: &mut CacheStats,
        obj: &mut Obj,
        die: u16,
        side: Side,
        lines: u32,
    ) -> Duration {
        if lines == 0 {
            return Duration::ZERO;
        }
        let (c, s) = (obj.class as usize, side as usize);
        // Same die is the same cache (`Relation::SameDie` is `d == die`):
        // no topology lookup for a hit.
        let hit = obj.owner == Owner::Die(die);
        if hit {
            stats.hits[c][s] += lines as u64;
            Duration::ZERO
        } else {
            stats.misses[c][s] += lines as u64;
            let cost = self.line(topo, obj.owner, die).times(lines as u64);
            obj.owner = Owner::Die(die);
            cost
        }
    }

    /// Copying `bytes` whose source is at `src` into the cache of `die`.
    pub fn copy(&self, stats: &mut CacheStats, src: Owner, die: u16, side: Side, bytes: u64) -> Duration {
        if bytes == 0 {
            return Duration::ZERO;
        }
        let hot = src == Owner::Die(die);
        let c = ObjClass::Data as usize;
        if hot {
            stats.hits[c][side as usize] += 1;
            Duration::for_bytes(bytes, self.copy_hot_bps)
        } else {
            stats.misses[c][side as usize] += 1;
            Duration::for_bytes(bytes, self.copy_cold_bps)
        }
    }

    /// Copying bytes already in the accessor's cache (e.g. application data).
    pub fn copy_hot(&self, bytes: u64) -> Duration {
        Duration::for_bytes(bytes, self.copy_hot_bps)
    }
}
