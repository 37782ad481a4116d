//! The \[LCI] NIC features, validated, for every stack: the same concept
//! under the same key and the same field whichever firmware runs the NIC
//! ([`ni_features`], `Scenario::ni`).
//!
//! * On every stack: the polling watchdog (`nic.watchdog_us`, with the LCI
//!   stack's "inf") and the NI clock of fine-grain timers
//!   (`nic.clock_period_us`), each read once into [`NiFeatures`]; the NIC
//!   runs them (the Open-MX NIC's queues and `sim/clock.rs`, or the LANai
//!   firmware, `crate::nic::lanai`), and each stack's rule of what a value
//!   means is here.
//! * On the Open-MX and native MX stacks: NI-level multicast forwarding
//!   (`nic.multicast_forwarding`, used by `workload.forwarding = "ni"`),
//!   packet-shifting delivery (`nic.rx_delivery`), and link-level
//!   back-pressure (`nic.flow_control`, Myrinet's own and \[LCI]'s premise:
//!   "the hardware neither drops nor corrupts packets").
//! * On the LCI stack ([`lci_ni`]), its LANai firmware's own: arrival
//!   detection, of which packet shifting is one (`nic.polling`,
//!   `nic.split_bytes`), and multicast forwarding along trees
//!   (`nic.forwarding`, `nic.fanout`).
//!
//! This module owns the cross-checks between those keys, the platform, the
//! workload and the stack (each error names the key, its value and what is
//! allowed). It does not own the features themselves (`crate::nic::watchdog`,
//! `crate::nic::multicast`, `crate::nic::timers`, `crate::nic::delivery`,
//! `crate::nic::flow`), the `[nic]` table as written (`config::nic_opts`)
//! nor the preset keys' ranges (`Platform::validate`, `config::lanai`).

use super::nic_opts::{Forwarding, NicOpts, Polling, WatchdogOpt, WATCHDOG_ALLOWED};
use super::{
    check_f, int_or, nic_cycles_ns, BcastForwarding, ConfigError, Platform, RxDelivery, Stack, Workload,
    CLOCK_PERIOD_US_MAX, WATCHDOG_US_MAX,
};
use crate::time::Duration;
use std::fmt;

/// The validated \[LCI] NIC features of a scenario (`Scenario::ni`): the
/// watchdog and the clock on every stack, the rest on the Open-MX and
/// native MX stacks (on the LCI stack they are the platform's, unused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NiFeatures {
    /// The polling watchdog (`nic.watchdog_us`).
    pub watchdog: WatchdogDelay,
    /// The firmware has a multicast forwarding table.
    pub multicast_forwarding: bool,
    /// The NI clock's period (`nic.clock_period_us`; `None`: no NI clock,
    /// the library's timers run when the process enters the library or the
    /// OS timer wakes it).
    pub clock: Option<Duration>,
    /// The receive layout.
    pub rx_delivery: RxDelivery,
    /// Link-level back-pressure: the frames that can wait at a stopped
    /// link (`None`: no flow control; a full ring drops).
    pub flow_control: Option<u32>,
    /// With flow control, the stop reaches the sending host's transmitter
    /// (`nic.pause_to_sender`): the frames its send ring and qdisc hold
    /// (`tx_queue_len` + `tx_ring_frames`); `None`: the stop reaches no
    /// sender, the link holds `flow_control` frames only.
    pub pause_to_sender: Option<u32>,
    /// With flow control, how long the link stays stopped for a host that
    /// takes none of the frames before the NIC drops instead
    /// (`nic.flow_control_hold_us`); `None`: for as long as it takes.
    pub flow_control_hold: Option<Duration>,
}

/// The scenario's own values of the \[LCI] NIC features (its `[nic]`
/// table's), each `None` where the preset's (or, on the LCI stack, the
/// firmware's default) applies.
///
/// The scenario file's `NicOpts` holds them with the rest of the table; the
/// scenario hands over these five, so that this module does not depend on
/// the scenario's, which depends on it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct NiFeatureOpts {
    pub watchdog_us: Option<WatchdogOpt>,
    pub multicast_forwarding: Option<bool>,
    pub clock_period_us: Option<f64>,
    pub rx_delivery: Option<RxDelivery>,
    pub flow_control: Option<bool>,
}

/// Validates the \[LCI] NIC features of a scenario against its platform,
/// its workload and its stack.
pub(super) fn ni_features(
    nic: &NiFeatureOpts,
    platform: &Platform,
    workload: &Workload,
    stack: Stack,
) -> Result<NiFeatures, ConfigError> {
    let native_mx = stack == Stack::NativeMx;
    let (watchdog, clock) = match stack {
        Stack::Lci => lci_watchdog_clock(nic, platform)?,
        Stack::OpenMx | Stack::NativeMx => omx_watchdog_clock(nic, platform, native_mx)?,
    };
    let multicast_forwarding = nic.multicast_forwarding.unwrap_or(platform.nic.multicast_forwarding);
    if let Workload::Bcast { forwarding: BcastForwarding::Ni, .. } = workload {
        if !multicast_forwarding {
            return Err(ConfigError::range(
                "workload.forwarding",
                "\"ni\"",
                "\"host\", or \"ni\" with nic.multicast_forwarding = true (the firmware's forwarding table)",
            ));
        }
    }
    let rx_delivery = nic.rx_delivery.unwrap_or(platform.nic.rx_delivery);
    if rx_delivery == RxDelivery::Shifted {
        if native_mx {
            return Err(ConfigError::range(
                "nic.rx_delivery",
                "\"shifted\"",
                "\"ring\" with protocol.stack = \"native-mx\" (the MX firmware writes events, not frames)",
            ));
        }
        // The ring's two lines (completion entry, headers) must be in the
        // preset's count for shifted to take one away.
        if platform.cache.rx_dma_lines < 2 {
            return Err(ConfigError::range(
                "nic.rx_delivery",
                "\"shifted\"",
                &format!(
                    "\"ring\" when cache.rx_dma_lines ({}) counts fewer than the completion entry's and the \
                     headers' lines (2)",
                    platform.cache.rx_dma_lines
                ),
            ));
        }
    }
    let flow_control = nic.flow_control.unwrap_or(platform.nic.flow_control);
    let flow_frames = platform.nic.flow_control_frames;
    if flow_control && flow_frames == 0 {
        return Err(ConfigError::range(
            "nic.flow_control_frames",
            flow_frames,
            "1 ..= 1048576 with nic.flow_control = true (the frames a stopped link holds)",
        ));
    }
    let pause_to_sender =
        (flow_control && platform.nic.pause_to_sender).then(|| pause_to_sender(platform)).transpose()?;
    Ok(NiFeatures {
        watchdog,
        multicast_forwarding,
        clock,
        rx_delivery,
        flow_control: flow_control.then_some(flow_frames),
        pause_to_sender,
        flow_control_hold: (flow_control && platform.nic.flow_control_hold_us > 0.0)
            .then(|| Duration::from_ns_f64(platform.nic.flow_control_hold_us * 1e3)),
    })
}

/// `nic.watchdog_us` and `nic.clock_period_us` on the Open-MX and native
/// MX stacks: absent is the preset's; OS-bypass has no receive interrupt
/// for a watchdog to hold back; a clock tick fetches the host's words with
/// a small DMA read (`nic.tx_dma_startup_ns`).
fn omx_watchdog_clock(
    nic: &NiFeatureOpts,
    platform: &Platform,
    native_mx: bool,
) -> Result<(WatchdogDelay, Option<Duration>), ConfigError> {
    let watchdog = watchdog(nic.watchdog_us, Some(platform.nic.watchdog_us))?;
    if let (WatchdogDelay::After(d), true) = (watchdog, native_mx) {
        return Err(ConfigError::range(
            "nic.watchdog_us",
            d.as_us_f64(),
            "0 with protocol.stack = \"native-mx\" (OS-bypass raises no receive interrupt to hold back)",
        ));
    }
    let clock_us = nic.clock_period_us.unwrap_or(platform.nic.clock_period_us);
    let clock = clock_period(clock_us, platform.nic.tx_dma_startup_ns / 1e3, "nic.tx_dma_startup_ns", true)?;
    Ok((watchdog, clock))
}

/// `nic.watchdog_us` and `nic.clock_period_us` on the LCI stack, its LANai
/// firmware's: absent is no watchdog interrupt at all ("inf") and no
/// clock; a tick's host fetch is the firmware's DMA set-up, then a small
/// DMA on the PCI bus.
fn lci_watchdog_clock(
    nic: &NiFeatureOpts,
    platform: &Platform,
) -> Result<(WatchdogDelay, Option<Duration>), ConfigError> {
    let watchdog = watchdog(nic.watchdog_us, None)?;
    let (n, mhz) = (&platform.nic, platform.emo_cfg().nic_clock_mhz);
    let setup = platform.lanai.as_ref().map_or(0, |l| l.dma_setup_cycles);
    let fetch_us = (nic_cycles_ns(mhz, setup) + n.dma_startup_ns + FLAG_BYTES as f64 * 1e3 / n.dma_MBps) / 1e3;
    let fetch = "lanai.dma_setup_cycles at emo.nic_clock_mhz, then nic.dma_startup_ns and a word at nic.dma_MBps";
    let clock = nic.clock_period_us.map(|us| clock_period(us, fetch_us, fetch, false)).transpose()?.flatten();
    Ok((watchdog, clock))
}

/// `nic.pause_to_sender` (with flow control on): the link partner a stop
/// reaches must be the sending host's NIC, so two hosts on a direct cable,
/// and the sender's queue must be bounded. Returns that bound, the frames
/// the sender's send ring and qdisc hold.
fn pause_to_sender(platform: &Platform) -> Result<u32, ConfigError> {
    let direct = platform.topology.hosts == 2
        && platform.grid.is_none()
        && platform.link.switch_latency_ns == 0.0
        && platform.link.cut_through;
    if !direct {
        return Err(ConfigError::range(
            "nic.pause_to_sender",
            true,
            "false unless the platform is two hosts on a direct cable (topology.hosts = 2, no grid, \
             link.switch_latency_ns = 0, link.cut_through = true): a stop then reaches the sending NIC, \
             not a switch port",
        ));
    }
    let (qdisc, ring) = (platform.nic.tx_queue_len, platform.nic.tx_ring_frames);
    if qdisc == 0 {
        return Err(ConfigError::range(
            "nic.pause_to_sender",
            true,
            "false with nic.tx_queue_len = 0 (an unbounded sender's queue: nothing would ever be dropped)",
        ));
    }
    Ok(qdisc + ring)
}

/// static-split: payload from which one full-packet DMA beats two DMAs
/// (\[LCI] / SPEC §2.4: "double-dma below 512 B payload, full-packet above").
pub const DEFAULT_SPLIT_BYTES: u32 = 512;

/// Default multicast tree fan-out: \[LCI] uses binary trees (SPEC §2.4
/// "binary by default").
pub const DEFAULT_FANOUT: u32 = 2;

/// Size of the FULL word (one 32-bit word; LANai and PCI are 32-bit).
pub const FLAG_BYTES: u32 = 4;

/// The validated watchdog delay (`nic.watchdog_us`), one concept on every
/// stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WatchdogDelay {
    /// `none` (on the Open-MX stacks also 0): no watchdog; the NIC
    /// interrupts as it would without one (the Open-MX NIC through its
    /// coalescing policy, the LANai at once for every packet it delivers).
    #[default]
    Immediate,
    /// A timer of this length.
    After(Duration),
    /// `inf`: no interrupts at all (the LCI stack's only).
    Never,
}

impl WatchdogDelay {
    /// The watchdog's timer, if it has one.
    pub fn timer(self) -> Option<Duration> {
        match self {
            WatchdogDelay::After(d) => Some(d),
            WatchdogDelay::Immediate | WatchdogDelay::Never => None,
        }
    }
}

impl fmt::Display for WatchdogDelay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchdogDelay::Immediate => write!(f, "none"),
            WatchdogDelay::After(d) => write!(f, "{}", d.as_us_f64()),
            WatchdogDelay::Never => write!(f, "inf"),
        }
    }
}

/// Validates `nic.watchdog_us`, one key of every stack: on the LCI stack
/// (`omx_default` `None`) absent is "inf" (no interrupts) and a delay is
/// 0.01 ..= 10^7 us; on the Open-MX stacks absent is the preset's
/// `nic.watchdog_us` (`omx_default`), "none" is 0 (no watchdog: the NIC
/// interrupts through its coalescing policy), a delay 0 ..= 10^6 us, and
/// "inf", which would silence that policy, is refused.
fn watchdog(v: Option<WatchdogOpt>, omx_default: Option<f64>) -> Result<WatchdogDelay, ConfigError> {
    let us = match (v, omx_default) {
        (None, None) | (Some(WatchdogOpt::Inf), None) => return Ok(WatchdogDelay::Never),
        (Some(WatchdogOpt::None), _) => return Ok(WatchdogDelay::Immediate),
        (Some(WatchdogOpt::Inf), Some(_)) => {
            return Err(ConfigError::range(
                "nic.watchdog_us",
                "\"inf\"",
                &format!(
                    "\"none\" or 0 ..= {WATCHDOG_US_MAX} (0: none) with protocol.stack = \"open-mx\" or \
                     \"native-mx\": their NIC interrupts through its coalescing policy, which \"inf\" would \
                     silence; \"inf\" is the LCI stack's"
                ),
            ))
        }
        (Some(WatchdogOpt::Us(us)), _) => us,
        (None, Some(us)) => us,
    };
    if omx_default.is_some() {
        check_f("nic.watchdog_us", us, 0.0, WATCHDOG_US_MAX)?;
        if us == 0.0 {
            return Ok(WatchdogDelay::Immediate);
        }
    } else if !(0.01..=1e7).contains(&us) {
        return Err(ConfigError::range("nic.watchdog_us", us, WATCHDOG_ALLOWED));
    }
    Ok(WatchdogDelay::After(Duration::from_ns_f64(us * 1e3)))
}

/// Validates `nic.clock_period_us` = `us`, one key of every stack: at
/// least one tick's fetch of the host's words (`fetch_us`, priced as
/// `fetch` says: the next tick must not come before it returns, or fetches
/// pile up without bound and the NI does nothing else); 0 is no NI clock
/// where `zero_is_none` (the Open-MX stacks', up to 10^6 us; the LCI
/// stack's, absent for none, up to 10^7 us).
fn clock_period(us: f64, fetch_us: f64, fetch: &str, zero_is_none: bool) -> Result<Option<Duration>, ConfigError> {
    if zero_is_none && us == 0.0 {
        return Ok(None);
    }
    let max = if zero_is_none { CLOCK_PERIOD_US_MAX } else { 1e7 };
    if !(us.is_finite() && us >= fetch_us && us <= max) {
        let least = format!("{fetch_us:.3}");
        let least = least.trim_end_matches('0').trim_end_matches('.');
        let none = if zero_is_none { "0 (no NI clock), or " } else { "" };
        return Err(ConfigError::range(
            "nic.clock_period_us",
            us,
            &format!("{none}{least} ..= {max}: at least one tick's fetch of the host's words ({fetch})"),
        ));
    }
    Ok(Some(Duration::from_ns_f64(us * 1e3)))
}

/// The validated NI features only the LCI stack's firmware has (its
/// `[nic]` keys besides the watchdog and the clock, which are
/// [`NiFeatures`]').
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LciNi {
    pub polling: Polling,
    pub split_bytes: u32,
    pub forwarding: Forwarding,
    pub fanout: u32,
}

/// Validates the LCI stack's own `[nic]` keys against its preset.
pub(super) fn lci_ni(nic: &NicOpts, platform: &Platform) -> Result<LciNi, ConfigError> {
    let buffer_bytes = platform.link.mtu as u64;
    let split_bytes = int_or("nic.split_bytes", &nic.split_bytes, DEFAULT_SPLIT_BYTES as u64, 0, buffer_bytes)? as u32;
    let hosts = platform.topology.hosts as u64;
    // The default fan-out, on a grid too small for it: as many children as there are other hosts.
    let fanout = int_or("nic.fanout", &nic.fanout, DEFAULT_FANOUT.min(hosts as u32 - 1) as u64, 1, hosts - 1)? as u32;
    Ok(LciNi {
        polling: nic.polling.unwrap_or_default(),
        split_bytes,
        forwarding: nic.forwarding.unwrap_or_default(),
        fanout,
    })
}
