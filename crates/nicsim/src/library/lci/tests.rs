//! The LCI library as a component: called with a context, it answers with
//! outputs and touches nothing else (no bus, no NI, no program).

use super::{Control, Outgoing};
use super::{Cx, Lib, LibEv, Output};
use crate::nic::delivery::FLAG_BYTES;
use crate::time::{Duration, Instant};
use crate::Scenario;

/// Host `h`'s library of a built LCI stream (`polling`), as the world
/// holds it before time zero, and its costs.
fn lib(polling: &str, h: usize) -> Lib {
    let text = format!(
        "preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[nic]\npolling = \"{polling}\"\n\
         [workload]\nkind = \"stream\"\nsize_bytes = 64\nmessages = 2\nwarmup = 0\n"
    );
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let (_, parts) = crate::lci::build(&s, s.lci.as_deref().expect("an LCI scenario"));
    parts.into_iter().nth(h).expect("a host").0
}

/// Calls `f` on `l` at `t` µs; its outputs.
fn call(l: &mut Lib, t: u64, f: impl FnOnce(&mut Lib, &mut Cx<'_>)) -> Vec<Output> {
    let mut out = Vec::new();
    f(l, &mut Cx { now: Instant::ZERO + Duration::from_us(t), out: &mut out });
    out
}

#[test]
fn a_send_is_priced_then_written_by_pio_and_the_library_is_free_once_posted() {
    let mut l = lib("packet-shifting", 0);
    l.start(true);
    l.submit(Outgoing { dst: 1, size: 100, count: 1, bcast: None, tag: 7 });
    let out = call(&mut l, 0, Lib::next);
    let [Output::At { at, ev: LibEv::Write, .. }] = out[..] else { panic!("{out:?}") };
    assert_eq!(at.since(Instant::ZERO), l.t.send, "the send path's price, then the write");
    let out = call(&mut l, 1, Lib::write_pending);
    let [Output::PioWrite { pkt, bytes }] = out[..] else { panic!("{out:?}") };
    assert_eq!((pkt.src, pkt.dst, pkt.payload, pkt.tag, pkt.last), (0, 1, 100, 7, true));
    assert_eq!(bytes, 100 + FLAG_BYTES, "payload and FULL word after the header");
    assert_eq!(l.packets_sent, 1);
    // Written, with nothing left to do: the program is asked.
    assert_eq!(call(&mut l, 2, Lib::done), [Output::Idle]);
    // It keeps polling: a cached flag is spun on, a PIO poll crosses the bus.
    assert_eq!(call(&mut l, 2, |l, cx| l.control(cx, Control::Wait)), []);
    let mut p = lib("pio", 0);
    p.start(true);
    assert_eq!(call(&mut p, 0, Lib::next), [Output::Idle]);
    let out = call(&mut p, 0, |l, cx| l.control(cx, Control::Wait));
    assert_eq!(out, [Output::PioRead { then: LibEv::PollDone, pkt: None }]);
}

#[test]
fn a_visible_packet_ends_the_spin_and_its_upcall_tells_the_program() {
    let mut l = lib("packet-shifting", 1);
    l.start(true);
    assert_eq!(call(&mut l, 0, Lib::next), [Output::Idle]);
    assert_eq!(call(&mut l, 0, |l, cx| l.control(cx, Control::Wait)), []);
    let pkt =
        crate::nic::lanai::Packet { dst: 1, last: true, payload: 64, msg_bytes: 64, tag: 3, ..Default::default() };
    let out = call(&mut l, 10, |l, cx| l.deliver(cx, pkt));
    assert!(l.polls_failed > 0, "10 us of spinning on the cached flag are failed polls");
    assert_eq!(out[0], Output::Message { src: 0, tag: 3 });
    let Output::At { at, ev: LibEv::Done, .. } = out[out.len() - 1] else { panic!("{out:?}") };
    assert_eq!(at.since(Instant::ZERO), Duration::from_us(10) + l.t.poll_miss + l.t.upcall);
    assert_eq!((l.consumed(), l.upcalls), (1, 1));
}

#[test]
fn a_signal_preempts_a_compute_phase_and_the_handler_resumes_it() {
    let mut l = lib("packet-shifting", 1);
    l.start(true);
    call(&mut l, 0, Lib::next);
    let out = call(&mut l, 0, |l, cx| l.control(cx, Control::Compute(Duration::from_us(100))));
    let [Output::At { ev: LibEv::ComputeDone, arg: gen, .. }] = out[..] else { panic!("{out:?}") };
    assert!(l.irq_enabled(), "interrupts are enabled outside the library");
    let out = call(&mut l, 40, Lib::signal);
    let [Output::At { at, ev: LibEv::Done, .. }] = out[..] else { panic!("{out:?}") };
    assert_eq!(at.since(Instant::ZERO), Duration::from_us(40) + l.signal);
    assert!(!l.irq_enabled() && l.interrupts == 1);
    // The compute phase's end is stale; the handler, with nothing to do,
    // goes back to the 60 us left without asking the program.
    assert_eq!(call(&mut l, 100, |l, cx| l.compute_done(cx, gen)), []);
    let out = call(&mut l, 50, Lib::done);
    let [Output::At { at, ev: LibEv::ComputeDone, .. }] = out[..] else { panic!("{out:?}") };
    assert_eq!(at.since(Instant::ZERO), Duration::from_us(110));
}
