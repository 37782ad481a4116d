//! The [OMX-COAL] mechanisms, end to end: which packets interrupt at once,
//! what the stream-aware policy defers, where adaptive coalescing settles.

use super::{pingpong, run, stream};

/// One-way time of a `size` ping-pong with transmit completions not
/// interrupting (so only the marked receive path decides), under a timer
/// started by the first unreported frame (`timeout_mode = "absolute"`:
/// every unmarked packet waits its whole 75 us; with omx2009's minimum gap
/// the wait depends on when the host last took an interrupt). Each MPI
/// message is one Open-MX message (the MTL path, `library.mpi_path`).
fn oneway(strategy: &str, size: u64, unmarked: &str) -> f64 {
    run(&format!(
        "[platform.library]\nmpi_path = \"mtl\"\n[platform.nic]\ntx_done_interrupts = false\n[nic]\ncoalescing = \"{strategy}\"\ntimeout_mode = \"absolute\"\n[protocol]\nunmarked = [{unmarked}]\n[workload]\nkind = \"pingpong\"\nsize_bytes = {size}\niterations = 10\nwarmup = 1\n"
    ))
    .get("latency_us")
    .unwrap()
}

#[test]
fn openmx_interrupts_at_once_on_rendezvous_and_pull() {
    let size = 100_000; // RNDV + 3 pull blocks
    let openmx = oneway("openmx", size, "");
    let timeout = oneway("timeout", size, "");
    // Timeout waits for its 75 us timer at RNDV, PULL and NOTIFY at least.
    assert!(timeout > openmx + 150.0, "timeout {timeout} vs openmx {openmx}");
    // Unmarking RNDV (resp. PULL) puts one 75 us wait back on the path.
    // The NOTIFY of the previous message lands on the same host just before
    // the RNDV and its poll can sweep an unmarked RNDV up, so both go.
    for class in ["\"rndv\", \"notify\"", "\"pull\""] {
        let slower = oneway("openmx", size, class);
        assert!(slower - openmx > 50.0 && slower - openmx < 100.0, "{class}: {slower} vs {openmx}");
    }
}

#[test]
fn stream_defers_while_a_dma_is_pending_and_never_beyond_the_timeout() {
    // Fragment N-3 of a 32 KiB medium message carries the marker. Sent back
    // to back, every later fragment has arrived whole before the DMA of the
    // one before it completes: stream reports the message with one
    // interrupt, openmx interrupts on the marked fragment every time. The
    // fallback timer starts at the first unreported frame, so it never
    // ends inside a message (omx2009's minimum gap does, part of the time:
    // tests/test_misorder_regime.py).
    let m = |s: &str, jitter_ns: u32| {
        run(&format!(
            "seed = 5\n[nic]\ncoalescing = \"{s}\"\ntimeout_mode = \"absolute\"\n[protocol]\nmisorder_degree = 3\njitter_ns = {jitter_ns}\n[workload]\nkind = \"pingpong\"\nsize_bytes = 32768\niterations = 40\nwarmup = 1\n"
        ))
    };
    let (stream, openmx) = (m("stream", 0), m("openmx", 0));
    assert_eq!(stream.get("deferral_success_rate"), Some(1.0));
    assert_eq!(openmx.get("deferral_success_rate"), Some(0.0));
    // Seeded arrival jitter opens gaps between fragments: some deferrals
    // fail, and none waits beyond the fallback timeout.
    let (stream, openmx) = (m("stream", 600), m("openmx", 600));
    let success = stream.get("deferral_success_rate").unwrap();
    assert!(success > 0.0 && success < 1.0, "success with jitter {success}");
    let (ls, lo) = (stream.get("latency_us").unwrap(), openmx.get("latency_us").unwrap());
    assert!(ls < lo + 75.0, "stream {ls} waits beyond the timeout vs openmx {lo}");
}

#[test]
fn dim_moves_up_under_a_bulk_stream_and_down_under_ping_pong() {
    let stream =
        run("[nic]\ncoalescing = \"adaptive\"\n[workload]\nkind = \"stream\"\nsize_bytes = 1024\nmessages = 20000\n");
    let pingpong = run("[nic]\ncoalescing = \"adaptive\"\n[workload]\nkind = \"pingpong\"\niterations = 2000\n");
    let up = stream.get("host1_coalesce_delay_us").unwrap();
    let down = pingpong.get("host1_coalesce_delay_us").unwrap();
    assert!(up >= 64.0, "bulk stream left DIM at {up} us");
    assert!(down <= 8.0, "ping-pong left DIM at {down} us");
}

#[test]
fn gro_flush_timeout_defers_interrupts_and_busy_polling_cuts_latency() {
    let base = "preset = \"modern\"\n[nic]\ncoalescing = \"disabled\"\n";
    let pp = "[workload]\nkind = \"pingpong\"\niterations = 500\n";
    let irq = run(&format!("{base}{pp}"));
    let deferred = run(&format!("{base}[host]\nnapi_defer_hard_irqs = 2\ngro_flush_timeout_us = 20\n{pp}"));
    let suspended = run(&format!(
        "{base}[host]\nbusy_poll = true\nirq_suspend_timeout_us = 100\nnapi_defer_hard_irqs = 2\ngro_flush_timeout_us = 20\n{pp}"
    ));
    let l = |m: &nicsim::Metrics| m.get("latency_us").unwrap();
    let i = |m: &nicsim::Metrics| m.get("interrupts_per_msg").unwrap();
    assert!(i(&deferred) < 0.1 * i(&irq), "deferral keeps IRQs masked");
    assert!(l(&deferred) > l(&irq), "re-polls every 20 us add latency");
    assert!(l(&suspended) < l(&irq) && i(&suspended) < 0.1, "busy polling with suspended IRQs");
}

/// `[[host.napi]]` (netdev-genl napi-set) gives one queue NAPI settings of
/// its own: the queue carrying the ping-pong (queue 0 under multiqueue)
/// defers as its own settings say, whatever the host-wide ones; settings
/// of another queue change nothing on it.
#[test]
fn a_queues_own_napi_settings_replace_the_host_wide_ones() {
    let base = "preset = \"modern\"\n[nic]\ncoalescing = \"disabled\"\nsteering = \"multiqueue\"\n";
    let pp = "[workload]\nkind = \"pingpong\"\niterations = 500\n";
    let host_defer = "napi_defer_hard_irqs = 2\ngro_flush_timeout_us = 20\n";
    let queue = |q: u32, defer: u32| {
        format!("[[host.napi]]\nqueue = {q}\ndefer_hard_irqs = {defer}\ngro_flush_timeout_us = 20\n")
    };
    let irqs = |host: &str| run(&format!("{base}[host]\n{host}{pp}")).get("interrupts_per_msg").unwrap();
    let (plain, deferred) = (irqs(""), irqs(host_defer));
    assert!(deferred < 0.1 * plain, "deferral keeps IRQs masked: {deferred} vs {plain}");
    assert_eq!(irqs(&queue(0, 2)), deferred, "queue 0 defers on its own");
    assert_eq!(irqs(&format!("{host_defer}{}", queue(0, 0))), plain, "queue 0 does not defer, the host would");
    assert_eq!(irqs(&format!("{host_defer}{}", queue(1, 0))), deferred, "queue 1's settings are not queue 0's");
}

/// A busy poll is one driver poll of up to `BUSY_POLL_BUDGET` (8) entries
/// (net/core/dev.c `napi_busy_loop`): under a stream that keeps frames
/// waiting in the ring, the poll's own cost (`napi_poll_ns`) is shared by
/// the frames it takes, not paid again for each.
#[test]
fn a_busy_poll_takes_a_budget_of_frames_for_one_poll_cost() {
    let kernel_us = |napi_poll_ns: u32| {
        let m = run(&format!(
            "preset = \"modern\"\n[platform.host]\nnapi_poll_ns = {napi_poll_ns}.0\n[nic]\ncoalescing = \"disabled\"\n\
             [host]\nbusy_poll = true\nirq_suspend_timeout_us = 100\n\
             [workload]\nkind = \"stream\"\nsize_bytes = 0\nmessages = 4000\nwarmup = 0\n"
        ));
        assert!(m.get("interrupts_per_msg").unwrap() < 0.01, "the busy poller takes the frames");
        m.get("host1_kernel_us").unwrap()
    };
    // 2 us more per poll: 2 us more per frame at one poll a frame, 0.25 us
    // at full polls of 8.
    let per_frame_ns = (kernel_us(2050) - kernel_us(50)) * 1000.0 / 4000.0;
    assert!(per_frame_ns > 2000.0 / 8.0 * 0.9 && per_frame_ns < 2000.0 / 2.0, "{per_frame_ns} ns more per frame");
}

#[test]
fn ioat_copies_take_no_cpu_time_and_raise_large_message_throughput() {
    let m = |ioat: bool| {
        run(&format!(
            "[platform.cache]\ncopy_cold_MBps = 1000\n[host]\nioat = {ioat}\n[nic]\ncoalescing = \"openmx\"\n[workload]\nkind = \"pingpong\"\nsize_bytes = 4194304\niterations = 4\nwarmup = 1\n"
        ))
    };
    let (cpu, offload) = (m(false), m(true));
    let k = |m: &nicsim::Metrics| m.get("host1_kernel_us").unwrap();
    let t = |m: &nicsim::Metrics| m.get("throughput_MiBps").unwrap();
    // 5 x 4 MiB received by host 1: 20.97 MB copied at 1000 MB/s is 20.97 ms of
    // CPU that the copy engine takes over, less the offload's own kernel work
    // (submitting descriptors, and the lines the engine wrote, which the
    // kernel then reads from memory): most of it, not all.
    assert!(k(&cpu) - k(&offload) > 0.7 * 20_971.0, "kernel time {} vs {}", k(&cpu), k(&offload));
    assert!(t(&offload) > 1.5 * t(&cpu), "throughput {} vs {}", t(&offload), t(&cpu));
}

/// Host 1's cores that did kernel work, and the ping-pong latency.
fn steering_run(steering: &str, binding: &str) -> (f64, f64) {
    let m = run(&format!(
        "[nic]\ncoalescing = \"disabled\"\nsteering = \"{steering}\"\n[host]\nbinding = {binding}\nsoaker = true\n[platform.nic]\ntx_done_interrupts = true\n[workload]\nkind = \"pingpong\"\niterations = 300\n"
    ));
    (m.get("host1_kernel_cores").unwrap(), m.get("latency_us").unwrap())
}

#[test]
fn multiqueue_handles_an_endpoint_on_one_core_and_auto_binding_runs_there() {
    let (rr_cores, _) = steering_run("single-rr", "0");
    let (mq_cores, mq_auto) = steering_run("multiqueue", "\"auto\"");
    assert_eq!(rr_cores, 8.0, "round-robin spreads the interrupts");
    assert_eq!(mq_cores, 1.0, "one endpoint, one queue, one core");
    // Binding the process elsewhere pays cache-line transfers on every
    // message (about 1.1 us a round trip), less the end of the driver's work
    // an auto-bound library waits for (`driver_rx_tail_ns`, 0.2 us).
    let (_, mq_other_socket) = steering_run("multiqueue", "\"OP\"");
    assert!(mq_other_socket > mq_auto + 0.7, "OP {mq_other_socket} vs auto {mq_auto}");
}

#[test]
fn single_core_relations_order_latency_sc_sdollar_sp_op() {
    let l = |b: &str| steering_run("single-core", b).1;
    let (sc, sd, sp, op) = (l("\"SC\""), l("\"S$\""), l("\"SP\""), l("\"OP\""));
    // Same die shares the L2: no transfers; other die / socket pay them.
    assert!(sd <= sc + 0.5, "S$ {sd} vs SC {sc}");
    assert!(sp > sd && op > sp, "SP {sp}, OP {op}, S$ {sd}");
}

#[test]
fn sdollar_latency_is_below_sc_when_the_library_polls_on_the_interrupted_core() {
    // [OMX-MQ] 4.2: on SC the library and the interrupt handler compete for
    // one core; on S$ they share the L2 without competing. The driver's work
    // after the event is posted (`driver_rx_tail_ns`, 200 ns) delays an SC
    // library on every receive, not an S$ one.
    let l = |binding: &str, tail: &str| {
        run(&format!(
            "[nic]\ncoalescing = \"disabled\"\nsteering = \"single-core\"\n[host]\nbinding = \"{binding}\"\nsoaker = true\n[platform.host]\n{tail}[workload]\nkind = \"pingpong\"\niterations = 300\n"
        ))
        .get("latency_us")
        .unwrap()
    };
    let (sc, sd) = (l("SC", ""), l("S$", ""));
    assert!(sd + 0.15 < sc, "S$ {sd} vs SC {sc}");
    // Without the tail nothing separates them: the L2 is shared either way.
    let none = "driver_rx_tail_ns = 0.0\n";
    let (sc0, sd0) = (l("SC", none), l("S$", none));
    assert!((sc0 - sd0).abs() < 0.01, "S$ {sd0} vs SC {sc0} without the tail");
}

#[test]
fn an_interrupt_core_whose_die_sibling_polls_does_not_sleep() {
    // [OMX-MQ] 4.3: "a core only sleeps if the entire dual-core sub-chip is
    // idle. So binding to the very next core works too." With the other
    // cores idle, an interrupt on the polling library's die sibling (S$)
    // finds it awake; one on another die (SP) pays the C1E exit.
    let l = |binding: &str, soaker: bool| {
        run(&format!(
            "[nic]\ncoalescing = \"disabled\"\nsteering = \"single-core\"\n[host]\nbinding = \"{binding}\"\nsoaker = {soaker}\nsleep = true\n[workload]\nkind = \"pingpong\"\niterations = 300\n"
        ))
        .get("latency_us")
        .unwrap()
    };
    // With every core busy (soaker) nothing sleeps: SP pays line transfers.
    let lines = l("SP", true) - l("S$", true);
    let idle = l("SP", false) - l("S$", false);
    // The exit (2.994 us on omx2009) lands once per one-way on SP only.
    assert!(idle > lines + 2.0, "SP - S$: {idle} idle vs {lines} busy");
    assert!((l("S$", false) - l("S$", true)).abs() < 0.01, "S$ never sleeps");
}

#[test]
fn round_robin_interrupts_move_the_endpoint_descriptor_between_caches() {
    let misses = |steering: &str, binding: &str| {
        run(&format!(
            "[nic]\ncoalescing = \"disabled\"\nsteering = \"{steering}\"\n[host]\nbinding = {binding}\nsoaker = true\n[workload]\nkind = \"pingpong\"\niterations = 200\nwarmup = 0\n"
        ))
        .get("host1_cache_endpoint_misses")
        .unwrap()
    };
    let rr = misses("single-rr", "0");
    let sc = misses("single-core", "\"SC\"");
    // Each receive's handler runs on the next core: the descriptor follows it.
    assert!(rr > 200.0, "round-robin endpoint misses {rr}");
    // Handler and library on one core: only the first touch misses.
    assert!(sc <= 4.0, "SC endpoint misses {sc}");
}

/// [OMX-MQ] Table II and §4.4: with round-robin interrupts the driver's
/// shared state and the endpoint move between L2s, so the kernel's L2 miss
/// rate is well above SC's; with the library on the interrupt's core (SC)
/// the events and data it reads are in its own L2 and it almost never
/// misses, while round-robin brings them from another die on 3 of 4
/// interrupts.
#[test]
fn round_robin_raises_the_l2_miss_rates_and_sc_leaves_the_library_almost_none() {
    let rates = |steering: &str, binding: &str, size: u32| {
        let m = run(&format!(
            "[nic]\ncoalescing = \"disabled\"\nsteering = \"{steering}\"\n[host]\nbinding = {binding}\nsoaker = true\n[workload]\nkind = \"pingpong\"\nsize_bytes = {size}\niterations = 200\nwarmup = 10\n"
        ));
        (m.get("host1_kernel_miss_rate").unwrap(), m.get("host1_user_miss_rate").unwrap())
    };
    for size in [0, 128] {
        let (rr_kernel, rr_user) = rates("single-rr", "0", size);
        let (sc_kernel, sc_user) = rates("single-core", "\"SC\"", size);
        assert!(rr_kernel > 2.0 * sc_kernel, "{size} B kernel: round-robin {rr_kernel}, SC {sc_kernel}");
        assert!(sc_user < 0.01, "{size} B user, SC: {sc_user}");
        assert!(rr_user > 10.0 * sc_user.max(0.005), "{size} B user: round-robin {rr_user}, SC {sc_user}");
    }
}

/// A working set larger than the L2 gives capacity misses that a smaller
/// one does not: a 32 kB ping-pong fits the 4 MB L2 of omx2009, and misses
/// more and runs slower (evicted lines come from memory, copies at the cold
/// rate) when the L2 is 16 KiB.
#[test]
fn a_working_set_larger_than_the_l2_misses_more_and_runs_slower() {
    let m = |l2_kib: u32| {
        run(&format!(
            "[platform.cache]\nl2_kib = {l2_kib}\n[nic]\ncoalescing = \"disabled\"\nsteering = \"single-core\"\n[host]\nbinding = \"SC\"\nsoaker = true\n[workload]\nkind = \"pingpong\"\nsize_bytes = 32768\niterations = 100\nwarmup = 10\n"
        ))
    };
    let (big, small) = (m(4096), m(16));
    let g = |x: &nicsim::Metrics, k: &str| x.get(k).unwrap();
    // The kernel's per-CPU and read-mostly lines of the paths' footprints
    // (host/cache/footprint.rs) count as hits whatever the L2's size, and
    // its lines the NIC's DMA wrote or read as misses: its rate moves less.
    for (k, by) in [("host1_kernel_miss_rate", 0.005), ("host1_user_miss_rate", 0.01)] {
        assert!(g(&small, k) > g(&big, k) + by, "{k}: 16 KiB {} vs 4 MB {}", g(&small, k), g(&big, k));
    }
    assert!(g(&small, "latency_us") > g(&big, "latency_us"), "latency");
}

/// NAPI masks the receive interrupt while the poll runs. A receiver that
/// keeps pace therefore absorbs a dearer interrupt with bigger batches: a
/// 4x longer C1E exit leaves the rate alone and cuts interrupts per message.
/// (The transmit-line bouncing and contention are off so that the sender's
/// cost does not depend on the receiver's interrupts, and completions are
/// reaped in the poll so that only receive interrupts count.) docs/design.md
/// explains why this
/// is the reason the model cannot put the [OMX-COAL] message-rate cut on
/// the receiver.
///
/// The interrupt's delivery latency and the library's costs are pinned
/// (`ISOLATED`): a fitted delivery latency of its own already batches.
#[test]
fn a_napi_receiver_absorbs_a_dearer_interrupt_by_batching() {
    let m = |exit_ns: u32| {
        stream(
            "disabled",
            0,
            5000,
            &format!(
                "[platform.cache]\ntx_lines = 0\ntx_contention_lines = 0\n[platform.host]\nsleep_exit_ns = {exit_ns}.0\n[host]\ntx_reap = \"napi\"\n{ISOLATED}"
            ),
        )
    };
    let (cheap, dear) = (m(2000), m(8000));
    let rate = |x: &nicsim::Metrics| x.get("msg_rate_per_s").unwrap();
    let irqs = |x: &nicsim::Metrics| x.get("interrupts_per_msg").unwrap();
    assert!(rate(&dear) > 0.98 * rate(&cheap), "rate {} -> {}", rate(&cheap), rate(&dear));
    assert!(irqs(&dear) < 0.75 * irqs(&cheap), "interrupts per message {} -> {}", irqs(&cheap), irqs(&dear));
}

/// A copy-bound receiver seldom drains its ring during a 4 MiB pull, so
/// NAPI seldom re-arms and `disabled` takes far fewer interrupts than there
/// are pull replies (2873 per message at MTU 1500): its large-message
/// throughput pays no per-packet receive interrupt. (Transmit completions
/// are reaped in the poll here, so that only receive interrupts count.)
#[test]
fn a_copy_bound_receiver_polls_through_a_large_pull() {
    let m = pingpong("disabled", 4 << 20, 4, "[host]\ntx_reap = \"napi\"\n");
    let per_msg = m.get("interrupts_per_msg").unwrap();
    assert!(per_msg < 2873.0 / 3.0, "{per_msg} interrupts per 4 MiB message");
}

/// `tx_reap = "hard-irq"` (myri10ge's structure, the `omx2009` default):
/// transmit completions interrupt even while the poll runs (the sender of
/// a 4 MiB message takes many more interrupts), and the hard handler reaps
/// them before the softirq, on the path of the next marked interrupt:
/// `openmx` 0 B latency pays one reap (a few lines), `disabled` (reaped by
/// its own earlier interrupt) does not; in the poll (`napi`) they are equal.
#[test]
fn hard_irq_reaping_puts_the_reap_on_the_marked_path() {
    let irqs = |reap: &str| {
        pingpong("disabled", 4 << 20, 4, &format!("[host]\ntx_reap = \"{reap}\"\n")).get("interrupts_per_msg").unwrap()
    };
    let (napi, hard) = (irqs("napi"), irqs("hard-irq"));
    // 816 against 692 on omx2009: the poll's own re-arms are as many in both.
    assert!(hard > 1.1 * napi, "interrupts per 4 MiB message: napi {napi}, hard-irq {hard}");
    // The reap alone: the kernel paths' footprints (`cache.path_footprints`,
    // which every interrupt of `disabled` pays too) off.
    let lat = |s: &str, reap: &str| {
        let extra =
            format!("[host]\ntx_reap = \"{reap}\"\n[platform.cache]\npath_footprints = false\nnapi_lines = 1\n");
        pingpong(s, 0, 200, &extra).get("latency_us").unwrap()
    };
    let (d, o) = (lat("disabled", "hard-irq"), lat("openmx", "hard-irq"));
    assert!(o > d + 0.3 && o < 1.1 * d, "hard-irq: openmx {o} vs disabled {d}");
    let (dn, on) = (lat("disabled", "napi"), lat("openmx", "napi"));
    assert!((on - dn).abs() < 0.5, "napi: openmx {on} vs disabled {dn}");
}

/// Send-path contention: a stream under `disabled` reaps each completion on
/// another core while the sender keeps sending, so the two fight over the
/// transmit state; a ping-pong reaps long before its next send, and
/// `timeout` reaps once per batch. The extra transfers cut the `disabled`
/// stream by more than a fifth, `timeout` by less than a tenth, and cost
/// the ping-pong nothing (with `ISOLATED` costs, so that the sender is the
/// stream's limit).
#[test]
fn send_path_contention_costs_a_stream_not_a_ping_pong() {
    let cont = |n: u32| format!("[platform.cache]\ntx_contention_lines = {n}\n{ISOLATED}");
    let rate = |s: &str, n: u32| stream(s, 0, 5000, &cont(n)).get("msg_rate_per_s").unwrap();
    let contended = |s: &str, n: u32| stream(s, 0, 5000, &cont(n)).get("host0_tx_contended").unwrap();
    let (free, dear) = (rate("disabled", 0), rate("disabled", 22));
    assert!(dear < 0.8 * free, "disabled stream: {free} -> {dear} msg/s");
    let (tfree, tdear) = (rate("timeout", 0), rate("timeout", 22));
    assert!(tdear > 0.9 * tfree, "timeout stream: {tfree} -> {tdear} msg/s");
    assert!(contended("disabled", 22) > 10.0 * contended("timeout", 22).max(1.0));
    let lat = |n: u32| pingpong("disabled", 0, 200, &cont(n)).get("latency_us").unwrap();
    assert_eq!(lat(0), lat(22), "a ping-pong never reaps while it sends");
}

#[test]
fn stream_and_multiqueue_firmware_spend_more_nic_time_per_frame() {
    // [OMX-COAL] IV-C2: the stream firmware "requires more work in the NIC";
    // [OMX-MQ] 4.2: the multiqueue firmware does more than the single-queue one.
    let fw = |strategy: &str, steering: &str| {
        run(&format!(
            "[nic]\ncoalescing = \"{strategy}\"\nsteering = \"{steering}\"\n[workload]\nkind = \"stream\"\nsize_bytes = 0\nmessages = 2000\n"
        ))
        .get("host1_nic_rx_ns_per_frame")
        .unwrap()
    };
    let (openmx, stream) = (fw("openmx", "single-rr"), fw("stream", "single-rr"));
    assert!(stream > openmx + 40.0, "NIC ns per frame: stream {stream}, openmx {openmx}");
    let mq = fw("openmx", "multiqueue");
    assert!(mq > openmx + 100.0, "NIC ns per frame: multiqueue {mq}, single queue {openmx}");
}

#[test]
fn stream_defers_on_back_to_back_fragments_and_fails_on_a_small_gap() {
    // [OMX-COAL] IV-C4: the firmware defers "by 3 or 4 packets but it fails
    // to do so as soon a small delay between packets appears". The sender
    // hands a medium message to the driver one fragment per ioctl, about
    // 1.37 us each on omx2009 (1.22 us of wire per 1500 B frame); the
    // receiving firmware + DMA of a full frame takes about 1.6 us, so the
    // next fragment has arrived whole when the one before completes. A send
    // path 0.3 us slower per fragment leaves a gap the DMA does not cover.
    // The fallback timer starts at the first unreported frame: no interrupt
    // from it lands inside a message.
    let success = |driver_tx_ns: u32| {
        run(&format!(
            "[platform.host]\ndriver_tx_ns = {driver_tx_ns}.0\n[nic]\ncoalescing = \"stream\"\ntimeout_mode = \"absolute\"\n[protocol]\nmisorder_degree = 3\n[workload]\nkind = \"pingpong\"\nsize_bytes = 32768\niterations = 20\nwarmup = 1\n"
        ))
        .get("deferral_success_rate")
        .unwrap()
    };
    assert_eq!(success(650), 1.0, "back to back");
    assert_eq!(success(950), 0.0, "a 0.3 us gap between fragments");
}

#[test]
fn a_saturated_receive_bottom_half_hides_the_policy_at_32_kib() {
    // The receiver's bottom half (driver, handler, copy of each 1468 B
    // fragment into the event ring) is slower per frame than the sender's
    // one ioctl per fragment: its ring never drains, NAPI never re-arms the
    // receive claim, and no policy gets to raise a receive interrupt. What
    // interrupts is the transmit completion of the receiver's explicit acks
    // (one per `library.ack_after` = 4 messages, reaped in the hard handler).
    // The kernel tick is off: its seeded instants fall at other points of
    // each policy's run and move the rates in the 7th digit, where this
    // test asks them to be equal because no policy decides anything.
    // Each 32 KiB MPI message is one medium Open-MX message (the MTL
    // path: ob1's match header would make it a rendezvous).
    let no_tick = "[platform.host.tick]\nhz = 0\n[platform.library]\nmpi_path = \"mtl\"\n";
    let m = |s: &str| stream(s, 32768, 600, no_tick);
    let (timeout, openmx, stream_) = (m("timeout"), m("openmx"), m("stream"));
    let rate = |x: &nicsim::Metrics| x.get("msg_rate_per_s").unwrap();
    let irq = |x: &nicsim::Metrics| x.get("interrupts_per_msg").unwrap();
    assert_eq!(rate(&timeout), rate(&openmx));
    assert_eq!(rate(&openmx), rate(&stream_));
    for x in [&timeout, &openmx, &stream_] {
        assert!((irq(x) - 0.25).abs() < 0.01, "receiver interrupts per message {}", irq(x));
    }
    // Without those transmit-completion interrupts the receiver raises
    // (almost) none at all.
    let quiet = stream("openmx", 32768, 600, &format!("{no_tick}[platform.nic]\ntx_done_interrupts = false\n"));
    assert!(irq(&quiet) < 0.01, "receiver interrupts per message without tx-done: {}", irq(&quiet));
}

/// Costs pinned where a test isolates one mechanism from the calibration:
/// the interrupt delivered at once (an MSI and an APIC dispatch, no more)
/// and the library's per-message work small, so that neither batches frames
/// nor limits a stream by itself.
pub(crate) const ISOLATED: &str =
    "[platform.nic]\nirq_delivery_ns = 250.0\n[platform.library]\nsend_ns = 300.0\nevent_ns = 250.0\n";

/// The interrupt's delivery latency (`nic.irq_delivery_ns`, fitted jointly
/// to both Open-MX studies) is time, not CPU: under a flood with coalescing
/// disabled, frames gather while the interrupt is on its way, so each
/// interrupt serves more of them and the receive stack costs less per
/// packet; a 0 B ping-pong pays it once each way, without CPU.
#[test]
fn a_later_interrupt_batches_a_flood_and_adds_latency_not_cpu() {
    let flood = |d: u32| {
        super::run(&format!(
            "[platform.nic]\nirq_delivery_ns = {d}.0\n[nic]\ncoalescing = \"disabled\"\n[host]\nsoaker = true\n\
             [workload]\nkind = \"flood\"\npackets = 4000\ngap_ns = 1000\n"
        ))
    };
    let (near, far) = (flood(250), flood(3000));
    let per = |m: &nicsim::Metrics, k: &str| m.get(k).unwrap();
    assert!(
        per(&far, "interrupts_per_msg") < 0.7 * per(&near, "interrupts_per_msg"),
        "interrupts per packet {} -> {}",
        per(&near, "interrupts_per_msg"),
        per(&far, "interrupts_per_msg")
    );
    assert!(per(&far, "overhead_ns_per_packet") < per(&near, "overhead_ns_per_packet"));
    let lat = |d: u32| {
        super::run(&format!(
            "[platform.nic]\nirq_delivery_ns = {d}.0\n[nic]\ncoalescing = \"disabled\"\n[protocol]\nmpi = false\n\
             [workload]\nkind = \"pingpong\"\niterations = 200\n"
        ))
        .get("latency_us")
        .unwrap()
    };
    let added = lat(3000) - lat(250);
    assert!((added - 2.75).abs() < 0.3, "one-way latency grew by {added} us for 2.75 us of delivery");
}

#[test]
fn open_mx_on_lci2000_moves_every_frame_by_dma_on_its_hosts_shared_bus() {
    // lci2000's NIC has one PCI bus for both DMA directions (`nic.dma_shared_bus`,
    // `host::bus`): each frame is one transmit DMA on its sender's bus and one
    // receive DMA on its receiver's. Large messages queue their DMAs on the bus.
    let m = super::run(
        "preset = \"lci2000\"\n[workload]\nkind = \"pingpong\"\nsize_bytes = 65536\niterations = 20\nwarmup = 2\n",
    );
    let get = |k: &str| m.get(k).unwrap_or_else(|| panic!("{k} not reported"));
    let frames = get("frames");
    for i in 0..2 {
        assert_eq!(get(&format!("host{i}_dmas")), frames, "host {i}: one DMA per frame sent or received");
        assert!(get(&format!("host{i}_bus_wait_us")) > 0.0, "host {i}: no DMA waited for the bus");
        let busy = get(&format!("host{i}_bus_busy_frac"));
        assert!(busy > 0.0 && busy < 1.0, "host {i}: bus busy {busy}");
        assert_eq!(get(&format!("host{i}_pio_reads")) + get(&format!("host{i}_pio_writes")), 0.0);
    }
    assert_eq!(get("host0_dma_bytes"), get("host1_dma_bytes"), "a ping-pong moves the same bytes both ways");
    // A NIC with a DMA engine per direction (omx2009) has no bus to report.
    let omx = super::pingpong("disabled", 65536, 5, "");
    assert!(omx.get("host0_dmas").is_none());
}

#[test]
fn tx_dim_moves_under_a_stream_it_sends() {
    // modern runs TX DIM (mlx5's default): the sender's transmit completions
    // carry their bytes into its samples, so its profile leaves the start
    // (TX EQE profile 1, 8 us); the receiver sends nothing but acks.
    let m = run("preset = \"modern\"\n[workload]\nkind = \"stream\"\nsize_bytes = 4096\nmessages = 20000\n");
    let sender = m.get("host0_tx_coalesce_delay_us").expect("TX DIM reports its delay");
    assert_ne!(sender, 8.0, "the sender's TX DIM stayed at its start profile");
}
