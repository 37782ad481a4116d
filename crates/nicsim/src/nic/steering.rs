//! Receive steering: which queue a frame goes to, and which core receives a
//! queue's interrupt.
//!
//! This module owns only that mapping. `single-rr` and `single-core` use one
//! queue; `multiqueue` ([OMX-MQ]) plugs in here with one queue per core.

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
        1
    }

    /// Queue of a frame for destination endpoint `ep` (`None`: not Open-MX).
    pub fn queue_for(&self, _ep: Option<u8>) -> usize {
        0
    }

    /// Core that takes the next interrupt of queue `q`.
    pub fn irq_core(&mut self, _q: usize) -> u16 {
        match self.kind {
            SteeringKind::SingleCore(c) => c as u16,
            SteeringKind::SingleRr => {
                let c = self.rr_next;
                self.rr_next = (self.rr_next + 1) % self.cores;
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
    fn single_core_stays() {
        let mut s = Steering::new(SteeringKind::SingleCore(3), 8);
        assert!((0..5).all(|_| s.irq_core(0) == 3));
    }
}
