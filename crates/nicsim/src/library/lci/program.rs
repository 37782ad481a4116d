//! What an LCI program and its host's library say to each other
//! (`crate::library::lci`, the library; `super::workload`, the program):
//! a message to send ([`Outgoing`]) and what a host whose library has
//! nothing to do goes on with ([`Control`]).

use crate::time::Duration;

/// What a host whose library has nothing to do goes on with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Stay in the library, polling with interrupts disabled.
    Wait,
    /// Leave the library and compute this long, interrupts enabled.
    Compute(Duration),
    /// Leave the library and sleep, interrupts enabled, until a signal.
    Sleep,
}

/// The message number of an ack-only control packet: none of the
/// sender's messages (those count up from 0), so it never matches one.
pub const ACK_ONLY_MSG: u32 = u32::MAX;

/// A message (or `count` equal messages) the program wants sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outgoing {
    pub dst: u32,
    pub size: u64,
    pub count: u64,
    /// Multicast tag of the packets (the tree's root), `None` for point to point.
    pub bcast: Option<u32>,
    /// The program's message tag (`crate::workload::tag`; 0 for the
    /// programs that match no receives).
    pub tag: u64,
}
