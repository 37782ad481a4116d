//! The endpoint's delayed acks read by a library that polls its clock
//! instead of waking at a deadline: the \[LCI] library's reliable protocol
//! (`crate::library::lci::reliable`, SPEC §2.4) checks its timers each time
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
