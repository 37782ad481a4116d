//! Runs that used to stall finish: a suspended interrupt comes back when
//! its busy poller stops (Linux's irq_suspend_timeout), pull re-requests get
//! the tails of an overflowed ring through, and a run whose protocol gives
//! up ends with an error naming what gave up.

use super::run;

/// IS on 3 hosts of 3 ranks, busy polling with IRQ suspension, 16 % loss:
/// a lost ack makes a peer resend to a host whose pollers had all finished,
/// while its interrupt was still suspended; the suspension's timer enables
/// it again and the resent frames are handled.
#[test]
fn irq_suspension_under_loss_finishes() {
    let m = run("preset = \"omx2009\"\nseed = 731644238\n[platform.topology]\nhosts = 3\n\
         [host]\nbusy_poll = true\nwait = \"poll\"\nirq_suspend_timeout_us = 100.9\n\
         [nic]\nsteering = \"single-rr\"\n[protocol]\nloss = 0.156\n\
         [workload]\nkind = \"nas-is\"\nclass = \"S\"\niterations = 1\nprocs_per_host = 3\n");
    assert!(m.get("dropped_loss").unwrap() > 0.0, "frames were lost");
    assert!(m.get("interrupts").unwrap() > 0.0, "the interrupt came back");
}

/// With multiqueue each process busy-polls its own queue: a frame wakes the
/// poller of its queue (not another host's first poller), so all-to-all
/// under loss finishes.
#[test]
fn multiqueue_busy_pollers_each_see_their_queue() {
    let m = run("preset = \"modern\"\nseed = 3170611280\n\
         [host]\nbusy_poll = true\nwait = \"poll\"\nirq_suspend_timeout_us = 18.2\n\
         [nic]\nsteering = \"multiqueue\"\n[protocol]\nloss = 0.107\n\
         [workload]\nkind = \"alltoall\"\niterations = 2\nprocs_per_host = 4\nsize_bytes = 3876\n");
    assert!(m.get("dropped_loss").unwrap() > 0.0);
}

/// IS on emo2004 at MTU 576 with a 32-slot ring: the 4 outstanding pull
/// blocks (128 replies) overflow the ring at every burst. Re-requests that
/// start at the first missing reply get the dropped tails through; whole
/// blocks asked again dropped the same tails forever.
#[test]
fn pulls_through_a_32_slot_ring_complete() {
    for seed in [3115849269u64, 1776116883] {
        let m = run(&format!(
            "preset = \"emo2004\"\nseed = {seed}\n[platform.nic]\nring_slots = 32\n[platform.link]\nmtu = 576\n\
             [workload]\nkind = \"nas-is\"\nclass = \"S\"\niterations = 1\n"
        ));
        assert!(m.get("dropped_ring_full").unwrap() > 0.0, "the ring overflowed (seed {seed})");
    }
}

/// A configured resend delay of 10 µs: Open-MX's limits (a thousand resend
/// delays for an acknowledgement, and as long for a pull) are 10 ms, and a
/// 32 MiB pull takes longer; the pull timer (100 µs) finds it past its
/// deadline. The run ends with the error of the stage that gave up, naming
/// the key, instead of looping.
#[test]
fn a_give_up_ends_the_run_with_a_named_error() {
    let text = "preset = \"omx2009\"\n[platform.library]\nresend_us = 10.0\npull_timeout_us = 100.0\n\
                [workload]\nkind = \"pingpong\"\nsize_bytes = 33554432\niterations = 2\nwarmup = 0\n";
    let e = nicsim::run_toml(text).expect_err("the transfer outlasts the limits").to_string();
    assert!(e.starts_with("pull timed out: host 1 pulled 33554432 bytes from host 0"), "{e}");
    assert!(e.contains("library.resend_us") && !e.contains('\n'), "{e}");
}
