//! ob1 over the MX BTL (`ob1.rs`) driven through the library's interface:
//! two processes on two hosts, each one's frames handed to the other's
//! ring, with no event queue, NIC or pull in between.

use super::ob1::{DATA, FIN, FIN_HDR, MATCH_HDR, PUT, PUT_HDR, RNDV, RNDV_HDR};
use super::{Cx, LibEvent, Output, Proc, Step, Writer};
use crate::proto::{Endpoint, Kind, Msg};
use crate::sim::World;
use crate::time::Instant;
use crate::workload::{Body, Op, Program};

/// A world of two hosts of `preset` whose library takes `path`.
fn world(path: &str) -> World {
    let s = crate::Scenario::from_toml(&format!(
        "preset = \"omx2009\"\n[platform.library]\nmpi_path = \"{path}\"\n\
         [workload]\nkind = \"pingpong\"\nsize_bytes = 8\niterations = 1\nwarmup = 0\n"
    ))
    .unwrap();
    World::new(&s)
}

/// Rank `rank` of two, on host `rank`, running `ops` once.
fn proc(w: &World, rank: u16, ops: &[Op]) -> Proc {
    let mut body = Body::new();
    ops.iter().for_each(|&op| body.push(op));
    Proc::new(rank, 0, 0, Program::script(body, 1, 0), Endpoint::new(w.env.c.proto, 2))
}

/// Steps process `p` (on host `h`) until it has nothing to run: the
/// messages it transmits, and how many requests completed.
fn run(w: &mut World, h: usize, p: &mut Proc) -> (Vec<Msg>, usize) {
    let (mut out, mut msgs, mut done) = (Vec::new(), Vec::new(), 0);
    for _ in 0..10_000 {
        let hs = &mut w.hosts[h];
        let mut cx = Cx { now: Instant::ZERO, host: h as u16, env: &w.env, mem: &mut hs.mem, out: &mut out };
        match p.step(&mut cx) {
            Step::Run(_, action) => p.apply(&mut cx, action),
            _ => break,
        }
        for o in out.drain(..) {
            match o {
                Output::Transmit { body, .. } => msgs.push(Msg::parse(&body).expect("a library frame")),
                Output::Completed => done += 1,
                _ => {}
            }
        }
    }
    (msgs, done)
}

/// Hands `msgs` from rank `from` to process `p`'s ring.
fn deliver(p: &mut Proc, from: u16, msgs: &[Msg]) {
    for &msg in msgs {
        p.post(LibEvent { msg, peer: from, writer: Writer::Die(0), irq_stamp: 0 });
    }
}

/// The (kind, tag, size) of each message but the acks.
fn seen(msgs: &[Msg]) -> Vec<(Kind, u64, u64)> {
    msgs.iter().filter(|m| m.kind != Kind::Ack).map(|m| (m.kind, m.tag, m.size)).collect()
}

const TAG: u64 = 7;

fn exchange(size: u64) -> ([Op; 2], [Op; 2]) {
    let send = [Op::Send { peer: 1, size, tag: TAG }, Op::WaitOutstanding(0)];
    let recv = [Op::Recv { src: Some(0), size, tag: TAG }, Op::WaitOutstanding(0)];
    (send, recv)
}

/// Open MPI 1.3.0's MX BTL: `btl_eager_limit` 4096, less ob1's largest
/// header (72 B), is the most data an eager message carries; it goes as one
/// MX message with ob1's 16-byte match header. The MTL path sends the MPI
/// message as it is.
#[test]
fn ob1_sends_a_message_within_the_eager_limit_as_one_mx_message_with_its_match_header() {
    for (path, size, want) in [("btl", 4024, 4024 + MATCH_HDR), ("mtl", 4024, 4024), ("btl", 8, 8 + MATCH_HDR)] {
        let mut w = world(path);
        let (send, _) = exchange(size);
        let mut s = proc(&w, 0, &send);
        let (msgs, done) = run(&mut w, 0, &mut s);
        let sizes: Vec<u64> = seen(&msgs).iter().map(|m| m.2).collect();
        assert!(!sizes.is_empty() && sizes.iter().all(|&n| n == want), "{path} {size}: {:?}", seen(&msgs));
        assert!(msgs.iter().all(|m| m.tag == TAG), "{path} {size}: {:?}", seen(&msgs));
        assert_eq!(done, 1, "{path} {size}: a buffered send completes when handed over");
    }
}

/// A contiguous message above the eager limit is ob1's RDMA rendezvous
/// over the MX BTL (`mca_pml_ob1_send_request_start_rdma`): the RNDV
/// header alone; the receiver, once matched, posts the data's receive and
/// sends a PUT header; the sender then sends the data as one MX message
/// (`mca_btl_mx_put`) and, once it is complete, a FIN header, at which the
/// receive completes. With the MTL path the same message goes at once.
#[test]
fn ob1_sends_a_message_above_the_eager_limit_as_rndv_put_data_fin() {
    let size = 4100; // above 4024: a medium MX message once the PUT came
    let (send, recv) = exchange(size);
    let mut w = world("btl");
    let (mut s, mut r) = (proc(&w, 0, &send), proc(&w, 1, &recv));
    // The sender's RNDV header, and nothing of the data.
    let (rndv, done) = run(&mut w, 0, &mut s);
    assert_eq!(seen(&rndv), [(Kind::Tiny, RNDV | TAG, RNDV_HDR)]);
    assert_eq!(done, 0, "the MPI send waits for the PUT");
    assert_eq!(s.outstanding, 1, "its request (the RNDV header's own send completed, unreported)");
    // The receiver matches it to its receive and answers with the PUT.
    let (_, done) = run(&mut w, 1, &mut r);
    assert_eq!(done, 0);
    deliver(&mut r, 0, &rndv);
    let (put, done) = run(&mut w, 1, &mut r);
    assert_eq!(seen(&put), [(Kind::Small, PUT | TAG, PUT_HDR)]);
    assert_eq!(done, 0, "the PUT header's own send is not the program's");
    assert_eq!(r.outstanding, 1, "the MPI receive waits for the data and the FIN");
    // The PUT lets the data go, then the FIN: the send is complete.
    deliver(&mut s, 1, &put);
    let (msgs, done) = run(&mut w, 0, &mut s);
    let data = seen(&msgs);
    let frags = data.iter().filter(|m| m.0 == Kind::MediumFrag).count();
    assert!(frags >= 3 && data[..frags].iter().all(|&(_, tag, n)| tag == DATA | TAG && n == size), "{data:?}");
    assert_eq!(data[frags..], [(Kind::Tiny, FIN | TAG, FIN_HDR)]);
    assert_eq!(done, 1, "the MPI send (the FIN header's own send unreported)");
    assert_eq!(s.outstanding, 0);
    // The receive takes the data, and completes at the FIN only.
    let (fin, data): (Vec<Msg>, Vec<Msg>) =
        msgs.into_iter().filter(|m| m.kind != Kind::Ack).partition(|m| m.tag == FIN | TAG);
    deliver(&mut r, 0, &data);
    assert_eq!(run(&mut w, 1, &mut r).1, 0, "the data alone does not complete the receive");
    deliver(&mut r, 0, &fin);
    assert_eq!(run(&mut w, 1, &mut r).1, 1, "the FIN completes it");

    // The MTL path: the message itself at once, a receive completed by it.
    let mut w = world("mtl");
    let (mut s, mut r) = (proc(&w, 0, &send), proc(&w, 1, &recv));
    let (msgs, _) = run(&mut w, 0, &mut s);
    assert!(seen(&msgs).iter().all(|&(k, tag, n)| k == Kind::MediumFrag && tag == TAG && n == size));
    run(&mut w, 1, &mut r);
    deliver(&mut r, 0, &msgs);
    assert_eq!(run(&mut w, 1, &mut r).1, 1);
}

/// A RNDV header that comes before its receive is posted waits as an
/// unexpected message under its MPI tag: the receive, once posted, takes
/// it and answers with the PUT.
#[test]
fn an_unexpected_rndv_header_is_taken_by_the_receive_posted_later() {
    let (send, recv) = exchange(65536);
    let mut w = world("btl");
    let (mut s, mut r) = (proc(&w, 0, &send), proc(&w, 1, &recv));
    let (rndv, _) = run(&mut w, 0, &mut s);
    deliver(&mut r, 0, &rndv);
    let (put, _) = run(&mut w, 1, &mut r);
    assert_eq!(seen(&put), [(Kind::Small, PUT | TAG, PUT_HDR)]);
    // The PUT lets the sender's large MX message go, under the data's key.
    deliver(&mut s, 1, &put);
    let (data, done) = run(&mut w, 0, &mut s);
    assert_eq!(seen(&data), [(Kind::Rndv, DATA | TAG, 65536)]);
    assert_eq!(done, 0, "a large send completes at the receiver's notify");
}
