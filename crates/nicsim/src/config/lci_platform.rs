//! The \[LCI] cluster as a platform of the main world: the mapping from an
//! LCI-family preset (`presets/lci2000.toml`: `grid`, `link`, `pci`, `ni`,
//! `host`, `multicast`, and the main-world tables `kernel`, `cache`,
//! `library`, `nas`) to a [`Platform`], so that the main world's MPI
//! workloads (pingpong, stream, uniband, alltoall, exchange, nas-*) run on
//! the study's hardware with the preset's own values.
//!
//! This module owns that mapping (one line per main-world value, each read
//! from one preset value or derived from several, never a number of its
//! own) and the checks of the main-world tables, whose errors name the
//! preset's keys. It does not own the LCI stack's reading of the preset
//! (`config::lci`), which ignores the main-world tables, nor which stack a
//! scenario runs (`config::stack`).
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

use super::{
    check_f, check_u, CacheCfg, ConfigError, EmoCfg, HostCfg, LciPlatform, LibraryCfg, LinkCfg, NicCfg, Platform,
    TopologyCfg, TxReap,
};
use serde::{Deserialize, Serialize};

/// `[kernel]`: the Linux 2.x kernel and the Open-MX driver on the host, in
/// host cycles, and the driver's receive ring and interrupt settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelCfg {
    /// From the NI's interrupt line to the handler's first instruction
    /// (a latency, not CPU time), ns.
    pub irq_delivery_ns: f64,
    /// Bottom-half entry and exit around one poll of the ring.
    pub napi_poll_cycles: u32,
    /// Driver work per received frame.
    pub driver_rx_cycles: u32,
    /// Of `driver_rx_cycles`, the part after the handler posted its event.
    pub driver_rx_tail_cycles: u32,
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
    pub default_delay_us: f64,
}

/// `[cache]`: the host's caches and the lines the receive path touches
/// (`config::CacheCfg` without the transfers between dies: one die).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct P6CacheCfg {
    pub line_bytes: u32,
    pub l2_kib: u32,
    pub l1d_kib: u32,
    pub prefetch_misses_per_page: u32,
    pub memory_ns: f64,
    pub copy_hot_MBps: f64,
    pub copy_cold_MBps: f64,
    pub endpoint_lines: u32,
    pub event_lines: u32,
    pub napi_lines: u32,
    pub tx_lines: u32,
    pub tx_contention_lines: u32,
    pub pull_lines: u32,
    pub rx_dma_lines: u32,
    pub kernel_private_lines: u32,
    pub user_private_lines: u32,
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

/// The largest cycle count of one software step (a second at 16.7 GHz).
const CYCLES_MAX: u64 = 1 << 34;

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
    let k = need(&p.kernel, "kernel")?;
    check_f("kernel.irq_delivery_ns", k.irq_delivery_ns, 0.0, 1e9)?;
    for (key, v) in [
        ("kernel.napi_poll_cycles", k.napi_poll_cycles),
        ("kernel.driver_rx_cycles", k.driver_rx_cycles),
        ("kernel.handler_drop_cycles", k.handler_drop_cycles),
        ("kernel.handler_cycles", k.handler_cycles),
        ("kernel.tx_done_cycles", k.tx_done_cycles),
        ("kernel.syscall_cycles", k.syscall_cycles),
        ("kernel.driver_tx_cycles", k.driver_tx_cycles),
        ("kernel.wakeup_cycles", k.wakeup_cycles),
        ("kernel.block_cycles", k.block_cycles),
    ] {
        check_u(key, v as u64, 0, CYCLES_MAX)?;
    }
    check_u("kernel.driver_rx_tail_cycles", k.driver_rx_tail_cycles as u64, 0, k.driver_rx_cycles as u64)?;
    check_f("kernel.default_delay_us", k.default_delay_us, 0.0, 1e6)?;
    let c = need(&p.cache, "cache")?;
    check_f("cache.memory_ns", c.memory_ns, 0.0, 1e6)?;
    let l = need(&p.library, "library")?;
    for (key, v) in [
        ("library.send_cycles", l.send_cycles),
        ("library.event_cycles", l.event_cycles),
        ("library.post_recv_cycles", l.post_recv_cycles),
        ("library.small_send_cycles", l.small_send_cycles),
        ("library.mpi_send_cycles", l.mpi_send_cycles),
        ("library.mpi_recv_cycles", l.mpi_recv_cycles),
        ("library.pull_setup_cycles", l.pull_setup_cycles),
    ] {
        check_u(key, v as u64, 0, CYCLES_MAX)?;
    }
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
    let ni_ns = |cycles: u32| p.ni_cycles_ns(cycles);
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
            syscall_ns: host_ns(k.syscall_cycles),
            driver_tx_ns: host_ns(k.driver_tx_cycles),
            wakeup_ns: host_ns(k.wakeup_cycles),
            block_ns: host_ns(k.block_cycles),
            // The Pentium Pro's only idle state is HLT, left at once.
            sleep_enabled: false,
            idle_before_sleep_ns: 0.0,
            sleep_exit_ns: 0.0,
            // No copy engine (`host.ioat` is refused on this platform):
            // never charged.
            ioat_MBps: c.copy_cold_MBps,
            ioat_submit_ns: 0.0,
            ioat_completion_ns: 0.0,
            // [LCI] §3.1's dispatch to a user-level signal handler.
            signal_ns: p.host.signal_handler_ns,
        },
        cache: CacheCfg {
            line_bytes: c.line_bytes,
            l2_kib: c.l2_kib,
            l1d_kib: c.l1d_kib,
            prefetch_misses_per_page: c.prefetch_misses_per_page,
            // One die per host: never charged.
            same_socket_ns: c.memory_ns,
            other_socket_ns: c.memory_ns,
            memory_ns: c.memory_ns,
            copy_hot_MBps: c.copy_hot_MBps,
            copy_cold_MBps: c.copy_cold_MBps,
            endpoint_lines: c.endpoint_lines,
            event_lines: c.event_lines,
            napi_lines: c.napi_lines,
            tx_lines: c.tx_lines,
            tx_contention_lines: c.tx_contention_lines,
            pull_lines: c.pull_lines,
            rx_dma_lines: c.rx_dma_lines,
            kernel_private_lines: c.kernel_private_lines,
            user_private_lines: c.user_private_lines,
            path_footprints: false,
        },
        library: LibraryCfg {
            send_ns: host_ns(l.send_cycles),
            event_ns: host_ns(l.event_cycles),
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
    main_platform(&super::load_lci_platform(preset, overrides)?)
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
