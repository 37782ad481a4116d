//! The broadcast benchmark root's wait for each broadcast to reach every
//! other rank (`crate::workload::bcast_bench_ops`, [`Op::WaitDelivered`]),
//! which only the LCI stack's programs do: no Open-MX program waits for
//! another host's receive (`crate::workload::bcast_bench_ops` says why the
//! Open-MX library does not offer it). It is counted across hosts, so it is
//! the run's (`crate::lci::Running`), not one library's: the world runs a
//! process its upcalls drive through `Deliveries::next` and hands it each
//! upcall after `Deliveries::delivered_to` (`crate::sim` `lci_stack`).
//!
//! Everything else of a program of one process per host is the world's:
//! its ranks are the world's rank map (`crate::library::Ranks`, placed by
//! `crate::sim` `build`'s `lci_processes`), each process is the one driver
//! (`crate::library::driver::Driver`) its host's library holds, and the
//! measurements from the processes' marks are `crate::sim` `metrics`'. It
//! times nothing.

use crate::library::driver::Driver;
use crate::time::Instant;
use crate::workload::Op;
use std::collections::BTreeMap;

/// The multicasts of a program that waits for deliveries
/// ([`Op::WaitDelivered`]) that have not reached every other rank yet, by
/// (source rank, tag), with the ranks each reached; bounded by the
/// multicasts in flight.
#[derive(Debug, Default)]
pub struct Deliveries {
    reached: BTreeMap<(u32, u64), u32>,
}

impl Deliveries {
    /// A whole message from rank `from` with `tag` reached one more of the
    /// run's `ranks`; whether it now reached every rank but its sender's
    /// and the sender's process `sender` waited for that
    /// ([`Op::WaitDelivered`]): it then waits no more, for the world to run
    /// on.
    pub(crate) fn delivered_to(&mut self, from: u32, tag: u64, ranks: u32, sender: &mut Driver) -> bool {
        let Some(got) = self.reached.get_mut(&(from, tag)) else { return false };
        *got += 1;
        if *got < ranks - 1 {
            return false;
        }
        self.reached.remove(&(from, tag));
        let woken = sender.awaits_delivery() == Some(tag);
        if woken {
            sender.delivered();
        }
        woken
    }

    /// Runs rank `rank`'s process `d` at `now` up to its next request of
    /// the library (see [`Driver::next`]). Its multicast is counted until
    /// it reached every other rank; a wait for one that did goes on at once.
    pub(crate) fn next(&mut self, rank: u32, d: &mut Driver, now: Instant) -> Option<Op> {
        loop {
            let next = d.next(now);
            if let Some(Op::Mcast { tag, .. }) = next {
                self.reached.insert((rank, tag), 0);
            }
            match d.awaits_delivery() {
                Some(tag) if next.is_none() && !self.reached.contains_key(&(rank, tag)) => d.delivered(),
                _ => return next,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Workload;
    use crate::library::driver::Drive;
    use crate::library::Ranks;
    use crate::sim::lci_processes;
    use crate::time::Duration;

    /// The world's rank map of `w` on `hosts` hosts, how the libraries run
    /// its processes and each host's process.
    fn processes(w: &Workload, hosts: u32, seed: u64) -> (Ranks, Drive, Vec<Driver>) {
        let mut ranks = Ranks::new(hosts as usize);
        let (drive, procs) = lci_processes(w, hosts, seed, &mut ranks).expect("a program of one process per host");
        (ranks, drive, procs)
    }

    #[test]
    fn a_root_waiting_for_a_delivery_goes_on_when_the_last_receiver_has_it() {
        let tree = crate::tree::Tree::Kary(2);
        let w = Workload::BcastBench { root: 1, size: 8, iterations: 2, count: 0, tree };
        let (ranks, _, mut d) = processes(&w, 3, 1);
        let mut p = Deliveries::default();
        let tag = crate::workload::tag::LCI_BCAST;
        assert_eq!(ranks.len(), 3, "every host runs a process");
        let z = Instant::ZERO;
        assert_eq!(p.next(1, &mut d[1], z), Some(Op::Mcast { size: 8, tag }));
        assert_eq!(p.next(1, &mut d[1], z), None);
        // Host 0 has it, host 2 not yet: the root still waits.
        assert_eq!(p.next(0, &mut d[0], z), None);
        assert!(!p.delivered_to(1, tag, 3, &mut d[1]));
        assert!(d[0].arrived(1, tag));
        assert!(p.delivered_to(1, tag, 3, &mut d[1]), "host 2 was the last receiver");
        assert!(!d[2].arrived(1, tag), "ahead of its receive");
        let t = Instant::ZERO + Duration::from_us(3);
        assert_eq!(p.next(1, &mut d[1], t), Some(Op::Mcast { size: 8, tag: tag + 1 }));
        // The second reaches both before the root asks to wait for it: its
        // wait goes on at once.
        for h in [0, 2] {
            assert_eq!(p.next(h, &mut d[h as usize], t), None);
            assert!(!p.delivered_to(1, tag + 1, 3, &mut d[1]), "the root was not waiting yet");
            d[h as usize].arrived(1, tag + 1);
        }
        let end = t + Duration::from_us(5);
        assert_eq!(p.next(1, &mut d[1], end), Some(Op::Done));
        assert_eq!(d[1].mark(0), Some(end), "the one-at-a-time broadcasts end at the start mark");
        assert!(!d.iter().all(Driver::finished));
        for h in [0, 2] {
            assert_eq!(p.next(h, &mut d[h as usize], end), Some(Op::Done), "host {h} received both");
        }
        assert!(d.iter().all(Driver::finished));
    }

    #[test]
    fn the_fft_runs_the_one_fft_program_with_new_chunk_times_each_iteration() {
        let compute = Duration::from_ms(3);
        let w = Workload::FftAlltoall { ranks: 4, iterations: 3, block: 1024, compute, per_host: 1 };
        let (ranks, drive, mut d) = processes(&w, 5, 7);
        assert_eq!(drive, Drive::Idle);
        assert_eq!(ranks.len(), 4, "ranks on hosts 0..4");
        assert!(ranks.at(3, 0) == 3 && ranks.at(4, 0) == crate::library::NO_RANK);
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
                Some(Op::Send { peer, .. }) => sends.push(ranks[peer as usize].0),
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
        let (_, _, mut e) = processes(&w, 5, 7);
        assert_eq!(e[1].next(Instant::ZERO), Some(Op::Compute(chunks[0])));
    }
}
