//! The `adaptive` coalescing policies (SPEC §2.2): Linux DIM, and
//! `openmx-adaptive` (markers + DIM); ixgbe-style ITR classes are `itr.rs`.
//!
//! This file owns the *adaptation*: measuring traffic per interrupt and
//! choosing the coalescing parameters. The interrupt decision itself is
//! delegated to a [`Timeout`] whose delay / frame threshold this file changes
//! (DIM: absolute timer; ITR: throttle). Both algorithms are re-implemented
//! from their description in the Linux sources cited below; nothing here
//! talks to an engine or a driver.
//!
//! * DIM — lib/dim/net_dim.c (`net_dim`, `net_dim_decision`,
//!   `net_dim_stats_compare`, `net_dim_step`, `net_dim_exit_parking`, the
//!   four profile tables `NET_DIM_RX_EQE_PROFILES`, `NET_DIM_RX_CQE_PROFILES`,
//!   `NET_DIM_TX_EQE_PROFILES`, `NET_DIM_TX_CQE_PROFILES` and
//!   `net_dim_get_def_rx_moderation` / `..._tx_...`; in Linux 6.9+ the
//!   tables sit in include/linux/dim.h), lib/dim/dim.c (`dim_calc_stats`,
//!   `dim_on_top`, `dim_turn`, `dim_park_on_top`, `dim_park_tired`) and
//!   include/linux/dim.h (`DIM_NEVENTS`, `IS_SIGNIFICANT_DIFF`, the state
//!   enums, `DIM_CQ_PERIOD_MODE_START_FROM_EQE` / `_CQE`).
//! * Where DIM is sampled: a driver calls `net_dim` once per NAPI poll that
//!   completes, after `napi_complete_done` and before re-arming the
//!   completion queue, with the queue's cumulative counters of *received*
//!   packets and bytes and its count of completion events (interrupts):
//!   drivers/net/ethernet/mellanox/mlx5/core/en_txrx.c `mlx5e_napi_poll`,
//!   `mlx5e_handle_rx_dim` (`rq->cq.event_ctr`, `rq->stats->packets`,
//!   `->bytes`) and `mlx5e_handle_tx_dim` (the send queue's own counters,
//!   for TX DIM). Here the sample is taken in `on_rearm` (the host re-arms
//!   after its poll completed), packets and bytes are counted at DMA
//!   completion (received frames) or transmit completion (TX DIM), an event
//!   is an interrupt that reported completions of that side.
//! * TX DIM's counters: mlx5 adds to its send queue's `packets` and `bytes`
//!   when it posts a frame (en_tx.c `mlx5e_sq_xmit_prepare`: one packet, or
//!   `gso_segs` for a TSO send; `max(skb->len, ETH_ZLEN)` bytes). Here they
//!   are added when the frame's transmit completion reaches the policy, a
//!   frame's length (at least [`ETH_ZLEN`]) and one packet each (a replayed
//!   TSO send counts one): the frames a NAPI poll reaps were posted before
//!   it, so a sample between two polls counts the same frames but those
//!   still on the wire. Without bytes, DIM's comparison
//!   (`net_dim_stats_compare`: bytes first, "same" when both are 0) never
//!   leaves its start profile.
//! * CQ period modes (mlx5 `cq_period_mode`, ethtool `cqe-mode-rx` /
//!   `cqe-mode-tx`): in EQE mode the moderation timer runs from the first
//!   unreported completion (an absolute timer); in CQE mode it restarts at
//!   every completion (a packet timer with no cap). Both also raise at the
//!   profile's packet count.

use super::split::TwoTimers;
use super::{Coalescer, Decision, DmaCompletion, Timeout, TimeoutSpec};
use crate::config::{DimProfile, DimSide, DimSpec, DimTable, TimeoutMode, TxModeration, DIM_PROFILES};
use crate::time::{Duration, Instant};
use std::fmt;

// ------------------------------------------------------------------------
// DIM
// ------------------------------------------------------------------------

/// The shortest frame a send counts (bytes without the FCS):
/// include/uapi/linux/if_ether.h `ETH_ZLEN` = 60, the floor of mlx5's
/// `num_bytes`.
pub const ETH_ZLEN: u32 = 60;

/// Interrupts per DIM sample: include/linux/dim.h `DIM_NEVENTS` (formerly
/// `NET_DIM_NEVENTS`) = 64.
pub const DIM_NEVENTS: u64 = 64;

/// The RX profiles for EQE-based CQ period mode: lib/dim/net_dim.c
/// `NET_DIM_RX_EQE_PROFILES` = {1, 8, 64, 128, 256} µs, each with
/// `NET_DIM_DEFAULT_RX_CQ_PKTS_FROM_EQE` = 256 packets.
pub const NET_DIM_RX_EQE_PROFILES: DimTable = table([(1, 256), (8, 256), (64, 256), (128, 256), (256, 256)]);

/// The RX profiles for CQE-based CQ period mode: lib/dim/net_dim.c
/// `NET_DIM_RX_CQE_PROFILES` = {2, 256}, {8, 128}, {16, 64}, {32, 64}, {64, 64}.
pub const NET_DIM_RX_CQE_PROFILES: DimTable = table([(2, 256), (8, 128), (16, 64), (32, 64), (64, 64)]);

/// The TX profiles for EQE-based CQ period mode: lib/dim/net_dim.c
/// `NET_DIM_TX_EQE_PROFILES` = {1, 8, 32, 64, 128} µs, each with
/// `NET_DIM_DEFAULT_TX_CQ_PKTS_FROM_EQE` = 128 packets.
pub const NET_DIM_TX_EQE_PROFILES: DimTable = table([(1, 128), (8, 128), (32, 128), (64, 128), (128, 128)]);

/// The TX profiles for CQE-based CQ period mode: lib/dim/net_dim.c
/// `NET_DIM_TX_CQE_PROFILES` = {5, 128}, {8, 64}, {16, 32}, {32, 32}, {64, 32}.
pub const NET_DIM_TX_CQE_PROFILES: DimTable = table([(5, 128), (8, 64), (16, 32), (32, 32), (64, 32)]);

const fn table(p: [(u32, u32); DIM_PROFILES]) -> DimTable {
    let mut t = [DimProfile { usec: 0, frames: 0 }; DIM_PROFILES];
    let mut i = 0;
    while i < DIM_PROFILES {
        t[i] = DimProfile { usec: p[i].0, frames: p[i].1 };
        i += 1;
    }
    t
}

/// The kernel's table of one direction and CQ period mode
/// (`rx_profile[cq_period_mode]`, `tx_profile[...]` in lib/dim/net_dim.c).
pub const fn kernel_table(tx: bool, cqe: bool) -> DimTable {
    match (tx, cqe) {
        (false, false) => NET_DIM_RX_EQE_PROFILES,
        (false, true) => NET_DIM_RX_CQE_PROFILES,
        (true, false) => NET_DIM_TX_EQE_PROFILES,
        (true, true) => NET_DIM_TX_CQE_PROFILES,
    }
}

/// Default profile index in EQE mode: lib/dim/net_dim.c
/// `NET_DIM_DEF_PROFILE_EQE` = 1 (what `net_dim_get_def_rx_moderation` and
/// `net_dim_get_def_tx_moderation` hand to drivers): RX 8 µs / 256.
pub const NET_DIM_DEF_PROFILE_EQE: usize = 1;

/// Default profile index in CQE mode: lib/dim/net_dim.c
/// `NET_DIM_DEF_PROFILE_CQE` = 1: RX 8 µs / 128, TX 8 µs / 64.
pub const NET_DIM_DEF_PROFILE_CQE: usize = 1;

/// Number of profiles: lib/dim/net_dim.c `NET_DIM_PARAMS_NUM_PROFILES` = 5.
const NUM_PROFILES: usize = DIM_PROFILES;

/// Steps before DIM parks tired: `net_dim_step` returns `DIM_TOO_TIRED` when
/// `tired == NET_DIM_PARAMS_NUM_PROFILES * 2`.
const TIRED_LIMIT: u32 = 2 * NUM_PROFILES as u32;

/// A change is significant when it exceeds 10% of the reference:
/// include/linux/dim.h `IS_SIGNIFICANT_DIFF` (integer percent, `> 10`).
const SIGNIFICANT_PCT: u64 = 10;

/// Rates over one sample window (`struct dim_stats`), per millisecond.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DimStats {
    /// Packets per ms.
    pub ppms: u64,
    /// Bytes per ms.
    pub bpms: u64,
    /// Events (interrupts) per ms.
    pub epms: u64,
}

/// DIM's tuning state (`enum dim_tune_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimTuneState {
    ParkingOnTop,
    ParkingTired,
    GoingRight,
    GoingLeft,
}

impl fmt::Display for DimTuneState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DimTuneState::ParkingOnTop => "parking-on-top",
            DimTuneState::ParkingTired => "parking-tired",
            DimTuneState::GoingRight => "going-right",
            DimTuneState::GoingLeft => "going-left",
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StatsCmp {
    Worse,
    Same,
    Better,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Stepped,
    TooTired,
    OnEdge,
}

fn significant(val: u64, reference: u64) -> bool {
    reference != 0 && 100 * val.abs_diff(reference) / reference > SIGNIFICANT_PCT
}

/// Bytes first, then packets (more is better), then events (fewer is better).
fn compare(curr: &DimStats, prev: &DimStats) -> StatsCmp {
    let more_is_better = |c: u64, p: u64| if c > p { StatsCmp::Better } else { StatsCmp::Worse };
    if prev.bpms == 0 {
        return if curr.bpms != 0 { StatsCmp::Better } else { StatsCmp::Same };
    }
    if significant(curr.bpms, prev.bpms) {
        return more_is_better(curr.bpms, prev.bpms);
    }
    if prev.ppms == 0 {
        return if curr.ppms != 0 { StatsCmp::Better } else { StatsCmp::Same };
    }
    if significant(curr.ppms, prev.ppms) {
        return more_is_better(curr.ppms, prev.ppms);
    }
    if prev.epms == 0 {
        return StatsCmp::Same;
    }
    if significant(curr.epms, prev.epms) {
        return if curr.epms < prev.epms { StatsCmp::Better } else { StatsCmp::Worse };
    }
    StatsCmp::Same
}

/// The DIM decision state machine alone (`net_dim_decision` and helpers):
/// fed one [`DimStats`] per sample, it walks the profile index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DimTuner {
    table: DimTable,
    profile_ix: usize,
    tune_state: DimTuneState,
    steps_left: u32,
    steps_right: u32,
    tired: u32,
    prev: DimStats,
}

impl Default for DimTuner {
    fn default() -> Self {
        DimTuner::new()
    }
}

impl DimTuner {
    /// Linux's `struct dim` starts zeroed (tune state 0 = parking on top, no
    /// previous stats) at the driver's default profile, here of the RX EQE
    /// table.
    pub fn new() -> Self {
        DimTuner::with_table(NET_DIM_RX_EQE_PROFILES, NET_DIM_DEF_PROFILE_EQE)
    }

    /// A tuner over `table`, starting at profile `start`.
    pub fn with_table(table: DimTable, start: usize) -> Self {
        DimTuner {
            table,
            profile_ix: start,
            tune_state: DimTuneState::ParkingOnTop,
            steps_left: 0,
            steps_right: 0,
            tired: 0,
            prev: DimStats::default(),
        }
    }
    pub fn profile_ix(&self) -> usize {
        self.profile_ix
    }
    pub fn profile(&self) -> DimProfile {
        self.table[self.profile_ix]
    }
    pub fn tune_state(&self) -> DimTuneState {
        self.tune_state
    }
    pub fn tired(&self) -> u32 {
        self.tired
    }

    fn step(&mut self) -> Step {
        if self.tired == TIRED_LIMIT {
            return Step::TooTired;
        }
        match self.tune_state {
            DimTuneState::ParkingOnTop | DimTuneState::ParkingTired => {}
            DimTuneState::GoingRight => {
                if self.profile_ix == NUM_PROFILES - 1 {
                    return Step::OnEdge;
                }
                self.profile_ix += 1;
                self.steps_right += 1;
            }
            DimTuneState::GoingLeft => {
                if self.profile_ix == 0 {
                    return Step::OnEdge;
                }
                self.profile_ix -= 1;
                self.steps_left += 1;
            }
        }
        self.tired += 1;
        Step::Stepped
    }

    fn exit_parking(&mut self) {
        self.tune_state = if self.profile_ix != 0 { DimTuneState::GoingLeft } else { DimTuneState::GoingRight };
        self.step();
    }

    /// A good place to stop: just turned back after overshooting by one.
    fn on_top(&self) -> bool {
        match self.tune_state {
            DimTuneState::ParkingOnTop | DimTuneState::ParkingTired => true,
            DimTuneState::GoingRight => self.steps_left > 1 && self.steps_right == 1,
            DimTuneState::GoingLeft => self.steps_right > 1 && self.steps_left == 1,
        }
    }

    fn turn(&mut self) {
        match self.tune_state {
            DimTuneState::ParkingOnTop | DimTuneState::ParkingTired => {}
            DimTuneState::GoingRight => {
                self.tune_state = DimTuneState::GoingLeft;
                self.steps_left = 0;
            }
            DimTuneState::GoingLeft => {
                self.tune_state = DimTuneState::GoingRight;
                self.steps_right = 0;
            }
        }
    }

    fn park_on_top(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tired = 0;
        self.tune_state = DimTuneState::ParkingOnTop;
    }

    fn park_tired(&mut self) {
        self.steps_right = 0;
        self.steps_left = 0;
        self.tune_state = DimTuneState::ParkingTired;
    }

    /// One DIM iteration; returns whether the profile index changed.
    pub fn decide(&mut self, curr: DimStats) -> bool {
        let prev_state = self.tune_state;
        let prev_ix = self.profile_ix;
        match self.tune_state {
            DimTuneState::ParkingOnTop => {
                if compare(&curr, &self.prev) != StatsCmp::Same {
                    self.exit_parking();
                }
            }
            DimTuneState::ParkingTired => {
                self.tired = self.tired.saturating_sub(1);
                if self.tired == 0 {
                    self.exit_parking();
                }
            }
            DimTuneState::GoingRight | DimTuneState::GoingLeft => {
                if compare(&curr, &self.prev) != StatsCmp::Better {
                    self.turn();
                }
                if self.on_top() {
                    self.park_on_top();
                } else {
                    match self.step() {
                        Step::OnEdge => self.park_on_top(),
                        Step::TooTired => self.park_tired(),
                        Step::Stepped => {}
                    }
                }
            }
        }
        // While parked on top, the stats it parked with stay the reference.
        if prev_state != DimTuneState::ParkingOnTop || self.tune_state != DimTuneState::ParkingOnTop {
            self.prev = curr;
        }
        self.profile_ix != prev_ix
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct DimSample {
    time: Instant,
    pkts: u64,
    bytes: u64,
    events: u64,
}

/// Rates between two samples (`dim_calc_stats`): elapsed time in whole µs
/// (`ktime_us_delta`), rates rounded up; `None` if no whole µs elapsed.
fn calc_stats(start: &DimSample, end: &DimSample) -> Option<DimStats> {
    let delta_us = end.time.since(start.time).as_ps() / 1_000_000;
    if delta_us == 0 {
        return None;
    }
    let per_ms = |n: u64| (n * 1_000).div_ceil(delta_us);
    Some(DimStats {
        ppms: per_ms(end.pkts - start.pkts),
        bpms: per_ms(end.bytes - start.bytes),
        epms: per_ms(DIM_NEVENTS),
    })
}

/// The timer of one profile: absolute from the first completion in EQE
/// mode, restarted at each in CQE mode; both raise at the packet count.
fn moderation(usec: u32, frames: u32, cqe: bool) -> TimeoutSpec {
    TimeoutSpec {
        mode: if cqe { TimeoutMode::PacketTimer } else { TimeoutMode::Absolute },
        delay: Duration::from_us(u64::from(usec)),
        frames,
        cap: Duration::ZERO,
    }
}

/// One completion queue's moderation: its timer and, under DIM, the tuner
/// that sets it with the counters of its samples.
#[derive(Clone, Debug, PartialEq)]
struct Cq {
    timeout: Timeout,
    /// `None`: fixed moderation (tx-usecs / tx-frames).
    tuner: Option<DimTuner>,
    cqe: bool,
    /// `DIM_MEASURE_IN_PROGRESS` (true) vs `DIM_START_MEASURE` (false).
    measuring: bool,
    start: DimSample,
    pkts: u64,
    bytes: u64,
    events: u64,
    /// Completions arrived since the last interrupt: the next interrupt is
    /// one of this queue's events (`mlx5e_completion_event` counts
    /// `cq->event_ctr` per event of that CQ).
    fresh: bool,
}

impl Cq {
    fn dim(side: DimSide, tx: bool) -> Self {
        let table = side.table.unwrap_or(kernel_table(tx, side.cqe));
        let start = if side.cqe { NET_DIM_DEF_PROFILE_CQE } else { NET_DIM_DEF_PROFILE_EQE };
        let tuner = DimTuner::with_table(table, start);
        let p = tuner.profile();
        Cq::new(moderation(p.usec, p.frames, side.cqe), Some(tuner), side.cqe)
    }

    fn new(spec: TimeoutSpec, tuner: Option<DimTuner>, cqe: bool) -> Self {
        Cq {
            timeout: Timeout::new(spec),
            tuner,
            cqe,
            measuring: false,
            start: DimSample::default(),
            pkts: 0,
            bytes: 0,
            events: 0,
            fresh: false,
        }
    }

    fn complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision {
        self.pkts += 1;
        self.bytes += u64::from(dma.bytes);
        self.fresh = true;
        self.timeout.on_dma_complete(now, dma)
    }

    /// `net_dim` with the counters as they are at `now`.
    fn sample(&mut self, now: Instant) {
        let Some(tuner) = self.tuner.as_mut() else { return };
        let end = DimSample { time: now, pkts: self.pkts, bytes: self.bytes, events: self.events };
        if self.measuring {
            if end.events - self.start.events < DIM_NEVENTS {
                return;
            }
            let Some(stats) = calc_stats(&self.start, &end) else {
                return;
            };
            if tuner.decide(stats) {
                // DIM_APPLY_NEW_PROFILE: the driver applies it and sets
                // DIM_START_MEASURE, so the next sample opens a new window.
                let p = tuner.profile();
                self.timeout.set_delay_frames(Duration::from_us(u64::from(p.usec)), p.frames);
                self.measuring = false;
                return;
            }
        }
        self.start = end;
        self.measuring = true;
    }

    /// The interrupt was raised: it is an event of this queue if it had
    /// completions to report.
    fn raised(&mut self) {
        if std::mem::take(&mut self.fresh) {
            self.events += 1;
        }
    }
}

/// Linux DIM driving the receive queue's moderation, and optionally the
/// transmit completions' own (TX DIM, or a fixed tx-usecs / tx-frames).
#[derive(Clone, Debug, PartialEq)]
pub struct Dim {
    rx: Cq,
    /// The send completion queue when moderated apart; `None`: transmit
    /// completions ride the receive timer and are not counted in samples.
    tx: Option<Cq>,
    /// `dim-irq`: sampled at the raise, every completion counted.
    at_irq: bool,
    timers: TwoTimers,
}

impl Default for Dim {
    fn default() -> Self {
        Dim::new()
    }
}

impl Dim {
    /// RX DIM in EQE mode with the kernel's table.
    pub fn new() -> Self {
        Dim::with(DimSpec::EQE)
    }

    pub fn with(spec: DimSpec) -> Self {
        let tx = spec.tx.map(|t| match t {
            TxModeration::Dim(side) => Cq::dim(side, true),
            TxModeration::Fixed { delay, frames, cqe } => {
                let mut spec = moderation(0, frames, cqe);
                spec.delay = delay;
                Cq::new(spec, None, cqe)
            }
        });
        Dim { rx: Cq::dim(spec.rx, false), tx, at_irq: spec.at_irq, timers: TwoTimers::default() }
    }

    /// The receive side's tuner.
    pub fn tuner(&self) -> &DimTuner {
        self.rx.tuner.as_ref().expect("the receive side of DIM is adaptive")
    }

    /// The transmit side's tuner (TX DIM), if any.
    pub fn tx_tuner(&self) -> Option<&DimTuner> {
        self.tx.as_ref()?.tuner.as_ref()
    }

    /// Whether the receive timer restarts at each completion (CQE mode).
    pub fn rx_cqe(&self) -> bool {
        self.rx.cqe
    }

    /// Folds the receive side's answer with the transmit side's.
    fn fold(&mut self, rx: Decision, tx: Decision) -> Decision {
        if self.tx.is_none() {
            return rx;
        }
        self.timers.fold(rx, tx)
    }
}

impl Coalescer for Dim {
    fn name(&self) -> &'static str {
        "adaptive"
    }
    fn on_dma_complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision {
        let d = self.rx.complete(now, dma);
        self.fold(d, Decision::NONE)
    }
    fn on_tx_complete(&mut self, now: Instant, bytes: u32, other_pending: u32) -> Decision {
        if self.at_irq {
            // The dim-irq model of the study tables, kept as they were
            // published: a transmit completion is one more completion on
            // the receive timer, of no bytes.
            return self.rx.complete(now, DmaCompletion { marked: false, bytes: 0, other_pending });
        }
        let dma = DmaCompletion { marked: false, bytes: bytes.max(ETH_ZLEN), other_pending };
        match self.tx.as_mut() {
            Some(tx) => {
                let d = tx.complete(now, dma);
                self.fold(Decision::NONE, d)
            }
            // Not a received packet: it moves the shared timer only.
            None => self.rx.timeout.on_dma_complete(now, dma),
        }
    }
    fn on_timer(&mut self, now: Instant) -> Decision {
        let Some(tx) = self.tx.as_mut() else { return self.rx.timeout.on_timer(now) };
        let [due_rx, due_tx] = self.timers.fired(now);
        let drx = if due_rx { self.rx.timeout.on_timer(now) } else { Decision::NONE };
        let dtx = if due_tx { tx.timeout.on_timer(now) } else { Decision::NONE };
        self.timers.fold(drx, dtx)
    }
    fn on_irq_raised(&mut self, now: Instant) -> Decision {
        if self.at_irq {
            self.rx.events += 1;
            self.rx.sample(now);
            return self.rx.timeout.on_irq_raised(now);
        }
        self.rx.raised();
        let drx = self.rx.timeout.on_irq_raised(now);
        let dtx = match self.tx.as_mut() {
            Some(tx) => {
                tx.raised();
                tx.timeout.on_irq_raised(now)
            }
            None => Decision::NONE,
        };
        self.fold(drx, dtx)
    }
    fn on_rearm(&mut self, now: Instant, ring_pending: u32) -> Decision {
        if !self.at_irq {
            // After napi_complete_done: net_dim for each queue, then re-arm.
            self.rx.sample(now);
            if let Some(tx) = self.tx.as_mut() {
                tx.sample(now);
            }
        }
        let drx = self.rx.timeout.on_rearm(now, ring_pending);
        let dtx = match self.tx.as_mut() {
            Some(tx) => tx.timeout.on_rearm(now, ring_pending),
            None => Decision::NONE,
        };
        self.fold(drx, dtx)
    }
    fn current_delay(&self) -> Option<Duration> {
        Some(self.rx.timeout.spec().delay)
    }
    fn current_tx_delay(&self) -> Option<Duration> {
        let tx = self.tx.as_ref()?;
        tx.tuner.as_ref().map(|_| tx.timeout.spec().delay)
    }
}

/// `openmx-adaptive`: marked frames raise at once ([OMX-COAL] Algorithm 1);
/// DIM adapts the fallback timer of unmarked ones.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct OpenMxAdaptive {
    dim: Dim,
}

impl OpenMxAdaptive {
    pub fn new() -> Self {
        OpenMxAdaptive { dim: Dim::new() }
    }
    pub fn with(spec: DimSpec) -> Self {
        OpenMxAdaptive { dim: Dim::with(spec) }
    }
    pub fn tuner(&self) -> &DimTuner {
        self.dim.tuner()
    }
}

impl Coalescer for OpenMxAdaptive {
    fn name(&self) -> &'static str {
        "openmx-adaptive"
    }
    fn on_dma_complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision {
        let timeout = self.dim.on_dma_complete(now, dma);
        if dma.marked {
            let d = self.dim.rx.timeout.raise_now();
            self.dim.fold(d, Decision::NONE)
        } else {
            timeout
        }
    }
    fn on_tx_complete(&mut self, now: Instant, bytes: u32, other_pending: u32) -> Decision {
        self.dim.on_tx_complete(now, bytes, other_pending)
    }
    fn on_timer(&mut self, now: Instant) -> Decision {
        self.dim.on_timer(now)
    }
    fn on_irq_raised(&mut self, now: Instant) -> Decision {
        self.dim.on_irq_raised(now)
    }
    fn on_rearm(&mut self, now: Instant, ring_pending: u32) -> Decision {
        self.dim.on_rearm(now, ring_pending)
    }
    fn current_delay(&self) -> Option<Duration> {
        self.dim.current_delay()
    }
    fn current_tx_delay(&self) -> Option<Duration> {
        self.dim.current_tx_delay()
    }
}

#[cfg(test)]
mod tests;
