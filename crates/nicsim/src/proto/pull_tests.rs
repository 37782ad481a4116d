//! Packet-trace tests of the pull handle and the serving of a block
//! (STYLE rule 7): each test feeds a [`PullHandle`] the replies and timer
//! firings the driver would, times written out in microseconds, and asserts
//! the exact requests that come back.

use super::*;
use crate::time::{Duration, Instant};
use crate::wire::{PULL_BLOCKS_OUTSTANDING, PULL_BLOCK_REPLIES};
use rstest::rstest;

fn us(x: u64) -> Instant {
    Instant::ZERO + Duration::from_us(x)
}

const BLOCK: u32 = PULL_BLOCK_REPLIES as u32;
const TIMEOUT: Duration = Duration::from_us(1000);
const DEADLINE: Duration = Duration::from_us(1_000_000);

/// The blocks requested and not complete, from the handle's own answers.
fn outstanding(h: &PullHandle) -> Vec<u32> {
    std::iter::successors(h.incomplete_from(0), |&b| h.incomplete_from(b + 1)).collect()
}

#[test]
fn pull_handle_keeps_four_blocks_of_32_outstanding() {
    let blocks = 10;
    let mut h = PullHandle::new(us(0), blocks * BLOCK - 5, BLOCK);
    assert_eq!(h.blocks(), blocks);
    assert_eq!(h.block(9), (9 * BLOCK, BLOCK - 5), "the last block is short");
    assert_eq!(h.start(), 0..PULL_BLOCKS_OUTSTANDING as u32);
    let mut requested = Vec::new();
    let mut t = 0;
    for idx in 0..blocks * BLOCK - 5 {
        t += 1;
        assert_eq!(outstanding(&h).len(), (blocks - idx / BLOCK).min(4) as usize, "before reply {idx}");
        match h.process(us(t), idx) {
            // The last blocks complete with no block left to request.
            OnReply::Progress => assert!(idx % BLOCK != BLOCK - 1 || idx / BLOCK >= blocks - 4),
            OnReply::Request(b) => {
                assert_eq!(idx % BLOCK, BLOCK - 1, "a block completes at its 32nd reply");
                requested.extend(b.iter());
            }
            OnReply::Complete => assert_eq!(idx, blocks * BLOCK - 6),
            other => panic!("reply {idx}: {other:?}"),
        }
    }
    assert_eq!(requested, (4..blocks).collect::<Vec<_>>(), "each completed block requests the next");
    assert!(!h.live());
    assert_eq!(h.poll_at(TIMEOUT), None);
}

/// Open-MX's optimistic re-request (`omx_pull.c`): a later block completing
/// before the first one asks the first again at once, not a pull timeout
/// later; the window does not move on past an incomplete first block; and a
/// block is asked again this way once per timeout.
#[test]
fn a_later_block_completing_first_rerequests_the_earlier_ones_once() {
    let mut h = PullHandle::new(us(0), 8 * BLOCK, BLOCK);
    assert_eq!(h.start(), 0..4);
    let lost = 5;
    let mut early = Vec::new();
    for idx in (0..4 * BLOCK).filter(|&i| i != lost) {
        match h.process(us(idx as u64 + 1), idx) {
            OnReply::Progress => {}
            OnReply::Rerequest(b) => early.push((idx, b.iter())),
            other => panic!("reply {idx}: {other:?}"),
        }
    }
    // Block 1 completing re-requests block 0; blocks 2 and 3 completing find
    // it already asked again and nothing else incomplete: no new block enters
    // the window meanwhile.
    assert_eq!(early, vec![(2 * BLOCK - 1, 0..1)]);
    assert_eq!(outstanding(&h), vec![0]);
    assert_eq!(h.missing_span(0), (lost, BLOCK - lost));
    // The lost reply comes back: the window moves past the four blocks.
    assert_eq!(h.process(us(200), lost), OnReply::Request(Blocks { start: 4, end: 8 }));
    // Block 4 loses a reply twice. Block 5 completing asks it again; after a
    // timeout it may be asked early again.
    for idx in (4 * BLOCK..6 * BLOCK).filter(|&i| i != 4 * BLOCK) {
        let on = h.process(us(300), idx);
        let want =
            if idx == 6 * BLOCK - 1 { OnReply::Rerequest(Blocks { start: 4, end: 5 }) } else { OnReply::Progress };
        assert_eq!(on, want, "reply {idx}");
    }
    for idx in 6 * BLOCK..7 * BLOCK {
        assert_eq!(h.process(us(301), idx), OnReply::Progress, "block 4 was asked again already");
    }
    assert!(matches!(h.on_timer(us(1301), TIMEOUT, DEADLINE), OnTimer::Rerequest(_)));
    for idx in 7 * BLOCK..8 * BLOCK - 1 {
        assert_eq!(h.process(us(1302), idx), OnReply::Progress);
    }
    assert_eq!(h.process(us(1302), 8 * BLOCK - 1), OnReply::Rerequest(Blocks { start: 4, end: 5 }));
    assert_eq!(h.process(us(1400), 4 * BLOCK), OnReply::Complete);
}

#[test]
fn lost_pull_reply_is_rerequested_after_pull_timeout() {
    let mut h = PullHandle::new(us(0), 2 * BLOCK, BLOCK);
    assert_eq!(h.start(), 0..2);
    // Every reply but #5 arrives, the last at 64 µs; block 1 completing
    // asks block 0 again at once, and that re-request is lost too.
    for idx in (0..2 * BLOCK).filter(|&i| i != 5) {
        let on = h.process(us(idx as u64 + 1), idx);
        let want =
            if idx == 2 * BLOCK - 1 { OnReply::Rerequest(Blocks { start: 0, end: 1 }) } else { OnReply::Progress };
        assert_eq!(on, want, "reply {idx}");
    }
    assert_eq!(h.poll_at(TIMEOUT), Some(us(64 + 1000)));
    // The timer set at the start finds progress: it waits for a whole
    // timeout after the last reply.
    assert_eq!(h.on_timer(us(1000), TIMEOUT, DEADLINE), OnTimer::Wait(us(1064)));
    assert_eq!(h.on_timer(us(1063), TIMEOUT, DEADLINE), OnTimer::Wait(us(1064)));
    assert_eq!(h.on_timer(us(1064), TIMEOUT, DEADLINE), OnTimer::Rerequest(us(2064)));
    assert_eq!(outstanding(&h), vec![0], "only the block with the lost reply");
    assert_eq!(h.missing_span(0), (5, BLOCK - 5), "from the lost reply to the block's end");
    assert_eq!(h.rerequest_span(0, PullRerequest::MissingTail), (5, BLOCK - 5));
    assert_eq!(h.rerequest_span(0, PullRerequest::WholeBlock), (0, BLOCK), "Open-MX 1.0.901: the whole block");
    assert_eq!(h.rerequest_span(1, PullRerequest::WholeBlock), h.block(1));
    // Lost again: another re-request one timeout later, not before.
    assert_eq!(h.on_timer(us(2063), TIMEOUT, DEADLINE), OnTimer::Wait(us(2064)));
    assert_eq!(h.on_timer(us(2064), TIMEOUT, DEADLINE), OnTimer::Rerequest(us(3064)));
    // The re-requested span comes back: #5 is new, the rest duplicates.
    assert_eq!(h.process(us(3000), 5), OnReply::Complete);
    assert_eq!(h.process(us(3001), 6), OnReply::Duplicate);
    assert_eq!(h.poll_at(TIMEOUT), None);
}

/// Replies dropped at the tail of every burst: a re-request that starts at
/// the first missing reply makes every reply that gets through new, so the
/// pull completes however small the window that gets through; re-requesting
/// whole blocks would get the same head replies (duplicates) through each
/// time and never the tail.
#[test]
fn rerequests_start_at_the_first_missing_reply_so_tails_get_through() {
    let mut h = PullHandle::new(us(0), BLOCK, BLOCK);
    h.start();
    // Only the first 8 replies of any burst get through (a small ring).
    let through = 8;
    for idx in 0..through {
        h.process(us(1), idx);
    }
    let mut t = 1;
    let mut rounds = 0;
    while h.live() {
        t += 1000;
        assert!(matches!(h.on_timer(us(t), TIMEOUT, DEADLINE), OnTimer::Rerequest(_)));
        let (first, n) = h.missing_span(0);
        assert_eq!(first + n, BLOCK, "to the block's end");
        for idx in first..first + n.min(through) {
            assert_ne!(h.process(us(t), idx), OnReply::Duplicate, "reply {idx} got through and is new");
        }
        rounds += 1;
        assert!(rounds < 10, "the pull completes");
    }
    assert_eq!(rounds, (BLOCK - through).div_ceil(through));
}

/// A pull still incomplete `deadline` after its start gives up (Open-MX's
/// `OMX_EVT_PULL_DONE_TIMEOUT`), even if it re-requested all along.
#[test]
fn pull_gives_up_after_its_deadline() {
    let mut h = PullHandle::new(us(0), BLOCK, BLOCK);
    h.start();
    let deadline = Duration::from_us(5000);
    let mut t = 0;
    loop {
        t += 1000;
        match h.on_timer(us(t), TIMEOUT, deadline) {
            OnTimer::Rerequest(_) => assert!(t <= 5000, "re-requests until the deadline"),
            OnTimer::GiveUp => break,
            OnTimer::Wait(_) => panic!("no reply came"),
        }
    }
    assert_eq!(t, 6000, "the first timer past the deadline");
}

#[rstest]
#[case::twice(3, 3)]
#[case::beyond_the_message(40, 40)]
fn pull_replies_are_dropped_if_seen_or_outside(#[case] first: u32, #[case] again: u32) {
    let mut h = PullHandle::new(us(0), 40, BLOCK);
    h.start();
    if first < 40 {
        assert_eq!(h.process(us(1), first), OnReply::Progress);
    }
    assert_eq!(h.process(us(2), again), OnReply::Duplicate);
}

#[test]
fn pull_serve_sends_the_replies_of_one_block() {
    let per = 1468;
    let size = 40 * per + 100; // 41 replies: a block of 32 and one of 9
    let mut s = PullServe::new(32, 32, size, per, BLOCK);
    let replies: Vec<ServedReply> = (0..9).map(|_| s.next_reply()).collect();
    assert_eq!(replies.iter().map(|r| r.idx).collect::<Vec<_>>(), (32..41).collect::<Vec<_>>());
    assert_eq!(replies[0].offset, 32 * per);
    assert_eq!(replies[8].len, 100, "the message's last reply is short");
    assert!(replies[..8].iter().all(|r| r.len == per as u32 && !r.last_in_block && !r.done));
    assert!(replies[8].last_in_block && replies[8].done);
    let mut first = PullServe::new(0, 32, size, per, BLOCK);
    let n = std::iter::from_fn(|| Some(first.next_reply())).position(|r| r.done).unwrap() + 1;
    assert_eq!(n, 32, "a whole block");
    // A re-request of a block's missing part: from its first reply to the
    // block's end, not into the next block.
    let mut part = PullServe::new(5, 27, size, per, BLOCK);
    let idx: Vec<u32> = std::iter::from_fn(|| Some(part.next_reply())).take(27).map(|r| r.idx).collect();
    assert_eq!(idx, (5..32).collect::<Vec<_>>());
}

#[test]
fn the_handle_wants_a_reply_once_and_none_after_completion() {
    let mut h = PullHandle::new(us(0), 2, BLOCK);
    h.start();
    assert!(h.wants(1) && !h.wants(2), "in the message, not beyond it");
    assert_eq!(h.process(us(1), 1), OnReply::Progress);
    assert!(!h.wants(1), "a duplicate is not wanted");
    assert!(h.wants(0));
    assert_eq!(h.process(us(2), 0), OnReply::Complete);
    assert!(!h.wants(0) && !h.wants(1), "a completed pull wants nothing");
}
