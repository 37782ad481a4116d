//! The drivers' pull of a large message (Open-MX `omx_pull.c`): the
//! receiver's [`PullHandle`] requests the message in blocks of
//! [`PULL_BLOCK_REPLIES`] replies, [`PULL_BLOCKS_OUTSTANDING`] blocks at a
//! time, asks for the next block when one completes, asks again for every
//! incomplete block when no reply came for a timeout, and gives up when the
//! pull outlives its deadline; the sender's [`PullServe`] answers one
//! request with the replies it names.
//!
//! This file owns which replies and blocks are wanted, received and due.
//! It does not own addressing, frames or the copy of the data
//! (`crate::sim::pull`).

use crate::time::{Duration, Instant};
use crate::wire::{PULL_BLOCKS_OUTSTANDING, PULL_BLOCK_REPLIES};
use std::ops::Range;

const BLOCK: u32 = PULL_BLOCK_REPLIES as u32;

/// What a pull reply did to its handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnReply {
    /// Already received (a re-requested block's replies crossing the
    /// originals), or outside the message: drop it.
    Duplicate,
    /// Recorded; nothing else to do.
    Progress,
    /// Recorded, and it completed a block: request this block next.
    Request(u32),
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
    /// Total replies and blocks.
    replies: u32,
    blocks: u32,
    /// Next block to request.
    next_block: u32,
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
    /// A pull of `replies` replies started at `now`, nothing requested yet.
    pub fn new(now: Instant, replies: u32) -> Self {
        let blocks = replies.div_ceil(BLOCK).max(1);
        PullHandle {
            replies,
            blocks,
            next_block: 0,
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
        let n = self.blocks.min(PULL_BLOCKS_OUTSTANDING as u32);
        for b in 0..n {
            self.request(b);
        }
        0..n
    }

    /// First reply of block `b` and its replies.
    pub fn block(&self, b: u32) -> (u32, u32) {
        (b * BLOCK, (self.replies - b * BLOCK).min(BLOCK))
    }

    fn request(&mut self, b: u32) {
        self.missing[b as usize] = self.block(b).1;
        self.next_block = b + 1;
    }

    /// Reply `idx` arrived at `now`.
    pub fn process(&mut self, now: Instant, idx: u32) -> OnReply {
        let (w, bit) = ((idx / 64) as usize, idx % 64);
        if idx >= self.replies || self.got[w] & (1 << bit) != 0 {
            return OnReply::Duplicate;
        }
        self.got[w] |= 1 << bit;
        self.done_replies += 1;
        let b = (idx / BLOCK) as usize;
        self.missing[b] = self.missing[b].saturating_sub(1);
        self.last_progress = now;
        if self.done_replies == self.replies {
            self.live = false;
            OnReply::Complete
        } else if self.missing[b] == 0 && self.next_block < self.blocks {
            let next = self.next_block;
            self.request(next);
            OnReply::Request(next)
        } else {
            OnReply::Progress
        }
    }

    /// The pull timer (`timeout`: `pull_timeout_us`) fired at `now`; a pull
    /// still incomplete `deadline` after it started gives up. (Open-MX's
    /// driver aborts a pull handle whose timer finds `jiffies` past its
    /// `last_retransmit_jiffies`, set at creation to the library's
    /// `retransmit_delay_jiffies`: its resend delay times its resend limit,
    /// `omx_pull_handle_timeout_handler`, driver/linux `omx_pull.c`.)
    pub fn on_timer(&mut self, now: Instant, timeout: Duration, deadline: Duration) -> OnTimer {
        if now.since(self.started) > deadline {
            return OnTimer::GiveUp;
        }
        if now.since(self.last_progress) < timeout {
            return OnTimer::Wait(self.last_progress + timeout);
        }
        self.last_progress = now;
        OnTimer::Rerequest(now + timeout)
    }

    /// The first requested, incomplete block at or after `from` (blocks to
    /// request again, in order, after [`OnTimer::Rerequest`]).
    pub fn incomplete_from(&self, from: u32) -> Option<u32> {
        (from..self.next_block).find(|&b| self.missing[b as usize] > 0)
    }

    /// The part of block `b` to request again: from its first missing reply
    /// to its end (first reply, replies). Asking for the whole block again
    /// would put the replies already received first in the burst: when the
    /// burst overflows the receive ring, the same tail replies would be the
    /// ones dropped every time. [estimate: Open-MX re-requests whole blocks
    /// (`omx_pull_handle_timeout_handler`, driver/linux `omx_pull.c`); its
    /// PULL request names its first frame and its length (`struct
    /// omx_pkt_pull_request`), so a partial block is a valid request]
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
    /// Serving `count` replies (at most a block, and no further than the
    /// message) starting at reply `first` of a `size`-byte message, in
    /// replies of `per` bytes of payload.
    pub fn new(first: u32, count: u32, size: u64, per: u64) -> Self {
        let replies = size.div_ceil(per).max(1) as u32;
        PullServe { next: first, end: (first + count.clamp(1, BLOCK)).min(replies), size, per }
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
