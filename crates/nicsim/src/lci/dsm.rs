//! A CRL-like DSM request/reply program (\[LCI] watchdog study, SPEC §3):
//! each process computes, then operates on a shared region whose home node
//! is another process; it sends a request to the home and awaits the reply
//! by polling in the library with interrupts disabled. Requests reach home
//! nodes asynchronously: a home serves them when it polls (it is itself
//! waiting for a reply) or in a signal handler (the watchdog interrupted its
//! computation). A write to a shared region makes the home invalidate
//! `fanout` sharers and await their acknowledgements before replying.
//!
//! This module owns the program logic and its mixes; it times nothing (the
//! world runs compute phases on the host CPU and calls back).
//!
//! The program is a function of the seed alone, as a real application is of
//! its input: each process draws its operations (compute grain, local or
//! remote, home, read or write) from a stream of its own, and a write
//! carries the key from which its home draws the sharers to invalidate.
//! Which process runs first therefore never changes what any process does,
//! so two runs of one seed under different NI settings (the watchdog
//! delays) run the same program and differ only by the mechanism. Messages of a
//! pair of hosts arrive in order (one dimension-order route, FIFO NIs), so
//! each message's kind is kept in a per-pair FIFO rather than in the packet.
//!
//! A process that finished its operations leaves the library and sleeps
//! with interrupts enabled (an interrupt-driven wait for the others), so it
//! serves requests only through interrupts: with `watchdog_us = "inf"` a
//! request to a finished home is never served, and the run ends with a
//! `stuck` report (see `docs/lci.md`).

use crate::config::Mix;
use crate::engine::SimRng;
use crate::library::lci::{Control, Outgoing};
use crate::time::{Duration, Instant};
use crate::Metrics;
use std::collections::VecDeque;
use std::fmt;

/// Parameters of a mix. All \[estimate]s from the published characterisations
/// of the CRL applications (Johnson, Kaashoek & Wallach, "CRL:
/// high-performance all-software distributed shared memory", SOSP 1995) and
/// of SPLASH-2 (Woo et al., ISCA 1995): Barnes-Hut is fine-grained and
/// read-mostly (small tree cells, frequent remote reads, rare writes); FFT
/// is coarse-grained (a transpose moves large blocks, little write
/// sharing); Radix permutes keys all-to-all with write sharing of buckets
/// (invalidations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixParams {
    /// Mean compute between two shared-region operations, us (exponential).
    pub grain_us: f64,
    /// Fraction of operations whose region is homed on another process.
    pub remote_frac: f64,
    /// Fraction of remote operations that are writes (home invalidates sharers).
    pub write_frac: f64,
    /// Sharers invalidated per write.
    pub fanout: u32,
    /// Request payload, bytes (region id, operation).
    pub request_bytes: u64,
    /// Reply payload (the region's data), bytes.
    pub reply_bytes: u64,
}

/// The DSM world's reading of a mix.
impl Mix {
    /// The mix's parameters (see [`MixParams`] for sources).
    pub fn params(self) -> MixParams {
        match self {
            // [estimate] fine grain (~20 us between region accesses), half of them
            // remote tree cells of ~100 B, 5% writes invalidating 2 sharers.
            Mix::Barnes => MixParams {
                grain_us: 20.0,
                remote_frac: 0.5,
                write_frac: 0.05,
                fanout: 2,
                request_bytes: 8,
                reply_bytes: 128,
            },
            // [estimate] coarse grain (~200 us of butterflies per block), transpose
            // reads almost all remote, 1 KB blocks, no write sharing.
            Mix::Fft => MixParams {
                grain_us: 200.0,
                remote_frac: 0.9,
                write_frac: 0.0,
                fanout: 0,
                request_bytes: 8,
                reply_bytes: 1024,
            },
            // [estimate] medium grain (~50 us of local ranking per bucket access),
            // mostly remote, half writes to shared buckets invalidating 4 sharers, 256 B.
            Mix::Radix => MixParams {
                grain_us: 50.0,
                remote_frac: 0.8,
                write_frac: 0.5,
                fanout: 4,
                request_bytes: 8,
                reply_bytes: 256,
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A request; a write carries the key of its sharers' draw.
    Request {
        write: Option<u64>,
    },
    Reply,
    Inv {
        txn: usize,
    },
    InvAck {
        txn: usize,
    },
}

/// Where one process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Next: compute (or finish).
    Ready,
    Computing,
    /// Compute done: issue the next operation.
    Issue,
    WaitReply,
    Finished,
}

/// A write transaction at a home: the requester and the acks it still awaits.
#[derive(Debug, Clone, Copy)]
struct Txn {
    requester: u32,
    left: u32,
}

/// The running DSM program.
pub struct Dsm {
    pub mix: Mix,
    p: MixParams,
    procs: u32,
    ops: u64,
    /// Each process's own stream of operations.
    rngs: Vec<SimRng>,
    phase: Vec<Phase>,
    done_ops: Vec<u64>,
    finish: Vec<Option<Instant>>,
    /// Kinds in flight from a to b: `inflight[a * procs + b]`.
    inflight: Vec<VecDeque<Kind>>,
    txns: Vec<Txn>,
    sends: Vec<(u32, Outgoing)>,
    pub remote_ops: u64,
    pub invalidations: u64,
}

impl Dsm {
    pub fn new(mix: Mix, procs: u32, ops: u64, seed: u64) -> Self {
        let n = procs as usize;
        Dsm {
            mix,
            p: mix.params(),
            procs,
            ops,
            rngs: (0..procs).map(|h| crate::workload::process_rng(seed, h)).collect(),
            phase: vec![Phase::Ready; n],
            done_ops: vec![0; n],
            finish: vec![None; n],
            inflight: vec![VecDeque::new(); n * n],
            txns: Vec::new(),
            sends: Vec::new(),
            remote_ops: 0,
            invalidations: 0,
        }
    }

    fn send(&mut self, from: u32, to: u32, kind: Kind, size: u64) {
        self.inflight[(from * self.procs + to) as usize].push_back(kind);
        self.sends.push((from, Outgoing { dst: to, size, count: 1, bcast: None, tag: 0 }));
    }

    /// A host other than `a` and `b` (uniform over `procs`), drawn from `rng`.
    fn other(rng: &mut SimRng, procs: u32, a: u32, b: u32) -> u32 {
        loop {
            let h = rng.below(u64::from(procs)) as u32;
            if h != a && h != b {
                return h;
            }
        }
    }

    /// Processes still waiting for a reply (the stuck state, if any).
    pub fn waiting(&self) -> usize {
        self.phase.iter().filter(|&&p| p == Phase::WaitReply).count()
    }
}

/// The DSM as the program of a run, a whole-job one: the world runs it
/// at its hosts' libraries' idle turns (`Output::Idle`), told what reached
/// which host (`Output::Message`) and what compute ended
/// (`Output::ComputeDone`), and moves its sends to the senders' libraries.
impl Dsm {
    /// Whether host `h` runs the program (enters the library and polls).
    pub fn participates(&self, h: u32) -> bool {
        h < self.procs
    }

    /// Host `h` is idle in the library at `now`: what it goes on with.
    pub fn control(&mut self, h: u32, now: Instant) -> Control {
        let i = h as usize;
        loop {
            match self.phase[i] {
                Phase::Ready => {
                    if self.done_ops[i] >= self.ops {
                        self.phase[i] = Phase::Finished;
                        self.finish[i] = Some(now);
                        continue;
                    }
                    self.phase[i] = Phase::Computing;
                    // Exponential compute grain, mean grain_us.
                    let g = -self.p.grain_us * (1.0 - self.rngs[i].unit()).ln();
                    return Control::Compute(Duration::from_ns_f64(g * 1e3));
                }
                Phase::Computing | Phase::WaitReply => return Control::Wait,
                Phase::Issue => {
                    let rng = &mut self.rngs[i];
                    if self.procs > 1 && rng.chance(self.p.remote_frac) {
                        let home = Self::other(rng, self.procs, h, h);
                        let write = rng.chance(self.p.write_frac).then(|| rng.below(u64::MAX));
                        self.remote_ops += 1;
                        self.send(h, home, Kind::Request { write }, self.p.request_bytes);
                        self.phase[i] = Phase::WaitReply;
                        return Control::Wait;
                    }
                    // A local region: the access is part of the compute grain.
                    self.done_ops[i] += 1;
                    self.phase[i] = Phase::Ready;
                }
                Phase::Finished => return Control::Sleep,
            }
        }
    }

    /// Host `h`'s compute phase that [`Dsm::control`] asked for ended.
    pub fn compute_done(&mut self, h: u32) {
        if self.phase[h as usize] == Phase::Computing {
            self.phase[h as usize] = Phase::Issue;
        }
    }

    /// A whole message from `from` reached `h` (the upcall of its last
    /// packet); its kind is the pair's next in flight, whatever its tag.
    pub fn on_message(&mut self, h: u32, from: u32, _tag: u64) {
        let Some(kind) = self.inflight[(from * self.procs + h) as usize].pop_front() else { return };
        match kind {
            Kind::Request { write } => {
                let fan = if write.is_some() { self.p.fanout.min(self.procs.saturating_sub(2)) } else { 0 };
                if fan == 0 {
                    self.send(h, from, Kind::Reply, self.p.reply_bytes);
                } else {
                    let txn = self.txns.len();
                    self.txns.push(Txn { requester: from, left: fan });
                    let mut sharers = SimRng::new(write.unwrap_or(0));
                    for _ in 0..fan {
                        let s = Self::other(&mut sharers, self.procs, h, from);
                        self.invalidations += 1;
                        self.send(h, s, Kind::Inv { txn }, self.p.request_bytes);
                    }
                }
            }
            Kind::Inv { txn } => self.send(h, from, Kind::InvAck { txn }, self.p.request_bytes),
            Kind::InvAck { txn } => {
                let t = &mut self.txns[txn];
                t.left -= 1;
                if t.left == 0 {
                    let r = t.requester;
                    self.send(h, r, Kind::Reply, self.p.reply_bytes);
                }
            }
            Kind::Reply => {
                self.done_ops[h as usize] += 1;
                self.phase[h as usize] = Phase::Ready;
            }
        }
    }

    /// Moves the sends it asked for since the last call to `out`.
    pub fn drain_sends(&mut self, out: &mut Vec<(u32, Outgoing)>) {
        out.append(&mut self.sends);
    }

    /// Whether every host's part is finished.
    pub fn done(&self) -> bool {
        self.finish.iter().all(Option::is_some)
    }

    /// Its measurements: the execution time from its parts' ends (not
    /// measured if one never ended), its remote operations and
    /// invalidations, and the parts a stuck run left waiting.
    pub fn metrics(&self, m: &mut Metrics) {
        crate::metrics::exec_time(m, self.finish.iter().copied());
        m.set("remote_ops", self.remote_ops as f64);
        m.set("invalidations", self.invalidations as f64);
        m.set("stuck_waiting_procs", self.waiting() as f64);
    }
}

impl fmt::Debug for Dsm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dsm")
            .field("mix", &self.mix)
            .field("procs", &self.procs)
            .field("ops", &self.ops)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per process, its compute grains (ns), each with the homes of the
    /// request that follows it.
    type Ops = Vec<Vec<(u64, Vec<u32>)>>;

    /// What each process of `dsm` does when the processes are stepped in
    /// `order` over an instant network: its compute grains (ns) and the
    /// homes of its requests; and every invalidation (home, sharer), sorted.
    fn trace(order: &[u32]) -> (Ops, Vec<(u32, u32)>) {
        let procs = order.len() as u32;
        let mut dsm = Dsm::new(Mix::Radix, procs, 40, 7);
        let mut per: Ops = vec![Vec::new(); order.len()];
        let mut invs = Vec::new();
        for _ in 0..10_000 {
            if dsm.done() {
                break;
            }
            for &h in order {
                if let Control::Compute(d) = dsm.control(h, Instant::ZERO) {
                    per[h as usize].push((d.as_ns_f64() as u64, Vec::new()));
                    dsm.compute_done(h);
                }
                // Its request (if any), then the replies, invalidations and
                // acks it leads to, delivered at once in order.
                let mut sends = Vec::new();
                dsm.drain_sends(&mut sends);
                let mut queue: VecDeque<(u32, Outgoing)> = sends.drain(..).collect();
                for (_, out) in &queue {
                    per[h as usize].last_mut().expect("a request follows a grain").1.push(out.dst);
                }
                while let Some((from, out)) = queue.pop_front() {
                    if let Some(Kind::Inv { .. }) = dsm.inflight[(from * procs + out.dst) as usize].front() {
                        invs.push((from, out.dst));
                    }
                    dsm.on_message(out.dst, from, 0);
                    dsm.drain_sends(&mut sends);
                    queue.extend(sends.drain(..));
                }
            }
        }
        assert!(dsm.done(), "the instant-network run ends");
        invs.sort_unstable();
        (per, invs)
    }

    #[test]
    fn each_process_runs_the_same_operations_whatever_order_the_processes_run_in() {
        let forward: Vec<u32> = (0..6).collect();
        let backward: Vec<u32> = (0..6).rev().collect();
        let (a, a_invs) = trace(&forward);
        let (b, b_invs) = trace(&backward);
        assert!(a.iter().all(|ops| !ops.is_empty()) && !a_invs.is_empty());
        assert_eq!(a, b);
        assert_eq!(a_invs, b_invs);
    }
}
