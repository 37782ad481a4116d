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
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

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

/// Messages of one peer that a resend round may put on the wire again: the
/// oldest this many unacknowledged. The ones behind them wait for the ack
/// that the resent ones bring back (cumulative acks: a receiver keeps the
/// early messages it got, so filling the gap acknowledges them). [estimate:
/// Open-MX resends every due request of its `non_acked_req_q` at once
/// (`omx__process_resend_requests`, libopen-mx `omx_send.c`) but stops a
/// round when its expected-event slots run out; an uncapped round re-floods
/// the receive ring it overflowed]
pub const RESENDS_PER_PEER: usize = 32;

/// From the third consecutive resend round towards a peer with no ack in
/// between, each round doubles the delay, up to `resend <<
/// RESEND_BACKOFF_MAX`. The first two rounds keep the plain delay: a large
/// transfer outlasts it without any loss (the rendezvous is acked with the
/// notify), and those resends are not an overload. [estimate: Open-MX keeps
/// the delay fixed (`RESEND_PER_SECOND` = 2, libopen-mx `omx_lib.h`);
/// doubling is TCP's retransmission back-off (RFC 6298 5.5), which lets a
/// short configured delay drain an overflowed ring]
pub const RESEND_BACKOFF_MAX: u8 = 6;

/// A message still unacknowledged this many resend delays after it was
/// first sent makes the library give up on its peer ([`Due::GiveUp`]).
/// Open-MX gives up on a request resent more than `req_resends_max` = 1000
/// times (`OMX_RESENDS_MAX` in the environment; libopen-mx `omx_init.c`),
/// and then resets the partner (`omx__partner_cleanup`,
/// `omx__process_resend_requests`, libopen-mx `omx_send.c`); at its fixed
/// delay that is 1000 delays after the first send. The model's rounds back
/// off ([`RESEND_BACKOFF_MAX`]), so it counts the delays, not the rounds.
pub const RESENDS_MAX: u64 = 1000;

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
    /// The message is still unacknowledged [`RESENDS_MAX`] resend delays
    /// after its first send: the peer is taken as dead (nothing more is
    /// resent to it).
    GiveUp(SentMsg),
}

/// No slab slot / no ticket.
const NIL: u32 = u32::MAX;

/// `Peer::flags`: a delayed ack is armed (its entry in [`Endpoint::acks`]
/// is the one with ticket `Peer::ack_ticket`).
const ACK_ARMED: u8 = 1;
/// `Peer::flags`: a resend round ran since the last ack that released a
/// message; the round's state is in [`Endpoint::rounds`].
const IN_ROUND: u8 = 2;

/// State towards one remote peer: 48 bytes, kept for every rank of the run
/// (at 1,024 ranks, 48 MiB for all processes together). Messages it has
/// unacknowledged are in the endpoint's slab, the resend round state of a
/// peer that is being resent to in [`Endpoint::rounds`]. An ack that
/// releases every message unacknowledged (the usual case) reads and writes
/// this record only.
#[derive(Clone, Copy, Debug)]
struct Peer {
    /// Next sequence number to send.
    next_send: Seq,
    /// Next in-order sequence number expected.
    expected: Seq,
    /// Messages received in order and not yet acknowledged (saturating:
    /// only compared with 0 and with `ack_after` <= 1,024).
    unacked_recv: u16,
    /// Frames of the unacknowledged messages (the send window's use).
    unacked_frames: u32,
    /// The oldest and newest unacknowledged message (slots of
    /// [`Endpoint::sent`], linked oldest first; `NIL`: none), and how many
    /// there are: they are the sequence numbers `next_send - count ..
    /// next_send` (acks release the oldest first).
    head: u32,
    tail: u32,
    count: u32,
    /// The delayed ack's entry in [`Endpoint::acks`] (valid with `ACK_ARMED`).
    ack_ticket: u32,
    /// `ACK_ARMED`, `IN_ROUND`.
    flags: u8,
    /// When the next resend round is due (`Instant::MAX`: none; set while
    /// messages are unacknowledged and not given up on).
    resend_at: Instant,
    /// The time of this peer's live entry in [`Endpoint::resends`]
    /// (`Instant::MAX`: none). Entries of other times are stale.
    armed: Instant,
}

const _: () = assert!(std::mem::size_of::<Peer>() == 48);

impl Default for Peer {
    fn default() -> Self {
        Peer {
            next_send: 0,
            expected: 0,
            unacked_recv: 0,
            unacked_frames: 0,
            head: NIL,
            tail: NIL,
            count: 0,
            ack_ticket: 0,
            flags: 0,
            resend_at: Instant::MAX,
            armed: Instant::MAX,
        }
    }
}

/// The resend round state of a peer with `IN_ROUND`. Without it, the round
/// is due with the resend (`round_at` = `resend_at`) and has not backed off.
#[derive(Clone, Copy, Debug)]
struct Round {
    /// When the oldest message's next resend round is due (`resend_at` is
    /// this, or earlier for a message behind it).
    round_at: Instant,
    /// Resend rounds since the last ack that released a message.
    backoff: u8,
}

/// A slot of [`Endpoint::sent`]: an unacknowledged message and the one
/// sent after it to the same peer, or the next free slot.
#[derive(Clone, Copy, Debug)]
struct Slot {
    m: SentMsg,
    next: u32,
}

/// The protocol state of one endpoint: one [`Peer`] per rank of the run,
/// and the peers' deadlines, so that finding what is due costs nothing per
/// peer. Open-MX keeps the same deadlines in time-ordered lists whose heads
/// `omx__prepare_progress_wakeup` reads (`partners_to_ack_delayed_list`,
/// `non_acked_req_q`; libopen-mx `omx_ack.c`, `omx_send.c`):
/// * delayed acks fall due a fixed delay after they are armed, so they are
///   armed in time order: a FIFO of (deadline, peer) (`acks`), whose
///   cancelled entries are skipped when they reach its head;
/// * resend rounds move by acks and back-offs: a min-heap of (deadline,
///   peer) (`resends`) with at most one live entry per peer, pushed only
///   when a peer's round moves earlier than its live entry (once per
///   resend delay in a steady exchange).
///
/// The unacknowledged messages of all peers share one slab (`sent`), each
/// peer's linked oldest first; the messages an ack releases are freed as
/// one chain, and when it releases them all (the usual case) without
/// reading them. Freed slots are reused last freed first, so the slab is as
/// large as the most messages ever unacknowledged at once.
#[derive(Clone, Debug)]
pub struct Endpoint {
    params: Params,
    peers: Vec<Peer>,
    /// (deadline, peer) of the delayed acks, in arming (and deadline)
    /// order; the entry of ticket `ack_base` first.
    acks: VecDeque<(Instant, u16)>,
    ack_base: u32,
    /// The entry at the head of `acks` is known to be live (saves reading
    /// its peer at every `dispatch`).
    ack_head_live: bool,
    /// (resend round, peer): one live entry per peer at most (the one equal
    /// to its `armed`); a live entry whose peer's round moved later is
    /// pushed again at the later time when it comes up.
    resends: BinaryHeap<Reverse<(Instant, u16)>>,
    /// Round state of the peers with `IN_ROUND`.
    rounds: BTreeMap<u16, Round>,
    /// Unacknowledged messages, all peers together.
    sent: Vec<Slot>,
    /// Chains of free slots of `sent` (the messages an ack released), the
    /// last freed last.
    free: Vec<u32>,
    /// Slots of one peer's messages, oldest first (`run_due`, `unacked`).
    scratch: Vec<u32>,
    /// The heap's first entry is known to be exact (saves reading its peer
    /// at every `dispatch`).
    resend_top_exact: bool,
    /// `next` is the exact earliest deadline (`Instant::MAX`: none), as the
    /// last `dispatch` returned it: nothing moved a deadline earlier, nor
    /// the earliest one, since. `dispatch` returns it at once while it has
    /// not passed (most library steps).
    next: Instant,
    next_known: bool,
    /// Peers due in one `dispatch`, put in rank order (kept to reuse its
    /// allocation).
    due: Vec<u16>,
    /// Unacknowledged messages, all peers together.
    unacked_total: u32,
    /// Deadline entries looked at by `dispatch` (a debug counter of the
    /// timer work: it must not grow with the number of peers).
    pub timer_visits: u64,
    /// Messages put on the wire again by resend rounds.
    pub resent: u64,
    /// New messages sent while their peer's send window was full (see
    /// [`Endpoint::window_full`]): every send waits for the window, so the
    /// run's invariants require none.
    pub window_overruns: u64,
}

impl Endpoint {
    /// An endpoint with nothing sent or received, towards `peers` ranks.
    pub fn new(params: Params, peers: usize) -> Self {
        Endpoint {
            params,
            peers: vec![Peer::default(); peers],
            acks: VecDeque::new(),
            ack_base: 0,
            ack_head_live: false,
            resends: BinaryHeap::new(),
            rounds: BTreeMap::new(),
            sent: Vec::new(),
            free: Vec::new(),
            scratch: Vec::new(),
            resend_top_exact: false,
            next: Instant::MAX,
            next_known: false,
            due: Vec::new(),
            unacked_total: 0,
            timer_visits: 0,
            resent: 0,
            window_overruns: 0,
        }
    }

    /// `peer`'s resend round may have moved earlier: give it a heap entry
    /// if it is earlier than its live one.
    #[inline(always)]
    fn rearm(&mut self, peer: u16) {
        let ps = &self.peers[peer as usize];
        if ps.resend_at < ps.armed {
            self.arm(peer);
        }
    }

    /// Pushes `peer`'s heap entry at its resend round (once per resend
    /// delay in a steady exchange: out of line).
    #[cold]
    #[inline(never)]
    fn arm(&mut self, peer: u16) {
        let ps = &mut self.peers[peer as usize];
        ps.armed = ps.resend_at;
        self.resends.push(Reverse((ps.resend_at, peer)));
        self.resend_top_exact = false;
        self.next_known = false;
    }

    /// `peer` leaves its resend round (`IN_ROUND`): an ack released a
    /// message, or it had none unacknowledged.
    #[cold]
    #[inline(never)]
    fn end_round(&mut self, peer: u16) {
        self.peers[peer as usize].flags &= !IN_ROUND;
        self.rounds.remove(&peer);
    }

    /// `peer`'s resend round changed: the heap's first entry is no longer
    /// known to be exact if it is `peer`'s.
    #[inline(always)]
    fn round_moved(&mut self, peer: u16) {
        if self.resends.peek().is_some_and(|&Reverse((_, p))| p == peer) {
            self.resend_top_exact = false;
            self.next_known = false;
        }
    }

    /// `peer`'s delayed ack is cancelled (if armed).
    #[inline(always)]
    fn cancel_ack(&mut self, peer: u16) {
        let ps = &mut self.peers[peer as usize];
        if ps.flags & ACK_ARMED != 0 {
            ps.flags &= !ACK_ARMED;
            if ps.ack_ticket == self.ack_base {
                self.ack_head_live = false;
                self.next_known = false;
            }
        }
    }

    /// Whether the delayed-ack entry of ticket `ticket` is `peer`'s live one.
    #[inline(always)]
    fn ack_live(&self, peer: u16, ticket: u32) -> bool {
        let ps = &self.peers[peer as usize];
        ps.flags & ACK_ARMED != 0 && ps.ack_ticket == ticket
    }

    /// `peer`'s delayed ack, if armed and still in `acks` (an armed one
    /// that left it is due: `dispatch` runs it before it returns).
    fn ack_at(&self, peer: u16) -> Option<Instant> {
        let ps = &self.peers[peer as usize];
        if ps.flags & ACK_ARMED == 0 || ps.unacked_recv == 0 {
            return None;
        }
        self.acks.get(ps.ack_ticket.wrapping_sub(self.ack_base) as usize).map(|&(t, _)| t)
    }

    /// Puts `m` in a slot (the last freed first).
    fn store(&mut self, m: SentMsg) -> u32 {
        let slot = Slot { m, next: NIL };
        match self.free.last_mut() {
            None => {
                self.sent.push(slot);
                (self.sent.len() - 1) as u32
            }
            Some(chain) => {
                let i = *chain;
                match self.sent[i as usize].next {
                    NIL => {
                        self.free.pop();
                    }
                    rest => *chain = rest,
                }
                self.sent[i as usize] = slot;
                i
            }
        }
    }

    /// Puts the slots of `peer`'s unacknowledged messages, oldest first, in
    /// `scratch`.
    fn collect_unacked(&mut self, peer: u16) {
        self.scratch.clear();
        let mut at = self.peers[peer as usize].head;
        while at != NIL {
            self.scratch.push(at);
            at = self.sent[at as usize].next;
        }
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
        if self.window_full(peer, frames) {
            self.window_overruns += 1;
        }
        let seq = self.peers[peer as usize].next_send;
        let m = SentMsg { seq, req, sent_at: now, first_sent: now, size, tag, is_notify, frames };
        let slot = self.store(m);
        let ps = &mut self.peers[peer as usize];
        ps.next_send += 1;
        ps.unacked_frames += frames;
        ps.count += 1;
        self.unacked_total += 1;
        if ps.tail != NIL {
            self.sent[ps.tail as usize].next = slot;
            ps.tail = slot;
        } else {
            // The oldest: its round is due one resend delay from now.
            ps.head = slot;
            ps.tail = slot;
            ps.resend_at = now + self.params.resend;
            if ps.flags & IN_ROUND != 0 {
                self.end_round(peer);
            }
            self.round_moved(peer);
            self.rearm(peer);
        }
        m
    }

    /// A cumulative ack from `peer` (piggy-backed or explicit) carrying the
    /// 16 low bits of the next sequence number it expects: every message
    /// before it is released, oldest first. Returns how many were.
    pub fn process_ack(&mut self, peer: u16, low: u16) -> usize {
        let ps = &mut self.peers[peer as usize];
        let upto = widen(ps.next_send, low);
        let oldest = ps.next_send - ps.count;
        let n = upto.saturating_sub(oldest).min(ps.count);
        if n == 0 {
            return 0;
        }
        self.unacked_total -= n;
        ps.count -= n;
        self.free.push(ps.head);
        if ps.count == 0 {
            ps.head = NIL;
            ps.tail = NIL;
            ps.unacked_frames = 0;
            ps.resend_at = Instant::MAX;
        } else {
            self.release_oldest(peer, n);
        }
        // The peer answers: the back-off ends.
        if self.peers[peer as usize].flags & IN_ROUND != 0 {
            self.end_round(peer);
        }
        self.round_moved(peer);
        self.rearm(peer);
        n as usize
    }

    /// The cumulative ack a frame to `peer` carries (piggy-backed on a
    /// message, or an explicit ACK): its 16 low bits. Everything received in
    /// order is acknowledged from now on, and the delayed ack is cancelled.
    pub fn dispatch_ack(&mut self, peer: u16) -> u16 {
        self.cancel_ack(peer);
        let ps = &mut self.peers[peer as usize];
        ps.unacked_recv = 0;
        ps.expected as u16
    }

    /// `peer`'s `n` oldest messages were released and freed as one chain,
    /// and some are left: walk the released ones and end their chain.
    #[inline(never)]
    fn release_oldest(&mut self, peer: u16, n: u32) {
        let ps = &mut self.peers[peer as usize];
        let mut at = ps.head;
        for _ in 1..n {
            ps.unacked_frames -= self.sent[at as usize].m.frames;
            at = self.sent[at as usize].next;
        }
        let last = &mut self.sent[at as usize];
        ps.unacked_frames -= last.m.frames;
        ps.head = last.next;
        last.next = NIL;
        // The new oldest is due one period after it was (re)sent, maybe
        // before the one released (it was not resent with it).
        ps.resend_at = self.sent[ps.head as usize].m.sent_at + self.params.resend;
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
    /// is expected, and it waits for an ack ([`AckPlan`]). The caller queues
    /// the explicit ack of [`AckPlan::AckNow`] at once. `now` never goes
    /// back from one call to the next (the delayed acks are armed in
    /// deadline order).
    pub fn delivered(&mut self, peer: u16, now: Instant) -> AckPlan {
        let ps = &mut self.peers[peer as usize];
        ps.expected += 1;
        ps.unacked_recv = ps.unacked_recv.saturating_add(1);
        if ps.unacked_recv as u32 >= self.params.ack_after {
            self.cancel_ack(peer);
            AckPlan::AckNow
        } else if ps.flags & ACK_ARMED == 0 {
            let t = now + self.params.delayed_ack;
            debug_assert!(self.acks.back().is_none_or(|&(last, _)| last <= t), "delayed acks armed out of order");
            ps.flags |= ACK_ARMED;
            ps.ack_ticket = self.ack_base.wrapping_add(self.acks.len() as u32);
            if self.acks.is_empty() {
                self.ack_head_live = true;
                self.next_known = false;
            }
            self.acks.push_back((t, peer));
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
    /// `emit(peer, Due::Ack)` for a delayed ack, then a resend round:
    /// `emit(peer, Due::Resend(m))` for each message not (re)sent within a
    /// resend period, oldest first, up to the first that is not due and at
    /// most [`RESENDS_PER_PEER`]; `emit(peer, Due::GiveUp(m))` instead, and
    /// no more resends to that peer, for a message due that was first sent
    /// [`RESENDS_MAX`] resend delays ago or more. The next round towards that peer is due
    /// one period from now, doubled per round without an ack from the third
    /// (at most [`RESEND_BACKOFF_MAX`] doublings), or earlier when a message
    /// behind the resent ones falls due; an ack that releases a message ends
    /// the back-off.
    /// Returns the earliest deadline left (`None`: nothing to wait for).
    ///
    /// Costs O(1) per delayed ack and O(log peers) per resend deadline that
    /// passed or moved; nothing is scanned per peer.
    #[inline(always)]
    pub fn dispatch(&mut self, now: Instant, mut emit: impl FnMut(u16, Due)) -> Option<Instant> {
        if self.next_known && self.next > now {
            return (self.next != Instant::MAX).then_some(self.next);
        }
        self.dispatch_passed(now, &mut emit)
    }

    /// `dispatch` once a deadline may have passed, or moved.
    #[inline(never)]
    fn dispatch_passed(&mut self, now: Instant, mut emit: impl FnMut(u16, Due)) -> Option<Instant> {
        while let Some(&(t, peer)) = self.acks.front() {
            if t > now {
                break;
            }
            if self.ack_live(peer, self.ack_base) {
                self.due.push(peer);
            }
            self.acks.pop_front();
            self.ack_base = self.ack_base.wrapping_add(1);
            self.ack_head_live = false;
            self.timer_visits += 1;
        }
        while let Some(&Reverse((t, peer))) = self.resends.peek() {
            if t > now {
                break;
            }
            self.resends.pop();
            self.resend_top_exact = false;
            self.timer_visits += 1;
            let ps = &mut self.peers[peer as usize];
            if ps.armed == t {
                ps.armed = Instant::MAX;
                self.due.push(peer);
            }
        }
        if !self.due.is_empty() {
            self.run_due(now, &mut emit);
        }
        let next = self.poll_at_exact();
        (self.next, self.next_known) = (next.unwrap_or(Instant::MAX), true);
        next
    }

    /// The peers whose live entry passed, in rank order (as a scan of the
    /// peers would meet them).
    #[cold]
    #[inline(never)]
    fn run_due(&mut self, now: Instant, emit: &mut impl FnMut(u16, Due)) {
        let mut due = std::mem::take(&mut self.due);
        due.sort_unstable();
        due.dedup();
        let Params { resend, .. } = self.params;
        for &peer in &due {
            let ps = &mut self.peers[peer as usize];
            // An armed delayed ack that left `acks` passed.
            let ack_left = ps.ack_ticket.wrapping_sub(self.ack_base) as usize >= self.acks.len();
            if ps.unacked_recv > 0 && ps.flags & ACK_ARMED != 0 && ack_left {
                emit(peer, Due::Ack);
                ps.flags &= !ACK_ARMED;
            }
            if ps.resend_at <= now {
                let mut round = match ps.flags & IN_ROUND {
                    0 => Round { round_at: ps.resend_at, backoff: 0 },
                    _ => self.rounds[&peer],
                };
                if round.round_at <= now {
                    // The resent ones are due again after the back-off.
                    round.backoff = (round.backoff + 1).min(RESEND_BACKOFF_MAX + 1);
                    round.round_at = now + resend.times(1u64 << round.backoff.saturating_sub(1));
                }
                // A message behind them that was not due wakes the peer up at
                // its own time, and goes if the oldest is due then.
                let mut next = round.round_at;
                self.collect_unacked(peer);
                for &at in self.scratch.iter().take(RESENDS_PER_PEER) {
                    let m = &mut self.sent[at as usize].m;
                    let due = m.sent_at + resend;
                    if due > now {
                        next = next.min(due);
                        break;
                    }
                    if now.since(m.first_sent) >= resend.times(RESENDS_MAX) {
                        emit(peer, Due::GiveUp(*m));
                        next = Instant::MAX;
                        break;
                    }
                    m.sent_at = now;
                    self.resent += 1;
                    emit(peer, Due::Resend(*m));
                }
                let ps = &mut self.peers[peer as usize];
                ps.resend_at = next;
                ps.flags |= IN_ROUND;
                self.rounds.insert(peer, round);
                self.round_moved(peer);
            }
            self.rearm(peer);
        }
        due.clear();
        self.due = due;
    }

    /// Makes the earliest deadline exact and returns it: cancelled delayed
    /// acks at the head of `acks` are dropped; if the heap's first entry is
    /// earlier than the first delayed ack, stale entries are dropped and a
    /// live one whose peer's round moved later is pushed again.
    fn poll_at_exact(&mut self) -> Option<Instant> {
        if !self.ack_head_live {
            while let Some(&(_, peer)) = self.acks.front() {
                if self.ack_live(peer, self.ack_base) {
                    break;
                }
                self.acks.pop_front();
                self.ack_base = self.ack_base.wrapping_add(1);
                self.timer_visits += 1;
            }
            self.ack_head_live = true;
        }
        let ack = self.acks.front().map(|&(t, _)| t);
        while let Some(&Reverse((t, peer))) = self.resends.peek() {
            if self.resend_top_exact || ack.is_some_and(|a| a <= t) {
                // Exact, or no resend round is earlier than this entry.
                break;
            }
            let ps = &mut self.peers[peer as usize];
            if ps.armed == t && ps.resend_at == t {
                self.resend_top_exact = true;
                break;
            }
            self.resends.pop();
            self.timer_visits += 1;
            if ps.armed == t {
                ps.armed = Instant::MAX;
                self.rearm(peer);
            }
        }
        self.poll_at()
    }

    /// No protocol deadline is earlier than this (`None`: nothing to wait
    /// for). [`Endpoint::dispatch`] returns the exact earliest deadline.
    pub fn poll_at(&self) -> Option<Instant> {
        let ack = self.acks.front().map(|&(t, _)| t);
        let resend = self.resends.peek().map(|&Reverse((t, _))| t);
        match (ack, resend) {
            (Some(a), Some(r)) => Some(a.min(r)),
            (a, r) => a.or(r),
        }
    }

    /// Finalizing: every peer with in-order messages unacknowledged is acked
    /// now (`emit(peer)` each, in rank order). Returns whether any was.
    /// Runs once per process (at the end of its program): it scans the
    /// peers.
    pub fn flush_acks(&mut self, mut emit: impl FnMut(u16)) -> bool {
        let mut flushed = false;
        for (i, ps) in self.peers.iter_mut().enumerate() {
            if ps.unacked_recv > 0 {
                ps.unacked_recv = 0;
                ps.flags &= !ACK_ARMED;
                emit(i as u16);
                flushed = true;
            }
        }
        self.ack_head_live = false;
        self.next_known = false;
        flushed
    }

    /// Whether every message sent was acknowledged.
    pub fn all_acked(&self) -> bool {
        self.unacked_total == 0
    }

    /// Messages sent to `peer` and not yet acknowledged, oldest first.
    pub fn unacked(&self, peer: u16) -> impl Iterator<Item = &SentMsg> {
        let sent = &self.sent;
        let first = sent.get(self.peers[peer as usize].head as usize);
        std::iter::successors(first, move |s| sent.get(s.next as usize)).map(|s| &s.m)
    }

    /// `peer`'s deadlines: its delayed ack (while messages are
    /// unacknowledged) and its next resend round.
    pub fn deadlines(&self, peer: u16) -> (Option<Instant>, Option<Instant>) {
        let ps = &self.peers[peer as usize];
        (self.ack_at(peer), (ps.resend_at != Instant::MAX).then_some(ps.resend_at))
    }

    /// Bytes this endpoint holds (its allocations), for the memory tests.
    #[cfg(test)]
    pub(crate) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.peers.capacity() * size_of::<Peer>()
            + self.sent.capacity() * size_of::<Slot>()
            + self.free.capacity() * 4
            + self.scratch.capacity() * 4
            + self.acks.capacity() * size_of::<(Instant, u16)>()
            + self.resends.capacity() * size_of::<Reverse<(Instant, u16)>>()
            + self.due.capacity() * 2
            + self.rounds.len() * (size_of::<(u16, Round)>() + 16)
    }

    /// Frames of the messages sent to `peer` and not yet acknowledged.
    pub fn unacked_frames(&self, peer: u16) -> u32 {
        self.peers[peer as usize].unacked_frames
    }
}
