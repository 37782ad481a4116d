//! Multicast in the LCI stack (\[LCI], SPEC §2.4): per-sender spanning trees
//! and the three forwarding schemes.
//!
//! This module owns the rules ([`Cx`]) that decide who forwards what, and
//! over each host's side of them ([`super::host::HostMc`], in its library),
//! over the tree shape of `crate::nic::multicast` ([`Kary`]: a `fanout`-ary tree over
//! the ranks relative to the root, binary by default; each NI's forwarding
//! table is that module's [`ForwardTable`] of shape `Tree::Kary`, as the
//! Open-MX NIC's) and the NI state of that module ([`NiMc`]: the table
//! and the NI's rank, the queue of forwards transmitted from a receive
//! buffer, the receive buffers held until every forward left, the send
//! buffers shared by several descriptors):
//!
//! * `host-message`: a host forwards a message only when all of it arrived,
//!   by point-to-point sends (the host re-sends: one PIO copy per child).
//! * `host-packet`: a host forwards each packet at its upcall: one PIO copy
//!   of the packet into one NI send buffer plus one descriptor per child;
//!   the send buffer is released when the last child's copy left.
//! * `ni`: the NI recognises the multicast tag ([`super::Packet::bcast`]),
//!   looks up the children in its table and transmits from the receive
//!   buffer, then (in parallel) DMAs the packet to its host; the receive
//!   buffer is free when both the host DMA and every forward are done. The
//!   host is off the critical path.
//!
//! Flow control: a forward, like any transmission, starts only when the
//! child's NI has a free receive buffer (Myrinet back-pressure); until then
//! the forwarding NI waits and keeps holding its own receive buffer. It
//! does not own the programs that multicast (`crate::workload`'s, run by
//! `super::process`).

use super::host::Outgoing;
use super::process::{Drive, Next};
use super::workload::Job;
use super::{host_origin, Cx, LibEv, Packet, Parts, Queue, To};
use crate::config::Forwarding;
pub use crate::nic::multicast::{ForwardTable, Kary, NiMc, Tree};
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// The multicast study's metrics: the NIs' forwards and waits, the
/// libraries' copies and what they consumed, the buses' PIO writes.
pub(super) fn metrics(hs: &[impl Parts], set: &mut dyn FnMut(&str, f64)) {
    let nis = || hs.iter().map(|x| x.ni_ref());
    let libs = || hs.iter().map(|x| &x.lib_ref().mc);
    set("ni_forwards", nis().map(|n| n.mc.forwards).sum::<u64>() as f64);
    set("ni_forward_waits", nis().map(|n| n.mc.fwd_waits).sum::<u64>() as f64);
    set("host_forward_copies", libs().map(|m| m.host_forward_copies).sum::<u64>() as f64);
    set("mc_packets_consumed", libs().map(|m| m.mc_packets_consumed).sum::<u64>() as f64);
    set("mc_bytes_consumed", libs().map(|m| m.mc_bytes_consumed).sum::<u64>() as f64);
    set("pio_writes", nis().map(|n| n.bus.pio_writes).sum::<u64>() as f64);
}

/// Queues in `outbox` a broadcast of `size` bytes with `tag` from `root`
/// down its `tree`: under `host-message` one point-to-point send (one PIO
/// copy) per child, MPICH-style; otherwise one copy into the NI, expanded
/// to one descriptor per child when posted (`Cx::mc_post`).
fn bcast(outbox: &mut VecDeque<Outgoing>, forwarding: Forwarding, tree: Kary, root: u32, size: u64, tag: u64) {
    let o = Outgoing { dst: root, size, count: 1, bcast: Some(root), tag };
    match forwarding {
        Forwarding::HostMessage => outbox.extend(tree.children(root, root).map(|dst| Outgoing { dst, ..o })),
        Forwarding::HostPacket | Forwarding::Ni => {
            let first = tree.children(root, root).next().expect("a root has a child");
            outbox.push_back(Outgoing { dst: first, ..o });
        }
    }
}

impl<P: Parts, Q: Queue> Cx<'_, P, Q> {
    /// The programs' sends and compute at time zero.
    pub(super) fn mc_start(&mut self, now: Instant) {
        match &mut self.prog.job {
            Job::Procs(p) if p.drive == Drive::Upcall => {
                for h in 0..p.procs.len() as u32 {
                    self.proceed(h, now);
                }
            }
            _ => {}
        }
    }

    /// Lets host `h`, if it spins in the library, go on at `now`.
    fn wake(&mut self, h: u32, now: Instant) {
        let host = self.hs[h as usize].lib();
        if host.spin_since.is_some() {
            host.end_spin(now);
            self.host_next(h, now);
        }
    }

    /// Runs host `h`'s process at `now` until it waits: its sends and
    /// broadcasts go to the host's outbox (a broadcast per the forwarding
    /// scheme), its compute waits for them to be written (`mc_compute`).
    fn proceed(&mut self, h: u32, now: Instant) {
        let Job::Procs(p) = &mut self.prog.job else { return };
        debug_assert_eq!(p.drive, Drive::Upcall);
        let lib = self.hs[h as usize].lib();
        let (outbox, mc) = (&mut lib.outbox, &mut lib.mc);
        loop {
            match p.next(h, now) {
                Next::Send { dst, size, tag } => {
                    outbox.push_back(Outgoing { dst: p.host(dst), size, count: 1, bcast: None, tag })
                }
                Next::Mcast { size, tag } => bcast(outbox, mc.forwarding, mc.tree, h, size, tag),
                Next::Compute(d) => {
                    let c = &mut mc.compute;
                    *c = Some(c.unwrap_or(Duration::ZERO) + d);
                    break;
                }
                Next::Wait | Next::Done => break,
            }
        }
        self.wake(h, now);
    }

    /// Host `h` consumed `pkt` (upcall ends at `done`): host-level forwarding
    /// and the program's reaction. Returns true if it scheduled the host's
    /// next wake-up itself (a `host-packet` forward follows the upcall).
    pub(super) fn mc_consumed(&mut self, h: u32, pkt: Packet, done: Instant) -> bool {
        if !self.prog.job.upcall_driven() {
            return false;
        }
        let mut took = false;
        if let Some(root) = pkt.bcast {
            let lib = self.hs[h as usize].lib();
            lib.mc.mc_packets_consumed += 1;
            lib.mc.mc_bytes_consumed += pkt.payload as u64;
            let tree = lib.mc.tree;
            match lib.mc.forwarding {
                Forwarding::HostMessage if pkt.last => {
                    let outbox = &mut lib.outbox;
                    for dst in tree.children(root, h) {
                        outbox.push_back(Outgoing {
                            dst,
                            size: pkt.msg_bytes,
                            count: 1,
                            bcast: Some(root),
                            tag: pkt.tag,
                        });
                    }
                }
                Forwarding::HostPacket if tree.child_count(root, h) > 0 => {
                    self.at_packet(done, host_origin(h), To::Library(LibEv::McForward), h, pkt);
                    took = true;
                }
                _ => {}
            }
        }
        if pkt.last {
            let go_on = match &mut self.prog.job {
                Job::Procs(p) => p.arrived(h, pkt.bcast.unwrap_or(pkt.src), pkt.tag),
                _ => false,
            };
            // A sender that waited for the message to reach every host.
            while let Some(s) = self.prog.job.take_woken() {
                self.proceed(s, done);
            }
            if go_on {
                self.proceed(h, done);
            }
        }
        took
    }

    /// Runs host `h`'s pending compute if its sends are all written; true if it started.
    pub(super) fn mc_compute(&mut self, h: u32, now: Instant) -> bool {
        let host = self.hs[h as usize].lib();
        let Some(c) = host.mc.compute else { return false };
        if !host.outbox.is_empty() || host.pending.is_some() {
            return false;
        }
        host.mc.compute = None;
        host.busy = true;
        self.at(now + c, host_origin(h), To::Library(LibEv::McComputeDone), h, 0);
        true
    }

    /// Hands a written packet to NI `h`: a multicast post under `host-packet`
    /// / `ni` becomes one descriptor per child sharing the send buffer.
    pub(super) fn mc_post(&mut self, h: u32, now: Instant, pkt: Packet) -> Option<Instant> {
        let mc = self.hs[h as usize].lib_ref().mc;
        let ni = self.hs[h as usize].ni();
        match (mc.forwarding, pkt.bcast) {
            (Forwarding::HostPacket | Forwarding::Ni, Some(root)) => {
                ni.packets_sent += mc.tree.child_count(root, h) as u64 - 1;
                ni.tx_post_shared(now, pkt, mc.tree.children(root, h))
            }
            _ => ni.tx_post(now, pkt),
        }
    }

    /// A receive buffer of NI `h` became free: every sender, then every
    /// forwarder, waiting for one retries (in the order they began to wait).
    pub(super) fn buffer_freed(&mut self, h: u32, now: Instant) {
        for forward in [false, true] {
            let mut waiting = std::mem::take(self.hs[h as usize].ni().waiting(forward));
            for &s in &waiting {
                self.try_transmit(s, now, forward);
            }
            waiting.clear();
            let list = self.hs[h as usize].ni().waiting(forward);
            if list.is_empty() {
                *list = waiting;
            }
        }
    }

    /// `LibEv::McForward`: host `h`'s upcall forwards its packet `id`
    /// (`host-packet`).
    pub fn mc_forward(&mut self, h: u32, id: u32, now: Instant) {
        let pkt = self.take_packet(h, id);
        self.forward_after_upcall(h, pkt, now);
    }

    /// If no NI send buffer is known free, read the NI's released counter
    /// first; then the send path of the forward.
    fn forward_after_upcall(&mut self, h: u32, pkt: Packet, now: Instant) {
        let host = self.hs[h as usize].lib();
        if host.posted - host.known_sent >= host.send_buffers() {
            let (_, end) = self.hs[h as usize].ni().bus.request(now, crate::host::bus::BusOp::PioRead);
            self.at_packet(end, host_origin(h), To::Library(LibEv::McSendCounterDone), h, pkt);
        } else {
            let t = now + host.send_cost;
            self.at_packet(t, host_origin(h), To::Library(LibEv::McWrite), h, pkt);
        }
    }

    /// `LibEv::McSendCounterDone`: the read for forwarding packet `id`.
    pub fn mc_send_counter_done(&mut self, h: u32, id: u32, now: Instant) {
        let pkt = self.take_packet(h, id);
        self.hs[h as usize].lib().known_sent = self.hs[h as usize].ni().sent;
        self.forward_after_upcall(h, pkt, now);
    }

    /// `LibEv::McWrite`: host `h` writes its forward of packet `id`.
    pub fn mc_write(&mut self, h: u32, id: u32, now: Instant) {
        let pkt = self.take_packet(h, id);
        let mc = &mut self.hs[h as usize].lib().mc;
        mc.host_forward_copies += 1;
        let first = mc.tree.children(pkt.bcast.expect("multicast"), h).next().expect("a child");
        self.write(h, now, Packet { dst: first, ..pkt });
    }

    /// `FwEv::FwdReady`.
    pub fn fwd_ready(&mut self, h: u32, now: Instant) {
        self.hs[h as usize].ni().mc.fwd_ready = true;
        self.try_transmit(h, now, true);
    }

    /// `FwEv::FwdDone`: NI `h`'s forward of packet `id` left.
    pub fn fwd_done(&mut self, h: u32, id: u32, now: Instant) {
        let pkt = self.take_packet(h, id);
        if self.hs[h as usize].ni().mc.release_on_forward(&pkt) {
            self.hs[h as usize].ni().rx_free += 1;
            self.buffer_freed(h, now);
        }
    }

    /// `LibEv::McComputeDone`.
    pub fn mc_compute_done(&mut self, h: u32, now: Instant) {
        self.hs[h as usize].lib().busy = false;
        if let Job::Procs(p) = &mut self.prog.job {
            p.procs[h as usize].compute_done();
        }
        self.proceed(h, now);
        self.host_next(h, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_tree_covers_every_rank_once_from_any_root() {
        let t = Kary { n: 64, fanout: 2 };
        for root in [0, 5, 63] {
            let mut seen = vec![0u32; 64];
            seen[root as usize] += 1;
            for r in 0..64 {
                let kids: Vec<u32> = t.children(root, r).collect();
                assert!(kids.len() <= 2);
                for c in kids {
                    seen[c as usize] += 1;
                    assert_eq!(t.parent(root, c), Some(r));
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "root {root}: {seen:?}");
            assert_eq!(t.parent(root, root), None);
            assert_eq!(t.children(root, root).collect::<Vec<_>>(), vec![(root + 1) % 64, (root + 2) % 64]);
        }
        // Depth of a 64-node binary tree: 6 levels below the root.
        let depth = |mut r: u32| {
            let mut d = 0;
            while let Some(p) = t.parent(0, r) {
                r = p;
                d += 1;
            }
            d
        };
        assert_eq!((0..64).map(depth).max(), Some(6));
    }

    #[test]
    fn forward_table_matches_the_tree() {
        let t = Kary { n: 64, fanout: 3 };
        let ft = ForwardTable { tree: Tree::Kary(3), ranks: 64 };
        for root in 0..64 {
            for r in 0..64 {
                assert_eq!(ft.children(root, r).collect::<Vec<_>>(), t.children(root, r).collect::<Vec<_>>());
            }
        }
        // An NI looks its own rank up: rank 0 is relative rank 1 of root 7.
        let m = NiMc::<Packet>::new(Some(ForwardTable { tree: Tree::Kary(2), ranks: 8 }), 0);
        assert_eq!(m.table.unwrap().children(7, m.rank).collect::<Vec<_>>(), [2, 3]);
    }

    #[test]
    fn forwarding_names_round_trip() {
        // Result tables print the names the parser accepts.
        for n in crate::config::variant_names::<Forwarding>() {
            let f: Forwarding = toml::Value::String(n.to_string()).try_into().unwrap();
            assert_eq!(f.to_string(), *n);
        }
    }

    #[test]
    fn held_buffer_is_free_after_host_dma_and_every_forward() {
        let mut m = NiMc::new(Some(ForwardTable { tree: Tree::Kary(2), ranks: 8 }), 0);
        let p = Packet {
            src: 0,
            dst: 0,
            msg: 3,
            frag: 0,
            last: true,
            payload: 64,
            msg_bytes: 64,
            bcast: Some(7),
            tag: 0,
            ack: 0,
            ack_only: false,
        };
        // Root 7: rank 0 is relative rank 1, children relative 3, 4 = ranks 2, 3.
        assert_eq!(m.start_forward(p), 2);
        assert_eq!(m.fwd_queue.iter().map(|q| q.dst).collect::<Vec<_>>(), vec![2, 3]);
        assert!(!m.release_on_forward(&p));
        assert!(!m.release_on_delivery(&p), "one forward still uses the buffer");
        assert!(m.release_on_forward(&p));
        assert_eq!(m.held(), 0);
        // A leaf forwards nothing and holds nothing.
        let leaf = Packet { bcast: Some(0), ..p };
        let mut m = NiMc::new(Some(ForwardTable { tree: Tree::Kary(2), ranks: 8 }), 7);
        assert_eq!(m.start_forward(leaf), 0);
        assert!(m.release_on_delivery(&leaf));
    }
}
