//! The library driven through its interface alone, as a packet trace: a
//! process is stepped and its segments applied with a context made from a
//! world's costs, and what it wants done is read from its outputs, with no
//! event queue, core or NIC in between.

use super::{Action, Cx, LibEv, LibEvent, Output, Proc, Step, Writer};
use crate::proto::{Endpoint, Kind, Msg};
use crate::sim::World;
use crate::time::Instant;
use crate::workload::{Op, Program};

/// A two-host ping-pong world of 8 B messages, for its costs and hosts;
/// its MPI layer hands each message to the library whole (the MTL path).
fn world() -> World {
    let s = crate::Scenario::from_toml(
        "[platform.library]\nmpi_path = \"mtl\"\n[workload]\nkind = \"pingpong\"\nsize_bytes = 8\niterations = 1\nwarmup = 0\n",
    )
    .unwrap();
    World::new(&s)
}

/// Calls `f` with a context of host `h` of `w` at `now`; its outputs go to
/// `out`.
fn with_cx<R>(w: &mut World, h: usize, now: Instant, out: &mut Vec<Output>, f: impl FnOnce(&mut Cx<'_>) -> R) -> R {
    let hs = &mut w.hosts[h];
    let mut cx = Cx { now, host: h as u16, env: &w.env, mem: &mut hs.mem, out };
    f(&mut cx)
}

/// Steps process `p` of host `h` and applies each segment until it has
/// nothing to run (at most `n` segments); every output, in order.
fn run(w: &mut World, h: usize, p: &mut Proc, n: usize) -> Vec<Output> {
    let mut out = Vec::new();
    for _ in 0..n {
        match with_cx(w, h, Instant::ZERO, &mut out, |cx| p.step(cx)) {
            Step::Run(_, action) => with_cx(w, h, Instant::ZERO, &mut out, |cx| p.apply(cx, action)),
            _ => break,
        }
    }
    out
}

#[test]
fn a_tiny_send_is_priced_with_its_hand_over_and_its_outputs_come_in_order() {
    let mut w = world();
    let mut p = Proc::new(0, 0, 0, Program::pingpong(0, 8, 1, 0), Endpoint::new(w.env.c.proto, 2));
    let mut out = Vec::new();
    let step = with_cx(&mut w, 0, Instant::ZERO, &mut out, |cx| p.step(cx));
    // The program's start mark, then the send's segment: the post and the
    // system call that hands the frame over, one price.
    assert!(matches!(out[..], [Output::Mark { label: 0 }]), "{out:?}");
    let Step::Run(cost, action @ Action::Op(Op::Send { peer: 1, size: 8, .. })) = step else { panic!("{step:?}") };
    let c = &w.env.c;
    assert!(cost >= c.lib.send + c.host.syscall + c.host.driver_tx + c.nic.doorbell, "{cost:?}");
    let resend = Instant::ZERO + c.proto.resend;
    out.clear();
    with_cx(&mut w, 0, Instant::ZERO, &mut out, |cx| p.apply(cx, action));
    // The resend timer, the frame to host 1, the send request completed.
    match out[..] {
        [Output::Timer { at, ev: LibEv::Protocol, .. }, Output::Transmit { dst: 1, body, .. }, Output::Completed] => {
            assert_eq!(at, resend);
            assert_eq!(Msg::parse(&body).map(|m| (m.kind, m.size)), Some((Kind::Tiny, 8)));
        }
        _ => panic!("{out:?}"),
    }
    // It posts the receive of the answer; then, with nothing to do until
    // the answer comes, it polls.
    let mut out = Vec::new();
    let post = with_cx(&mut w, 0, Instant::ZERO, &mut out, |cx| p.step(cx));
    let Step::Run(_, action @ Action::Op(Op::Recv { src: Some(1), .. })) = post else { panic!("{post:?}") };
    with_cx(&mut w, 0, Instant::ZERO, &mut out, |cx| p.apply(cx, action));
    assert!(out.is_empty(), "{out:?}");
    assert!(matches!(with_cx(&mut w, 0, Instant::ZERO, &mut out, |cx| p.step(cx)), Step::Wait));
}

#[test]
fn a_received_event_completes_the_posted_receive() {
    let mut w = world();
    let mut sender = Proc::new(0, 0, 0, Program::pingpong(0, 8, 1, 0), Endpoint::new(w.env.c.proto, 2));
    let frame = run(&mut w, 0, &mut sender, 4).into_iter().find_map(|o| match o {
        Output::Transmit { body, .. } => Some(body),
        _ => None,
    });
    let msg = Msg::parse(&frame.expect("the sender transmits")).unwrap();
    let mut receiver = Proc::new(1, 0, 0, Program::pingpong(1, 8, 1, 0), Endpoint::new(w.env.c.proto, 2));
    let done = |out: &[Output]| out.iter().filter(|o| matches!(o, Output::Completed)).count();
    // Posted and waiting: no request completes without the message.
    assert_eq!(done(&run(&mut w, 1, &mut receiver, 8)), 0);
    receiver.post(LibEvent { msg, peer: 0, writer: Writer::Die(0), irq_stamp: 0 });
    let out = run(&mut w, 1, &mut receiver, 8);
    // The receive completes; the answer's send, posted next, too.
    assert!(done(&out) >= 1, "{out:?}");
    assert!(out.iter().any(|o| matches!(o, Output::Transmit { dst: 0, .. })), "{out:?}");
}

/// A 32 KiB stream sender whose send window never binds (acks never come).
fn stream_world(softirq: bool) -> (World, Proc) {
    let s = crate::Scenario::from_toml(&format!(
        "[platform.library]\nsend_window_frames = 100000\n[host]\ntx_softirq = {softirq}\n[protocol]\nmpi = false\n\
         [workload]\nkind = \"stream\"\nsize_bytes = 32768\nmessages = 200\nwindow = 100\n"
    ))
    .unwrap();
    let w = World::new(&s);
    let p = Proc::new(0, 0, 0, Program::stream_sender(32768, 200, 0, 100), Endpoint::new(w.env.c.proto, 2));
    (w, p)
}

fn fragments(out: &[Output]) -> usize {
    out.iter()
        .filter(|o| matches!(o, Output::Transmit { body, .. } if body.kind() == crate::wire::PacketKind::Medium))
        .count()
}

/// Open-MX 1.0.901: a medium send needs one expected-event slot per
/// fragment, of 1024 (`omx__submit_isend_medium`, `OMX_EXP_EVENTQ_ENTRY_NR`),
/// freed as the library consumes each fragment's FRAG_DONE.
#[test]
fn medium_sends_wait_for_expected_event_slots() {
    let (mut w, mut p) = stream_world(true);
    let out = run(&mut w, 0, &mut p, 20_000);
    // 44 messages of 23 fragments hold 1012 slots; the 45th waits.
    assert_eq!(fragments(&out), 44 * 23);
    // The softirq posts the first message's 23 events: consuming them
    // (one segment, priced per event) lets one more message go.
    p.frag_done_posted(23);
    let mut o = Vec::new();
    let Step::Run(cost, action @ Action::ExpEvents(23)) = with_cx(&mut w, 0, Instant::ZERO, &mut o, |cx| p.step(cx))
    else {
        panic!("the events are consumed first")
    };
    assert!(cost >= w.env.c.lib.frag_done.times(23), "{cost:?}");
    with_cx(&mut w, 0, Instant::ZERO, &mut o, |cx| p.apply(cx, action));
    let out = run(&mut w, 0, &mut p, 20_000);
    assert_eq!(fragments(&out), 23);
    assert_eq!(p.frag_done_consumed(), 23);
    // Without FRAG_DONE events (`host.tx_softirq = false`) no slot is held:
    // each send completes as its last fragment is handed over, and the
    // sender hands over all of its 200 messages.
    let (mut w, mut p) = stream_world(false);
    assert_eq!(fragments(&run(&mut w, 0, &mut p, 20_000)), 200 * 23);
}

/// Open-MX 1.0.901 copies a medium message into its send queue once,
/// fragment by fragment, each copy just before that fragment's system call
/// (`omx__post_isend_mediumsq`, libopen-mx/omx_send.c L440-467): the post
/// costs the library's work alone, and the 23 hand-overs carry the copy.
#[test]
fn a_medium_message_is_copied_once_fragment_by_fragment() {
    let (mut w, mut p) = stream_world(false);
    let mut out = Vec::new();
    let (post, action) = loop {
        match with_cx(&mut w, 0, Instant::ZERO, &mut out, |cx| p.step(cx)) {
            Step::Run(cost, action @ Action::Op(Op::Send { size: 32768, .. })) => break (cost, action),
            Step::Run(_, action) => with_cx(&mut w, 0, Instant::ZERO, &mut out, |cx| p.apply(cx, action)),
            step => panic!("{step:?}"),
        }
    };
    let copy = w.env.c.cc.copy_hot(32768);
    let per_frame = w.env.c.host.syscall + w.env.c.host.driver_tx + w.env.c.nic.doorbell;
    assert_eq!(post, w.env.c.lib.mpi_send + w.env.c.lib.send, "the post copies nothing ({copy:?} is the fragments')");
    with_cx(&mut w, 0, Instant::ZERO, &mut out, |cx| p.apply(cx, action));
    let mut sends = Vec::new();
    while let Step::Run(cost, Action::Send) = with_cx(&mut w, 0, Instant::ZERO, &mut out, |cx| p.step(cx)) {
        sends.push(cost);
        with_cx(&mut w, 0, Instant::ZERO, &mut out, |cx| p.apply(cx, Action::Send));
    }
    assert_eq!(sends.len(), 23);
    let total = sends.iter().fold(crate::time::Duration::ZERO, |a, &s| a + s);
    // Every fragment pays its system call and driver work, and together
    // they copy the message once (to within a picosecond per fragment).
    assert!(total + crate::time::Duration::from_ps(23) >= per_frame.times(23) + copy, "{total:?}");
    assert!(total < per_frame.times(23) + copy + copy, "{total:?}");
}
