//! The LCI stack's part of a scenario (SPEC §2.4), read by the one
//! scenario reader (`Scenario::from_toml`, which reads the file once for
//! every stack) when the hosts run it (`protocol.stack = "lci"`): its keys
//! beside the shared ones, validated into [`LciScenario`] (`Scenario::lci`,
//! which `crate::lci` runs); and, for every stack, the refusal of a key of
//! the shared tables that only the other stacks read
//! ([`refuse_other_stacks_keys`]).
//!
//! The keys the LCI stack shares with the other stacks are read as theirs
//! are, once: `preset`, `seed` and `platform` (the one platform, whose
//! `[lanai]`, `[pci]` and `[lci]` tables the stack needs, `config::lanai`),
//! the one `[workload]` (validated for this stack, `config::workload`), the
//! NIC's watchdog and clock (`nic.watchdog_us`, `nic.clock_period_us`: the
//! scenario's `ni`, `config::nic_features`) and, beside them, the LANai
//! firmware's own `[nic]` keys (`config::nic_opts`, validated in
//! `config::nic_features` `lci_ni`), `[protocol]` (`stack`, and the reliable
//! protocol's keys beside the other stacks'). This module owns the rest:
//! the reliable protocol's validation, the refusal of `pcap`, and the
//! cross-check of the protocol, the workload and the multicast forwarding.
//! It does not choose the stack (`config::stack`) nor build it
//! (`crate::lci`).

use super::super::nic_features::{lci_ni, LciNi};
use super::super::nic_opts::{Forwarding, NicOpts, Polling};
use super::{HostOpts, ProtocolOpts, ScenarioFile};
use crate::config::{
    check_f, int_or, variant_names, ConfigError, LanaiCfg, LciHostCfg, Platform, Stack, Workload, DEFAULT_PRESET,
};
use crate::time::Duration;

/// The `[nic]` keys the LCI stack's firmware reads; of them, the Open-MX
/// and native MX stacks read the last two, and the rest of `[nic]`.
const LCI_NIC: [&str; 6] = ["polling", "split_bytes", "forwarding", "fanout", "watchdog_us", "clock_period_us"];

/// The `[protocol]` keys the LCI stack reads; of them, the other stacks
/// read `stack`, and the rest of `[protocol]`.
const LCI_PROTOCOL: [&str; 3] = ["stack", "send_buffers", "ack_delay_us"];

/// Refuses a key of `pcap`, `[host]`, `[nic]` or `[protocol]` that `stack`
/// does not read and another stack does, in one line naming the key, its
/// value and why (a key no stack reads is the parser's to name): the LCI
/// stack writes no capture, the LANai firmware has no coalescing policy,
/// steering nor ring, and its hosts no kernel receive path; the Open-MX
/// NICs have no LANai arrival detection nor forwarding trees, and their
/// libraries no LCI reliable protocol.
pub(super) fn refuse_other_stacks_keys(table: &toml::Table, stack: Stack) -> Result<(), ConfigError> {
    let lci = stack == Stack::Lci;
    if lci && table.contains_key("pcap") {
        return Err(ConfigError::new(
            "`pcap` (--pcap): the LCI stack writes no capture, its frames cross the NIs by PIO \
             and DMA, not as Ethernet frames; leave it out, or run the workload on Open-MX \
             (protocol.stack = \"open-mx\") to capture it",
        ));
    }
    let sections: [(&str, &[&str], &[&str], &str); 3] = [
        ("host", variant_names::<HostOpts>(), &[], "its hosts have no kernel receive path"),
        (
            "nic",
            variant_names::<NicOpts>(),
            &LCI_NIC,
            "its NI firmware has no coalescing policy, steering nor ring: it interrupts through its polling \
             watchdog, nic.watchdog_us",
        ),
        ("protocol", variant_names::<ProtocolOpts>(), &LCI_PROTOCOL, "its library is not Open-MX"),
    ];
    for (name, keys, lci_keys, why) in sections {
        let Some(toml::Value::Table(t)) = table.get(name) else { continue };
        let shared = |k: &str| matches!(k, "watchdog_us" | "clock_period_us" | "stack");
        let unread = |k: &str| keys.contains(&k) && (lci != lci_keys.contains(&k)) && !shared(k);
        let Some((key, value)) = t.iter().find(|(k, _)| unread(k)) else { continue };
        return Err(ConfigError(if lci {
            let own = if lci_keys.is_empty() { "none".to_owned() } else { lci_keys.join(", ") };
            format!(
                "`{name}.{key}` = {value} is not read by protocol.stack = \"lci\" ({why}; its keys here: \
                 {own}); leave it out, or run the workload on Open-MX (protocol.stack = \"open-mx\")"
            )
        } else {
            format!(
                "`{name}.{key}` = {value} is read by protocol.stack = \"lci\" only (the LANai firmware's \
                 arrival detection and forwarding trees, the LCI library's reliable protocol); leave it out, \
                 or run the workload on the LCI stack (an LCI-family preset, protocol.stack = \"lci\")"
            )
        }));
    }
    Ok(())
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

/// The LCI stack's part of a validated scenario (`Scenario::lci`; the
/// platform, the seed, the program and the NIC's watchdog and clock,
/// `Scenario::ni`, are the scenario's own, read once for every stack).
#[derive(Debug, Clone)]
pub struct LciScenario {
    /// Its LANai NI (`[lanai]`; its clock, `emo.nic_clock_mhz`, and its
    /// bus, `nic.dma_*` and `[pci]`, are the platform's).
    pub lanai: LanaiCfg,
    /// The LCI library's own costs (`[lci]`).
    pub lib: LciHostCfg,
    /// Arrival detection (`nic.polling`) and, for static-split, its split
    /// payload (`nic.split_bytes`).
    pub polling: Polling,
    pub split_bytes: u32,
    /// Multicast forwarding scheme and tree fan-out.
    pub forwarding: Forwarding,
    pub fanout: u32,
    /// Reliable protocol (`[protocol]` with a key besides `stack`, or empty).
    pub protocol: Option<LciProtocol>,
}

impl LciScenario {
    /// The LCI stack's keys of the one scenario read (`Scenario::from_toml`
    /// reads the file once, for every stack), on the scenario's platform:
    /// its LANai and library tables, its firmware's own `[nic]` keys
    /// (`config::nic_features` `lci_ni`) and its reliable protocol
    /// (`reliable`: `[protocol]` asks for it, [`reliable_asked`]). Its
    /// program is the scenario's `[workload]`, read for this stack
    /// (`RunsOn::Lci` with [`LciScenario::fanout`]) and cross-checked by
    /// [`LciScenario::check_workload`].
    pub(super) fn read(f: &ScenarioFile, platform: &Platform, reliable: bool) -> Result<Self, ConfigError> {
        let (lanai, lib) = match (&platform.lanai, &platform.lci) {
            (Some(n), Some(l)) => (n.clone(), l.clone()),
            _ => {
                let preset = f.preset.as_deref().unwrap_or(DEFAULT_PRESET);
                return Err(ConfigError(format!(
                    "missing key `lci` (required: the preset's `[lanai]` and `[lci]` tables, to run the LCI \
                     library (protocol.stack = \"lci\"); preset {preset:?} has none)"
                )));
            }
        };
        let LciNi { polling, split_bytes, forwarding, fanout } = lci_ni(&f.nic, platform)?;
        let p = &f.protocol;
        let protocol = if reliable {
            let most = lanai.send_buffers as u64;
            let send_buffers = int_or("protocol.send_buffers", &p.send_buffers, most, 1, most)? as u32;
            let ack_delay_us = p.ack_delay_us.unwrap_or(DEFAULT_ACK_DELAY_US);
            check_f("protocol.ack_delay_us", ack_delay_us, 0.0, 1e9)?;
            Some(LciProtocol { send_buffers, ack_delay: Duration::from_ns_f64(ack_delay_us * 1e3) })
        } else {
            None
        };
        Ok(LciScenario { lanai, lib, polling, split_bytes, forwarding, fanout, protocol })
    }

    /// Refuses the reliable protocol with a multicast program forwarded
    /// other than host by host, message by message.
    pub(super) fn check_workload(&self, workload: &Workload) -> Result<(), ConfigError> {
        let multicast = matches!(workload, Workload::BcastBench { .. } | Workload::Asp { .. } | Workload::Qr { .. });
        if self.protocol.is_some() && multicast && self.forwarding != Forwarding::HostMessage {
            // Its windows and acks count packets between a sender and a
            // receiver host; a packet forwarded along a tree by the NI or
            // packet by packet by a host is outside that model (such runs
            // can wait forever for an ack).
            return Err(ConfigError::range(
                "nic.forwarding",
                format!("{:?}", self.forwarding.to_string()),
                "\"host-message\" with [protocol] (the reliable protocol) and a multicast workload",
            ));
        }
        Ok(())
    }
}

/// Whether a scenario table asks for the LCI stack's reliable protocol:
/// its `[protocol]` has a key besides `stack`, or is empty (one that names
/// the stack only leaves it off).
pub(super) fn reliable_asked(table: &toml::Table) -> bool {
    match table.get("protocol") {
        Some(toml::Value::Table(p)) => p.is_empty() || p.keys().any(|k| k != "stack"),
        _ => false,
    }
}
