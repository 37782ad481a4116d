//! Multicast in the LCI stack (\[LCI], SPEC §2.4): per-sender spanning trees
//! and the three forwarding schemes.
//!
//! This module states the schemes (the world names their metrics:
//! `crate::sim` `metrics`, `lci_metrics`).
//! The NIs' side is their firmware's (`crate::nic::lanai`, `Nic::lanai_event`: a
//! post that shares one send buffer among one descriptor per child, the
//! forwards and the receive buffers they free), over its NIC's forwarding
//! table (the `forwarding` of `crate::nic::Nic`, a [`ForwardTable`] of
//! shape `Tree::Kary`, as the Open-MX NIC's, set by the world's build, `crate::sim`)
//! and the NI state of `crate::nic::multicast` ([`NiMc`]: the
//! NI's rank, the queue of forwards transmitted from a receive buffer,
//! the receive buffers held until every forward left, the send buffers
//! shared by several descriptors) and its tree shape ([`Kary`]: a
//! `fanout`-ary tree over the ranks relative to the root, binary by
//! default); each host's side is its library's
//! (`crate::library::lci::HostMc`, with the library's broadcast post and
//! upcall forwards, `library/lci/mc.rs`):
//!
//! * `host-message`: a host forwards a message only when all of it arrived,
//!   by point-to-point sends (the host re-sends: one PIO copy per child).
//! * `host-packet`: a host forwards each packet at its upcall: one PIO copy
//!   of the packet into one NI send buffer plus one descriptor per child;
//!   the send buffer is released when the last child's copy left.
//! * `ni`: the NI recognises the multicast tag ([`super::Packet::bcast`]),
//!   looks up the children in its table and transmits from the receive
//!   buffer, then (in parallel) DMAs the packet to its host; the receive
//!   buffer is free when both the host DMA and every forward are done. The
//!   host is off the critical path.
//!
//! Flow control: a forward, like any transmission, starts only when the
//! child's NI has a free receive buffer (Myrinet back-pressure); until then
//! the forwarding NI waits and keeps holding its own receive buffer. It
//! does not own the programs that multicast (`crate::workload`'s, run by
//! `super::process`).

pub use crate::nic::multicast::{ForwardTable, Kary, NiMc, Tree};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Forwarding;
    use crate::lci::Packet;

    #[test]
    fn binary_tree_covers_every_rank_once_from_any_root() {
        let t = Kary { n: 64, fanout: 2 };
        for root in [0, 5, 63] {
            let mut seen = vec![0u32; 64];
            seen[root as usize] += 1;
            for r in 0..64 {
                let kids: Vec<u32> = t.children(root, r).collect();
                assert!(kids.len() <= 2);
                for c in kids {
                    seen[c as usize] += 1;
                    assert_eq!(t.parent(root, c), Some(r));
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "root {root}: {seen:?}");
            assert_eq!(t.parent(root, root), None);
            assert_eq!(t.children(root, root).collect::<Vec<_>>(), vec![(root + 1) % 64, (root + 2) % 64]);
        }
        // Depth of a 64-node binary tree: 6 levels below the root.
        let depth = |mut r: u32| {
            let mut d = 0;
            while let Some(p) = t.parent(0, r) {
                r = p;
                d += 1;
            }
            d
        };
        assert_eq!((0..64).map(depth).max(), Some(6));
    }

    #[test]
    fn forward_table_matches_the_tree() {
        let t = Kary { n: 64, fanout: 3 };
        let ft = ForwardTable { tree: Tree::Kary(3), ranks: 64 };
        for root in 0..64 {
            for r in 0..64 {
                assert_eq!(ft.children(root, r).collect::<Vec<_>>(), t.children(root, r).collect::<Vec<_>>());
            }
        }
        // An NI looks its own rank up: rank 0 is relative rank 1 of root 7.
        let m = NiMc::<Packet>::new(0);
        let table = ForwardTable { tree: Tree::Kary(2), ranks: 8 };
        assert_eq!(table.children(7, m.rank).collect::<Vec<_>>(), [2, 3]);
    }

    #[test]
    fn forwarding_names_round_trip() {
        // Result tables print the names the parser accepts.
        for n in crate::config::variant_names::<Forwarding>() {
            let f: Forwarding = toml::Value::String(n.to_string()).try_into().unwrap();
            assert_eq!(f.to_string(), *n);
        }
    }

    #[test]
    fn held_buffer_is_free_after_host_dma_and_every_forward() {
        let table = Some(ForwardTable { tree: Tree::Kary(2), ranks: 8 });
        let mut m = NiMc::new(0);
        let p = Packet {
            src: 0,
            dst: 0,
            msg: 3,
            frag: 0,
            last: true,
            payload: 64,
            msg_bytes: 64,
            bcast: Some(7),
            tag: 0,
            ack: 0,
            ack_only: false,
        };
        // Root 7: rank 0 is relative rank 1, children relative 3, 4 = ranks 2, 3.
        assert_eq!(m.start_forward(p, table), 2);
        assert_eq!(m.fwd_queue.iter().map(|q| q.dst).collect::<Vec<_>>(), vec![2, 3]);
        assert!(!m.release_on_forward(&p));
        assert!(!m.release_on_delivery(&p), "one forward still uses the buffer");
        assert!(m.release_on_forward(&p));
        assert_eq!(m.held(), 0);
        // A leaf forwards nothing and holds nothing.
        let leaf = Packet { bcast: Some(0), ..p };
        let mut m = NiMc::new(7);
        assert_eq!(m.start_forward(leaf, table), 0);
        assert!(m.release_on_delivery(&leaf));
    }
}
