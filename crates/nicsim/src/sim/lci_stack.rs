//! The \[LCI] stack in the world: when the hosts run it
//! (`Workload::LciStack`), the world holds one `crate::lci::Stack` (its
//! libraries, PCI buses, LANai firmware, grid and program), hands it the
//! events addressed to it (`Ev::Lci`, by slot) and queues the events it
//! schedules, in their order. This file owns that routing only; the
//! stack's state and rules are `crate::lci`'s.

use super::{Ev, World};
use crate::lci::Stack;
use crate::time::Instant;

impl World {
    /// Wires the stack onto the world and queues its events at time zero.
    /// Its program is the world's one program left until it is done.
    pub(super) fn start_lci(&mut self, mut stack: Stack) {
        stack.start();
        self.programs_left = u32::from(!stack.done());
        self.lci = Some(Box::new(stack));
        self.queue_lci();
    }

    /// The stack's event in `slot` is due. A run in which the stack stops
    /// progressing ends with its error (`Stack::handle_slot`).
    pub(super) fn lci_event(&mut self, now: Instant, slot: u32) {
        let events = self.q.popped();
        let Some(stack) = self.lci.as_deref_mut() else { return };
        let outcome = stack.handle_slot(now, slot, events);
        if outcome != Ok(false) {
            self.programs_left = 0;
        }
        self.queue_lci();
        if let Err(e) = outcome {
            self.fail(e.0);
        }
    }

    /// Handles the next event, the stack's (tests); returns its time and
    /// what it was.
    #[cfg(test)]
    pub(crate) fn step_lci(&mut self) -> Option<(Instant, crate::lci::Ev)> {
        let (now, ev) = self.q.pop()?;
        let Ev::Lci { slot } = ev else { panic!("{ev:?} in a world that runs the LCI stack") };
        let lci_ev = self.lci.as_deref()?.event(slot);
        self.lci_event(now, slot);
        Some((now, lci_ev))
    }

    fn queue_lci(&mut self) {
        if let Some(stack) = self.lci.as_deref_mut() {
            for (t, origin, slot) in stack.take_scheduled() {
                self.q.push(t, origin, Ev::Lci { slot });
            }
        }
    }
}
