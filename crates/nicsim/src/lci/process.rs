//! The LCI stack's programs of one process per host, as a run holds them:
//! the operation sequences of `crate::workload` that the Open-MX library
//! runs too (ASP and QR, `crate::workload::asp_ops` and
//! `crate::workload::qr_ops`, in their library-forwarded shape: a root
//! [`Op::Mcast`]s, the others receive from the root; the FFT all-to-all,
//! `crate::workload::FftAlltoall`; the stream and the ping-pong), and the
//! broadcast benchmark, which only this library runs
//! (`crate::workload::bcast_bench_ops`: its root waits for each broadcast
//! to reach every other host, [`Op::WaitDelivered`]).
//!
//! Each host's process is the one driver (`crate::library::driver`'s
//! `Driver`) its library holds (`crate::library::lci::Hosted`), which
//! runs it at its idle turns (`Drive::Idle`). This module owns what is
//! not one host's: building the processes (`Processes::new`), the rank
//! map, the wait of the broadcast benchmark's root for its broadcast to
//! reach every other rank (counted across hosts, `Processes::next` and
//! `Processes::delivered_to`), and the run's measurements from the
//! processes' marks (`Processes::metrics`). The world runs a process its
//! upcalls drive (`Drive::Upcall`) through `Processes::next`, since the
//! broadcast wait is across hosts. It times nothing.

use crate::config::Workload;
use crate::library::driver::{Drive, Driver};
use crate::library::lci::Hosted;
use crate::library::{Ranks, NO_RANK};
use crate::metrics::{stream_unmeasurable, LinkBound};
use crate::time::Instant;
use crate::workload::{Op, Program};
use crate::Metrics;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What the program measures, from its processes' marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    /// \[LCI]'s execution time: from the start to the last end.
    Exec,
    /// The stream receiver's (rank 1's) timed messages.
    Stream { size: u64, messages: u64 },
    /// Rank 0's timed round trips.
    PingPong { size: u64, iterations: u64 },
    /// The broadcast benchmark's root's marks: the one-at-a-time
    /// broadcasts end at its start mark, the back-to-back ones at its end.
    Bcast { root: u32, size: u64, iterations: u32, count: u32 },
}

/// The run's part of a program of one process per host
/// (`crate::workload`'s): the processes themselves are the hosts'
/// libraries' (`crate::library::lci::Hosted`).
#[derive(Debug)]
pub struct Processes {
    /// The hosts of the run.
    hosts: u32,
    pub drive: Drive,
    measure: Measure,
    /// The host of each rank, and the rank of each host (endpoint 0; the
    /// Open-MX library's rank map), shared with the hosts' libraries.
    ranks: Arc<Ranks>,
    /// A program that waits for deliveries ([`Op::WaitDelivered`]): per
    /// multicast that has not reached every other rank yet, by (source
    /// rank, tag), the ranks it reached; bounded by the multicasts in flight.
    reached: Option<BTreeMap<(u32, u64), u32>>,
}

impl Processes {
    /// The program of `w` on `hosts` hosts as one process per host (`None`:
    /// the stack runs `w` otherwise), and each host's process for its
    /// library to hold: ASP and QR on every host, their broadcasts down
    /// the trees of the library's multicast (the workload's, of fan-out
    /// `nic.fanout`); the FFT all-to-all on hosts `0..ranks`, each
    /// process's chunk times drawn from its own stream of `seed`
    /// (`crate::workload::FftAlltoall`); the Open-MX library's stream and
    /// ping-pong as ranks 0 and 1 on the workload's pair of hosts. A host
    /// that runs no process holds an idle one.
    pub(crate) fn new(w: &Workload, hosts: u32, seed: u64) -> Option<(Self, Vec<Hosted>)> {
        let (n, drive, measure) = match *w {
            Workload::Asp { .. } | Workload::Qr { .. } => (hosts, Drive::Upcall, Measure::Exec),
            Workload::FftAlltoall { ranks, .. } => (ranks, Drive::Idle, Measure::Exec),
            Workload::BcastBench { root, size, iterations, count, .. } => {
                (hosts, Drive::Upcall, Measure::Bcast { root, size, iterations, count })
            }
            Workload::Stream { size, messages, .. } => (2, Drive::Upcall, Measure::Stream { size, messages }),
            Workload::PingPong { size, iterations, .. } => (2, Drive::Upcall, Measure::PingPong { size, iterations }),
            _ => return None,
        };
        let all = hosts.max(n);
        let mut ranks = Ranks::new(all as usize);
        let on = match *w {
            Workload::Stream { pair, .. } | Workload::PingPong { pair, .. } => pair.to_vec(),
            _ => (0..n).collect(),
        };
        for h in on {
            ranks.add(h as u16, 0);
        }
        let ranks = Arc::new(ranks);
        let procs = (0..all as usize)
            .map(|h| {
                let driver = match ranks.at(h, 0) as u32 {
                    r if r == NO_RANK as u32 => Driver::new(Program::Idle),
                    // ASP's and QR's broadcasts are the library's multicasts
                    // (`Op::Mcast`), whatever forwards them (`nic.forwarding`).
                    r => Driver::new(w.program(r, n, seed).expect("a program of crate::workload")),
                };
                Hosted::new(driver, drive, Arc::clone(&ranks))
            })
            .collect();
        let reached = matches!(measure, Measure::Bcast { .. }).then(BTreeMap::new);
        Some((Processes { hosts: all, drive, measure, ranks, reached }, procs))
    }

    /// The host of rank `r`.
    pub fn host(&self, r: u32) -> u32 {
        self.ranks[r as usize].0 as u32
    }

    /// The rank of host `h`.
    pub fn rank(&self, h: u32) -> u32 {
        self.ranks.at(h as usize, 0) as u32
    }

    /// Whether host `h` runs a process (enters the library and polls).
    pub fn participates(&self, h: u32) -> bool {
        h < self.hosts && self.ranks.at(h as usize, 0) != NO_RANK
    }

    /// Whether its hosts' upcalls drive it: the multicast schemes' forwards
    /// and its compute run in the library (no `stuck` result).
    pub fn upcall_driven(&self) -> bool {
        self.drive == Drive::Upcall
    }

    /// One of the multicast study's programs (its forwarding metrics are reported).
    pub fn multicasts(&self) -> bool {
        self.drive == Drive::Upcall && matches!(self.measure, Measure::Exec | Measure::Bcast { .. })
    }

    /// A whole message from host `from` with `tag` reached one more
    /// rank; whether it now reached every rank but its sender's and the
    /// sender's process `sender` waited for that ([`Op::WaitDelivered`]):
    /// it then waits no more, for the world to run on. Only a program that
    /// waits for deliveries counts.
    pub(crate) fn delivered_to(&mut self, from: u32, tag: u64, sender: &mut Driver) -> bool {
        let (rank, receivers) = (self.rank(from), self.ranks.len() as u32 - 1);
        let Some(reached) = &mut self.reached else { return false };
        let Some(got) = reached.get_mut(&(rank, tag)) else { return false };
        *got += 1;
        if *got < receivers {
            return false;
        }
        reached.remove(&(rank, tag));
        let woken = sender.awaits_delivery() == Some(tag);
        if woken {
            sender.delivered();
        }
        woken
    }

    /// Runs host `h`'s process `d` at `now` up to its next request of the
    /// library (see [`Driver::next`]). A multicast of a program that waits
    /// for deliveries is counted until it reached every other rank; a wait
    /// for one that did goes on at once.
    pub(crate) fn next(&mut self, h: u32, d: &mut Driver, now: Instant) -> Option<Op> {
        let rank = self.rank(h);
        loop {
            let next = d.next(now);
            let Some(reached) = &mut self.reached else { return next };
            if let Some(Op::Mcast { tag, .. }) = next {
                reached.insert((rank, tag), 0);
            }
            match d.awaits_delivery() {
                Some(tag) if next.is_none() && !reached.contains_key(&(rank, tag)) => d.delivered(),
                _ => return next,
            }
        }
    }

    /// Whether every process is finished (`procs`: host `h`'s process).
    pub(crate) fn done<'a>(&self, procs: impl Fn(u32) -> &'a Driver) -> bool {
        (0..self.hosts).all(|h| procs(h).finished())
    }

    /// The program's measurements from its processes' marks; `link`
    /// bounds how fast the network can carry a stream (a faster figure is
    /// not measured). An idle-driven program that could not finish
    /// reports `stuck`. `procs`: host `h`'s process (its library holds it).
    pub(crate) fn metrics<'a>(&self, m: &mut Metrics, link: &LinkBound, procs: impl Fn(u32) -> &'a Driver) {
        let marks = |r: u32| {
            let p = procs(self.host(r));
            (p.mark(0).unwrap_or(Instant::ZERO), p.mark(1).unwrap_or(Instant::ZERO))
        };
        match self.measure {
            Measure::Exec => {
                match (0..self.ranks.len() as u32).map(|r| procs(self.host(r)).mark(1)).collect::<Option<Vec<_>>>() {
                    Some(ends) => {
                        let end = ends.into_iter().max().unwrap_or(Instant::ZERO);
                        m.set("exec_time_s", end.since(Instant::ZERO).as_s_f64());
                    }
                    None => m.unmeasured("exec_time_s", super::STUCK),
                }
            }
            Measure::Stream { size, messages } => {
                let (t0, t1) = marks(1);
                let s = t1.since(t0).as_s_f64();
                // The sender posts every message at once: no window to fill.
                match stream_unmeasurable(messages, 0, 0, size, s, link) {
                    None => {
                        m.set("msg_rate_per_s", messages as f64 / s);
                        m.set("throughput_MBps", (size * messages) as f64 / s / 1e6);
                    }
                    Some(why) => {
                        m.unmeasured("msg_rate_per_s", why.clone());
                        m.unmeasured("throughput_MBps", why);
                    }
                }
                m.set("elapsed_us", s * 1e6);
            }
            Measure::Bcast { root, size, iterations, count } => {
                let (t0, t1) = marks(root);
                if iterations > 0 {
                    m.set("latency_us", t0.since(Instant::ZERO).as_us_f64() / iterations as f64);
                }
                if count > 0 {
                    let s = t1.since(t0).as_s_f64();
                    m.set("burst_us", s * 1e6);
                    if s > 0.0 {
                        m.set("throughput_MBps", (size * count as u64) as f64 / s / 1e6);
                    } else {
                        m.unmeasured("throughput_MBps", "the broadcasts took no simulated time");
                    }
                }
            }
            Measure::PingPong { size, iterations } => {
                let (t0, t1) = marks(0);
                let one_way = t1.since(t0).as_s_f64() / (2 * iterations) as f64;
                if one_way > 0.0 {
                    m.set("latency_us", one_way * 1e6);
                    m.set("throughput_MBps", size as f64 / one_way / 1e6);
                } else {
                    let why = "the timed round trips took no simulated time; raise workload.iterations";
                    m.unmeasured("latency_us", why);
                    m.unmeasured("throughput_MBps", why);
                }
            }
        }
        if self.drive == Drive::Idle {
            let done = (0..self.hosts).all(|h| procs(h).finished());
            m.set("stuck", if done { 0.0 } else { 1.0 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    /// The program of `w` on `hosts` hosts and each host's process.
    fn processes(w: &Workload, hosts: u32, seed: u64) -> (Processes, Vec<Driver>) {
        let (p, procs) = Processes::new(w, hosts, seed).expect("a program of one process per host");
        (p, procs.into_iter().map(|h| h.driver).collect())
    }

    #[test]
    fn a_root_waiting_for_a_delivery_goes_on_when_the_last_receiver_has_it() {
        let tree = crate::tree::Tree::Kary(2);
        let w = Workload::BcastBench { root: 1, size: 8, iterations: 2, count: 0, tree };
        let (mut p, mut d) = processes(&w, 3, 1);
        let tag = crate::workload::tag::LCI_BCAST;
        assert!((0..3).all(|h| p.participates(h)));
        let z = Instant::ZERO;
        assert_eq!(p.next(1, &mut d[1], z), Some(Op::Mcast { size: 8, tag }));
        assert_eq!(p.next(1, &mut d[1], z), None);
        // Host 0 has it, host 2 not yet: the root still waits.
        assert_eq!(p.next(0, &mut d[0], z), None);
        assert!(!p.delivered_to(1, tag, &mut d[1]));
        assert!(d[0].arrived(1, tag));
        assert!(p.delivered_to(1, tag, &mut d[1]), "host 2 was the last receiver");
        assert!(!d[2].arrived(1, tag), "ahead of its receive");
        let t = Instant::ZERO + Duration::from_us(3);
        assert_eq!(p.next(1, &mut d[1], t), Some(Op::Mcast { size: 8, tag: tag + 1 }));
        // The second reaches both before the root asks to wait for it: its
        // wait goes on at once.
        for h in [0, 2] {
            assert_eq!(p.next(h, &mut d[h as usize], t), None);
            assert!(!p.delivered_to(1, tag + 1, &mut d[1]), "the root was not waiting yet");
            d[h as usize].arrived(1, tag + 1);
        }
        let end = t + Duration::from_us(5);
        assert_eq!(p.next(1, &mut d[1], end), Some(Op::Done));
        let mut m = Metrics::default();
        let link = LinkBound { bytes_per_s: 1e9, frame_extra_bytes: 0, frame_payload: 4096 };
        p.metrics(&mut m, &link, |h| &d[h as usize]);
        assert_eq!(m.get("latency_us"), Some(4.0), "two broadcasts in 8 us");
        assert_eq!(m.get("burst_us"), None, "no back-to-back broadcasts");
        assert!(!p.done(|h| &d[h as usize]));
        for h in [0, 2] {
            assert_eq!(p.next(h, &mut d[h as usize], end), Some(Op::Done), "host {h} received both");
        }
        assert!(p.done(|h| &d[h as usize]));
    }

    #[test]
    fn the_fft_runs_the_one_fft_program_with_new_chunk_times_each_iteration() {
        let compute = Duration::from_ms(3);
        let w = Workload::FftAlltoall { ranks: 4, iterations: 3, block: 1024, compute, per_host: 1 };
        let (p, mut d) = processes(&w, 5, 7);
        assert_eq!(p.drive, Drive::Idle);
        assert!(p.participates(3) && !p.participates(4));
        assert!(d[4].finished(), "a host that runs no process holds an idle one");
        // Rank 1 alone, its peers' blocks arriving at once: three chunks and
        // three sends per iteration, each iteration's chunk times its own.
        let mut chunks = Vec::new();
        let mut sends = Vec::new();
        for _ in 0..100 {
            match d[1].next(Instant::ZERO) {
                Some(Op::Compute(c)) => {
                    chunks.push(c);
                    d[1].compute_done();
                }
                Some(Op::Send { peer, .. }) => sends.push(p.host(peer)),
                Some(Op::Done) => break,
                _ => {}
            }
            for src in [0, 2, 3] {
                d[1].arrived(src, crate::workload::tag::FFT);
            }
        }
        assert!(d[1].finished());
        assert_eq!(chunks.len(), 9);
        assert_eq!(sends, [2, 3, 0].repeat(3));
        assert_ne!(chunks[..3], chunks[3..6], "drawn anew each iteration");
        // The same seed draws the same program.
        let (_, mut e) = processes(&w, 5, 7);
        assert_eq!(e[1].next(Instant::ZERO), Some(Op::Compute(chunks[0])));
    }
}
