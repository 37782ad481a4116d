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
//! This module owns the tree shapes ([`Tree`], [`Kary`]), the table an NI
//! holds ([`ForwardTable`]: its children in any root's tree, computed from
//! the shape, so the table takes no memory that grows with the ranks), for
//! both stacks: the Open-MX NIC (`crate::nic::Nic::forwarding`) and the
//! LCI stack's NIs ([`NiMc`], a [`Tree::Kary`] of the study's fan-out,
//! with the receive and send buffers its forwards hold), and the tag ([`tag`], [`root_of`]: the top bit of the
//! Open-MX `session` word, the root's rank in its low 16 bits). It does
//! not own the timing of a forward (`crate::nic::Nic::firmware_forward`,
//! the LCI firmware's `fw_forward`), the frames (`crate::sim` `mcast`),
//! nor the library's view of a multicast message
//! (`crate::proto::Kind::Mcast`).

use crate::time::{Duration, Instant};
use std::collections::VecDeque;
use std::fmt;

/// The shape of every root's spanning tree over `n` ranks, by rank
/// relative to the root (`(rank - root) mod n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tree {
    /// Relative rank `i` has children `2i + 1` and `2i + 2`: the study's
    /// default ("by default, all implementations use binary trees", \[LCI]
    /// §4.2; `crate::lci::multicast::Tree` with fan-out 2).
    #[default]
    Binary,
    /// Relative rank `i` has children `i + 2^k` for every `2^k > i`: a
    /// binomial tree, the shape of MPICH's default broadcast, which the
    /// study replaced by binary trees to compare like with like (\[LCI] §4.3).
    Binomial,
    /// Relative rank `i` has one child, `i + 1`: a pipeline.
    Chain,
    /// Relative rank `i` has children `f * i + 1 ..= f * i + f` ([`Kary`]):
    /// the LCI stack's trees, of fan-out `nic.fanout`. Not a
    /// `workload.tree` name.
    #[serde(skip)]
    Kary(u32),
}

impl fmt::Display for Tree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tree::Binary => f.write_str("binary"),
            Tree::Binomial => f.write_str("binomial"),
            Tree::Chain => f.write_str("chain"),
            Tree::Kary(fanout) => write!(f, "{fanout}-ary"),
        }
    }
}

/// A `fanout`-ary spanning tree per root over `n` ranks: relative rank `i`
/// has children `fanout * i + 1 ..= fanout * i + fanout` (those below `n`).
/// [`Tree::Binary`] is the one of fan-out 2, [`Tree::Chain`] of fan-out 1;
/// the LCI stack's multicast (`crate::lci::multicast`) takes any fan-out
/// (`nic.fanout`, [`Tree::Kary`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kary {
    pub n: u32,
    pub fanout: u32,
}

impl Kary {
    fn rel(&self, root: u32, rank: u32) -> u32 {
        (rank + self.n - root) % self.n
    }

    /// The children of `rank` in `root`'s tree, in send order.
    pub fn children(&self, root: u32, rank: u32) -> Children {
        let (n, f) = (self.n as u64, self.fanout as u64);
        let first = f * self.rel(root, rank) as u64 + 1;
        Children { n, root: root as u64, next: first, end: (first + f).min(n), binomial_of: None }
    }

    /// Number of children of `rank` in `root`'s tree.
    pub fn child_count(&self, root: u32, rank: u32) -> u32 {
        self.children(root, rank).count() as u32
    }

    /// The parent of `rank` in `root`'s tree (`None` for the root).
    pub fn parent(&self, root: u32, rank: u32) -> Option<u32> {
        let r = self.rel(root, rank);
        (r > 0).then(|| ((r - 1) / self.fanout + root) % self.n)
    }
}

/// The children of a rank in a root's tree, in send order (relative
/// ranks `next`, then the following ones below `end`: consecutive, or, in a
/// binomial tree of relative rank `i`, each twice as far from `i`). No
/// allocation and no borrow: the firmware's table lookup on the hot path.
#[derive(Debug, Clone, Copy)]
pub struct Children {
    n: u64,
    root: u64,
    next: u64,
    end: u64,
    binomial_of: Option<u64>,
}

impl Iterator for Children {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.next >= self.end {
            return None;
        }
        let c = ((self.next + self.root) % self.n) as u32;
        self.next = match self.binomial_of {
            Some(i) => 2 * self.next - i,
            None => self.next + 1,
        };
        Some(c)
    }
}

/// The children of `rank` in `root`'s tree over `n` ranks, in send order.
pub fn children(tree: Tree, n: u32, root: u32, rank: u32) -> Children {
    debug_assert!(root < n && rank < n);
    match tree {
        Tree::Binary => Kary { n, fanout: 2 }.children(root, rank),
        Tree::Chain => Kary { n, fanout: 1 }.children(root, rank),
        Tree::Kary(fanout) => Kary { n, fanout }.children(root, rank),
        Tree::Binomial => {
            // The smallest power of two above i, then every larger one.
            let i = ((rank + n - root) % n) as u64;
            let first = i + (i + 1).next_power_of_two();
            Children { n: n as u64, root: root as u64, next: first, end: n as u64, binomial_of: Some(i) }
        }
    }
}

/// The parent of `rank` in `root`'s tree over `n` ranks (`None`: the root).
pub fn parent(tree: Tree, n: u32, root: u32, rank: u32) -> Option<u32> {
    let i = (rank + n - root) % n;
    if i == 0 {
        return None;
    }
    let p = match tree {
        Tree::Binary => return (Kary { n, fanout: 2 }).parent(root, rank),
        Tree::Chain => return (Kary { n, fanout: 1 }).parent(root, rank),
        Tree::Kary(fanout) => return (Kary { n, fanout }).parent(root, rank),
        // Clear the highest set bit.
        Tree::Binomial => i & !(1 << (31 - i.leading_zeros())),
    };
    Some((p + root) % n)
}

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
// several descriptors. When the firmware forwards, and who forwards what,
// is `crate::lci::multicast`'s. The Open-MX NIC's forwards copy the frame
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
/// while its copies leave. The LCI stack's `crate::lci::Packet`.
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
    /// The forwarding table (`ni` forwarding only).
    pub table: Option<ForwardTable>,
    /// This NI's rank in the table's trees (its host's index).
    pub rank: u32,
    /// Firmware per forward: table lookup + header rewrite + one network DMA set-up.
    pub fwd_cost: Duration,
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
    pub fwd_waits: u64,
    pub first_forward_at: Option<Instant>,
}

impl<P> Default for NiMc<P> {
    /// An NI that does not forward.
    fn default() -> Self {
        NiMc {
            table: None,
            rank: 0,
            fwd_cost: Duration::ZERO,
            fwd_queue: VecDeque::new(),
            fwd_busy: false,
            fwd_ready: false,
            holds: Vec::new(),
            tx_rel: VecDeque::new(),
            inflight_rel: VecDeque::new(),
            forwards: 0,
            fwd_waits: 0,
            first_forward_at: None,
        }
    }
}

impl<P: Forwarded> NiMc<P> {
    /// The state of NI `rank` with forwarding table `table` (`None`: the
    /// NI does not forward).
    pub fn new(table: Option<ForwardTable>, rank: u32) -> Self {
        NiMc { table, rank, ..NiMc::default() }
    }

    /// Queues the forwards of a received multicast packet to this NI's
    /// children and holds its receive buffer; returns the number of forwards.
    pub fn start_forward(&mut self, pkt: P) -> u32 {
        let (Some(t), Some(root)) = (self.table, pkt.root()) else { return 0 };
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
    use rstest::rstest;

    fn kids(tree: Tree, n: u32, root: u32, rank: u32) -> Vec<u32> {
        children(tree, n, root, rank).collect()
    }

    #[test]
    fn tree_shapes_as_the_study_and_mpich_draw_them() {
        assert_eq!(kids(Tree::Binary, 7, 0, 0), [1, 2]);
        assert_eq!(kids(Tree::Binary, 7, 0, 2), [5, 6]);
        assert_eq!(kids(Tree::Binary, 7, 0, 3), [] as [u32; 0]);
        assert_eq!(kids(Tree::Binomial, 8, 0, 0), [1, 2, 4]);
        assert_eq!(kids(Tree::Binomial, 8, 0, 1), [3, 5]);
        assert_eq!(kids(Tree::Binomial, 8, 0, 2), [6]);
        assert_eq!(kids(Tree::Binomial, 8, 0, 3), [7]);
        assert_eq!(kids(Tree::Chain, 4, 0, 1), [2]);
        assert_eq!(kids(Tree::Kary(3), 13, 0, 1), [4, 5, 6]);
        assert_eq!(kids(Tree::Kary(3), 13, 0, 3), [10, 11, 12]);
        assert_eq!(kids(Tree::Kary(3), 13, 0, 4), [] as [u32; 0]);
        // Relative to the root.
        assert_eq!(kids(Tree::Binary, 7, 5, 5), [6, 0]);
        assert_eq!(kids(Tree::Binomial, 8, 6, 7), [1, 3]);
        assert_eq!(Tree::Kary(3).to_string(), "3-ary");
    }

    /// Every rank but the root is the child of exactly its parent, so a
    /// multicast reaches every rank once.
    #[rstest]
    fn every_rank_is_reached_once(
        #[values(Tree::Binary, Tree::Binomial, Tree::Chain, Tree::Kary(3), Tree::Kary(20))] tree: Tree,
        #[values(1, 2, 5, 16, 33)] n: u32,
        #[values(0, 3)] root: u32,
    ) {
        let root = root % n;
        let mut seen = vec![0; n as usize];
        for r in 0..n {
            for c in kids(tree, n, root, r) {
                seen[c as usize] += 1;
                assert_eq!(parent(tree, n, root, c), Some(r), "{tree} n={n} root={root}");
            }
        }
        seen[root as usize] += 1;
        assert!(seen.iter().all(|&s| s == 1), "{tree} n={n} root={root}: {seen:?}");
        assert_eq!(parent(tree, n, root, root), None);
    }

    #[test]
    fn the_tag_carries_the_root() {
        assert_eq!(root_of(tag(7)), Some(7));
        assert_eq!(root_of(0), None);
        let t = ForwardTable { tree: Tree::Binomial, ranks: 1 << 16 };
        assert_eq!(t.children(0, 0).count(), 16, "one per power of two");
        assert_eq!(t.children(1, 0).count(), 0, "the last relative rank is a leaf");
    }
}
