//! Receive steering: which queue a frame goes to, and which core receives a
//! queue's interrupt.
//!
//! This module owns only that mapping. `single-rr` and `single-core` use one
//! queue; `multiqueue` ([OMX-MQ]) has one queue and one MSI-X vector per
//! core: an Open-MX frame goes to queue `destination endpoint mod #queues`
//! (PULL_REPLY frames carry the endpoint in their magic, decoded by the
//! wire layer), other traffic is hashed RSS-style on its flow.

use crate::config::SteeringKind;

/// Steering state (the round-robin cursor of `single-rr`).
#[derive(Clone, Debug)]
pub struct Steering {
    kind: SteeringKind,
    cores: u16,
    rr_next: u16,
}

impl Steering {
    pub fn new(kind: SteeringKind, cores: u16) -> Self {
        Steering { kind, cores, rr_next: 0 }
    }

    /// Number of receive queues.
    pub fn queues(&self) -> usize {
        match self.kind {
            SteeringKind::MultiQueue => self.cores as usize,
            _ => 1,
        }
    }

    /// Queue of a frame for destination endpoint `ep`; `None`: not Open-MX,
    /// hashed on `flow` (RSS-like).
    pub fn queue_for(&self, ep: Option<u8>, flow: u32) -> usize {
        match self.kind {
            SteeringKind::MultiQueue => match ep {
                Some(e) => e as usize % self.cores as usize,
                // A multiplicative hash stands in for the Toeplitz hash of RSS.
                None => (flow.wrapping_mul(0x9E37_79B1) >> 16) as usize % self.cores as usize,
            },
            _ => 0,
        }
    }

    /// The core that serves queue `q` (where DCA aims its writes): its own
    /// core with multiqueue, the bound core with single-core, core 0 with
    /// round-robin (which has no fixed core).
    pub fn nominal_core(&self, q: usize) -> u16 {
        match self.kind {
            SteeringKind::MultiQueue => q as u16,
            SteeringKind::SingleCore(c) => c as u16,
            SteeringKind::SingleRr => 0,
        }
    }

    /// Core that takes the next interrupt of queue `q`.
    pub fn irq_core(&mut self, q: usize) -> u16 {
        match self.kind {
            // Each queue's vector is bound to its own core.
            SteeringKind::MultiQueue => q as u16,
            SteeringKind::SingleCore(c) => c as u16,
            SteeringKind::SingleRr => {
                let c = self.rr_next;
                // The next core, wrapping (no division on this hot path).
                self.rr_next = if c + 1 >= self.cores { 0 } else { c + 1 };
                c
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_visits_every_core_in_turn() {
        let mut s = Steering::new(SteeringKind::SingleRr, 4);
        let seq: Vec<u16> = (0..6).map(|_| s.irq_core(0)).collect();
        assert_eq!(seq, [0, 1, 2, 3, 0, 1]);
    }

    #[test]
    fn multiqueue_maps_endpoints_to_their_core() {
        let mut s = Steering::new(SteeringKind::MultiQueue, 8);
        assert_eq!(s.queues(), 8);
        assert_eq!(s.queue_for(Some(3), 0), 3);
        assert_eq!(s.queue_for(Some(11), 0), 3);
        assert_eq!(s.irq_core(5), 5);
        assert!(s.queue_for(None, 77) < 8);
    }

    #[test]
    fn single_core_stays() {
        let mut s = Steering::new(SteeringKind::SingleCore(3), 8);
        assert!((0..5).all(|_| s.irq_core(0) == 3));
    }
}
