//! Link-level back-pressure: what waits at a stopped link for receive
//! space, in the two policies of the simulated NICs, over one bounded FIFO
//! ([`Stopped`]: preallocated to its bound, holding in arrival order,
//! refusing one more at the bound, [`Hold`]).
//!
//! * [`FlowControl`], the Open-MX NIC's (`nic.flow_control`): Myrinet's
//!   stop/go flow control or 802.3x PAUSE honoured by the link partner,
//!   at the NIC's ingress. A frame that finds its receive ring full is not
//!   dropped: it waits, with every later frame for this NIC behind it (the
//!   link is stopped: a stop holds the whole link, whatever queue a frame
//!   is bound for), until ring space frees; the waiting frames then enter
//!   the NIC in arrival order. It owns the waiting frames (bounded by
//!   `nic.flow_control_frames`: the NIC's packet buffer and what the
//!   stopped upstream holds), the decision to hold, admit or overflow, and
//!   the counts. It does not own ring space (`Nic::ring_full`), the frames
//!   themselves (the world's slab), nor when space frees (the world asks
//!   [`FlowControl::head`] after a take, a restock or a DMA completion,
//!   `crate::sim::nic_path`). Without `nic.pause_to_sender` the stop goes
//!   no further than the FIFO (a switch port's buffer, say): the senders'
//!   transmit path is not delayed. With it ([`SenderPause`]: two hosts on a
//!   direct cable, where 802.3x PAUSE stops the sending NIC's MAC) the
//!   frames the FIFO holds beyond the NIC's own packet buffer stand for the
//!   frames the stopped sender keeps in its send ring and qdisc: the wire
//!   is booked when a frame is sent (`crate::net`), so a frame that a real
//!   PAUSE keeps in the sender waits here instead, in the same order, and
//!   enters the NIC at the same instant as it would after the stop. What
//!   the sender's qdisc would drop (`pfifo_fast` past `tx_queue_len`) is
//!   dropped here, counted as a sender's drop. With a hold limit
//!   (`nic.flow_control_hold_us`; Myri10GE firmware 1.4.25: "If the host
//!   stops consuming for too long, starts dropping packets rather than
//!   indefinitely blocking the rx path with flow-control") a stop that
//!   sees no frame admitted for that long gives up ([`FlowControl::check`]):
//!   the waiting frames are dropped, and so is each frame that finds its
//!   ring full until the host has taken one.
//! * [`Credits`], the \[LCI] LANai NI's (`crate::nic::lanai`): Myrinet
//!   stop/go between NIs, where the stop holds the *sender*: a sender's
//!   head packet (a descriptor, or a forward of the multicast firmware)
//!   leaves only once the receiving NI reserved it one of its receive
//!   buffers, and until then waits there. It owns the receiving NI's free
//!   receive buffers, the heads waiting for one and the order a freed
//!   buffer serves them (every waiting descriptor before every waiting
//!   forward, each class in the order it began waiting), and the count of
//!   refusals. It does not own the heads themselves (the senders' queues)
//!   nor their transmission (`crate::sim` `lci_stack`).
//!
//! Both are sans-I/O: they take what happened (and `now`) and answer.

use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// What waits at a stopped link, in arrival order: a FIFO of at most
/// `bound` entries, allocated whole.
#[derive(Debug)]
pub struct Stopped<T> {
    fifo: VecDeque<T>,
    bound: usize,
}

impl<T> Stopped<T> {
    /// A FIFO of at most `bound` entries (at least one).
    pub fn new(bound: usize) -> Self {
        let bound = bound.max(1);
        Stopped { fifo: VecDeque::with_capacity(bound), bound }
    }

    /// Entries waiting.
    #[inline]
    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    /// Whether none waits.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    /// `x` must wait behind those waiting: whether it stopped the link,
    /// queued, or found the FIFO at its bound (it is not held).
    pub fn hold(&mut self, x: T) -> Hold {
        if self.fifo.len() >= self.bound {
            return Hold::Overflow;
        }
        let first = self.fifo.is_empty();
        self.fifo.push_back(x);
        if first {
            Hold::Stopped
        } else {
            Hold::Queued
        }
    }

    /// The entry at the head.
    #[inline]
    pub fn head(&self) -> Option<&T> {
        self.fifo.front()
    }

    /// The head leaves the FIFO.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        self.fifo.pop_front()
    }
}

/// A frame waiting for ring space: its slab id, its queue, its ring class
/// (small ring, or the big-ring buffers it fills) and when it arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    pub frame: u32,
    /// The sending host.
    pub src: u16,
    pub q: u8,
    pub small: bool,
    pub bufs: u32,
    pub since: Instant,
}

/// What became of what had to wait ([`Stopped::hold`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// It is the first to wait: the link stops now.
    Stopped,
    /// It waits behind others (the link was already stopped).
    Queued,
    /// The bound is reached: it is not held (a frame is dropped).
    Overflow,
}

/// Counts of a run (the `flow_control_*` metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    /// Frames that waited.
    pub held: u64,
    /// Frames dropped at a full FIFO.
    pub overflow: u64,
    /// Times the link stopped (a first frame waited).
    pub stops: u64,
    /// Longest wait, and the sum over the frames admitted.
    pub wait_max: Duration,
    pub wait_sum: Duration,
    /// Frames admitted after waiting.
    pub admitted: u64,
    /// Stops given up past the hold limit, and the frames dropped then or
    /// while the host took none.
    pub gave_up: u64,
    pub given_up_frames: u64,
}

/// What [`FlowControl::check`] found at the hold limit's instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitCheck {
    /// Nothing waits, or nothing is due: no check follows.
    Idle,
    /// A frame was admitted since: check again at this instant.
    Again(Instant),
    /// No frame was admitted for the limit: the stop gives up (the caller
    /// drops what waits, [`FlowControl::drop_waiting`]).
    GiveUp,
}

/// The stop reaches the sending host (`nic.pause_to_sender`): the frames
/// each sender has waiting here, against what its NIC's packet buffer and
/// its own send ring and qdisc hold.
#[derive(Debug)]
pub struct SenderPause {
    /// The receiving NIC's packet buffer: frames that wait here whatever
    /// the sender holds (`nic.flow_control_frames`).
    buffer: u32,
    /// The sender's send ring and qdisc (`tx_queue_len` + `tx_ring_frames`).
    queue: u32,
    /// Frames waiting, by sending host.
    from: Vec<u32>,
}

/// What [`FlowControl::sender_room`] found for a frame from a stopped
/// sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderRoom {
    /// The stop reaches no sender (`nic.pause_to_sender` off).
    NotPaused,
    /// The frame fits in the NIC's buffer or the sender's queue.
    Room,
    /// The sender's qdisc is full: the frame would have been dropped there.
    Full,
}

/// The waiting frames of one NIC.
pub struct FlowControl {
    fifo: Stopped<Held>,
    /// An admission attempt is scheduled (at most one at a time).
    resume_pending: bool,
    /// The stop reaches the sending host (`nic.pause_to_sender`).
    sender: Option<SenderPause>,
    /// How long a stop lasts with no frame admitted before it gives up
    /// (`nic.flow_control_hold_us`; `None`: for ever), and since when none
    /// was (the stop, or the last admission).
    limit: Option<Duration>,
    progress_at: Instant,
    /// A limit check is scheduled (at most one at a time).
    check_pending: bool,
    /// The stop gave up: frames that find their ring full are dropped
    /// until the host has taken one, i.e. until the NIC has received more
    /// than this many frames.
    gave_up_at: Option<u64>,
    pub stats: FlowStats,
}

impl FlowControl {
    /// A FIFO of at most `bound` frames (at least one), allocated whole;
    /// with `pause_to_sender` (the sender's queue, `hosts` hosts) the FIFO
    /// also holds what the stopped senders keep, at most `queue` frames
    /// each beyond `bound`.
    pub fn new(bound: u32, pause_to_sender: Option<u32>, hosts: usize) -> Self {
        let sender = pause_to_sender.map(|queue| SenderPause { buffer: bound, queue, from: vec![0; hosts] });
        let extra = pause_to_sender.map_or(0, |q| q as usize * hosts.saturating_sub(1));
        FlowControl {
            fifo: Stopped::new(bound as usize + extra),
            resume_pending: false,
            sender,
            limit: None,
            progress_at: Instant::ZERO,
            check_pending: false,
            gave_up_at: None,
            stats: FlowStats::default(),
        }
    }

    /// These frames with a stop that gives up once no frame was admitted
    /// for `limit` (`nic.flow_control_hold_us`).
    pub fn with_hold_limit(mut self, limit: Option<Duration>) -> Self {
        self.limit = limit;
        self
    }

    /// The stop gave up and the host has taken no frame since: a frame
    /// that finds its ring full is dropped. `received` is the NIC's count
    /// of frames received so far; once it passed the count at the give-up,
    /// the host took one and the link stops again as before.
    pub fn giving_up(&mut self, received: u64) -> bool {
        match self.gave_up_at {
            Some(n) if received > n => {
                self.gave_up_at = None;
                false
            }
            Some(_) => {
                self.stats.given_up_frames += 1;
                true
            }
            None => false,
        }
    }

    /// After a frame was held: the instant of the hold limit's check to
    /// schedule, if one is due (a limit is set, frames wait, and none is
    /// scheduled yet).
    pub fn check_due(&mut self) -> Option<Instant> {
        let limit = self.limit?;
        if self.check_pending || self.fifo.is_empty() {
            return None;
        }
        self.check_pending = true;
        Some(self.progress_at + limit)
    }

    /// The hold limit's check runs at `now`, the NIC having received
    /// `received` frames so far.
    pub fn check(&mut self, now: Instant, received: u64) -> LimitCheck {
        self.check_pending = false;
        let Some(limit) = self.limit else { return LimitCheck::Idle };
        if self.fifo.is_empty() {
            return LimitCheck::Idle;
        }
        let due = self.progress_at + limit;
        if now < due {
            self.check_pending = true;
            return LimitCheck::Again(due);
        }
        self.stats.gave_up += 1;
        self.gave_up_at = Some(received);
        LimitCheck::GiveUp
    }

    /// After [`LimitCheck::GiveUp`]: the next waiting frame, dropped
    /// (`None` once none waits).
    pub fn drop_waiting(&mut self) -> Option<Held> {
        let h = self.fifo.pop()?;
        if let Some(p) = self.sender.as_mut() {
            p.from[h.src as usize] -= 1;
        }
        self.stats.given_up_frames += 1;
        Some(h)
    }

    /// Whether the stop reaches the sending host (`nic.pause_to_sender`).
    #[inline]
    pub fn pauses_sender(&self) -> bool {
        self.sender.is_some()
    }

    /// Whether a frame from host `src`, whose own transmit path holds
    /// `at_sender` frames not yet on the wire, fits in what a stopped
    /// sender keeps: the NIC's buffer, then the sender's send ring and
    /// qdisc (less what it queues itself).
    pub fn sender_room(&self, src: u16, at_sender: usize) -> SenderRoom {
        let Some(p) = &self.sender else { return SenderRoom::NotPaused };
        let room = p.buffer as usize + (p.queue as usize).saturating_sub(at_sender);
        if (p.from[src as usize] as usize) < room {
            SenderRoom::Room
        } else {
            SenderRoom::Full
        }
    }

    /// Frames waiting.
    #[inline]
    pub fn waiting(&self) -> usize {
        self.fifo.len()
    }

    /// A frame must wait (its ring is full, or frames wait before it).
    pub fn hold(&mut self, h: Held) -> Hold {
        let r = self.fifo.hold(h);
        match r {
            Hold::Overflow => self.stats.overflow += 1,
            Hold::Stopped => {
                self.stats.stops += 1;
                self.progress_at = h.since;
            }
            Hold::Queued => {}
        }
        if r != Hold::Overflow {
            self.stats.held += 1;
            if let Some(p) = self.sender.as_mut() {
                p.from[h.src as usize] += 1;
            }
        }
        r
    }

    /// The frame at the head of the FIFO.
    #[inline]
    pub fn head(&self) -> Option<&Held> {
        self.fifo.head()
    }

    /// The head enters the NIC at `now` (the caller checked its ring has
    /// space): its wait is counted. `None` if nothing waits.
    pub fn admit(&mut self, now: Instant) -> Option<Held> {
        let h = self.fifo.pop()?;
        if let Some(p) = self.sender.as_mut() {
            p.from[h.src as usize] -= 1;
        }
        self.progress_at = now;
        let wait = now.since(h.since);
        self.stats.wait_max = self.stats.wait_max.max(wait);
        self.stats.wait_sum += wait;
        self.stats.admitted += 1;
        Some(h)
    }

    /// Ring space may have freed: true if an admission attempt must be
    /// scheduled (frames wait and none is scheduled yet).
    #[inline]
    pub fn want_resume(&mut self) -> bool {
        if self.fifo.is_empty() || self.resume_pending {
            return false;
        }
        self.resume_pending = true;
        true
    }

    /// The scheduled admission attempt runs.
    #[inline]
    pub fn resume_fired(&mut self) {
        self.resume_pending = false;
    }
}

/// The class of a head waiting for a receive buffer ([`Credits`]), in the
/// order a freed buffer serves them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A sender's head descriptor (its host's post).
    Send = 0,
    /// A forwarding NI's head forward (`crate::nic::multicast`), which
    /// holds its own receive buffer while it waits.
    Forward = 1,
}

/// Myrinet stop/go at one receiving NI: its free receive buffers and the
/// senders' heads waiting for one (module doc).
#[derive(Debug)]
pub struct Credits {
    free: u32,
    /// The senders whose head waits, by [`Class`]: each at most once (a
    /// head asks again only once granted), so at most `senders` each.
    waiting: [Stopped<u16>; 2],
    /// Refusals by [`Class`]: a head counts once when it begins to wait
    /// and once more per freed buffer that did not reach it.
    refused: [u64; 2],
}

impl Credits {
    /// `buffers` receive buffers, all free, for at most `senders` NIs
    /// (`config::MAX_HOSTS` at most, an NI's number is a `u16`).
    pub fn new(buffers: u32, senders: u32) -> Self {
        debug_assert!(senders <= u32::from(u16::MAX) + 1);
        let fifo = || Stopped::new(senders as usize);
        Credits { free: buffers, waiting: [fifo(), fifo()], refused: [0; 2] }
    }

    /// Free receive buffers.
    #[inline]
    pub fn free(&self) -> u32 {
        self.free
    }

    /// One of its receive buffers is free again.
    #[inline]
    pub fn release(&mut self) {
        self.free += 1;
    }

    /// NI `sender`'s head of `class` asks for a receive buffer: true if one
    /// is reserved for it (it leaves now); otherwise it waits behind the
    /// heads of its class waiting before it ([`Credits::grant`]).
    pub fn reserve(&mut self, sender: u32, class: Class) -> bool {
        if self.free > 0 {
            self.free -= 1;
            return true;
        }
        let held = self.waiting[class as usize].hold(sender as u16);
        debug_assert_ne!(held, Hold::Overflow, "NI {sender}'s head waits twice");
        self.refused[class as usize] += 1;
        false
    }

    /// A receive buffer may have freed: the next waiting head it goes to,
    /// reserved for it (its sender and class: it leaves now): every
    /// waiting descriptor before every waiting forward, each class in the
    /// order it began waiting. `None` once no buffer or no head is left;
    /// each head still waiting was refused once more.
    pub fn grant(&mut self) -> Option<(u32, Class)> {
        if self.free > 0 {
            for class in [Class::Send, Class::Forward] {
                if let Some(s) = self.waiting[class as usize].pop() {
                    self.free -= 1;
                    return Some((u32::from(s), class));
                }
            }
        }
        for (r, w) in self.refused.iter_mut().zip(&self.waiting) {
            *r += w.len() as u64;
        }
        None
    }

    /// Refusals of heads of `class` so far (`ni_forward_waits` for
    /// forwards).
    pub fn refused(&self, class: Class) -> u64 {
        self.refused[class as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: u64) -> Instant {
        Instant::ZERO + Duration::from_ns(ns)
    }

    fn held(frame: u32, at_ns: u64) -> Held {
        Held { frame, src: 0, q: 0, small: true, bufs: 1, since: at(at_ns) }
    }

    #[test]
    fn fifo_order_wait_and_bound() {
        let mut f = FlowControl::new(2, None, 2);
        assert_eq!(f.sender_room(0, 0), SenderRoom::NotPaused);
        assert_eq!(f.hold(held(7, 100)), Hold::Stopped);
        assert_eq!(f.hold(held(8, 200)), Hold::Queued);
        assert_eq!(f.hold(held(9, 300)), Hold::Overflow);
        assert!(f.want_resume());
        assert!(!f.want_resume(), "one attempt at a time");
        f.resume_fired();
        assert_eq!(f.admit(at(1_100)).map(|h| h.frame), Some(7));
        assert_eq!(f.admit(at(1_300)).map(|h| h.frame), Some(8));
        assert_eq!(f.admit(at(1_400)), None);
        assert!(!f.want_resume(), "nothing waits");
        let s = f.stats;
        assert_eq!((s.held, s.overflow, s.stops, s.admitted), (2, 1, 1, 2));
        assert_eq!(s.wait_max, Duration::from_ns(1_100));
        assert_eq!(s.wait_sum, Duration::from_ns(2_100));
    }

    /// With the stop reaching the sender, a sender's frames wait here up
    /// to the NIC's buffer plus its own send ring and qdisc, less what it
    /// already queues; each admission gives a place back.
    #[test]
    fn a_stopped_sender_keeps_its_queue_and_its_qdisc_drops_the_rest() {
        let mut f = FlowControl::new(2, Some(3), 2);
        for (i, frame) in (10..15).enumerate() {
            assert_eq!(f.sender_room(1, 0), SenderRoom::Room, "frame {i}: buffer 2 + queue 3");
            let h = Held { src: 1, ..held(frame, 100 + i as u64) };
            assert_ne!(f.hold(h), Hold::Overflow);
        }
        assert_eq!(f.sender_room(1, 0), SenderRoom::Full, "5 wait: the qdisc drops the sixth");
        assert_eq!(f.sender_room(0, 0), SenderRoom::Room, "the other host's queue is its own");
        assert_eq!(f.admit(at(1_000)).map(|h| h.frame), Some(10));
        assert_eq!(f.sender_room(1, 0), SenderRoom::Room, "an admission frees a place");
        assert_eq!(f.sender_room(1, 1), SenderRoom::Full, "unless the sender queues one itself");
    }

    /// The hold limit counts from the stop, then from each admission; it
    /// gives up only when nothing was admitted for the limit, and then the
    /// NIC drops until it has received one more frame.
    #[test]
    fn a_stop_gives_up_only_when_nothing_was_admitted_for_the_limit() {
        let mut f = FlowControl::new(4, None, 2).with_hold_limit(Some(Duration::from_ns(1_000)));
        assert_eq!(f.check_due(), None, "nothing waits");
        assert_eq!(f.hold(held(1, 100)), Hold::Stopped);
        assert_eq!(f.hold(held(2, 200)), Hold::Queued);
        assert_eq!(f.check_due(), Some(at(1_100)), "the limit after the stop");
        assert_eq!(f.check_due(), None, "one check at a time");
        assert_eq!(f.admit(at(900)).map(|h| h.frame), Some(1));
        assert_eq!(f.check(at(1_100), 10), LimitCheck::Again(at(1_900)), "admitted at 900");
        assert_eq!(f.check(at(1_900), 10), LimitCheck::GiveUp);
        assert_eq!(f.drop_waiting().map(|h| h.frame), Some(2));
        assert_eq!(f.drop_waiting(), None);
        assert!(f.giving_up(10), "no frame received since: drop");
        assert!(!f.giving_up(11), "the host took one: hold again");
        assert!(!f.giving_up(11));
        let s = f.stats;
        assert_eq!((s.gave_up, s.given_up_frames, s.admitted), (1, 2, 1));
        assert_eq!(f.check(at(5_000), 11), LimitCheck::Idle, "nothing waits");
        let mut off = FlowControl::new(4, None, 2);
        assert_eq!(off.hold(held(1, 100)), Hold::Stopped);
        assert_eq!(off.check_due(), None, "no limit: the link waits for ever");
    }

    #[test]
    fn credits_serve_descriptors_then_forwards_each_in_waiting_order() {
        let mut c = Credits::new(1, 8);
        assert!(c.reserve(5, Class::Send), "a free buffer is reserved at once");
        assert_eq!(c.free(), 0);
        assert!(!c.reserve(3, Class::Forward));
        assert!(!c.reserve(6, Class::Send));
        assert!(!c.reserve(2, Class::Forward));
        assert!(!c.reserve(1, Class::Send));
        assert_eq!(c.grant(), None, "no buffer freed: nobody leaves");
        c.release();
        c.release();
        assert_eq!(c.grant(), Some((6, Class::Send)));
        assert_eq!(c.grant(), Some((1, Class::Send)));
        assert_eq!(c.grant(), None, "two buffers, two heads");
        c.release();
        assert_eq!(c.grant(), Some((3, Class::Forward)));
        assert_eq!(c.grant(), None);
        c.release();
        assert_eq!(c.grant(), Some((2, Class::Forward)));
        assert_eq!((c.grant(), c.free()), (None, 0));
        // Forwards: 2 first refusals; the rounds left 2, 2, 1, 0 waiting.
        assert_eq!(c.refused(Class::Forward), 2 + 2 + 2 + 1);
        assert_eq!(c.refused(Class::Send), 2 + 2);
        c.release();
        assert_eq!((c.grant(), c.free()), (None, 1), "a free buffer with none waiting stays free");
    }
}
