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
    /// `die_of`, a division by `cores_per_die` made as a multiplication:
    /// the simulator asks it several times per event, and a division is
    /// slow where a table's look-up is a load, a bounds check and a branch.
    per_die: Div16,
    /// `socket_of_die`, a division by `dies_per_socket` likewise.
    per_socket: Div16,
}

/// A division of 16-bit numbers by a fixed divisor `d` as a multiply and a
/// shift: `n / d == (n * ceil(2^32 / d)) >> 32` for every `n` and `d`
/// below 2^16. (With `m = ceil(2^32 / d) = (2^32 + e) / d`, `0 <= e < d`:
/// `n * m / 2^32 = n / d + n * e / (d * 2^32)`, whose second term is below
/// `2^16 / 2^32 < 1 / d`, and `n / d`'s fraction is at most `(d - 1) / d`,
/// so the floor is `n / d`'s.)
#[derive(Clone, Copy, Debug)]
struct Div16 {
    magic: u64,
}

impl Div16 {
    /// Division by `d` (at least 1).
    fn new(d: u16) -> Self {
        Div16 { magic: (1u64 << 32).div_ceil(d.max(1) as u64) }
    }

    /// `n / d`.
    #[inline(always)]
    fn of(self, n: u16) -> u16 {
        ((n as u64 * self.magic) >> 32) as u16
    }
}

impl Topology {
    pub fn new(t: &TopologyCfg) -> Self {
        Self::with_shape(t.sockets as u16, t.dies_per_socket as u16, t.cores_per_die as u16)
    }
    pub fn with_shape(sockets: u16, dies_per_socket: u16, cores_per_die: u16) -> Self {
        Topology {
            sockets,
            dies_per_socket,
            cores_per_die,
            per_die: Div16::new(cores_per_die),
            per_socket: Div16::new(dies_per_socket),
        }
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
    /// The die of core `core`: `core / cores_per_die`.
    #[inline(always)]
    pub fn die_of(&self, core: u16) -> u16 {
        self.per_die.of(core)
    }
    /// The socket of die `die`: `die / dies_per_socket`.
    #[inline(always)]
    pub fn socket_of_die(&self, die: u16) -> u16 {
        self.per_socket.of(die)
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

    /// A division as a multiplication gives the quotient of every 16-bit
    /// number, by divisors small and large.
    #[test]
    fn a_division_by_multiplication_is_exact_for_every_16_bit_number() {
        for d in [1u16, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 255, 1000, 32767, 32768, 65521, 65535] {
            let div = Div16::new(d);
            for n in 0..=u16::MAX {
                assert_eq!(div.of(n), n / d, "{n} / {d}");
            }
        }
    }

    /// The topology's dies and sockets agree with the configuration's
    /// arithmetic (which validates `host.binding`) on every pair of cores.
    #[test]
    fn the_topology_matches_the_configuration() {
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
