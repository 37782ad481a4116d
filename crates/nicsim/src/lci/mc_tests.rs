//! Mechanism tests of multicast forwarding (packet traces through the
//! whole LCI stack, run in the world: `super::testing`): who forwards
//! what, when, and with how many bus crossings.

use super::testing::{done, lib, ni, nis, run, step, world, Ran, To};
use super::*;
use crate::config::Forwarding;
use crate::time::Instant;
use crate::Metrics;

const SCHEMES: [&str; 3] = ["host-message", "host-packet", "ni"];

fn scenario(forwarding: &str, workload: &str) -> String {
    format!("preset = \"lci2000\"\n[nic]\nforwarding = \"{forwarding}\"\n[workload]\n{workload}\n")
}

fn run_world(forwarding: &str, workload: &str) -> (Ran, Metrics) {
    run(&scenario(forwarding, workload))
}

fn bcast(forwarding: &str, size: u64, iterations: u32, count: u32) -> (Ran, Metrics) {
    run_world(forwarding, &format!("kind = \"bcast\"\nsize_bytes = {size}\niterations = {iterations}\ncount = {count}"))
}

#[test]
fn every_process_receives_every_byte_exactly_once() {
    for f in SCHEMES {
        for size in [0u64, 100, 1024, 2500] {
            let (w, m) = bcast(f, size, 2, 3);
            let packets = w.hosts[0].packets_for(size) as f64;
            // 63 receivers x 5 broadcasts x packets each; nobody sees its own.
            assert_eq!(m.get("mc_packets_consumed"), Some(63.0 * 5.0 * packets), "{f} {size}");
            assert_eq!(m.get("mc_bytes_consumed"), Some(63.0 * 5.0 * size as f64), "{f} {size}");
            assert_eq!(m.get("upcalls"), Some(63.0 * 5.0 * packets), "{f} {size}");
            assert_eq!(w.hosts[0].upcalls, 0, "{f}: the root receives nothing");
            // Every packet on the wire reaches exactly one host.
            assert_eq!(m.get("packets"), m.get("packets_delivered"), "{f} {size}");
        }
    }
}

#[test]
fn ni_forwarding_sends_to_children_before_the_host_dma_completes() {
    // One 1 KB packet from root 0: NI 1 (an interior node) forwards to 3 and 4.
    let mut world = world(&scenario("ni", "kind = \"bcast\"\nsize_bytes = 1024\niterations = 1\ncount = 0"));
    let mut arrive1 = None;
    let mut forwards_of_1 = Vec::new();
    let mut delivered1 = None;
    loop {
        let before = ni(&world, 1).delivered;
        let Some((now, kind, h, _)) = step(&mut world) else { break };
        match (kind, h) {
            (To::Firmware(FwEv::Arrive), 1) => arrive1 = Some(now),
            (To::Firmware(FwEv::Arrive), d @ (3 | 4)) => forwards_of_1.push((d, now)),
            _ => {}
        }
        if ni(&world, 1).delivered > before {
            delivered1 = Some(now);
        }
        if done(&world) {
            break;
        }
    }
    let (arrive1, delivered1) = (arrive1.unwrap(), delivered1.unwrap());
    assert_eq!(ni(&world, 1).mc.forwards, 2);
    assert_eq!(ni(&world, 1).host_dmas, 1);
    assert_eq!(forwards_of_1.len(), 2);
    // Both children's copies left NI 1 (their head reached them, cut-through)
    // before NI 1's own host DMA of the packet completed.
    let first_out = ni(&world, 1).mc.first_forward_at.unwrap();
    assert!(first_out > arrive1 && first_out < delivered1, "{arrive1:?} {first_out:?} {delivered1:?}");
    assert!(forwards_of_1.iter().all(|&(_, t)| t > arrive1));
    // The hosts never forwarded anything: one PIO write in all (the root's).
    assert!(world.hosts.iter().all(|h| h.lci.as_ref().is_some_and(|l| l.mc.host_forward_copies == 0)));
    assert_eq!(world.hosts.iter().map(|h| h.nic.bus().expect("a bus").pio_writes).sum::<u64>(), 1);
}

#[test]
fn host_packet_copies_each_packet_to_the_ni_once_and_posts_one_descriptor_per_child() {
    let size = 3000u64; // 3 packets
    let (w, m) = bcast("host-packet", size, 1, 0);
    // Interior nodes of the binary tree from root 0 forward; leaves (ranks 32..63
    // relative) do not. Each forwarding host writes each packet once.
    let tree = w.hosts[0].mc.tree;
    let interior = (1..64).filter(|&r| tree.child_count(0, r) > 0).count() as u64;
    assert_eq!(interior, 31); // relative ranks 1..=31 have children
    assert_eq!(w.hosts.iter().map(|h| h.mc.host_forward_copies).sum::<u64>(), interior * 3);
    assert_eq!(w.buses[1].pio_writes, 3, "host 1 copied each of its 3 packets once");
    // Its one burst per packet carries one extra 8 B descriptor for the second child.
    let p = Packet {
        src: 0,
        dst: 3,
        msg: 0,
        frag: 0,
        last: true,
        payload: 952,
        msg_bytes: size,
        bcast: Some(0),
        tag: 0,
        ack: 0,
        ack_only: false,
    };
    assert_eq!(w.hosts[1].mc.extra_pio_bytes(1, &p), 8);
    assert_eq!(w.hosts[40].mc.extra_pio_bytes(40, &p), 0, "a leaf forwards nothing");
    assert_eq!(w.nis[1].sent, 3, "3 send buffers released (each shared by 2 descriptors)");
    assert_eq!(m.get("ni_forwards"), Some(0.0));
    // host-message instead: one PIO copy per child.
    let (w, _) = bcast("host-message", size, 1, 0);
    assert_eq!(w.buses[1].pio_writes, 6);
    assert_eq!(w.nis[1].sent, 6);
}

/// Broadcast 4 KB (4 packets) from host 0 under `forwarding`; returns when
/// host 1 first posted a forward and when it consumed its last packet.
fn first_forward_and_last_upcall_at_1(forwarding: &str) -> (Instant, Instant) {
    let mut world = world(&scenario(forwarding, "kind = \"bcast\"\nsize_bytes = 4096\niterations = 1\ncount = 0"));
    let mut first_post_by_1 = None;
    let mut last_consumed_at_1 = None;
    loop {
        let before = lib(&world, 1).upcalls;
        let Some((now, kind, h, _)) = step(&mut world) else { break };
        if (kind, h) == (To::Firmware(FwEv::Posted), 1) {
            first_post_by_1.get_or_insert(now);
        }
        if lib(&world, 1).upcalls == 4 && before == 3 {
            last_consumed_at_1 = Some(now);
        }
        if done(&world) {
            break;
        }
    }
    (first_post_by_1.expect("host 1 forwards"), last_consumed_at_1.expect("host 1 gets 4 packets"))
}

#[test]
fn host_message_forwards_only_after_the_whole_message_arrived() {
    let (first_post, last_upcall) = first_forward_and_last_upcall_at_1("host-message");
    assert!(first_post > last_upcall);
    // host-packet forwards the first packet long before the last one is in.
    let (first_post, last_upcall) = first_forward_and_last_upcall_at_1("host-packet");
    assert!(first_post < last_upcall);
}

#[test]
fn ni_beats_host_packet_beats_host_message_on_latency() {
    for size in [0u64, 16, 1024, 4096, 16384] {
        let l: Vec<f64> = SCHEMES.iter().map(|f| bcast(f, size, 5, 0).1.get("latency_us").unwrap()).collect();
        assert!(l[2] < l[1] && l[2] < l[0], "size {size}: host-message, host-packet, ni = {l:?}");
        if size >= 1024 {
            // Copying once instead of once per child, and (above one packet)
            // pipelining packets through the tree.
            assert!(l[1] < l[0], "size {size}: host-message, host-packet, ni = {l:?}");
        } else {
            // Small single packets: both host schemes forward at the upcall; the
            // second copy is short, host-packet adds an extra descriptor per level.
            assert!((l[1] - l[0]).abs() < 0.05 * l[0], "size {size}: {l:?}");
        }
    }
}

#[test]
fn a_forward_waits_for_a_free_buffer_at_the_child_and_holds_its_own() {
    // One receive buffer per NI: forwards must wait for the child's host DMA.
    let (w, m) = run("preset = \"lci2000\"\n[platform.lanai]\nrecv_buffers = 1\n[nic]\nforwarding = \"ni\"\n\
         [workload]\nkind = \"bcast\"\nsize_bytes = 8192\niterations = 0\ncount = 4");
    assert!(m.get("ni_forward_waits").unwrap() > 0.0);
    assert_eq!(m.get("mc_bytes_consumed"), Some(63.0 * 4.0 * 8192.0));
    assert!(w.nis.iter().all(|n| n.mc.held() == 0 && n.credits.free() == 1));
}

#[test]
fn apps_finish_under_every_scheme_and_ni_is_not_slower() {
    for app in ["kind = \"asp\"\nrows = 256\niterations = 24", "kind = \"qr\"\ncols = 128\niterations = 12"] {
        let t: Vec<f64> = SCHEMES.iter().map(|f| run_world(f, app).1.get("exec_time_s").unwrap()).collect();
        assert!(t.iter().all(|&x| x > 0.0), "{app}: {t:?}");
        assert!(t[2] <= t[0], "{app}: host-message, host-packet, ni = {t:?}");
    }
}

#[test]
fn asp_and_qr_run_the_open_mx_programs_one_process_per_host() {
    // The programs are `crate::workload::asp_ops` / `qr_ops`, one per host,
    // run to their end by the LCI library under every forwarding scheme;
    // the execution time is the last process's end mark, and every byte of
    // every broadcast reached every other host once.
    for (app, bytes) in [
        ("kind = \"asp\"\nrows = 256\niterations = 24", 24 * 4 * 256),
        ("kind = \"qr\"\ncols = 128\niterations = 6", (0..6).map(|k| 12 + 8 * (128 - k)).sum::<u64>()),
    ] {
        for f in SCHEMES {
            let (w, m) = run_world(f, app);
            assert!(w.whole.is_none(), "{app}: {:?}", w.drive);
            let procs = || w.hosts.iter().map(|l| l.process().expect("each host's library holds its process"));
            assert_eq!(procs().count(), 64);
            assert!(procs().all(crate::library::driver::Driver::finished), "{app} {f}");
            let last = procs().filter_map(|p| p.mark(1)).max().expect("end marks");
            assert_eq!(m.get("exec_time_s"), Some(last.as_s_f64()), "{app} {f}");
            assert_eq!(m.get("mc_bytes_consumed"), Some(63.0 * bytes as f64), "{app} {f}");
        }
    }
}

#[test]
fn stream_and_pingpong_run_the_open_mx_programs_on_src_and_dst_alone() {
    // `src` runs rank 0's program, `dst` rank 1's; the others none. The
    // stream is timed by the receiver's marks, the ping-pong by rank 0's.
    let text =
        |w: &str| format!("preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[workload]\n{w}src = 5\ndst = 2\n");
    let (s, m) = run(&text("kind = \"stream\"\nsize_bytes = 1000\nmessages = 50\nwarmup = 5\n"));
    assert!((0..64).all(|h| s.ranked[h] == (h == 5 || h == 2)));
    let rx = s.hosts[2].process().expect("the receiver's library holds its process");
    let (t0, t1) = (rx.mark(0).expect("warm-up marked"), rx.mark(1).expect("end marked"));
    assert_eq!(m.get("elapsed_us"), Some(t1.since(t0).as_s_f64() * 1e6));
    assert_eq!(m.get("upcalls"), Some(55.0));
    let (s, m) = run(&text("kind = \"pingpong\"\nsize_bytes = 0\niterations = 10\nwarmup = 2\n"));
    let rank0 = s.hosts[5].process().expect("rank 0's library holds its process");
    let trips = rank0.mark(1).unwrap().since(rank0.mark(0).unwrap()).as_us_f64();
    assert_eq!(m.get("latency_us"), Some(trips / 20.0));
    assert_eq!(m.get("upcalls"), Some(24.0), "12 round trips");
}

#[test]
fn each_process_is_a_program_left_of_the_world_until_it_finishes() {
    // The ping-pong on hosts 5 and 2: two programs left (the 62 idle hosts
    // none), each counted out as its process finishes; the run ends with
    // the second.
    let text = "preset = \"lci2000\"\n[protocol]\nstack = \"lci\"\n[workload]\nkind = \"pingpong\"\n\
                size_bytes = 0\niterations = 3\nwarmup = 0\nsrc = 5\ndst = 2\n";
    let mut w = world(text);
    assert_eq!(w.programs_left, 2);
    let mut left = vec![2];
    while step(&mut w).is_some() && !done(&w) {
        if left.last() != Some(&w.programs_left) {
            left.push(w.programs_left);
        }
    }
    assert_eq!(w.programs_left, 0);
    assert_eq!(left, [2, 1], "one finished before the other");
    assert!(w.hosts.iter().all(|h| h.lci.as_deref().and_then(Lib::process).is_none_or(|p| p.finished())));
}

#[test]
fn fanout_and_forwarding_parse_and_reject_bad_values() {
    let s = super::testing::scenario(&scenario("host-packet", "kind = \"bcast\"")).unwrap();
    assert_eq!((s.forwarding, s.fanout), (Forwarding::HostPacket, 2));
    let e = super::testing::scenario("preset = \"lci2000\"\n[nic]\nforwarding = \"nic\"\n[workload]\nkind = \"bcast\"")
        .unwrap_err();
    assert!(e.0.contains("nic.forwarding") && e.0.contains("host-message") && !e.0.contains('\n'), "{e}");
    let e =
        super::testing::scenario("preset = \"lci2000\"\n[nic]\nfanout = 0\n[workload]\nkind = \"bcast\"").unwrap_err();
    assert!(e.0.contains("nic.fanout"), "{e}");
    let e = super::testing::scenario("preset = \"lci2000\"\n[workload]\nkind = \"asp\"\nrows = 100").unwrap_err();
    assert!(e.0.contains("workload.rows") && e.0.contains("64"), "{e}");
    let e = super::testing::scenario("preset = \"lci2000\"\n[workload]\nkind = \"bcast\"\nroot = 64").unwrap_err();
    assert!(e.0.contains("workload.root"), "{e}");
    // Fan-out 4 trees work too.
    let m = run("preset = \"lci2000\"\n[nic]\nfanout = 4\n[workload]\nkind = \"bcast\"\nsize_bytes = 64\niterations = 2\ncount = 2").1;
    assert_eq!(m.get("mc_packets_consumed"), Some(63.0 * 4.0));
}

#[test]
fn multicast_same_seed_same_metrics() {
    for f in SCHEMES {
        let a = run_world(f, "kind = \"qr\"\ncols = 128\niterations = 4").1;
        let b = run_world(f, "kind = \"qr\"\ncols = 128\niterations = 4").1;
        assert_eq!(a, b, "{f}");
    }
}

fn pkt(frag: u32) -> Packet {
    Packet {
        src: 0,
        dst: 1,
        msg: 0,
        frag,
        last: false,
        payload: 64,
        msg_bytes: 640,
        bcast: None,
        tag: 0,
        ack: 0,
        ack_only: false,
    }
}

#[test]
fn an_ni_store_holds_at_most_its_bound_and_reuses_the_indices_given_back() {
    let mut s = crate::engine::slab::Slab::new(2, 2);
    let a = s.put(pkt(0)).expect("room");
    let b = s.put(pkt(1)).expect("room");
    assert_ne!(a, b);
    assert_eq!(s.put(pkt(2)), None, "full at its bound");
    assert_eq!(s.take(a), pkt(0));
    assert_eq!(s.len(), 1);
    assert_eq!(s.put(pkt(3)), Some(a), "the index given back is reused");
    assert_eq!((s[a as usize], s[b as usize]), (pkt(3), pkt(1)));
    // Each receive buffer: its arrival and up to `fanout` forwards; one
    // host write per send buffer and one host forward.
    assert_eq!(crate::nic::lanai::packets_bound(64, 8, 2), 64 + 1 + 8 * 3);
}

#[test]
fn the_world_queue_carries_the_stacks_events_and_every_packet_named_is_given_back() {
    for f in SCHEMES {
        let mut world = world(&scenario(f, "kind = \"bcast\"\nsize_bytes = 3000\niterations = 2\ncount = 1"));
        let mut kinds = Vec::new();
        let mut most = 0;
        while let Some((_, kind, h, p)) = step(&mut world) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            if kind == To::Firmware(FwEv::Arrive) {
                assert_eq!(p.map(|p| p.dst), Some(h), "{f}: an arrival is held by the NI it arrives at");
            }
            most = most.max(nis(&world).map(|n| n.packets.len()).max().unwrap_or(0));
            // Its outputs routed, a library holds none of the packets they named.
            assert!(world.hosts.iter().all(|hs| hs.lib_ref().held_mark() == 0), "{f}: after {kind:?}");
        }
        // The queue ran dry: every packet an event named was taken back.
        assert!(done(&world), "{f}");
        assert!(nis(&world).all(|n| n.packets.is_empty()), "{f}");
        assert!(most > 0 && most <= ni(&world, 0).packets.bound() as usize, "{f}: {most}");
        for k in [
            To::Firmware(FwEv::Posted),
            To::Firmware(FwEv::Arrive),
            To::Firmware(FwEv::TxReady),
            To::Firmware(FwEv::TxDone),
            To::Firmware(FwEv::RxStep),
        ] {
            assert!(kinds.contains(&k), "{f}: {k:?} in {kinds:?}");
        }
        let forwards: &[To] = match f {
            "host-packet" => &[To::Library(LibEv::McForward), To::Library(LibEv::McWrite)],
            "ni" => &[To::Firmware(FwEv::FwdReady), To::Firmware(FwEv::FwdDone)],
            _ => &[],
        };
        assert!(forwards.iter().all(|k| kinds.contains(k)), "{f}: {kinds:?}");
    }
}

#[test]
fn an_event_past_an_nis_store_ends_the_run_with_one_line_naming_the_bound() {
    let mut world = world(&scenario("ni", "kind = \"bcast\"\nsize_bytes = 1024\niterations = 1\ncount = 0"));
    // NI 1 (an interior node of root 0's tree) with room for no packet.
    world.hosts[1].nic.lanai.as_mut().expect("the world runs the stack").packets = crate::engine::slab::Slab::new(0, 0);
    let e = world.run().expect_err("an arrival at NI 1 has no room");
    assert!(e.0.starts_with("NI 1 holds more packets in flight than its buffers allow (0: "), "{e}");
    assert!(!e.0.contains('\n'), "{e}");
}

#[test]
fn the_broadcast_benchmark_is_a_program_per_host_and_times_as_the_whole_run_benchmark_did() {
    // The benchmark is `crate::workload::bcast_bench_ops`, one process per
    // host: every host but the root receives every broadcast, and the
    // root's marks time it. Its figures (latency, burst, throughput,
    // packets consumed, PIO writes), as f64 bits, are those recorded at
    // c25bce3 from a benchmark that kept every host's part in one state:
    // every scheme, roots inside and at the end of the ring, and runs
    // without one-at-a-time or without back-to-back broadcasts.
    /// Forwarding, size, iterations, count, root; the figures' bits.
    type Case = (&'static str, u64, u32, u32, u32, [Option<u64>; 5]);
    #[rustfmt::skip]
    let want: [Case; 15] = [
        ("host-message", 0, 3, 2, 0, [Some(4635670347437196873), Some(4637563906588935587), Some(0), Some(4644249154795601920), Some(4644249154795601920)]),
        ("host-message", 1024, 4, 3, 5, [Some(4644755835174389935), Some(4646646834733427930), Some(4619350151678093067), Some(4646465770237198336), Some(4646465770237198336)]),
        ("host-message", 5000, 2, 4, 63, [Some(4652873310543524355), Some(4656657861566515763), Some(4621726613045734444), Some(4656027123352338432), Some(4656027123352338432)]),
        ("host-message", 64, 0, 5, 7, [None, Some(4640363294788819419), Some(4610911281185287160), Some(4644249154795601920), Some(4644249154795601920)]),
        ("host-message", 2048, 3, 0, 1, [Some(4648120328045030078), None, None, Some(4645357462516400128), Some(4645357462516400128)]),
        ("host-packet", 0, 3, 2, 0, [Some(4635726642432539005), Some(4637620201584277718), Some(0), Some(4644249154795601920), Some(4639833516098453504)]),
        ("host-packet", 1024, 4, 3, 5, [Some(4643720754928001609), Some(4645159060903231576), Some(4620905401226654274), Some(4646465770237198336), Some(4642085315912138752)]),
        ("host-packet", 5000, 2, 4, 63, [Some(4646283306317753281), Some(4650965387160774144), Some(4627079148478438424), Some(4656027123352338432), Some(4651655465120301056)]),
        ("host-packet", 64, 0, 5, 7, [None, Some(4640391442286490484), Some(4610873830520708733), Some(4644249154795601920), Some(4639833516098453504)]),
        ("host-packet", 2048, 3, 0, 1, [Some(4644342121336072334), None, None, Some(4645357462516400128), Some(4640959416005296128)]),
        ("ni", 0, 3, 2, 0, [Some(4632735057066845137), Some(4633997429834670947), Some(0), Some(4644249154795601920), Some(4617315517961601024)]),
        ("ni", 1024, 4, 3, 5, [Some(4638871769477725651), Some(4640941929970502304), Some(4625208504918857575), Some(4646465770237198336), Some(4619567317775286272)]),
        ("ni", 5000, 2, 4, 63, [Some(4643232439489622197), Some(4649383077672665330), Some(4628716339836403687), Some(4656027123352338432), Some(4629137466983448576)]),
        ("ni", 64, 0, 5, 7, [None, Some(4636357726218822899), Some(4614799013111864354), Some(4644249154795601920), Some(4617315517961601024)]),
        ("ni", 2048, 3, 0, 1, [Some(4639947971458992800), None, None, Some(4645357462516400128), Some(4618441417868443648)]),
    ];
    for (f, size, iterations, count, root, bits) in want {
        let (w, m) = run_world(
            f,
            &format!(
                "kind = \"bcast\"\nsize_bytes = {size}\niterations = {iterations}\ncount = {count}\nroot = {root}"
            ),
        );
        let got = ["latency_us", "burst_us", "throughput_MBps", "mc_packets_consumed", "pio_writes"]
            .map(|k| m.get(k).map(f64::to_bits));
        assert_eq!(got, bits, "{f} {size} {iterations} {count} {root}");
        assert!(w.whole.is_none(), "{:?}", w.drive);
        assert_eq!(w.hosts.len(), 64);
        let finished = |l: &super::Lib| l.process().is_some_and(crate::library::driver::Driver::finished);
        assert!(w.hosts.iter().all(finished), "{f}: every process ran to its end");
        let n = (iterations + count) as usize;
        for h in (0..64).filter(|&h| h != root as usize) {
            assert_eq!(w.hosts[h].upcalls, n as u64 * w.hosts[0].packets_for(size) as u64, "{f}: host {h}");
        }
        assert_eq!(w.hosts[root as usize].upcalls, 0, "{f}: the root receives nothing");
    }
}
