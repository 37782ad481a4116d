//! The library's receive side: what consuming a ring event does. Acks
//! release sent messages; in-order messages are matched against posted
//! receives (or kept as unexpected); early ones wait; medium fragments are
//! reassembled; completed pulls notify the sender.
//!
//! This file owns the event -> request step. Pricing the consumption lives
//! in `lib_path`; sequence numbers and acks are `crate::proto::Endpoint`'s
//! transitions, which this file applies.

use super::{LibEvent, MediumRx, MediumTarget, Out, Unexpected, World};
use crate::proto::{AckPlan, Arrival, Kind};
use crate::time::Instant;
use crate::wire;
use std::collections::VecDeque;

/// Removes and returns the first element of `dq` that satisfies `pred`.
/// The front is tried first: it is the usual match (receives are posted,
/// and messages arrive, in order), and it spares setting up an iterator.
pub(super) fn take_first<T>(dq: &mut VecDeque<T>, mut pred: impl FnMut(&T) -> bool) -> Option<T> {
    if pred(dq.front()?) {
        return dq.pop_front();
    }
    let i = dq.iter().position(pred)?;
    dq.remove(i)
}

impl World {
    pub(super) fn lib_consume(&mut self, now: Instant, h: usize, p: usize, ev: LibEvent) {
        let pr = &mut self.hosts[h].procs[p];
        let m = ev.msg;
        if let Some(v) = m.piggy {
            if m.kind != Kind::PullDone
                && pr.proto.process_ack(ev.peer, v as u16) > 0
                && !(pr.need_region.is_empty() && pr.need_window.is_empty())
            {
                // The ack opened the peer's send window.
                self.submit_waiting_sends(now, h, p);
            }
        }
        let pr = &mut self.hosts[h].procs[p];
        match m.kind {
            Kind::Ack => return,
            Kind::Shm => {
                // Intra-host: no sequence numbers or acks (the copy is reliable).
                let reqs = &pr.reqs;
                let posted = take_first(&mut pr.posted, |&r| {
                    let q = &reqs[r as usize];
                    q.tag == m.tag && q.src.is_none_or(|s| s == ev.peer)
                });
                match posted {
                    Some(r) => self.complete(h, p, r),
                    None => pr.unexpected.push_back(Unexpected { ev, frags_left: 0 }),
                }
                return;
            }
            Kind::PullDone => {
                // The pull finished: complete the receive, notify the sender
                // (once its send window has room, behind the notifies that
                // wait for one).
                let req = m.seq;
                if pr.need_window.is_empty() && !pr.proto.window_full(ev.peer, 1) {
                    Self::send_notify(now, pr, ev.peer, m.rdma, m.size);
                } else {
                    pr.need_window.push_back((ev.peer, m.rdma, m.size));
                }
                self.complete(h, p, req);
                let pr = &mut self.hosts[h].procs[p];
                pr.pulls_active -= 1;
                if let Some(next) = pr.pulls_waiting.pop_front() {
                    pr.pulls_active += 1;
                    pr.outbox.push_back(Out::PullStart { handle: next });
                }
                return;
            }
            _ => {}
        }
        let (seq, arrival) = pr.proto.arrival(ev.peer, m.seq as u16);
        // A fragment of the medium message being received.
        if m.kind == Kind::MediumFrag {
            if let Some(i) = pr.medium.iter().position(|rx| rx.peer == ev.peer && rx.seq == seq) {
                {
                    let rx = &mut pr.medium[i];
                    let bit = 1u32 << (m.frag_seq as u32 % 32);
                    if rx.seen & bit != 0 {
                        self.drops.duplicate += 1;
                        return;
                    }
                    rx.seen |= bit;
                    rx.stamps = (rx.stamps.0.min(ev.irq_stamp), rx.stamps.1.max(ev.irq_stamp));
                    let target = rx.target;
                    let left = match target {
                        MediumTarget::Req(r) => {
                            let q = &mut pr.reqs[r as usize];
                            q.frags_left -= 1;
                            q.frags_left
                        }
                        MediumTarget::Unexpected => {
                            let u =
                                pr.unexpected.iter_mut().rev().find(|u| u.ev.peer == ev.peer && u.ev.msg.seq == m.seq);
                            match u {
                                Some(u) => {
                                    u.frags_left -= 1;
                                    u.frags_left
                                }
                                None => 0,
                            }
                        }
                    };
                    if left == 0 {
                        let (lo, hi) = pr.medium.swap_remove(i).stamps;
                        self.medium_msgs += 1;
                        self.medium_one_irq += (lo == hi) as u64;
                        if let MediumTarget::Req(r) = target {
                            self.complete(h, p, r);
                        }
                        self.message_done(now, h, p, ev.peer);
                    }
                    return;
                }
            }
        }
        match arrival {
            Arrival::Duplicate => {
                // Already seen: the ack was lost, re-ack at once.
                self.drops.duplicate += 1;
                pr.outbox.push_back(Out::Ack { peer: ev.peer });
            }
            Arrival::Early => pr.early.push(ev.with_seq(seq)),
            // The peer's previous message is still being reassembled.
            Arrival::InOrder if pr.medium.iter().any(|rx| rx.peer == ev.peer) => pr.early.push(ev.with_seq(seq)),
            Arrival::InOrder => self.deliver(now, h, p, ev.with_seq(seq)),
        }
    }

    /// An in-order message (or first fragment) is matched.
    pub(super) fn deliver(&mut self, now: Instant, h: usize, p: usize, ev: LibEvent) {
        let (peer, m) = (ev.peer, ev.msg);
        let mtu = self.c.mtu;
        let pr = &mut self.hosts[h].procs[p];
        let reqs = &pr.reqs;
        let req = take_first(&mut pr.posted, |&r| {
            let q = &reqs[r as usize];
            q.tag == m.tag && q.src.is_none_or(|s| s == peer)
        });
        match m.kind {
            Kind::Tiny | Kind::Small => {
                match req {
                    Some(r) => self.complete(h, p, r),
                    None => pr.unexpected.push_back(Unexpected { ev, frags_left: 0 }),
                }
                self.message_done(now, h, p, peer);
            }
            Kind::MediumFrag => {
                let total = wire::medium_frag_count(m.size as usize, mtu) as u32;
                let left = total - 1;
                let rx = |target| MediumRx {
                    peer,
                    seq: m.seq,
                    target,
                    seen: 1u32 << (m.frag_seq as u32 % 32),
                    stamps: (ev.irq_stamp, ev.irq_stamp),
                };
                if left == 0 {
                    self.medium_msgs += 1;
                    self.medium_one_irq += 1;
                }
                match req {
                    Some(r) if left == 0 => {
                        self.complete(h, p, r);
                        self.message_done(now, h, p, peer);
                    }
                    Some(r) => {
                        pr.reqs[r as usize].frags_left = left;
                        pr.medium.push(rx(MediumTarget::Req(r)));
                    }
                    None => {
                        let seq16 = m.seq as u16 as u32;
                        pr.unexpected.push_back(Unexpected { ev: ev.with_seq(seq16), frags_left: left });
                        if left == 0 {
                            self.message_done(now, h, p, peer);
                        } else {
                            pr.medium.push(rx(MediumTarget::Unexpected));
                        }
                    }
                }
            }
            Kind::Rndv => {
                match req {
                    Some(r) => self.start_pull(now, h, p, r, ev),
                    None => pr.unexpected.push_back(Unexpected { ev, frags_left: 0 }),
                }
                self.message_done(now, h, p, peer);
            }
            Kind::Notify => {
                let slot = m.rdma as usize;
                if let Some(r) = pr.regions.get_mut(slot).and_then(|r| r.take()) {
                    self.complete(h, p, r);
                }
                self.message_done(now, h, p, peer);
                if !self.hosts[h].procs[p].need_region.is_empty() {
                    self.submit_waiting_sends(now, h, p);
                }
            }
            Kind::Ack | Kind::PullDone | Kind::Shm => {}
        }
    }

    /// Sends the notify of a completed pull of region `rdma` (`size` bytes)
    /// to `peer`: it takes a sequence number and is kept for resend.
    fn send_notify(now: Instant, pr: &mut super::Proc, peer: u16, rdma: u32, size: u64) {
        let sent = pr.proto.send(peer, now, rdma, size, 0, true, 1);
        pr.outbox.push_back(Out::Msg {
            peer,
            kind: Kind::Notify,
            seq: sent.seq,
            tag: 0,
            size,
            frag: 0,
            frags: 1,
            tail: true,
            rdma,
        });
    }

    /// The notifies that waited for a send window go, in order, until one
    /// finds its peer's window still full.
    pub(super) fn submit_waiting_notifies(&mut self, now: Instant, h: usize, p: usize) {
        let pr = &mut self.hosts[h].procs[p];
        while let Some(&(peer, rdma, size)) = pr.need_window.front() {
            if pr.proto.window_full(peer, 1) {
                break;
            }
            pr.need_window.pop_front();
            Self::send_notify(now, pr, peer, rdma, size);
        }
    }

    /// The in-order message from `peer` is fully received: advance the
    /// sequence, ack if due, and release early messages that are now next.
    pub(super) fn message_done(&mut self, now: Instant, h: usize, p: usize, peer: u16) {
        let pr = &mut self.hosts[h].procs[p];
        match pr.proto.delivered(peer, now) {
            AckPlan::AckNow => pr.outbox.push_front(Out::Ack { peer }),
            AckPlan::ArmTimer(t) => Self::arm_timer(pr, &mut self.q, h, p, t),
            AckPlan::Pending => {}
        }
        if !pr.early.is_empty() {
            let expected = pr.proto.expected(peer);
            // Stale copies (resent frames of messages now complete) are dropped.
            let before = pr.early.len();
            pr.early.retain(|e| e.peer != peer || e.msg.seq >= expected);
            self.drops.duplicate += (before - pr.early.len()) as u64;
            // Events of the now-expected message go back to the ring's head, in arrival order.
            let mut i = pr.early.len();
            while i > 0 {
                i -= 1;
                let e = pr.early[i];
                if e.peer == peer && e.msg.seq == expected {
                    pr.early.remove(i);
                    pr.ring.push_front(e.with_seq(e.msg.seq & 0xFFFF));
                }
            }
        }
    }
}
