//! Size: the benchmark scenarios of `nicsim bench --kind
//! alltoall|exchange|nas-is` are checked, large runs finish with their queues bounded by what is
//! in flight, and busy pollers are found without a scan of their host's
//! processes. (That each rank gets the same work at every size, and that
//! the bookkeeping per message does not grow with the rank count, is
//! tested inside the crate, on counters: `bench.rs`, `library/indexes.rs`.)

use super::run;
use nicsim::bench::{scale_max_procs, scale_scenario};

#[test]
fn bench_scenarios_refuse_sizes_out_of_range() {
    assert!(scale_scenario("alltoall", 1).unwrap_err().contains("procs"));
    assert!(scale_scenario("exchange", 1).unwrap_err().contains("procs"));
    assert!(scale_scenario("nas-is", 24).unwrap_err().contains("power of two"));
    assert!(scale_scenario("pingpong", 8).unwrap_err().contains("kind"));
    assert!(scale_max_procs("pingpong").is_err());
    // The largest size of each is a valid scenario, and the next is refused
    // by the bench itself, naming `procs`, not by the platform's host cap.
    for (kind, top) in [("alltoall", 1024), ("exchange", 1024), ("nas-is", 8192)] {
        assert_eq!(scale_max_procs(kind), Ok(top));
        nicsim::Scenario::from_toml(&scale_scenario(kind, top).unwrap()).unwrap();
        let e = scale_scenario(kind, top + 1).unwrap_err();
        assert!(e.contains("`procs`") && e.contains(&top.to_string()), "{e}");
    }
}

/// NAS IS class B on 64 ranks (8 hosts of 8, 32 KiB per pair): the
/// alltoallv sends 56 messages of 22 medium fragments into each host's
/// 1024-slot ring at once. It finishes, and what it holds stays bounded:
/// events pending, frames live (the 8 hosts' rings and what the wire and
/// the NICs hold), and the per-process queues.
#[test]
fn nas_is_class_b_on_64_ranks_finishes_with_bounded_queues() {
    let m = run("[platform.topology]\nhosts = 8\n[workload]\nkind = \"nas-is\"\nclass = \"B\"\nprocs_per_host = 8\niterations = 1\n");
    assert!(m.get("exec_time_s").unwrap() > 0.0);
    assert!(m.get("queue_peak").unwrap() < 10_000.0, "events pending {:?}", m.get("queue_peak"));
    for key in ["peak_frames_live", "peak_ring_slots", "peak_outbox", "peak_unexpected", "peak_early"] {
        let v = m.get(key).unwrap_or(0.0);
        assert!(v <= 16384.0, "{key} = {v}");
    }
}

/// A ping-pong keeps a handful of events queued however long the protocol
/// timers are: at Open-MX's 0.5 s resend delay each delayed ack used to
/// leave a resend event behind (hundreds queued per process).
#[test]
fn a_pingpong_keeps_a_handful_of_events_queued() {
    let m = run("[workload]\nkind = \"pingpong\"\niterations = 20000\n");
    assert!(m.get("queue_peak").unwrap() <= 16.0, "events pending {:?}", m.get("queue_peak"));
}

/// IMB Exchange, one rank per host on one switch: each rank talks to its
/// two neighbours whatever the size, so a run of 128 ranks is 16 runs of 8
/// side by side. A repetition takes the same simulated time, each message
/// the same events, and the events pending per rank are as many at both
/// sizes.
#[test]
fn an_exchange_does_the_same_per_rank_at_every_size() {
    let at = |hosts: u32| {
        run(&format!(
            "[platform.topology]\nhosts = {hosts}\n[workload]\nkind = \"exchange\"\nsize_bytes = 64\n\
             iterations = 50\nwarmup = 5\nprocs_per_host = 1\n"
        ))
    };
    let (small, large) = (at(8), at(128));
    let per_message = |m: &nicsim::Metrics, n: f64| m.get("events").unwrap() / (2.0 * 55.0 * n);
    assert!(small.get("time_us").unwrap() > 0.0);
    assert_eq!(small.get("time_us"), large.get("time_us"));
    let (a, b) = (per_message(&small, 8.0), per_message(&large, 128.0));
    assert!((a - b).abs() < 0.01 * a, "events per message: {a} at 8 ranks, {b} at 128");
    let (qa, qb) = (small.get("queue_peak").unwrap() / 8.0, large.get("queue_peak").unwrap() / 128.0);
    assert!(qb <= 1.1 * qa, "events pending per rank: {qa} at 8 ranks, {qb} at 128");
}

/// Large messages (pulls) keep as many events queued in a long run as in a
/// short one: 16 ranks on 2 hosts, all-to-all of 40,000 B, 10 and 40
/// repetitions (the first drops at full rings come after 10, and the peak
/// stays at 1,058 from 20 on). A pull handle's timer event is not cancelled
/// when its pull completes; if every pull queued one of its own, a handle
/// reused before its last event fired would carry one event more per pull,
/// re-armed each time it found the handle in use (804 events pending after
/// 5 repetitions, 2,706 after 20, measured so).
#[test]
fn pulls_keep_as_many_events_queued_in_a_long_run_as_in_a_short_one() {
    let peak = |reps: u32| {
        let m = run(&format!(
            "[platform.topology]\nhosts = 2\n[platform.library]\nmpi_path = \"mtl\"\n[workload]\nkind = \"alltoall\"\nsize_bytes = 40000\n\
             iterations = {reps}\nwarmup = 0\n"
        ));
        m.get("queue_peak").unwrap()
    };
    // The queue reaches its largest by 40 repetitions (784 pending at 10,
    // 1,016 at 40 and at 80, measured on the 2009 paths' presets).
    let (short, long) = (peak(40), peak(80));
    assert!(long <= short * 1.1, "events pending: {short} after 40 repetitions, {long} after 80");
}

/// Busy polling with 32 processes on each of 2 hosts, all on one receive
/// queue (`single-rr`) or each on its own (`multiqueue`): a new descriptor
/// wakes the first process polling its queue, found in the host's set of
/// that queue's pollers rather than by a scan of the host's processes
/// (tests build with debug assertions, which check the set against such a
/// scan at every look). Pollers woken so take their frames at once, where
/// blocking ones wait for the interrupt and a wake-up: the all-to-all ends
/// sooner (1,204 against 1,441 us with `single-rr`, 432 against 441 with
/// `multiqueue`), with nothing dropped. The interrupts stay as many: the
/// NIC raises them for frames a poller already took (it does not see the
/// host's polls; only IRQ suspension or deferral mask it).
#[test]
fn busy_pollers_are_found_by_their_queue_with_32_processes_a_host() {
    for steering in ["single-rr", "multiqueue"] {
        let run_with = |wait: &str| {
            run(&format!(
                "[platform.topology]\nhosts = 2\nsockets = 2\ncores_per_die = 16\n\
                 [host]\nbusy_poll = true\nwait = \"{wait}\"\n[nic]\nsteering = \"{steering}\"\n\
                 [workload]\nkind = \"alltoall\"\nsize_bytes = 64\niterations = 4\nwarmup = 0\nprocs_per_host = 32\n\
                 [platform.nic]\nirq_delivery_ns = 250.0\n[platform.library]\nsend_ns = 300.0\nevent_ns = 250.0\n\
                 mpi_send_ns = 482.0\nmpi_recv_ns = 1392.0\n"
            ))
        };
        let (poll, block) = (run_with("poll"), run_with("block"));
        let time = |m: &nicsim::Metrics| m.get("time_us").unwrap();
        assert_eq!(poll.get("dropped"), Some(0.0), "{steering}");
        assert!(time(&poll) < time(&block), "{steering}: {} us polling, {} us blocking", time(&poll), time(&block));
    }
}
