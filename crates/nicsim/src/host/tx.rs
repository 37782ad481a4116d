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
            let stall = cc.line(topo, Owner::die(other_die), die).times(n as u64);
            cost += stall;
            owed = Some((other, stall));
            // Each of the two cores misses the lines the other took.
            cache.count_misses(core, ObjClass::TxRing, Side::Kernel, n as u64);
            cache.count_misses(other, ObjClass::TxRing, Side::Kernel, n as u64);
            self.contended += 1;
        }
        let end = now + cost + hold;
        if other == core || end > until {
            self.hold = (core, end);
        }
        (cost, owed)
    }
}

/// The frames a host has handed to its driver and that have not yet left
/// on the wire: Linux's queueing discipline in front of the NIC's send
/// ring. It bounds them as the 2009 path does, and drops the frame that
/// finds it full.
///
/// * The send ring: myri10ge stops the device's queue when fewer than
///   `MXGEFW_MAX_SEND_DESC` (12) descriptors are free (`myri10ge_xmit`:
///   `if ((avail - count) < MXGEFW_MAX_SEND_DESC) { ... netif_stop_queue(dev);`,
///   drivers/net/myri10ge/myri10ge.c of Linux 2.6.26) and wakes it from
///   `myri10ge_tx_done`. `nic.tx_ring_frames` frames fit.
/// * The qdisc: while the queue is stopped, `pfifo_fast` keeps at most
///   `tx_queue_len` packets (`pfifo_fast_enqueue`: `if
///   (skb_queue_len(list) < qdisc_dev(qdisc)->tx_queue_len)`, else
///   `qdisc_drop`, net/sched/sch_generic.c of 2.6.26; `ether_setup` sets
///   `tx_queue_len = 1000`, net/ethernet/eth.c). `nic.tx_queue_len`.
/// * Open-MX ignores `dev_queue_xmit`'s return (`__omx_queue_xmit`,
///   driver/linux `omx_misc.h`, Open-MX 1.0.901): a dropped pull reply
///   or fragment is recovered only by its protocol's timers.
///
/// A frame counts from its hand-over until its last bit left the NIC (the
/// departures are in order, so the oldest leaves first). `cap` 0: no
/// bound (the queue is unbounded, as without this model). The queue of
/// departure times holds at most `cap` (8 bytes each); it grows to that as
/// the host sends (a host that sends little holds little).
#[derive(Clone, Debug, Default)]
pub(crate) struct TxBacklog {
    ends: std::collections::VecDeque<Instant>,
    cap: usize,
}

impl TxBacklog {
    /// A backlog of at most `cap` frames (0: unbounded, never counted).
    pub(crate) fn new(cap: usize) -> Self {
        TxBacklog { ends: std::collections::VecDeque::new(), cap }
    }

    /// Whether a frame handed over at `now` finds the backlog full (it is
    /// dropped). The frames gone by `now` leave it only when it looks full
    /// (until then the departures it holds are fewer than its bound anyway),
    /// so most frames cost one comparison.
    #[inline(always)]
    pub(crate) fn full(&mut self, now: Instant) -> bool {
        if self.ends.len() < self.cap || self.cap == 0 {
            return false;
        }
        while self.ends.front().is_some_and(|&e| e <= now) {
            self.ends.pop_front();
        }
        self.ends.len() >= self.cap
    }

    /// A frame admitted (after [`TxBacklog::full`] said no) leaves the
    /// NIC at `end`.
    #[inline(always)]
    pub(crate) fn push(&mut self, end: Instant) {
        if self.cap > 0 {
            debug_assert!(self.ends.len() < self.cap);
            self.ends.push_back(end);
        }
    }

    /// Frames in the backlog at `now` (those gone by then leave it).
    pub(crate) fn backlog(&mut self, now: Instant) -> usize {
        while self.ends.front().is_some_and(|&e| e <= now) {
            self.ends.pop_front();
        }
        self.ends.len()
    }

    /// Frames in the backlog at `now`.
    #[cfg(test)]
    pub(crate) fn len_at(&self, now: Instant) -> usize {
        self.ends.iter().filter(|&&e| e > now).count()
    }
}

#[cfg(test)]
mod backlog_tests {
    use super::TxBacklog;
    use crate::time::{Duration, Instant};

    #[test]
    fn a_full_backlog_refuses_until_its_oldest_frame_left() {
        let t = |us: u64| Instant::ZERO + Duration::from_us(us);
        let mut b = TxBacklog::new(2);
        assert!(!b.full(t(0)));
        b.push(t(10));
        assert!(!b.full(t(1)));
        b.push(t(20));
        assert!(b.full(t(5)), "two frames in flight fill a backlog of 2");
        assert!(!b.full(t(10)), "the first left at 10");
        assert_eq!(b.len_at(t(10)), 1);
        b.push(t(30));
        assert!(b.full(t(19)) && !b.full(t(20)));
        assert!(b.ends.len() <= 2, "never more than its bound held");
        let mut off = TxBacklog::new(0);
        for i in 0..10_000 {
            assert!(!off.full(t(0)));
            off.push(t(i));
        }
        assert_eq!(off.ends.len(), 0, "an unbounded backlog keeps nothing");
    }
}
