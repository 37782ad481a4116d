//! Configuration of the \[LCI] stack (SPEC §2.4): the `lci2000`-family
//! platform preset and the LCI scenario, in the same two layers as the
//! Open-MX configuration (serde structs with `deny_unknown_fields` whose doc
//! comments are the user help, then a validation step whose errors name the
//! key, the value and what is allowed).
//!
//! This module does not build the stack (`crate::lci::Stack` does). A
//! preset belongs to the LCI family when its file has `family = "lci"`; a
//! scenario whose hosts run the LCI stack (`protocol.stack`,
//! `config::stack`) is parsed by [`stack_scenario`]: the stack's own
//! options ([`LciScenario`]) inside a [`Scenario`] of the world on the
//! preset's platform as the main world maps it (`config::lci_platform`).

use super::lci_workload::{lci_workload, LciWorkload, LciWorkloadOpts};
use super::Scenario;
use super::{
    check_f, check_u, from_value, int_or, toml_error, toml_error_in, BusTimes, ConfigError, GridCfg, Int, PciCfg,
};
use crate::time::Duration;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The value of the `family` key that marks an LCI preset.
pub const LCI_FAMILY: &str = "lci";

/// A whole LCI platform preset (`presets/lci2000.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LciPlatform {
    /// Must be "lci": an LCI-family preset (`config::stack`).
    pub family: String,
    /// Preset name.
    pub name: String,
    /// One-line description.
    pub description: String,
    pub grid: GridCfg,
    pub link: LciLinkCfg,
    pub pci: PciCfg,
    pub ni: LanaiCfg,
    pub host: LciHostCfg,
    pub multicast: LciMulticastCfg,
    /// What the main world's stack needs besides the hardware above
    /// (`config::lci_platform`); the LCI stack reads none of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<super::lci_platform::KernelCfg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<super::lci_platform::P6CacheCfg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<super::lci_platform::OmxLibraryCfg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nas: Option<super::NasCfg>,
}

/// Multicast forwarding costs and the compute of the multicast applications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LciMulticastCfg {
    /// `ni` forwarding: firmware cycles per child (table lookup, header
    /// rewrite) besides the network DMA set-up (`ni.dma_setup_cycles`).
    pub fw_forward_cycles: u32,
    /// `host-packet`: PIO bytes of each extra descriptor (one per child).
    pub descriptor_bytes: u32,
    /// ASP: host cycles per Floyd-Warshall element update.
    pub asp_elem_cycles: u32,
    /// QR: host cycles per matrix element of a column-norm computation.
    pub qr_norm_cycles: u32,
    /// QR: host cycles per matrix element of the Householder update.
    pub qr_update_cycles: u32,
}

/// Myrinet links and switches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct LciLinkCfg {
    /// Link rate per direction, MB/s (10^6 B/s).
    pub rate_MBps: f64,
    /// Per-switch routing latency of a packet head (cut-through), ns.
    pub switch_latency_ns: f64,
    /// Cable propagation per link, ns.
    pub propagation_ns: f64,
    /// Bytes on the wire besides the LCI packet (route bytes, type, CRC).
    pub wire_overhead_bytes: u32,
}

/// The LANai network interface and its firmware.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanaiCfg {
    /// NI processor clock, MHz.
    pub clock_mhz: f64,
    /// NI SRAM, bytes (send + receive buffers must fit).
    pub sram_bytes: u32,
    /// Payload capacity of one NI packet buffer, bytes.
    pub buffer_bytes: u32,
    /// LCI packet header, bytes.
    pub header_bytes: u32,
    /// NI send buffers.
    pub send_buffers: u32,
    /// NI receive buffers.
    pub recv_buffers: u32,
    /// Firmware cycles to handle one send descriptor up to the network DMA start.
    pub fw_tx_cycles: u32,
    /// Firmware cycles to handle one received packet up to the host DMA start.
    pub fw_rx_cycles: u32,
    /// Firmware cycles to program one DMA (any of the three engines).
    pub dma_setup_cycles: u32,
}

/// The host (Pentium Pro) and the LCI library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LciHostCfg {
    /// Host clock, MHz.
    pub clock_mhz: f64,
    /// Pinned host receive buffers in the queue the NI DMAs into.
    pub recv_buffers: u32,
    /// A failed poll of a cached host flag (cache hit), ns.
    pub poll_hit_ns: f64,
    /// A successful poll: the NI wrote the line (cache miss), ns.
    pub poll_miss_ns: f64,
    /// Library send path per packet besides the PIO itself (descriptor build, bookkeeping), ns.
    pub send_ns: f64,
    /// Library receive path per packet: dispatch to the upcall and free the packet, ns.
    pub upcall_ns: f64,
    /// Dispatching an interrupt to a kernel handler, ns.
    pub kernel_dispatch_ns: f64,
    /// Delivering it further to a user signal handler, ns.
    pub signal_handler_ns: f64,
}

impl LciPlatform {
    /// Parses a preset text.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| toml_error("preset", e))
    }

    /// NI cycles to nanoseconds.
    pub fn ni_cycles_ns(&self, cycles: u32) -> f64 {
        cycles as f64 * 1e3 / self.ni.clock_mhz
    }

    /// Range checks; errors name the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.family != LCI_FAMILY {
            return Err(ConfigError::range("family", format!("{:?}", self.family), "\"lci\""));
        }
        self.grid.validate()?;
        let l = &self.link;
        check_f("link.rate_MBps", l.rate_MBps, 1.0, 1e6)?;
        check_f("link.switch_latency_ns", l.switch_latency_ns, 0.0, 1e6)?;
        check_f("link.propagation_ns", l.propagation_ns, 0.0, 1e6)?;
        check_u("link.wire_overhead_bytes", l.wire_overhead_bytes as u64, 0, 4096)?;
        self.pci.validate()?;
        let n = &self.ni;
        check_f("ni.clock_mhz", n.clock_mhz, 1.0, 1e5)?;
        check_u("ni.buffer_bytes", n.buffer_bytes as u64, 16, 1 << 20)?;
        check_u("ni.header_bytes", n.header_bytes as u64, 4, 1024)?;
        check_u("ni.send_buffers", n.send_buffers as u64, 1, 4096)?;
        check_u("ni.recv_buffers", n.recv_buffers as u64, 1, 4096)?;
        let used = (n.send_buffers as u64 + n.recv_buffers as u64) * (n.buffer_bytes + n.header_bytes) as u64;
        if used > n.sram_bytes as u64 {
            return Err(ConfigError::range(
                "ni.send_buffers",
                n.send_buffers,
                &format!(
                    "(send_buffers + recv_buffers) * (buffer_bytes + header_bytes) <= sram_bytes = {}",
                    n.sram_bytes
                ),
            ));
        }
        for (k, v) in [
            ("ni.fw_tx_cycles", n.fw_tx_cycles),
            ("ni.fw_rx_cycles", n.fw_rx_cycles),
            ("ni.dma_setup_cycles", n.dma_setup_cycles),
        ] {
            check_u(k, v as u64, 0, 1 << 24)?;
        }
        let h = &self.host;
        check_f("host.clock_mhz", h.clock_mhz, 1.0, 1e5)?;
        check_u("host.recv_buffers", h.recv_buffers as u64, 1, 1 << 16)?;
        for (k, v) in [
            ("host.poll_hit_ns", h.poll_hit_ns),
            ("host.poll_miss_ns", h.poll_miss_ns),
            ("host.send_ns", h.send_ns),
            ("host.upcall_ns", h.upcall_ns),
            ("host.kernel_dispatch_ns", h.kernel_dispatch_ns),
            ("host.signal_handler_ns", h.signal_handler_ns),
        ] {
            check_f(k, v, 0.0, 1e9)?;
        }
        let m = &self.multicast;
        for (k, v) in [
            ("multicast.fw_forward_cycles", m.fw_forward_cycles),
            ("multicast.asp_elem_cycles", m.asp_elem_cycles),
            ("multicast.qr_norm_cycles", m.qr_norm_cycles),
            ("multicast.qr_update_cycles", m.qr_update_cycles),
        ] {
            check_u(k, v as u64, 0, 1 << 24)?;
        }
        check_u("multicast.descriptor_bytes", m.descriptor_bytes as u64, 0, n.buffer_bytes as u64)?;
        if h.poll_hit_ns <= 0.0 {
            return Err(ConfigError::range("host.poll_hit_ns", h.poll_hit_ns, "> 0"));
        }
        Ok(())
    }
}

/// Reads a preset (embedded name or `.toml` path) as a TOML table.
pub fn preset_table(preset: &str) -> Result<toml::Table, ConfigError> {
    if !super::overrides::is_file(preset) {
        return super::embedded_table(preset);
    }
    let text = super::read_config_file("preset", preset)?;
    toml::from_str(&text).map_err(|e| toml_error_in("preset", &text, e))
}

/// Whether a preset table belongs to the LCI family.
pub fn is_lci_table(t: &toml::Table) -> bool {
    t.get("family").and_then(|v| v.as_str()) == Some(LCI_FAMILY)
}

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

/// static-split: payload from which one full-packet DMA beats two DMAs
/// (\[LCI] / SPEC §2.4: "double-dma below 512 B payload, full-packet above").
pub const DEFAULT_SPLIT_BYTES: u32 = 512;

/// Default multicast tree fan-out: \[LCI] uses binary trees (SPEC §2.4
/// "binary by default").
pub const DEFAULT_FANOUT: u32 = 2;

/// Size of the FULL word (one 32-bit word; LANai and PCI are 32-bit).
pub const FLAG_BYTES: u32 = 4;

/// NI firmware policy options.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LciNicOpts {
    /// Arrival detection: pio | double-dma | full-packet | static-split |
    /// packet-shifting (default).
    pub polling: Option<Polling>,
    /// static-split: payload (bytes) from which full-packet is used (default 512).
    pub split_bytes: Option<Int>,
    /// Multicast forwarding: host-message | host-packet | ni (default).
    pub forwarding: Option<Forwarding>,
    /// Children per node of the per-sender spanning trees (default 2: binary).
    pub fanout: Option<Int>,
    /// Polling watchdog delay: "none" (interrupt at once per packet), a
    /// number of us in [0.01, 1e7], or "inf" (no interrupts, default).
    pub watchdog_us: Option<WatchdogOpt>,
    /// NI clock period for fine-grain timers, us (absent: no NI clock interrupts).
    pub clock_period_us: Option<f64>,
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

/// The allowed values of `nic.watchdog_us`.
const WATCHDOG_ALLOWED: &str = "\"none\", \"inf\" or a number of us in [0.01, 1e7]";

impl<'de> Deserialize<'de> for WatchdogOpt {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = WatchdogOpt;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(WATCHDOG_ALLOWED)
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

/// The validated watchdog delay (`nic.watchdog_us`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchdogDelay {
    /// `none`: no watchdog; the NI interrupts at once for every packet it delivers.
    Immediate,
    /// A timer of this length.
    After(Duration),
    /// `inf`: no interrupts at all.
    Never,
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

/// The LCI preset's times and rates as the world charges them, converted
/// once at validation (NI cycles at `ni.clock_mhz`, nanoseconds by
/// [`Duration::from_ns_f64`], `*_MBps` to whole bytes per second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LciTimes {
    /// NI firmware: a send descriptor, a received packet, one DMA set-up.
    pub fw_tx: Duration,
    pub fw_rx: Duration,
    pub dma_setup: Duration,
    /// NI multicast forwarding of one packet to one child (table lookup and
    /// header rewrite plus the network DMA set-up).
    pub fw_forward: Duration,
    /// Myrinet links: rate, per-switch routing latency, cable propagation.
    pub link_bytes_per_s: u64,
    pub switch_latency: Duration,
    pub propagation: Duration,
    pub host: LciHostTimes,
    pub bus: BusTimes,
}

/// The LCI host library's costs (`[host]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LciHostTimes {
    pub poll_hit: Duration,
    pub poll_miss: Duration,
    pub send: Duration,
    pub upcall: Duration,
    pub kernel_dispatch: Duration,
    pub signal_handler: Duration,
}

impl LciTimes {
    /// The times of a validated LCI platform.
    pub fn of(p: &LciPlatform) -> Self {
        let cycles = |c: u32| Duration::from_ns_f64(p.ni_cycles_ns(c));
        let ns = Duration::from_ns_f64;
        let h = &p.host;
        LciTimes {
            fw_tx: cycles(p.ni.fw_tx_cycles),
            fw_rx: cycles(p.ni.fw_rx_cycles),
            dma_setup: cycles(p.ni.dma_setup_cycles),
            fw_forward: cycles(p.multicast.fw_forward_cycles + p.ni.dma_setup_cycles),
            link_bytes_per_s: (p.link.rate_MBps * 1e6).round() as u64,
            switch_latency: ns(p.link.switch_latency_ns),
            propagation: ns(p.link.propagation_ns),
            host: LciHostTimes {
                poll_hit: ns(h.poll_hit_ns),
                poll_miss: ns(h.poll_miss_ns),
                send: ns(h.send_ns),
                upcall: ns(h.upcall_ns),
                kernel_dispatch: ns(h.kernel_dispatch_ns),
                signal_handler: ns(h.signal_handler_ns),
            },
            bus: BusTimes::of(&p.pci),
        }
    }
}

/// A validated LCI scenario.
#[derive(Debug, Clone)]
pub struct LciScenario {
    pub platform: LciPlatform,
    /// The platform's times, converted once.
    pub times: LciTimes,
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

/// Loads an LCI preset by name or path, applying overrides; errors name a
/// key as the user wrote it (see `load_platform`).
pub fn load_lci_platform(preset: &str, overrides: Option<&toml::Table>) -> Result<LciPlatform, ConfigError> {
    let table = preset_table(preset)?;
    let source = super::overrides::Source { preset, is_file: super::overrides::is_file(preset), overrides };
    super::overrides::load(&source, table, LciPlatform::validate)
}

/// Validates a parsed scenario table whose hosts run the LCI stack:
/// its options and program ([`LciScenario`]) in the world of its preset's
/// platform (`preset`, `seed` and `platform` read as any scenario's, mapped
/// by `config::lci_platform`), whose workload is the stack's
/// (`Workload::LciStack`). The main world's NI clock is off: the stack's
/// library keeps its own (`nic.clock_period_us` of the LCI options).
pub fn stack_scenario(table: toml::Table) -> Result<Scenario, ConfigError> {
    let mut world = toml::Table::new();
    for key in ["preset", "seed", "platform"] {
        if let Some(v) = table.get(key) {
            world.insert(key.into(), v.clone());
        }
    }
    // Any workload the mapped platform runs, replaced by the stack's.
    let mut w = toml::Table::new();
    w.insert("kind".into(), toml::Value::String("pingpong".into()));
    world.insert("workload".into(), toml::Value::Table(w));
    let lci = LciScenario::from_table(table)?;
    let mut s = Scenario::from_file(from_value("", toml::Value::Table(world))?)?;
    s.workload = super::Workload::LciStack;
    s.ni.clock = None;
    s.lci = Some(Box::new(lci));
    Ok(s)
}

impl LciScenario {
    /// Parses and validates an LCI scenario text.
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
        Self::from_file(from_value("", toml::Value::Table(table))?)
    }

    /// Validates a parsed LCI scenario file.
    pub fn from_file(f: LciScenarioFile) -> Result<Self, ConfigError> {
        let platform = load_lci_platform(f.preset.as_deref().unwrap_or(DEFAULT_LCI_PRESET), f.platform.as_ref())?;
        let seed = f.seed.as_ref().map(|s| s.range("seed", 0, super::SEED_LIMIT - 1)).transpose()?;
        let buffer_bytes = platform.ni.buffer_bytes as u64;
        let split_bytes =
            int_or("nic.split_bytes", &f.nic.split_bytes, DEFAULT_SPLIT_BYTES as u64, 0, buffer_bytes)? as u32;
        let polling = f.nic.polling.unwrap_or_default();
        let workload = lci_workload(&f.workload, &platform, seed)?;
        let hosts = platform.grid.hosts as u64;
        let forwarding = f.nic.forwarding.unwrap_or_default();
        // The default fan-out, on a grid too small for it: as many children as there are other hosts.
        let fanout =
            int_or("nic.fanout", &f.nic.fanout, DEFAULT_FANOUT.min(hosts as u32 - 1) as u64, 1, hosts - 1)? as u32;
        let watchdog = watchdog(f.nic.watchdog_us)?;
        let clock_period = match f.nic.clock_period_us {
            None => None,
            Some(p) => {
                // Each tick's host fetch (firmware DMA set-up, then a small DMA
                // on the PCI bus) must end within the period: shorter periods
                // pile fetches up without bound and the NI does nothing else.
                let pci = &platform.pci;
                let fetch_us = (platform.ni_cycles_ns(platform.ni.dma_setup_cycles)
                    + pci.dma_overhead_ns
                    + FLAG_BYTES as f64 * 1e3 / pci.dma_MBps)
                    / 1e3;
                if !(p.is_finite() && p >= fetch_us && p <= 1e7) {
                    return Err(ConfigError::range(
                        "nic.clock_period_us",
                        p,
                        &format!("{fetch_us:.3} ..= 1e7: one tick's host fetch takes {fetch_us:.3} us"),
                    ));
                }
                Some(Duration::from_ns_f64(p * 1e3))
            }
        };
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
            times: LciTimes::of(&platform),
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

/// Validates `nic.watchdog_us`.
fn watchdog(v: Option<WatchdogOpt>) -> Result<WatchdogDelay, ConfigError> {
    let us = match v {
        None | Some(WatchdogOpt::Inf) => return Ok(WatchdogDelay::Never),
        Some(WatchdogOpt::None) => return Ok(WatchdogDelay::Immediate),
        Some(WatchdogOpt::Us(us)) => us,
    };
    if !(0.01..=1e7).contains(&us) {
        return Err(ConfigError::range("nic.watchdog_us", us, WATCHDOG_ALLOWED));
    }
    Ok(WatchdogDelay::After(Duration::from_ns_f64(us * 1e3)))
}

#[cfg(test)]
mod tests;
