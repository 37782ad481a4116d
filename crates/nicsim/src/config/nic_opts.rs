//! The `[nic]` table of a scenario file as the user writes it, one table
//! for every stack ([`NicOpts`]): the coalescing policy and steering the
//! Open-MX and native MX stacks' driver reads, the \[LCI] NI features both
//! kinds of firmware have (`watchdog_us`, `clock_period_us`, validated in
//! `config::nic_features`), and beside them the keys only the LCI stack's
//! LANai firmware reads (arrival detection, multicast forwarding along
//! trees: `config::stack` refuses them elsewhere by name); and the reading
//! of [`NicOpts`] into the coalescing policy the run uses
//! ([`coalesce_spec`]: the strategy, its receive and transmit timers, DIM's
//! profiles, and a one-line refusal of a key the chosen policy does not
//! read).
//!
//! Beside the scenario (`scenario.rs`, which holds a `NicOpts` and calls
//! [`coalesce_spec`]) and above the policy types (`coalesce.rs`) and the
//! preset (`platform.rs`), so that none of them reads another in a circle.

use super::{
    check_f, int_or, AdaptiveFlavor, AdaptiveSpec, CoalesceSpec, Coalescing, ConfigError, DimProfile, DimSide, DimSpec,
    DimTable, Int, Platform, TimeoutMode, TimeoutSpec, TxModeration, DIM_PROFILES,
};
use crate::time::Duration;
use serde::Deserialize;
use std::fmt;

/// NIC policy options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicOpts {
    /// Coalescing strategy: disabled | timeout | openmx | stream | adaptive |
    /// openmx-adaptive (default: the preset's `nic.default_coalescing`).
    pub coalescing: Option<Coalescing>,
    /// Coalescing delay in microseconds (ethtool rx-usecs; default: the
    /// preset's NIC default).
    pub delay_us: Option<f64>,
    /// Frames threshold (ethtool rx-frames; 0 = none; at most 2^20).
    pub frames: Option<Int>,
    /// Timeout variant: absolute (default) | packet | throttle.
    pub timeout_mode: Option<TimeoutMode>,
    /// Absolute cap of the packet timer in microseconds (0 = none).
    pub cap_us: Option<f64>,
    /// Adaptive flavour: dim | itr | dim-irq (default: the preset's
    /// `nic.default_adaptive`).
    pub adaptive: Option<AdaptiveFlavor>,
    /// The transmit completions' own timer in microseconds (ethtool
    /// tx-usecs; with `timeout`, or DIM without TX DIM). Unset with
    /// `tx_frames` unset: they share the receive timer.
    pub tx_delay_us: Option<f64>,
    /// The transmit completions' frames threshold (ethtool tx-frames).
    pub tx_frames: Option<Int>,
    /// DIM's receive timer restarts at every completion (ethtool
    /// cqe-mode-rx; default: the preset's `nic.cqe_mode_rx`).
    pub cqe_mode_rx: Option<bool>,
    /// The same for the transmit side (ethtool cqe-mode-tx).
    pub cqe_mode_tx: Option<bool>,
    /// TX DIM (ethtool adaptive-tx; default: the preset's `nic.adaptive_tx`).
    pub adaptive_tx: Option<bool>,
    /// DIM's receive profile table (ethtool rx-profile, Linux 6.12+): five
    /// `[usec, frames]` pairs (default: the kernel's table of the mode).
    pub rx_profile: Option<toml::Value>,
    /// TX DIM's profile table (ethtool tx-profile).
    pub tx_profile: Option<toml::Value>,
    /// Receive steering: single-rr (default) | single-core | multiqueue.
    pub steering: Option<Steering>,
    /// Core that receives the interrupt with `single-core` (default 0).
    pub irq_core: Option<Int>,
    /// \[LCI] polling watchdog delay, us: a number, "none" (no watchdog:
    /// the NIC interrupts at once) or "inf" (no interrupts; the LCI stack
    /// only). Open-MX: 0 ..= 10^6, 0 = "none" (default: the preset's
    /// `nic.watchdog_us`); LCI: 0.01 ..= 10^7 (default "inf").
    pub watchdog_us: Option<WatchdogOpt>,
    /// \[LCI] NI-level multicast forwarding in the firmware (default: the
    /// preset's `nic.multicast_forwarding`); used by `workload.forwarding = "ni"`.
    pub multicast_forwarding: Option<bool>,
    /// \[LCI] NI clock period in microseconds for the library's fine-grain
    /// timers, at least one tick's fetch of the host's words. Open-MX: 0
    /// or nic.tx_dma_startup_ns ..= 10^6 (0: none; default: the preset's
    /// `nic.clock_period_us`); LCI: up to 10^7 (absent: none).
    pub clock_period_us: Option<f64>,
    /// How the NIC lays a received frame into host memory: ring | shifted
    /// (\[LCI] packet shifting; default: the preset's `nic.rx_delivery`).
    pub rx_delivery: Option<super::RxDelivery>,
    /// Link-level back-pressure: a frame that finds its receive ring full
    /// waits at the stopped link instead of being dropped (default: the
    /// preset's `nic.flow_control`; the bound is its `nic.flow_control_frames`).
    pub flow_control: Option<bool>,
    /// LCI only: arrival detection: pio | double-dma | full-packet |
    /// static-split | packet-shifting (default).
    pub polling: Option<Polling>,
    /// LCI only, static-split: payload (bytes) from which full-packet is
    /// used (default 512).
    pub split_bytes: Option<Int>,
    /// LCI only: multicast forwarding: host-message | host-packet | ni
    /// (default; the Open-MX stacks' is `workload.forwarding`).
    pub forwarding: Option<Forwarding>,
    /// LCI only: children per node of the per-sender spanning trees
    /// (default 2: binary; the Open-MX stacks' is `workload.tree`).
    pub fanout: Option<Int>,
    /// Host 0's own timeout coalescing, when it differs from the other
    /// hosts' (the \[EMO] testbed kept Host A at the driver's defaults while
    /// Host B's setting varied). Default: as the other hosts.
    pub host0: Option<Host0Nic>,
}

/// `nic.polling`: the five arrival-detection strategies of \[LCI] (SPEC §2.4,
/// `crate::nic::delivery`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Polling {
    /// The host reads the NI's delivered-packet counter across the bus.
    Pio,
    /// Data DMA, then a separate DMA of the FULL word.
    DoubleDma,
    /// One DMA of the whole buffer, FULL word included.
    FullPacket,
    /// double-dma below `nic.split_bytes` payload bytes, full-packet above.
    StaticSplit,
    /// One DMA of payload, header and FULL word flush against the buffer's end.
    #[default]
    PacketShifting,
}

/// `nic.forwarding`: who forwards multicast data, and at what granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Forwarding {
    /// The host library re-sends each whole message to its children.
    HostMessage,
    /// The host library re-sends each packet as it arrives.
    HostPacket,
    /// The NI firmware forwards each packet (default).
    #[default]
    Ni,
}

impl fmt::Display for Forwarding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Forwarding::HostMessage => "host-message",
            Forwarding::HostPacket => "host-packet",
            Forwarding::Ni => "ni",
        })
    }
}

/// `nic.watchdog_us` as written: "none", "inf" or a number of microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WatchdogOpt {
    None,
    Inf,
    Us(f64),
}

/// The allowed values of `nic.watchdog_us` on the LCI stack.
pub(super) const WATCHDOG_ALLOWED: &str = "\"none\", \"inf\" or a number of us in [0.01, 1e7]";

impl<'de> Deserialize<'de> for WatchdogOpt {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = WatchdogOpt;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"none\", \"inf\" or a number of us")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<WatchdogOpt, E> {
                Ok(WatchdogOpt::Us(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<WatchdogOpt, E> {
                Ok(WatchdogOpt::Us(v as f64))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<WatchdogOpt, E> {
                Ok(WatchdogOpt::Us(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<WatchdogOpt, E> {
                match v {
                    "none" => Ok(WatchdogOpt::None),
                    "inf" => Ok(WatchdogOpt::Inf),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `nic.host0`: host 0's absolute-timeout coalescing.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host0Nic {
    /// Coalescing delay in microseconds (default: the preset's NIC default).
    pub delay_us: Option<f64>,
    /// Frames threshold (0 = none; at most 2^20).
    pub frames: Option<Int>,
}

/// `nic.steering`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Steering {
    /// One queue, interrupt spread round-robin over all cores (default).
    #[default]
    SingleRr,
    /// One queue, interrupt bound to `nic.irq_core`.
    SingleCore,
    /// [OMX-MQ]: one queue and vector per core, queue = endpoint mod cores.
    Multiqueue,
}

/// Largest `usec` and `pkts` of a DIM profile: `struct dim_cq_moder` holds
/// them in `u16`s (include/linux/dim.h).
const PROFILE_MAX: u64 = u16::MAX as u64;

/// A profile table as the user writes it (`nic.rx_profile`,
/// `nic.tx_profile`: ethtool -C rx-profile / tx-profile, Linux 6.12+):
/// five `[usec, frames]` pairs.
fn profile_table(key: &str, v: &toml::Value) -> Result<DimTable, ConfigError> {
    let allowed = "five [usec, frames] pairs of integers 0 ..= 65535, e.g. \
                   [[2, 256], [8, 128], [16, 64], [32, 64], [64, 64]] (usec 0 only with frames 0 or 1)";
    let bad = || ConfigError::range(key, v, allowed);
    let rows = v.as_array().filter(|a| a.len() == DIM_PROFILES).ok_or_else(bad)?;
    let mut t = [DimProfile { usec: 0, frames: 0 }; DIM_PROFILES];
    for (slot, row) in t.iter_mut().zip(rows) {
        let pair = row.as_array().filter(|a| a.len() == 2).ok_or_else(bad)?;
        let num = |x: &toml::Value| x.as_integer().and_then(|n| u64::try_from(n).ok()).filter(|&n| n <= PROFILE_MAX);
        let (Some(usec), Some(frames)) = (num(&pair[0]), num(&pair[1])) else { return Err(bad()) };
        if usec == 0 && frames > 1 {
            return Err(bad());
        }
        *slot = DimProfile { usec: usec as u32, frames: frames as u32 };
    }
    Ok(t)
}

/// Why `nic.rx_usecs_irq` and its kin (`struct ethtool_coalesce`
/// `rx_coalesce_usecs_irq`, `rx_max_coalesced_frames_irq`, and the `tx_`
/// pair: a moderation that applies while an interrupt is pending) are
/// refused: a driver takes them only if its `supported_coalesce_params`
/// has `ETHTOOL_COALESCE_USECS_IRQ` / `ETHTOOL_COALESCE_MAX_FRAMES_IRQ`
/// (net/ethtool/coalesce.c refuses them otherwise). bnxt honours them
/// (bnxt.c `bnxt_init_dflt_coal`: `coal_ticks_irq`, `coal_bufs_irq`, sent
/// as the completion ring's `cmpl_aggr_dma_tmr_during_int` and
/// `num_cmpl_dma_aggr_during_int`), as does tg3 (`HOSTCC_RXCOAL_TICK_INT`);
/// the drivers of nicsim's NICs do not: myri10ge takes rx-usecs only, mlx5
/// rx/tx-usecs, -frames, adaptive and CQE mode, and acenic (the Tigon)
/// has no ethtool coalescing.
pub const IRQ_MODERATION: &str = "no NIC nicsim models honours it: myri10ge takes rx-usecs only, mlx5 \
     rx/tx-usecs, rx/tx-frames, adaptive and CQE mode, acenic no ethtool coalescing; bnxt and tg3 do \
     (a moderation that applies while an interrupt is pending)";

/// Why a `[nic]` key named after an ethtool setting is not a key of the
/// model (the unknown-key error gives it in place of the keys allowed):
/// `nic.rx_usecs_irq`, `nic.rx_frames_irq`, `nic.tx_usecs_irq`,
/// `nic.tx_frames_irq` ([`IRQ_MODERATION`]).
pub(crate) fn not_modelled(key: &str) -> Option<&'static str> {
    const IRQ_KEYS: [&str; 4] = ["nic.rx_usecs_irq", "nic.rx_frames_irq", "nic.tx_usecs_irq", "nic.tx_frames_irq"];
    IRQ_KEYS.contains(&key).then_some(IRQ_MODERATION)
}

/// `key` is set but the policy does not read it: one line naming both.
fn not_read(key: &str, policy: &str, why: &str) -> ConfigError {
    ConfigError::new(format!(
        "`nic.{key}` is not read by nic.coalescing = \"{policy}\" ({why}); leave it out or choose a policy that reads it"
    ))
}

/// A fixed timer from the first completion, with the check that one with
/// no delay still reports the last frames.
fn absolute_timer(delay_key: &str, delay_us: f64, frames_key: &str, frames: u32) -> Result<TimeoutSpec, ConfigError> {
    check_f(delay_key, delay_us, 0.0, 1e6)?;
    if delay_us == 0.0 && frames > 1 {
        // ethtool rx-usecs = 0 with rx-frames = N > 1: fewer frames would
        // never be reported.
        return Err(ConfigError::range(
            frames_key,
            frames,
            &format!("0 or 1 when {delay_key} = 0 with the absolute timeout (fewer frames would never be reported)"),
        ));
    }
    Ok(TimeoutSpec::absolute(Duration::from_ns_f64(delay_us * 1e3), frames))
}

/// The coalescing of the scenario's receive queues from its `[nic]` table
/// and the preset's defaults (`nic.default_coalescing`,
/// `nic.default_adaptive`, `nic.cqe_mode_rx`, `nic.cqe_mode_tx`,
/// `nic.adaptive_tx`: what the NIC's driver does when nothing is set).
/// A key the chosen policy does not read is refused by name.
pub(crate) fn coalesce_spec(n: &NicOpts, platform: &Platform) -> Result<CoalesceSpec, ConfigError> {
    let pn = &platform.nic;
    let coalescing = n.coalescing.unwrap_or(pn.default_coalescing);
    let policy = CoalesceSpec::new(coalescing, TimeoutSpec::myri10g_default(), AdaptiveFlavor::Dim).strategy_name();
    let adaptive = matches!(coalescing, Coalescing::Adaptive | Coalescing::OpenmxAdaptive);
    let flavor = n.adaptive.unwrap_or(pn.default_adaptive);
    let tx_given = n.tx_delay_us.is_some() || n.tx_frames.is_some();
    let tx_key = if n.tx_delay_us.is_some() { "tx_delay_us" } else { "tx_frames" };
    let dim_keys = [
        ("cqe_mode_rx", n.cqe_mode_rx.is_some()),
        ("cqe_mode_tx", n.cqe_mode_tx.is_some()),
        ("adaptive_tx", n.adaptive_tx.is_some()),
        ("rx_profile", n.rx_profile.is_some()),
        ("tx_profile", n.tx_profile.is_some()),
    ];
    if !adaptive {
        if n.adaptive.is_some() {
            return Err(not_read(
                "adaptive",
                policy,
                "it chooses the algorithm of \"adaptive\" and \"openmx-adaptive\"",
            ));
        }
        if let Some((key, _)) = dim_keys.iter().find(|(_, set)| *set) {
            let why = if *key == "cqe_mode_rx" {
                "it is DIM's; a timer restarted at each frame is nic.timeout_mode = \"packet\""
            } else {
                "it is DIM's (\"adaptive\", \"openmx-adaptive\")"
            };
            return Err(not_read(key, policy, why));
        }
        let ts = timeout_spec(n, pn.default_delay_us, pn.default_timeout_mode, coalescing)?;
        return match coalescing {
            Coalescing::Timeout if tx_given => {
                let delay_us = n.tx_delay_us.unwrap_or(pn.default_delay_us);
                let frames = int_or("nic.tx_frames", &n.tx_frames, 0, 0, 1 << 20)? as u32;
                let tx = absolute_timer("nic.tx_delay_us", delay_us, "nic.tx_frames", frames)?;
                Ok(CoalesceSpec::TimeoutTx(ts, tx))
            }
            _ if tx_given => Err(not_read(tx_key, policy, "its transmit completions share the receive timer")),
            _ => Ok(CoalesceSpec::new(coalescing, ts, flavor)),
        };
    }
    let sets_rx = [
        ("delay_us", n.delay_us.is_some()),
        ("frames", n.frames.is_some()),
        ("timeout_mode", n.timeout_mode.is_some()),
        ("cap_us", n.cap_us.is_some()),
    ];
    if let Some((key, _)) = sets_rx.iter().find(|(_, set)| *set) {
        let why = match flavor {
            AdaptiveFlavor::Itr => "ITR sets the interrupt gap itself",
            _ => "DIM sets the receive timer from its profile table: nic.rx_profile",
        };
        return Err(not_read(key, policy, why));
    }
    if coalescing == Coalescing::OpenmxAdaptive && flavor == AdaptiveFlavor::Itr {
        return Err(not_read("adaptive", policy, "its fallback timer is DIM's: \"dim\" or \"dim-irq\""));
    }
    if flavor != AdaptiveFlavor::Dim {
        let why = match flavor {
            AdaptiveFlavor::Itr => "with nic.adaptive = \"itr\"",
            _ => "with nic.adaptive = \"dim-irq\", the RX EQE table on one timer",
        };
        if let Some((key, _)) = dim_keys.iter().find(|(_, set)| *set) {
            return Err(not_read(key, policy, why));
        }
        if tx_given {
            return Err(not_read(tx_key, policy, why));
        }
        return Ok(CoalesceSpec::new(coalescing, TimeoutSpec::myri10g_default(), flavor));
    }
    let table = |key: &str, v: &Option<toml::Value>| v.as_ref().map(|v| profile_table(key, v)).transpose();
    let rx = DimSide { cqe: n.cqe_mode_rx.unwrap_or(pn.cqe_mode_rx), table: table("nic.rx_profile", &n.rx_profile)? };
    let tx_cqe = n.cqe_mode_tx.unwrap_or(pn.cqe_mode_tx);
    let tx_table = table("nic.tx_profile", &n.tx_profile)?;
    let tx = if n.adaptive_tx.unwrap_or(pn.adaptive_tx) {
        if tx_given {
            return Err(not_read(tx_key, policy, "TX DIM sets the transmit timer with nic.adaptive_tx = true"));
        }
        Some(TxModeration::Dim(DimSide { cqe: tx_cqe, table: tx_table }))
    } else {
        if tx_table.is_some() {
            return Err(not_read("tx_profile", policy, "it is TX DIM's, with nic.adaptive_tx = false"));
        }
        if tx_given {
            let delay_us = n.tx_delay_us.unwrap_or(pn.default_delay_us);
            let frames = int_or("nic.tx_frames", &n.tx_frames, 0, 0, 1 << 20)? as u32;
            let t = absolute_timer("nic.tx_delay_us", delay_us, "nic.tx_frames", frames)?;
            Some(TxModeration::Fixed { delay: t.delay, frames, cqe: tx_cqe })
        } else if n.cqe_mode_tx.is_some() {
            return Err(not_read(
                "cqe_mode_tx",
                policy,
                "the transmit completions share the receive timer without nic.adaptive_tx or nic.tx_delay_us",
            ));
        } else {
            None
        }
    };
    let spec = DimSpec { rx, tx, at_irq: false };
    Ok(match coalescing {
        Coalescing::Adaptive => CoalesceSpec::Adaptive(AdaptiveSpec::Dim(spec)),
        _ => CoalesceSpec::OpenMxAdaptive(spec),
    })
}

/// The receive timer of the timer-driven policies (`nic.delay_us`,
/// `nic.frames`, `nic.timeout_mode`, `nic.cap_us`; `default_delay_us` and
/// `default_mode`: the preset's) for strategy `coalescing`.
fn timeout_spec(
    n: &NicOpts,
    default_delay_us: f64,
    default_mode: TimeoutMode,
    coalescing: Coalescing,
) -> Result<TimeoutSpec, ConfigError> {
    let delay_us = n.delay_us.unwrap_or(default_delay_us);
    check_f("nic.delay_us", delay_us, 0.0, 1e6)?;
    let frames = int_or("nic.frames", &n.frames, 0, 0, 1 << 20)? as u32;
    let cap_us = n.cap_us.unwrap_or(0.0);
    check_f("nic.cap_us", cap_us, 0.0, 1e6)?;
    let ts = TimeoutSpec {
        mode: n.timeout_mode.unwrap_or(default_mode),
        delay: Duration::from_ns_f64(delay_us * 1e3),
        frames,
        cap: Duration::from_ns_f64(cap_us * 1e3),
    };
    // The absolute timer with no delay raises only on the frames
    // threshold: the last frames of a run below it would never be
    // reported (ethtool rx-usecs = 0, rx-frames = N > 1).
    if ts.mode == TimeoutMode::Absolute
        && ts.delay.is_zero()
        && frames > 1
        && matches!(coalescing, Coalescing::Timeout | Coalescing::Openmx | Coalescing::Stream)
    {
        return Err(ConfigError::range(
            "nic.frames",
            frames,
            "0 or 1 when nic.delay_us = 0 with the absolute timeout (fewer frames would never be reported)",
        ));
    }
    Ok(ts)
}
