//! The Open-MX-like message protocol, sans-I/O: state machines that take
//! `now` and an input (a message header, an ack, a timer) and return what to
//! do (deliver, wait, ack now, resend, request a block), in the manner of
//! smoltcp's `socket/tcp.rs` (`process`, `dispatch`, `poll_at`).
//!
//! * [`Msg`] (`msg.rs`): what a message frame says to the library, and the
//!   one mapping between it and the wire's [`crate::wire::OmxBody`].
//! * [`Endpoint`] (`endpoint.rs`): the library protocol of one endpoint
//!   towards every peer: sequence numbers, piggy-backed and explicit acks,
//!   the delayed-ack timer, resends and the send window.
//! * [`PullHandle`] and [`PullServe`] (`pull.rs`): the drivers' pull of a
//!   large message (blocks of 32 replies in a window of 4, re-requests
//!   when a later block completes first and on a timeout) on the receiving side, and the serving of one block on the
//!   sending side.
//!
//! This module owns protocol state and its transitions. It does not charge
//! CPU time, build frames, touch caches or schedule events: `crate::sim`
//! calls these transitions at the simulated times the library, the receive
//! handler and the drivers run, and turns the actions into frames and events.
//! Matching messages to receives, medium reassembly and out-of-order
//! buffering of whole events stay with the library (`crate::sim`), which
//! owns the requests they complete.

mod endpoint;
mod msg;
mod pull;
mod sent;

#[cfg(test)]
mod pull_tests;
#[cfg(test)]
mod tests;

pub use endpoint::{AckPlan, Arrival, Due, Endpoint, Params, RESENDS_MAX, RESENDS_PER_PEER, RESEND_BACKOFF_MAX};
pub use msg::{Kind, Msg};
pub use pull::{Blocks, OnReply, OnTimer, PullHandle, PullRerequest, PullServe, ServedReply};
pub use sent::SentMsg;

/// Sequence numbers are 16-bit on the wire (Open-MX `omx_seqnum_t` is 16-bit
/// with a session in the upper bits); the model keeps them in `u32` and puts
/// the low 16 bits on the wire.
pub type Seq = u32;

/// Rebuilds a 32-bit sequence number from its 16 low bits on the wire,
/// choosing the value closest to `near`.
pub fn widen(near: Seq, low: u16) -> Seq {
    let base = near & !0xFFFF;
    let mut v = base | low as u32;
    if v > near.saturating_add(0x8000) && v >= 0x10000 {
        v -= 0x10000;
    } else if v.saturating_add(0x8000) < near {
        v += 0x10000;
    }
    v
}
