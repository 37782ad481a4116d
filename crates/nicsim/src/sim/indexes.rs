//! The indexed collections a process keeps: posted receives and unexpected
//! messages by source ([`BySource`]), early messages by (peer, sequence)
//! ([`Early`]), medium messages being reassembled by peer ([`MediumRxs`]),
//! registered regions as a free bitmap ([`Regions`]) and its queued
//! protocol-timer events ([`TimerEvents`]). Each replaces a scan whose length
//! grew with the ranks of the run, and counts what it looks at (`visits`) so
//! a test can check that the work per message does not grow with them.

use super::LibEvent;
use crate::paged::{Paged, PAGE};
use crate::time::Instant;
use crate::wire::RDMA_REGIONS;
use std::collections::{BTreeMap, VecDeque};

/// "No entry" in the index lists below.
const NIL: u32 = u32::MAX;

/// One list of a [`BySource`]: its first and last entries.
#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
}

impl Default for List {
    fn default() -> Self {
        List::EMPTY
    }
}

impl List {
    const EMPTY: List = List { head: NIL, tail: NIL };
}

/// An entry of a [`BySource`].
#[derive(Clone, Copy, Debug)]
struct Entry<T> {
    item: T,
    tag: u64,
    /// Position in the queue's one order (insertion order).
    order: u64,
    /// The next entry of the same source (`NIL`: none).
    next: u32,
}

/// A queue in insertion order of items that each carry a tag and a source
/// rank (or none), from which the first item that matches a tag and a
/// source is taken: MPI's matching rule (a message goes to the first posted
/// receive that accepts it; a receive takes the first unexpected message it
/// accepts, MPI 4.0 section 3.5, "Order"). The posted receives and the
/// unexpected messages of a process are two of these.
///
/// The items of each source are kept in their own list (and the items with
/// no source, wildcard receives, in one more), so a match looks at the
/// items of one source and the wildcards only, not at the whole queue: with
/// a receive posted from every rank (an all-to-all), a message finds its
/// receive among those of its sender. Of the two candidates the earlier
/// inserted wins, which is the single queue's order. A take with no source
/// (a wildcard receive looking for an unexpected message) looks at the
/// first match of every list. The entries live in one slab whose free slots
/// are reused: no allocation once the queue has been at its largest.
#[derive(Clone, Debug, Default)]
pub(crate) struct BySource<T> {
    slab: Vec<Entry<T>>,
    free: Vec<u32>,
    /// List per source rank, grown to the highest rank seen, made a page
    /// of ranks at a time ([`crate::paged`]): a process that receives from
    /// a few ranks of many keeps a few pages.
    lists: Paged<List>,
    /// Items with no source.
    wild: Option<List>,
    order: u64,
    len: usize,
    high: usize,
    /// Entries looked at by `take` (a debug counter of the matching work:
    /// it must not grow with the number of ranks).
    pub visits: u64,
}

impl<T: Copy> BySource<T> {
    pub fn new() -> Self {
        BySource {
            slab: Vec::new(),
            free: Vec::new(),
            lists: Paged::new(0, List::EMPTY),
            wild: None,
            order: 0,
            len: 0,
            high: 0,
            visits: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Pages of per-source lists made so far (see [`crate::paged`]).
    #[cfg(test)]
    pub fn list_pages(&self) -> usize {
        self.lists.pages_made()
    }

    /// Chunks of page addresses made so far (see [`crate::paged`]).
    #[cfg(test)]
    pub fn list_chunks(&self) -> usize {
        self.lists.chunks_made()
    }

    /// What a `VecDeque` holding these items would have as capacity.
    pub fn peak_capacity(&self) -> usize {
        grown_capacity(self.high)
    }

    /// Appends `item` with `tag`, from `src` (`None`: a wildcard).
    pub fn push(&mut self, src: Option<u16>, tag: u64, item: T) {
        let e = Entry { item, tag, order: self.order, next: NIL };
        self.order += 1;
        let i = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = e;
                i
            }
            None => {
                self.slab.push(e);
                (self.slab.len() - 1) as u32
            }
        };
        let list = match src {
            Some(s) => {
                let s = s as usize;
                self.lists.grow(s + 1);
                &mut self.lists[s]
            }
            None => self.wild.get_or_insert(List::EMPTY),
        };
        if list.tail == NIL {
            list.head = i;
        } else {
            self.slab[list.tail as usize].next = i;
        }
        list.tail = i;
        self.len += 1;
        self.high = self.high.max(self.len);
    }

    /// The first entry of `list` with `tag`: (its order, the entry before
    /// it, the entry).
    fn first_match(&mut self, list: List, tag: u64) -> Option<(u64, u32, u32)> {
        let (mut prev, mut i) = (NIL, list.head);
        while i != NIL {
            self.visits += 1;
            let e = &self.slab[i as usize];
            if e.tag == tag {
                return Some((e.order, prev, i));
            }
            (prev, i) = (i, e.next);
        }
        None
    }

    /// Removes and returns the first item (in insertion order) with `tag`
    /// whose source is `src` or none; `src = None` accepts every source.
    #[inline]
    pub fn take(&mut self, src: Option<u16>, tag: u64) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        match (src, self.wild) {
            // No wildcards: the source's own list alone.
            (Some(s), None) => {
                let list = *self.lists.get(s as usize)?;
                let (_, prev, i) = self.first_match(list, tag)?;
                Some(self.unlink(s as u32, prev, i))
            }
            _ => self.take_among(src, tag),
        }
    }

    /// `take` where wildcards take part: the earliest of the candidates.
    #[cold]
    fn take_among(&mut self, src: Option<u16>, tag: u64) -> Option<T> {
        // Candidates: (order, list key, entry before, entry); key u32::MAX
        // is the wildcard list.
        let mut best: Option<(u64, u32, u32, u32)> = None;
        let mut consider = |q: &mut Self, key: u32, list: List| {
            if let Some((order, prev, i)) = q.first_match(list, tag) {
                if best.is_none_or(|b| order < b.0) {
                    best = Some((order, key, prev, i));
                }
            }
        };
        match src {
            Some(s) => {
                if let Some(&list) = self.lists.get(s as usize) {
                    consider(self, s as u32, list);
                }
            }
            None => {
                // Every source's list, its pages never made skipped (their
                // lists are empty).
                let mut s = 0;
                while s < self.lists.len() {
                    if !self.lists.is_made(s) {
                        s += PAGE - s % PAGE;
                        continue;
                    }
                    let list = self.lists[s];
                    consider(self, s as u32, list);
                    s += 1;
                }
            }
        }
        if let Some(list) = self.wild {
            consider(self, u32::MAX, list);
        }
        let (_, key, prev, i) = best?;
        Some(self.unlink(key, prev, i))
    }

    /// Removes entry `i` (after `prev`) from list `key` (`u32::MAX`: the
    /// wildcards) and returns its item.
    #[inline]
    fn unlink(&mut self, key: u32, prev: u32, i: u32) -> T {
        let next = self.slab[i as usize].next;
        let list = match self.wild.as_mut() {
            Some(w) if key == u32::MAX => w,
            _ => &mut self.lists[key as usize],
        };
        if prev == NIL {
            list.head = next;
        } else {
            self.slab[prev as usize].next = next;
        }
        if list.tail == i {
            list.tail = prev;
        }
        self.free.push(i);
        self.len -= 1;
        self.slab[i as usize].item
    }
}

/// Messages that arrived ahead of their turn (an earlier message from the
/// same peer was lost, overtaken, or is still being reassembled), kept by
/// (peer, sequence number, arrival), so that releasing the ones a completed
/// message makes due looks at those only, not at every early message.
#[derive(Clone, Debug, Default)]
pub(crate) struct Early {
    by_key: BTreeMap<(u16, u32, u64), LibEvent>,
    arrivals: u64,
    high: usize,
    /// Events looked at by `release` (a debug counter of the work: the
    /// ones released or dropped, and one look per call).
    pub visits: u64,
}

impl Early {
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// What a `Vec` holding these events would have as capacity.
    pub fn peak_capacity(&self) -> usize {
        grown_capacity(self.high)
    }

    /// Keeps `ev`, whose `msg.seq` is its full sequence number.
    pub fn push(&mut self, ev: LibEvent) {
        self.by_key.insert((ev.peer, ev.msg.seq, self.arrivals), ev);
        self.arrivals += 1;
        self.high = self.high.max(self.by_key.len());
    }

    /// `peer`'s message `expected` is next: its events go back to the head
    /// of `ring` in arrival order (with their 16-bit sequence numbers, as
    /// they came), and `peer`'s events of earlier messages (stale copies of
    /// messages complete by now) are dropped. Returns how many were dropped.
    pub fn release(&mut self, peer: u16, expected: u32, ring: &mut VecDeque<LibEvent>) -> u64 {
        self.visits += 1;
        let mut stale = 0;
        while let Some((&k, _)) = self.by_key.range((peer, 0, 0)..(peer, expected, 0)).next() {
            self.by_key.remove(&k);
            self.visits += 1;
            stale += 1;
        }
        // Latest first, each to the front: the earliest ends up first.
        while let Some((&k, &e)) = self.by_key.range((peer, expected, 0)..=(peer, expected, u64::MAX)).next_back() {
            self.by_key.remove(&k);
            self.visits += 1;
            ring.push_front(e.with_seq(e.msg.seq & 0xFFFF));
        }
        stale
    }
}

/// The medium messages being reassembled, at most one per peer, with an
/// index by peer: a fragment finds its message at once however many peers
/// send at the same time.
#[derive(Clone, Default)]
pub(crate) struct MediumRxs {
    rx: Vec<MediumRx>,
    /// Peer rank -> position in `rx` + 1 (0: none), grown to the highest
    /// rank seen, made a page of ranks at a time ([`crate::paged`]).
    at: Paged<u32>,
}

impl std::fmt::Debug for MediumRxs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.rx).finish()
    }
}

impl MediumRxs {
    /// The message being received from `peer`.
    pub fn get_mut(&mut self, peer: u16) -> Option<&mut MediumRx> {
        match self.at.get(peer as usize) {
            Some(&i) if i > 0 => Some(&mut self.rx[i as usize - 1]),
            _ => None,
        }
    }

    pub fn contains(&self, peer: u16) -> bool {
        self.at.get(peer as usize).is_some_and(|&i| i > 0)
    }

    /// Starts receiving `rx` (its peer has none in progress).
    pub fn insert(&mut self, rx: MediumRx) {
        let p = rx.peer as usize;
        self.at.grow(p + 1);
        debug_assert_eq!(self.at[p], 0, "two medium messages from peer {p} at once");
        self.rx.push(rx);
        self.at[p] = self.rx.len() as u32;
    }

    /// Ends the message from `peer`.
    pub fn remove(&mut self, peer: u16) -> Option<MediumRx> {
        let i = self.at.get(peer as usize)?.checked_sub(1)? as usize;
        self.at[peer as usize] = 0;
        let rx = self.rx.swap_remove(i);
        if let Some(moved) = self.rx.get(i) {
            self.at[moved.peer as usize] = i as u32 + 1;
        }
        Some(rx)
    }
}

/// The registered regions of a process's large sends: region id ->
/// request, with a two-level bitmap of the free ids (a bit per region, and
/// a bit per 64-region word that has a free one), so that taking the lowest
/// free id (the one a scan from id 0 would find) and knowing that none is
/// free cost two bit searches rather than a scan of the [`RDMA_REGIONS`]
/// slots.
#[derive(Clone, Debug)]
pub(crate) struct Regions {
    /// Region id -> request (`NIL`: free), as far as the highest id taken:
    /// a process holds slots for the regions it has had in use at once,
    /// not all [`RDMA_REGIONS`] (1 KiB a process, 63 MiB at 64,512 ranks,
    /// most of which never send a large message).
    req: Vec<u32>,
    /// Bit `i % 64` of word `i / 64` is set while region `i` is free.
    free: [u64; RDMA_REGIONS / 64],
    /// Bit `w` is set while word `w` of `free` is not zero.
    words: u8,
    /// Regions taken (a debug counter: one bit search each).
    pub visits: u64,
}

const _: () = assert!(RDMA_REGIONS / 64 <= u8::BITS as usize);

impl Default for Regions {
    fn default() -> Self {
        let words = ((1u16 << (RDMA_REGIONS / 64)) - 1) as u8;
        Regions { req: Vec::new(), free: [u64::MAX; RDMA_REGIONS / 64], words, visits: 0 }
    }
}

impl Regions {
    pub fn is_full(&self) -> bool {
        self.words == 0
    }

    /// Registers a region for request `req`: the lowest free id.
    pub fn take(&mut self, req: u32) -> Option<u32> {
        if self.words == 0 {
            return None;
        }
        self.visits += 1;
        let w = self.words.trailing_zeros() as usize;
        let bits = &mut self.free[w];
        let id = w * 64 + bits.trailing_zeros() as usize;
        *bits &= *bits - 1;
        if *bits == 0 {
            self.words &= !(1 << w);
        }
        if id >= self.req.len() {
            self.req.resize(id + 1, NIL);
        }
        self.req[id] = req;
        Some(id as u32)
    }

    /// Frees region `id` (a NOTIFY names it): the request it carried, if it
    /// was in use.
    pub fn release(&mut self, id: u32) -> Option<u32> {
        let id = id as usize;
        let req = *self.req.get(id)?;
        if req == NIL {
            return None;
        }
        self.req[id] = NIL;
        self.free[id / 64] |= 1 << (id % 64);
        self.words |= 1 << (id / 64);
        Some(req)
    }
}

/// A medium message being reassembled from its fragments.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MediumRx {
    pub peer: u16,
    pub seq: u32,
    pub target: MediumTarget,
    /// Fragments still missing.
    pub left: u32,
    /// Bitmap of the fragments seen (duplicates are dropped).
    pub seen: u32,
    /// Interrupt stamps (min, max) of its fragments.
    pub stamps: (u32, u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MediumTarget {
    Req(u32),
    Unexpected,
}

/// What a `Vec` or `VecDeque` that had held at most `high` entries would
/// have as capacity (the `peak_*` metrics are capacities: the high-water
/// mark rounded up as those containers grow, from four entries by doubling).
pub(crate) fn grown_capacity(high: usize) -> usize {
    if high == 0 {
        0
    } else {
        high.next_power_of_two().max(4)
    }
}

#[cfg(test)]
mod tests {
    use super::MediumTarget;
    use super::*;
    use crate::proto::{Kind, Msg};
    use crate::sim::World;

    /// Bookkeeping work of a whole run per message sent: protocol-timer
    /// heap entries and peers owed an ack looked at, posted receives and
    /// unexpected messages looked at while matching, early events looked
    /// at, region bitmap words looked at. Also the messages sent and the
    /// resends.
    fn work_per_message(text: &str) -> (f64, u64, u64) {
        let s = crate::Scenario::from_toml(text).unwrap();
        let mut w = World::new(&s);
        w.run().unwrap();
        let procs = || w.hosts.iter().flat_map(|h| &h.procs);
        let work: u64 = procs()
            .map(|p| {
                p.proto.timer_visits
                    + p.proto.flush_visits
                    + p.posted.visits
                    + p.unexpected.visits
                    + p.early.visits
                    + p.regions.visits
            })
            .sum();
        let resent: u64 = procs().map(|p| p.proto.resent).sum();
        // Every request completed is one end of a message (send or receive).
        let messages = w.completions / 2;
        (work as f64 / messages as f64, messages, resent)
    }

    /// An all-to-all of `n` ranks, one per host, about 256 messages per
    /// rank whatever `n`.
    fn alltoall(n: u32, size: u64, extra: &str) -> String {
        let iterations = (256 / (n - 1)).max(1);
        format!(
            "[platform.topology]\nhosts = {n}\n[workload]\nkind = \"alltoall\"\nsize_bytes = {size}\n\
             iterations = {iterations}\nwarmup = 0\nprocs_per_host = 1\n{extra}"
        )
    }

    #[test]
    fn bookkeeping_work_per_message_does_not_grow_with_the_rank_count() {
        // 64 B (matching, acks, delayed-ack and resend timers), then 40 KB
        // (rendezvous: regions, pulls), then 64 B with loss (early messages,
        // duplicates, resend rounds).
        // The 40 KB one-per-host all-to-all pulls from every peer at once:
        // its rings hold all the replies, so no drop adds resend rounds.
        let cases = [(64, ""), (40_000, "[platform.nic]\nring_slots = 16384\n"), (64, "[protocol]\nloss = 0.02\n")];
        for (size, extra) in cases {
            let (small, m8, _) = work_per_message(&alltoall(8, size, extra));
            let (large, m256, resent) = work_per_message(&alltoall(256, size, extra));
            assert!(m256 > 30 * m8, "{m8} and {m256} messages");
            if extra.contains("loss") {
                assert!(resent > 0, "the lossy run resends");
            }
            // Up to three looks per message are not shared at 256 ranks: a
            // message's resend deadline and its delayed ack each get a heap
            // entry, looked at once when it falls due, and its peer is
            // looked at once by the acks flushed at the end of the program;
            // the many messages to one peer of the 8-rank run share them
            // (64 B: 1.0 looks per message at 8 ranks, 2.0 at 256; with the
            // peers scanned at each flush, 75.8 at 256).
            assert!(
                large <= 1.5 * small + 3.0,
                "{size} B {extra:?}: {small:.2} looks per message at 8 ranks, {large:.2} at 256"
            );
        }
    }

    fn ev(peer: u16, seq: u32, tag: u64) -> LibEvent {
        LibEvent { msg: Msg { seq, tag, ..Msg::new(Kind::Tiny) }, peer, writer_die: 0, irq_stamp: 0 }
    }

    /// The reference: one queue in insertion order, scanned from the front.
    fn scan_take(q: &mut VecDeque<(Option<u16>, u64, u32)>, src: Option<u16>, tag: u64) -> Option<u32> {
        let i = q.iter().position(|&(s, t, _)| t == tag && (s.is_none() || src.is_none() || s == src))?;
        q.remove(i).map(|(_, _, v)| v)
    }

    #[test]
    fn by_source_takes_what_a_scan_in_insertion_order_takes() {
        // A fixed pseudo-random mix of pushes (some wildcards) and takes
        // (some with no source) over 5 sources and 3 tags.
        let (mut q, mut reference) = (BySource::new(), VecDeque::new());
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for v in 0..4000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let src = if x.is_multiple_of(11) { None } else { Some((x >> 8) as u16 % 5) };
            let tag = (x >> 16) % 3;
            if (x >> 24) % 5 < 3 {
                q.push(src, tag, v);
                reference.push_back((src, tag, v));
            } else {
                assert_eq!(q.take(src, tag), scan_take(&mut reference, src, tag), "take #{v}");
            }
            assert_eq!(q.len(), reference.len());
        }
        assert!(q.peak_capacity() >= reference.len());
    }

    #[test]
    fn by_source_matches_the_earlier_of_source_and_wildcard() {
        let mut posted = BySource::new();
        posted.push(Some(3), 7, 10);
        posted.push(None, 7, 11);
        posted.push(Some(3), 7, 12);
        // From rank 3: the receive naming it was posted first.
        assert_eq!(posted.take(Some(3), 7), Some(10));
        // Then the wildcard, posted before the second one naming 3.
        assert_eq!(posted.take(Some(3), 7), Some(11));
        assert_eq!(posted.take(Some(4), 7), None);
        assert_eq!(posted.take(Some(3), 8), None);
        assert_eq!(posted.take(Some(3), 7), Some(12));
        assert_eq!(posted.len(), 0);
    }

    #[test]
    fn by_source_looks_at_one_source_only() {
        // 1,000 sources with a receive each: a message from the last finds
        // its receive in one look.
        let mut posted = BySource::new();
        for s in 0..1000u16 {
            posted.push(Some(s), 1, s as u32);
        }
        assert_eq!(posted.take(Some(999), 1), Some(999));
        assert_eq!(posted.visits, 1);
    }

    #[test]
    fn early_releases_the_due_message_in_arrival_order_and_drops_stale_copies() {
        let mut early = Early::default();
        early.push(ev(2, 5, 0)); // peer 2's message 5, first fragment
        early.push(ev(1, 5, 0)); // another peer
        early.push(ev(2, 3, 0)); // a stale copy of message 3
        early.push(ev(2, 6, 0));
        early.push(ev(2, 5, 1)); // message 5, second fragment
        let mut ring = VecDeque::from([ev(9, 0, 9)]);
        assert_eq!(early.release(2, 5, &mut ring), 1);
        let got: Vec<_> = ring.iter().map(|e| (e.peer, e.msg.seq, e.msg.tag)).collect();
        assert_eq!(got, [(2, 5, 0), (2, 5, 1), (9, 0, 9)]);
        assert_eq!(early.len(), 2, "peer 1's message and peer 2's message 6 stay");
        assert_eq!(early.peak_capacity(), 8);
        // Sequence numbers above 16 bits go back to the ring as on the wire.
        early.push(ev(4, 0x1_0002, 0));
        early.release(4, 0x1_0002, &mut ring);
        assert_eq!(ring[0].msg.seq, 2);
    }

    #[test]
    fn medium_index_follows_removals() {
        let rx = |peer| MediumRx {
            peer,
            seq: peer as u32,
            target: MediumTarget::Unexpected,
            left: 2,
            seen: 1,
            stamps: (0, 0),
        };
        let mut m = MediumRxs::default();
        for p in [4, 9, 1] {
            m.insert(rx(p));
        }
        assert_eq!(m.remove(4).map(|r| r.peer), Some(4));
        assert!(!m.contains(4));
        // 1 moved into 4's place: still found.
        assert_eq!(m.get_mut(1).map(|r| r.seq), Some(1));
        assert_eq!(m.get_mut(9).map(|r| r.seq), Some(9));
        assert!(m.remove(4).is_none() && m.remove(100).is_none());
    }

    #[test]
    fn regions_hand_out_the_lowest_free_id() {
        let mut r = Regions::default();
        for i in 0..RDMA_REGIONS as u32 {
            assert_eq!(r.take(1000 + i), Some(i));
        }
        assert!(r.is_full());
        assert_eq!(r.take(1), None);
        assert_eq!(r.release(130), Some(1130));
        assert_eq!(r.release(130), None, "a duplicate NOTIFY frees nothing");
        assert_eq!(r.release(7), Some(1007));
        assert!(!r.is_full());
        assert_eq!(r.take(5), Some(7));
        assert_eq!(r.take(6), Some(130));
        assert_eq!(r.release(RDMA_REGIONS as u32 + 3), None);
    }

    #[test]
    fn regions_keep_slots_for_the_most_in_use_at_once() {
        let mut r = Regions::default();
        assert_eq!((r.req.len(), r.release(5)), (0, None));
        for round in 0..10 {
            assert_eq!((r.take(round), r.take(100 + round), r.take(200 + round)), (Some(0), Some(1), Some(2)));
            assert_eq!((r.release(1), r.release(0), r.release(2)), (Some(100 + round), Some(round), Some(200 + round)));
        }
        assert_eq!(r.req.len(), 3);
    }
}

/// The times of a process's queued protocol-timer events, earliest first.
///
/// A deadline earlier than the queued event (a delayed ack before a resend)
/// needs an event of its own, and the later event stays queued: the engine
/// cancels nothing. At Open-MX's 0.5 s resend delay, re-pushing the later
/// deadline after every earlier one left hundreds of such events queued per
/// process in a ping-pong (the queue's peak 9 -> 985 events, twice the time
/// per event). Knowing which events are queued, a deadline at or after one
/// of them needs no new event: that one fires first and re-arms the rest.
/// Untracked events (beyond [`Self::CAP`]) still fire and re-arm alike.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerEvents {
    at: [Instant; Self::CAP],
    len: u8,
}

impl TimerEvents {
    /// Events tracked per process: a resend and a delayed ack, with room.
    pub const CAP: usize = 4;

    /// Whether an event is queued at or before `t`.
    #[inline]
    pub fn any_by(&self, t: Instant) -> bool {
        self.len > 0 && self.at[0] <= t
    }

    /// Records an event queued at `t` (untracked when full).
    #[inline]
    pub fn insert(&mut self, t: Instant) {
        let n = self.len as usize;
        if n == Self::CAP {
            return;
        }
        let i = self.at[..n].partition_point(|&x| x <= t);
        self.at.copy_within(i..n, i + 1);
        self.at[i] = t;
        self.len += 1;
    }

    /// The event queued at `t` fired (the earliest, when tracked).
    #[inline]
    pub fn fired(&mut self, t: Instant) {
        let n = self.len as usize;
        if n > 0 && self.at[0] == t {
            self.at.copy_within(1..n, 0);
            self.len -= 1;
        }
    }
}

#[cfg(test)]
mod timer_events_tests {
    use super::TimerEvents;
    use crate::time::{Duration, Instant};

    fn at(us: u64) -> Instant {
        Instant::ZERO + Duration::from_us(us)
    }

    #[test]
    fn keeps_the_earliest_first_and_forgets_what_fired() {
        let mut t = TimerEvents::default();
        assert!(!t.any_by(at(10)));
        t.insert(at(500));
        t.insert(at(1));
        assert!(t.any_by(at(1)) && !t.any_by(Instant::ZERO));
        t.fired(at(1));
        assert!(!t.any_by(at(499)) && t.any_by(at(500)));
        t.fired(at(7)); // an untracked event: nothing changes
        assert!(t.any_by(at(500)));
        for us in 0..10 {
            t.insert(at(us)); // beyond CAP: untracked
        }
        assert!(t.any_by(at(0)));
    }
}
