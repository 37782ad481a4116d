//! Link-level back-pressure (`nic.flow_control`, issue 34) in the Open-MX
//! world: a receiver whose ring is too small for its traffic drops frames
//! and waits for Open-MX's resend and pull timers without it, and drops
//! none with it; the waiting frames enter the NIC in the order they
//! arrived; with flow control on and nothing held a run is unchanged. The
//! frames a full ring drops are instants of the timeline.

use super::trace::DropClass;
use super::{run_traced, TraceCfg, What, TRACK_NIC_TX, TRACK_RX_QUEUE};
use crate::time::Instant;
use crate::{interrupt, Metrics, Scenario};
use std::collections::HashMap;

fn get(m: &Metrics, key: &str) -> f64 {
    m.get(key).unwrap_or_else(|| panic!("no metric {key}"))
}

/// Two hosts exchanging 64 KiB messages (pulls: replies fill the big
/// ring, pull requests and notifies the small one) on rings of 32
/// buffers, the least a pull block needs: a pull window (4 blocks) does
/// not fit.
fn exchange(flow_control: bool) -> String {
    format!(
        "preset = \"omx2009\"\n[platform.nic]\nring_slots = 32\n[nic]\nflow_control = {flow_control}\n\
         [workload]\nkind = \"exchange\"\nsize_bytes = 65536\niterations = 20\n"
    )
}

fn run(text: &str) -> Metrics {
    crate::run_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn a_full_ring_drops_and_times_out_without_flow_control_and_waits_with_it() {
    let off = run(&exchange(false));
    let on = run(&exchange(true));
    assert!(get(&off, "dropped_ring_full") > 0.0, "the tiny ring drops without flow control");
    assert!(off.get("flow_control_held").is_none(), "the metrics appear only with flow control");
    assert_eq!(get(&on, "dropped"), 0.0);
    assert!(get(&on, "flow_control_held") > 0.0);
    assert_eq!(get(&on, "flow_control_overflow"), 0.0);
    let wait_max = get(&on, "flow_control_wait_us_max");
    assert!(wait_max > 0.0 && get(&on, "flow_control_wait_us_mean") <= wait_max);
    // Without flow control the dropped replies wait for Open-MX's 1 s pull
    // timer; with it, for the receiver's next poll.
    let (t_off, t_on) = (get(&off, "time_us"), get(&on, "time_us"));
    assert!(t_off > 1e5, "{t_off} us per iteration: a pull timeout");
    assert!(t_on * 100.0 < t_off, "{t_on} us against {t_off} us");
    assert!(wait_max < 1e4, "a frame waits for a poll, not a timer: {wait_max} us");
}

/// Frames leave host 0 in order on one link and reach host 1 in that order;
/// the waiting ones must enter host 1's NIC in that order too, the small
/// frames (pull requests, notifies: a ring of their own with room) behind
/// the replies held before them. The timeline pairs each frame's departure
/// (`FrameOut`) with the start of its DMA at host 1 (`FrameIn`).
#[test]
fn waiting_frames_enter_the_nic_in_arrival_order() {
    let s = Scenario::from_toml(&exchange(true)).unwrap();
    let all = TraceCfg { from: Instant::ZERO, until: Instant::from_ps(u64::MAX), cap: u64::MAX };
    let (m, t) = run_traced(&s, None, &mut interrupt::never, Some(all)).unwrap();
    assert!(get(&m, "flow_control_held") > 0.0);
    let records = t.expect("a timeline").into_records();
    let left: HashMap<u32, u64> = records
        .iter()
        .filter(|r| r.what == What::FrameOut && r.host == 0 && r.track == TRACK_NIC_TX)
        .map(|r| (r.id, r.ts))
        .collect();
    let mut entered: Vec<(u64, u64)> = records
        .iter()
        .filter(|r| r.what == What::FrameIn && r.host == 1)
        .filter_map(|r| left.get(&r.id).map(|&out| (r.ts, out)))
        .collect();
    entered.sort_unstable();
    assert!(entered.len() > 1000, "{} frames paired", entered.len());
    for w in entered.windows(2) {
        assert!(w[0].1 <= w[1].1, "a frame sent at {} ps entered before one sent at {} ps", w[1].1, w[0].1);
    }
    // Every stop is an instant of a queue track, and every stop ended.
    let count = |what| records.iter().filter(|r| r.what == what).count();
    assert!(count(What::LinkStopped) > 0);
    assert_eq!(count(What::LinkStopped), get(&m, "flow_control_stops") as usize);
    assert_eq!(count(What::LinkRestarted), count(What::LinkStopped));
}

/// Without flow control every frame the tiny ring drops is an instant of
/// its receive queue's track, saying whether the pull still missed it (so
/// waits for a re-request) or already held it.
#[test]
fn a_full_rings_drops_are_timeline_instants_with_what_the_pull_lost() {
    let s = Scenario::from_toml(&exchange(false)).unwrap();
    let all = TraceCfg { from: Instant::ZERO, until: Instant::from_ps(u64::MAX), cap: u64::MAX };
    let (m, t) = run_traced(&s, None, &mut interrupt::never, Some(all)).unwrap();
    let records = t.expect("a timeline").into_records();
    let drops: Vec<_> = records.iter().filter(|r| r.what == What::RingDrop).collect();
    assert!(!drops.is_empty());
    assert_eq!(drops.len(), get(&m, "dropped_ring_full") as usize);
    assert!(drops.iter().all(|r| r.track == TRACK_RX_QUEUE && r.dur == 0));
    let class = |c: DropClass| drops.iter().filter(|r| r.arg == c as u32).count();
    let (wanted, unwanted, other) = (class(DropClass::Wanted), class(DropClass::Unwanted), class(DropClass::Other));
    assert_eq!(wanted + unwanted + other, drops.len());
    // The tiny ring drops replies of pulls that then wait for their timer.
    assert!(wanted > 0 && get(&m, "pull_timeouts") > 0.0, "{wanted} wanted replies dropped");
}

/// With room in the ring nothing waits: flow control changes no result.
#[test]
fn with_room_flow_control_changes_nothing() {
    let text = |fc: bool| {
        format!("[nic]\nflow_control = {fc}\n[workload]\nkind = \"stream\"\nsize_bytes = 1024\nmessages = 500\n")
    };
    let (off, on) = (run(&text(false)), run(&text(true)));
    assert_eq!(get(&on, "flow_control_held"), 0.0);
    for key in ["msg_rate_per_s", "interrupts", "sim_time_us", "events"] {
        assert_eq!(get(&off, key), get(&on, key), "{key}");
    }
}

#[test]
fn flow_control_needs_a_bound() {
    let e = crate::run_toml(
        "[platform.nic]\nflow_control_frames = 0\n[nic]\nflow_control = true\n[workload]\nkind = \"stream\"\n",
    )
    .unwrap_err();
    assert!(e.contains("nic.flow_control_frames") && e.contains("nic.flow_control = true"), "{e}");
}

/// The exchange of [`exchange`] with flow control on and a stopped link
/// that holds only `buffer` frames at the receiving NIC, the stop reaching
/// the sender or not, and the sender's qdisc and send ring.
fn paused(buffer: u32, to_sender: bool, qdisc: u32, ring: u32) -> String {
    format!(
        "preset = \"omx2009\"\n[platform.nic]\nring_slots = 32\nflow_control_frames = {buffer}\n\
         pause_to_sender = {to_sender}\ntx_queue_len = {qdisc}\ntx_ring_frames = {ring}\n[nic]\nflow_control = true\n\
         [workload]\nkind = \"exchange\"\nsize_bytes = 65536\niterations = 20\n"
    )
}

/// 802.3x PAUSE on a direct cable stops the sending NIC: what the
/// receiving NIC's small buffer cannot hold waits in the sender's send ring
/// and qdisc, so nothing is lost; a stop that reaches no sender overflows
/// the buffer and the pulls wait for their timer.
#[test]
fn a_stop_that_reaches_the_sender_keeps_what_the_nics_buffer_cannot() {
    let link_only = run(&paused(4, false, 1000, 420));
    let to_sender = run(&paused(4, true, 1000, 420));
    assert!(get(&link_only, "flow_control_overflow") > 0.0, "4 frames of buffer overflow");
    assert!(get(&link_only, "pull_timeouts") > 0.0);
    assert_eq!(get(&to_sender, "dropped"), 0.0);
    assert_eq!(to_sender.get("pull_timeouts").unwrap_or(0.0), 0.0);
    assert!(get(&to_sender, "flow_control_held") > 4.0, "more wait than the NIC's buffer holds");
    let (t_link, t_sender) = (get(&link_only, "time_us"), get(&to_sender, "time_us"));
    assert!(t_sender * 100.0 < t_link, "{t_sender} us against {t_link} us");
}

/// The stopped sender's qdisc is bounded: past `tx_queue_len` and the send
/// ring it drops, as `pfifo_fast` does, and the drop is the sender's, not
/// the receiving ring's.
#[test]
fn a_stopped_senders_full_qdisc_drops_at_the_sender() {
    let m = run(&paused(4, true, 32, 8));
    assert!(get(&m, "dropped_tx_queue") > 0.0);
    assert_eq!(get(&m, "dropped_ring_full"), 0.0);
    assert_eq!(get(&m, "flow_control_overflow"), 0.0, "the FIFO holds what the sender would");
    assert_eq!(get(&m, "dropped"), get(&m, "dropped_tx_queue"));
}

/// The firmware keeps the link stopped only while the host consumes
/// (`nic.flow_control_hold_us`): a limit longer than any wait changes
/// nothing; one shorter than the waits for a poll gives the stops up, and
/// what waited is dropped at the full ring and pulled again after the
/// timer.
#[test]
fn a_stop_past_its_hold_limit_drops_what_waits() {
    let held =
        |us: f64| run(&paused(4, true, 1000, 420).replace("[nic]\n", &format!("flow_control_hold_us = {us}\n[nic]\n")));
    let (mut never, mut long, short) = (held(0.0), held(1e6), held(0.05));
    let waits = get(&never, "flow_control_wait_us_max");
    assert!(waits > 0.05 && waits < 1e6, "{waits} us");
    // The limit's checks are events of their own: only the queue's peak sees them.
    never.values.remove("queue_peak");
    long.values.remove("queue_peak");
    assert_eq!(never, long, "a limit no wait reaches changes nothing");
    assert_eq!(get(&never, "flow_control_gave_up"), 0.0);
    assert!(get(&short, "flow_control_gave_up") > 0.0);
    assert!(get(&short, "flow_control_given_up_frames") > 0.0);
    assert!(get(&short, "dropped_ring_full") > 0.0, "dropped at the full ring, as without flow control");
    assert!(get(&short, "pull_timeouts") > 0.0);
    assert!(get(&short, "time_us") > 100.0 * get(&never, "time_us"));
}

/// A stop reaches the sending NIC only on a cable between two hosts.
#[test]
fn a_stop_reaches_the_sender_only_on_a_direct_cable() {
    let text = |extra: &str| {
        format!(
            "preset = \"omx2009\"\n[platform.nic]\npause_to_sender = true\n{extra}[nic]\nflow_control = true\n[workload]\nkind = \"stream\"\n"
        )
    };
    assert!(crate::run_toml(&text("")).is_ok());
    let e = crate::run_toml(&text("[platform.link]\nswitch_latency_ns = 300.0\n")).unwrap_err();
    assert!(e.contains("nic.pause_to_sender") && e.contains("direct cable"), "{e}");
    let e = crate::run_toml(&text("tx_queue_len = 0\n")).unwrap_err();
    assert!(e.contains("nic.pause_to_sender") && e.contains("nic.tx_queue_len = 0"), "{e}");
}
