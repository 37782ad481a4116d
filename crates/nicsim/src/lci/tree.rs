//! The spanning trees of the LCI multicast: which ranks a rank forwards a
//! sender's message to. This module owns the tree's arithmetic only; the
//! firmware and host forwarding that walk it are `super::multicast`'s, the
//! programs that multicast `super::apps`'.

/// A `fanout`-ary spanning tree per sender over `n` ranks: rank `r` has
/// relative rank `(r - root) mod n`; relative rank `i` has children
/// `fanout * i + 1 ..= fanout * i + fanout` (those below `n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tree {
    pub n: u32,
    pub fanout: u32,
}

impl Tree {
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
