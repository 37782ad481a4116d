//! The drivers' pull of a large message (Open-MX `omx_pull.c`): the
//! receiver's [`PullHandle`] requests the message in blocks of replies (32,
//! or 8 on the MX wire: `crate::wire::Layout`), a window of [`PULL_BLOCKS_OUTSTANDING`]
//! blocks that moves on when its first block completes; it asks again for
//! the earlier blocks at once when a later one completes before them, for
//! every incomplete block when no reply came for a timeout, and gives up
//! when the pull outlives its deadline; the sender's [`PullServe`] answers
//! one request with the replies it names.
//!
//! This file owns which replies and blocks are wanted, received and due.
//! It does not own addressing, frames or the copy of the data
//! (`crate::sim::pull`).

use crate::time::{Duration, Instant};
use crate::wire::PULL_BLOCKS_OUTSTANDING;
use std::ops::Range;

const WINDOW: u32 = PULL_BLOCKS_OUTSTANDING as u32;

pub use crate::config::PullRerequest;

/// A run of blocks `start..end` to (re-)request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocks {
    pub start: u32,
    pub end: u32,
}

impl Blocks {
    pub fn iter(self) -> Range<u32> {
        self.start..self.end
    }
}

/// What a pull reply did to its handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnReply {
    /// Already received (a re-requested block's replies crossing the
    /// originals), or outside the message: drop it.
    Duplicate,
    /// Recorded; nothing else to do.
    Progress,
    /// Recorded, and it completed the window's first block: the window
    /// moved past every completed block at its head, and these blocks enter
    /// it (request them).
    Request(Blocks),
    /// Recorded, and it completed a later block of the window while an
    /// earlier one is still incomplete: a reply of the earlier ones was
    /// likely lost, so request again the incomplete blocks among these
    /// ([`PullHandle::incomplete_from`], [`PullHandle::missing_span`]).
    /// Each block is asked again this way at most once per timeout.
    Rerequest(Blocks),
    /// The last missing reply: the pull is complete (the handle is done).
    Complete,
}

/// What the pull timer found (see [`PullHandle::on_timer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnTimer {
    /// A reply came within the timeout: look again at this instant.
    Wait(Instant),
    /// No reply for a whole timeout: request the missing part of every
    /// incomplete block again ([`PullHandle::incomplete_from`],
    /// [`PullHandle::missing_span`]), and look again at this instant.
    Rerequest(Instant),
    /// The pull outlived its deadline: it fails (Open-MX reports
    /// `OMX_EVT_PULL_DONE_TIMEOUT`).
    GiveUp,
}

/// The receiver's side of one pull.
#[derive(Clone, Debug)]
pub struct PullHandle {
    /// Total replies, replies per block, and blocks.
    replies: u32,
    block: u32,
    blocks: u32,
    /// The window: its first block (the oldest incomplete one) and the
    /// next block to request (`first..next_block`, at most
    /// [`PULL_BLOCKS_OUTSTANDING`] blocks).
    first: u32,
    next_block: u32,
    /// Blocks at the head of the window asked again early since the last
    /// timeout (Open-MX `already_rerequested_blocks`).
    rerequested: u32,
    /// Replies still missing per requested block (index = block).
    missing: Vec<u32>,
    /// Bitmap of received replies (to drop duplicates).
    got: Vec<u64>,
    done_replies: u32,
    /// When a new reply last arrived, or blocks were last (re-)requested by
    /// the timer; the pull started then if neither happened yet.
    last_progress: Instant,
    /// When the pull started (its deadline counts from here).
    started: Instant,
    live: bool,
}

impl PullHandle {
    /// A pull of `replies` replies in blocks of `block` started at `now`,
    /// nothing requested yet.
    pub fn new(now: Instant, replies: u32, block: u32) -> Self {
        let blocks = replies.div_ceil(block).max(1);
        PullHandle {
            replies,
            block,
            blocks,
            first: 0,
            next_block: 0,
            rerequested: 0,
            missing: vec![0; blocks as usize],
            got: vec![0; (replies as usize).div_ceil(64).max(1)],
            done_replies: 0,
            last_progress: now,
            started: now,
            live: true,
        }
    }

    /// Blocks of the whole message.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Whether the pull still waits for replies.
    pub fn live(&self) -> bool {
        self.live
    }

    /// The first blocks to request ([`PULL_BLOCKS_OUTSTANDING`] at most).
    pub fn start(&mut self) -> Range<u32> {
        let n = self.blocks.min(WINDOW);
        for b in 0..n {
            self.request(b);
        }
        0..n
    }

    /// First reply of block `b` and its replies.
    pub fn block(&self, b: u32) -> (u32, u32) {
        (b * self.block, (self.replies - b * self.block).min(self.block))
    }

    fn request(&mut self, b: u32) {
        self.missing[b as usize] = self.block(b).1;
        self.next_block = b + 1;
    }

    /// Reply `idx` arrived at `now`. As Open-MX's driver does
    /// (`omx_progress_pull_on_recv_pull_reply_locked`, driver/linux
    /// `omx_pull.c`, 0.9.2 to 1.5.4): when the window's first block
    /// completes, the window moves past the completed blocks at its head and
    /// takes new ones; when a later block completes first, "there is a good
    /// chance that one packet got lost for the former blocks. In this case,
    /// we optimistically re-request the former blocks. To avoid
    /// re-requesting too often, we do it only once per timeout" (its notes
    /// about retransmission). Nothing new enters the window while its first
    /// block is incomplete.
    pub fn process(&mut self, now: Instant, idx: u32) -> OnReply {
        let (w, bit) = ((idx / 64) as usize, idx % 64);
        if idx >= self.replies || self.got[w] & (1 << bit) != 0 {
            return OnReply::Duplicate;
        }
        self.got[w] |= 1 << bit;
        self.done_replies += 1;
        let b = idx / self.block;
        self.missing[b as usize] = self.missing[b as usize].saturating_sub(1);
        self.last_progress = now;
        if self.done_replies == self.replies {
            self.live = false;
            return OnReply::Complete;
        }
        if self.missing[b as usize] != 0 || b < self.first {
            return OnReply::Progress;
        }
        if b == self.first {
            while self.first < self.next_block && self.missing[self.first as usize] == 0 {
                self.first += 1;
                self.rerequested = self.rerequested.saturating_sub(1);
            }
            let from = self.next_block;
            while self.next_block < self.blocks && self.next_block - self.first < WINDOW {
                self.request(self.next_block);
            }
            return if self.next_block > from {
                OnReply::Request(Blocks { start: from, end: self.next_block })
            } else {
                OnReply::Progress
            };
        }
        let from = self.first + self.rerequested;
        match (from..b).rev().find(|&e| self.missing[e as usize] > 0) {
            Some(last) => {
                self.rerequested = last + 1 - self.first;
                OnReply::Rerequest(Blocks { start: from, end: last + 1 })
            }
            None => OnReply::Progress,
        }
    }

    /// The pull timer (`timeout`: `pull_timeout_us`) fired at `now`; a pull
    /// still incomplete `deadline` after it started gives up. (Open-MX's
    /// driver aborts a pull handle whose timer finds `jiffies` past its
    /// `last_retransmit_jiffies`, set at creation to the library's
    /// `retransmit_delay_jiffies`: its resend delay times its resend limit,
    /// `omx_pull_handle_timeout_handler`, driver/linux `omx_pull.c`.)
    pub fn on_timer(&mut self, now: Instant, timeout: Duration, deadline: Duration) -> OnTimer {
        self.on_timer_due(now, |armed| armed + timeout, deadline)
    }

    /// [`PullHandle::on_timer`] with the timer's expiry for an arming at
    /// `armed` given by `due` (on the kernel's jiffies: `sim/tick.rs`).
    pub fn on_timer_due(&mut self, now: Instant, due: impl Fn(Instant) -> Instant, deadline: Duration) -> OnTimer {
        if now.since(self.started) > deadline {
            return OnTimer::GiveUp;
        }
        let at = due(self.last_progress);
        if now < at {
            return OnTimer::Wait(at);
        }
        self.last_progress = now;
        self.rerequested = 0;
        OnTimer::Rerequest(due(now))
    }

    /// Whether reply `idx` would be taken (the pull is live, the reply is in
    /// the message and not yet received): the test Open-MX's handler makes
    /// before copying a reply (`omx_recv_pull_reply`, the
    /// `frames_missing_bitmap` test).
    pub fn wants(&self, idx: u32) -> bool {
        self.live && idx < self.replies && self.got[(idx / 64) as usize] & (1 << (idx % 64)) == 0
    }

    /// The first requested, incomplete block at or after `from` (blocks to
    /// request again, in order, after [`OnTimer::Rerequest`]).
    pub fn incomplete_from(&self, from: u32) -> Option<u32> {
        (from.max(self.first)..self.next_block).find(|&b| self.missing[b as usize] > 0)
    }

    /// The part of block `b` to request again (first reply, replies): the
    /// whole block with [`PullRerequest::WholeBlock`], else
    /// [`PullHandle::missing_span`].
    pub fn rerequest_span(&self, b: u32, how: PullRerequest) -> (u32, u32) {
        match how {
            PullRerequest::WholeBlock => self.block(b),
            PullRerequest::MissingTail => self.missing_span(b),
        }
    }

    /// The part of block `b` to request again: from its first missing reply
    /// to its end (first reply, replies). Asking for the whole block again
    /// would put the replies already received first in the burst: when the
    /// burst overflows the receive ring, the same tail replies would be the
    /// ones dropped every time. [estimate: Open-MX re-requests whole blocks
    /// ([`PullRerequest::WholeBlock`]); its PULL request names its first
    /// frame and its length (`struct omx_pkt_pull_request`), so a partial
    /// block is a valid request]
    pub fn missing_span(&self, b: u32) -> (u32, u32) {
        let (first, n) = self.block(b);
        let got = |i: u32| self.got[(i / 64) as usize] & (1 << (i % 64)) != 0;
        let start = (first..first + n).find(|&i| !got(i)).unwrap_or(first);
        (start, first + n - start)
    }

    /// When the pull timer must look next (`None`: the pull is done).
    pub fn poll_at(&self, timeout: Duration) -> Option<Instant> {
        self.live.then(|| self.last_progress + timeout)
    }
}

/// One reply to send (see [`PullServe::next_reply`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServedReply {
    /// Index of the reply in the message (its frame number).
    pub idx: u32,
    /// Its offset in the message and its payload.
    pub offset: u64,
    pub len: u32,
    /// The last reply of the block (the one a marking NIC marks).
    pub last_in_block: bool,
    /// The request is served: no reply follows.
    pub done: bool,
}

/// The sender's side of one PULL request: the replies of one block.
#[derive(Clone, Copy, Debug)]
pub struct PullServe {
    next: u32,
    end: u32,
    size: u64,
    /// Payload of a full reply.
    per: u64,
}

impl PullServe {
    /// Serving `count` replies (at most a block of `block`, and no further
    /// than the message) starting at reply `first` of a `size`-byte message,
    /// in replies of `per` bytes of payload.
    pub fn new(first: u32, count: u32, size: u64, per: u64, block: u32) -> Self {
        let replies = size.div_ceil(per).max(1) as u32;
        PullServe { next: first, end: (first + count.clamp(1, block)).min(replies), size, per }
    }

    /// The next reply to send.
    pub fn next_reply(&mut self) -> ServedReply {
        let idx = self.next;
        let offset = idx as u64 * self.per;
        let len = (self.size - offset).min(self.per) as u32;
        self.next += 1;
        ServedReply { idx, offset, len, last_in_block: self.next == self.end, done: self.next >= self.end }
    }
}
