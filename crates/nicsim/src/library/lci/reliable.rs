//! The reliable LCI host protocol of the \[LCI] timers study (SPEC §2.4),
//! sans-I/O, on the one library protocol (`crate::proto::Endpoint`): per-peer
//! sequence numbers, a window of NI send buffers shared across the peers
//! (64: a packet keeps its NI send buffer, its retransmission copy, until
//! acknowledged), cumulative acknowledgements piggy-backed on every data
//! packet, and delayed explicit acks: when the library consumes a data
//! packet it arms the peer's ack `ack_delay` ahead (unless armed); each
//! time the library polls the clock it sends the ack of the lowest-ranked
//! peer whose deadline passed, an ack-only packet (which needs no ack and
//! no window slot: it uses the NI's control buffer), one per entry.
//!
//! This module owns what the LCI library asks of the endpoint (a packet is
//! one message; the window is the endpoint's whole, not a peer's; no
//! resend, no ack after a count) and its counters; the host library calls
//! it (`super::Lib::rel`) and the world times nothing here. No packet is
//! lost on Myrinet in this model, so nothing is resent: the window is what
//! the protocol costs.

use crate::proto::{Endpoint, Params};
use crate::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Reliable {
    /// The NI send buffers a sender may hold unacknowledged, over all peers.
    window: u32,
    ep: Endpoint,
    /// Counters.
    pub explicit_acks: u64,
    pub piggybacked_acks: u64,
    pub stalls: u64,
}

impl Reliable {
    pub fn new(peers: u32, window: u32, ack_delay: Duration) -> Self {
        // No ack after a count and no resend (`Duration::MAX`: its
        // deadlines saturate at "not set"); the window is checked here,
        // over all peers, so no peer's own is.
        let params =
            Params { ack_after: u32::MAX, delayed_ack: ack_delay, resend: Duration::MAX, send_window_frames: u32::MAX };
        Reliable { window, ep: Endpoint::new(params, peers as usize), explicit_acks: 0, piggybacked_acks: 0, stalls: 0 }
    }

    /// Packets sent and not yet acknowledged (NI send buffers held).
    pub fn in_flight(&self) -> u64 {
        self.ep.unacked_messages() as u64
    }

    /// Whether a send buffer is free for a data packet.
    pub fn can_send(&self) -> bool {
        self.ep.unacked_messages() < self.window
    }

    /// A data packet to `dst` is being written at `now`: returns the ack it carries.
    pub fn on_send_data(&mut self, now: Instant, dst: u32) -> u64 {
        debug_assert!(self.can_send(), "data sent with every send buffer unacknowledged");
        let d = dst as u16;
        self.ep.send(d, now, 0, 0, 0, false, 1);
        if self.ep.owes_ack(d) {
            self.piggybacked_acks += 1;
        }
        self.ep.dispatch_ack(d) as u64
    }

    /// Whether a delayed ack is armed (the word the NI clock reads).
    pub fn timer_running(&self) -> bool {
        self.ep.ack_deadline().is_some()
    }

    /// The earliest delayed-ack deadline armed.
    pub fn next_timer(&self) -> Option<Instant> {
        self.ep.ack_deadline()
    }

    /// The library polled the clock at `now`: a peer owed an explicit ack, with its value.
    pub fn due_ack(&mut self, now: Instant) -> Option<(u32, u64)> {
        let p = self.ep.first_ack_due(now)?;
        self.explicit_acks += 1;
        Some((p as u32, self.ep.dispatch_ack(p) as u64))
    }

    /// The library consumed a packet from `src` carrying cumulative `ack`.
    pub fn on_consume(&mut self, now: Instant, src: u32, ack: u64, ack_only: bool) {
        let s = src as u16;
        self.ep.process_ack(s, ack as u16);
        if !ack_only {
            self.ep.delivered(s, now);
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
            a.on_send_data(us(0), 1);
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
        assert_eq!(b.on_send_data(us(2), 0), 2);
        assert_eq!(b.piggybacked_acks, 1);
        assert_eq!(b.due_ack(us(100)), None);
        b.on_consume(us(200), 0, 1, false);
        assert_eq!(b.due_ack(us(249)), None);
        assert_eq!(b.due_ack(us(250)), Some((0, 3)));
        assert_eq!(b.explicit_acks, 1);
        assert_eq!(b.due_ack(us(300)), None);
    }

    /// Delayed acks are polled: an ack is armed once (an earlier deadline
    /// wins), each poll sends one, the lowest-ranked due peer first, the
    /// others stay armed, and an ack piggy-backed meanwhile disarms its
    /// peer at once (the NI clock's "a timer is running" word follows).
    #[test]
    fn explicit_acks_go_one_per_poll_lowest_peer_first_and_a_piggy_back_disarms() {
        let mut r = Reliable::new(4, 64, Duration::from_us(50));
        assert!(!r.timer_running());
        r.on_consume(us(0), 2, 0, false);
        r.on_consume(us(20), 2, 0, false); // already armed: keeps 50
        r.on_consume(us(10), 1, 0, false);
        r.on_consume(us(12), 3, 0, false);
        assert_eq!(r.next_timer(), Some(us(50)));
        assert_eq!(r.due_ack(us(49)), None);
        assert_eq!(r.due_ack(us(65)), Some((1, 1)), "the lowest-ranked due peer first");
        assert!(r.timer_running(), "peers 2 and 3 stay armed");
        assert_eq!(r.next_timer(), Some(us(50)), "a passed deadline still counts");
        assert_eq!(r.on_send_data(us(66), 2), 2, "data to peer 2 carries its ack");
        assert_eq!(r.piggybacked_acks, 1);
        assert_eq!(r.due_ack(us(70)), Some((3, 1)), "peer 2's ack went piggy-backed");
        assert_eq!(r.due_ack(us(70)), None);
        assert!(!r.timer_running());
        assert_eq!(r.explicit_acks, 2);
        assert_eq!(r.on_send_data(us(80), 3), 1, "nothing new to ack: no piggy-back");
        assert_eq!(r.piggybacked_acks, 1);
    }

    /// The window is the NI's send buffers, over all peers.
    #[test]
    fn the_window_is_shared_across_peers() {
        let mut r = Reliable::new(3, 4, Duration::from_us(50));
        for dst in [1, 2, 1, 2] {
            assert!(r.can_send());
            r.on_send_data(us(0), dst);
        }
        assert!(!r.can_send(), "4 packets to two peers fill a window of 4");
        r.on_consume(us(5), 2, 1, true);
        assert_eq!(r.in_flight(), 3);
        assert!(r.can_send());
    }
}
