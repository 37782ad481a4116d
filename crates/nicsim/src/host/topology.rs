//! Host topology: sockets -> dies (one shared L2 each) -> cores.

use crate::config::{Relation, TopologyCfg};

/// A core (host-wide index) and its die: the cache model's place of an
/// access (the die's shared L2, the core's own L1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cpu {
    pub core: u16,
    pub die: u16,
}

/// Core numbering: core `c` is on die `c / cores_per_die`, die `d` on socket
/// `d / dies_per_socket`.
#[derive(Clone, Debug)]
pub struct Topology {
    pub sockets: u16,
    pub dies_per_socket: u16,
    pub cores_per_die: u16,
    /// `die_of` for each core, precomputed: the simulator asks it several
    /// times per event and a 16-bit division is slow.
    core_die: Vec<u16>,
    /// `socket_of_die` for each die, precomputed likewise.
    die_socket: Vec<u16>,
}

impl Topology {
    pub fn new(t: &TopologyCfg) -> Self {
        Self::with_shape(t.sockets as u16, t.dies_per_socket as u16, t.cores_per_die as u16)
    }
    pub fn with_shape(sockets: u16, dies_per_socket: u16, cores_per_die: u16) -> Self {
        let cores = sockets * dies_per_socket * cores_per_die;
        let core_die = (0..cores).map(|c| c / cores_per_die).collect();
        let die_socket = (0..sockets * dies_per_socket).map(|d| d / dies_per_socket).collect();
        Topology { sockets, dies_per_socket, cores_per_die, core_die, die_socket }
    }
    pub fn dies(&self) -> u16 {
        self.sockets * self.dies_per_socket
    }
    pub fn cores(&self) -> u16 {
        self.sockets * self.dies_per_socket * self.cores_per_die
    }
    /// Core `core` with its die: where the cache model places an access.
    #[inline]
    pub fn cpu(&self, core: u16) -> Cpu {
        Cpu { core, die: self.die_of(core) }
    }
    pub fn die_of(&self, core: u16) -> u16 {
        match self.core_die.get(core as usize) {
            Some(&d) => d,
            None => core / self.cores_per_die,
        }
    }
    pub fn socket_of_die(&self, die: u16) -> u16 {
        match self.die_socket.get(die as usize) {
            Some(&s) => s,
            None => die / self.dies_per_socket,
        }
    }
    pub fn die_relation(&self, a: u16, b: u16) -> Relation {
        if a == b {
            Relation::SameDie
        } else if self.socket_of_die(a) == self.socket_of_die(b) {
            Relation::SameSocket
        } else {
            Relation::OtherSocket
        }
    }
    /// [`Topology::die_relation`] as a number (`Relation as usize`): 0 (same die), 1 (same
    /// socket) or 2 (other socket), computed without a branch.
    #[inline(always)]
    pub fn die_distance(&self, a: u16, b: u16) -> usize {
        (a != b) as usize + (self.socket_of_die(a) != self.socket_of_die(b)) as usize
    }
    pub fn core_relation(&self, a: u16, b: u16) -> Relation {
        self.die_relation(self.die_of(a), self.die_of(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clovertown_relations() {
        let t = Topology::with_shape(2, 2, 2);
        assert_eq!(t.cores(), 8);
        assert_eq!(t.core_relation(0, 1), Relation::SameDie); // S$
        assert_eq!(t.core_relation(0, 2), Relation::SameSocket); // SP
        assert_eq!(t.core_relation(0, 4), Relation::OtherSocket); // OP
    }

    /// The tables agree with the configuration's arithmetic (which
    /// validates `host.binding`) on every pair of cores.
    #[test]
    fn tables_match_the_configuration() {
        for (s, d, c) in [(2, 2, 2), (1, 1, 4), (2, 1, 4), (4, 2, 1)] {
            let cfg = TopologyCfg { hosts: 2, sockets: s, dies_per_socket: d, cores_per_die: c };
            let t = Topology::new(&cfg);
            for a in 0..t.cores() {
                for b in 0..t.cores() {
                    assert_eq!(t.core_relation(a, b), cfg.core_relation(a as u32, b as u32), "{cfg:?} {a} {b}");
                    let (da, db) = (t.die_of(a), t.die_of(b));
                    assert_eq!(t.die_distance(da, db), t.die_relation(da, db) as usize, "{cfg:?} {a} {b}");
                }
            }
        }
    }
}
