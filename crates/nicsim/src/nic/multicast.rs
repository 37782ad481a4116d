//! NI-level multicast forwarding (\[LCI] §4.2) in the NIC firmware: the
//! forwarding table, the spanning trees it describes, and the multicast
//! tag a frame carries.
//!
//! \[LCI] §4.2: host-level forwarding makes "an unnecessary host-to-NI data
//! transfer at each internal tree node", delays a whole subtree when one
//! host does not poll in time, and puts every intermediate host's
//! receive, processing and re-injection on the critical path. With NI-level
//! forwarding the NI "recognizes" the multicast tag, "looks up the
//! packet's forwarding destinations in a table stored in NI memory" (one
//! tree per sender) and "transmits the packet from its NI receive buffer to
//! all forwarding destinations without making any internal data copies",
//! then (in parallel) DMAs it to its host. A generalisation of the \[EMO]
//! echo firmware (`crate::sim` `echo`): the echo sends a received frame
//! back to its sender; the forwarding firmware sends it on to the next
//! hosts of a tree, and delivers it too.
//!
//! This module owns the table an NI holds ([`ForwardTable`]: its children
//! in any root's tree, computed from the shape, `crate::tree`, so the table
//! takes no memory that grows with the ranks), for
//! both stacks: the Open-MX NIC (`crate::nic::Nic::forwarding`) and the
//! LCI stack's NIs ([`NiMc`], a [`Tree::Kary`] of the study's fan-out,
//! with the receive and send buffers its forwards hold), and the tag ([`tag`], [`root_of`]: the top bit of the
//! Open-MX `session` word, the root's rank in its low 16 bits). It does
//! not own the timing of a forward (`crate::nic::Nic::firmware_forward`,
//! the LANai firmware's `crate::nic::Nic::lanai_fwd_kick`), the frames (`crate::sim` `mcast`),
//! nor the library's view of a multicast message
//! (`crate::proto::Kind::Mcast`).

use crate::time::Instant;
use std::collections::VecDeque;

pub use crate::tree::{children, parent, Children, Kary, Tree};

/// The forwarding table in an NI's memory: the tree shape over the run's
/// ranks. The firmware answers "this rank's children in that root's tree"
/// from it; computed, as a table of every root's rows would take
/// ranks x children words on each NI. The Open-MX NIC's (`workload.tree`
/// over the bcast's ranks) and the LCI stack's NIs' ([`Tree::Kary`] of
/// `nic.fanout` over the hosts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardTable {
    pub tree: Tree,
    pub ranks: u32,
}

impl ForwardTable {
    /// The children of `rank` in `root`'s tree (see [`children`]).
    #[inline]
    pub fn children(&self, root: u32, rank: u32) -> Children {
        children(self.tree, self.ranks, root, rank)
    }
}

/// The bit of the Open-MX `session` word that tags a multicast frame (the
/// model's session ids are otherwise 0, `crate::proto::Msg::emit`).
pub const TAG_BIT: u32 = 1 << 31;

/// The `session` word of a multicast frame from `root`.
pub const fn tag(root: u16) -> u32 {
    TAG_BIT | root as u32
}

/// The root of a multicast frame whose `session` word is `session`, or
/// `None` for a point-to-point frame.
#[inline]
pub const fn root_of(session: u32) -> Option<u16> {
    if session & TAG_BIT != 0 {
        Some(session as u16)
    } else {
        None
    }
}

// -- A forwarding NI's buffers (the \[LCI] stack's LANai) ----------------------
//
// The LCI NI's multicast state in NI memory: its forwarding table and rank,
// the queue of forwards transmitted from a receive buffer, the receive
// buffers held until every forward left, and the send buffers shared by
// several descriptors. When the firmware forwards is the LANai firmware's
// (`super::lanai`), who forwards what `crate::lci::multicast`'s. The Open-MX NIC's forwards copy the frame
// in NIC memory and hold no buffer (`crate::sim` `mcast`).

/// A received multicast packet whose receive buffer is held by forwards.
#[derive(Debug, Clone, Copy)]
struct Hold {
    key: (u32, u32, u32),
    forwards_left: u32,
    delivered: bool,
}

/// A packet a forwarding NI copies to its children: the tree it travels,
/// the copy to one child, and the key of the receive buffer that holds it
/// while its copies leave. The LANai firmware's `super::lanai::Packet`.
pub trait Forwarded: Copy {
    /// The root of the tree it travels (`None`: point to point).
    fn root(&self) -> Option<u32>;
    /// The copy addressed to `child`.
    fn to_child(&self, child: u32) -> Self;
    /// Which buffer holds it: (source, message, fragment).
    fn hold_key(&self) -> (u32, u32, u32);
}

/// The NI's multicast state, over its packet type `P`.
#[derive(Debug)]
pub struct NiMc<P> {
    /// This NI's rank in the table's trees (its host's index).
    pub rank: u32,
    /// Forwards (packet with `dst` = child) waiting for the firmware / the child's buffer.
    pub fwd_queue: VecDeque<P>,
    /// The firmware is programming, or has programmed, the head forward.
    pub fwd_busy: bool,
    /// The head forward is programmed and waits only for a buffer at the child.
    pub fwd_ready: bool,
    holds: Vec<Hold>,
    /// Per descriptor in `tx_queue`: whether its transmission releases the send buffer
    /// (false for all but the last descriptor sharing one buffer).
    pub tx_rel: VecDeque<bool>,
    /// The same for descriptors on the wire, in transmission order.
    pub inflight_rel: VecDeque<bool>,
    /// Counters.
    pub forwards: u64,
    pub first_forward_at: Option<Instant>,
}

impl<P> Default for NiMc<P> {
    /// An NI that does not forward.
    fn default() -> Self {
        NiMc {
            rank: 0,
            fwd_queue: VecDeque::new(),
            fwd_busy: false,
            fwd_ready: false,
            holds: Vec::new(),
            tx_rel: VecDeque::new(),
            inflight_rel: VecDeque::new(),
            forwards: 0,
            first_forward_at: None,
        }
    }
}

impl<P: Forwarded> NiMc<P> {
    /// The state of NI `rank`.
    pub fn new(rank: u32) -> Self {
        NiMc { rank, ..NiMc::default() }
    }

    /// Queues the forwards of a received multicast packet to this NI's
    /// children in its NIC's forwarding table (`table`, the NIC's
    /// `forwarding`; `None`: the NIC does not forward) and holds its
    /// receive buffer; returns the number of forwards.
    pub fn start_forward(&mut self, pkt: P, table: Option<ForwardTable>) -> u32 {
        let (Some(t), Some(root)) = (table, pkt.root()) else { return 0 };
        let before = self.fwd_queue.len();
        for c in t.children(root, self.rank) {
            self.fwd_queue.push_back(pkt.to_child(c));
        }
        let k = (self.fwd_queue.len() - before) as u32;
        if k > 0 {
            self.holds.push(Hold { key: pkt.hold_key(), forwards_left: k, delivered: false });
        }
        k
    }

    /// The host DMA of `pkt` completed: whether its receive buffer is free now.
    pub fn release_on_delivery(&mut self, pkt: &P) -> bool {
        match self.holds.iter_mut().find(|h| h.key == pkt.hold_key()) {
            Some(h) => {
                h.delivered = true;
                false
            }
            None => true,
        }
    }

    /// A forward of `pkt` left: whether its receive buffer is free now.
    pub fn release_on_forward(&mut self, pkt: &P) -> bool {
        let i = self.holds.iter().position(|h| h.key == pkt.hold_key()).expect("forward without a held buffer");
        self.holds[i].forwards_left -= 1;
        if self.holds[i].forwards_left > 0 {
            return false;
        }
        let h = self.holds.swap_remove(i);
        h.delivered
    }

    /// Receive buffers held by forwards.
    pub fn held(&self) -> usize {
        self.holds.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_carries_the_root() {
        assert_eq!(root_of(tag(7)), Some(7));
        assert_eq!(root_of(0), None);
        let t = ForwardTable { tree: Tree::Binomial, ranks: 1 << 16 };
        assert_eq!(t.children(0, 0).count(), 16, "one per power of two");
        assert_eq!(t.children(1, 0).count(), 0, "the last relative rank is a leaf");
    }
}
