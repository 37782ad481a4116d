//! The host I/O bus as configured: the `[pci]` table of an LCI-family
//! preset (PIO and DMA on one 32-bit PCI bus) and the bus's times as
//! charged ([`BusTimes`]), for the one bus model `crate::host::bus::Bus`
//! that both stacks use: the LCI hosts' buses and the Open-MX NIC's with
//! `nic.dma_shared_bus`. It does not own the bus's arbitration
//! (`crate::host::bus`).

use super::{check_f, ConfigError};
use crate::time::Duration;
use serde::{Deserialize, Serialize};

/// The host I/O bus (one shared PCI bus per host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct PciCfg {
    /// Sustained DMA burst rate, MB/s.
    pub dma_MBps: f64,
    /// Bus occupancy of one DMA besides its data (arbitration, address phase, turnaround), ns.
    pub dma_overhead_ns: f64,
    /// Host-visible cost and bus occupancy of one PIO read of NI memory, ns.
    pub pio_read_ns: f64,
    /// Sustained programmed-I/O write rate into NI memory, MB/s.
    pub pio_write_MBps: f64,
    /// Bus occupancy of one PIO write burst besides its data, ns.
    pub pio_write_overhead_ns: f64,
}

impl PciCfg {
    /// Range checks; errors name the preset's key (`pci.*`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_f("pci.dma_MBps", self.dma_MBps, 1.0, 1e6)?;
        check_f("pci.dma_overhead_ns", self.dma_overhead_ns, 0.0, 1e6)?;
        check_f("pci.pio_read_ns", self.pio_read_ns, 1.0, 1e6)?;
        check_f("pci.pio_write_MBps", self.pio_write_MBps, 1.0, 1e6)?;
        check_f("pci.pio_write_overhead_ns", self.pio_write_overhead_ns, 0.0, 1e6)
    }
}

/// The host I/O bus (`[pci]`; `crate::host::bus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusTimes {
    pub dma_bytes_per_s: u64,
    pub dma_overhead: Duration,
    pub pio_read: Duration,
    pub pio_write_bytes_per_s: u64,
    pub pio_write_overhead: Duration,
}

impl BusTimes {
    /// A bus that carries DMAs only, at `dma_bytes_per_s` with
    /// `dma_overhead` per transfer: the Open-MX NIC's with
    /// `nic.dma_shared_bus`, whose driver prices its PIO writes as CPU
    /// time (`nic.doorbell_ns`, `host.irq_rearm_ns`) and makes no bus
    /// transaction of them (its PIO times are zero).
    pub fn dma_only(dma_bytes_per_s: u64, dma_overhead: Duration) -> Self {
        BusTimes {
            dma_bytes_per_s,
            dma_overhead,
            pio_read: Duration::ZERO,
            pio_write_bytes_per_s: dma_bytes_per_s,
            pio_write_overhead: Duration::ZERO,
        }
    }

    /// The times of a validated `[pci]` table.
    pub fn of(c: &PciCfg) -> Self {
        BusTimes {
            dma_bytes_per_s: (c.dma_MBps * 1e6).round() as u64,
            dma_overhead: Duration::from_ns_f64(c.dma_overhead_ns),
            pio_read: Duration::from_ns_f64(c.pio_read_ns),
            pio_write_bytes_per_s: (c.pio_write_MBps * 1e6).round() as u64,
            pio_write_overhead: Duration::from_ns_f64(c.pio_write_overhead_ns),
        }
    }
}
