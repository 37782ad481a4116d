//! FFT all-to-all program (\[LCI] timers study, SPEC §3): every iteration each
//! process computes its rows in `procs - 1` chunks and sends each chunk's
//! block to the next process in rotation as soon as it is computed (the
//! transpose overlapped with the butterflies, so a process enters the
//! library only between chunks), then polls until it has every block of the
//! iteration. Run over the reliable protocol (`super::reliable`) its senders
//! need acknowledgements to reuse the 64 NI send buffers, and a receiver that
//! went back to computing acks only from a clock-interrupt handler or when it
//! returns.
//!
//! This module owns the program logic; it times nothing. Each process
//! draws its chunks' compute from a stream of its own, so the program is a
//! function of the seed alone, whatever order the processes run in: runs of
//! one seed under different clock periods differ only by the mechanism. A process that
//! finished stays in the library polling (the final barrier), so it keeps
//! acknowledging the others' packets.

use super::host::Control;
use super::host::Outgoing;
use crate::engine::SimRng;
use crate::time::{Duration, Instant};
use crate::workload::fft_chunk;
use crate::Metrics;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Ready,
    Computing,
    Send,
    Wait,
    Finished,
}

/// The running FFT all-to-all.
pub struct Fft {
    procs: u32,
    iterations: u64,
    block: u64,
    compute: Duration,
    /// Each process's own stream of chunk times.
    rngs: Vec<SimRng>,
    phase: Vec<Phase>,
    iter: Vec<u64>,
    /// Chunks computed (and blocks sent) in the current iteration.
    chunk: Vec<u32>,
    received: Vec<u64>,
    finish: Vec<Option<Instant>>,
    sends: Vec<(u32, Outgoing)>,
}

impl Fft {
    pub fn new(procs: u32, iterations: u64, block: u64, compute: Duration, seed: u64) -> Self {
        let n = procs as usize;
        Fft {
            procs,
            iterations,
            block,
            compute,
            rngs: (0..procs).map(|h| super::process_rng(seed, h)).collect(),
            phase: vec![Phase::Ready; n],
            iter: vec![0; n],
            chunk: vec![0; n],
            received: vec![0; n],
            finish: vec![None; n],
            sends: Vec::new(),
        }
    }

    pub fn participates(&self, h: u32) -> bool {
        h < self.procs
    }

    pub fn control(&mut self, h: u32, now: Instant) -> Control {
        let i = h as usize;
        loop {
            match self.phase[i] {
                Phase::Ready => {
                    if self.iter[i] >= self.iterations {
                        self.phase[i] = Phase::Finished;
                        self.finish[i] = Some(now);
                        continue;
                    }
                    if self.chunk[i] + 1 == self.procs {
                        self.phase[i] = Phase::Wait;
                        continue;
                    }
                    self.phase[i] = Phase::Computing;
                    return Control::Compute(fft_chunk(self.compute, self.procs, &mut self.rngs[i]));
                }
                Phase::Computing | Phase::Finished => return Control::Wait,
                Phase::Send => {
                    self.chunk[i] += 1;
                    let dst = (h + self.chunk[i]) % self.procs;
                    self.sends.push((h, Outgoing { dst, size: self.block, count: 1, bcast: None, tag: 0 }));
                    self.phase[i] = Phase::Ready;
                    return Control::Wait;
                }
                Phase::Wait => {
                    if self.received[i] < (self.iter[i] + 1) * (self.procs as u64 - 1) {
                        return Control::Wait;
                    }
                    self.iter[i] += 1;
                    self.chunk[i] = 0;
                    self.phase[i] = Phase::Ready;
                }
            }
        }
    }

    pub fn compute_done(&mut self, h: u32) {
        if self.phase[h as usize] == Phase::Computing {
            self.phase[h as usize] = Phase::Send;
        }
    }

    pub fn on_message(&mut self, h: u32) {
        self.received[h as usize] += 1;
    }

    pub fn drain_sends(&mut self) -> Vec<(u32, Outgoing)> {
        std::mem::take(&mut self.sends)
    }

    pub fn done(&self) -> bool {
        self.finish.iter().all(Option::is_some)
    }

    pub fn metrics(&self, m: &mut Metrics) {
        match self.finish.iter().flatten().max() {
            Some(end) if self.done() => m.set("exec_time_s", end.as_s_f64()),
            _ => m.unmeasured("exec_time_s", super::STUCK),
        }
        m.set("stuck", if self.done() { 0.0 } else { 1.0 });
    }
}

impl fmt::Debug for Fft {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fft").field("procs", &self.procs).field("iterations", &self.iterations).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each process's chunk times (ns) when the processes of a 4-process,
    /// 2-iteration FFT are stepped in `order` over an instant network.
    fn chunk_times(order: &[u32]) -> Vec<Vec<u64>> {
        let mut fft = Fft::new(4, 2, 1024, Duration::from_ns(3_000_000), 7);
        let mut per = vec![Vec::new(); order.len()];
        for _ in 0..1_000 {
            if fft.done() {
                break;
            }
            for &h in order {
                if let Control::Compute(d) = fft.control(h, Instant::ZERO) {
                    per[h as usize].push(d.as_ns_f64() as u64);
                    fft.compute_done(h);
                }
                for (_, out) in fft.drain_sends() {
                    fft.on_message(out.dst);
                }
            }
        }
        assert!(fft.done(), "the instant-network run ends");
        per
    }

    #[test]
    fn each_process_computes_the_same_chunks_whatever_order_the_processes_run_in() {
        let a = chunk_times(&[0, 1, 2, 3]);
        assert!(a.iter().all(|c| c.len() == 6), "3 chunks per iteration, 2 iterations: {a:?}");
        assert_eq!(a, chunk_times(&[3, 2, 1, 0]));
    }
}
