//! The multicast programs of \[LCI] (SPEC §3): broadcast latency and sender
//! throughput, ASP (pipelined row broadcasts with computing receivers) and
//! QR (column broadcast + reduce-to-all per iteration).
//!
//! This module owns program logic and measurements only: it says, at a
//! message arrival or at the end of a compute phase, what each host
//! broadcasts, sends or computes next ([`McOut`]); `super::multicast` turns
//! a broadcast into sends per the forwarding scheme and the world times
//! everything. A host learns which broadcast arrived from the root and the
//! per-root arrival order (each tree delivers a root's messages in order).
//! What ASP and QR are made of (owners, bytes, elements per step) is
//! `crate::workload::lci`'s, shared with the same programs on Open-MX.

use crate::config::LciWorkload;
use crate::nic::multicast::Kary;
use crate::time::{Duration, Instant};
use crate::workload::QR_REDUCE_BYTES;
use crate::workload::{
    asp_owner, asp_row_bytes, asp_rows_per, asp_update_elems, qr_column_bytes, qr_house_elems, qr_norm_elems, qr_owner,
    qr_update_elems,
};
use crate::Metrics;

/// What a program asks of a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McOut {
    /// `host` broadcasts `size` bytes to every other host (its own tree).
    Bcast { host: u32, size: u64 },
    /// `host` sends `size` bytes to `dst` (point to point).
    Send { host: u32, dst: u32, size: u64 },
    /// `host` computes for `d` once its sends are written.
    Compute { host: u32, d: Duration },
}

/// Where a QR host is in its iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QrPhase {
    /// Computing its columns' norms.
    Norm,
    /// Norms done; waiting for the children's contributions in rank 0's tree.
    Reduce,
    /// Contribution sent up the reduce tree; waiting for the reduce-to-all result.
    WaitResult,
    /// Pivot-column owner: computing the Householder vector.
    House,
    /// Waiting for the pivot column.
    WaitColumn,
    /// Applying the reflection to its columns.
    Update,
    Done,
}

/// A running multicast program: every host's part of it.
#[derive(Debug, Clone)]
pub enum McJob {
    /// `iterations` broadcasts one at a time (the next starts when the last
    /// receiver has the previous one: latency to the last receiver), then
    /// `count` back to back (sender throughput).
    Bcast {
        n: u32,
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
    },
    /// All-pairs shortest paths: `rows` rows in blocks of `rows / n` per
    /// host; iteration `k` needs row `k` (broadcast by its owner after its
    /// own update of iteration `k - 1`) and updates every local row.
    Asp {
        n: u32,
        rows: u32,
        iterations: u32,
        per_elem: Duration,
        /// Per host: next iteration to compute, computing now.
        next: Vec<u32>,
        computing: Vec<bool>,
        /// Per host x root: rows received from that root.
        from_root: Vec<u32>,
        /// Per host x iteration: row available.
        have: Vec<bool>,
        finished: u32,
        end: Instant,
    },
    /// QR factorisation of an `cols` x `cols` matrix, columns cyclic over
    /// hosts: per iteration norms, reduce-to-all (reduce up rank 0's tree,
    /// broadcast back), Householder vector at the pivot owner, column
    /// broadcast, update.
    Qr {
        n: u32,
        cols: u32,
        iterations: u32,
        norm_elem: Duration,
        update_elem: Duration,
        tree: Kary,
        k: Vec<u32>,
        phase: Vec<QrPhase>,
        /// Per host: children's contributions received (toward its next send).
        contrib: Vec<u32>,
        results: Vec<u32>,
        columns: Vec<u32>,
        finished: u32,
        end: Instant,
    },
}

impl McJob {
    /// The program of a multicast workload (`None` for the others).
    pub fn new(w: &LciWorkload, fanout: u32) -> Option<Self> {
        Some(match *w {
            LciWorkload::Bcast { hosts: n, root, size, iterations, count } => McJob::Bcast {
                n,
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
            },
            LciWorkload::Asp { hosts: n, rows, iterations, elem_ps } => McJob::Asp {
                n,
                rows,
                iterations,
                per_elem: Duration::from_ps(elem_ps),
                next: vec![0; n as usize],
                computing: vec![false; n as usize],
                from_root: vec![0; (n * n) as usize],
                have: vec![false; (n * iterations) as usize],
                finished: 0,
                end: Instant::ZERO,
            },
            LciWorkload::Qr { hosts: n, cols, iterations, norm_ps, update_ps } => McJob::Qr {
                n,
                cols,
                iterations,
                norm_elem: Duration::from_ps(norm_ps),
                update_elem: Duration::from_ps(update_ps),
                tree: Kary { n, fanout },
                k: vec![0; n as usize],
                phase: vec![QrPhase::Norm; n as usize],
                contrib: vec![0; n as usize],
                results: vec![0; n as usize],
                columns: vec![0; n as usize],
                finished: 0,
                end: Instant::ZERO,
            },
            _ => return None,
        })
    }

    /// What the hosts do at time zero.
    pub fn start(&mut self, out: &mut Vec<McOut>) {
        match self {
            McJob::Bcast { root, size, iterations, count, burst_start, .. } => {
                if *iterations > 0 {
                    out.push(McOut::Bcast { host: *root, size: *size });
                } else {
                    for _ in 0..*count {
                        out.push(McOut::Bcast { host: *root, size: *size });
                    }
                    *burst_start = Instant::ZERO;
                }
            }
            McJob::Asp { .. } => {
                let owner = self.asp_owner(0);
                let bytes = self.asp_row_bytes();
                let mut hosts = 0;
                if let McJob::Asp { n, iterations, have, .. } = self {
                    have[(owner * *iterations) as usize] = true;
                    out.push(McOut::Bcast { host: owner, size: bytes });
                    hosts = *n;
                }
                for h in 0..hosts {
                    self.asp_advance(h, out);
                }
            }
            McJob::Qr { n, .. } => {
                let n = *n;
                for h in 0..n {
                    let d = self.qr_norm_cost(h);
                    out.push(McOut::Compute { host: h, d });
                }
            }
        }
    }

    /// A whole broadcast of `size` bytes from `root` reached `host`'s program at `now`.
    pub fn on_bcast(&mut self, host: u32, root: u32, size: u64, now: Instant, out: &mut Vec<McOut>) {
        let rows_per = self.asp_rows_per();
        match self {
            McJob::Bcast {
                root: r,
                size: s,
                iterations,
                count,
                got,
                missing,
                issued_at,
                latency_sum,
                burst_start,
                burst_end,
                completed,
                ..
            } => {
                let seq = got[host as usize];
                got[host as usize] += 1;
                missing[seq as usize] -= 1;
                if missing[seq as usize] > 0 {
                    return;
                }
                *completed += 1;
                if seq < *iterations {
                    *latency_sum += now.since(*issued_at);
                    if seq + 1 < *iterations {
                        *issued_at = now;
                        out.push(McOut::Bcast { host: *r, size: *s });
                    } else {
                        *burst_start = now;
                        for _ in 0..*count {
                            out.push(McOut::Bcast { host: *r, size: *s });
                        }
                    }
                }
                if seq + 1 == *iterations + *count {
                    *burst_end = now;
                }
            }
            McJob::Asp { n, iterations, from_root, have, .. } => {
                let i = (host * *n + root) as usize;
                let row = root * rows_per + from_root[i];
                from_root[i] += 1;
                if row < *iterations {
                    have[(host * *iterations + row) as usize] = true;
                }
                self.asp_advance(host, out);
            }
            McJob::Qr { results, columns, .. } => {
                if size == QR_REDUCE_BYTES {
                    results[host as usize] += 1;
                } else {
                    columns[host as usize] += 1;
                }
                self.qr_advance(host, now, out);
            }
        }
    }

    /// A point-to-point message from `from` reached `host`'s program.
    pub fn on_p2p(&mut self, host: u32, _from: u32, now: Instant, out: &mut Vec<McOut>) {
        if let McJob::Qr { contrib, .. } = self {
            contrib[host as usize] += 1;
            self.qr_advance(host, now, out);
        }
    }

    /// `host` finished the compute it was given.
    pub fn on_compute_done(&mut self, host: u32, now: Instant, out: &mut Vec<McOut>) {
        match self {
            McJob::Bcast { .. } => {}
            McJob::Asp { .. } => {
                let bytes = self.asp_row_bytes();
                let McJob::Asp { n, rows, iterations, next, computing, have, finished, end, .. } = self else {
                    return;
                };
                computing[host as usize] = false;
                next[host as usize] += 1;
                let k = next[host as usize];
                if k == *iterations {
                    *finished += 1;
                    *end = now;
                    return;
                }
                // The owner of the next row has just updated it: broadcast it, then go on.
                if asp_owner(*n, *rows, k) == host {
                    have[(host * *iterations + k) as usize] = true;
                    out.push(McOut::Bcast { host, size: bytes });
                }
                self.asp_advance(host, out);
            }
            McJob::Qr { .. } => {
                let h = host as usize;
                let (phase, k) = match self {
                    McJob::Qr { phase, k, .. } => (phase[h], k[h]),
                    _ => return,
                };
                match phase {
                    QrPhase::Norm => {
                        self.qr_set(host, QrPhase::Reduce);
                        self.qr_advance(host, now, out);
                    }
                    QrPhase::House => {
                        let bytes = self.qr_column_bytes(k);
                        if let McJob::Qr { columns, .. } = self {
                            columns[h] += 1; // its own pivot column
                        }
                        out.push(McOut::Bcast { host, size: bytes });
                        self.qr_start_update(host, out);
                    }
                    QrPhase::Update => {
                        if let McJob::Qr { k, iterations, finished, end, .. } = self {
                            k[h] += 1;
                            if k[h] == *iterations {
                                *finished += 1;
                                *end = now;
                                self.qr_set(host, QrPhase::Done);
                                return;
                            }
                        }
                        self.qr_set(host, QrPhase::Norm);
                        let d = self.qr_norm_cost(host);
                        out.push(McOut::Compute { host, d });
                    }
                    _ => unreachable!("QR compute ended in phase {phase:?}"),
                }
            }
        }
    }

    /// Whether the program has finished.
    pub fn done(&self) -> bool {
        match self {
            McJob::Bcast { iterations, count, completed, .. } => *completed == *iterations + *count,
            McJob::Asp { n, finished, .. } | McJob::Qr { n, finished, .. } => *finished == *n,
        }
    }

    /// The program's measurements.
    pub fn metrics(&self, m: &mut Metrics) {
        match self {
            McJob::Bcast { size, iterations, count, latency_sum, burst_start, burst_end, .. } => {
                if *iterations > 0 {
                    m.set("latency_us", latency_sum.as_us_f64() / *iterations as f64);
                }
                if *count > 0 {
                    let s = burst_end.since(*burst_start).as_s_f64();
                    m.set("burst_us", s * 1e6);
                    if s > 0.0 {
                        m.set("throughput_MBps", (*size * *count as u64) as f64 / s / 1e6);
                    } else {
                        m.unmeasured("throughput_MBps", "the broadcasts took no simulated time");
                    }
                }
            }
            McJob::Asp { end, .. } | McJob::Qr { end, .. } => {
                m.set("exec_time_s", end.since(Instant::ZERO).as_s_f64());
            }
        }
    }

    // -- ASP ------------------------------------------------------------

    fn asp_rows_per(&self) -> u32 {
        match self {
            McJob::Asp { n, rows, .. } => asp_rows_per(*n, *rows),
            _ => 1,
        }
    }

    fn asp_owner(&self, row: u32) -> u32 {
        match self {
            McJob::Asp { n, rows, .. } => asp_owner(*n, *rows, row),
            _ => row,
        }
    }

    fn asp_row_bytes(&self) -> u64 {
        match self {
            McJob::Asp { rows, .. } => asp_row_bytes(*rows),
            _ => 0,
        }
    }

    /// Starts `host`'s next iteration if it is idle and has the row.
    fn asp_advance(&mut self, host: u32, out: &mut Vec<McOut>) {
        if let McJob::Asp { n, rows, iterations, per_elem, next, computing, have, .. } = self {
            let h = host as usize;
            let k = next[h];
            if computing[h] || k >= *iterations || !have[(host * *iterations + k) as usize] {
                return;
            }
            computing[h] = true;
            out.push(McOut::Compute { host, d: per_elem.times(asp_update_elems(*n, *rows)) });
        }
    }

    // -- QR -------------------------------------------------------------

    fn qr_set(&mut self, host: u32, p: QrPhase) {
        if let McJob::Qr { phase, .. } = self {
            phase[host as usize] = p;
        }
    }

    fn qr_norm_cost(&self, host: u32) -> Duration {
        match self {
            McJob::Qr { n, cols, norm_elem, k, .. } => {
                norm_elem.times(qr_norm_elems(*n, *cols, host, k[host as usize]))
            }
            _ => Duration::ZERO,
        }
    }

    fn qr_column_bytes(&self, k: u32) -> u64 {
        match self {
            McJob::Qr { cols, .. } => qr_column_bytes(*cols, k),
            _ => 0,
        }
    }

    fn qr_start_update(&mut self, host: u32, out: &mut Vec<McOut>) {
        if let McJob::Qr { n, cols, update_elem, k, phase, .. } = self {
            let kk = k[host as usize];
            phase[host as usize] = QrPhase::Update;
            out.push(McOut::Compute { host, d: update_elem.times(qr_update_elems(*n, *cols, host, kk)) });
        }
    }

    /// Moves `host` through the reduce and the column wait as far as its inputs allow.
    fn qr_advance(&mut self, host: u32, _now: Instant, out: &mut Vec<McOut>) {
        let h = host as usize;
        let McJob::Qr { n, cols, update_elem, tree, k, phase, contrib, results, columns, .. } = self else {
            return;
        };
        let kk = k[h];
        if phase[h] == QrPhase::Reduce {
            let kids = tree.child_count(0, host);
            if contrib[h] < kids {
                return;
            }
            // Own norms done and every child's contribution in: pass the maximum on.
            contrib[h] -= kids;
            match tree.parent(0, host) {
                Some(p) => out.push(McOut::Send { host, dst: p, size: QR_REDUCE_BYTES }),
                None => {
                    // Rank 0 holds the reduction: broadcast it back (reduce-to-all) and use it.
                    out.push(McOut::Bcast { host, size: QR_REDUCE_BYTES });
                    results[h] += 1;
                }
            }
            phase[h] = QrPhase::WaitResult;
        }
        if phase[h] == QrPhase::WaitResult && results[h] > kk {
            if qr_owner(*n, kk) == host {
                // The pivot column's owner computes the Householder vector (norm + scale).
                phase[h] = QrPhase::House;
                out.push(McOut::Compute { host, d: update_elem.times(qr_house_elems(*cols, kk)) });
                return;
            }
            phase[h] = QrPhase::WaitColumn;
        }
        if phase[h] == QrPhase::WaitColumn && columns[h] > kk {
            self.qr_start_update(host, out);
        }
    }
}
