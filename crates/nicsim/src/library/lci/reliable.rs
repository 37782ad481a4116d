//! The reliable LCI host protocol of the \[LCI] timers study (SPEC §2.4),
//! sans-I/O: per-peer packet counts as sequence numbers, a window of NI send
//! buffers (64: a packet keeps its NI send buffer, its retransmission copy,
//! until acknowledged), cumulative acknowledgements piggy-backed on every
//! data packet, and delayed explicit acks driven by a host soft timer
//! (`crate::nic::timers::SoftTimers`): when the library consumes a data packet it
//! arms the peer's timer `ack_delay` ahead; when the library polls the clock
//! past the deadline it sends an ack-only packet (which needs no ack and no
//! window slot: it uses the NI's control buffer).
//!
//! This module owns the counts and the decision; the host library calls it
//! (`super::Lib::rel`) and the world times nothing here. No packet is
//! lost on Myrinet in this model, so nothing is retransmitted: the window is
//! what the protocol costs.

use crate::nic::timers::SoftTimers;
use crate::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Reliable {
    window: u64,
    ack_delay: Duration,
    /// Data packets sent to each peer, and acknowledged by it.
    sent: Vec<u64>,
    acked_by: Vec<u64>,
    in_flight: u64,
    /// Data packets consumed from each peer, and the last ack we sent it.
    recv: Vec<u64>,
    acked_to: Vec<u64>,
    pub timers: SoftTimers,
    /// Counters.
    pub explicit_acks: u64,
    pub piggybacked_acks: u64,
    pub stalls: u64,
}

impl Reliable {
    pub fn new(peers: u32, window: u32, ack_delay: Duration) -> Self {
        let n = peers as usize;
        Reliable {
            window: window as u64,
            ack_delay,
            sent: vec![0; n],
            acked_by: vec![0; n],
            in_flight: 0,
            recv: vec![0; n],
            acked_to: vec![0; n],
            timers: SoftTimers::new(peers),
            explicit_acks: 0,
            piggybacked_acks: 0,
            stalls: 0,
        }
    }

    /// Packets sent and not yet acknowledged (NI send buffers held).
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// Whether a send buffer is free for a data packet.
    pub fn can_send(&self) -> bool {
        self.in_flight < self.window
    }

    /// A data packet to `dst` is being written: returns the ack it carries.
    pub fn on_send_data(&mut self, dst: u32) -> u64 {
        let d = dst as usize;
        debug_assert!(self.can_send(), "data sent with every send buffer unacknowledged");
        self.sent[d] += 1;
        self.in_flight += 1;
        if self.recv[d] > self.acked_to[d] {
            self.piggybacked_acks += 1;
            self.acked_to[d] = self.recv[d];
            self.timers.disarm(dst);
        }
        self.recv[d]
    }

    /// The library polled the clock at `now`: a peer owed an explicit ack, with its value.
    pub fn due_ack(&mut self, now: Instant) -> Option<(u32, u64)> {
        while let Some(p) = self.timers.expired(now) {
            let i = p as usize;
            if self.recv[i] > self.acked_to[i] {
                self.acked_to[i] = self.recv[i];
                self.explicit_acks += 1;
                return Some((p, self.recv[i]));
            }
        }
        None
    }

    /// The library consumed a packet from `src` carrying cumulative `ack`.
    pub fn on_consume(&mut self, now: Instant, src: u32, ack: u64, ack_only: bool) {
        let s = src as usize;
        if ack > self.acked_by[s] {
            debug_assert!(ack <= self.sent[s], "ack beyond what was sent");
            self.in_flight -= ack - self.acked_by[s];
            self.acked_by[s] = ack;
        }
        if !ack_only {
            self.recv[s] += 1;
            self.timers.arm(src, now + self.ack_delay);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Instant {
        Instant::ZERO + Duration::from_us(n)
    }

    #[test]
    fn a_full_window_stalls_until_an_ack() {
        let mut a = Reliable::new(2, 64, Duration::from_us(50));
        for _ in 0..64 {
            assert!(a.can_send());
            a.on_send_data(1);
        }
        assert!(!a.can_send());
        a.on_consume(us(10), 1, 1, true);
        assert!(a.can_send());
        assert_eq!(a.in_flight(), 63);
    }

    #[test]
    fn acks_piggyback_on_data_else_go_explicit_after_the_delay() {
        let mut b = Reliable::new(2, 64, Duration::from_us(50));
        b.on_consume(us(0), 0, 0, false);
        b.on_consume(us(1), 0, 0, false);
        assert_eq!(b.due_ack(us(40)), None);
        // Data back to 0 carries the ack: the timer is disarmed.
        assert_eq!(b.on_send_data(0), 2);
        assert_eq!(b.piggybacked_acks, 1);
        assert_eq!(b.due_ack(us(100)), None);
        b.on_consume(us(200), 0, 1, false);
        assert_eq!(b.due_ack(us(249)), None);
        assert_eq!(b.due_ack(us(250)), Some((0, 3)));
        assert_eq!(b.explicit_acks, 1);
        assert_eq!(b.due_ack(us(300)), None);
    }
}
