//! The 2009 send and receive paths' drop points, pull retransmission,
//! region pinning and wake-ups (docs/paths-2009.md, P2, P4, P5): each
//! mechanism shows in the run, and not with it off.

use super::run;

/// A stream of 1 MiB messages, 16 outstanding (`mx_stream`'s window), on
/// `omx2009` with `extra` tables.
fn mib_stream(extra: &str, messages: u64) -> nicsim::Metrics {
    run(&format!(
        "{extra}\n[workload]\nkind = \"stream\"\nsize_bytes = 1048576\nmessages = {messages}\nwarmup = 2\nwindow = 16\n"
    ))
}

#[test]
fn a_burst_of_pull_replies_beyond_the_senders_queue_drops_there_and_not_without_the_bound() {
    // 16 pulls x 4 blocks x 32 replies = 2,048 replies asked of the sender
    // at once, against a 10 Gb/s wire that takes 1.2 us a reply: the
    // backlog of a bound of 100 + 100 frames overflows, an unbounded one
    // never drops (the receive ring is made large enough to drop nothing).
    let big_ring = "[platform.nic]\nring_slots = 65536\n";
    let bounded = mib_stream(&format!("{big_ring}tx_queue_len = 100\ntx_ring_frames = 100\n"), 40);
    let unbounded = mib_stream(&format!("{big_ring}tx_queue_len = 0\n"), 40);
    let drops = |m: &nicsim::Metrics| m.get("dropped_tx_queue").unwrap_or(0.0);
    assert!(drops(&bounded) > 0.0, "a 200-frame transmit path drops part of a 2,048-reply burst");
    assert_eq!(drops(&unbounded), 0.0);
    assert_eq!(unbounded.get("dropped").unwrap(), 0.0, "nothing else drops");
    // What the sender dropped is asked again by the pulls' timers (1 s).
    assert!(bounded.get("pull_timeouts").unwrap() > 0.0);
}

#[test]
fn whole_block_rerequests_send_the_received_replies_again_and_missing_tails_do_not() {
    // A lossy wire: each timeout or early re-request of `whole-block` sends
    // the whole block, so the replies that had arrived come twice; the
    // `missing-tail` re-requests start at the first missing reply (an early
    // re-request still crosses replies on their way: both have some).
    let lossy = "seed = 3\n[protocol]\nloss = 0.01\n";
    let pp = |how: &str| {
        run(&format!(
            "{lossy}[platform.library]\npull_rerequest = \"{how}\"\n[workload]\nkind = \"pingpong\"\nsize_bytes = 1048576\niterations = 12\nwarmup = 1\n"
        ))
    };
    let (whole, tail) = (pp("whole-block"), pp("missing-tail"));
    let dup = |m: &nicsim::Metrics| m.get("duplicates").unwrap_or(0.0);
    assert!(dup(&whole) > 1.5 * dup(&tail), "duplicates: whole {} tail {}", dup(&whole), dup(&tail));
}

#[test]
fn a_large_message_pays_its_regions_pinning_page_by_page_on_both_sides() {
    // Coalescing off, so the critical path has no timer to absorb the
    // pinning: each one-way 234 KiB message pins 59 pages at the sender
    // (before its rendezvous) and 59 at the receiver (before its pull).
    let size = 234 * 1024;
    let pp = |pin: f64| {
        run(&format!(
            "[platform.library]\npin_page_ns = {pin}\n[nic]\ncoalescing = \"disabled\"\n[workload]\nkind = \"pingpong\"\nsize_bytes = {size}\niterations = 20\nwarmup = 2\n"
        ))
        .get("latency_us")
        .unwrap()
    };
    let (off, on) = (pp(0.0), pp(300.0));
    let expect = 2.0 * 59.0 * 0.3;
    let grew = on - off;
    assert!(grew > 0.8 * expect && grew < 1.3 * expect, "pinning added {grew} us, expected about {expect}");
}

#[test]
fn the_core_that_wakes_a_sleeper_on_another_core_pays_for_it() {
    // A 128 B stream whose receiver sleeps in the wait ioctl, interrupts
    // dealt round-robin: most events are posted from another core than the
    // sleeper's, and that core pays `wake_remote_ns` for each wake-up.
    let s = |ns: f64| {
        run(&format!(
            "[platform.host]\nwake_remote_ns = {ns}\n[host]\nwait = \"block\"\n[nic]\nsteering = \"single-rr\"\n[workload]\nkind = \"stream\"\nsize_bytes = 128\nmessages = 4000\nwarmup = 100\nwindow = 16\n"
        ))
    };
    let (off, on) = (s(0.0), s(2000.0));
    assert_eq!(off.get("host1_wakes_remote"), None, "no cost, nothing counted");
    let wakes = on.get("host1_wakes_remote").unwrap();
    assert!(wakes > 10.0, "the receiver was woken from other cores {wakes} times");
    let kernel = |m: &nicsim::Metrics| m.get("host1_kernel_us").unwrap();
    // The wakers' kernel time grows by at least 2 us a remote wake-up (the
    // run's other kernel work moves too, so only the lower bound is tight).
    assert!(kernel(&on) - kernel(&off) > 0.9 * wakes * 2.0, "kernel {} -> {}", kernel(&off), kernel(&on));
}

#[test]
fn pinning_the_next_send_lets_the_unmarked_rendezvous_miss_the_notifys_interrupt() {
    // [OMX-COAL] §IV-C3, Table II's marking runs: a 234 KiB ping-pong under
    // openmx with one packet class unmarked. Between the NOTIFY a host
    // sends and its next RNDV, the sender registers and pins the next
    // buffer (59 pages). With the pinning priced, that gap outlasts the
    // peer's interrupt and poll for the NOTIFY: an unmarked RNDV waits the
    // full 75 us timer, and the pull requests and last replies, pipelined 4
    // deep, matter less than it. With a flat setup cost the order turns
    // over.
    let t = |pin: f64, unmarked: &str| {
        run(&format!(
            "[platform.library]\npin_page_ns = {pin}\n[nic]\ncoalescing = \"openmx\"\n[protocol]\nmpi = false\nunmarked = [{unmarked}]\n[workload]\nkind = \"pingpong\"\nsize_bytes = 239616\niterations = 60\nwarmup = 2\n"
        ))
        .get("latency_us")
        .unwrap()
    };
    let on = |u: &str| t(150.0, u);
    let (none, rndv, pull, last) = (on(""), on("\"rndv\""), on("\"pull\""), on("\"last_pull_reply\""));
    assert!(rndv - none >= 0.8 * 75.0, "the RNDV waits the timer: {rndv} vs {none}");
    assert!(pull < rndv && last < rndv, "pull {pull}, last reply {last}, rndv {rndv}");
    let off = |u: &str| t(0.0, u);
    // Without the pinning the RNDV follows the NOTIFY sooner: unmarking it
    // costs less than with the pinning, and no more than unmarking the pull
    // requests (with the presets' hosts 49 against 61 us, and 49 against 53
    // us): §IV-C3's order turns over.
    let (none0, rndv0, pull0) = (off(""), off("\"rndv\""), off("\"pull\""));
    assert!(rndv0 - none0 < rndv - none, "without pinning {rndv0} vs {none0}, with it {rndv} vs {none}");
    assert!(pull0 >= rndv0, "without pinning: pull {pull0}, rndv {rndv0}");
}
