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
//! LCI stack's NIs (`crate::lci::ni_mc::NiMc`, a [`Tree::Kary`] of the
//! study's fan-out), and the tag ([`tag`], [`root_of`]: the top bit of the
//! Open-MX `session` word, the root's rank in its low 16 bits). It does
//! not own the timing of a forward (`crate::nic::Nic::firmware_forward`,
//! the LCI firmware's `fw_forward`), the frames (`crate::sim` `mcast`),
//! nor the library's view of a multicast message
//! (`crate::proto::Kind::Mcast`).

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
