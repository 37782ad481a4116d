//! The library protocol of one endpoint towards each of its peers
//! ([`Endpoint`]): sequence numbers, piggy-backed and explicit acks, the
//! delayed-ack timer, resends and the send window (SPEC 2.1; Open-MX
//! `libopen-mx/omx_ack.c`, `omx_send.c`).
//!
//! Every transition takes `now` (where time matters) and one input and
//! returns what the caller must do; timers are deadlines the caller polls
//! ([`Endpoint::dispatch`], [`Endpoint::poll_at`]). This file does not own
//! the frames (`crate::sim` builds them from [`super::Msg`]) nor the event
//! that wakes the library when a deadline passes.

use super::{widen, Seq};
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// The protocol's parameters (from the scenario's `[library]` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Explicit ack after this many unacknowledged in-order messages.
    pub ack_after: u32,
    /// Explicit ack of fewer messages once the oldest waited this long.
    pub delayed_ack: Duration,
    /// A message not acknowledged this long after it was (re)sent is resent.
    pub resend: Duration,
    /// Frames a peer may have unacknowledged before further sends wait.
    pub send_window_frames: u32,
}

/// A message kept for possible resend until acked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentMsg {
    pub seq: Seq,
    /// The request (or, for a large message, the region id) it carries.
    pub req: u32,
    /// When it was last put on the wire.
    pub sent_at: Instant,
    pub size: u64,
    pub tag: u64,
    /// For NOTIFY: the receive request it completes on the peer.
    pub is_notify: bool,
    /// Frames of the message (medium: its fragments).
    pub frames: u32,
}

/// How an arriving message relates to the expected sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The next message expected: deliver it.
    InOrder,
    /// A later one (an earlier one was lost or overtaken): keep it.
    Early,
    /// Already delivered: drop it and ack at once (the sender resent it
    /// because our ack did not reach it).
    Duplicate,
}

/// What to do after an in-order message was delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPlan {
    /// `ack_after` messages are unacknowledged: send an explicit ack now.
    AckNow,
    /// The delayed-ack timer was started: wake up at this instant.
    ArmTimer(Instant),
    /// The delayed-ack timer already runs.
    Pending,
}

/// A protocol deadline that passed (see [`Endpoint::dispatch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// The delayed ack: send an explicit ack.
    Ack,
    /// The message was not acknowledged in time: send it again.
    Resend(SentMsg),
}

/// State towards one remote peer.
#[derive(Clone, Debug, Default)]
struct Peer {
    /// Next sequence number to send.
    next_send: Seq,
    /// Next in-order sequence number expected.
    expected: Seq,
    /// Messages received in order and not yet acknowledged.
    unacked_recv: u32,
    /// Deadline of the delayed explicit ack, if one is due.
    ack_deadline: Option<Instant>,
    /// Sent, not yet acknowledged messages (for resend), oldest first.
    unacked_sends: VecDeque<SentMsg>,
    /// Frames of the unacknowledged messages (the send window's use).
    unacked_frames: u32,
}

/// The protocol state of one endpoint: one [`Peer`] per rank of the run.
#[derive(Clone, Debug)]
pub struct Endpoint {
    params: Params,
    peers: Vec<Peer>,
    /// No deadline is earlier than this (a lower bound of
    /// [`Endpoint::poll_at`], kept by every transition that sets or moves
    /// a deadline earlier, and made exact again by [`Endpoint::dispatch`]):
    /// it lets `dispatch` skip the scan of every peer.
    not_before: Instant,
}

impl Endpoint {
    /// An endpoint with nothing sent or received, towards `peers` ranks.
    pub fn new(params: Params, peers: usize) -> Self {
        Endpoint { params, peers: vec![Peer::default(); peers], not_before: Instant::MAX }
    }

    /// A deadline was set, or moved earlier, to `t`.
    #[inline(always)]
    fn deadline_at(&mut self, t: Instant) {
        self.not_before = self.not_before.min(t);
    }

    // --- Sending ---------------------------------------------------------

    /// Whether a message of `frames` frames to `peer` must wait for acks:
    /// the peer's unacknowledged frames plus these would exceed the send
    /// window (a message alone always goes, however large).
    pub fn window_full(&self, peer: u16, frames: u32) -> bool {
        let ps = &self.peers[peer as usize];
        ps.unacked_frames > 0 && ps.unacked_frames + frames > self.params.send_window_frames
    }

    /// Sends a new message to `peer`: it takes the next sequence number and
    /// is kept for resend until acknowledged. Returns it (the caller queues
    /// its frames and wakes up at `now + resend` to check on it).
    pub fn send(
        &mut self,
        peer: u16,
        now: Instant,
        req: u32,
        size: u64,
        tag: u64,
        is_notify: bool,
        frames: u32,
    ) -> SentMsg {
        let ps = &mut self.peers[peer as usize];
        let m = SentMsg { seq: ps.next_send, req, sent_at: now, size, tag, is_notify, frames };
        let oldest = ps.unacked_sends.is_empty();
        ps.next_send += 1;
        ps.unacked_sends.push_back(m);
        ps.unacked_frames += frames;
        if oldest {
            self.deadline_at(now + self.params.resend);
        }
        m
    }

    /// A cumulative ack from `peer` (piggy-backed or explicit) carrying the
    /// 16 low bits of the next sequence number it expects: every message
    /// before it is released, oldest first. Returns how many were.
    pub fn process_ack(&mut self, peer: u16, low: u16) -> usize {
        let ps = &mut self.peers[peer as usize];
        let upto = widen(ps.next_send, low);
        let mut n = 0;
        while let Some(m) = ps.unacked_sends.front() {
            if m.seq >= upto {
                break;
            }
            ps.unacked_frames -= m.frames;
            ps.unacked_sends.pop_front();
            n += 1;
        }
        // The new oldest may be due before the one released (it was not
        // resent with it).
        if let (true, Some(m)) = (n > 0, ps.unacked_sends.front()) {
            let t = m.sent_at + self.params.resend;
            self.deadline_at(t);
        }
        n
    }

    /// The cumulative ack a frame to `peer` carries (piggy-backed on a
    /// message, or an explicit ACK): its 16 low bits. Everything received in
    /// order is acknowledged from now on, and the delayed ack is cancelled.
    pub fn dispatch_ack(&mut self, peer: u16) -> u16 {
        let ps = &mut self.peers[peer as usize];
        ps.unacked_recv = 0;
        ps.ack_deadline = None;
        ps.expected as u16
    }

    // --- Receiving -------------------------------------------------------

    /// A message from `peer` whose sequence number has the 16 low bits
    /// `low` arrived: its full sequence number and how it relates to the
    /// one expected. Changes nothing (the caller may still set it aside).
    pub fn arrival(&self, peer: u16, low: u16) -> (Seq, Arrival) {
        use std::cmp::Ordering::*;
        let expected = self.peers[peer as usize].expected;
        let seq = widen(expected, low);
        let a = match seq.cmp(&expected) {
            Equal => Arrival::InOrder,
            Greater => Arrival::Early,
            Less => Arrival::Duplicate,
        };
        (seq, a)
    }

    /// The in-order message from `peer` was delivered at `now`: the next one
    /// is expected, and it waits for an ack ([`AckPlan`]).
    pub fn delivered(&mut self, peer: u16, now: Instant) -> AckPlan {
        let ps = &mut self.peers[peer as usize];
        ps.expected += 1;
        ps.unacked_recv += 1;
        if ps.unacked_recv >= self.params.ack_after {
            ps.ack_deadline = None;
            self.deadline_at(Instant::ZERO);
            AckPlan::AckNow
        } else if ps.ack_deadline.is_none() {
            let t = now + self.params.delayed_ack;
            ps.ack_deadline = Some(t);
            self.deadline_at(t);
            AckPlan::ArmTimer(t)
        } else {
            AckPlan::Pending
        }
    }

    /// The next sequence number expected from `peer`.
    pub fn expected(&self, peer: u16) -> Seq {
        self.peers[peer as usize].expected
    }

    // --- Timers and the end of a run --------------------------------------

    /// Runs the deadlines that passed at `now`, peer by peer in rank order:
    /// `emit(peer, Due::Ack)` for a delayed ack, then `emit(peer,
    /// Due::Resend(m))` for each message not acknowledged in time, oldest
    /// first (each due again one resend period from now, and any message
    /// behind them that was due goes with them). Returns when to look again
    /// (the next deadline, or earlier), or `None` if nothing is due before
    /// `armed`, the caller's wake-up already set.
    ///
    /// A peer with in-order messages unacknowledged and no delayed ack
    /// running (an explicit ack was queued and not yet sent) gets one from
    /// `now`.
    pub fn dispatch(
        &mut self,
        now: Instant,
        armed: Option<Instant>,
        mut emit: impl FnMut(u16, Due),
    ) -> Option<Instant> {
        debug_assert!(self.poll_at().is_none_or(|t| t >= self.not_before), "not_before bounds poll_at");
        // Nothing is due, and the caller wakes up before anything will be:
        // the scan below would find nothing to do.
        if now < self.not_before && armed.is_some_and(|t| t <= self.not_before) {
            return None;
        }
        let Params { delayed_ack, resend, .. } = self.params;
        let mut next: Option<Instant> = None;
        let mut ack_queued = false;
        for (peer, ps) in self.peers.iter_mut().enumerate() {
            if ps.unacked_recv > 0 {
                match ps.ack_deadline {
                    Some(t) if t <= now => {
                        emit(peer as u16, Due::Ack);
                        ps.ack_deadline = None;
                        ack_queued = true;
                    }
                    Some(t) => next = Some(next.map_or(t, |n: Instant| n.min(t))),
                    None => {
                        let t = now + delayed_ack;
                        ps.ack_deadline = Some(t);
                        next = Some(next.map_or(t, |n: Instant| n.min(t)));
                    }
                }
            }
            // Fast path: the oldest unacknowledged message is not due (the
            // resend loop would stop at it).
            let Some(m) = ps.unacked_sends.front() else { continue };
            let due = m.sent_at + resend;
            let t = if due > now { due } else { Self::resend_due(ps, peer as u16, now, resend, &mut emit) };
            next = Some(next.map_or(t, |n: Instant| n.min(t)));
        }
        // `next` is every deadline's (the resent messages' included), except
        // that of an ack queued: that one is owed at once.
        self.not_before = if ack_queued { Instant::ZERO } else { next.unwrap_or(Instant::MAX) };
        next
    }

    /// Resends `peer`'s messages that are due (at least the oldest one is:
    /// lost frames or acks, rare) and returns when to look again.
    #[cold]
    #[inline(never)]
    fn resend_due(
        ps: &mut Peer,
        peer: u16,
        now: Instant,
        resend: Duration,
        emit: &mut impl FnMut(u16, Due),
    ) -> Instant {
        // The resent ones are due again one period from now.
        let mut next = now + resend;
        for m in ps.unacked_sends.iter_mut() {
            let due = m.sent_at + resend;
            if due > now {
                next = next.min(due);
                break;
            }
            m.sent_at = now;
            emit(peer, Due::Resend(*m));
        }
        next
    }

    /// The earliest protocol deadline: a delayed ack, or the resend of the
    /// oldest unacknowledged message to some peer (`None`: nothing to wait
    /// for; `Instant::ZERO`: an ack is owed with no timer running, so
    /// [`Endpoint::dispatch`] must start one). Before it, `dispatch` does
    /// nothing and returns it.
    pub fn poll_at(&self) -> Option<Instant> {
        let resend = self.params.resend;
        self.peers
            .iter()
            .flat_map(|ps| {
                let ack = (ps.unacked_recv > 0).then_some(ps.ack_deadline.unwrap_or(Instant::ZERO));
                let rs = ps.unacked_sends.front().map(|m| m.sent_at + resend);
                ack.into_iter().chain(rs)
            })
            .min()
    }

    /// Finalizing: every peer with in-order messages unacknowledged is acked
    /// now (`emit(peer)` each, in rank order). Returns whether any was.
    pub fn flush_acks(&mut self, mut emit: impl FnMut(u16)) -> bool {
        let mut flushed = false;
        for (i, ps) in self.peers.iter_mut().enumerate() {
            if ps.unacked_recv > 0 {
                ps.unacked_recv = 0;
                ps.ack_deadline = None;
                emit(i as u16);
                flushed = true;
            }
        }
        flushed
    }

    /// Whether every message sent was acknowledged.
    pub fn all_acked(&self) -> bool {
        self.peers.iter().all(|ps| ps.unacked_sends.is_empty())
    }

    /// Messages sent to `peer` and not yet acknowledged, oldest first.
    pub fn unacked(&self, peer: u16) -> impl Iterator<Item = &SentMsg> {
        self.peers[peer as usize].unacked_sends.iter()
    }

    /// Frames of the messages sent to `peer` and not yet acknowledged.
    pub fn unacked_frames(&self, peer: u16) -> u32 {
        self.peers[peer as usize].unacked_frames
    }
}
