//! The shapes of the spanning trees a multicast follows over `n` ranks
//! ([`Tree`]: binary, binomial, chain, or `fanout`-ary, [`Kary`]) and the
//! children and parent of a rank in a root's tree ([`children`], [`parent`]),
//! computed from the shape, with no allocation.
//!
//! A value type with its arithmetic, below everything that names a tree:
//! the scenario's `workload.tree` key (`crate::config`), the broadcast
//! programs (`crate::workload`), the NIC's forwarding table
//! (`crate::nic::multicast::ForwardTable`) and the LCI stack's NIs. It owns
//! no state and no timing.

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
}
