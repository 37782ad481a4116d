//! The LCI NI's multicast state in NI memory: the forwarding table (the
//! tree shape, `crate::nic::multicast::ForwardTable`, shared with the
//! Open-MX NIC, and this NI's rank in it), the queue of forwards
//! transmitted from a receive buffer, the receive buffers held until every
//! forward left, and the send buffers shared by several descriptors. This
//! module owns that state and its bookkeeping; when the firmware forwards,
//! and who forwards what, is `super::multicast`'s.

use super::Packet;
use crate::nic::multicast::ForwardTable;
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// A received multicast packet whose receive buffer is held by forwards.
#[derive(Debug, Clone, Copy)]
struct Hold {
    key: (u32, u32, u32),
    forwards_left: u32,
    delivered: bool,
}

fn key(p: &Packet) -> (u32, u32, u32) {
    (p.src, p.msg, p.frag)
}

/// The NI's multicast state.
#[derive(Debug, Default)]
pub struct NiMc {
    /// The forwarding table (`ni` forwarding only).
    pub table: Option<ForwardTable>,
    /// This NI's rank in the table's trees (its host's index).
    pub rank: u32,
    /// Firmware per forward: table lookup + header rewrite + one network DMA set-up.
    pub fwd_cost: Duration,
    /// Forwards (packet with `dst` = child) waiting for the firmware / the child's buffer.
    pub fwd_queue: VecDeque<Packet>,
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

impl NiMc {
    /// The state of NI `rank` with forwarding table `table` (`None`: the
    /// NI does not forward).
    pub fn new(table: Option<ForwardTable>, rank: u32) -> Self {
        NiMc { table, rank, ..NiMc::default() }
    }

    /// Queues the forwards of a received multicast packet to this NI's
    /// children and holds its receive buffer; returns the number of forwards.
    pub fn start_forward(&mut self, pkt: Packet) -> u32 {
        let (Some(t), Some(root)) = (self.table, pkt.bcast) else { return 0 };
        let before = self.fwd_queue.len();
        for c in t.children(root, self.rank) {
            self.fwd_queue.push_back(Packet { dst: c, ..pkt });
        }
        let k = (self.fwd_queue.len() - before) as u32;
        if k > 0 {
            self.holds.push(Hold { key: key(&pkt), forwards_left: k, delivered: false });
        }
        k
    }

    /// The host DMA of `pkt` completed: whether its receive buffer is free now.
    pub fn release_on_delivery(&mut self, pkt: &Packet) -> bool {
        match self.holds.iter_mut().find(|h| h.key == key(pkt)) {
            Some(h) => {
                h.delivered = true;
                false
            }
            None => true,
        }
    }

    /// A forward of `pkt` left: whether its receive buffer is free now.
    pub fn release_on_forward(&mut self, pkt: &Packet) -> bool {
        let i = self.holds.iter().position(|h| h.key == key(pkt)).expect("forward without a held buffer");
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
