//! The coalescing configuration of a receive queue: which policy
//! (`nic.coalescing`) and the parameters of its timer (`nic.delay_us`,
//! `nic.frames`, `nic.timeout_mode`, `nic.cap_us`, `nic.adaptive`).
//!
//! These are values only; the policies themselves (sans-I/O state machines)
//! live in `crate::nic::coalesce`, which builds one from a [`CoalesceSpec`].

use crate::time::Duration;
use serde::Deserialize;
use std::fmt;

/// Myri-10G default coalescing delay: the myri10ge Linux driver's
/// `myri10ge_intr_coal_delay = 75` (µs), drivers/net/ethernet/myricom/myri10ge/myri10ge.c;
/// also SPEC §5 preset `omx2009`.
pub const MYRI10G_DEFAULT_DELAY: Duration = Duration::from_us(75);

/// `nic.coalescing`: the strategies of SPEC §4. (The \[LCI] polling
/// watchdog, `crate::nic::watchdog`, is a firmware mechanism composed with
/// the policy, not a coalescing policy.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
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
/// `nic.timeout_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
pub enum TimeoutMode {
    /// `absolute` (default): the timer starts at the first unreported frame
    /// and is not re-armed (ethtool rx-usecs / rx-frames; Myri-10G firmware).
    #[default]
    #[serde(rename = "absolute")]
    Absolute,
    /// `packet`: the timer is re-armed at every frame (e1000 RDTR), bounded
    /// by an absolute cap from the first unreported frame (e1000 RADV).
    #[serde(rename = "packet")]
    PacketTimer,
    /// `throttle`: a minimum gap between two interrupts (e1000 ITR).
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

/// Which adaptive algorithm `adaptive` runs (`nic.adaptive`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdaptiveFlavor {
    /// `dim` (default): Linux DIM (lib/dim/net_dim.c) over the RX EQE profile table.
    #[default]
    Dim,
    /// `itr`: ixgbe-style ITR classes (lowest / low / bulk latency).
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
    Adaptive(AdaptiveFlavor),
    /// Marked frames raise at once; DIM drives the fallback timer.
    OpenMxAdaptive,
}

impl CoalesceSpec {
    /// The spec of strategy `c`: the timer `ts` for the timer-driven ones,
    /// `flavor` for `adaptive`.
    pub fn new(c: Coalescing, ts: TimeoutSpec, flavor: AdaptiveFlavor) -> Self {
        match c {
            Coalescing::Disabled => CoalesceSpec::Disabled,
            Coalescing::Timeout => CoalesceSpec::Timeout(ts),
            Coalescing::Openmx => CoalesceSpec::OpenMx(ts),
            Coalescing::Stream => CoalesceSpec::Stream(ts),
            Coalescing::Adaptive => CoalesceSpec::Adaptive(flavor),
            Coalescing::OpenmxAdaptive => CoalesceSpec::OpenMxAdaptive,
        }
    }

    /// The strategy name (the `nic.coalescing` value) used in result tables.
    pub fn strategy_name(&self) -> &'static str {
        match self {
            CoalesceSpec::Disabled => "disabled",
            CoalesceSpec::Timeout(_) => "timeout",
            CoalesceSpec::OpenMx(_) => "openmx",
            CoalesceSpec::Stream(_) => "stream",
            CoalesceSpec::Adaptive(_) => "adaptive",
            CoalesceSpec::OpenMxAdaptive => "openmx-adaptive",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::variant_names;

    /// Result tables print the names the parser accepts.
    #[test]
    fn display_names_are_the_parsed_names() {
        let ts = TimeoutSpec::myri10g_default();
        for (i, name) in variant_names::<Coalescing>().iter().enumerate() {
            let c: Coalescing = toml::Value::String(name.to_string()).try_into().unwrap();
            assert_eq!(CoalesceSpec::new(c, ts, AdaptiveFlavor::Dim).strategy_name(), *name, "variant {i}");
        }
        for name in variant_names::<TimeoutMode>() {
            let m: TimeoutMode = toml::Value::String(name.to_string()).try_into().unwrap();
            assert_eq!(m.to_string(), *name);
        }
        assert_eq!(variant_names::<TimeoutMode>(), ["absolute", "packet", "throttle"]);
        assert_eq!(MYRI10G_DEFAULT_DELAY, Duration::from_us(75));
    }
}
