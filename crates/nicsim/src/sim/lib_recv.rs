//! The library's receive side: what consuming a ring event does. Acks
//! release sent messages; in-order messages are matched against posted
//! receives (or kept as unexpected); early ones wait; medium fragments are
//! reassembled; completed pulls notify the sender.
//!
//! This file owns the event -> request step. Pricing the consumption lives
//! in `lib_path`; the per-peer sequence state in `crate::proto::Peer`.

use super::{LKind, LibEvent, MediumRx, MediumTarget, Out, Unexpected, World};
use crate::proto::{Arrival, SentMsg};
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

/// Rebuilds a 32-bit sequence number from its 16 low bits on the wire,
/// choosing the value closest to `near`.
pub(super) fn widen(near: u32, low: u16) -> u32 {
    let base = near & !0xFFFF;
    let mut v = base | low as u32;
    if v > near.saturating_add(0x8000) && v >= 0x10000 {
        v -= 0x10000;
    } else if v.saturating_add(0x8000) < near {
        v += 0x10000;
    }
    v
}

impl World {
    pub(super) fn lib_consume(&mut self, now: Instant, h: usize, p: usize, ev: LibEvent) {
        let ack_after = self.c.ack_after;
        let pr = &mut self.hosts[h].procs[p];
        let peer = ev.peer as usize;
        if let Some(v) = ev.piggy {
            if ev.kind != LKind::PullDone {
                let ps = &mut pr.peers[peer];
                let upto = widen(ps.next_send, v as u16);
                ps.ack(upto);
            }
        }
        match ev.kind {
            LKind::Ack => return,
            LKind::Shm => {
                // Intra-host: no sequence numbers or acks (the copy is reliable).
                let reqs = &pr.reqs;
                let posted = take_first(&mut pr.posted, |&r| {
                    let q = &reqs[r as usize];
                    q.tag == ev.tag && q.src.is_none_or(|s| s == ev.peer)
                });
                match posted {
                    Some(r) => self.complete(h, p, r),
                    None => pr.unexpected.push_back(Unexpected { ev, frags_left: 0 }),
                }
                return;
            }
            LKind::PullDone => {
                // The pull finished: complete the receive, notify the sender.
                let req = ev.seq;
                let ps = &mut pr.peers[peer];
                let seq = ps.next_send;
                ps.next_send += 1;
                let m = SentMsg { seq, req: ev.rdma, sent_at: now, size: ev.size, tag: 0, is_notify: true, frames: 1 };
                ps.unacked_sends.push_back(m);
                ps.unacked_frames += 1;
                pr.outbox.push_back(Out::Msg {
                    peer: ev.peer,
                    kind: LKind::Notify,
                    seq,
                    tag: 0,
                    size: ev.size,
                    frag: 0,
                    frags: 1,
                    tail: true,
                    rdma: ev.rdma,
                });
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
        let seq = widen(pr.peers[peer].expected, ev.seq as u16);
        // A fragment of the medium message being received.
        if ev.kind == LKind::MediumFrag {
            if let Some(i) = pr.medium.iter().position(|m| m.peer == ev.peer && m.seq == seq) {
                {
                    let m = &mut pr.medium[i];
                    let bit = 1u32 << (ev.frag_seq as u32 % 32);
                    if m.seen & bit != 0 {
                        self.drops.duplicate += 1;
                        return;
                    }
                    m.seen |= bit;
                    m.stamps = (m.stamps.0.min(ev.irq_stamp), m.stamps.1.max(ev.irq_stamp));
                    let target = m.target;
                    let left = match target {
                        MediumTarget::Req(r) => {
                            let q = &mut pr.reqs[r as usize];
                            q.frags_left -= 1;
                            q.frags_left
                        }
                        MediumTarget::Unexpected => {
                            let u = pr.unexpected.iter_mut().rev().find(|u| u.ev.peer == ev.peer && u.ev.seq == ev.seq);
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
                        self.message_done(now, h, p, peer, ack_after);
                    }
                    return;
                }
            }
        }
        match pr.peers[peer].classify(seq) {
            Arrival::Duplicate => {
                // Already seen: the ack was lost, re-ack at once.
                self.drops.duplicate += 1;
                pr.outbox.push_back(Out::Ack { peer: ev.peer });
            }
            Arrival::Early => pr.early.push(LibEvent { seq, ..ev }),
            // The peer's previous message is still being reassembled.
            Arrival::InOrder if pr.medium.iter().any(|m| m.peer == ev.peer) => pr.early.push(LibEvent { seq, ..ev }),
            Arrival::InOrder => self.deliver(now, h, p, LibEvent { seq, ..ev }, ack_after),
        }
    }

    /// An in-order message (or first fragment) is matched.
    pub(super) fn deliver(&mut self, now: Instant, h: usize, p: usize, ev: LibEvent, ack_after: u32) {
        let peer = ev.peer as usize;
        let mtu = self.c.mtu;
        let pr = &mut self.hosts[h].procs[p];
        let reqs = &pr.reqs;
        let req = take_first(&mut pr.posted, |&r| {
            let q = &reqs[r as usize];
            q.tag == ev.tag && q.src.is_none_or(|s| s == ev.peer)
        });
        match ev.kind {
            LKind::Tiny | LKind::Small => {
                match req {
                    Some(r) => self.complete(h, p, r),
                    None => pr.unexpected.push_back(Unexpected { ev, frags_left: 0 }),
                }
                self.message_done(now, h, p, peer, ack_after);
            }
            LKind::MediumFrag => {
                let total = wire::medium_frag_count(ev.size as usize, mtu) as u32;
                let left = total - 1;
                let rx = |target| MediumRx {
                    peer: ev.peer,
                    seq: ev.seq,
                    target,
                    seen: 1u32 << (ev.frag_seq as u32 % 32),
                    stamps: (ev.irq_stamp, ev.irq_stamp),
                };
                if left == 0 {
                    self.medium_msgs += 1;
                    self.medium_one_irq += 1;
                }
                match req {
                    Some(r) if left == 0 => {
                        self.complete(h, p, r);
                        self.message_done(now, h, p, peer, ack_after);
                    }
                    Some(r) => {
                        pr.reqs[r as usize].frags_left = left;
                        pr.medium.push(rx(MediumTarget::Req(r)));
                    }
                    None => {
                        let seq16 = ev.seq as u16 as u32;
                        pr.unexpected.push_back(Unexpected { ev: LibEvent { seq: seq16, ..ev }, frags_left: left });
                        if left == 0 {
                            self.message_done(now, h, p, peer, ack_after);
                        } else {
                            pr.medium.push(rx(MediumTarget::Unexpected));
                        }
                    }
                }
            }
            LKind::Rndv => {
                match req {
                    Some(r) => self.start_pull(now, h, p, r, ev),
                    None => pr.unexpected.push_back(Unexpected { ev, frags_left: 0 }),
                }
                self.message_done(now, h, p, peer, ack_after);
            }
            LKind::Notify => {
                let slot = ev.rdma as usize;
                if let Some(r) = pr.regions.get_mut(slot).and_then(|r| r.take()) {
                    self.complete(h, p, r);
                }
                self.message_done(now, h, p, peer, ack_after);
            }
            LKind::Ack | LKind::PullDone | LKind::Shm => {}
        }
    }

    /// The in-order message from `peer` is fully received: advance the
    /// sequence, ack if due, and release early messages that are now next.
    pub(super) fn message_done(&mut self, now: Instant, h: usize, p: usize, peer: usize, ack_after: u32) {
        let pr = &mut self.hosts[h].procs[p];
        if pr.peers[peer].consumed(ack_after) {
            pr.outbox.push_front(Out::Ack { peer: peer as u16 });
            pr.peers[peer].ack_deadline = None;
        } else if pr.peers[peer].ack_deadline.is_none() {
            let t = now + self.c.delayed_ack;
            pr.peers[peer].ack_deadline = Some(t);
            Self::arm_timer(pr, &mut self.q, h, p, t);
        }
        if !pr.early.is_empty() {
            let expected = pr.peers[peer].expected;
            // Stale copies (resent frames of messages now complete) are dropped.
            let before = pr.early.len();
            pr.early.retain(|e| e.peer as usize != peer || e.seq >= expected);
            self.drops.duplicate += (before - pr.early.len()) as u64;
            // Events of the now-expected message go back to the ring's head, in arrival order.
            let mut i = pr.early.len();
            while i > 0 {
                i -= 1;
                let e = pr.early[i];
                if e.peer as usize == peer && e.seq == expected {
                    pr.early.remove(i);
                    pr.ring.push_front(LibEvent { seq: e.seq & 0xFFFF, ..e });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::widen;

    #[test]
    fn sequence_numbers_widen_around_wrap() {
        assert_eq!(widen(5, 5), 5);
        assert_eq!(widen(0x1_0002, 0xFFFF), 0xFFFF);
        assert_eq!(widen(0xFFFE, 0x0001), 0x1_0001);
        assert_eq!(widen(0, 3), 3);
    }
}
