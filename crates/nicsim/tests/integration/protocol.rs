//! The protocol completes every message under loss and reordering, and
//! counts what it dropped.

use super::run;

#[test]
fn every_message_class_completes_under_loss_and_reordering() {
    for size in [0u64, 100, 5000, 32768, 100_000, 600_000] {
        let m = run(&format!(
            "seed = 3\n[protocol]\nloss = 0.01\nreorder = 0.05\n[platform.library]\nresend_us = 2000\npull_timeout_us = 2000\n[workload]\nkind = \"pingpong\"\nsize_bytes = {size}\niterations = 30\nwarmup = 0\n"
        ));
        assert!(m.get("latency_us").unwrap() > 0.0, "size {size}");
    }
}

#[test]
fn lossless_run_drops_nothing() {
    let m = run("[workload]\nkind = \"stream\"\nsize_bytes = 32768\nmessages = 200\n");
    assert_eq!(m.get("dropped"), Some(0.0));
    assert_eq!(m.get("duplicates"), Some(0.0));
}

#[test]
fn medium_message_uses_23_fragments_at_mtu_1500() {
    // One 32 KiB message = 23 MEDIUM frames; warm-up 0, one iteration each
    // way; each MPI message one Open-MX message (the MTL path).
    let m = run("[platform.library]\nmpi_path = \"mtl\"\n[nic]\ncoalescing = \"disabled\"\n[platform.nic]\ntx_done_interrupts = false\n[workload]\nkind = \"pingpong\"\nsize_bytes = 32768\niterations = 1\nwarmup = 0\n");
    let frames = m.get("frames").unwrap();
    // 2 x 23 medium fragments plus at most a few explicit acks.
    assert!((46.0..=50.0).contains(&frames), "{frames}");
}

#[test]
fn bad_input_is_one_line_naming_the_key() {
    let e = nicsim::run_toml("[nic]\ncoalescing = \"sometimes\"\n[workload]\nkind = \"pingpong\"\n").unwrap_err();
    assert!(e.contains("nic.coalescing") && e.contains("sometimes") && e.contains("openmx"), "{e}");
    let e = nicsim::run_toml("[workload]\nkind = \"pingpong\"\nwarmpu = 3\n").unwrap_err();
    assert!(e.contains("warmpu"), "{e}");
}

#[test]
fn medium_messages_from_many_peers_interleave_without_loss() {
    // 16 ranks, 4 KiB (3-fragment medium) alltoall: fragments of messages
    // from different peers arrive interleaved; none may wait for a resend.
    // Each MPI message is one Open-MX message (the MTL path).
    let m = run("[platform.library]\nmpi_path = \"mtl\"\n[nic]\ncoalescing = \"disabled\"\n[workload]\nkind = \"alltoall\"\nsize_bytes = 4096\niterations = 10\nprocs_per_host = 8\n");
    assert_eq!(m.get("duplicates"), Some(0.0));
    assert!(m.get("time_us").unwrap() < 1000.0, "{:?}", m.get("time_us"));
}

#[test]
fn nas_kernel_skeletons_complete_and_multiqueue_is_not_slower() {
    for kind in ["nas-cg", "nas-mg", "nas-ft"] {
        let t = |steering: &str| {
            run(&format!(
                "[nic]\ncoalescing = \"disabled\"\nsteering = \"{steering}\"\n[workload]\nkind = \"{kind}\"\nclass = \"B\"\nprocs_per_host = 8\n"
            ))
            .get("exec_time_s")
            .unwrap()
        };
        let (rr, mq) = (t("single-rr"), t("multiqueue"));
        assert!(rr > 0.5 && mq > 0.5, "{kind}: {rr} / {mq}");
        assert!(mq <= rr * 1.01, "{kind}: multiqueue {mq} vs round-robin {rr}");
    }
}

/// The library returns from a wait as soon as the awaited receive is done,
/// so a receiver that shares its core with every interrupt (and is slower
/// than its sender) still posts its receives as it goes: it completes its
/// warm-up early in the run and reports the pace it keeps, not the burst
/// in which a starved program would drain a backlog at the end.
#[test]
fn a_receiver_behind_its_sender_keeps_posting_receives() {
    let m = run(concat!(
        "[nic]\ncoalescing = \"timeout\"\ndelay_us = 0\nsteering = \"single-core\"\nirq_core = 0\n",
        "[host]\nbinding = 0\n[workload]\nkind = \"stream\"\nsize_bytes = 128\nmessages = 2000\n"
    ));
    let (start, end) = (m.get("stream_start_us").unwrap(), m.get("stream_end_us").unwrap());
    assert!(start < 0.5 * end, "warm-up done at {start} us of {end} us");
    let rate = m.get("msg_rate_per_s").unwrap();
    assert!(rate < 600_000.0, "{rate} msg/s: faster than any sender");
}

#[test]
fn a_stream_sender_takes_in_its_acks_as_it_sends() {
    // omx_isend progresses after each send: acks are consumed as they come,
    // so the send window never fills, even when both NICs hold every
    // interrupt for 200 us (acks then take ~400 us to come back).
    let stream = |delay: u32| {
        run(&format!(
            "[nic]\ncoalescing = \"timeout\"\ndelay_us = {delay}\n[workload]\nkind = \"stream\"\nsize_bytes = 128\nmessages = 6000\n"
        ))
    };
    let (at75, at200) = (stream(75), stream(200));
    let (r75, r200) = (at75.get("msg_rate_per_s").unwrap(), at200.get("msg_rate_per_s").unwrap());
    // 435k -> 426k on omx2009: a window that filled would cost far more.
    assert!(r200 >= 0.97 * r75, "rate falls with a longer delay: {r75} -> {r200} msg/s");
}

#[test]
fn uniband_waits_for_the_timer_once_per_window_and_openmx_does_not() {
    // IMB Uniband acks every window of 64: with the 75 us timeout the last
    // messages of a window and its ack each wait for a coalescing timer,
    // which a free-running stream never does; openmx interrupts at once on
    // the (marked) tiny ack and messages. A timer from the first unreported
    // frame makes every such wait a whole 75 us (omx2009's minimum gap
    // shortens those that come long after the last interrupt).
    let rate = |kind: &str, coalescing: &str| {
        let window = if kind == "uniband" { "window = 64\n" } else { "" };
        run(&format!("[nic]\ncoalescing = \"{coalescing}\"\ntimeout_mode = \"absolute\"\n[workload]\nkind = \"{kind}\"\nmessages = 6400\n{window}"))
            .get("msg_rate_per_s")
            .unwrap()
    };
    let (uni_timeout, stream_timeout) = (rate("uniband", "timeout"), rate("stream", "timeout"));
    assert!(uni_timeout < 0.8 * stream_timeout, "uniband {uni_timeout} vs stream {stream_timeout} msg/s");
    let uni_openmx = rate("uniband", "openmx");
    assert!(uni_openmx > 1.2 * uni_timeout, "openmx {uni_openmx} vs timeout {uni_timeout} msg/s");
}

#[test]
fn small_sends_pay_their_retransmission_copy_and_tiny_ones_do_not() {
    // 32 B is tiny (data inside the ioctl), 33 B small (malloc'd copy);
    // 1 us makes the sender the bottleneck whatever the receiver costs.
    let stream = |size: u32, small_send_ns: f64| {
        run(&format!(
            "[platform.library]\nsmall_send_ns = {small_send_ns:.1}\nmpi_path = \"mtl\"\n[nic]\ncoalescing = \"timeout\"\n[workload]\nkind = \"stream\"\nsize_bytes = {size}\nmessages = 4000\n"
        ))
    };
    let rate = |m: &nicsim::Metrics| m.get("msg_rate_per_s").unwrap();
    let (small, small0) = (stream(33, 1000.0), stream(33, 0.0));
    assert!(rate(&small) < 0.9 * rate(&small0), "small {} vs {} msg/s without the copy", rate(&small), rate(&small0));
    assert_eq!(stream(32, 1000.0), stream(32, 0.0), "a tiny send paid the small-send copy");
}

/// A flood faster than the host drains its ring: the overflow is counted as
/// ring-full drops and the run ends once every frame is handled or dropped
/// (it used to wait forever for the dropped ones).
#[test]
fn a_flood_that_overflows_the_ring_ends_with_ring_full_drops() {
    let m = super::run("[platform.nic]\nring_slots = 32\n[workload]\nkind = \"flood\"\npackets = 3000\ngap_ns = 10\n");
    assert!(m.get("dropped_ring_full").unwrap() > 0.0);
    assert_eq!(m.get("frames"), Some(3000.0));
    assert_eq!(m.get("dropped").unwrap(), m.get("dropped_ring_full").unwrap() + m.get("dropped_no_endpoint").unwrap());
}

/// Bounds that keep a valid scenario from never ending are refused before
/// any work, naming the key: a ring smaller than a medium message or a pull
/// block (32 frames, resent whole: the same tail is dropped on every try)
/// an absolute timer with no delay but a frames threshold above 1 (the last
/// frames below it are never reported), and a rendezvous threshold above
/// what 32 MEDIUM fragments carry (such a message can never be sent).
#[test]
fn scenarios_that_could_never_end_are_refused_naming_the_key() {
    let e = nicsim::run_toml("[platform.nic]\nring_slots = 31\n[workload]\nkind = \"pingpong\"\n").unwrap_err();
    assert!(e.contains("nic.ring_slots") && e.contains("31") && e.contains("32"), "{e}");
    for strategy in ["timeout", "openmx", "stream"] {
        let e = nicsim::run_toml(&format!(
            "[nic]\ncoalescing = \"{strategy}\"\ntimeout_mode = \"absolute\"\ndelay_us = 0\nframes = 15\n[workload]\nkind = \"flood\"\npackets = 1\n"
        ))
        .unwrap_err();
        assert!(e.contains("nic.frames") && e.contains("15") && e.contains("nic.delay_us = 0"), "{e}");
    }
    // One frame is a threshold every frame reaches; the packet timer and
    // the throttle raise on every frame with no delay.
    super::run(
        "[nic]\ncoalescing = \"timeout\"\ndelay_us = 0\nframes = 1\n[workload]\nkind = \"flood\"\npackets = 3\n",
    );
    for mode in ["packet", "throttle"] {
        super::run(&format!(
            "[nic]\ncoalescing = \"timeout\"\ntimeout_mode = \"{mode}\"\ndelay_us = 0\nframes = 15\n[workload]\nkind = \"flood\"\npackets = 1\n"
        ));
    }
    super::run(
        "[platform.nic]\nring_slots = 32\n[workload]\nkind = \"pingpong\"\nsize_bytes = 100000\niterations = 3\n",
    );
    // The [EMO] echo servers resend nothing: loss would strand the client.
    let e =
        nicsim::run_toml("[protocol]\nloss = 0.125\n[workload]\nkind = \"echo-nic\"\nsize_bytes = 1453\n").unwrap_err();
    assert!(e.contains("protocol.loss") && e.contains("echo-nic"), "{e}");
    // A MEDIUM message travels in at most 32 fragments (46464 B at MTU 1500).
    let e = nicsim::run_toml("[protocol]\nrndv_threshold = 65536\n[workload]\nkind = \"pingpong\"\n").unwrap_err();
    assert!(e.contains("protocol.rndv_threshold") && e.contains("46464") && e.contains("mtu = 1500"), "{e}");
    // On a small MTU the default threshold comes down to what 32 fragments carry.
    let m = super::run(
        "[platform.link]\nmtu = 576\n[workload]\nkind = \"pingpong\"\nsize_bytes = 16897\niterations = 2\nwarmup = 0\n",
    );
    assert!(m.get("latency_us").unwrap() > 0.0);
}

/// A resend timer that fires while the process is in its blocking call
/// (wait = "block") finds it running and wakes nothing; the process looks at
/// its timers again before it sleeps, so a lost frame is still resent (both
/// sides used to sleep forever).
#[test]
fn a_blocking_process_still_resends_lost_frames() {
    for seed in [1, 3] {
        let m = super::run(&format!(
            "seed = {seed}\n[host]\nbusy_poll = true\nwait = \"block\"\nsleep = false\n[protocol]\nloss = 0.125\njitter_ns = 1.0\n[workload]\nkind = \"pingpong\"\niterations = 20\n"
        ));
        assert!(m.get("dropped_loss").unwrap() > 0.0);
    }
}

#[test]
fn the_stream_window_bounds_the_pulls_in_flight() {
    // Each outstanding 1 MiB receive is one pull of 4 blocks of 32 replies
    // (omx_pull.c): the window decides how many frames are requested at
    // once. On a ring that holds them all, a second outstanding message
    // overlaps its rendezvous with the first one's pull (a few % here); on
    // the preset's 1,024 slots, 64 outstanding pulls (8,192 frames
    // requested at once) overflow the ring far more than 16 (2,048). The
    // pinning of each receive region (`library.pin_page_ns`) is left out:
    // it spaces the pulls' starts by tens of microseconds, so the frames
    // are no longer requested at once; and the kernel paths' footprints
    // (`cache.path_footprints`) are off: the window alone.
    let stream = |window: u32, ring: u32| {
        run(&format!(
            "[protocol]\nmpi = false\n[nic]\ncoalescing = \"disabled\"\n[platform.cache]\npath_footprints = false\nnapi_lines = 1\n[platform.library]\npin_page_ns = 0\n[platform.nic]\nring_slots = {ring}\n[workload]\nkind = \"stream\"\nsize_bytes = 1048576\nmessages = 48\nwarmup = 4\nwindow = {window}\n"
        ))
    };
    let (one, four) = (stream(1, 16384), stream(4, 16384));
    assert_eq!((one.get("dropped"), four.get("dropped")), (Some(0.0), Some(0.0)));
    let (r1, r4) = (one.get("msg_rate_per_s").unwrap(), four.get("msg_rate_per_s").unwrap());
    assert!(r4 > 1.02 * r1, "window 4 overlaps the handshakes: {r1} -> {r4} msg/s");
    let (d16, d64) = (stream(16, 1024).get("dropped").unwrap(), stream(64, 1024).get("dropped").unwrap());
    assert!(d64 > 1.3 * d16 + 100.0, "64 outstanding pulls overflow the ring more than 16: {d16} vs {d64} drops");
}

#[test]
fn a_stream_window_of_zero_is_refused_by_name() {
    let e = nicsim::run_toml("[workload]\nkind = \"stream\"\nwindow = 0\n").unwrap_err();
    assert!(e.contains("workload.window") && e.contains('0') && e.contains("1 ..= 65536"), "{e}");
}
