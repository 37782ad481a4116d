//! The tables of a platform with a LANai NI (the \[LCI] cluster,
//! `presets/lci2000.toml`) that no other hardware has, optional tables of
//! the one `Platform`: `[lanai]` (the NI's firmware and SRAM, [`LanaiCfg`])
//! and `[lci]` (the LCI library's own costs, [`LciHostCfg`]); the bus's
//! programmed I/O, `[pci]`, is `config::bus`'s. Every key that is a
//! concept of the shared tables is the shared key: the links' rate,
//! framing and delays (`link`), the MTU as one NI buffer's payload
//! (`link.mtu`), the DMA rate and per-DMA overhead (`nic.dma_MBps`,
//! `nic.dma_startup_ns`), the interrupt's dispatch and signal
//! (`host.irq_entry_ns`, `host.signal_ns`), the host clock
//! (`host.clock_ghz`) and the NIC processor's (`emo.nic_clock_mhz`).
//!
//! This module owns those two tables and their costs as charged (the
//! firmware's cycles are converted at the NIC clock by
//! `config::emo::nic_cycles_ns`).
//! It does not own the shared keys a LANai platform derives, its checks
//! nor the keys of the earlier shape (`config::lanai_derive`), nor the
//! firmware (`crate::nic::lanai`).

use super::units::cost_table;
use serde::{Deserialize, Serialize};

/// The largest cycle count of one firmware or application step the LANai
/// and LCI tables take (a second at 16.7 GHz is far beyond any of them).
const STEP_CYCLES_MAX: u32 = 1 << 24;

cost_table! {
    /// The LANai network interface: its SRAM buffers and its firmware's
    /// cycles (at the NIC clock, `emo.nic_clock_mhz`). One buffer's payload
    /// is the link's MTU (`link.mtu`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct LanaiCfg in "lanai" as n {
        /// NI SRAM, bytes (send + receive buffers must fit).
        pub sram_bytes: u32,
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
        /// NI-level multicast forwarding: firmware cycles per child (table
        /// lookup, header rewrite) besides the network DMA's set-up.
        pub fw_forward_cycles: u32 [0, STEP_CYCLES_MAX],
    }
}

cost_table! {
    /// The LCI library's own costs (its polling, send and upcall paths, its
    /// host receive queue, its multicast descriptors). The compute of the
    /// programs it runs is the workload's (`workload.*_cycles`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct LciHostCfg in "lci" as h {
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
        /// `host-packet` forwarding: PIO bytes of each extra descriptor (one
        /// per child; at most one NI buffer, `link.mtu`).
        pub descriptor_bytes: u32,
    }
    /// The LCI library's own costs as it charges them (the interrupt
    /// dispatch and the signal it takes are the host's, `HostTimes`).
    pub struct LciHostTimes;
}
