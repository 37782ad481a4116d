//! The `adaptive` coalescing policies (SPEC §2.2): Linux DIM and ixgbe-style
//! ITR classes, plus `openmx-adaptive` (markers + DIM).
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
//!   `NET_DIM_RX_EQE_PROFILES` table), lib/dim/dim.c (`dim_calc_stats`,
//!   `dim_on_top`, `dim_turn`, `dim_park_on_top`, `dim_park_tired`) and
//!   include/linux/dim.h (`DIM_NEVENTS`, `IS_SIGNIFICANT_DIFF`, the state
//!   enums). A DIM "event" is one interrupt: Linux calls `net_dim` once per
//!   NAPI completion, with cumulative packet/byte counters; here the sample is
//!   taken in `on_irq_raised`, packets and bytes are counted at DMA
//!   completion.
//! * ITR — drivers/net/ethernet/intel/ixgbe/ixgbe_main.c (`ixgbe_update_itr`,
//!   `ixgbe_set_itr`, the `lowest/low/bulk_latency` ranges, before the 4.15
//!   rewrite) and ixgbe.h (`IXGBE_100K_ITR`, `IXGBE_20K_ITR`, `IXGBE_8K_ITR`).

use super::{Coalescer, Decision, DmaCompletion, Timeout, TimeoutSpec};
use crate::time::{Duration, Instant};
use std::fmt;

// ------------------------------------------------------------------------
// DIM
// ------------------------------------------------------------------------

/// Interrupts per DIM sample: include/linux/dim.h `DIM_NEVENTS` (formerly
/// `NET_DIM_NEVENTS`) = 64.
pub const DIM_NEVENTS: u64 = 64;

/// One DIM moderation profile (`struct dim_cq_moder`: usec, pkts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimProfile {
    pub usec: u32,
    pub frames: u32,
}

/// The RX profiles for EQE-based CQ period mode: lib/dim/net_dim.c
/// `NET_DIM_RX_EQE_PROFILES` = {1, 8, 64, 128, 256} µs, each with
/// `NET_DIM_DEFAULT_RX_CQ_PKTS_FROM_EQE` = 256 frames.
pub const NET_DIM_RX_EQE_PROFILES: [DimProfile; 5] = [
    DimProfile { usec: 1, frames: 256 },
    DimProfile { usec: 8, frames: 256 },
    DimProfile { usec: 64, frames: 256 },
    DimProfile { usec: 128, frames: 256 },
    DimProfile { usec: 256, frames: 256 },
];

/// Default profile index: lib/dim/net_dim.c `NET_DIM_DEF_PROFILE_EQE` = 1
/// (what `net_dim_get_def_rx_moderation` hands to drivers): 8 µs / 256.
pub const NET_DIM_DEF_PROFILE_EQE: usize = 1;

/// Number of profiles: lib/dim/net_dim.c `NET_DIM_PARAMS_NUM_PROFILES` = 5.
const NUM_PROFILES: usize = NET_DIM_RX_EQE_PROFILES.len();

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
    /// previous stats) at the driver's default profile.
    pub fn new() -> Self {
        DimTuner {
            profile_ix: NET_DIM_DEF_PROFILE_EQE,
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
        NET_DIM_RX_EQE_PROFILES[self.profile_ix]
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

/// Linux DIM driving an absolute timeout with the current profile's
/// (usec, frames).
#[derive(Clone, Debug, PartialEq)]
pub struct Dim {
    tuner: DimTuner,
    timeout: Timeout,
    /// `DIM_MEASURE_IN_PROGRESS` (true) vs `DIM_START_MEASURE` (false).
    measuring: bool,
    start: DimSample,
    pkts: u64,
    bytes: u64,
    events: u64,
}

impl Default for Dim {
    fn default() -> Self {
        Dim::new()
    }
}

impl Dim {
    pub fn new() -> Self {
        let tuner = DimTuner::new();
        let p = tuner.profile();
        Dim {
            tuner,
            timeout: Timeout::new(TimeoutSpec::absolute(Duration::from_us(u64::from(p.usec)), p.frames)),
            measuring: false,
            start: DimSample::default(),
            pkts: 0,
            bytes: 0,
            events: 0,
        }
    }

    pub fn tuner(&self) -> &DimTuner {
        &self.tuner
    }

    /// `net_dim`, called once per interrupt (event).
    fn sample(&mut self, now: Instant) {
        self.events += 1;
        let end = DimSample { time: now, pkts: self.pkts, bytes: self.bytes, events: self.events };
        if self.measuring {
            if end.events - self.start.events < DIM_NEVENTS {
                return;
            }
            let Some(stats) = calc_stats(&self.start, &end) else {
                return;
            };
            if self.tuner.decide(stats) {
                // DIM_APPLY_NEW_PROFILE: the driver applies it and sets
                // DIM_START_MEASURE, so the next event opens a new window.
                let p = self.tuner.profile();
                self.timeout.set_delay_frames(Duration::from_us(u64::from(p.usec)), p.frames);
                self.measuring = false;
                return;
            }
        }
        self.start = end;
        self.measuring = true;
    }
}

impl Coalescer for Dim {
    fn name(&self) -> &'static str {
        "adaptive"
    }
    fn on_dma_complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision {
        self.pkts += 1;
        self.bytes += u64::from(dma.bytes);
        self.timeout.on_dma_complete(now, dma)
    }
    fn on_timer(&mut self, now: Instant) -> Decision {
        self.timeout.on_timer(now)
    }
    fn on_irq_raised(&mut self, now: Instant) -> Decision {
        self.sample(now);
        self.timeout.on_irq_raised(now)
    }
    fn on_rearm(&mut self, now: Instant, ring_pending: u32) -> Decision {
        self.timeout.on_rearm(now, ring_pending)
    }
    fn current_delay(&self) -> Option<Duration> {
        Some(Duration::from_us(u64::from(self.tuner.profile().usec)))
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
            self.dim.timeout.raise_now()
        } else {
            timeout
        }
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
}

// ------------------------------------------------------------------------
// ixgbe-style ITR
// ------------------------------------------------------------------------

/// ixgbe `enum latency_range`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItrClass {
    LowestLatency,
    LowLatency,
    BulkLatency,
}

impl fmt::Display for ItrClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ItrClass::LowestLatency => "lowest_latency",
            ItrClass::LowLatency => "low_latency",
            ItrClass::BulkLatency => "bulk_latency",
        })
    }
}

/// EITR interval values in 0.25 µs units ("microsecond values for various ITR
/// rates shifted by 2"), ixgbe.h: `IXGBE_100K_ITR` = 40 (10 µs, 100 000
/// ints/s), `IXGBE_20K_ITR` = 200 (50 µs), `IXGBE_8K_ITR` = 500 (125 µs).
pub const IXGBE_100K_ITR: u32 = 40;
pub const IXGBE_20K_ITR: u32 = 200;
pub const IXGBE_8K_ITR: u32 = 500;

/// ixgbe_update_itr thresholds in bytes per µs of the current interval
/// ("0-10MB/s lowest, 10-20MB/s low, 20-1249MB/s bulk").
const ITR_LOW_BYTES_PER_US: u64 = 10;
const ITR_BULK_BYTES_PER_US: u64 = 20;

/// ixgbe-style adaptive throttling: per interrupt, classify the traffic since
/// the previous one by bytes per µs of the current interval, move one class
/// at a time, and smooth the throttle gap toward that class's rate
/// (`ixgbe_set_itr`: new = 10·target·old / (9·target + old), i.e. the
/// interrupt *rate* moves 1/10 of the way to the target).
#[derive(Clone, Debug, PartialEq)]
pub struct Itr {
    class: ItrClass,
    /// Current gap, in 0.25 µs EITR units.
    itr: u32,
    bytes: u64,
    packets: u64,
    throttle: Timeout,
}

impl Default for Itr {
    fn default() -> Self {
        Itr::new()
    }
}

fn itr_to_duration(itr: u32) -> Duration {
    Duration::from_ns(u64::from(itr) * 250)
}

impl Itr {
    /// Dynamic mode (ixgbe `rx_itr_setting == 1`) starts at `IXGBE_20K_ITR`;
    /// the ring's class starts zeroed, i.e. `lowest_latency`.
    pub fn new() -> Self {
        Itr {
            class: ItrClass::LowestLatency,
            itr: IXGBE_20K_ITR,
            bytes: 0,
            packets: 0,
            throttle: Timeout::new(TimeoutSpec::throttle(itr_to_duration(IXGBE_20K_ITR))),
        }
    }

    pub fn class(&self) -> ItrClass {
        self.class
    }

    /// The current gap in EITR units (0.25 µs).
    pub fn itr(&self) -> u32 {
        self.itr
    }

    fn update(&mut self) {
        if self.packets == 0 {
            return;
        }
        let interval_us = u64::from(self.itr >> 2);
        if interval_us == 0 {
            return;
        }
        let per_us = self.bytes / interval_us;
        self.class = match self.class {
            ItrClass::LowestLatency if per_us > ITR_LOW_BYTES_PER_US => ItrClass::LowLatency,
            ItrClass::LowLatency if per_us > ITR_BULK_BYTES_PER_US => ItrClass::BulkLatency,
            ItrClass::LowLatency if per_us <= ITR_LOW_BYTES_PER_US => ItrClass::LowestLatency,
            ItrClass::BulkLatency if per_us <= ITR_BULK_BYTES_PER_US => ItrClass::LowLatency,
            same => same,
        };
        self.bytes = 0;
        self.packets = 0;
        let target = match self.class {
            ItrClass::LowestLatency => IXGBE_100K_ITR,
            ItrClass::LowLatency => IXGBE_20K_ITR,
            ItrClass::BulkLatency => IXGBE_8K_ITR,
        };
        if target != self.itr {
            let (t, old) = (u64::from(target), u64::from(self.itr));
            self.itr = (10 * t * old / (9 * t + old)) as u32;
            self.throttle.set_delay_frames(itr_to_duration(self.itr), 0);
        }
    }
}

impl Coalescer for Itr {
    fn name(&self) -> &'static str {
        "adaptive"
    }
    fn on_dma_complete(&mut self, now: Instant, dma: DmaCompletion) -> Decision {
        self.packets += 1;
        self.bytes += u64::from(dma.bytes);
        self.throttle.on_dma_complete(now, dma)
    }
    fn on_timer(&mut self, now: Instant) -> Decision {
        self.throttle.on_timer(now)
    }
    fn on_irq_raised(&mut self, now: Instant) -> Decision {
        self.update();
        self.throttle.on_irq_raised(now)
    }
    fn on_rearm(&mut self, now: Instant, ring_pending: u32) -> Decision {
        self.throttle.on_rearm(now, ring_pending)
    }
    fn current_delay(&self) -> Option<Duration> {
        Some(itr_to_duration(self.itr))
    }
}

#[cfg(test)]
mod tests;
