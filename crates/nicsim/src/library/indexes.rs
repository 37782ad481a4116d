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

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.rx.is_empty()
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
mod tests;
