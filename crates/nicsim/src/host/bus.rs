//! The host I/O bus: one conventional PCI bus per host, shared by the
//! host's programmed I/O to the NIC and the NIC's DMA engines.
//!
//! This module owns arbitration and occupancy only. Every transaction is
//! granted in request order (FIFO): it starts at `max(now, bus free)` and
//! holds the bus for its duration. A PIO poll across the bus therefore
//! delays a DMA requested while it is in flight, and vice versa. It does
//! not know why a transaction is made. Its users: the \[LCI] stack's
//! hosts and NIs (`crate::library::lci`, `crate::nic::lanai`: PIO writes and
//! polls, NI <-> host DMAs, on the `[pci]` times) and the Open-MX NIC with
//! `nic.dma_shared_bus` (`crate::nic::Nic::receive`, `Nic::transmit`: its
//! receive and transmit DMAs, on `nic.dma_startup_ns` and `nic.dma_MBps`;
//! its driver's doorbell and interrupt re-arm are CPU time, not bus
//! transactions).

use crate::config::BusTimes;
use crate::time::{Duration, Instant};

/// A bus transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusOp {
    /// NI DMA (either direction) of `bytes`.
    Dma { bytes: u32 },
    /// Host read of one NI word (a poll of NI memory).
    PioRead,
    /// Host write burst of `bytes` into NI memory.
    PioWrite { bytes: u32 },
}

/// Occupancy and counters of one host's bus.
#[derive(Debug, Clone)]
pub struct Bus {
    dma_bps: u64,
    dma_overhead: Duration,
    pio_read: Duration,
    pio_write_bps: u64,
    pio_write_overhead: Duration,
    free_at: Instant,
    /// Total time the bus was held.
    pub busy: Duration,
    pub dmas: u64,
    pub dma_bytes: u64,
    pub pio_reads: u64,
    pub pio_writes: u64,
    /// Time transactions waited for the bus.
    pub wait: Duration,
}

impl Bus {
    pub fn new(c: &BusTimes) -> Self {
        Bus {
            dma_bps: c.dma_bytes_per_s,
            dma_overhead: c.dma_overhead,
            pio_read: c.pio_read,
            pio_write_bps: c.pio_write_bytes_per_s,
            pio_write_overhead: c.pio_write_overhead,
            free_at: Instant::ZERO,
            busy: Duration::ZERO,
            dmas: 0,
            dma_bytes: 0,
            pio_reads: 0,
            pio_writes: 0,
            wait: Duration::ZERO,
        }
    }

    /// How long `op` holds the bus.
    pub fn duration(&self, op: BusOp) -> Duration {
        match op {
            BusOp::Dma { bytes } => self.dma_overhead + Duration::for_bytes(bytes as u64, self.dma_bps),
            BusOp::PioRead => self.pio_read,
            BusOp::PioWrite { bytes } => {
                self.pio_write_overhead + Duration::for_bytes(bytes as u64, self.pio_write_bps)
            }
        }
    }

    /// Requests the bus at `now` for `op`; returns (start, end).
    pub fn request(&mut self, now: Instant, op: BusOp) -> (Instant, Instant) {
        let start = now.max(self.free_at);
        let d = self.duration(op);
        let end = start + d;
        self.wait += start.since(now);
        self.free_at = end;
        self.busy += d;
        match op {
            BusOp::Dma { bytes } => {
                self.dmas += 1;
                self.dma_bytes += bytes as u64;
            }
            BusOp::PioRead => self.pio_reads += 1,
            BusOp::PioWrite { .. } => self.pio_writes += 1,
        }
        (start, end)
    }

    /// Reports the counters of host `i`'s bus after `elapsed` of simulated
    /// time under the names of `nicsim.metrics` (`host{i}_bus_busy_frac`,
    /// `host{i}_bus_wait_us`, `host{i}_dmas`, `host{i}_dma_bytes`,
    /// `host{i}_pio_reads`, `host{i}_pio_writes`).
    pub fn report(&self, i: usize, elapsed: Duration, set: &mut dyn FnMut(&str, f64)) {
        let t = elapsed.as_ps().max(1) as f64;
        set(&format!("host{i}_bus_busy_frac"), self.busy.as_ps() as f64 / t);
        set(&format!("host{i}_bus_wait_us"), self.wait.as_us_f64());
        set(&format!("host{i}_dmas"), self.dmas as f64);
        set(&format!("host{i}_dma_bytes"), self.dma_bytes as f64);
        set(&format!("host{i}_pio_reads"), self.pio_reads as f64);
        set(&format!("host{i}_pio_writes"), self.pio_writes as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pci() -> BusTimes {
        BusTimes {
            dma_bytes_per_s: 132_000_000,
            dma_overhead: Duration::from_ns(240),
            pio_read: Duration::from_ns(467),
            pio_write_bytes_per_s: 50_000_000,
            pio_write_overhead: Duration::from_ns(120),
        }
    }

    #[test]
    fn a_poll_in_flight_delays_a_dma_fifo() {
        let mut b = Bus::new(&pci());
        let t0 = Instant::ZERO;
        let (_, poll_end) = b.request(t0, BusOp::PioRead);
        let (dma_start, dma_end) = b.request(t0 + Duration::from_ns(100), BusOp::Dma { bytes: 132 });
        assert_eq!(dma_start, poll_end);
        assert_eq!(dma_end.since(dma_start), Duration::from_ns(240 + 1000));
        assert_eq!(b.wait, Duration::from_ns(367));
        assert_eq!((b.dmas, b.pio_reads), (1, 1));
    }
}
