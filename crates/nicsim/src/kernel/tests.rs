//! The receive path driven through its interface alone: a host's
//! `RxPath` is started and finished on work items with a context made
//! from a world's costs and one of its receive queues, and what it wants
//! done is read from its answers, with no event queue or core in between.

use super::{Cx, Done, KWork, RxPath, Start};
use crate::nic::RingEntry;
use crate::sim::World;
use crate::time::{Duration, Instant};

/// A two-host ping-pong world of 8 B messages, for its costs and NICs.
fn world() -> World {
    let s = crate::Scenario::from_toml("[workload]\nkind = \"pingpong\"\nsize_bytes = 8\niterations = 1\nwarmup = 0\n")
        .unwrap();
    World::new(&s)
}

/// Calls `f` with host 1's receive path and a context on its queue 0.
fn with_cx<R>(w: &mut World, now: Instant, f: impl FnOnce(&mut RxPath, &mut Cx<'_>) -> R) -> R {
    let hs = &mut w.hosts[1];
    let mut cx = Cx {
        now,
        c: &w.env.c,
        cc: &w.env.c.cc,
        topo: &w.env.topo,
        cache: &mut hs.mem.cache,
        queue: &mut hs.nic.queues[0],
    };
    f(&mut hs.rx, &mut cx)
}

#[test]
fn a_hard_irq_polls_each_frame_then_rearms() {
    let mut w = world();
    let budget = w.env.c.napi_budget;
    w.hosts[1].nic.queues[0].push_rx(7, true, 1);
    let now = Instant::ZERO;
    // The hard IRQ and the first poll: one item, priced with both, which
    // takes the frame and leaves its driver and handler work to the world.
    let irq = RxPath::irq(0, true, false, false);
    assert_eq!(irq, KWork::Irq { q: 0 });
    let (cost, entry, next) = match with_cx(&mut w, now, |rx, cx| rx.start(cx, 0, irq)) {
        Start::Entry { cost, entry, w } => (cost, entry, w),
        s => panic!("expected the frame's entry, got {s:?}"),
    };
    assert_eq!(entry, RingEntry::Rx(7));
    assert_eq!(next, KWork::EntryRx { q: 0, budget: budget - 1, frame: 7 });
    assert!(cost >= w.env.c.host.irq_entry + w.env.c.host.napi_poll, "{cost:?}");
    assert_eq!(w.hosts[1].rx.irq_handled(), 1);
    // The driver's tail is left out of the entry's price and opens the next
    // segment, after the frame went to the handler.
    let e = w.env.c.host.driver_rx_tail + Duration::from_ns(100);
    assert_eq!(RxPath::entry_cost(&w.env.c, cost, entry, e), cost + Duration::from_ns(100));
    match with_cx(&mut w, now, |rx, cx| rx.finish(cx, next)) {
        Done::Frame { next, tail, frame } => {
            assert_eq!((next, tail, frame), (KWork::Napi { q: 0, budget: budget - 1 }, w.env.c.host.driver_rx_tail, 7));
        }
        d => panic!("expected the frame for the handler, got {d:?}"),
    }
    // The ring is empty: napi_complete and the re-arm, priced, no entry.
    let napi = KWork::Napi { q: 0, budget: budget - 1 };
    match with_cx(&mut w, now, |rx, cx| rx.start(cx, 0, napi)) {
        Start::Run(cost, KWork::Rearm { q: 0 }) => assert_eq!(cost, w.env.c.host.irq_rearm),
        s => panic!("expected the re-arm, got {s:?}"),
    }
    assert!(matches!(
        with_cx(&mut w, now, |rx, cx| rx.finish(cx, KWork::Rearm { q: 0 })),
        Done::Irq { next: None, .. }
    ));
    assert_eq!(w.hosts[1].rx.irq_handled(), 1, "only the hard IRQ counts");
}

#[test]
fn a_spent_budget_yields_and_a_deferral_arms_the_timer() {
    let mut w = world();
    let now = Instant::ZERO + Duration::from_ns(1_000);
    match with_cx(&mut w, now, |rx, cx| rx.start(cx, 0, KWork::Napi { q: 0, budget: 0 })) {
        Start::Yield(next) => assert_eq!(next, KWork::Napi { q: 0, budget: w.env.c.napi_budget }),
        s => panic!("expected a yield, got {s:?}"),
    }
    match with_cx(&mut w, now, |rx, cx| rx.finish(cx, KWork::Defer { q: 0 })) {
        Done::Timer { at } => assert_eq!(at, now + w.env.c.gro_flush),
        d => panic!("expected the NAPI timer, got {d:?}"),
    }
    assert_eq!(RxPath::napi_timer(0, false), KWork::TimerNapi { q: 0 });
}

#[test]
fn split_claims_reap_in_the_hard_handler_and_schedule_napi_only_for_frames() {
    let mut w = world();
    let now = Instant::ZERO;
    w.hosts[1].nic.queues[0].tx_completed();
    w.hosts[1].nic.queues[0].tx_completed();
    let hard = RxPath::irq(0, true, true, false);
    assert_eq!(hard, KWork::HardIrq { q: 0, rx: true });
    match with_cx(&mut w, now, |rx, cx| rx.start(cx, 0, hard)) {
        Start::Reap { cost, n, w: next } => {
            assert_eq!((cost, n, next), (w.env.c.host.irq_entry, 2, hard));
        }
        s => panic!("expected the reap, got {s:?}"),
    }
    let budget = w.env.c.napi_budget;
    let done = with_cx(&mut w, now, |rx, cx| rx.finish(cx, hard));
    assert!(matches!(done, Done::Irq { next: Some(KWork::Napi { q: 0, budget: b }), .. } if b == budget), "{done:?}");
    let tx_only = KWork::HardIrq { q: 0, rx: false };
    assert!(matches!(with_cx(&mut w, now, |rx, cx| rx.finish(cx, tx_only)), Done::Irq { next: None, .. }));
}

/// A tiny message's frame from endpoint 0 of host 0 to endpoint `dst_ep`
/// of host 1, tagged 5.
fn tiny(dst_ep: u8) -> crate::wire::FrameRepr {
    use crate::proto::{Kind, Msg};
    let body = Msg { tag: 5, ..Msg::new(Kind::Tiny) }.emit(dst_ep, 0);
    let (dst_mac, src_mac) = (crate::wire::host_mac(1), crate::wire::host_mac(0));
    crate::wire::FrameRepr { dst_mac, src_mac, src_peer: 0, marked: false, body }
}

#[test]
fn the_handler_says_what_each_frame_becomes_and_counts_it() {
    use super::Verdict;
    let mut w = world();
    let eps = w.hosts[1].eps.clone();
    assert_eq!(eps[0], Some(0), "rank 1's process has endpoint 0");
    let rx = &mut w.hosts[1].rx;
    let before = rx.rx_frames();
    assert!(matches!(rx.handle(None, false, &eps, |_| Some(0)), Verdict::NotOmx));
    assert!(matches!(rx.handle(Some(tiny(0)), true, &eps, |_| Some(0)), Verdict::Echo(_)));
    assert!(matches!(rx.handle(Some(tiny(7)), false, &eps, |_| Some(0)), Verdict::NoEndpoint));
    assert!(matches!(rx.handle(Some(tiny(0)), false, &eps, |_| None), Verdict::Unranked { p: 0 }));
    let ranked = |ep: u8| {
        assert_eq!(ep, 0, "the sender's endpoint is asked for");
        Some(3)
    };
    match rx.handle(Some(tiny(0)), false, &eps, ranked) {
        Verdict::Event { p: 0, msg, peer: 3 } => assert_eq!(msg.tag, 5),
        v => panic!("expected an event for process 0 from rank 3, got {v:?}"),
    }
    // Every frame the handler took is counted, whatever it became.
    assert_eq!(rx.rx_frames(), before + 5);
}

#[test]
fn what_the_handler_writes_is_on_its_cores_die_or_in_memory_for_the_nic() {
    use super::RxBy;
    use crate::library::Writer;
    let w = world();
    assert_eq!(RxBy::Nic.writer(&w.env.topo), Writer::Memory);
    let core = w.env.topo.cores_per_die as usize; // the first core of the second die
    assert_eq!(RxBy::Core(core).writer(&w.env.topo), Writer::die(w.env.topo.die_of(core as u16)));
    assert_ne!(RxBy::Core(core).writer(&w.env.topo), RxBy::Core(0).writer(&w.env.topo));
}

#[test]
fn a_frame_nobody_takes_costs_the_drop_and_a_message_costs_more() {
    use super::handler_price;
    let mut w = world();
    let c = &w.env.c;
    let hs = &mut w.hosts[1];
    let mut price = |repr| handler_price(hs.handler_cx(c, &w.env.topo), 0, repr, 0, |_, _| (None, false));
    let drop = c.host.driver_rx + c.host.handler_drop;
    assert_eq!(price(None), drop, "a malformed frame");
    assert_eq!(price(Some(tiny(7))), drop, "a frame to no endpoint");
    assert!(price(Some(tiny(0))) >= c.host.driver_rx + c.host.handler, "a message: the driver and the handler");
}

/// A full pull reply (1468 B of payload) for endpoint 0 of host 1.
fn pull_reply() -> crate::wire::FrameRepr {
    let body = crate::wire::OmxBody::PullReply {
        frame_seqnum: 3,
        frame_length: 1468,
        msg_offset: 3 * 1468,
        dst_pull_handle: 0,
        dst_magic: crate::wire::pull_magic(0),
    };
    let (dst_mac, src_mac) = (crate::wire::host_mac(1), crate::wire::host_mac(0));
    crate::wire::FrameRepr { dst_mac, src_mac, src_peer: 0, marked: false, body }
}

#[test]
fn a_pull_reply_the_handle_does_not_want_is_dropped_before_its_copy() {
    // Open-MX's omx_recv_pull_reply tests the handle's bitmap before
    // omx_user_region_fill_pages: a duplicate costs the driver and the
    // handle's lines, not the copy (`host.pull_dup_check`). Without the
    // check every reply pays its copy. Each price is taken on a fresh world
    // (the same cold caches).
    use super::handler_price;
    let price = |check: bool, wanted: bool| {
        let mut w = world();
        w.env.c.pull_dup_check = check;
        let c = &w.env.c;
        let hs = &mut w.hosts[1];
        let cost = handler_price(hs.handler_cx(c, &w.env.topo), 0, Some(pull_reply()), 0, |_, _| (None, wanted));
        (cost, c.host.driver_rx + c.host.handler)
    };
    let ((new, floor), (duplicate, _)) = (price(true, true), price(true, false));
    // The copy of 1468 B from DMA-written memory: over 0.5 µs.
    assert!(new > duplicate + Duration::from_ns(500), "{new:?} vs {duplicate:?}");
    assert!(duplicate >= floor, "the driver and the handler still run");
    assert_eq!(price(false, false).0, price(false, true).0, "without the check a duplicate pays its copy");
    assert_eq!(price(false, true).0, new);
}
