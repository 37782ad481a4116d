//! \[LCI] The library's side of a multicast: posting one (its frames in
//! the outbox, handed to the process's NIC one by one, `Output::Mcast`)
//! and a receiver's reassembly of a multicast message's fragments.
//!
//! It does not own the firmware's forwarding down the tree (`crate::sim`'s
//! `mcast`, with `crate::nic::multicast`'s table) nor the workload that
//! multicasts (`crate::workload::bcast_ops`).

use super::indexes::{MediumRx, MediumTarget};
use super::process::{LibEvent, Out, Proc, Unexpected};
use super::Cx;
use crate::proto::Kind;
use crate::wire::SMALL_MAX;

impl Proc {
    /// The process posts a multicast of `size` bytes with `tag`
    /// (`Op::Mcast`, priced in `step` as a send of its class): a one-frame
    /// message is handed to the NIC at once, as a TINY or SMALL send; a
    /// larger one queues its MEDIUM fragments in the outbox, each handed
    /// over in its own segment (`send_cost`), as a medium send's.
    #[inline(never)]
    pub(super) fn mcast_post(&mut self, cx: &mut Cx<'_>, size: u64, tag: u64) {
        let req = self.new_req(true, size);
        let layout = cx.env.c.layout;
        self.drain = self.ring.len() as u32;
        let me = self.rank;
        if size as usize <= SMALL_MAX {
            self.outbox.push_back(Out::one_frame(me, Kind::Mcast, 0, tag, size, req));
            self.send(cx);
            return;
        }
        let frags = layout.medium_frag_count(size as usize) as u8;
        for frag in 0..frags {
            let tail = frag + 1 == frags;
            self.outbox.push_back(Out::Msg {
                peer: me,
                kind: Kind::Mcast,
                seq: 0,
                tag,
                size,
                frag,
                frags,
                tail,
                rdma: req,
            });
        }
    }

    /// The process consumes `ev`, a fragment of a multicast message of more
    /// than one frame (outside sequence numbers and acks, as the one-frame
    /// ones): the first to come is matched against the posted receives from
    /// the root (or kept as unexpected) and starts the reassembly, as a
    /// medium message's first fragment does; the last completes the
    /// receive. A duplicate is dropped.
    #[inline(never)]
    pub(super) fn mcast_frag(&mut self, cx: &mut Cx<'_>, ev: LibEvent) {
        let (root, m) = (ev.peer, ev.msg);
        let frags = cx.env.c.layout.medium_frag_count(m.size as usize) as u32;
        let bit = 1u32 << (m.frag_seq as u32 % 32);
        if let Some(rx) = self.mcast_rx.get_mut(root) {
            if rx.seen & bit != 0 {
                cx.emit(super::Output::Duplicates { n: 1 });
                return;
            }
            rx.seen |= bit;
            rx.left -= 1;
            if rx.left == 0 {
                let target = rx.target;
                self.mcast_rx.remove(root);
                if let MediumTarget::Req(r) = target {
                    self.complete(cx, r);
                }
            }
            return;
        }
        let id = self.mcast_ids;
        self.mcast_ids = id.wrapping_add(1);
        let posted = self.posted.take(Some(root), m.tag);
        debug_assert!(posted.is_none_or(|r| self.reqs[r as usize].size == m.size), "a receive of another size");
        let target = match posted {
            Some(r) if frags == 1 => return self.complete(cx, r),
            Some(r) => MediumTarget::Req(r),
            None => {
                self.unexpected.push(Some(root), m.tag, Unexpected { ev: ev.with_seq(id) });
                MediumTarget::Unexpected
            }
        };
        if frags > 1 {
            self.mcast_rx.insert(MediumRx { peer: root, seq: id, target, left: frags - 1, seen: bit, stamps: (0, 0) });
        }
    }

    /// Receive `req` takes `ev`, an unexpected multicast message: complete,
    /// unless it has fragments still to come, which then complete the
    /// receive.
    #[inline(never)]
    pub(super) fn mcast_matched(&mut self, cx: &mut Cx<'_>, req: u32, ev: LibEvent) {
        let reassembling = ev.msg.size as usize > SMALL_MAX;
        match self.mcast_rx.get_mut(ev.peer) {
            Some(rx) if reassembling && rx.seq == ev.msg.seq && rx.target == MediumTarget::Unexpected => {
                debug_assert_eq!(self.reqs[req as usize].size, ev.msg.size, "a receive of another size");
                rx.target = MediumTarget::Req(req)
            }
            _ => self.complete(cx, req),
        }
    }
}
