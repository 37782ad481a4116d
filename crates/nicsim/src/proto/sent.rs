//! The messages an endpoint keeps for resend until they are acked
//! ([`SentMsg`]), and their store: slots of one cache line each, linked
//! from a peer's oldest unacknowledged message to its newest, freed slots
//! reused first. The protocol that decides what is kept and released is
//! `super::endpoint`'s.

use super::Seq;
use crate::time::Instant;

/// A message kept for possible resend until acked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentMsg {
    pub seq: Seq,
    /// The request (or, for a large message, the region id) it carries.
    pub req: u32,
    /// When it was last put on the wire.
    pub sent_at: Instant,
    /// When it was first put on the wire (the give-up counts from here).
    pub first_sent: Instant,
    pub size: u64,
    pub tag: u64,
    /// For NOTIFY: the receive request it completes on the peer.
    pub is_notify: bool,
    /// Frames of the message (medium: its fragments).
    pub frames: u32,
}

/// No slot of an endpoint's store.
pub(super) const NIL: u32 = u32::MAX;

/// A slot of an endpoint's store (`Endpoint::sent`): an unacknowledged message and the slot of
/// the one sent after it to the same peer (`NIL`: none). One cache line
/// (64-byte aligned): at hundreds of ranks the slot a send writes or an ack
/// reads is out of the simulator's caches, and a slot across two lines
/// would be two misses.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(super) struct Slot {
    pub m: SentMsg,
    pub next: u32,
}

/// Puts `m` in a slot of `sent` (the last freed of `free` first), linked
/// after nothing.
#[inline(always)]
pub(super) fn store(sent: &mut Vec<Slot>, free: &mut Vec<u32>, m: SentMsg) -> u32 {
    let slot = Slot { m, next: NIL };
    match free.pop() {
        None => {
            sent.push(slot);
            (sent.len() - 1) as u32
        }
        Some(i) => {
            sent[i as usize] = slot;
            i
        }
    }
}

/// Releases the `n` oldest of a peer's unacknowledged messages, linked
/// from slot `head` of `sent`: their slots go to `free`. Returns the slot
/// of the oldest left (`NIL`: none) and the frames released.
#[inline]
pub(super) fn release_oldest(sent: &[Slot], free: &mut Vec<u32>, head: u32, n: u32) -> (u32, u32) {
    let mut at = head;
    let mut frames = 0;
    for _ in 0..n {
        free.push(at);
        let s = &sent[at as usize];
        frames += s.m.frames;
        at = s.next;
    }
    (at, frames)
}
