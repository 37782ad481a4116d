//! One LCI host's process running its [`Program`], the operation
//! sequences of `crate::workload` that the Open-MX library runs too (ASP
//! and QR, `crate::workload::asp_ops` and `crate::workload::qr_ops`, in
//! their library-forwarded shape: a root [`Op::Mcast`]s, the others receive
//! from the root; the FFT all-to-all, `crate::workload::FftAlltoall`),
//! and the broadcast benchmark, which only this library runs
//! (`crate::workload::bcast_bench_ops`: its root waits for each broadcast
//! to reach every other host, [`Op::WaitDelivered`], which
//! [`Processes`] resolves because it holds every host's process).
//!
//! This module owns the program's side of the LCI library, sans-I/O: it
//! runs operations until one needs the library ([`Driver::next`]: a send,
//! a multicast, a compute phase) or waits, and it matches the messages the
//! upcalls deliver ([`Driver::arrived`]) against the receives posted, by
//! (source, tag) as MPI does; a broadcast's source is its root. The
//! program's cursor (its waits and marks, `crate::workload::Cursor`) and
//! the matching (`crate::library::BySource`) are the Open-MX library's;
//! what is this library's own is the wait for a delivery, the compute
//! phases the library runs, and when it runs a program ([`Drive`]). The stack
//! hands the sends to the host's outbox, the multicasts to the forwarding
//! scheme, and runs the compute phases, when and where [`Drive`] says. A send or a multicast is
//! complete once it is in the library's outbox, so `WaitOutstanding` waits
//! for the receives alone. It times nothing: the stack calls it with
//! `now`.

use super::Job;
use crate::config::Workload;
use crate::library::driver::{Drive, Driver};
use crate::library::lci::{Control, Outgoing};
use crate::library::{Ranks, NO_RANK};
use crate::metrics::{stream_unmeasurable, LinkBound};
use crate::time::Instant;
use crate::workload::{Op, Program};
use crate::Metrics;
use std::collections::BTreeMap;

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

/// The processes of the hosts, one program each (`crate::workload`'s).
#[derive(Debug)]
pub struct Processes {
    /// Per host (a host that runs no process has an idle one).
    pub(crate) procs: Vec<Driver>,
    pub drive: Drive,
    measure: Measure,
    /// The host of each rank, and the rank of each host (endpoint 0; the
    /// Open-MX library's rank map).
    ranks: Ranks,
    /// `Drive::Idle`: the sends a process asked for since the stack last
    /// took them, (host, message).
    sends: Vec<(u32, Outgoing)>,
    /// A program that waits for deliveries ([`Op::WaitDelivered`]): per
    /// multicast that has not reached every other rank yet, by (source
    /// rank, tag), the ranks it reached; bounded by the multicasts in flight.
    reached: Option<BTreeMap<(u32, u64), u32>>,
    /// Hosts whose process a delivery elsewhere let go on, for the stack
    /// to run ([`Processes::take_woken`]).
    woken: Vec<u32>,
}

impl Processes {
    /// One process per host of `w`'s program on `hosts` hosts (`None`:
    /// the stack runs `w` otherwise): ASP and QR on every host, their
    /// broadcasts down the trees of the library's multicast (the
    /// workload's, of fan-out `nic.fanout`); the FFT all-to-all on hosts
    /// `0..ranks`, each process's chunk times drawn from its own stream of
    /// `seed` (`crate::workload::FftAlltoall`); the Open-MX library's
    /// stream and ping-pong as ranks 0 and 1 on the workload's pair of
    /// hosts.
    pub fn new(w: &Workload, hosts: u32, seed: u64) -> Option<Self> {
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
        let procs = (0..all as usize)
            .map(|h| match ranks.at(h, 0) as u32 {
                r if r == NO_RANK as u32 => Driver::new(Program::Idle),
                // ASP's and QR's broadcasts are the library's multicasts
                // (`Op::Mcast`), whatever forwards them (`nic.forwarding`).
                r => Driver::new(w.program(r, n, seed).expect("a program of crate::workload")),
            })
            .collect();
        let reached = matches!(measure, Measure::Bcast { .. }).then(BTreeMap::new);
        let sends = Vec::with_capacity(n as usize);
        Some(Processes { procs, drive, measure, ranks, sends, reached, woken: Vec::new() })
    }

    /// The host of rank `r`.
    pub fn host(&self, r: u32) -> u32 {
        self.ranks[r as usize].0 as u32
    }

    /// A whole message from host `src` (a broadcast's root) with `tag`
    /// reached host `h`'s process; whether the process goes on. If the
    /// sender waits for its delivery to every other rank and `h` was the
    /// last, the sender goes on too ([`Processes::take_woken`]).
    pub fn arrived(&mut self, h: u32, src: u32, tag: u64) -> bool {
        let from = self.ranks.at(src as usize, 0) as u32;
        let receivers = self.ranks.len() as u32 - 1;
        if let Some(reached) = &mut self.reached {
            if let Some(got) = reached.get_mut(&(from, tag)) {
                *got += 1;
                if *got == receivers {
                    reached.remove(&(from, tag));
                    let sender = &mut self.procs[src as usize];
                    if sender.awaits_delivery() == Some(tag) {
                        sender.delivered();
                        self.woken.push(src);
                    }
                }
            }
        }
        self.procs[h as usize].arrived(from, tag)
    }

    /// Runs host `h`'s process at `now` up to its next request of the
    /// library (see [`Driver::next`]). A multicast of a program that
    /// waits for deliveries is counted until it reached every other rank;
    /// a wait for one that did goes on at once.
    pub fn next(&mut self, h: u32, now: Instant) -> Option<Op> {
        let rank = self.ranks.at(h as usize, 0) as u32;
        loop {
            let next = self.procs[h as usize].next(now);
            let Some(reached) = &mut self.reached else { return next };
            if let Some(Op::Mcast { tag, .. }) = next {
                reached.insert((rank, tag), 0);
            }
            match self.procs[h as usize].awaits_delivery() {
                Some(tag) if next.is_none() && !reached.contains_key(&(rank, tag)) => {
                    self.procs[h as usize].delivered()
                }
                _ => return next,
            }
        }
    }

    /// The hosts whose process a delivery to another host let go on since
    /// the last call (see [`Processes::arrived`]), for the stack to run.
    pub fn take_woken(&mut self) -> Option<u32> {
        self.woken.pop()
    }
}

/// The processes as the program of a run: the library's idle turns drive
/// them under `Drive::Idle`, its upcalls under `Drive::Upcall` (`proceed`
/// of `crate::sim` `lci_stack`, through [`Job::procs_mut`]).
impl Job for Processes {
    fn participates(&self, h: u32) -> bool {
        (h as usize) < self.procs.len() && self.ranks.at(h as usize, 0) != NO_RANK
    }

    fn on_message(&mut self, h: u32, from: u32, tag: u64) {
        if self.drive == Drive::Idle {
            self.arrived(h, from, tag);
        }
    }

    /// `Drive::Idle`: the process computes, or hands the library a send
    /// (kept for [`Job::drain_sends`]) or waits, polling.
    fn control(&mut self, h: u32, now: Instant) -> Control {
        if self.drive != Drive::Idle {
            return Control::Wait;
        }
        match self.next(h, now) {
            Some(Op::Compute(d)) => Control::Compute(d),
            Some(Op::Send { peer, size, tag }) => {
                let dst = self.host(peer);
                self.sends.push((h, Outgoing { dst, size, count: 1, bcast: None, tag }));
                Control::Wait
            }
            Some(Op::Mcast { .. }) => unreachable!("an idle-driven program does not multicast"),
            _ => Control::Wait,
        }
    }

    fn compute_done(&mut self, h: u32) {
        if self.drive == Drive::Idle {
            self.procs[h as usize].compute_done();
        }
    }

    fn drain_sends(&mut self, out: &mut Vec<(u32, Outgoing)>) {
        out.append(&mut self.sends);
    }

    fn done(&self) -> bool {
        self.procs.iter().all(Driver::finished)
    }

    fn procs(&self) -> Option<&Processes> {
        Some(self)
    }

    fn procs_mut(&mut self) -> Option<&mut Processes> {
        Some(self)
    }

    fn upcall_driven(&self) -> bool {
        self.drive == Drive::Upcall
    }

    /// One of the multicast study's programs (its forwarding metrics are reported).
    fn multicasts(&self) -> bool {
        self.drive == Drive::Upcall && matches!(self.measure, Measure::Exec | Measure::Bcast { .. })
    }

    /// The program's measurements from its processes' marks; `link`
    /// bounds how fast the network can carry a stream (a faster figure is
    /// not measured). An idle-driven program that could not finish
    /// reports `stuck`.
    fn metrics(&self, m: &mut Metrics, link: &LinkBound) {
        let marks = |r: u32| {
            let p = &self.procs[self.host(r) as usize];
            (p.mark(0).unwrap_or(Instant::ZERO), p.mark(1).unwrap_or(Instant::ZERO))
        };
        match self.measure {
            Measure::Exec => {
                match (0..self.ranks.len() as u32)
                    .map(|r| self.procs[self.host(r) as usize].mark(1))
                    .collect::<Option<Vec<_>>>()
                {
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
            m.set("stuck", if self.done() { 0.0 } else { 1.0 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    #[test]
    fn a_root_waiting_for_a_delivery_goes_on_when_the_last_receiver_has_it() {
        let tree = crate::tree::Tree::Kary(2);
        let w = Workload::BcastBench { root: 1, size: 8, iterations: 2, count: 0, tree };
        let mut p = Processes::new(&w, 3, 1).expect("the broadcast benchmark runs as processes");
        let tag = crate::workload::tag::LCI_BCAST;
        assert!((0..3).all(|h| p.participates(h)));
        assert_eq!(p.next(1, Instant::ZERO), Some(Op::Mcast { size: 8, tag }));
        assert_eq!(p.next(1, Instant::ZERO), None);
        // Host 0 has it, host 2 not yet: the root still waits.
        assert_eq!(p.next(0, Instant::ZERO), None);
        assert!(p.arrived(0, 1, tag));
        assert_eq!(p.take_woken(), None);
        assert!(!p.arrived(2, 1, tag), "ahead of its receive");
        assert_eq!(p.take_woken(), Some(1), "host 2 was the last receiver");
        let t = Instant::ZERO + Duration::from_us(3);
        assert_eq!(p.next(1, t), Some(Op::Mcast { size: 8, tag: tag + 1 }));
        // The second reaches both before the root asks to wait for it: its
        // wait goes on at once.
        for h in [0, 2] {
            assert_eq!(p.next(h, t), None);
            p.arrived(h, 1, tag + 1);
        }
        assert_eq!(p.take_woken(), None, "the root was not waiting yet");
        let end = t + Duration::from_us(5);
        assert_eq!(p.next(1, end), Some(Op::Done));
        let mut m = Metrics::default();
        p.metrics(&mut m, &LinkBound { bytes_per_s: 1e9, frame_extra_bytes: 0, frame_payload: 4096 });
        assert_eq!(m.get("latency_us"), Some(4.0), "two broadcasts in 8 us");
        assert_eq!(m.get("burst_us"), None, "no back-to-back broadcasts");
        for h in [0, 2] {
            assert_eq!(p.next(h, end), Some(Op::Done), "host {h} received both");
        }
        assert!(p.done());
    }

    #[test]
    fn the_fft_runs_the_one_fft_program_with_new_chunk_times_each_iteration() {
        let compute = Duration::from_ms(3);
        let w = Workload::FftAlltoall { ranks: 4, iterations: 3, block: 1024, compute, per_host: 1 };
        let mut p = Processes::new(&w, 5, 7).expect("the FFT runs as processes");
        assert_eq!(p.drive, Drive::Idle);
        assert!(p.participates(3) && !p.participates(4));
        // Rank 1 alone, its peers' blocks arriving at once: three chunks and
        // three sends per iteration, each iteration's chunk times its own.
        let mut chunks = Vec::new();
        let mut sends = Vec::new();
        for _ in 0..100 {
            match p.control(1, Instant::ZERO) {
                Control::Compute(d) => {
                    chunks.push(d);
                    p.procs[1].compute_done();
                }
                Control::Wait if p.procs[1].finished() => break,
                Control::Wait => {}
                Control::Sleep => unreachable!(),
            }
            p.drain_sends(&mut sends);
            for src in [0, 2, 3] {
                p.arrived(1, src, crate::workload::tag::FFT);
            }
        }
        assert!(p.procs[1].finished());
        assert_eq!(chunks.len(), 9);
        assert_eq!(sends.iter().map(|(_, o)| o.dst).collect::<Vec<_>>(), [2, 3, 0].repeat(3));
        assert_ne!(chunks[..3], chunks[3..6], "drawn anew each iteration");
        // The same seed draws the same program.
        let mut q = Processes::new(&w, 5, 7).expect("processes");
        assert_eq!(q.control(1, Instant::ZERO), Control::Compute(chunks[0]));
    }
}
