//! Two completion queues behind one interrupt line: the receive side and
//! the transmit side, each moderated by its own timer (mlx5 gives each
//! channel a receive and a send completion queue, armed and moderated
//! apart, whose events share the channel's interrupt: ethtool rx-usecs /
//! rx-frames and tx-usecs / tx-frames, include/uapi/linux/ethtool.h
//! `struct ethtool_coalesce`).
//!
//! This file owns [`TwoTimers`], which folds the two sides' timer commands
//! into the one timer a policy has, and [`TimeoutTx`], the `timeout` policy
//! with a transmit timer of its own. The DIM policy (`adaptive.rs`) uses
//! [`TwoTimers`] the same way.

use super::{Coalescer, Decision, DmaCompletion, Timeout, TimeoutSpec, TimerCmd};
use crate::time::{Duration, Instant};

/// Index of the receive side in [`TwoTimers`].
pub(super) const RX: usize = 0;
/// Index of the transmit side in [`TwoTimers`].
pub(super) const TX: usize = 1;

/// The deadlines of the two sides and the one timer the NIC holds for the
/// policy (armed at the earlier).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct TwoTimers {
    at: [Option<Instant>; 2],
    /// What the NIC's timer was last set to.
    told: Option<Instant>,
}

impl TwoTimers {
    /// Side `side` answered with `cmd`.
    pub(super) fn note(&mut self, side: usize, cmd: TimerCmd) {
        match cmd {
            TimerCmd::Keep => {}
            TimerCmd::Arm(at) => self.at[side] = Some(at),
            TimerCmd::Cancel => self.at[side] = None,
        }
    }

    /// The command that sets the NIC's timer to the earlier deadline.
    pub(super) fn cmd(&mut self) -> TimerCmd {
        let next = match self.at {
            [Some(a), Some(b)] => Some(a.min(b)),
            [a, b] => a.or(b),
        };
        if next == self.told {
            return TimerCmd::Keep;
        }
        self.told = next;
        match next {
            Some(at) => TimerCmd::Arm(at),
            None => TimerCmd::Cancel,
        }
    }

    /// The NIC's timer fired at `now`: which sides are due (their deadline
    /// is forgotten; each due side is then asked and its answer noted).
    pub(super) fn fired(&mut self, now: Instant) -> [bool; 2] {
        self.told = None;
        let mut due = [false; 2];
        for (side, at) in self.at.iter_mut().enumerate() {
            if at.is_some_and(|t| t <= now) {
                *at = None;
                due[side] = true;
            }
        }
        due
    }

    /// Both sides' answers, folded: a raise if either raises, and the timer.
    pub(super) fn fold(&mut self, rx: Decision, tx: Decision) -> Decision {
        self.note(RX, rx.timer);
        self.note(TX, tx.timer);
        Decision { raise: rx.raise || tx.raise, timer: self.cmd() }
    }
}

/// `timeout` with the transmit completions on a timer of their own
/// (`nic.tx_delay_us` / `nic.tx_frames`: ethtool tx-usecs / tx-frames).
/// One interrupt reports both sides: the NAPI poll reaps the receive and the
/// send completion queues together (mlx5 en_txrx.c `mlx5e_napi_poll`).
#[derive(Clone, Debug, PartialEq)]
pub struct TimeoutTx {
    rx: Timeout,
    tx: Timeout,
    timers: TwoTimers,
}

impl TimeoutTx {
    pub fn new(rx: TimeoutSpec, tx: TimeoutSpec) -> Self {
        TimeoutTx { rx: Timeout::new(rx), tx: Timeout::new(tx), timers: TwoTimers::default() }
    }
}

impl Coalescer for TimeoutTx {
    fn name(&self) -> &'static str {
        "timeout"
    }
    fn on_dma_complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision {
        let d = self.rx.on_dma_complete(now, dma);
        self.timers.fold(d, Decision::NONE)
    }
    fn on_tx_complete(&mut self, now: Instant, bytes: u32, other_pending: u32) -> Decision {
        let d = self.tx.on_dma_complete(now, DmaCompletion { marked: false, bytes, other_pending });
        self.timers.fold(Decision::NONE, d)
    }
    fn on_timer(&mut self, now: Instant) -> Decision {
        let [rx, tx] = self.timers.fired(now);
        let drx = if rx { self.rx.on_timer(now) } else { Decision::NONE };
        let dtx = if tx { self.tx.on_timer(now) } else { Decision::NONE };
        self.timers.fold(drx, dtx)
    }
    fn on_irq_raised(&mut self, now: Instant) -> Decision {
        let (a, b) = (self.rx.on_irq_raised(now), self.tx.on_irq_raised(now));
        let d = self.timers.fold(a, b);
        Decision { raise: false, ..d }
    }
    fn on_rearm(&mut self, now: Instant, ring_pending: u32) -> Decision {
        let (a, b) = (self.rx.on_rearm(now, ring_pending), self.tx.on_rearm(now, ring_pending));
        self.timers.fold(a, b)
    }
    fn current_delay(&self) -> Option<Duration> {
        self.rx.current_delay()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(x: u64) -> Instant {
        Instant::ZERO + Duration::from_us(x)
    }

    /// tx-usecs 50 beside rx-usecs 8: a transmit completion waits on its own
    /// timer, a received frame on the receive one; the NIC's timer is at the
    /// earlier, and one interrupt reports both.
    #[test]
    fn each_side_keeps_its_own_deadline() {
        let rx = TimeoutSpec::absolute(Duration::from_us(8), 0);
        let tx = TimeoutSpec::absolute(Duration::from_us(50), 0);
        let mut c = TimeoutTx::new(rx, tx);
        assert_eq!(c.on_tx_complete(us(0), 1500, 0), Decision::arm(us(50)));
        let frame = DmaCompletion { marked: false, bytes: 64, other_pending: 0 };
        assert_eq!(c.on_dma_complete(us(10), frame), Decision::arm(us(18)));
        let d = c.on_timer(us(18));
        assert!(d.raise);
        assert_eq!(d.timer, TimerCmd::Arm(us(50)));
        assert_eq!(c.on_irq_raised(us(18)), Decision { raise: false, timer: TimerCmd::Cancel });
        // One timer for both (the Myri-10G model): the transmit completion
        // would have raised at 8.
        let mut one = Timeout::new(rx);
        assert_eq!(one.on_tx_complete(us(0), 1500, 0), Decision::arm(us(8)));
    }
}
