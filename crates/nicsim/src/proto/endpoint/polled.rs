//! The endpoint's delayed acks read by a library that polls its clock
//! instead of waking at a deadline: the \[LCI] library's reliable protocol
//! (`crate::library::lci`, SPEC §2.4) checks its timers each time
//! it enters the library, sends at most one explicit ack per entry, the
//! lowest-ranked peer first, and writes "a timer is running" for the NI
//! clock to read (`crate::nic::timers`).
//!
//! These read the peers owed an ack ([`Endpoint::owed`]); the Open-MX path
//! does not call them (it runs its deadlines with [`Endpoint::dispatch`]),
//! and none of the endpoint's other methods changes for them.

use super::Endpoint;
use crate::time::Instant;

impl Endpoint {
    /// Messages sent to every peer and not yet acknowledged: a send window
    /// shared across the peers.
    pub fn unacked_messages(&self) -> u32 {
        self.unacked_total
    }

    /// Whether `peer` has in-order messages not yet acknowledged (the next
    /// frame to it carries a new ack).
    pub fn owes_ack(&self, peer: u16) -> bool {
        self.peers[peer as usize].unacked_recv > 0
    }

    /// The earliest delayed-ack deadline armed, passed or not (`None`:
    /// none): exact, unlike [`Endpoint::poll_at`], since an ack sent
    /// ([`Endpoint::dispatch_ack`]) disarms its peer's at once.
    pub fn ack_deadline(&self) -> Option<Instant> {
        let t = self.owed.iter().map(|&p| self.peers[p as usize].ack_deadline).min()?;
        (t != Instant::MAX).then_some(t)
    }

    /// The lowest-ranked peer whose delayed ack is due at `now`, if any
    /// (its ack goes with [`Endpoint::dispatch_ack`]).
    pub fn first_ack_due(&self, now: Instant) -> Option<u16> {
        self.owed.iter().copied().filter(|&p| self.peers[p as usize].ack_deadline <= now).min()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Params;
    use super::Endpoint;
    use crate::time::{Duration, Instant};

    /// A library that polls its delayed acks (50 us), with no ack after a
    /// count, no resend and no window per peer (the \[LCI] library's,
    /// `crate::library::lci::reliable_params`).
    fn polled(peers: usize) -> Endpoint {
        let params = Params {
            ack_after: u32::MAX,
            delayed_ack: Duration::from_us(50),
            resend: Duration::MAX,
            send_window_frames: u32::MAX,
        };
        Endpoint::new(params, peers)
    }

    fn us(n: u64) -> Instant {
        Instant::ZERO + Duration::from_us(n)
    }

    /// A one-frame message to `peer` at `now`: the ack it carries.
    fn send(ep: &mut Endpoint, now: Instant, peer: u16) -> u16 {
        ep.send(peer, now, 0, 0, 0, false, 1);
        ep.dispatch_ack(peer)
    }

    /// The unacknowledged messages are counted over every peer (a window
    /// shared across the peers); a cumulative ack releases them.
    #[test]
    fn unacked_messages_count_every_peer_and_an_ack_releases_them() {
        let mut ep = polled(3);
        for peer in [1, 2, 1, 2] {
            send(&mut ep, us(0), peer);
        }
        assert_eq!(ep.unacked_messages(), 4, "4 messages to two peers");
        ep.process_ack(2, 1);
        assert_eq!(ep.unacked_messages(), 3);
        ep.process_ack(1, 2);
        assert_eq!(ep.unacked_messages(), 1);
    }

    /// A delayed ack is armed once (an earlier deadline wins), the
    /// lowest-ranked due peer's goes first and the others stay armed, an
    /// ack piggy-backed meanwhile disarms its peer at once, and
    /// `ack_deadline` follows exactly.
    #[test]
    fn delayed_acks_go_lowest_peer_first_and_a_piggy_back_disarms() {
        let mut ep = polled(4);
        assert_eq!(ep.ack_deadline(), None);
        ep.delivered(2, us(0));
        ep.delivered(2, us(20)); // already armed: keeps 50
        ep.delivered(1, us(10));
        ep.delivered(3, us(12));
        assert_eq!(ep.ack_deadline(), Some(us(50)));
        assert_eq!(ep.first_ack_due(us(49)), None);
        assert_eq!(ep.first_ack_due(us(65)), Some(1), "the lowest-ranked due peer first");
        assert_eq!(ep.dispatch_ack(1), 1);
        assert_eq!(ep.ack_deadline(), Some(us(50)), "peers 2 and 3 stay armed, passed or not");
        assert!(ep.owes_ack(2));
        assert_eq!(send(&mut ep, us(66), 2), 2, "data to peer 2 carries its ack");
        assert!(!ep.owes_ack(2));
        assert_eq!(ep.first_ack_due(us(70)), Some(3), "peer 2's ack went piggy-backed");
        assert_eq!(ep.dispatch_ack(3), 1);
        assert_eq!((ep.first_ack_due(us(70)), ep.ack_deadline()), (None, None));
        assert!(!ep.owes_ack(3), "nothing new to ack: no piggy-back");
    }
}
