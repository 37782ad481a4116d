//! The LCI library as a component: called with the one library context,
//! it answers with the one output vocabulary and touches nothing else (no
//! bus, no NI, no program).

use super::{Control, Outgoing};
use super::{Cx, Lib, LibEv, Output};
use crate::nic::delivery::FLAG_BYTES;
use crate::sim::World;
use crate::time::{Duration, Instant};
use crate::Scenario;

/// A host's library of a built LCI stream (`polling`), as the world
/// holds it before time zero, with its costs, and a world of the same
/// scenario whose context it is called with.
struct Host {
    l: Lib,
    w: World,
}

/// Host `h`'s library of a built LCI stream (`polling`), without its
/// process: as a whole-job program's (the DSM's) library, it tells the
/// world what its program learns.
fn lib(polling: &str, h: usize) -> Host {
    let mut x = with_process(polling, h, "kind = \"stream\"\nsize_bytes = 64\nmessages = 2\nwarmup = 0");
    x.l.process = None;
    x
}

/// Host `h`'s library of a built LCI run of `workload` (`polling`),
/// holding its process.
fn with_process(polling: &str, h: usize, workload: &str) -> Host {
    let text = format!(
        "preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[nic]\npolling = \"{polling}\"\n\
         [workload]\n{workload}\n"
    );
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let hosts = s.platform.topology.hosts;
    let mut ranks = crate::library::Ranks::new(hosts as usize);
    let (drive, procs) = crate::sim::lci_processes(&s.workload, hosts, s.seed, &mut ranks).expect("its processes");
    let (_, parts) = crate::lci::build(&s, s.lci.as_deref().expect("an LCI scenario"));
    let mut l = parts.into_iter().nth(h).expect("a host").0;
    let counted = matches!(s.workload, crate::config::Workload::BcastBench { .. });
    l.host_process(super::Hosted::new(procs.into_iter().nth(h).expect("a process"), drive, counted));
    Host { l, w: World::new(&s) }
}

/// Calls `f` on host `x`'s library at `t` µs; its outputs.
fn call(x: &mut Host, t: u64, f: impl FnOnce(&mut Lib, &mut Cx<'_>)) -> Vec<Output> {
    let mut out = Vec::new();
    let (w, h) = (&mut x.w, x.l.id as usize);
    let now = Instant::ZERO + Duration::from_us(t);
    f(&mut x.l, &mut Cx { now, host: h as u16, env: &w.env, mem: &mut w.hosts[h].mem, out: &mut out });
    out
}

#[test]
fn a_send_is_priced_then_written_by_pio_and_the_library_is_free_once_posted() {
    let mut x = lib("packet-shifting", 0);
    x.l.start(true);
    x.l.submit(Outgoing { dst: 1, size: 100, count: 1, bcast: None, tag: 7 });
    let out = call(&mut x, 0, Lib::next);
    let [Output::Timer { at, ev: LibEv::Write, .. }] = out[..] else { panic!("{out:?}") };
    assert_eq!(at.since(Instant::ZERO), x.l.t.send, "the send path's price, then the write");
    let out = call(&mut x, 1, Lib::write_pending);
    let [Output::PioWrite { pkt, bytes }] = out[..] else { panic!("{out:?}") };
    let pkt = x.l.held(pkt);
    assert_eq!((pkt.src, pkt.dst, pkt.payload, pkt.tag, pkt.last), (0, 1, 100, 7, true));
    assert_eq!(bytes, 100 + FLAG_BYTES, "payload and FULL word after the header");
    assert_eq!(x.l.packets_sent, 1);
    // Written, with nothing left to do: the program is asked.
    let out = call(&mut x, 2, Lib::done);
    assert!(matches!(out[..], [Output::Idle]), "{out:?}");
    // It keeps polling: a cached flag is spun on, a PIO poll crosses the bus.
    assert!(call(&mut x, 2, |l, cx| l.control(cx, Control::Wait)).is_empty());
    let mut y = lib("pio", 0);
    y.l.start(true);
    let out = call(&mut y, 0, Lib::next);
    assert!(matches!(out[..], [Output::Idle]), "{out:?}");
    let out = call(&mut y, 0, |l, cx| l.control(cx, Control::Wait));
    assert!(matches!(out[..], [Output::PioRead { then: LibEv::PollDone, arg: 0 }]), "{out:?}");
}

#[test]
fn a_visible_packet_ends_the_spin_and_its_upcall_tells_the_program() {
    let mut x = lib("packet-shifting", 1);
    x.l.start(true);
    let out = call(&mut x, 0, Lib::next);
    assert!(matches!(out[..], [Output::Idle]), "{out:?}");
    assert!(call(&mut x, 0, |l, cx| l.control(cx, Control::Wait)).is_empty());
    let pkt =
        crate::nic::lanai::Packet { dst: 1, last: true, payload: 64, msg_bytes: 64, tag: 3, ..Default::default() };
    let out = call(&mut x, 10, |l, cx| l.deliver(cx, pkt));
    assert!(x.l.polls_failed > 0, "10 us of spinning on the cached flag are failed polls");
    assert!(matches!(out[0], Output::Message { src: 0, tag: 3 }), "{out:?}");
    let Output::Timer { at, ev: LibEv::Done, .. } = out[out.len() - 1] else { panic!("{out:?}") };
    assert_eq!(at.since(Instant::ZERO), Duration::from_us(10) + x.l.t.poll_miss + x.l.t.upcall);
    assert_eq!((x.l.consumed(), x.l.upcalls), (1, 1));
}

#[test]
fn a_signal_preempts_a_compute_phase_and_the_handler_resumes_it() {
    let mut x = lib("packet-shifting", 1);
    x.l.start(true);
    call(&mut x, 0, Lib::next);
    let out = call(&mut x, 0, |l, cx| l.control(cx, Control::Compute(Duration::from_us(100))));
    let [Output::Timer { ev: LibEv::ComputeDone, arg: gen, .. }] = out[..] else { panic!("{out:?}") };
    assert!(x.l.irq_enabled(), "interrupts are enabled outside the library");
    let out = call(&mut x, 40, Lib::signal);
    let [Output::Timer { at, ev: LibEv::Done, .. }] = out[..] else { panic!("{out:?}") };
    assert_eq!(at.since(Instant::ZERO), Duration::from_us(40) + x.l.signal);
    assert!(!x.l.irq_enabled() && x.l.interrupts == 1);
    // The compute phase's end is stale; the handler, with nothing to do,
    // goes back to the 60 us left without asking the program.
    assert!(call(&mut x, 100, |l, cx| l.compute_done(cx, gen)).is_empty());
    let out = call(&mut x, 50, Lib::done);
    let [Output::Timer { at, ev: LibEv::ComputeDone, .. }] = out[..] else { panic!("{out:?}") };
    assert_eq!(at.since(Instant::ZERO), Duration::from_us(110));
}

#[test]
fn a_library_that_holds_an_upcall_driven_process_polls_without_asking_the_world() {
    // The stream's receiver: its upcalls drive it, so with nothing to do
    // the library keeps polling (a PIO poll of the NI counter), and the
    // upcall of a message's last packet is the world's to count across
    // hosts, not an `Output::Message`.
    let mut y = with_process("pio", 1, "kind = \"stream\"\nsize_bytes = 64\nmessages = 2\nwarmup = 0");
    y.l.start(true);
    let out = call(&mut y, 0, Lib::next);
    assert!(matches!(out[..], [Output::PioRead { then: LibEv::PollDone, arg: 0 }]), "{out:?}");
    let mut x = with_process("packet-shifting", 1, "kind = \"stream\"\nsize_bytes = 64\nmessages = 2\nwarmup = 0");
    x.l.start(true);
    assert!(call(&mut x, 0, Lib::next).is_empty(), "it spins on the cached flag");
    let pkt =
        crate::nic::lanai::Packet { dst: 1, last: true, payload: 64, msg_bytes: 64, tag: 3, ..Default::default() };
    let out = call(&mut x, 10, |l, cx| l.deliver(cx, pkt));
    assert!(!out.iter().any(|o| matches!(o, Output::Message { .. })), "{out:?}");
}

#[test]
fn a_library_runs_its_idle_driven_process_at_its_idle_turns() {
    // The FFT all-to-all's rank 0: at its first idle turn its process
    // computes its first chunk (interrupts enabled, outside the library),
    // and at the chunk's end it hands the library its first block, which
    // the library goes on to send.
    let fft = "kind = \"fft-alltoall\"\nprocs = 4\niterations = 1\nsize_bytes = 1024\ncompute_us = 300";
    let mut x = with_process("packet-shifting", 0, fft);
    x.l.start(true);
    let out = call(&mut x, 0, Lib::next);
    let [Output::Timer { at, ev: LibEv::ComputeDone, arg: gen }] = out[..] else { panic!("{out:?}") };
    assert!(x.l.irq_enabled(), "it computes outside the library");
    assert!(at > Instant::ZERO);
    let t = at.since(Instant::ZERO).as_ps().div_ceil(1_000_000);
    let out = call(&mut x, t, |l, cx| l.compute_done(cx, gen));
    assert!(!out.iter().any(|o| matches!(o, Output::ComputeDone | Output::Idle)), "{out:?}");
    let [Output::Timer { ev: LibEv::Write, .. }] = out[..] else { panic!("the send path of its first block: {out:?}") };
    assert!(!x.l.irq_enabled(), "back in the library to send");
}

/// The reliable protocol's window (`protocol.send_buffers`) holds data
/// packets unacknowledged over all peers: with it full, a data packet
/// waits (each such entry counted) until a consumed ack releases one; a
/// data packet carries the ack its peer is owed.
#[test]
fn a_full_window_stalls_until_an_ack() {
    let text = "preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\nsend_buffers = 2\n\
                [workload]\nkind = \"stream\"\nsize_bytes = 64\nmessages = 2\nwarmup = 0\n";
    let s = Scenario::from_toml(text).unwrap();
    let (_, parts) = crate::lci::build(&s, s.lci.as_deref().unwrap());
    let mut l = parts.into_iter().next().unwrap().0;
    l.process = None;
    l.start(true);
    let t = |us: u64| Instant::ZERO + Duration::from_us(us);
    for dst in [1, 2, 1] {
        l.submit(Outgoing { dst, size: 64, count: 1, bcast: None, tag: 0 });
    }
    let sent = |l: &mut Lib, at: u64| match (l.next_action(t(at)), l.next_action(t(at))) {
        (super::Action::SendPath, super::Action::Write(p)) => Some(p),
        _ => None,
    };
    assert_eq!(sent(&mut l, 0).map(|p| p.dst), Some(1));
    assert_eq!(sent(&mut l, 0).map(|p| p.dst), Some(2));
    let polled = l.next_action(t(1));
    assert!(!matches!(polled, super::Action::SendPath), "two packets to two peers fill a window of 2: {polled:?}");
    assert_eq!(l.window_full_polls, 1);
    // Host 2's data packet acknowledges the one sent to it: a buffer is free.
    l.visible.push_back(crate::nic::lanai::Packet { src: 2, dst: 0, ack: 1, last: true, ..Default::default() });
    assert!(matches!(l.next_action(t(2)), super::Action::Consume { .. }));
    let p = sent(&mut l, 3).expect("the window has room again");
    assert_eq!((p.dst, p.ack), (1, 0), "nothing received from host 1: no ack to carry");
    assert_eq!(sent(&mut l, 3), None);
    l.submit(Outgoing { dst: 2, size: 64, count: 1, bcast: None, tag: 0 });
    l.visible.push_back(crate::nic::lanai::Packet { src: 2, dst: 0, ack: 0, last: true, ..Default::default() });
    l.visible.push_back(crate::nic::lanai::Packet { src: 1, dst: 0, ack: 2, ack_only: true, ..Default::default() });
    assert!(matches!(l.next_action(t(4)), super::Action::Consume { .. }));
    assert!(matches!(l.next_action(t(4)), super::Action::Consume { .. }));
    let p = sent(&mut l, 5).expect("host 1's ack freed two buffers");
    assert_eq!((p.dst, p.ack, l.piggybacked_acks), (2, 2, 1), "host 2's two data packets acknowledged");
}

#[test]
fn a_library_runs_its_upcall_driven_process_at_an_upcall_unless_the_run_counts_deliveries() {
    // The ping-pong's rank 1: the upcall of rank 0's ping matches its
    // receive, and its process goes on inside the library (the reply to
    // the outbox, behind the upcall); the world is not told.
    let pp = "kind = \"pingpong\"\nsize_bytes = 8\niterations = 2\nwarmup = 0";
    let mut x = with_process("packet-shifting", 1, pp);
    x.l.start(true);
    let ranks = &x.w.env.ranks;
    x.l.proceed(Instant::ZERO, ranks, crate::library::driver::Driver::next);
    assert!(!x.l.has_sends(), "it waits for the ping");
    assert!(call(&mut x, 0, Lib::next).is_empty(), "it spins on the cached flag");
    let tag = crate::workload::tag::PINGPONG;
    let ping =
        crate::nic::lanai::Packet { src: 0, dst: 1, last: true, payload: 8, msg_bytes: 8, tag, ..Default::default() };
    let out = call(&mut x, 10, |l, cx| l.deliver(cx, ping));
    let [Output::Timer { ev: LibEv::Done, .. }] = out[..] else { panic!("the upcall alone: {out:?}") };
    assert!(x.l.has_sends(), "the pong waits in the outbox");
    // The broadcast benchmark's receivers: the run counts each broadcast's
    // deliveries across hosts, so the upcall goes to the world first.
    let bcast = "kind = \"bcast\"\nsize_bytes = 8\niterations = 1\ncount = 0\nroot = 0";
    let mut y = with_process("packet-shifting", 1, bcast);
    y.l.start(true);
    assert!(call(&mut y, 0, Lib::next).is_empty());
    let pkt = crate::nic::lanai::Packet { bcast: Some(0), ..ping };
    let out = call(&mut y, 10, |l, cx| l.deliver(cx, pkt));
    assert!(out.iter().any(|o| matches!(o, Output::Arrived { from: 0, .. })), "{out:?}");
}

#[test]
fn an_upcall_driven_process_computes_in_the_library_after_its_sends_and_a_signal_does_not_preempt_it() {
    // ASP's rank 0 owns the first row: it broadcasts it, then computes;
    // its upcalls drive it, so the compute waits in the library for the
    // broadcast to be written, then runs there with interrupts disabled.
    let mut x = with_process("packet-shifting", 0, "kind = \"asp\"\nrows = 64\niterations = 1");
    x.l.start(true);
    let op = x.l.proceed(Instant::ZERO, &x.w.env.ranks, crate::library::driver::Driver::next);
    assert!(matches!(op, Some(crate::workload::Op::Compute(_))), "{op:?}");
    assert!(x.l.has_sends(), "its broadcast is in the outbox, ahead of the compute");
    let out = call(&mut x, 0, Lib::next);
    assert!(matches!(out[..], [Output::Timer { ev: LibEv::Write, .. }]), "the send path first: {out:?}");
    call(&mut x, 1, Lib::write_pending);
    let out = call(&mut x, 2, Lib::done);
    let [Output::Timer { at, ev: LibEv::ComputeDone, arg: gen }] = out[..] else { panic!("{out:?}") };
    assert!(!x.l.irq_enabled(), "it computes in the library, interrupts disabled");
    assert!(call(&mut x, 2, Lib::next).is_empty(), "the library is busy computing");
    // An NI interrupt: the handler returns at once; the signal is owed.
    assert!(call(&mut x, 3, Lib::signal).is_empty());
    assert_eq!(x.l.interrupts, 1);
    let end = at.since(Instant::ZERO).as_ps().div_ceil(1_000_000);
    let out = call(&mut x, end, |l, cx| l.compute_done(cx, gen));
    let Some(Output::Timer { at: paid, ev: LibEv::Done, .. }) = out.last().copied() else { panic!("{out:?}") };
    assert_eq!(paid, Instant::ZERO + Duration::from_us(end) + x.l.signal, "the owed signal is paid first");
}
