//! The Open-MX-like message protocol state of one endpoint (library side) and
//! of the driver's pull handles: sequence numbers, piggy-backed and explicit
//! acks, resend bookkeeping, early (out-of-order) messages, medium
//! reassembly, and large-message pull blocks.
//!
//! This module owns protocol *state* and its pure transitions. It does not
//! charge CPU time or move frames: `crate::sim` calls these transitions from
//! the library and the receive handler at the simulated times they run.

use crate::time::Instant;
use std::collections::VecDeque;

/// Sequence numbers are 16-bit on the wire (Open-MX `omx_seqnum_t` is 16-bit
/// with a session in the upper bits); the model keeps them in `u32` and puts
/// the low 16 bits on the wire.
pub type Seq = u32;

/// Per remote peer state of one endpoint.
#[derive(Clone, Debug, Default)]
pub struct Peer {
    /// Next sequence number to send.
    pub next_send: Seq,
    /// Next in-order sequence number expected.
    pub expected: Seq,
    /// Messages received in order and not yet acknowledged.
    pub unacked_recv: u32,
    /// Deadline of the delayed explicit ack, if one is due.
    pub ack_deadline: Option<Instant>,
    /// Sent, not yet acknowledged messages (for resend), oldest first.
    pub unacked_sends: VecDeque<SentMsg>,
    /// Highest seq acknowledged by the peer (+1).
    pub acked_upto: Seq,
    /// Frames of the unacknowledged messages (the send window's use).
    pub unacked_frames: u32,
}

/// A message kept for possible resend until acked.
#[derive(Clone, Copy, Debug)]
pub struct SentMsg {
    pub seq: Seq,
    pub req: u32,
    pub sent_at: Instant,
    pub size: u64,
    pub tag: u64,
    /// For NOTIFY: the receive request it completes on the peer.
    pub is_notify: bool,
    /// Frames of the message (medium: its fragments).
    pub frames: u32,
}

impl Peer {
    /// Sequence comparison: is `a` at or after `b`?
    pub fn seq_ge(a: Seq, b: Seq) -> bool {
        a >= b
    }

    /// Applies a cumulative ack: every message with seq < `upto` is acked.
    /// Returns the requests whose (buffered) messages are now released.
    pub fn ack(&mut self, upto: Seq) -> usize {
        let mut n = 0;
        if upto > self.acked_upto {
            self.acked_upto = upto;
        }
        while let Some(m) = self.unacked_sends.front() {
            if m.seq < upto {
                self.unacked_frames -= m.frames;
                self.unacked_sends.pop_front();
                n += 1;
            } else {
                break;
            }
        }
        n
    }

    /// A message with `seq` arrived: classify it.
    pub fn classify(&self, seq: Seq) -> Arrival {
        use std::cmp::Ordering::*;
        match seq.cmp(&self.expected) {
            Equal => Arrival::InOrder,
            Greater => Arrival::Early,
            Less => Arrival::Duplicate,
        }
    }

    /// The in-order message was consumed; returns true if an explicit ack is
    /// now due (after `ack_after` unacknowledged messages, SPEC 2.1).
    pub fn consumed(&mut self, ack_after: u32) -> bool {
        self.expected += 1;
        self.unacked_recv += 1;
        self.unacked_recv >= ack_after
    }

    /// An ack (explicit or piggy-backed) for everything in order was sent.
    pub fn ack_sent(&mut self) {
        self.unacked_recv = 0;
        self.ack_deadline = None;
    }
}

/// How an arriving message relates to the expected sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    InOrder,
    Early,
    Duplicate,
}

/// The receiver driver's state of one large-message pull.
#[derive(Clone, Debug)]
pub struct PullHandle {
    pub host: u16,
    pub ep: u8,
    /// The sender (host, endpoint) being pulled from.
    pub peer_host: u16,
    pub peer_ep: u8,
    pub req: u32,
    pub size: u64,
    /// Total replies and blocks.
    pub replies: u32,
    pub blocks: u32,
    /// Next block to request.
    pub next_block: u32,
    /// Replies still missing per requested block (index = block).
    pub missing: Vec<u32>,
    /// Bitmap of received replies (to drop duplicates).
    pub got: Vec<u64>,
    pub done_replies: u32,
    pub last_progress: Instant,
    pub rdma_id: u8,
    pub live: bool,
    /// When the copy engine will have finished this pull's copies (I/OAT).
    pub copies_done: Instant,
}

impl PullHandle {
    pub fn new(
        host: u16,
        ep: u8,
        peer_host: u16,
        peer_ep: u8,
        req: u32,
        size: u64,
        replies: u32,
        block_replies: u32,
    ) -> Self {
        let blocks = replies.div_ceil(block_replies).max(1);
        PullHandle {
            host,
            ep,
            peer_host,
            peer_ep,
            req,
            size,
            replies,
            blocks,
            next_block: 0,
            missing: vec![0; blocks as usize],
            got: vec![0; (replies as usize).div_ceil(64).max(1)],
            done_replies: 0,
            last_progress: Instant::ZERO,
            rdma_id: 0,
            live: true,
            copies_done: Instant::ZERO,
        }
    }

    /// Replies in block `b`.
    pub fn block_len(&self, b: u32, block_replies: u32) -> u32 {
        (self.replies - b * block_replies).min(block_replies)
    }

    /// Records reply `idx`; returns (new, block_complete) — `new` is false for duplicates.
    pub fn record(&mut self, idx: u32, block_replies: u32) -> (bool, bool) {
        let (w, bit) = ((idx / 64) as usize, idx % 64);
        if idx >= self.replies || self.got[w] & (1 << bit) != 0 {
            return (false, false);
        }
        self.got[w] |= 1 << bit;
        self.done_replies += 1;
        let b = (idx / block_replies) as usize;
        self.missing[b] = self.missing[b].saturating_sub(1);
        (true, self.missing[b] == 0)
    }

    pub fn complete(&self) -> bool {
        self.done_replies == self.replies
    }

    /// Whether reply `idx` was received.
    pub fn has(&self, idx: u32) -> bool {
        self.got[(idx / 64) as usize] & (1 << (idx % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_ack_releases_oldest_first() {
        let mut p = Peer::default();
        for s in 0..5 {
            p.unacked_sends.push_back(SentMsg {
                seq: s,
                req: s,
                sent_at: Instant::ZERO,
                size: 0,
                tag: 0,
                is_notify: false,
                frames: 0,
            });
        }
        assert_eq!(p.ack(3), 3);
        assert_eq!(p.unacked_sends.front().unwrap().seq, 3);
        assert_eq!(p.ack(2), 0);
    }

    #[test]
    fn arrivals_are_classified_against_expected() {
        let mut p = Peer::default();
        assert_eq!(p.classify(0), Arrival::InOrder);
        assert_eq!(p.classify(2), Arrival::Early);
        assert!(!p.consumed(4));
        assert_eq!(p.classify(0), Arrival::Duplicate);
        p.consumed(4);
        p.consumed(4);
        assert!(p.consumed(4), "4th unacked message triggers an explicit ack");
    }

    #[test]
    fn pull_handle_counts_blocks_and_drops_duplicates() {
        // 164 replies in blocks of 32 -> 6 blocks, the last with 4
        let mut h = PullHandle::new(1, 0, 0, 0, 0, 239_616, 164, 32);
        assert_eq!(h.blocks, 6);
        assert_eq!(h.block_len(5, 32), 4);
        h.missing[0] = 32;
        for i in 0..31 {
            assert_eq!(h.record(i, 32), (true, false));
        }
        assert_eq!(h.record(5, 32), (false, false));
        assert_eq!(h.record(31, 32), (true, true));
    }
}
