//! Linux's NAPI knobs in the Open-MX world, each against the kernel's
//! behaviour it follows: threaded NAPI (`host.napi_threaded`, `[[host.napi]]
//! threaded`) moves the poll off the interrupted core into a kernel thread
//! the scheduler places, behind a wake-up; `busy_poll_stop`'s extra driver
//! poll ends each busy-poll loop that found data, with the interrupt's
//! re-arm.

use super::{run_traced, TraceCfg, What};
use crate::time::Instant;
use crate::{interrupt, Metrics, Scenario};

fn get(m: &Metrics, key: &str) -> f64 {
    m.get(key).unwrap_or_else(|| panic!("no metric {key}"))
}

/// Runs `text` with a whole timeline: the metrics and host 1's records of
/// kind `what` as (core, duration in ps).
fn traced(text: &str, what: What) -> (Metrics, Vec<(u16, u64)>) {
    let s = Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let all = TraceCfg { from: Instant::ZERO, until: Instant::from_ps(u64::MAX), cap: u64::MAX };
    let (m, t) = run_traced(&s, None, &mut interrupt::never, Some(all)).unwrap();
    let records = t.expect("a timeline").into_records();
    let of = records.iter().filter(|r| r.host == 1 && r.what == what).map(|r| (r.track, r.dur)).collect();
    (m, of)
}

/// A `modern` ping-pong of 0 B whose processes spin on the core the
/// queue's interrupt reaches (core 0), coalescing off, `host` appended.
fn pingpong_on_the_irq_core(host: &str) -> String {
    format!(
        "preset = \"modern\"\n[nic]\ncoalescing = \"disabled\"\nsteering = \"single-core\"\nirq_core = 0\n\
         [host]\nbinding = \"SC\"\n{host}\n[workload]\nkind = \"pingpong\"\nsize_bytes = 0\niterations = 200\nwarmup = 10\n"
    )
}

/// Threaded NAPI: the hard IRQ on core 0 wakes the queue's kernel thread,
/// which the scheduler places on an idle core of the same die (core 0 runs
/// the spinning process), so every NAPI poll of host 1 runs off core 0,
/// where in softirq context all run on core 0; the wake-up and the switch
/// into the thread make each one-way trip longer.
#[test]
fn threaded_napi_polls_on_an_idle_core_behind_a_wake_up() {
    let (soft, soft_polls) = traced(&pingpong_on_the_irq_core(""), What::Handler);
    let (thr, thr_polls) = traced(&pingpong_on_the_irq_core("napi_threaded = true"), What::Handler);
    assert!(!soft_polls.is_empty() && !thr_polls.is_empty());
    assert!(soft_polls.iter().all(|&(core, _)| core == 0), "softirq: on the interrupted core");
    assert!(thr_polls.iter().all(|&(core, _)| core != 0 && core < 14), "threaded: off core 0, in its die");
    let (hard_soft, hard_thr) = (get(&soft, "interrupts"), get(&thr, "interrupts"));
    assert_eq!(hard_soft, hard_thr, "the same interrupts");
    let (a, b) = (get(&soft, "latency_us"), get(&thr, "latency_us"));
    assert!(b > a + 0.5, "the thread's wake-up and switch: {a} us -> {b} us");
}

/// The same per queue (`[[host.napi]] threaded`), and a queue set apart
/// with `threaded = false` under a threaded host stays in softirq context.
#[test]
fn threaded_napi_per_queue_overrides_the_host() {
    let on = pingpong_on_the_irq_core("[[host.napi]]\nqueue = 0\nthreaded = true");
    let (_, polls) = traced(&on, What::Handler);
    assert!(!polls.is_empty() && polls.iter().all(|&(core, _)| core != 0));
    let off = pingpong_on_the_irq_core("napi_threaded = true\n[[host.napi]]\nqueue = 0\nthreaded = false");
    let (_, polls) = traced(&off, What::Handler);
    assert!(!polls.is_empty() && polls.iter().all(|&(core, _)| core == 0));
}

/// `busy_poll_stop`: each busy poll that took a received frame is followed
/// by one more driver poll, which re-arms the interrupt when it ends short
/// of its budget: a busy-poll segment of exactly `napi_poll` + `irq_rearm`
/// (827 ns here, to be told apart) when it found the ring empty, or
/// `irq_rearm` (777 ns) after the entries it took. Host 1 receives 210
/// messages; an interrupt that scheduled NAPI first takes the others.
#[test]
fn a_busy_poll_loop_ends_with_busy_poll_stops_poll_and_rearm() {
    let text = "preset = \"modern\"\n[platform.host]\nirq_rearm_ns = 777.0\nnapi_poll_ns = 50.0\n\
                [host]\nbusy_poll = true\n[workload]\nkind = \"pingpong\"\nsize_bytes = 0\niterations = 200\nwarmup = 10\n";
    let (_, polls) = traced(text, What::BusyPoll);
    let (empty, after) =
        (polls.iter().filter(|p| p.1 == 827_000).count(), polls.iter().filter(|p| p.1 == 777_000).count());
    assert!(empty + after >= 100, "{empty} + {after} busy_poll_stop polls ending in the re-arm");
    assert!(empty + after <= 210, "{empty} + {after}: at most one per loop");
}
