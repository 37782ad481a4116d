//! The \[LCI] NIC features of the Open-MX world, validated: the polling
//! watchdog (`nic.watchdog_us`) and NI-level multicast forwarding
//! (`nic.multicast_forwarding`, used by `workload.forwarding = "ni"`).
//!
//! This module owns the cross-checks between those keys, the workload and
//! the stack (each error names the key, its value and what is allowed). It
//! does not own the features themselves (`crate::nic::watchdog`,
//! `crate::nic::multicast`) nor the preset keys' ranges
//! (`Platform::validate`).

use super::scenario::NicOpts;
use super::{check_f, ConfigError, Platform, Workload};
use crate::time::Duration;
use serde::{Deserialize, Serialize};

/// The longest watchdog interval, µs: a second, far beyond the study's
/// useful range ("a large range of delays works well", \[LCI] §5.1, Figure 7).
pub const WATCHDOG_US_MAX: f64 = 1e6;

/// `workload.forwarding`: who forwards a broadcast down its tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BcastForwarding {
    /// `host` (default): each rank receives the message and sends it on to
    /// its children with point-to-point sends (\[LCI] §4.1, MPICH's way).
    #[default]
    Host,
    /// `ni`: the root hands one multicast frame to its NIC; every NIC on
    /// the tree forwards it from its receive buffer and delivers it
    /// (\[LCI] §4.2). Needs `nic.multicast_forwarding = true`.
    Ni,
}

/// The validated \[LCI] NIC features of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NiFeatures {
    /// The polling watchdog's interval (`None`: no watchdog).
    pub watchdog: Option<Duration>,
    /// The firmware has a multicast forwarding table.
    pub multicast_forwarding: bool,
}

/// Validates the \[LCI] NIC features of a scenario against its platform,
/// its workload and its stack.
pub(super) fn ni_features(
    nic: &NicOpts,
    platform: &Platform,
    workload: &Workload,
    native_mx: bool,
) -> Result<NiFeatures, ConfigError> {
    let watchdog_us = nic.watchdog_us.unwrap_or(platform.nic.watchdog_us);
    check_f("nic.watchdog_us", watchdog_us, 0.0, WATCHDOG_US_MAX)?;
    if watchdog_us > 0.0 && native_mx {
        return Err(ConfigError::range(
            "nic.watchdog_us",
            watchdog_us,
            "0 with protocol.stack = \"native-mx\" (OS-bypass raises no receive interrupt to hold back)",
        ));
    }
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
    Ok(NiFeatures {
        watchdog: (watchdog_us > 0.0).then(|| Duration::from_ns_f64(watchdog_us * 1e3)),
        multicast_forwarding,
    })
}
