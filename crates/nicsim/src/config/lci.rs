//! The LCI stack's part of a scenario (SPEC §2.4): the tables it reads in
//! its own words when the hosts run it (`protocol.stack = "lci"`), and
//! their validation into [`LciScenario`], the typed part of the one
//! [`Scenario`](super::Scenario) (`Scenario::lci`) that `crate::lci` runs.
//!
//! The keys the LCI stack shares with the other stacks are read where the
//! other stacks' are: `preset`, `seed` and `platform` as any scenario's (the
//! preset, its tables and their mapping to the shared platform in
//! `config::lci_platform`), the NI features of its `[nic]` beside the
//! Open-MX world's (`config::nic_opts`, `config::nic_features`). This module
//! owns the rest: the reliable protocol of its `[protocol]`, the refusal of
//! `pcap`, and the cross-check of the protocol, the workload
//! (`config::lci_workload`) and the multicast forwarding. It does not
//! choose the stack (`config::stack`) nor build it (`crate::lci`).

use super::lci_workload::{lci_workload, LciWorkload, LciWorkloadOpts};
use super::nic_features::{lci_ni, LciNi};
use super::nic_opts::{Forwarding, LciNicOpts, NicOpts, Polling};
use super::{
    check_f, from_value, int_or, load_lci_platform, toml_error_in, variant_names, ConfigError, Int, LciPlatform,
    WatchdogDelay,
};
use crate::time::Duration;
use serde::Deserialize;

/// Removes `protocol.stack = "lci"` from an LCI scenario's table (the
/// choice of the stack read it, `config::stack`); a `[protocol]` left
/// empty is removed too: it named the stack, not the reliable protocol.
/// Another stack is refused by name.
fn take_stack(table: &mut toml::Table) -> Result<(), ConfigError> {
    let Some(toml::Value::Table(p)) = table.get_mut("protocol") else { return Ok(()) };
    let Some(stack) = p.remove("stack") else { return Ok(()) };
    let named = from_value::<super::Stack>("protocol.stack", stack.clone())?;
    if named != super::Stack::Lci {
        let kind = table.get("workload").and_then(|w| w.get("kind")).map(|k| k.to_string()).unwrap_or_default();
        return Err(ConfigError::range(
            "protocol.stack",
            stack,
            &format!("\"lci\" with workload.kind = {kind} in an LCI scenario"),
        ));
    }
    if p.is_empty() {
        table.remove("protocol");
    }
    Ok(())
}

/// Refuses a key of the other stacks' `[nic]` ([`NicOpts`]) that the LCI
/// stack's ([`LciNicOpts`]) does not read, in one line naming the key, its
/// value and why: the LANai firmware has no coalescing policy, steering nor
/// ring; it interrupts through its polling watchdog.
fn other_stacks_nic(table: &toml::Table) -> Result<(), ConfigError> {
    let Some(toml::Value::Table(nic)) = table.get("nic") else { return Ok(()) };
    let (lci, other) = (variant_names::<LciNicOpts>(), variant_names::<NicOpts>());
    match nic.iter().find(|(key, _)| !lci.contains(&key.as_str()) && other.contains(&key.as_str())) {
        None => Ok(()),
        Some((key, value)) => Err(ConfigError(format!(
            "`nic.{key}` = {value} is not read by protocol.stack = \"lci\" (its NI firmware has no coalescing \
             policy, steering nor ring: it interrupts through its polling watchdog, nic.watchdog_us; its keys: \
             {}); leave it out, or run the workload on Open-MX (protocol.stack = \"open-mx\")",
            lci.join(", ")
        ))),
    }
}

/// The LCI preset of an LCI scenario read on its own
/// ([`LciScenario::from_toml`]) that names none.
pub const DEFAULT_LCI_PRESET: &str = "lci2000";

/// The LCI scenario file as written by the user. Only `workload.kind` is
/// required.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LciScenarioFile {
    /// An LCI preset name ("lci2000") or a path to an LCI preset file.
    pub preset: Option<String>,
    /// Seed of every random choice; 0 ..= 2^63 - 1.
    pub seed: Option<Int>,
    /// Overrides of preset values: same tables and keys as the preset file.
    pub platform: Option<toml::Table>,
    #[serde(default)]
    pub nic: LciNicOpts,
    #[serde(default)]
    pub workload: LciWorkloadOpts,
    /// The reliable host protocol (timers study); absent = unreliable sends.
    pub protocol: Option<LciProtocolOpts>,
}

/// The reliable LCI host protocol (SPEC §2.4 fine-grain timers).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LciProtocolOpts {
    /// NI send buffers a sender may hold unacknowledged (default: the preset's ni.send_buffers, 64).
    pub send_buffers: Option<Int>,
    /// Delay of the explicit ack after the first unacknowledged packet, us (default 50).
    pub ack_delay_us: Option<f64>,
}

/// A validated reliable protocol.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LciProtocol {
    pub send_buffers: u32,
    pub ack_delay: Duration,
}

/// Default explicit-ack delay, us: \[estimate] about four one-way null
/// latencies (12 us, SPEC §5), so a reply in a request/reply exchange
/// carries the ack piggy-backed before the timer fires.
pub const DEFAULT_ACK_DELAY_US: f64 = 50.0;

/// A validated LCI scenario.
#[derive(Debug, Clone)]
pub struct LciScenario {
    /// The preset's tables in the LCI stack's words; each table's costs
    /// are converted as charged by its component (`cost_table!`).
    pub platform: LciPlatform,
    pub seed: u64,
    /// Arrival detection (`nic.polling`) and, for static-split, its split
    /// payload (`nic.split_bytes`).
    pub polling: Polling,
    pub split_bytes: u32,
    pub workload: LciWorkload,
    /// Multicast forwarding scheme and tree fan-out.
    pub forwarding: Forwarding,
    pub fanout: u32,
    /// Polling watchdog delay (`nic.watchdog_us`).
    pub watchdog: WatchdogDelay,
    /// NI clock period for fine-grain timers (`nic.clock_period_us`).
    pub clock_period: Option<Duration>,
    /// Reliable protocol (`[protocol]`).
    pub protocol: Option<LciProtocol>,
}

impl LciScenario {
    /// Parses and validates the LCI stack's part of a scenario text on its
    /// own (its preset, by default [`DEFAULT_LCI_PRESET`], whatever the
    /// workload's kind: the stack is not chosen here).
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        Self::from_table(toml::from_str(text).map_err(|e| toml_error_in("scenario", text, e))?)
    }

    /// [`LciScenario::from_toml`] of a parsed TOML table.
    pub fn from_table(mut table: toml::Table) -> Result<Self, ConfigError> {
        take_stack(&mut table)?;
        if table.contains_key("pcap") {
            return Err(ConfigError::new(
                "`pcap` (--pcap): the LCI stack writes no capture, its frames cross the NIs by PIO \
                 and DMA, not as Ethernet frames; leave it out, or run the workload on Open-MX \
                 (protocol.stack = \"open-mx\") to capture it",
            ));
        }
        other_stacks_nic(&table)?;
        Self::from_file(from_value("", toml::Value::Table(table))?)
    }

    /// Validates a parsed LCI scenario file.
    pub fn from_file(f: LciScenarioFile) -> Result<Self, ConfigError> {
        let platform = load_lci_platform(f.preset.as_deref().unwrap_or(DEFAULT_LCI_PRESET), f.platform.as_ref())?;
        let seed = f.seed.as_ref().map(|s| s.range("seed", 0, super::SEED_LIMIT - 1)).transpose()?;
        let LciNi { polling, split_bytes, forwarding, fanout, watchdog, clock_period } = lci_ni(&f.nic, &platform)?;
        let workload = lci_workload(&f.workload, &platform, seed)?;
        let protocol = match &f.protocol {
            None => None,
            Some(p) => {
                let most = platform.ni.send_buffers as u64;
                let send_buffers = int_or("protocol.send_buffers", &p.send_buffers, most, 1, most)? as u32;
                let ack_delay_us = p.ack_delay_us.unwrap_or(DEFAULT_ACK_DELAY_US);
                check_f("protocol.ack_delay_us", ack_delay_us, 0.0, 1e9)?;
                Some(LciProtocol { send_buffers, ack_delay: Duration::from_ns_f64(ack_delay_us * 1e3) })
            }
        };
        let multicast =
            matches!(workload, LciWorkload::Bcast { .. } | LciWorkload::Asp { .. } | LciWorkload::Qr { .. });
        if protocol.is_some() && multicast && forwarding != Forwarding::HostMessage {
            // Its windows and acks count packets between a sender and a
            // receiver host; a packet forwarded along a tree by the NI or
            // packet by packet by a host is outside that model (such runs
            // can wait forever for an ack).
            return Err(ConfigError::range(
                "nic.forwarding",
                format!("{:?}", forwarding.to_string()),
                "\"host-message\" with [protocol] (the reliable protocol) and a multicast workload",
            ));
        }
        Ok(LciScenario {
            platform,
            seed: seed.unwrap_or(1),
            polling,
            split_bytes,
            workload,
            forwarding,
            fanout,
            watchdog,
            clock_period,
            protocol,
        })
    }
}
