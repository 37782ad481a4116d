//! The host I/O bus as configured: the `[pci]` table of a LANai platform
//! (the programmed I/O of its one 32-bit PCI bus; its DMA rate and per-DMA
//! overhead are the shared `nic.dma_MBps` and `nic.dma_startup_ns`) and the
//! bus's times as charged ([`BusTimes`]), for the one bus model
//! `crate::host::bus::Bus` that both stacks use: the LCI hosts' buses and
//! the Open-MX NIC's with `nic.dma_shared_bus`. It does not own the bus's
//! arbitration (`crate::host::bus`).

use super::{check_f, ConfigError};
use crate::time::Duration;
use serde::{Deserialize, Serialize};

/// The programmed I/O of the host's bus to a LANai NI (`[pci]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct PciCfg {
    /// Host-visible cost and bus occupancy of one PIO read of NI memory, ns.
    pub pio_read_ns: f64,
    /// Sustained programmed-I/O write rate into NI memory, MB/s.
    pub pio_write_MBps: f64,
    /// Bus occupancy of one PIO write burst besides its data, ns.
    pub pio_write_overhead_ns: f64,
}

/// Bytes of one PIO write of a doorbell or an interrupt re-arm: one 32-bit
/// word (the LANai and the PCI bus are 32-bit).
const PIO_WORD_BYTES: f64 = 4.0;

impl PciCfg {
    /// Range checks; errors name the preset's key (`pci.*`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_f("pci.pio_read_ns", self.pio_read_ns, 1.0, 1e6)?;
        check_f("pci.pio_write_MBps", self.pio_write_MBps, 1.0, 1e6)?;
        check_f("pci.pio_write_overhead_ns", self.pio_write_overhead_ns, 0.0, 1e6)
    }

    /// One 32-bit PIO write (a doorbell, an interrupt re-arm), ns: the
    /// burst's overhead and its word at the PIO rate.
    pub fn word_write_ns(&self) -> f64 {
        self.pio_write_overhead_ns + PIO_WORD_BYTES * 1e3 / self.pio_write_MBps
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
    /// `dma_overhead` per transfer: the NIC's with `nic.dma_shared_bus`,
    /// whose Open-MX driver prices its PIO writes as CPU time
    /// (`nic.doorbell_ns`, `host.irq_rearm_ns`) and makes no bus
    /// transaction of them (its PIO times are zero without `[pci]`,
    /// [`BusTimes::with_pio`]).
    pub fn dma_only(dma_bytes_per_s: u64, dma_overhead: Duration) -> Self {
        BusTimes {
            dma_bytes_per_s,
            dma_overhead,
            pio_read: Duration::ZERO,
            pio_write_bytes_per_s: dma_bytes_per_s,
            pio_write_overhead: Duration::ZERO,
        }
    }

    /// This bus with the host's programmed I/O across it as the validated
    /// `[pci]` table says (a LANai platform's PCI bus: its PIO reads and
    /// writes of NI memory hold the bus in turn with the DMAs).
    pub fn with_pio(self, c: &PciCfg) -> Self {
        BusTimes {
            pio_read: Duration::from_ns_f64(c.pio_read_ns),
            pio_write_bytes_per_s: (c.pio_write_MBps * 1e6).round() as u64,
            pio_write_overhead: Duration::from_ns_f64(c.pio_write_overhead_ns),
            ..self
        }
    }
}
