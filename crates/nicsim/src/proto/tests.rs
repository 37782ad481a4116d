//! Packet-trace tests of the protocol state machines (STYLE rule 7).
//!
//! Each test drives an [`Endpoint`] the way the library does (the pull
//! handle's are in `pull_tests.rs`), one frame or timer at a time, with the
//! times written out in microseconds, and asserts the exact actions that
//! come back. Frames go through [`Msg::emit`] and [`Msg::parse`], so the
//! wire mapping is exercised on the way.

use super::*;
use crate::time::{Duration, Instant};
use crate::wire::OmxBody;
use rstest::rstest;

fn us(x: u64) -> Instant {
    Instant::ZERO + Duration::from_us(x)
}

/// The defaults of the `[library]` table: ack after 4, delayed ack 50 µs,
/// resend 1000 µs, window 64 frames.
const PARAMS: Params = Params {
    ack_after: 4,
    delayed_ack: Duration::from_us(50),
    resend: Duration::from_us(1000),
    send_window_frames: 64,
};

/// The other side of every trace.
const PEER: u16 = 1;

/// Sends a one-frame message from `ep` at `now` and returns the body on the
/// wire (sequence number and piggy-backed ack as the library puts them).
fn send_tiny(ep: &mut Endpoint, now: Instant, tag: u64) -> OmxBody {
    let m = ep.send(PEER, now, 0, 8, tag, false, 1);
    let piggy = ep.dispatch_ack(PEER);
    Msg { seq: m.seq, piggy: Some(piggy.into()), tag, size: 8, ..Msg::new(Kind::Tiny) }.emit(0, 0)
}

/// An explicit ACK from `ep` (what the library sends for `Due::Ack`).
fn send_ack(ep: &mut Endpoint) -> OmxBody {
    let upto = ep.dispatch_ack(PEER);
    Msg { piggy: Some(upto.into()), ..Msg::new(Kind::Ack) }.emit(0, 0)
}

/// What the receiving library does with a frame at `now`: take in its ack,
/// then classify the message and, in order, deliver it.
#[derive(Debug, PartialEq, Eq)]
enum Got {
    AckOnly,
    Delivered(u32, AckPlan),
    Early(u32),
    Duplicate,
}

fn receive(ep: &mut Endpoint, now: Instant, body: &OmxBody) -> Got {
    let m = Msg::parse(body).expect("a library message");
    ep.process_ack(PEER, m.piggy.unwrap() as u16);
    if m.kind == Kind::Ack {
        return Got::AckOnly;
    }
    match ep.arrival(PEER, m.seq as u16) {
        (seq, Arrival::InOrder) => Got::Delivered(seq, ep.delivered(PEER, now)),
        (seq, Arrival::Early) => Got::Early(seq),
        (_, Arrival::Duplicate) => Got::Duplicate,
    }
}

/// The deadlines due at `now`, as (peer, what), and the next deadline.
fn poll(ep: &mut Endpoint, now: Instant) -> (Vec<(u16, Due)>, Option<Instant>) {
    let mut due = Vec::new();
    let next = ep.dispatch(now, |p, d| due.push((p, d)));
    if due.is_empty() {
        assert_eq!(next, ep.poll_at(), "with nothing due, dispatch returns poll_at");
    }
    (due, next)
}

fn seqs(due: &[(u16, Due)]) -> Vec<u32> {
    due.iter()
        .map(|(_, d)| match d {
            Due::Resend(m) => m.seq,
            Due::Ack | Due::GiveUp(_) => panic!("not a resend: {d:?}"),
        })
        .collect()
}

fn pair() -> (Endpoint, Endpoint) {
    (Endpoint::new(PARAMS, 2), Endpoint::new(PARAMS, 2))
}

// --- The wire mapping ----------------------------------------------------------

#[rstest]
#[case::tiny(Msg { seq: 7, piggy: Some(3), tag: 42, size: 32, ..Msg::new(Kind::Tiny) })]
#[case::small(Msg { seq: 65535, piggy: Some(0), tag: u64::MAX, size: 128, ..Msg::new(Kind::Small) })]
#[case::medium(Msg { seq: 9, piggy: Some(1), tag: 5, size: 40_000, frag_len: 1452, frag_seq: 27, ..Msg::new(Kind::MediumFrag) })]
#[case::rndv(Msg { seq: 2, piggy: Some(2), tag: 6, size: 1 << 20, rdma: 200, ..Msg::new(Kind::Rndv) })]
#[case::notify(Msg { seq: 4, piggy: Some(8), size: 1 << 20, rdma: 17, ..Msg::new(Kind::Notify) })]
#[case::ack(Msg { piggy: Some(12), ..Msg::new(Kind::Ack) })]
fn parse_inverts_emit(#[case] m: Msg) {
    let body = m.emit(3, 4);
    assert_eq!((body.dst_endpoint(), body.src_endpoint()), (3, Some(4)));
    assert_eq!(Msg::parse(&body), Some(m));
}

#[test]
fn pull_traffic_is_not_a_library_message() {
    let pull = OmxBody::Pull {
        dst_ep: 0,
        src_ep: 0,
        session: 0,
        total_length: 1 << 20,
        block_length: 32 * 1468,
        first_frame_offset: 0,
        frame_index: 0,
        pulled_rdma_id: 0,
        src_pull_handle: 0,
        src_magic: 0,
    };
    let reply =
        OmxBody::PullReply { frame_seqnum: 0, frame_length: 1468, msg_offset: 0, dst_pull_handle: 0, dst_magic: 0 };
    assert_eq!((Msg::parse(&pull), Msg::parse(&reply)), (None, None));
}

#[test]
fn sequence_numbers_widen_around_wrap() {
    assert_eq!(widen(5, 5), 5);
    assert_eq!(widen(0x1_0002, 0xFFFF), 0xFFFF);
    assert_eq!(widen(0xFFFE, 0x0001), 0x1_0001);
    assert_eq!(widen(0, 3), 3);
}

// --- Acks -------------------------------------------------------------------

/// The receiver acks explicitly after `ack_after` in-order messages; before
/// that the first message starts the delayed-ack timer and later ones find
/// it running.
#[rstest]
#[case(1)]
#[case(2)]
#[case(4)]
fn explicit_ack_after_ack_after_in_order_messages(#[case] ack_after: u32) {
    let params = Params { ack_after, ..PARAMS };
    let (mut a, mut b) = (Endpoint::new(params, 2), Endpoint::new(params, 2));
    let mut plans = Vec::new();
    for i in 0..ack_after {
        let f = send_tiny(&mut a, us(i as u64), 0);
        match receive(&mut b, us(i as u64), &f) {
            Got::Delivered(seq, plan) => {
                assert_eq!(seq, i);
                plans.push(plan);
            }
            other => panic!("message {i}: {other:?}"),
        }
    }
    let mut want = Vec::new();
    if ack_after > 1 {
        want.push(AckPlan::ArmTimer(us(50)));
        want.extend((2..ack_after).map(|_| AckPlan::Pending));
    }
    want.push(AckPlan::AckNow);
    assert_eq!(plans, want);
    // The ack is sent: it acknowledges every message, and cancels the timer.
    let ack = send_ack(&mut b);
    assert_eq!(poll(&mut b, us(1000)), (vec![], None), "no delayed ack after the explicit one");
    assert_eq!(a.unacked(PEER).count(), ack_after as usize);
    assert_eq!(receive(&mut a, us(10), &ack), Got::AckOnly);
    assert_eq!(a.unacked(PEER).count(), 0);
}

#[test]
fn delayed_ack_fires_after_delayed_ack_us() {
    let (mut a, mut b) = pair();
    let f = send_tiny(&mut a, us(0), 0);
    assert_eq!(receive(&mut b, us(10), &f), Got::Delivered(0, AckPlan::ArmTimer(us(60))));
    assert_eq!(poll(&mut b, us(59)), (vec![], Some(us(60))), "not yet");
    assert_eq!(poll(&mut b, us(60)), (vec![(PEER, Due::Ack)], None), "at 10 + 50 µs");
    assert_eq!(b.poll_at(), None, "the ack is queued (the caller sends it before it looks again)");
    let ack = send_ack(&mut b);
    assert_eq!(poll(&mut b, us(200)), (vec![], None));
    assert_eq!(receive(&mut a, us(70), &ack), Got::AckOnly);
    assert!(a.all_acked());
}

#[test]
fn piggy_backed_ack_cancels_the_delayed_ack() {
    let (mut a, mut b) = pair();
    let f = send_tiny(&mut a, us(0), 0);
    assert_eq!(receive(&mut b, us(10), &f), Got::Delivered(0, AckPlan::ArmTimer(us(60))));
    // B answers before the timer: the answer carries the ack.
    let reply = send_tiny(&mut b, us(20), 0);
    assert_eq!(poll(&mut b, us(60)).0, vec![], "the delayed ack was cancelled");
    assert_eq!(receive(&mut a, us(30), &reply), Got::Delivered(0, AckPlan::ArmTimer(us(80))));
    assert!(a.all_acked(), "the piggy-backed ack released A's message");
    // A later message starts a new delayed ack at B.
    let f = send_tiny(&mut a, us(40), 1);
    assert_eq!(receive(&mut b, us(45), &f), Got::Delivered(1, AckPlan::ArmTimer(us(95))));
    assert_eq!(poll(&mut b, us(94)).0, vec![]);
    assert_eq!(poll(&mut b, us(95)).0, vec![(PEER, Due::Ack)]);
}

/// Acks are cumulative: an ack up to `upto` releases exactly the messages
/// before it, oldest first, and an older ack releases nothing more.
#[rstest]
#[case(0, 0)]
#[case(1, 1)]
#[case(3, 3)]
#[case(5, 5)]
fn piggy_backed_acks_release_unacked_messages_oldest_first(#[case] upto: u16, #[case] released: usize) {
    let (mut a, _) = pair();
    for i in 0..5 {
        a.send(PEER, us(i), i as u32, 8, 0, false, 2);
    }
    assert_eq!(a.unacked_frames(PEER), 10);
    assert_eq!(a.process_ack(PEER, upto), released);
    let left: Vec<u32> = a.unacked(PEER).map(|m| m.seq).collect();
    assert_eq!(left, (upto as u32..5).collect::<Vec<_>>());
    assert_eq!(a.unacked_frames(PEER), 2 * left.len() as u32);
    assert_eq!(a.process_ack(PEER, upto.saturating_sub(1)), 0, "an older ack releases nothing");
}

#[test]
fn acks_are_widened_across_the_16_bit_wrap() {
    let (mut a, _) = pair();
    for i in 0..0x1_0003u32 {
        a.send(PEER, us(0), i, 8, 0, false, 1);
        if i % 1000 == 999 {
            a.process_ack(PEER, (i - 10) as u16);
        }
    }
    // 0x1_0002 is the last seq sent; its low bits ack up to it.
    // The last ack before the wrap was up to 64_999 - 10.
    assert_eq!(a.unacked(PEER).next().unwrap().seq, 64_989);
    assert_eq!(a.process_ack(PEER, 0x0002), 0x1_0002 - 64_989);
    assert_eq!(a.unacked(PEER).map(|m| m.seq).collect::<Vec<_>>(), vec![0x1_0002]);
}

// --- Arrivals ------------------------------------------------------------------

#[test]
fn duplicates_are_dropped_and_early_messages_kept() {
    let (mut a, mut b) = pair();
    let f0 = send_tiny(&mut a, us(0), 0);
    let f1 = send_tiny(&mut a, us(1), 1);
    let f2 = send_tiny(&mut a, us(2), 2);
    // f1 is overtaken by f2.
    assert_eq!(receive(&mut b, us(10), &f0), Got::Delivered(0, AckPlan::ArmTimer(us(60))));
    assert_eq!(receive(&mut b, us(11), &f2), Got::Early(2));
    assert_eq!(receive(&mut b, us(12), &f1), Got::Delivered(1, AckPlan::Pending));
    // A resent copy of f0 (its ack was lost) is a duplicate, and so is f2
    // once the library delivered it.
    assert_eq!(receive(&mut b, us(13), &f0), Got::Duplicate);
    assert_eq!(b.expected(PEER), 2);
    assert_eq!(receive(&mut b, us(14), &f2), Got::Delivered(2, AckPlan::Pending));
    assert_eq!(receive(&mut b, us(15), &f2), Got::Duplicate);
    assert_eq!(b.expected(PEER), 3, "each message is delivered once");
}

// --- Resends and the send window -------------------------------------------------

#[test]
fn resend_after_the_resend_timeout_until_acked() {
    let (mut a, mut b) = pair();
    let _lost = send_tiny(&mut a, us(0), 0);
    assert_eq!(poll(&mut a, us(999)), (vec![], Some(us(1000))));
    let (due, next) = poll(&mut a, us(1000));
    assert_eq!(seqs(&due), vec![0], "resent at 0 + 1000 µs");
    assert_eq!(next, Some(us(2000)), "and due again one period later");
    // The resend is lost too: a second one, and from the third the delay doubles.
    let (due, next) = poll(&mut a, us(2000));
    assert_eq!(seqs(&due), vec![0]);
    assert_eq!(next, Some(us(4000)));
    let (due, next) = poll(&mut a, us(4000));
    assert_eq!(seqs(&due), vec![0]);
    assert_eq!(next, Some(us(8000)));
    // Its copy arrives, B acks, A stops resending.
    let copy = Msg { piggy: Some(0), tag: 0, size: 8, ..Msg::new(Kind::Tiny) }.emit(0, 0);
    assert_eq!(receive(&mut b, us(4010), &copy), Got::Delivered(0, AckPlan::ArmTimer(us(4060))));
    let ack = send_ack(&mut b);
    assert_eq!(receive(&mut a, us(4020), &ack), Got::AckOnly);
    assert_eq!(poll(&mut a, us(9000)), (vec![], None));
}

/// The back-off doubles the delay per round without an ack, up to
/// `resend << RESEND_BACKOFF_MAX`, and an ack that releases a message
/// ends it.
#[test]
fn resend_rounds_back_off_until_an_ack() {
    let (mut a, _) = pair();
    send_tiny(&mut a, us(0), 0);
    send_tiny(&mut a, us(0), 0);
    let (mut now, mut last) = (us(1000), us(0));
    let mut gaps = Vec::new();
    for _ in 0..9 {
        let (due, next) = poll(&mut a, now);
        assert!(!due.is_empty());
        let next = next.unwrap();
        gaps.push(next.since(now).as_us_f64() as u64);
        (last, now) = (now, next);
    }
    assert_eq!(gaps, vec![1000, 2000, 4000, 8000, 16000, 32000, 64000, 64000, 64000]);
    // One message is acked: the other is due one period after its last resend.
    assert_eq!(a.process_ack(PEER, 1), 1);
    assert_eq!(a.poll_at(), Some(last + Duration::from_us(1000)));
    assert_eq!(64000, 1000 << RESEND_BACKOFF_MAX);
}

/// A resend round puts at most `RESENDS_PER_PEER` messages of a peer on the
/// wire again, the oldest ones; the others wait for the ack the resent ones
/// bring back.
#[test]
fn a_resend_round_is_capped_per_peer() {
    let (mut a, _) = pair();
    for t in 0..40 {
        send_tiny(&mut a, us(t), 0);
    }
    let (due, _) = poll(&mut a, us(2000));
    assert_eq!(seqs(&due), (0..RESENDS_PER_PEER as u32).collect::<Vec<_>>());
    assert_eq!(a.resent, RESENDS_PER_PEER as u64);
}

/// Resends go oldest first, and only while the oldest is due: a message
/// queued behind one just resent waits for it, although its own timer is
/// looked at when it would have been due.
#[test]
fn resends_go_in_queue_order_behind_the_oldest() {
    let (mut a, _) = pair();
    for t in [0, 10, 500] {
        send_tiny(&mut a, us(t), 0);
    }
    let (due, next) = poll(&mut a, us(1010));
    assert_eq!(seqs(&due), vec![0, 1]);
    assert_eq!(next, Some(us(1500)), "the third would be due first");
    assert_eq!(poll(&mut a, us(1500)), (vec![], Some(us(2010))), "but the oldest, resent, is not");
    let (due, next) = poll(&mut a, us(2010));
    assert_eq!(seqs(&due), vec![0, 1, 2]);
    assert_eq!(next, Some(us(4010)), "the third round waits two periods");
}

/// Once the resent messages are acked, the one behind them is the oldest,
/// and overdue: it goes at the next look.
#[test]
fn an_ack_of_resent_messages_exposes_an_overdue_one() {
    let (mut a, _) = pair();
    for t in [0, 10, 500] {
        send_tiny(&mut a, us(t), 0);
    }
    assert_eq!(seqs(&poll(&mut a, us(1010)).0), vec![0, 1]);
    assert_eq!(a.process_ack(PEER, 2), 2);
    assert_eq!(a.poll_at(), Some(us(1500)));
    let mut due = Vec::new();
    assert_eq!(a.dispatch(us(1600), |p, d| due.push((p, d))), Some(us(2600)));
    assert_eq!(seqs(&due), vec![2]);
}

#[test]
fn delayed_ack_and_resend_of_one_peer_come_out_ack_first() {
    let (mut a, mut b) = pair();
    let f = send_tiny(&mut b, us(0), 0);
    assert_eq!(receive(&mut a, us(5), &f), Got::Delivered(0, AckPlan::ArmTimer(us(55))));
    a.send(PEER, us(0), 0, 8, 0, false, 1);
    let (due, next) = poll(&mut a, us(1000));
    assert_eq!(due.len(), 2);
    assert_eq!(due[0], (PEER, Due::Ack));
    assert!(matches!(due[1], (PEER, Due::Resend(m)) if m.seq == 0));
    assert_eq!(next, Some(us(2000)));
}

/// The deadlines come from a heap: `dispatch` looks at the entries that
/// passed, not at the peers. Checked against a brute-force model of the
/// deadlines (each peer's delayed ack and oldest resend) over a long
/// pseudo-random trace towards 200 peers: every poll returns the exact
/// earliest deadline, and the heap entries looked at stay a small multiple
/// of the deadlines that passed.
#[test]
fn dispatch_returns_the_earliest_deadline_without_a_scan() {
    let peers = 200u16;
    let mut ep = Endpoint::new(PARAMS, peers as usize);
    let (mut x, mut now) = (0x9E37_79B9_7F4A_7C15u64, us(0));
    let mut polls = 0u64;
    for _ in 0..50_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let peer = (x % peers as u64) as u16;
        now += Duration::from_us(if (x >> 40) % 8 == 0 { (x >> 50) % 1500 } else { (x >> 50) % 20 });
        match (x >> 8) % 6 {
            0 | 1 => {
                ep.send(peer, now, 0, 8, 0, false, 1);
            }
            2 => {
                let oldest = ep.unacked(peer).next().map(|m| m.seq);
                if let Some(oldest) = oldest {
                    ep.process_ack(peer, (oldest + (x >> 20) as u32 % 3) as u16);
                }
            }
            3 => {
                if ep.delivered(peer, now) == AckPlan::AckNow {
                    ep.dispatch_ack(peer);
                }
            }
            4 => {
                ep.dispatch_ack(peer);
            }
            _ => {
                polls += 1;
                let mut due = Vec::new();
                let next = ep.dispatch(now, |p, d| due.push((p, d)));
                let peers_due: Vec<u16> = due.iter().map(|(p, _)| *p).collect();
                assert!(peers_due.windows(2).all(|w| w[0] <= w[1]), "in rank order");
                for (p, d) in &due {
                    if *d == Due::Ack {
                        ep.dispatch_ack(*p);
                    }
                }
                let exact = (0..peers)
                    .flat_map(|p| {
                        let (ack, resend) = ep.deadlines(p);
                        ack.into_iter().chain(resend)
                    })
                    .min();
                assert_eq!(next, exact, "the earliest deadline");
                assert!(next.is_none_or(|t| t > now), "nothing due is left");
            }
        }
    }
    assert!(polls > 5_000);
    assert!(ep.timer_visits < 4 * polls + 50_000, "heap work per poll is bounded ({} visits)", ep.timer_visits);
}

#[rstest]
#[case::fits(60, 4, false)]
#[case::exceeds(61, 4, true)]
#[case::alone_always_goes(0, 100, false)]
fn send_window_counts_unacked_frames(#[case] in_flight: u32, #[case] frames: u32, #[case] full: bool) {
    let (mut a, _) = pair();
    if in_flight > 0 {
        a.send(PEER, us(0), 0, 0, 0, false, in_flight);
    }
    assert_eq!(a.window_full(PEER, frames), full);
    a.process_ack(PEER, 1);
    assert!(!a.window_full(PEER, frames), "acks open the window");
}

#[test]
fn finalizing_flushes_unacked_receives() {
    let (mut a, mut b) = pair();
    let f = send_tiny(&mut a, us(0), 0);
    receive(&mut b, us(1), &f);
    let mut flushed = Vec::new();
    assert!(b.flush_acks(|p| flushed.push(p)));
    assert_eq!(flushed, vec![PEER]);
    assert!(!b.flush_acks(|_| panic!("nothing left to flush")));
    assert_eq!(poll(&mut b, us(100)), (vec![], None), "no delayed ack after the flush");
}

/// The protocol-timer heap holds what is pending, not what happened: 16
/// peers, each with a message unacknowledged (its resend round at 1 ms)
/// and a message received every 80 µs whose delayed ack falls due 50 µs
/// later. Each received message moves the peer's deadline earlier (an
/// entry) and, once acked, back to the resend round (another): 360 entries
/// by the end of the first millisecond if none were dropped before they
/// came up. The heap stays within twice the live peers and the slack, and
/// every ack still goes out once, at its deadline.
#[test]
fn the_timer_heap_is_bounded_by_the_deadlines_pending() {
    let peers = 16u16;
    let mut ep = Endpoint::new(PARAMS, peers as usize);
    for p in 0..peers {
        ep.send(p, us(0), 0, 8, 0, false, 1);
    }
    let mut most = 0;
    let mut acks = Vec::new();
    let mut received = 0;
    let mut now = us(0);
    while now < us(900) {
        now += Duration::from_us(5);
        let peer = received % peers;
        ep.delivered(peer, now);
        received += 1;
        let mut due = Vec::new();
        ep.dispatch(now, |p, d| {
            assert_eq!(d, Due::Ack, "no resend is due before 1 ms");
            due.push(p);
        });
        for p in due {
            ep.dispatch_ack(p);
            acks.push((p, now));
        }
        most = most.max(ep.timer_entries());
    }
    // Each ack at the first poll at or after its message's arrival + 50 µs
    // (polls every 5 µs): the message received 10 polls before.
    assert_eq!(acks.len() as u16, received - 10);
    for (i, &(p, at)) in acks.iter().enumerate() {
        assert_eq!(p, i as u16 % peers);
        assert_eq!(at, us(5 * (i as u64 + 1) + 50));
    }
    assert!(ep.compactions > 0);
    assert!(
        most <= 2 * peers as usize + super::endpoint::HEAP_SLACK,
        "{most} heap entries for {peers} peers with a deadline"
    );
}

/// The timer work per poll does not grow with the number of peers: the same
/// traffic (a stream to a few peers, delayed acks from a few others, a lost
/// message now and then) costs as many heap entries per poll towards 8
/// peers as towards 256 (with a scan of the peers it would cost 32 times
/// more).
#[test]
fn timer_work_per_poll_does_not_grow_with_the_peers() {
    fn visits_per_poll(peers: usize) -> f64 {
        let mut ep = Endpoint::new(PARAMS, peers);
        let mut now = us(0);
        let mut polls = 0u64;
        for i in 0..20_000u32 {
            now += Duration::from_us(3);
            let peer = (i % 4) as u16 * (peers as u16 / 4);
            ep.send(peer, now, 0, 8, 0, false, 1);
            if i % 13 != 0 {
                let next = ep.unacked(peer).last().map(|m| m.seq + 1).unwrap();
                ep.process_ack(peer, next as u16);
            }
            ep.delivered(peer + 1, now);
            if i % 3 == 0 {
                ep.dispatch_ack(peer + 1);
            }
            ep.dispatch(now, |p, d| {
                if d == Due::Ack {
                    let _ = p;
                }
            });
            polls += 1;
        }
        ep.timer_visits as f64 / polls as f64
    }
    let (small, large) = (visits_per_poll(8), visits_per_poll(256));
    assert!(small > 0.0);
    assert!(large <= small * 1.1, "per poll: {small} heap entries at 8 peers, {large} at 256");
}

/// The unacknowledged messages of all peers share one slab that grows only
/// to the most ever in flight at once: a burst of three messages to each of
/// 1,023 peers takes 3,069 slots, and rounds of one message to each peer
/// after it (acked peer by peer, in another order than sent) reuse them;
/// every peer keeps its own messages in sequence order throughout.
#[test]
fn unacked_sends_share_a_slab_as_large_as_the_most_in_flight() {
    let peers = 1024u16;
    let mut ep = Endpoint::new(PARAMS, peers as usize);
    let mut now = us(0);
    for _ in 0..3 {
        for p in 1..peers {
            now += Duration::from_us(1);
            ep.send(p, now, 0, 8, 0, false, 1);
        }
    }
    assert_eq!(ep.slots(), 3 * (peers as usize - 1));
    for p in (1..peers).rev() {
        assert_eq!(ep.unacked(p).map(|m| m.seq).collect::<Vec<_>>(), vec![0, 1, 2]);
        ep.process_ack(p, 3);
    }
    assert!(ep.all_acked());
    for round in 0..5u32 {
        for p in 1..peers {
            now += Duration::from_us(1);
            ep.send(p, now, 0, 8, 0, false, 1);
        }
        // Acks of the even peers first, then the odd ones.
        for p in (2..peers).step_by(2).chain((1..peers).step_by(2)) {
            assert_eq!(ep.unacked(p).map(|m| m.seq).collect::<Vec<_>>(), vec![3 + round]);
            assert_eq!(ep.unacked_frames(p), 1);
            assert_eq!(ep.process_ack(p, (4 + round) as u16), 1);
        }
        assert!(ep.all_acked());
    }
    assert_eq!(ep.slots(), 3 * (peers as usize - 1), "no slot beyond the burst's");
}

/// Finalizing acks, in rank order, the peers with in-order messages
/// unacknowledged, and looks only at the peers delivered a message since
/// the last flush (a process woken again and again while it waits for its
/// own acks must not scan all its peers each time).
#[test]
fn flush_acks_looks_only_at_peers_delivered_since_the_last_flush() {
    let mut ep = Endpoint::new(PARAMS, 1024);
    for peer in [900, 3, 517] {
        ep.delivered(peer, us(1));
    }
    ep.delivered(3, us(2));
    ep.dispatch_ack(517); // its ack went out piggy-backed
    let mut acked = Vec::new();
    assert!(ep.flush_acks(|p| acked.push(p)));
    assert_eq!(acked, vec![3, 900]);
    assert_eq!(ep.flush_visits, 3);
    assert!(!ep.flush_acks(|_| panic!("nothing owed")));
    assert_eq!(ep.flush_visits, 3, "an empty flush looks at no peer");
    ep.delivered(42, us(3));
    acked.clear();
    assert!(ep.flush_acks(|p| acked.push(p)));
    assert_eq!((acked, ep.flush_visits), (vec![42], 4));
}

/// A peer that never acknowledges: the message is resent round after round
/// (backing off), and once it has been unacknowledged for `RESENDS_MAX`
/// resend delays the endpoint gives up on the peer (Open-MX's
/// `OMX_RESENDS_MAX`) and resends nothing more to it.
#[test]
fn endpoint_gives_up_on_a_peer_after_resends_max_delays() {
    let mut a = Endpoint::new(PARAMS, 2);
    let sent = a.send(PEER, us(0), 7, 8, 0, false, 1);
    let limit = PARAMS.resend.times(RESENDS_MAX);
    let (mut resends, mut gave_up) = (0u64, None);
    while let Some(now) = a.poll_at() {
        a.dispatch(now, |p, d| match d {
            Due::Resend(m) => {
                assert_eq!((p, m.seq), (PEER, sent.seq));
                assert!(now.since(us(0)) < limit, "no resend after the limit");
                resends += 1;
            }
            Due::GiveUp(m) => gave_up = Some((p, m.seq, now)),
            Due::Ack => panic!("nothing to ack"),
        });
    }
    let (p, seq, at) = gave_up.expect("the endpoint gave up");
    assert_eq!((p, seq), (PEER, sent.seq));
    assert!(at.since(us(0)) >= limit, "not before {limit}");
    assert!(at.since(us(0)) <= limit + PARAMS.resend.times(1 << RESEND_BACKOFF_MAX), "at the first round after it");
    assert!(resends > 10, "resent all along: {resends}");
    assert!(!a.all_acked(), "the message is not acknowledged");
    assert_eq!(a.deadlines(PEER).1, None, "no more resend rounds");
}

/// `poll_at` keeps the earliest deadline of all peers as heap entries come
/// and go (it reads a copy kept beside the peers, not the heap): two peers'
/// resends 300 µs apart, the earlier taken first.
#[test]
fn poll_at_follows_the_earliest_peer_as_deadlines_pass() {
    let mut a = Endpoint::new(PARAMS, 3);
    assert_eq!(a.poll_at(), None);
    a.send(2, us(300), 0, 8, 0, false, 1);
    assert_eq!(a.poll_at(), Some(us(1300)));
    a.send(PEER, us(0), 0, 8, 0, false, 1);
    assert_eq!(a.poll_at(), Some(us(1000)), "an earlier deadline comes first");
    let mut due = Vec::new();
    let next = a.dispatch(us(1000), |p, d| due.push((p, d)));
    assert_eq!(due.iter().map(|(p, _)| *p).collect::<Vec<_>>(), vec![PEER]);
    assert_eq!((next, a.poll_at()), (Some(us(1300)), Some(us(1300))), "the other peer's is next");
    due.clear();
    a.dispatch(us(1300), |p, d| due.push((p, d)));
    assert_eq!(due.iter().map(|(p, _)| *p).collect::<Vec<_>>(), vec![2]);
    assert_eq!(a.poll_at(), Some(us(2000)), "the first peer's second round");
}

/// The "timer running" word of the NI clock (\[LCI] §5.2): a message sent
/// arms its resend; once it is acked, the armed deadline counts until it
/// comes up, and then nothing runs.
#[test]
fn a_timer_runs_from_a_send_until_its_acked_deadline_comes_up() {
    let (mut a, mut b) = (Endpoint::new(PARAMS, 2), Endpoint::new(PARAMS, 2));
    assert!(!a.timers_running());
    let body = send_tiny(&mut a, us(0), 7);
    assert!(a.timers_running(), "the resend is armed");
    receive(&mut b, us(10), &body);
    let ack = send_ack(&mut b);
    receive(&mut a, us(20), &ack);
    assert!(a.timers_running(), "the armed deadline has not come up yet");
    assert_eq!(a.dispatch(us(1000), |_, _| panic!("nothing is due")), None);
    assert!(!a.timers_running());
}
