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
//! This module owns the tree shapes ([`Tree`]), the table a NIC holds
//! ([`ForwardTable`]: its children in any root's tree, computed from the
//! shape, so the table takes no memory that grows with the ranks) and the
//! tag ([`tag`], [`root_of`]: the top bit of the Open-MX `session` word,
//! the root's rank in its low 16 bits). It does not own the timing of a
//! forward (`crate::nic::Nic::firmware_forward`), the frames (`crate::sim`
//! `mcast`), nor the library's view of a multicast message
//! (`crate::proto::Kind::Mcast`).

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
}

impl fmt::Display for Tree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tree::Binary => "binary",
            Tree::Binomial => "binomial",
            Tree::Chain => "chain",
        })
    }
}

/// A `fanout`-ary spanning tree per root over `n` ranks: relative rank `i`
/// has children `fanout * i + 1 ..= fanout * i + fanout` (those below `n`).
/// [`Tree::Binary`] is the one of fan-out 2; the \[LCI] world's multicast
/// (`crate::lci::multicast`) takes any fan-out (`nic.fanout`).
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
    pub fn children(&self, root: u32, rank: u32) -> impl Iterator<Item = u32> {
        let (n, f) = (self.n as u64, self.fanout as u64);
        let first = f * self.rel(root, rank) as u64 + 1;
        let root = root as u64;
        (first..(first + f).min(n)).map(move |c| ((c + root) % n) as u32)
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

/// Children a relative rank has at most in a tree over at most 2^16 ranks
/// (binomial: one per power of two).
pub const MAX_CHILDREN: usize = 16;

/// The children of `rank` in `root`'s tree over `n` ranks, in send order,
/// written to `out`; returns how many. No allocation: the firmware's table
/// lookup on the hot path.
pub fn children(tree: Tree, n: u32, root: u32, rank: u32, out: &mut [u32; MAX_CHILDREN]) -> usize {
    debug_assert!(root < n && rank < n);
    let i = (rank + n - root) % n;
    let abs = |rel: u32| (rel + root) % n;
    let mut k = 0;
    match tree {
        Tree::Binary => {
            for c in (Kary { n, fanout: 2 }).children(root, rank) {
                out[k] = c;
                k += 1;
            }
        }
        Tree::Binomial => {
            // The smallest power of two above i, then every larger one.
            let mut step = (i as u64 + 1).next_power_of_two();
            while i as u64 + step < n as u64 {
                out[k] = abs(i + step as u32);
                k += 1;
                step *= 2;
            }
        }
        Tree::Chain => {
            if i + 1 < n {
                out[0] = abs(i + 1);
                k = 1;
            }
        }
    }
    k
}

/// The parent of `rank` in `root`'s tree over `n` ranks (`None`: the root).
pub fn parent(tree: Tree, n: u32, root: u32, rank: u32) -> Option<u32> {
    let i = (rank + n - root) % n;
    if i == 0 {
        return None;
    }
    let p = match tree {
        Tree::Binary => return (Kary { n, fanout: 2 }).parent(root, rank),
        // Clear the highest set bit.
        Tree::Binomial => i & !(1 << (31 - i.leading_zeros())),
        Tree::Chain => i - 1,
    };
    Some((p + root) % n)
}

/// The forwarding table in a NIC's memory: the tree shape over the run's
/// ranks. The firmware answers "this rank's children in that root's tree"
/// from it; computed, as a table of every root's rows would take
/// ranks x children words on each NIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardTable {
    pub tree: Tree,
    pub ranks: u32,
}

impl ForwardTable {
    /// The children of `rank` in `root`'s tree (see [`children`]).
    #[inline]
    pub fn children(&self, root: u32, rank: u32, out: &mut [u32; MAX_CHILDREN]) -> usize {
        children(self.tree, self.ranks, root, rank, out)
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
    use rstest::rstest;

    fn kids(tree: Tree, n: u32, root: u32, rank: u32) -> Vec<u32> {
        let mut out = [0; MAX_CHILDREN];
        let k = children(tree, n, root, rank, &mut out);
        out[..k].to_vec()
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
        // Relative to the root.
        assert_eq!(kids(Tree::Binary, 7, 5, 5), [6, 0]);
    }

    /// Every rank but the root is the child of exactly its parent, so a
    /// multicast reaches every rank once.
    #[rstest]
    fn every_rank_is_reached_once(
        #[values(Tree::Binary, Tree::Binomial, Tree::Chain)] tree: Tree,
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
        let mut out = [0; MAX_CHILDREN];
        assert_eq!(t.children(0, 0, &mut out), 16, "the most children fit");
    }
}
