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

mod polled;

use super::sent::{release_oldest, store, SentMsg, Slot, NIL};
use super::{widen, Seq};
use crate::paged::Paged;
use crate::time::{Duration, Instant};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

/// Stale entries the protocol-timer heap may hold beyond as many as its
/// live ones before they are dropped at once: a few peers' worth, so that
/// an endpoint with one or two deadlines pending does not compact at every
/// other push.
pub(crate) const HEAP_SLACK: usize = 32;

/// State towards one remote peer: 64 bytes (one cache line), kept for each
/// rank the endpoint talks to (in pages of 64 ranks, see [`crate::paged`]:
/// a process of a 1,024-rank all-to-all keeps 64 KiB of peers, one of a
/// halo exchange 4 or 8 KiB). The messages it has unacknowledged are in the
/// endpoint's slab ([`Endpoint::sent`]), so that a peer holds no buffer of
/// its own, and the slab is as large as the most messages it ever had
/// unacknowledged at once.
/// Deadlines are `Instant::MAX` when not set.
#[derive(Clone, Copy, Debug)]
struct Peer {
    /// Next sequence number to send.
    next_send: Seq,
    /// Next in-order sequence number expected.
    expected: Seq,
    /// Messages received in order and not yet acknowledged.
    unacked_recv: u32,
    /// Frames of the unacknowledged messages (the send window's use).
    unacked_frames: u32,
    /// The oldest and the newest unacknowledged message: slots of
    /// [`Endpoint::sent`], linked oldest first (`NIL`: none).
    head: u32,
    tail: u32,
    /// Resend rounds since the last ack that released a message.
    backoff: u8,
    /// The peer is in [`Endpoint::owed`].
    owed: bool,
    /// How many messages are unacknowledged: the sequence numbers
    /// `next_send - count .. next_send` (acks release the oldest first).
    count: u32,
    /// Deadline of the delayed explicit ack, if one is due.
    ack_deadline: Instant,
    /// When the next resend round is due (set while messages are
    /// unacknowledged).
    resend_at: Instant,
    /// When the oldest message's next resend round is due (`resend_at` is
    /// this, or earlier for a message behind it).
    round_at: Instant,
    /// The time of this peer's live entry in [`Endpoint::timers`]
    /// (`Instant::MAX`: none). Entries of other times are stale.
    armed: Instant,
}

const _: () = assert!(std::mem::size_of::<Peer>() == 64);

impl Default for Peer {
    fn default() -> Self {
        Peer {
            next_send: 0,
            expected: 0,
            unacked_recv: 0,
            unacked_frames: 0,
            head: NIL,
            tail: NIL,
            backoff: 0,
            owed: false,
            count: 0,
            ack_deadline: Instant::MAX,
            resend_at: Instant::MAX,
            round_at: Instant::MAX,
            armed: Instant::MAX,
        }
    }
}

impl Peer {
    /// The peer's earliest deadline (`Instant::MAX`: none): its delayed ack
    /// or its resend round. (An ack owed with no timer is already queued by
    /// the caller: it has no deadline.)
    #[inline(always)]
    fn deadline(&self) -> Instant {
        let ack = if self.unacked_recv > 0 { self.ack_deadline } else { Instant::MAX };
        ack.min(self.resend_at)
    }

    /// Whether `frames` more frames would pass a send window of `window`
    /// (see [`Endpoint::window_full`]).
    #[inline(always)]
    fn window_full(&self, frames: u32, window: u32) -> bool {
        self.unacked_frames > 0 && self.unacked_frames + frames > window
    }
}

/// Pushes a peer on a list that takes each peer once in a while (out of
/// line: the fast path only tests the peer's flag).
#[cold]
#[inline(never)]
fn push_cold(list: &mut Vec<u16>, peer: u16) {
    list.push(peer);
}

/// `Some(t)` unless `t` is `Instant::MAX` (the sentinel of no deadline).
fn unless_max(t: Instant) -> Option<Instant> {
    (t != Instant::MAX).then_some(t)
}

/// The protocol state of one endpoint: one `Peer` per rank it talks to, and
/// the peers' deadlines in a min-heap, so that finding what is due costs
/// O(log peers) per deadline and nothing per peer (the shape of Open-MX's
/// time-ordered `non_acked_req_q` and `partners_to_ack_delayed_list`, whose
/// heads `omx__prepare_progress_wakeup` reads, libopen-mx `omx_ack.c`).
///
/// The unacknowledged messages of all peers share one slab (`sent`), each
/// peer's linked oldest first, and the free slots are a stack of indices: a
/// send writes its slot without reading it (a store that misses the cache
/// waits in the store buffer, a load that misses stalls what depends on
/// it), and an ack that releases a peer's only message reads no slot.
///
/// Laid out in declaration order (`repr(C)`), what a send or an ack reads
/// first, as [`crate::sim`]'s process state is.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Endpoint {
    /// A record per rank of the run, made a page of ranks at a time as
    /// the endpoint first talks to them ([`crate::paged`]).
    peers: Paged<Peer>,
    /// The time of [`Endpoint::timers`]' first entry (`Instant::MAX`: none),
    /// beside `peers`: every library step asks [`Endpoint::poll_at`], and
    /// this way reads the line a send or a delivery reads anyway, not the
    /// heap's (at hundreds of ranks one cache miss fewer per step).
    first: Instant,
    /// Unacknowledged messages of all peers, and free slots.
    sent: Vec<Slot>,
    /// (deadline, peer): at most one live entry per peer (the one equal to
    /// its `armed`); an entry is pushed only when a peer's deadline moves
    /// earlier than its live one, and a live entry whose peer's deadline
    /// moved later is pushed again at the later time when it comes up.
    /// The entries left behind are stale; they are dropped when they come
    /// up, or all at once when they outnumber the live ones
    /// ([`Endpoint::compact`]): a push never takes the heap past twice its
    /// live peers and [`HEAP_SLACK`].
    timers: BinaryHeap<Reverse<(Instant, u16)>>,
    /// Peers with a live entry in `timers` (`armed` not `Instant::MAX`).
    live: u32,
    /// Free slots of `sent`, the last freed last (reused first).
    free: Vec<u32>,
    params: Params,
    /// Unacknowledged messages, all peers together.
    unacked_total: u32,
    /// Peers that were delivered a message since [`Endpoint::flush_acks`]
    /// last ran (each once, with `Peer::owed`): the only ones it may have
    /// to ack.
    owed: Vec<u16>,
    /// Peers due in one `dispatch`, put in rank order (kept to reuse its
    /// allocation).
    due: Vec<u16>,
    /// Heap entries looked at by `dispatch` (a debug counter of the timer
    /// work: it must not grow with the number of peers).
    pub timer_visits: u64,
    /// Peers looked at by `flush_acks` (a debug counter as above).
    pub flush_visits: u64,
    /// Times the heap's stale entries were dropped all at once, when they
    /// outnumbered the live ones.
    pub compactions: u64,
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
            peers: Paged::new(peers, Peer::default()),
            first: Instant::MAX,
            sent: Vec::new(),
            free: Vec::new(),
            timers: BinaryHeap::new(),
            live: 0,
            due: Vec::new(),
            owed: Vec::new(),
            unacked_total: 0,
            timer_visits: 0,
            flush_visits: 0,
            compactions: 0,
            resent: 0,
            window_overruns: 0,
        }
    }

    /// Bytes of peer records made so far (pages of [`crate::paged::PAGE`]
    /// ranks): what the endpoint holds for the ranks it talked to.
    pub fn peer_bytes(&self) -> usize {
        self.peers.pages_made() * crate::paged::PAGE * std::mem::size_of::<Peer>()
    }

    /// Chunks of page addresses of the peer records made so far (see
    /// [`crate::paged`]).
    pub fn peer_chunks(&self) -> usize {
        self.peers.chunks_made()
    }

    /// `peer`'s deadline may have moved earlier: give it a heap entry if it
    /// is earlier than its live one.
    #[inline(always)]
    fn rearm(&mut self, peer: u16) {
        let ps = &mut self.peers[peer as usize];
        let t = ps.deadline();
        if t < ps.armed {
            self.live += u32::from(ps.armed == Instant::MAX);
            ps.armed = t;
            self.timers.push(Reverse((t, peer)));
            self.first = self.first.min(t);
            if self.timers.len() > 2 * self.live as usize + HEAP_SLACK {
                self.compact();
            }
        }
    }

    /// Drops every stale entry of the heap at once, leaving one entry per
    /// live peer. Run when the heap holds more than twice as many entries
    /// as live peers (and [`HEAP_SLACK`] more), so its O(entries × log)
    /// cost is paid at most once per `live + HEAP_SLACK` pushes.
    ///
    /// Without it, a deadline that keeps moving earlier and back (a delayed
    /// ack due long before the resend round, at each message received)
    /// leaves an entry per move until the resend delay passes, half a
    /// second of simulated time at Open-MX's: the heap's memory would grow
    /// with the messages received in that time, not with the deadlines
    /// pending. The entries left at the resend round's time all match the
    /// peer's `armed` again once the ack has gone, so they are deduplicated,
    /// not only filtered. What the endpoint does is unchanged: a stale or
    /// duplicate entry does nothing when it comes up.
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        let peers = &self.peers;
        let mut entries = std::mem::take(&mut self.timers).into_vec();
        entries.retain(|&Reverse((t, peer))| peers[peer as usize].armed == t);
        entries.sort_unstable();
        entries.dedup();
        debug_assert_eq!(entries.len(), self.live as usize);
        self.timers = BinaryHeap::from(entries);
        self.first = self.timers.peek().map_or(Instant::MAX, |&Reverse((t, _))| t);
        self.compactions += 1;
    }

    /// Entries of the protocol-timer heap, live and stale.
    pub fn timer_entries(&self) -> usize {
        self.timers.len()
    }

    // --- Sending ---------------------------------------------------------

    /// Whether a message of `frames` frames to `peer` must wait for acks:
    /// the peer's unacknowledged frames plus these would exceed the send
    /// window (a message alone always goes, however large).
    pub fn window_full(&self, peer: u16, frames: u32) -> bool {
        self.peers[peer as usize].window_full(frames, self.params.send_window_frames)
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
        // The peer's record is looked up once (a lookup reads and tests its
        // page's address).
        let ps = &mut self.peers[peer as usize];
        if ps.window_full(frames, self.params.send_window_frames) {
            self.window_overruns += 1;
        }
        let m = SentMsg { seq: ps.next_send, req, sent_at: now, first_sent: now, size, tag, is_notify, frames };
        let slot = store(&mut self.sent, &mut self.free, m);
        ps.next_send += 1;
        ps.count += 1;
        ps.unacked_frames += frames;
        self.unacked_total += 1;
        if ps.head == NIL {
            ps.head = slot;
            ps.tail = slot;
            ps.round_at = now + self.params.resend;
            ps.resend_at = ps.round_at;
            ps.backoff = 0;
            self.rearm(peer);
        } else {
            let tail = ps.tail;
            ps.tail = slot;
            self.sent[tail as usize].next = slot;
        }
        m
    }

    /// A cumulative ack from `peer` (piggy-backed or explicit) carrying the
    /// 16 low bits of the next sequence number it expects: every message
    /// before it is released, oldest first. Returns how many were.
    pub fn process_ack(&mut self, peer: u16, low: u16) -> usize {
        let resend = self.params.resend;
        let ps = &mut self.peers[peer as usize];
        let upto = widen(ps.next_send, low);
        let n = upto.saturating_sub(ps.next_send - ps.count).min(ps.count);
        if n == 0 {
            return 0;
        }
        let at = if ps.count == 1 {
            // The peer's only message: its slot need not be read.
            ps.unacked_frames = 0;
            self.free.push(ps.head);
            NIL
        } else {
            let (at, frames) = release_oldest(&self.sent, &mut self.free, ps.head, n);
            ps.unacked_frames -= frames;
            at
        };
        self.unacked_total -= n;
        ps.count -= n;
        ps.head = at;
        if at == NIL {
            ps.tail = NIL;
        }
        // The peer answers: the back-off ends, and the new oldest is due one
        // period after it was (re)sent, maybe before the one released (it
        // was not resent with it).
        ps.backoff = 0;
        ps.resend_at = if at == NIL { Instant::MAX } else { self.sent[at as usize].m.sent_at + resend };
        ps.round_at = ps.resend_at;
        self.rearm(peer);
        n as usize
    }

    /// The cumulative ack a frame to `peer` carries (piggy-backed on a
    /// message, or an explicit ACK): its 16 low bits. Everything received in
    /// order is acknowledged from now on, and the delayed ack is cancelled.
    pub fn dispatch_ack(&mut self, peer: u16) -> u16 {
        let ps = &mut self.peers[peer as usize];
        ps.unacked_recv = 0;
        ps.ack_deadline = Instant::MAX;
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
    /// is expected, and it waits for an ack ([`AckPlan`]). The caller queues
    /// the explicit ack of [`AckPlan::AckNow`] at once. Inlined into each
    /// caller: the Open-MX receive path's, which has it on every message,
    /// and the \[LCI] library's reliable protocol (`library/lci/mod.rs`).
    #[inline(always)]
    pub fn delivered(&mut self, peer: u16, now: Instant) -> AckPlan {
        let ps = &mut self.peers[peer as usize];
        ps.expected += 1;
        ps.unacked_recv += 1;
        if !ps.owed {
            ps.owed = true;
            push_cold(&mut self.owed, peer);
        }
        if ps.unacked_recv >= self.params.ack_after {
            ps.ack_deadline = Instant::MAX;
            AckPlan::AckNow
        } else if ps.ack_deadline == Instant::MAX {
            let t = now + self.params.delayed_ack;
            ps.ack_deadline = t;
            self.rearm(peer);
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
    /// Costs O(log peers) per deadline that passed or moved; nothing is
    /// scanned per peer.
    pub fn dispatch(&mut self, now: Instant, mut emit: impl FnMut(u16, Due)) -> Option<Instant> {
        while self.first <= now {
            let Some(Reverse((t, peer))) = self.pop_timer() else { break };
            self.timer_visits += 1;
            let ps = &mut self.peers[peer as usize];
            if ps.armed == t {
                ps.armed = Instant::MAX;
                self.live -= 1;
                self.due.push(peer);
            }
        }
        if !self.due.is_empty() {
            self.run_due(now, &mut emit);
        }
        self.poll_at_exact()
    }

    /// The peers whose live entry passed, in rank order (as a scan of the
    /// peers would meet them).
    #[cold]
    #[inline(never)]
    fn run_due(&mut self, now: Instant, emit: &mut impl FnMut(u16, Due)) {
        let mut due = std::mem::take(&mut self.due);
        due.sort_unstable();
        let Params { resend, .. } = self.params;
        for &peer in &due {
            let ps = &mut self.peers[peer as usize];
            if ps.unacked_recv > 0 && ps.ack_deadline <= now {
                emit(peer, Due::Ack);
                ps.ack_deadline = Instant::MAX;
            }
            if ps.resend_at <= now {
                if ps.round_at <= now {
                    // The resent ones are due again after the back-off.
                    ps.backoff = (ps.backoff + 1).min(RESEND_BACKOFF_MAX + 1);
                    ps.round_at = now + resend.times(1u64 << ps.backoff.saturating_sub(1));
                }
                // A message behind them that was not due wakes the peer up at
                // its own time, and goes if the oldest is due then.
                let mut next = ps.round_at;
                let mut at = ps.head;
                for _ in 0..RESENDS_PER_PEER {
                    if at == NIL {
                        break;
                    }
                    let Slot { m, next: after } = &mut self.sent[at as usize];
                    at = *after;
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
                self.peers[peer as usize].resend_at = next;
            }
            self.rearm(peer);
        }
        due.clear();
        self.due = due;
    }

    /// Makes the heap's first entry exact (a live entry at its peer's
    /// current deadline) and returns its time: stale entries are dropped,
    /// and a live one whose peer's deadline moved later is pushed again.
    fn poll_at_exact(&mut self) -> Option<Instant> {
        while let Some(&Reverse((t, peer))) = self.timers.peek() {
            let ps = &mut self.peers[peer as usize];
            if ps.armed != t {
                self.pop_timer();
                self.timer_visits += 1;
                continue;
            }
            let d = ps.deadline();
            if d == t {
                return Some(t);
            }
            ps.armed = Instant::MAX;
            self.live -= 1;
            self.pop_timer();
            self.timer_visits += 1;
            if d != Instant::MAX {
                self.rearm(peer);
            }
        }
        None
    }

    /// No protocol deadline is earlier than this (`None`: nothing to wait
    /// for). [`Endpoint::dispatch`] returns the exact earliest deadline.
    pub fn poll_at(&self) -> Option<Instant> {
        debug_assert_eq!(self.first, self.timers.peek().map_or(Instant::MAX, |&Reverse((t, _))| t));
        (self.first != Instant::MAX).then_some(self.first)
    }

    /// Whether a timer runs: some peer's deadline is armed (the "count of
    /// running timers" \[LCI] §5.2's NI clock reads; an armed deadline that
    /// an ack has since moved later counts until it comes up).
    pub fn timers_running(&self) -> bool {
        self.live > 0
    }

    /// Takes the heap's first entry, keeping [`Endpoint::first`].
    #[inline(always)]
    fn pop_timer(&mut self) -> Option<Reverse<(Instant, u16)>> {
        let e = self.timers.pop();
        self.first = self.timers.peek().map_or(Instant::MAX, |&Reverse((t, _))| t);
        e
    }

    /// Finalizing: every peer with in-order messages unacknowledged is acked
    /// now (`emit(peer)` each, in rank order). Returns whether any was.
    /// Runs at the end of a process's program, and again each time the
    /// process wakes up while its sends wait for acks: it looks only at the
    /// peers delivered a message since it last ran, not at every peer.
    #[inline(never)]
    pub fn flush_acks(&mut self, mut emit: impl FnMut(u16)) -> bool {
        if self.owed.is_empty() {
            return false;
        }
        let mut owed = std::mem::take(&mut self.owed);
        owed.sort_unstable();
        let mut flushed = false;
        self.flush_visits += owed.len() as u64;
        for &peer in &owed {
            let ps = &mut self.peers[peer as usize];
            ps.owed = false;
            if ps.unacked_recv > 0 {
                ps.unacked_recv = 0;
                ps.ack_deadline = Instant::MAX;
                emit(peer);
                flushed = true;
            }
        }
        owed.clear();
        self.owed = owed;
        flushed
    }

    /// Whether every message sent was acknowledged.
    pub fn all_acked(&self) -> bool {
        self.unacked_total == 0
    }

    /// Messages sent to `peer` and not yet acknowledged, oldest first.
    pub fn unacked(&self, peer: u16) -> impl Iterator<Item = &SentMsg> {
        let mut at = self.peers[peer as usize].head;
        std::iter::from_fn(move || {
            let s = self.sent.get(at as usize)?;
            at = s.next;
            Some(&s.m)
        })
    }

    /// `peer`'s deadlines: its delayed ack (while messages are
    /// unacknowledged) and its next resend round.
    pub fn deadlines(&self, peer: u16) -> (Option<Instant>, Option<Instant>) {
        let ps = &self.peers[peer as usize];
        (unless_max(if ps.unacked_recv > 0 { ps.ack_deadline } else { Instant::MAX }), unless_max(ps.resend_at))
    }

    /// Slots of the slab that holds the unacknowledged messages of all
    /// peers: the most that were ever unacknowledged at once.
    pub fn slots(&self) -> usize {
        self.sent.len()
    }

    /// Frames of the messages sent to `peer` and not yet acknowledged.
    pub fn unacked_frames(&self, peer: u16) -> u32 {
        self.peers[peer as usize].unacked_frames
    }
}
