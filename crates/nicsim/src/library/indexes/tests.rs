//! Tests of a process's indexed collections: matching by source, early
//! messages, medium reassembly, regions, and the queued timer events.

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
    let messages = w.run.completions / 2;
    (work as f64 / messages as f64, messages, resent)
}

/// A linear all-to-all of `n` ranks (every rank talks to every other at
/// once), one per host, about 256 messages per rank whatever `n`.
fn alltoall(n: u32, size: u64, extra: &str) -> String {
    let iterations = (256 / (n - 1)).max(1);
    format!(
        "[platform.topology]\nhosts = {n}\n[workload]\nkind = \"alltoall\"\nsize_bytes = {size}\n\
         iterations = {iterations}\nwarmup = 0\nprocs_per_host = 1\nalltoall_algorithm = \"linear\"\n{extra}"
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
    LibEvent {
        msg: Msg { seq, tag, ..Msg::new(Kind::Tiny) },
        peer,
        writer: crate::library::Writer::Die(0),
        irq_stamp: 0,
    }
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
    let rx =
        |peer| MediumRx { peer, seq: peer as u32, target: MediumTarget::Unexpected, left: 2, seen: 1, stamps: (0, 0) };
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

mod timer_events {
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
