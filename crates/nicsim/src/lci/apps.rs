//! The broadcast benchmark of \[LCI] (SPEC §3): broadcast latency to the
//! last receiver and sender throughput.
//!
//! This module owns the benchmark's logic and measurements only: it says,
//! at a message arrival, what the root broadcasts next ([`McOut`]);
//! `super::multicast` turns a broadcast into sends per the forwarding
//! scheme and the world times everything. A host learns which broadcast
//! arrived from the per-root arrival order (each tree delivers a root's
//! messages in order). The benchmark is not a per-process program
//! (`super::process`) because its next broadcast starts when the last
//! receiver has the previous one: the run's view, not one a process has
//! without more messages.

use crate::config::LciWorkload;
use crate::time::{Duration, Instant};
use crate::Metrics;

/// What the benchmark asks of a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McOut {
    /// `host` broadcasts `size` bytes to every other host (its own tree).
    Bcast { host: u32, size: u64 },
}

/// The running broadcast benchmark: `iterations` broadcasts one at a time
/// (the next starts when the last receiver has the previous one: latency
/// to the last receiver), then `count` back to back (sender throughput).
#[derive(Debug, Clone)]
pub struct McJob {
    root: u32,
    size: u64,
    iterations: u32,
    count: u32,
    /// Per host: broadcasts received.
    got: Vec<u32>,
    /// Per broadcast: receivers still missing it.
    missing: Vec<u32>,
    issued_at: Instant,
    latency_sum: Duration,
    burst_start: Instant,
    burst_end: Instant,
    completed: u32,
}

impl McJob {
    /// The benchmark of a broadcast workload (`None` for the others).
    pub fn new(w: &LciWorkload) -> Option<Self> {
        let LciWorkload::Bcast { hosts: n, root, size, iterations, count } = *w else { return None };
        Some(McJob {
            root,
            size,
            iterations,
            count,
            got: vec![0; n as usize],
            missing: vec![n - 1; (iterations + count) as usize],
            issued_at: Instant::ZERO,
            latency_sum: Duration::ZERO,
            burst_start: Instant::ZERO,
            burst_end: Instant::ZERO,
            completed: 0,
        })
    }

    /// What the root does at time zero.
    pub fn start(&mut self, out: &mut Vec<McOut>) {
        let b = McOut::Bcast { host: self.root, size: self.size };
        if self.iterations > 0 {
            out.push(b);
        } else {
            out.extend((0..self.count).map(|_| b));
            self.burst_start = Instant::ZERO;
        }
    }

    /// A whole broadcast reached `host` at `now`.
    pub fn on_bcast(&mut self, host: u32, now: Instant, out: &mut Vec<McOut>) {
        let seq = self.got[host as usize];
        self.got[host as usize] += 1;
        self.missing[seq as usize] -= 1;
        if self.missing[seq as usize] > 0 {
            return;
        }
        self.completed += 1;
        let b = McOut::Bcast { host: self.root, size: self.size };
        if seq < self.iterations {
            self.latency_sum += now.since(self.issued_at);
            if seq + 1 < self.iterations {
                self.issued_at = now;
                out.push(b);
            } else {
                self.burst_start = now;
                out.extend((0..self.count).map(|_| b));
            }
        }
        if seq + 1 == self.iterations + self.count {
            self.burst_end = now;
        }
    }

    /// Whether the benchmark has finished.
    pub fn done(&self) -> bool {
        self.completed == self.iterations + self.count
    }

    /// The benchmark's measurements.
    pub fn metrics(&self, m: &mut Metrics) {
        if self.iterations > 0 {
            m.set("latency_us", self.latency_sum.as_us_f64() / self.iterations as f64);
        }
        if self.count > 0 {
            let s = self.burst_end.since(self.burst_start).as_s_f64();
            m.set("burst_us", s * 1e6);
            if s > 0.0 {
                m.set("throughput_MBps", (self.size * self.count as u64) as f64 / s / 1e6);
            } else {
                m.unmeasured("throughput_MBps", "the broadcasts took no simulated time");
            }
        }
    }
}
