//! The host's send-path state (`TxPath`): what the send path and the
//! reaping of transmit completions share (tx ring indices and slots, skbs,
//! queue lock), which core works on it and until when, and what a touch of
//! it costs in the cache model.
//!
//! It owns that state and its price; it does not own the cores (a touch
//! that makes another core stall returns that stall for the caller to
//! charge to it) nor who touches it (the library's send path,
//! `crate::library`, and the kernel's reaping and pull replies,
//! `crate::sim`).

use super::{CacheCosts, CacheStats, Obj, ObjClass, Owner, Side, Topology};
use crate::config::CacheTimes;
use crate::time::{Duration, Instant};

/// The send-path state of one host.
#[derive(Clone, Debug)]
pub(crate) struct TxPath {
    obj: Obj,
    /// The core working on the state, and until when.
    hold: (u16, Instant),
    /// Touches that found another die working on the state.
    contended: u64,
}

impl Default for TxPath {
    fn default() -> Self {
        TxPath { obj: Obj::new(ObjClass::TxRing), hold: (0, Instant::ZERO), contended: 0 }
    }
}

impl TxPath {
    /// Touches that found another die working on the state.
    pub(crate) fn contended(&self) -> u64 {
        self.contended
    }

    /// The state, touched at `now` by `core`, which then works on it for
    /// `hold`: the cost to `core`, and the stall owed by the core that was
    /// working on it from another die (`None`: no such core).
    ///
    /// Taken in turn, each touch moves `tx_lines` lines once. Taken while a
    /// core of another die is still working on the state, the lines bounce
    /// back and forth between the two for the overlap: both cores stall for
    /// `tx_contention_lines` more transfers (the other one at the start of
    /// its next segment, since its current one is already scheduled). This
    /// is what a stream pays when completions are reaped one at a time on
    /// other cores while the sender keeps sending, and what a ping-pong,
    /// whose reap is over long before the next send, does not. `kernel` is
    /// `core`'s own kernel state (the skbs allocated or freed).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn touch(
        &mut self,
        cc: &CacheCosts,
        topo: &Topology,
        t: &CacheTimes,
        cache: &mut CacheStats,
        kernel: &mut Obj,
        now: Instant,
        core: u16,
        hold: Duration,
    ) -> (Duration, Option<(u16, Duration)>) {
        let at = topo.cpu(core);
        let die = at.die;
        let mut cost = cc.access(topo, cache, &mut self.obj, at, Side::Kernel, t.tx_lines);
        cc.touch(cache, kernel, at, Side::Kernel, t.kernel_private_lines as u64);
        let (other, until) = self.hold;
        let other_die = topo.die_of(other);
        let mut owed = None;
        if other_die != die && now < until && t.tx_contention_lines > 0 {
            let n = t.tx_contention_lines;
            let stall = cc.line(topo, Owner::Die(other_die), die).times(n as u64);
            cost += stall;
            owed = Some((other, stall));
            cache.counts[ObjClass::TxRing as usize][Side::Kernel as usize].misses += 2 * n as u64;
            self.contended += 1;
        }
        let end = now + cost + hold;
        if other == core || end > until {
            self.hold = (core, end);
        }
        (cost, owed)
    }
}
