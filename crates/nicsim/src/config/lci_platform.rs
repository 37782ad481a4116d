//! The \[LCI] cluster's preset (`presets/lci2000.toml`, `family = "lci"`)
//! and its mapping to the shared [`Platform`], so that the Open-MX and
//! native MX stacks (pingpong, stream, uniband, alltoall, exchange, nas-*)
//! run on the study's hardware with the preset's own values, and the LCI
//! stack's hosts are hosts of the same world.
//!
//! This module owns the preset's tables ([`LciPlatform`]: `grid` and `pci`
//! are the shared [`GridCfg`](super::GridCfg) and [`PciCfg`](super::PciCfg);
//! `link`, `ni` (the LANai and its firmware), `host` (the LCI library's
//! costs), `multicast`; and the tables only the mapping reads, `kernel`,
//! `cache`, `library`, `nas`), their checks (errors name the preset's keys)
//! and the mapping (one line
//! per shared value, each read from one preset value or derived from
//! several, never a number of its own). It does not own the LCI stack's
//! scenario options (`config::scenario`, `scenario/lci.rs`) nor which stack a scenario runs
//! (`config::stack`).
//!
//! How the hardware maps (docs/design.md, "The [LCI] cluster in the main world"):
//! * one core per host (\[LCI] §2: "Each node contains a 200 MHz Intel
//!   Pentium Pro processor"), one die, one socket;
//! * the NIC's firmware per frame is the LANai's cycles at `ni.clock_mhz`:
//!   receive `fw_rx_cycles + dma_setup_cycles` (the packet, then the host
//!   DMA's set-up), transmit `fw_tx_cycles + dma_setup_cycles` (the
//!   descriptor, then the network DMA's); the transmit DMA from host memory
//!   costs one more DMA set-up and the bus's per-DMA overhead;
//! * host <-> NI DMA at `pci.dma_MBps` with `pci.dma_overhead_ns` per DMA,
//!   both directions on the one 32-bit PCI bus (`nic.dma_shared_bus`: the
//!   NIC's `crate::host::bus::Bus`, which a DMA holds for the overhead and
//!   its bytes; the transmit DMA's set-up, `tx_dma_startup_ns` beyond
//!   `dma_startup_ns`, is the LANai's work before the transaction);
//! * the doorbell and the interrupt re-arm are one 32-bit PIO write
//!   (`pci.pio_write_overhead_ns` + 4 B at `pci.pio_write_MBps`);
//! * the link at `link.rate_MBps` with the Myrinet framing
//!   (`link.wire_overhead_bytes`), the network a grid (`grid`) of
//!   cut-through switches (`crate::net::grid`);
//! * an interrupt costs the CPU `host.kernel_dispatch_ns` (\[LCI] §3.1);
//! * an Open-MX frame's payload is at most one NI buffer (`ni.buffer_bytes`
//!   is the link's MTU). The frames keep the main world's 14-byte Ethernet
//!   header (Open-MX's wire format), on top of the Myrinet framing.
//! * link-level back-pressure is on (`nic.flow_control`; Myrinet stops a
//!   sender whose receiver cannot take a packet): a frame that finds its
//!   host's ring full waits at that host's ingress, up to the NI's receive
//!   buffers plus every other NI's send buffers
//!   (`nic.flow_control_frames`); the sender is not stopped (`nic::flow`).

use super::units::cost_table;
use super::{
    check_u, toml_error, CacheCfg, ConfigError, EmoCfg, GridCfg, HostCfg, LibraryCfg, LinkCfg, NasCfg, NicCfg, PciCfg,
    Platform, TopologyCfg, TxReap, LCI_FAMILY,
};
use serde::{Deserialize, Serialize};

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
    pub kernel: Option<KernelCfg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheCfg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<OmxLibraryCfg>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nas: Option<NasCfg>,
}

/// The largest cycle count of one firmware or application step the LCI
/// tables take (a second at 16.7 GHz is far beyond any of them).
const STEP_CYCLES_MAX: u32 = 1 << 24;

cost_table! {
    /// Multicast forwarding costs and the compute of the multicast applications.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct LciMulticastCfg in "multicast" as m {
        /// `ni` forwarding: firmware cycles per child (table lookup, header
        /// rewrite) besides the network DMA set-up (`ni.dma_setup_cycles`).
        pub fw_forward_cycles: u32 [0, STEP_CYCLES_MAX],
        /// `host-packet`: PIO bytes of each extra descriptor (one per child;
        /// at most one NI buffer, `LciPlatform::validate`).
        pub descriptor_bytes: u32,
        /// ASP: host cycles per Floyd-Warshall element update.
        pub asp_elem_cycles: u32 [0, STEP_CYCLES_MAX],
        /// QR: host cycles per matrix element of a column-norm computation.
        pub qr_norm_cycles: u32 [0, STEP_CYCLES_MAX],
        /// QR: host cycles per matrix element of the Householder update.
        pub qr_update_cycles: u32 [0, STEP_CYCLES_MAX],
    }
}

cost_table! {
    /// Myrinet links and switches (the shared [`LinkCfg`] as the mapping
    /// gives it: the rate in MB/s, the framing in bytes).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(non_snake_case)]
    pub struct LciLinkCfg in "link" as l {
        /// Link rate per direction, MB/s (10^6 B/s).
        pub rate_MBps: f64 [1.0, 1e6],
        /// Per-switch routing latency of a packet head (cut-through), ns.
        pub switch_latency_ns: f64 [0.0, 1e6],
        /// Cable propagation per link, ns.
        pub propagation_ns: f64 [0.0, 1e6],
        /// Bytes on the wire besides the LCI packet (route bytes, type, CRC).
        pub wire_overhead_bytes: u32 [0, 4096],
    }
}

cost_table! {
    /// The LANai network interface and its firmware.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct LanaiCfg in "ni" as n {
        /// NI processor clock, MHz.
        pub clock_mhz: f64 [1.0, 1e5],
        /// NI SRAM, bytes (send + receive buffers must fit).
        pub sram_bytes: u32,
        /// Payload capacity of one NI packet buffer, bytes.
        pub buffer_bytes: u32 [16, 1 << 20],
        /// LCI packet header, bytes.
        pub header_bytes: u32 [4, 1024],
        /// NI send buffers.
        pub send_buffers: u32 [1, 4096],
        /// NI receive buffers.
        pub recv_buffers: u32 [1, 4096],
        /// Firmware cycles to handle one send descriptor up to the network DMA start.
        pub fw_tx_cycles: u32 [0, STEP_CYCLES_MAX],
        /// Firmware cycles to handle one received packet up to the host DMA start.
        pub fw_rx_cycles: u32 [0, STEP_CYCLES_MAX],
        /// Firmware cycles to program one DMA (any of the three engines).
        pub dma_setup_cycles: u32 [0, STEP_CYCLES_MAX],
    }
}

cost_table! {
    /// The host (Pentium Pro) and the LCI library.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct LciHostCfg in "host" as h {
        /// Host clock, MHz.
        pub clock_mhz: f64 [1.0, 1e5],
        /// Pinned host receive buffers in the queue the NI DMAs into.
        pub recv_buffers: u32 [1, 1 << 16],
        /// A failed poll of a cached host flag (cache hit), ns (above 0).
        pub poll_hit_ns: f64 [0.0, 1e9] => ns poll_hit,
        /// A successful poll: the NI wrote the line (cache miss), ns.
        pub poll_miss_ns: f64 [0.0, 1e9] => ns poll_miss,
        /// Library send path per packet besides the PIO itself (descriptor build, bookkeeping), ns.
        pub send_ns: f64 [0.0, 1e9] => ns send,
        /// Library receive path per packet: dispatch to the upcall and free the packet, ns.
        pub upcall_ns: f64 [0.0, 1e9] => ns upcall,
        /// Dispatching an interrupt to a kernel handler, ns.
        pub kernel_dispatch_ns: f64 [0.0, 1e9] => ns kernel_dispatch,
        /// Delivering it further to a user signal handler, ns.
        pub signal_handler_ns: f64 [0.0, 1e9] => ns signal_handler,
    }
    /// The LCI host library's costs (`[host]`), as the library charges them.
    pub struct LciHostTimes;
}

impl LanaiCfg {
    /// `cycles` of the LANai at `ni.clock_mhz`, in nanoseconds.
    pub fn cycles_ns(&self, cycles: u32) -> f64 {
        cycles as f64 * 1e3 / self.clock_mhz
    }
}

impl LciPlatform {
    /// Parses a preset text.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| toml_error("preset", e))
    }

    /// Range checks; errors name the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.family != LCI_FAMILY {
            return Err(ConfigError::range("family", format!("{:?}", self.family), "\"lci\""));
        }
        self.grid.validate()?;
        self.link.check()?;
        self.pci.validate()?;
        let n = &self.ni;
        n.check()?;
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
        let h = &self.host;
        h.check()?;
        self.multicast.check()?;
        check_u("multicast.descriptor_bytes", self.multicast.descriptor_bytes as u64, 0, n.buffer_bytes as u64)?;
        if h.poll_hit_ns <= 0.0 {
            return Err(ConfigError::range("host.poll_hit_ns", h.poll_hit_ns, "> 0"));
        }
        Ok(())
    }
}

/// Loads an LCI preset by name or path, applying overrides; errors name a
/// key as the user wrote it (see `load_platform`).
pub fn load_lci_platform(preset: &str, overrides: Option<&toml::Table>) -> Result<LciPlatform, ConfigError> {
    super::overrides::load_preset(preset, overrides, LciPlatform::validate)
}

cost_table! {
    /// `[kernel]`: the Linux 2.x kernel and the Open-MX driver on the host, in
    /// host cycles (each within `u32`: 21 s at 200 MHz), and the driver's
    /// receive ring and interrupt settings.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct KernelCfg in "kernel" as k {
        /// From the NI's interrupt line to the handler's first instruction
        /// (a latency, not CPU time), ns.
        pub irq_delivery_ns: f64 [0.0, 1e9],
        /// Bottom-half entry and exit around one poll of the ring.
        pub napi_poll_cycles: u32,
        /// Driver work per received frame.
        pub driver_rx_cycles: u32,
        /// Of `driver_rx_cycles`, the part after the handler posted its event.
        pub driver_rx_tail_cycles: u32 [0, k.driver_rx_cycles],
        /// Open-MX receive handler rejecting an invalid frame.
        pub handler_drop_cycles: u32,
        /// Open-MX receive handler: endpoint lookup, one event.
        pub handler_cycles: u32,
        /// Freeing one transmitted frame.
        pub tx_done_cycles: u32,
        /// System call entry and exit.
        pub syscall_cycles: u32,
        /// Open-MX send ioctl.
        pub driver_tx_cycles: u32,
        /// Waking a blocked process.
        pub wakeup_cycles: u32,
        /// Blocking in the wait ioctl.
        pub block_cycles: u32,
        /// Entries of the host receive ring the NI DMAs frames into.
        pub ring_slots: u32,
        /// Whether transmit completions are reported by interrupt.
        pub tx_done_interrupts: bool,
        /// Interrupt coalescing delay, us (0: an interrupt per frame).
        pub default_delay_us: f64 [0.0, 1e6],
    }
}

/// `[library]`: the Open-MX library and the MPI layer, in host cycles, and
/// the protocol's timers and limits (`config::LibraryCfg`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OmxLibraryCfg {
    pub send_cycles: u32,
    pub event_cycles: u32,
    pub post_recv_cycles: u32,
    pub small_send_cycles: u32,
    pub mpi_send_cycles: u32,
    pub mpi_recv_cycles: u32,
    pub pull_setup_cycles: u32,
    pub ack_after: u32,
    pub send_window_frames: u32,
    pub max_pulls: u32,
    pub delayed_ack_us: f64,
    pub resend_us: f64,
    pub pull_timeout_us: f64,
}

/// Bytes of one PIO write of a doorbell or an interrupt re-arm: one 32-bit
/// word (the LANai and the PCI bus are 32-bit).
const PIO_WORD_BYTES: f64 = 4.0;

/// A missing main-world table of an LCI preset.
fn need<'a, T>(table: &'a Option<T>, key: &str) -> Result<&'a T, ConfigError> {
    table.as_ref().ok_or_else(|| {
        ConfigError(format!(
            "missing key `{key}` (required: the preset's `{key}` table, to run Open-MX (protocol.stack = \
             \"open-mx\") on an LCI preset)"
        ))
    })
}

/// Checks the main-world tables of `p` (errors name the preset's keys).
fn check(p: &LciPlatform) -> Result<(), ConfigError> {
    need(&p.kernel, "kernel")?.check()?;
    need(&p.cache, "cache")?.check()?;
    need(&p.library, "library")?;
    need(&p.nas, "nas")?;
    // `link.mtu`'s range (`config::platform`, `LinkCfg`).
    let (lo, hi, v) = (576, 9000, p.ni.buffer_bytes);
    if !(lo..=hi).contains(&v) {
        let allowed = format!("an integer {lo} ..= {hi} in the main world, where one NI buffer is the link's MTU");
        return Err(ConfigError::range("ni.buffer_bytes", v, &allowed));
    }
    Ok(())
}

/// The main-world platform of the validated LCI preset `p` (see the module
/// note for what maps to what).
pub fn main_platform(p: &LciPlatform) -> Result<Platform, ConfigError> {
    check(p)?;
    let (k, c, l) = (need(&p.kernel, "kernel")?, need(&p.cache, "cache")?, need(&p.library, "library")?);
    let clock_mhz = p.host.clock_mhz;
    let host_ns = |cycles: u32| cycles as f64 * 1e3 / clock_mhz;
    let ni_ns = |cycles: u32| p.ni.cycles_ns(cycles);
    let dma_setup_ns = ni_ns(p.ni.dma_setup_cycles);
    let pio_word_ns = p.pci.pio_write_overhead_ns + PIO_WORD_BYTES * 1e3 / p.pci.pio_write_MBps;
    let platform = Platform {
        name: p.name.clone(),
        description: p.description.clone(),
        topology: TopologyCfg { hosts: p.grid.hosts, sockets: 1, dies_per_socket: 1, cores_per_die: 1 },
        link: LinkCfg {
            rate_gbps: p.link.rate_MBps * 8.0 / 1e3,
            mtu: p.ni.buffer_bytes,
            frame_overhead_bytes: p.link.wire_overhead_bytes,
            propagation_ns: p.link.propagation_ns,
            switch_latency_ns: p.link.switch_latency_ns,
            cut_through: true,
        },
        nic: NicCfg {
            fw_rx_ns: ni_ns(p.ni.fw_rx_cycles + p.ni.dma_setup_cycles),
            fw_tx_ns: ni_ns(p.ni.fw_tx_cycles + p.ni.dma_setup_cycles),
            fw_rx_stream_ns: 0.0,
            fw_rx_multiqueue_ns: 0.0,
            // [LCI] §2 "three DMA engines": one of them moves NI -> host.
            rx_dma_engines: 1,
            dma_startup_ns: p.pci.dma_overhead_ns,
            dma_MBps: p.pci.dma_MBps,
            tx_dma_startup_ns: dma_setup_ns + p.pci.dma_overhead_ns,
            irq_delivery_ns: k.irq_delivery_ns,
            doorbell_ns: pio_word_ns,
            ring_slots: k.ring_slots,
            small_bytes: 0,
            fill_thresh: 0,
            tx_done_interrupts: k.tx_done_interrupts,
            default_delay_us: k.default_delay_us,
            // One core: where completions are reaped changes no cost.
            tx_reap: TxReap::Napi,
            // The LANai firmware has one fixed timer and no DIM: `timeout`, its
            // transmit completions on the receive timer.
            default_coalescing: Default::default(),
            default_adaptive: Default::default(),
            default_timeout_mode: Default::default(),
            cqe_mode_rx: false,
            cqe_mode_tx: false,
            adaptive_tx: false,
            // [LCI] §2 "attached to the host's 32-bit, 33 MHz PCI bus": one bus, both directions.
            dma_shared_bus: true,
            multicast_forwarding: false,
            mcast_fwd_ns: ni_ns(p.multicast.fw_forward_cycles),
            watchdog_us: 0.0,
            clock_period_us: 0.0,
            rx_delivery: super::RxDelivery::default(),
            // Myrinet links stop the sender when the receiver cannot take a
            // packet: [LCI] §2 "LCI-ni does not implement retransmission,
            // assuming that the hardware neither drops nor corrupts packets"
            // (the Myrinet link's stop/go flow control; docs/design.md).
            flow_control: true,
            // What can wait for a stopped NI: its receive buffers, and every
            // other NI's send buffers (a stopped sender holds its packets in
            // them; senders are not stopped here, so the waiting frames stand
            // for those).
            flow_control_frames: p.ni.recv_buffers + p.grid.hosts.saturating_sub(1) * p.ni.send_buffers,
            // No qdisc bound: the LCI stack's sends wait for a send buffer.
            tx_queue_len: 0,
            tx_ring_frames: 0,
        },
        host: HostCfg {
            clock_ghz: clock_mhz / 1e3,
            irq_entry_ns: p.host.kernel_dispatch_ns,
            napi_poll_ns: host_ns(k.napi_poll_cycles),
            irq_rearm_ns: pio_word_ns,
            driver_rx_ns: host_ns(k.driver_rx_cycles),
            driver_rx_tail_ns: host_ns(k.driver_rx_tail_cycles),
            handler_drop_ns: host_ns(k.handler_drop_cycles),
            handler_ns: host_ns(k.handler_cycles),
            tx_done_ns: host_ns(k.tx_done_cycles),
            // No Open-MX skb destructors on the LCI stack.
            tx_softirq: false,
            // No Open-MX pulls on the LCI stack.
            pull_dup_check: false,
            tx_dtor_ns: 0.0,
            syscall_ns: host_ns(k.syscall_cycles),
            driver_tx_ns: host_ns(k.driver_tx_cycles),
            wakeup_ns: host_ns(k.wakeup_cycles),
            // One processor: the waker is the sleeper's core.
            wake_remote_ns: 0.0,
            // No kernel receive path: no NAPI, threaded or not.
            napi_thread_wake_ns: 0.0,
            napi_thread_switch_ns: 0.0,
            block_ns: host_ns(k.block_cycles),
            // The Pentium Pro's only idle state is HLT, left at once.
            sleep_enabled: false,
            idle_before_sleep_ns: 0.0,
            sleep_exit_ns: 0.0,
            // No periodic tick is modelled on the LCI hosts (`host.tick`).
            tick: crate::config::TickCfg::default(),
            // No copy engine (`host.ioat` is refused on this platform):
            // never charged.
            ioat_MBps: c.copy_cold_MBps,
            ioat_submit_ns: 0.0,
            ioat_completion_ns: 0.0,
            // [LCI] §3.1's dispatch to a user-level signal handler.
            signal_ns: p.host.signal_handler_ns,
        },
        cache: c.clone(),
        library: LibraryCfg {
            send_ns: host_ns(l.send_cycles),
            event_ns: host_ns(l.event_cycles),
            frag_done_ns: 0.0,
            post_recv_ns: host_ns(l.post_recv_cycles),
            small_send_ns: host_ns(l.small_send_cycles),
            mpi_send_ns: host_ns(l.mpi_send_cycles),
            mpi_recv_ns: host_ns(l.mpi_recv_cycles),
            pull_setup_ns: host_ns(l.pull_setup_cycles),
            ack_after: l.ack_after,
            send_window_frames: l.send_window_frames,
            max_pulls: l.max_pulls,
            delayed_ack_us: l.delayed_ack_us,
            resend_us: l.resend_us,
            pull_timeout_us: l.pull_timeout_us,
            // Open-MX 1.0's wire cuts frames at any MTU (the MX wire needs
            // 4144 B, more than one NI buffer).
            wire: crate::wire::WireMode::OpenMx10,
            pull_rerequest: crate::config::PullRerequest::default(),
            pin_page_ns: 0.0,
        },
        nas: need(&p.nas, "nas")?.clone(),
        emo: Some(EmoCfg { nic_clock_mhz: p.ni.clock_mhz, ..EmoCfg::default() }),
        grid: Some(p.grid.clone()),
    };
    platform.validate().map_err(|e| ConfigError(format!("preset {:?} in the main world: {}", p.name, e.0)))?;
    Ok(platform)
}

/// Loads the LCI preset `preset` with the scenario's overrides (same tables
/// and keys as the preset file) and maps it ([`main_platform`]).
pub fn load_main_platform(preset: &str, overrides: Option<&toml::Table>) -> Result<Platform, ConfigError> {
    main_platform(&load_lci_platform(preset, overrides)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{preset_text, Times};
    use crate::time::Duration;

    fn lci2000() -> Platform {
        load_main_platform("lci2000", None).unwrap()
    }

    #[test]
    fn the_mapping_reads_the_lci_tables() {
        let lci = LciPlatform::from_toml(preset_text("lci2000").unwrap()).unwrap();
        let p = lci2000();
        assert_eq!((p.topology.hosts, p.cores()), (64, 1));
        let t = Times::of(&p);
        // 160 MB/s links; (128 + 20) LANai cycles at 33 MHz.
        assert_eq!(t.link.bytes_per_s, 160_000_000);
        assert_eq!(t.nic.fw_rx, Duration::from_ns_f64(148.0 * 1e3 / 33.0));
        assert_eq!(t.nic.dma_bytes_per_s, 132_000_000);
        assert_eq!(p.host.irq_entry_ns, lci.host.kernel_dispatch_ns);
        assert_eq!(p.link.mtu, lci.ni.buffer_bytes);
        assert!(p.nic.dma_shared_bus && p.grid.is_some());
    }

    #[test]
    fn an_override_of_the_lci_tables_reaches_the_main_world() {
        let o: toml::Table = toml::from_str("[ni]\nfw_rx_cycles = 33\ndma_setup_cycles = 0\n").unwrap();
        let p = load_main_platform("lci2000", Some(&o)).unwrap();
        assert!((p.nic.fw_rx_ns - 1000.0).abs() < 1e-9, "{}", p.nic.fw_rx_ns);
    }

    #[test]
    fn a_missing_main_world_table_is_named() {
        let mut lci = LciPlatform::from_toml(preset_text("lci2000").unwrap()).unwrap();
        lci.kernel = None;
        let e = main_platform(&lci).unwrap_err().0;
        assert!(e.starts_with("missing key `kernel`") && e.contains("protocol.stack = \"open-mx\""), "{e}");
    }

    #[test]
    fn a_buffer_below_the_least_mtu_is_named() {
        let o: toml::Table = toml::from_str("[ni]\nbuffer_bytes = 256\n").unwrap();
        let e = load_main_platform("lci2000", Some(&o)).unwrap_err().0;
        assert!(e.contains("`ni.buffer_bytes`") && e.contains("256") && e.ends_with("MTU)"), "{e}");
    }
}
