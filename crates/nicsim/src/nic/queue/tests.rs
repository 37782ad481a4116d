//! The receive queue's tests: the watchdog, busy polling and NAPI settings
//! as the queue answers them.

use super::*;
use crate::nic::watchdog::Raises;

#[test]
fn the_watchdog_holds_the_policys_raise_until_an_expiry_without_progress() {
    let mut q = RxQueue::new(Box::new(coalesce::Disabled), 32, 0);
    let us = Duration::from_us;
    q.watchdog = Some(Box::new(Watchdog::new(us(10), Raises::Held)));
    let t0 = Instant::ZERO;
    q.push_rx(0, true, 1);
    let (at, gen) = q.watchdog_delivered(t0).unwrap();
    assert_eq!(at, t0 + us(10));
    assert!(!q.apply(t0, Decision::RAISE).raise, "held");
    // A busy poll takes the frame: the expiry and its fetch find it taken.
    assert_eq!(q.take(), Some(RingEntry::Rx(0)));
    assert!(q.watchdog_expires(gen));
    let (back, gen) = q.watchdog_fetch(at + us(1)).unwrap();
    let (out, next) = q.watchdog_fetched(back, gen);
    assert!(!out.raise && next.is_none());
    assert_eq!(q.interrupts, 0);
    // Nobody takes the next frame: the held raise goes out at the fetch's return.
    q.push_rx(1, true, 1);
    let (at, gen) = q.watchdog_delivered(back).unwrap();
    assert!(!q.apply(back, Decision::RAISE).raise);
    assert!(q.watchdog_expires(gen) && !q.watchdog_expires(gen + 1));
    let (back, gen) = q.watchdog_fetch(at + us(1)).unwrap();
    let (out, next) = q.watchdog_fetched(back, gen);
    assert!(out.raise && out.rx && next.is_some());
    assert_eq!(q.interrupts, 1);
}

/// One busy poll takes up to its budget of entries (`napi_busy_loop`'s
/// `BUSY_POLL_BUDGET`), for the process that started it only; having
/// taken a received frame, the loop ends with `busy_poll_stop`'s extra
/// poll of the same budget, which, spending it, schedules NAPI.
#[test]
fn a_busy_poll_takes_up_to_its_budget_then_busy_poll_stop_polls_once_more() {
    let mut q = RxQueue::new(Box::new(coalesce::Disabled), 32, 0);
    let t0 = Instant::ZERO;
    for f in 0..20 {
        q.push_rx(f, true, 1);
    }
    let entry = |f, poll| BusyStep::Entry { entry: RingEntry::Rx(f), poll };
    let poll = q.busy_poll(t0, Duration::ZERO, 8, 3).unwrap();
    assert_eq!(poll.entry, Some(RingEntry::Rx(0)));
    assert_eq!(q.busy_poll_more(2), None, "another process's poll");
    let more: Vec<_> = std::iter::from_fn(|| q.busy_poll_more(3)).take(8).collect();
    let mut want: Vec<_> = (1..8).map(|f| entry(f, false)).collect();
    want.push(entry(8, true));
    assert_eq!(more, want, "8 entries in one poll, then busy_poll_stop's driver poll begins");
    let stop: Vec<_> = std::iter::from_fn(|| q.busy_poll_more(3)).collect();
    let mut want: Vec<_> = (9..16).map(|f| entry(f, false)).collect();
    want.push(BusyStep::Stop { poll: false, rearm: false, napi: true });
    assert_eq!(stop, want, "its whole budget: NAPI is scheduled (rc == budget)");
    assert!(q.napi_scheduled());
    assert!(q.busy_poll(t0, Duration::ZERO, 8, 3).is_none(), "NAPI owns the queue");
}

/// `busy_poll_stop`'s poll short of its budget ends in the re-arm
/// (napi_complete_done); the same with the interrupt suspended ends in
/// nothing (the suspension decides); a poll of transmit completions
/// alone leaves the socket without data and the loop goes on.
#[test]
fn busy_poll_stop_rearms_unless_suspended_and_follows_only_received_data() {
    let t0 = Instant::ZERO;
    let mut q = RxQueue::new(Box::new(coalesce::Disabled), 32, 0);
    q.push_rx(0, true, 1);
    q.push_rx(1, true, 1);
    assert_eq!(q.busy_poll(t0, Duration::ZERO, 64, 0).unwrap().entry, Some(RingEntry::Rx(0)));
    assert_eq!(q.busy_poll_more(0), Some(BusyStep::Entry { entry: RingEntry::Rx(1), poll: false }));
    assert_eq!(q.busy_poll_more(0), Some(BusyStep::Stop { poll: true, rearm: true, napi: false }));
    assert_eq!(q.busy_poll_more(0), None);
    assert!(!q.napi_scheduled());

    let mut s = RxQueue::new(Box::new(coalesce::Disabled), 32, 0);
    s.push_rx(0, true, 1);
    assert!(s.busy_poll(t0, Duration::from_us(100), 64, 0).is_some());
    assert_eq!(s.busy_poll_more(0), Some(BusyStep::Stop { poll: true, rearm: false, napi: false }));
    s.push_rx(1, true, 1);
    s.push_rx(2, true, 1);
    assert!(s.busy_poll(t0, Duration::from_us(100), 1, 0).is_some());
    assert_eq!(s.busy_poll_more(0), Some(BusyStep::Entry { entry: RingEntry::Rx(2), poll: true }));
    assert_eq!(s.busy_poll_more(0), None, "budget spent while suspended: skip_schedule");
    assert!(!s.napi_scheduled());

    let mut t = RxQueue::new(Box::new(coalesce::Disabled), 32, 0);
    t.tx_completed();
    assert_eq!(t.busy_poll(t0, Duration::ZERO, 8, 0).unwrap().entry, Some(RingEntry::TxDone(1)));
    assert_eq!(t.busy_poll_more(0), None, "no data: no busy_poll_stop");
}

/// `SO_BUSY_POLL_BUDGET`: the budget is what one poll takes; 1 against
/// 64 on ten waiting frames.
#[test]
fn the_busy_poll_budget_is_what_one_poll_takes() {
    let t0 = Instant::ZERO;
    let taken = |budget| {
        let mut q = RxQueue::new(Box::new(coalesce::Disabled), 32, 0);
        for f in 0..10 {
            q.push_rx(f, true, 1);
        }
        q.busy_poll(t0, Duration::ZERO, budget, 0).unwrap();
        1 + std::iter::from_fn(|| q.busy_poll_more(0))
            .take_while(|s| matches!(s, BusyStep::Entry { poll: false, .. }))
            .count()
    };
    assert_eq!((taken(1), taken(64)), (1, 10));
}

/// Two queues with NAPI settings of their own (`[[host.napi]]`) defer
/// and suspend as each says, whatever the host-wide values passed.
#[test]
fn a_queue_with_napi_settings_of_its_own_uses_them() {
    let us = Duration::from_us;
    let own = |defer_hard_irqs, gro_flush, irq_suspend| {
        RxQueue::new(Box::new(coalesce::Disabled), 32, 0).with_napi(Some(QueueNapi {
            defer_hard_irqs,
            gro_flush,
            irq_suspend,
            threaded: false,
        }))
    };
    let (mut deferring, mut plain) = (own(2, us(20), us(100)), own(0, Duration::ZERO, Duration::ZERO));
    // The host-wide values passed (no deferral, no suspension) yield to
    // the queue's own.
    assert!(deferring.napi_poll_empty(true, 0, false), "defers: its own defer-hard-irqs 2");
    assert!(!plain.napi_poll_empty(true, 5, true), "re-arms: its own defer-hard-irqs 0");
    assert_eq!((deferring.gro_flush(us(7)), plain.gro_flush(us(7))), (us(20), Duration::ZERO));
    let t0 = Instant::ZERO;
    assert_eq!(deferring.busy_poll(t0, Duration::ZERO, 8, 0).unwrap().suspend_timer, Some(t0 + us(100)));
    assert_eq!(plain.busy_poll(t0, us(50), 8, 0).unwrap().suspend_timer, None);
    let host = RxQueue::new(Box::new(coalesce::Disabled), 32, 0);
    assert_eq!(host.gro_flush(us(7)), us(7), "no settings of its own: the host's");
}

/// myri10ge's split claims: a marked frame whose DMA completes while the
/// poll that took the frames before it is still under way (the receive
/// claim masked) is reported by no interrupt of its own: the interrupt
/// claim is armed and a transmit completion waits, so the NIC raises a
/// transmit-only interrupt, which schedules no poll. The frame stays owed
/// to the receive claim: the poll's re-arm (here while that transmit-only
/// interrupt's handler still holds the interrupt claim) leads to a raise
/// that reports it as soon as both claims are armed again, not to a frame
/// left in the ring until the next one comes.
#[test]
fn a_frame_met_by_a_transmit_only_interrupt_is_reported_once_the_poll_rearms() {
    let spec = crate::config::TimeoutSpec::absolute(Duration::from_us(75), 0);
    let mut q = RxQueue::new(Box::new(coalesce::OpenMx::new(spec)), 32, 0).with_split_claims(true);
    let at = |ns| Instant::ZERO + Duration::from_ns(ns);
    let marked = coalesce::DmaCompletion { marked: true, bytes: 60, other_pending: 0 };
    // A first marked frame: its interrupt schedules the poll, whose
    // handler re-arms the interrupt claim; the poll takes the frame.
    let (out, _) = q.frame_delivered(at(0), 0, true, 1, marked);
    assert!(out.raise && out.rx);
    assert!(!q.rearm_claim(at(500)).raise);
    assert_eq!(q.take(), Some(RingEntry::Rx(0)));
    // A send completes, then the next marked frame lands before the poll
    // re-arms the receive claim: a transmit-only interrupt.
    assert!(!q.tx_completion(at(1_000), 60, 0).raise);
    let (out, _) = q.frame_delivered(at(2_000), 1, true, 1, marked);
    assert!(out.raise && !out.rx, "{out:?}");
    // The poll ends without looking at the ring again and re-arms the
    // receive claim; the transmit-only handler reaps and re-arms its own.
    assert!(!q.napi_done(at(2_003)).raise, "the interrupt claim is still held");
    assert_eq!(q.take_tx_done(), 1);
    let out = q.rearm_claim(at(3_000));
    assert!(out.raise && out.rx, "the frame in the ring was never reported: {out:?}");
    assert_eq!(q.take(), Some(RingEntry::Rx(1)));
}
