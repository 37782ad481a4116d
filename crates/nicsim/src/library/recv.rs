//! The library's receive side: what consuming a ring event does. Acks
//! release sent messages; in-order messages are matched against posted
//! receives (or kept as unexpected); early ones wait; medium fragments are
//! reassembled; completed pulls notify the sender.
//!
//! This file owns the event -> request step and its price (`consume_cost`,
//! which `step` charges as the segment before it); sequence numbers and
//! acks are `crate::proto::Endpoint`'s transitions, which this file
//! applies.

use super::indexes::{MediumRx, MediumTarget};
use super::process::{LibEvent, Out, Proc, Unexpected, Writer};
use super::{Cx, Output};
use crate::host::cache::code::Seg;
use crate::host::cache::footprint::LibPath;
use crate::host::{Cpu, Owner, Side};
use crate::proto::{AckPlan, Arrival, Kind};
use crate::time::Duration;
use crate::wire;

impl Proc {
    /// CPU cost of the process consuming ring event `ev` on `at`
    /// (`consume` acts on it when the segment ends): the library's event
    /// handling, the ring, endpoint and private lines it touches in its
    /// host's caches, the data copied out of the event or the receive-queue
    /// slot into the application's buffer, and the MPI layer's receive
    /// completion.
    #[inline(always)]
    pub(super) fn consume_cost(&mut self, cx: &mut Cx<'_>, at: Cpu, ev: LibEvent) -> Duration {
        let (c, cc, topo) = (&cx.env.c, &cx.env.c.cc, &cx.env.topo);
        let cache = &mut cx.mem.cache;
        let pr = self;
        let mut cost = c.lib.event
            + cc.access(topo, cache, &mut pr.ring_obj, at, Side::User, c.cache.event_lines)
            + cc.access(topo, cache, &mut pr.ep_obj, at, Side::User, c.cache.endpoint_lines);
        // The library's own state (`LibPath::Recv`) and the MPI layer's,
        // counted (its time is in `event`).
        let own = cx.mem.lines.lib_lines(LibPath::Recv);
        let lines = &mut pr.lines;
        cc.touch(cache, &mut lines.private, at, Side::User, c.cache.user_private_lines as u64 + own);
        // And the library's code (`host/cache/code.rs`).
        cx.mem.lines.code(cache, Seg::LibRecv, at, Side::User);
        let mut m = ev.msg;
        if m.kind == Kind::Mcast {
            // A multicast frame is read as the TINY or SMALL frame or the
            // MEDIUM fragment it is.
            m.kind = if m.size as usize <= wire::TINY_MAX {
                Kind::Tiny
            } else if m.size as usize <= wire::SMALL_MAX {
                Kind::Small
            } else {
                Kind::MediumFrag
            };
        }
        // A tiny message's data is in the event; a small one's or a
        // medium fragment's in the receive queue slot the driver
        // filled (the NIC's DMA for native MX: memory).
        let data = match m.kind {
            Kind::Tiny => m.size,
            Kind::Small => m.size,
            Kind::MediumFrag => m.frag_len as u64,
            _ => 0,
        };
        let copy = match m.kind {
            Kind::Tiny => {
                let app = &mut lines.app;
                cc.touch(cache, app, at, Side::User, cc.lines(data));
                cc.copy_time(ev.writer == Writer::die(at.die), data)
            }
            Kind::Small | Kind::MediumFrag if ev.writer == Writer::Memory => {
                let mut dma = crate::host::Obj::dma_written(cache, Owner::MEMORY);
                cc.copy(cache, &mut dma, Some(&mut lines.app), at, Side::User, data)
            }
            Kind::Small | Kind::MediumFrag => {
                let (slot, app) = lines.slot_to_read();
                cc.copy(cache, slot, Some(app), at, Side::User, data)
            }
            _ => Duration::ZERO,
        };
        // Whether the MPI layer's receive completes with this event.
        let mpi = match m.kind {
            Kind::Tiny | Kind::Small | Kind::PullDone | Kind::Shm => true,
            Kind::MediumFrag => m.frag_seq as u32 + 1 == c.layout.medium_frag_count(m.size as usize) as u32,
            Kind::Rndv | Kind::Notify | Kind::Ack | Kind::Mcast => false,
        };
        if mpi {
            cost += c.lib.mpi_recv;
            // The MPI layer's code (`host/cache/code.rs`).
            cx.mem.lines.code(&mut cx.mem.cache, Seg::MpiRecv, at, Side::User);
        }
        cost + copy
    }
}

impl Proc {
    /// Consumes ring event `ev` (priced by `consume_cost`).
    pub(super) fn consume(&mut self, cx: &mut Cx<'_>, ev: LibEvent) {
        let m = ev.msg;
        if let Some(v) = m.piggy {
            if m.kind != Kind::PullDone
                && self.proto.process_ack(ev.peer, v as u16) > 0
                && !(self.need_region.is_empty() && self.need_window.is_empty())
            {
                // The ack opened the peer's send window.
                self.submit_waiting_sends(cx);
            }
        }
        match m.kind {
            Kind::Ack => return,
            Kind::Mcast if m.size as usize > wire::SMALL_MAX => {
                self.mcast_frag(cx, ev);
                return;
            }
            Kind::Shm | Kind::Mcast => {
                // Intra-host: no sequence numbers or acks (the copy is
                // reliable); multicast: outside them (`crate::nic::multicast`).
                match self.posted.take(Some(ev.peer), m.tag) {
                    Some(r) => self.complete(cx, r),
                    None => self.unexpected.push(Some(ev.peer), m.tag, Unexpected { ev }),
                }
                return;
            }
            Kind::PullDone => {
                // The pull finished: complete the receive, notify the sender
                // (once its send window has room, behind the notifies that
                // wait for one).
                let req = m.seq;
                if self.need_window.is_empty() && !self.proto.window_full(ev.peer, 1) {
                    self.send_notify(cx, ev.peer, m.rdma, m.size);
                } else {
                    self.need_window.push_back((ev.peer, m.rdma, m.size));
                }
                self.complete(cx, req);
                self.pulls_active -= 1;
                if let Some((handle, blocks, pages)) = self.pulls_waiting.pop_front() {
                    self.pulls_active += 1;
                    self.outbox.push_back(Out::PullStart { handle, blocks, pages });
                }
                return;
            }
            _ => {}
        }
        let (seq, arrival) = self.proto.arrival(ev.peer, m.seq as u16);
        // A fragment of the medium message being received.
        if m.kind == Kind::MediumFrag {
            if let Some(rx) = self.medium.get_mut(ev.peer).filter(|rx| rx.seq == seq) {
                let bit = 1u32 << (m.frag_seq as u32 % 32);
                if rx.seen & bit != 0 {
                    cx.emit(Output::Duplicates { n: 1 });
                    return;
                }
                rx.seen |= bit;
                rx.stamps = (rx.stamps.0.min(ev.irq_stamp), rx.stamps.1.max(ev.irq_stamp));
                rx.left -= 1;
                if rx.left == 0 {
                    let MediumRx { target, stamps: (lo, hi), .. } = *rx;
                    self.medium.remove(ev.peer);
                    cx.emit(Output::Medium { one_irq: lo == hi });
                    if let MediumTarget::Req(r) = target {
                        self.complete(cx, r);
                    }
                    self.message_done(cx, ev.peer);
                }
                return;
            }
        }
        match arrival {
            Arrival::Duplicate => {
                // Already seen: the ack was lost, re-ack at once.
                cx.emit(Output::Duplicates { n: 1 });
                self.outbox.push_back(Out::Ack { peer: ev.peer });
            }
            Arrival::Early => self.early.push(ev.with_seq(seq)),
            // The peer's previous message is still being reassembled.
            Arrival::InOrder if self.medium.contains(ev.peer) => self.early.push(ev.with_seq(seq)),
            Arrival::InOrder => self.deliver(cx, ev.with_seq(seq)),
        }
    }

    /// An in-order message (or first fragment) is matched.
    fn deliver(&mut self, cx: &mut Cx<'_>, ev: LibEvent) {
        let (peer, m) = (ev.peer, ev.msg);
        let layout = cx.env.c.layout;
        // ob1's RNDV header matches the MPI receive of its tag (`ob1.rs`).
        let rndv = m.tag & super::ob1::RNDV != 0;
        let key = m.tag & !super::ob1::RNDV;
        let req = self.posted.take(Some(peer), key);
        match m.kind {
            Kind::Tiny | Kind::Small => {
                match req {
                    Some(r) if rndv => self.ob1_matched(cx, r, peer, m.tag),
                    Some(r) => self.complete(cx, r),
                    None => self.unexpected.push(Some(peer), key, Unexpected { ev }),
                }
                self.message_done(cx, peer);
            }
            Kind::MediumFrag => {
                let total = layout.medium_frag_count(m.size as usize) as u32;
                let left = total - 1;
                let rx = |target| MediumRx {
                    peer,
                    seq: m.seq,
                    target,
                    left,
                    seen: 1u32 << (m.frag_seq as u32 % 32),
                    stamps: (ev.irq_stamp, ev.irq_stamp),
                };
                if left == 0 {
                    cx.emit(Output::Medium { one_irq: true });
                }
                match req {
                    Some(r) if left == 0 => {
                        self.complete(cx, r);
                        self.message_done(cx, peer);
                    }
                    Some(r) => self.medium.insert(rx(MediumTarget::Req(r))),
                    None => {
                        let seq16 = m.seq as u16 as u32;
                        self.unexpected.push(Some(peer), m.tag, Unexpected { ev: ev.with_seq(seq16) });
                        if left == 0 {
                            self.message_done(cx, peer);
                        } else {
                            self.medium.insert(rx(MediumTarget::Unexpected));
                        }
                    }
                }
            }
            Kind::Rndv => {
                match req {
                    Some(r) => self.start_pull(cx, r, ev),
                    None => self.unexpected.push(Some(peer), m.tag, Unexpected { ev }),
                }
                self.message_done(cx, peer);
            }
            Kind::Notify => {
                if let Some(r) = self.regions.release(m.rdma) {
                    self.complete(cx, r);
                }
                self.message_done(cx, peer);
                if !self.need_region.is_empty() {
                    self.submit_waiting_sends(cx);
                }
            }
            Kind::Ack | Kind::PullDone | Kind::Shm | Kind::Mcast => {}
        }
    }

    /// Sends the notify of a completed pull of region `rdma` (`size` bytes)
    /// to `peer`: it takes a sequence number and is kept for resend.
    fn send_notify(&mut self, cx: &Cx<'_>, peer: u16, rdma: u32, size: u64) {
        let sent = self.proto.send(peer, cx.now, rdma, size, 0, true, 1);
        self.outbox.push_back(Out::one_frame(peer, Kind::Notify, sent.seq, 0, size, rdma));
    }

    /// The notifies that waited for a send window go, in order, until one
    /// finds its peer's window still full.
    pub(super) fn submit_waiting_notifies(&mut self, cx: &mut Cx<'_>) {
        while let Some(&(peer, rdma, size)) = self.need_window.front() {
            if self.proto.window_full(peer, 1) {
                break;
            }
            self.need_window.pop_front();
            self.send_notify(cx, peer, rdma, size);
        }
    }

    /// The in-order message from `peer` is fully received: advance the
    /// sequence, ack if due, and release early messages that are now next.
    fn message_done(&mut self, cx: &mut Cx<'_>, peer: u16) {
        match self.proto.delivered(peer, cx.now) {
            AckPlan::AckNow => self.outbox.push_front(Out::Ack { peer }),
            AckPlan::ArmTimer(t) => self.arm_timer(cx, t),
            AckPlan::Pending => {}
        }
        if !self.early.is_empty() {
            // Events of the now-expected message go back to the ring's head,
            // in arrival order; stale copies (resent frames of messages now
            // complete) are dropped.
            let expected = self.proto.expected(peer);
            let n = self.early.release(peer, expected, &mut self.ring);
            if n > 0 {
                cx.emit(Output::Duplicates { n });
            }
        }
    }
}
