//! \[LCI] NI-level multicast forwarding in the world: the firmware of a NIC
//! with a forwarding table sends a multicast frame on to its children in
//! the root's tree, from its receive buffer, without the host.
//!
//! This module owns the copies: a frame tagged multicast (the `session`
//! word, `crate::nic::multicast::tag`) that reaches a NIC with a table is
//! delivered to its host as any frame (`nic_path`) and, besides, copied to
//! each child by the firmware (`Nic::firmware_forward` prices each copy:
//! no DMA, the data stay in NIC memory); the root's library hands each
//! frame of the message to its own NIC (`mcast_send`), whose
//! firmware sends it to the root's children the same way. A message of
//! one frame is a TINY or SMALL frame; a larger one (up to the rendezvous
//! threshold) MEDIUM fragments, each forwarded on its own as it comes
//! (\[LCI] §4.1: "forwarding begins as soon as the first packet of a
//! multipacket message has been received"; §4.2: the NI forwards each
//! multicast packet it receives). A copy keeps the message's
//! source (the root's host and endpoint, so every receiver sees the
//! message from the root) and is addressed to the child's endpoint; on
//! the wire it leaves from the forwarding host. It does not own the tree
//! or the table (`crate::nic::multicast`), the library's side (posting a
//! multicast, a receiver's reassembly of its fragments:
//! `crate::library`'s `mcast`, `crate::proto::Kind::Mcast`), nor the
//! workload that multicasts (`crate::workload::bcast_ops`).

use super::{Ev, World, NO_RANK};
use crate::nic::multicast::root_of;
use crate::proto::{Kind, Msg};
use crate::time::Instant;
use crate::wire::{host_mac, FrameRepr, OmxBody, SMALL_MAX};

/// `body` addressed to endpoint `ep`, if it is a multicast frame (a TINY
/// or SMALL one, or a MEDIUM fragment, carrying the tag): its root's rank
/// and the copy's body.
fn retarget(body: &OmxBody, ep: u8) -> Option<(u16, OmxBody)> {
    let mut copy = *body;
    let (OmxBody::Tiny { dst_ep, session, .. }
    | OmxBody::Small { dst_ep, session, .. }
    | OmxBody::Medium { dst_ep, session, .. }) = &mut copy
    else {
        return None;
    };
    let root = root_of(*session)?;
    *dst_ep = ep;
    Some((root, copy))
}

impl World {
    /// The firmware of host `h`'s NIC, which has a forwarding table, got
    /// `repr` (from host `src`) at `now`: a multicast frame is copied to
    /// the children of the rank it is addressed to, in its root's tree, one
    /// copy after another; any other frame is left alone. Returns when the
    /// last copy left the NIC (`None`: no copy). Out of line: only NICs
    /// with a table call it.
    #[inline(never)]
    pub(super) fn nic_forward(&mut self, now: Instant, h: usize, src: u16, repr: &FrameRepr) -> Option<Instant> {
        let table = self.hosts[h].nic.forwarding?;
        let (root, _) = retarget(&repr.body, 0)?;
        let me = self.env.ranks.at(h, repr.body.dst_endpoint() as usize);
        if me == NO_RANK {
            return None;
        }
        let mut last = None;
        for c in table.children(root as u32, me as u32) {
            let (ch, ep) = self.env.ranks[c as usize];
            let (_, body) = retarget(&repr.body, ep)?;
            let copy = FrameRepr { dst_mac: host_mac(ch), src_mac: host_mac(h as u16), body, ..*repr };
            let ready = self.hosts[h].nic.firmware_forward(now);
            let id = self.new_frame(src, ch, &copy);
            last = Some(self.wire_out(h, ready, id).end);
        }
        last
    }

    /// Endpoint `ep` (rank `me`) of host `h` multicasts frame `frag` of
    /// `frags` of a `size`-byte message with `tag` (its library's send,
    /// `crate::library::Output::Mcast`): the driver
    /// hands the frame to the NIC (its DMA read), whose firmware sends a
    /// copy to each of the root's children; the send buffer is reaped when
    /// the last one left. The last frame carries the marker.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mcast_send(
        &mut self,
        now: Instant,
        h: usize,
        ep: u8,
        me: u16,
        tag: u64,
        size: u64,
        frag: u8,
        frags: u8,
    ) {
        let frag_len =
            if size as usize > SMALL_MAX { self.env.c.layout.medium_frag_len(size as usize, frag as usize) } else { 0 };
        let m = Msg { tag, size, rdma: me as u32, frag_seq: frag, frag_len: frag_len as u32, ..Msg::new(Kind::Mcast) };
        let body = m.emit(ep, ep);
        let marked = self.env.c.marked.marks(body.kind(), frag + 1 == frags);
        let repr =
            FrameRepr { dst_mac: host_mac(h as u16), src_mac: host_mac(h as u16), src_peer: h as u16, marked, body };
        let bytes = repr.frame_len() as u32;
        let ready = self.hosts[h].nic.transmit(now, repr.frame_len());
        let done = self.nic_forward(ready, h, h as u16, &repr).unwrap_or(ready);
        if self.env.c.tx_done_irq && !self.env.c.native {
            let q = self.hosts[h].steering.queue_for(Some(ep), 0) as u8;
            let (dtor, ep) = (crate::kernel::TxDtor::None, 0);
            self.q.push(
                done,
                h as u32,
                Ev::TxDone { host: h as u16, q, dtor, ep, bytes: super::frame::wire_bytes(bytes) },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::multicast::tag;

    #[test]
    fn a_copy_keeps_the_root_and_takes_the_childs_endpoint() {
        let m = Msg { tag: 600, size: 64, rdma: 3, ..Msg::new(Kind::Mcast) };
        let body = m.emit(0, 2);
        assert!(matches!(body, OmxBody::Small { session, seq: 0, .. } if session == tag(3)));
        assert_eq!(Msg::parse(&body), Some(m), "a multicast frame has no sequence number or ack");
        let (root, copy) = retarget(&body, 5).unwrap();
        assert_eq!((root, copy.dst_endpoint(), copy.src_endpoint()), (3, 5, Some(2)));
        // A point-to-point frame is not forwarded.
        let p2p = Msg { size: 8, ..Msg::new(Kind::Tiny) }.emit(0, 2);
        assert!(retarget(&p2p, 5).is_none());
        assert!(matches!(Msg { size: 8, ..m }.emit(0, 2), OmxBody::Tiny { .. }));
    }
}
