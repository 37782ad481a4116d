//! The coalescing configuration of a receive queue: which policy
//! (`nic.coalescing`), the parameters of its timer (`nic.delay_us`,
//! `nic.frames`, `nic.timeout_mode`, `nic.cap_us`), the transmit
//! completions' own timer (`nic.tx_delay_us`, `nic.tx_frames`) and Linux
//! DIM's settings (`nic.adaptive`, `nic.cqe_mode_rx`, `nic.cqe_mode_tx`,
//! `nic.adaptive_tx`, `nic.rx_profile`, `nic.tx_profile`), with the rule
//! that a key the chosen policy does not read is refused by name (read
//! from the scenario's `[nic]` table by `nic_opts.rs`, `coalesce_spec`).
//!
//! These are values only; the policies themselves (sans-I/O state machines)
//! live in `crate::nic::coalesce`, which builds one from a [`CoalesceSpec`].

use crate::time::Duration;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Myri-10G default coalescing delay: the myri10ge Linux driver's
/// `myri10ge_intr_coal_delay = 75` (µs), drivers/net/ethernet/myricom/myri10ge/myri10ge.c;
/// also SPEC §5 preset `omx2009`.
pub const MYRI10G_DEFAULT_DELAY: Duration = Duration::from_us(75);

/// `nic.coalescing`: the strategies of SPEC §4. (The \[LCI] polling
/// watchdog, `crate::nic::watchdog`, is a firmware mechanism composed with
/// the policy, not a coalescing policy.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coalescing {
    /// An interrupt for every frame.
    Disabled,
    /// A timer and a frame threshold (`nic.timeout_mode`; default).
    #[default]
    Timeout,
    /// [OMX-COAL] Algorithm 1: marked frames interrupt at once.
    Openmx,
    /// [OMX-COAL] Algorithm 2: markers, and no interrupt while DMAs are pending.
    Stream,
    /// Linux DIM or ixgbe ITR (`nic.adaptive`).
    Adaptive,
    /// Marked frames interrupt at once; DIM drives the fallback timer.
    OpenmxAdaptive,
}

/// Which real-world NIC timer a timeout policy models (SPEC §2.2 `timeout`;
/// `nic.timeout_mode`, and a preset's default `nic.default_timeout_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
pub enum TimeoutMode {
    /// `absolute` (default): the timer starts at the first unreported frame
    /// and is not re-armed (ethtool rx-usecs / rx-frames).
    #[default]
    #[serde(rename = "absolute")]
    Absolute,
    /// `packet`: the timer is re-armed at every frame (e1000 RDTR), bounded
    /// by an absolute cap from the first unreported frame (e1000 RADV).
    #[serde(rename = "packet")]
    PacketTimer,
    /// `throttle`: a minimum gap between two interrupts (e1000 ITR; the
    /// Myri-10G firmware's timer as [OMX-COAL] describes it: `omx2009`).
    #[serde(rename = "throttle")]
    Throttle,
}

impl TimeoutMode {
    /// The name used in configuration files and result tables.
    pub const fn name(self) -> &'static str {
        match self {
            TimeoutMode::Absolute => "absolute",
            TimeoutMode::PacketTimer => "packet",
            TimeoutMode::Throttle => "throttle",
        }
    }
}

impl fmt::Display for TimeoutMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parameters of the timeout policy and of the fallback timer of `openmx` and
/// `stream`.
///
/// * `Absolute`: raise when `delay > 0 && now - first >= delay` or
///   `frames > 0 && n >= frames`; both zero = raise on every frame (ethtool
///   rx-usecs = 0, rx-frames = 0). `cap` is ignored.
/// * `PacketTimer`: raise at `min(last + delay, first + cap)`; `cap == 0`
///   means no absolute cap (e1000: RADV = 0 disables the absolute timer);
///   `delay == 0` raises on every frame (RDTR = 0); `frames > 0` also raises
///   on the `frames`-th unreported frame.
/// * `Throttle`: at most one interrupt per `delay`; `frames` and `cap` are
///   ignored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeoutSpec {
    pub mode: TimeoutMode,
    pub delay: Duration,
    pub frames: u32,
    pub cap: Duration,
}

impl TimeoutSpec {
    /// ethtool rx-usecs / rx-frames semantics.
    pub const fn absolute(delay: Duration, frames: u32) -> Self {
        TimeoutSpec { mode: TimeoutMode::Absolute, delay, frames, cap: Duration::ZERO }
    }
    /// e1000 RDTR (`delay`) + RADV (`cap`).
    pub const fn packet_timer(delay: Duration, cap: Duration) -> Self {
        TimeoutSpec { mode: TimeoutMode::PacketTimer, delay, frames: 0, cap }
    }
    /// e1000 ITR: minimum gap between interrupts.
    pub const fn throttle(gap: Duration) -> Self {
        TimeoutSpec { mode: TimeoutMode::Throttle, delay: gap, frames: 0, cap: Duration::ZERO }
    }
    /// The Myri-10G default: absolute, 75 µs, no frame threshold.
    pub const fn myri10g_default() -> Self {
        TimeoutSpec::absolute(MYRI10G_DEFAULT_DELAY, 0)
    }
}

/// Which adaptive algorithm `adaptive` runs (`nic.adaptive`; a preset's
/// default is its `nic.adaptive`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdaptiveFlavor {
    /// `dim` (default): Linux DIM (lib/dim/net_dim.c) as drivers run it:
    /// one sample of the received packets and bytes per NAPI completion.
    #[default]
    Dim,
    /// `itr`: ixgbe-style ITR classes (lowest / low / bulk latency).
    Itr,
    /// `dim-irq`: DIM's decisions over the RX EQE table, sampled when the
    /// NIC raises the interrupt, counting every completion the line reports
    /// (received frames and transmit completions). No driver samples so:
    /// it is how the `adaptive` rows of the \[OMX-COAL] study tables were
    /// made (myri10ge has no DIM, so those rows are a choice), kept for them.
    DimIrq,
}

/// One DIM moderation profile: include/linux/dim.h `struct dim_cq_moder`
/// (`usec`, `pkts`; both `u16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimProfile {
    pub usec: u32,
    pub frames: u32,
}

/// Profiles in a DIM table: lib/dim/net_dim.c `NET_DIM_PARAMS_NUM_PROFILES` = 5.
pub const DIM_PROFILES: usize = 5;

/// A DIM table: the kernel's for a CQ period mode, or one set with
/// `ethtool -C rx-profile` / `tx-profile` (Linux 6.12+, `nic.rx_profile`).
pub type DimTable = [DimProfile; DIM_PROFILES];

/// One direction's DIM settings (`struct dim` of one CQ in mlx5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimSide {
    /// `DIM_CQ_PERIOD_MODE_START_FROM_CQE` (the timer restarts at every
    /// completion) rather than `..._FROM_EQE` (it runs from the first).
    pub cqe: bool,
    /// The profile table set by the user; `None`: the kernel's for `cqe`.
    pub table: Option<DimTable>,
}

/// The transmit completions' moderation when it is their own (mlx5 has a
/// completion queue per send queue, moderated apart: ethtool tx-usecs /
/// tx-frames, adaptive-tx). Absent, they share the receive timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxModeration {
    /// A fixed timer: tx-usecs / tx-frames from the first completion
    /// (`cqe`: restarted at each, as `cqe-mode-tx on`).
    Fixed { delay: Duration, frames: u32, cqe: bool },
    /// TX DIM (adaptive-tx on).
    Dim(DimSide),
}

/// Linux DIM's configuration (`nic.coalescing = "adaptive"` with `dim`, and
/// `openmx-adaptive`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimSpec {
    pub rx: DimSide,
    pub tx: Option<TxModeration>,
    /// Sampled at the raise over every completion (`dim-irq`) rather than
    /// after each NAPI completion over received packets.
    pub at_irq: bool,
}

impl DimSpec {
    /// RX DIM in EQE mode with the kernel's table, transmit completions on
    /// the receive timer.
    pub const EQE: DimSpec = DimSpec { rx: DimSide { cqe: false, table: None }, tx: None, at_irq: false };
    /// The `dim-irq` model of the \[OMX-COAL] study tables.
    pub const AT_IRQ: DimSpec = DimSpec { at_irq: true, ..DimSpec::EQE };
}

/// The adaptive algorithm and its settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdaptiveSpec {
    Dim(DimSpec),
    Itr,
}

/// A coalescing policy and its parameters: what the simulator is configured
/// with; `crate::nic::coalesce` builds a policy instance from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CoalesceSpec {
    Disabled,
    Timeout(TimeoutSpec),
    /// [OMX-COAL] Algorithm 1 with this fallback timer.
    OpenMx(TimeoutSpec),
    /// [OMX-COAL] Algorithm 2 with this fallback timer.
    Stream(TimeoutSpec),
    Adaptive(AdaptiveSpec),
    /// Marked frames raise at once; DIM drives the fallback timer.
    OpenMxAdaptive(DimSpec),
    /// `timeout` whose transmit completions have their own fixed timer
    /// (`nic.tx_delay_us`, `nic.tx_frames`): receive timer, transmit timer.
    TimeoutTx(TimeoutSpec, TimeoutSpec),
}

impl CoalesceSpec {
    /// The spec of strategy `c`: the timer `ts` for the timer-driven ones,
    /// `flavor` for `adaptive` (DIM in EQE mode, transmit completions on
    /// the receive timer).
    pub fn new(c: Coalescing, ts: TimeoutSpec, flavor: AdaptiveFlavor) -> Self {
        let dim = |f| if f == AdaptiveFlavor::DimIrq { DimSpec::AT_IRQ } else { DimSpec::EQE };
        match c {
            Coalescing::Disabled => CoalesceSpec::Disabled,
            Coalescing::Timeout => CoalesceSpec::Timeout(ts),
            Coalescing::Openmx => CoalesceSpec::OpenMx(ts),
            Coalescing::Stream => CoalesceSpec::Stream(ts),
            Coalescing::Adaptive if flavor == AdaptiveFlavor::Itr => CoalesceSpec::Adaptive(AdaptiveSpec::Itr),
            Coalescing::Adaptive => CoalesceSpec::Adaptive(AdaptiveSpec::Dim(dim(flavor))),
            Coalescing::OpenmxAdaptive => CoalesceSpec::OpenMxAdaptive(dim(flavor)),
        }
    }

    /// The strategy name (the `nic.coalescing` value) used in result tables.
    pub fn strategy_name(&self) -> &'static str {
        match self {
            CoalesceSpec::Disabled => "disabled",
            CoalesceSpec::Timeout(_) | CoalesceSpec::TimeoutTx(..) => "timeout",
            CoalesceSpec::OpenMx(_) => "openmx",
            CoalesceSpec::Stream(_) => "stream",
            CoalesceSpec::Adaptive(_) => "adaptive",
            CoalesceSpec::OpenMxAdaptive(_) => "openmx-adaptive",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{variant_names, ConfigError};

    /// Result tables print the names the parser accepts.
    #[test]
    fn display_names_are_the_parsed_names() {
        let ts = TimeoutSpec::myri10g_default();
        for (i, name) in variant_names::<Coalescing>().iter().enumerate() {
            let c: Coalescing = toml::Value::String(name.to_string()).try_into().unwrap();
            assert_eq!(CoalesceSpec::new(c, ts, AdaptiveFlavor::Dim).strategy_name(), *name, "variant {i}");
            assert_eq!(toml::Value::try_from(c).unwrap().as_str(), Some(*name));
        }
        for name in variant_names::<TimeoutMode>() {
            let m: TimeoutMode = toml::Value::String(name.to_string()).try_into().unwrap();
            assert_eq!(m.to_string(), *name);
        }
        assert_eq!(variant_names::<TimeoutMode>(), ["absolute", "packet", "throttle"]);
        assert_eq!(MYRI10G_DEFAULT_DELAY, Duration::from_us(75));
    }

    fn spec(preset: &str, nic: &str) -> Result<CoalesceSpec, ConfigError> {
        let text = format!("preset = \"{preset}\"\n[nic]\n{nic}\n[workload]\nkind = \"pingpong\"\n");
        crate::config::Scenario::from_toml(&text).map(|s| s.coalesce)
    }

    fn err(preset: &str, nic: &str) -> String {
        spec(preset, nic).unwrap_err().0
    }

    /// `modern` runs what mlx5 runs by default: RX DIM in CQE mode, TX DIM
    /// in EQE mode (en_main.c mlx5e_build_nic_params).
    #[test]
    fn modern_follows_mlx5s_defaults() {
        let dim = DimSpec {
            rx: DimSide { cqe: true, table: None },
            tx: Some(TxModeration::Dim(DimSide { cqe: false, table: None })),
            at_irq: false,
        };
        assert_eq!(spec("modern", "").unwrap(), CoalesceSpec::Adaptive(AdaptiveSpec::Dim(dim)));
        let eqe = DimSpec { rx: DimSide { cqe: false, ..dim.rx }, tx: None, ..dim };
        assert_eq!(
            spec("modern", "cqe_mode_rx = false\nadaptive_tx = false").unwrap(),
            CoalesceSpec::Adaptive(AdaptiveSpec::Dim(eqe))
        );
        // The study preset keeps its timeout default and the model its
        // adaptive rows were made with.
        assert!(matches!(spec("omx2009", "").unwrap(), CoalesceSpec::Timeout(_)));
        assert_eq!(
            spec("omx2009", "coalescing = \"adaptive\"").unwrap(),
            CoalesceSpec::Adaptive(AdaptiveSpec::Dim(DimSpec::AT_IRQ))
        );
        assert_eq!(
            spec("omx2009", "coalescing = \"adaptive\"\nadaptive = \"dim\"").unwrap(),
            CoalesceSpec::Adaptive(AdaptiveSpec::Dim(DimSpec::EQE))
        );
    }

    /// A key the chosen policy does not read is refused by name.
    #[test]
    fn keys_the_policy_does_not_read_are_refused() {
        for (preset, nic, key) in [
            ("modern", "delay_us = 20", "nic.delay_us"),
            ("modern", "frames = 8", "nic.frames"),
            ("omx2009", "coalescing = \"openmx-adaptive\"\ntimeout_mode = \"packet\"", "nic.timeout_mode"),
            ("omx2009", "coalescing = \"adaptive\"\nadaptive = \"itr\"\ncap_us = 9", "nic.cap_us"),
            ("omx2009", "cqe_mode_rx = true", "nic.cqe_mode_rx"),
            ("omx2009", "adaptive = \"itr\"", "nic.adaptive"),
            ("omx2009", "coalescing = \"openmx-adaptive\"\nadaptive = \"itr\"", "nic.adaptive"),
            ("omx2009", "coalescing = \"stream\"\ntx_delay_us = 5", "nic.tx_delay_us"),
            ("omx2009", "coalescing = \"adaptive\"\nadaptive_tx = true", "nic.adaptive_tx"),
            ("modern", "tx_frames = 8", "nic.tx_frames"),
            ("modern", "adaptive_tx = false\ncqe_mode_tx = true", "nic.cqe_mode_tx"),
            ("modern", "adaptive_tx = false\ntx_profile = [[1,1],[2,2],[3,3],[4,4],[5,5]]", "nic.tx_profile"),
        ] {
            let e = err(preset, nic);
            assert!(e.starts_with(&format!("`{key}` is not read by nic.coalescing = ")), "{nic}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    /// ethtool -C rx-profile: five [usec, frames] pairs, u16 each.
    #[test]
    fn profile_tables_are_five_pairs() {
        let t = "[[1, 256], [8, 128], [16, 64], [32, 64], [64, 64]]";
        let CoalesceSpec::Adaptive(AdaptiveSpec::Dim(d)) = spec("modern", &format!("rx_profile = {t}")).unwrap() else {
            panic!("not DIM")
        };
        let table = d.rx.table.unwrap();
        assert_eq!((table[0], table[4]), (DimProfile { usec: 1, frames: 256 }, DimProfile { usec: 64, frames: 64 }));
        for bad in ["[[1, 2]]", "[[1,1],[2,2],[3,3],[4,4],[70000,5]]", "[[0,8],[2,2],[3,3],[4,4],[5,5]]", "\"8,128\""] {
            let e = err("modern", &format!("rx_profile = {bad}"));
            assert!(e.starts_with("invalid value for `nic.rx_profile`: "), "{bad}: {e}");
            assert!(e.contains("five [usec, frames] pairs"), "{e}");
        }
    }

    /// tx-usecs / tx-frames: the transmit completions' own timer.
    #[test]
    fn tx_usecs_give_the_transmit_completions_a_timer_of_their_own() {
        // The receive timer is omx2009's firmware timer, a minimum gap.
        let rx = TimeoutSpec { mode: TimeoutMode::Throttle, ..TimeoutSpec::myri10g_default() };
        assert_eq!(
            spec("omx2009", "tx_delay_us = 50\ntx_frames = 16").unwrap(),
            CoalesceSpec::TimeoutTx(rx, TimeoutSpec::absolute(Duration::from_us(50), 16))
        );
        let CoalesceSpec::Adaptive(AdaptiveSpec::Dim(d)) =
            spec("modern", "adaptive_tx = false\ntx_delay_us = 16").unwrap()
        else {
            panic!("not DIM")
        };
        assert_eq!(d.tx, Some(TxModeration::Fixed { delay: Duration::from_us(16), frames: 0, cqe: false }));
        let e = err("omx2009", "tx_delay_us = 0\ntx_frames = 4");
        assert!(e.starts_with("invalid value for `nic.tx_frames`: 4"), "{e}");
    }
}
