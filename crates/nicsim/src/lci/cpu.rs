//! The LCI stack's side of its hosts' signalled cores
//! (`crate::host::core::SignalledCore`, which owns the CPU modes, what a
//! signal does to them and the signals counted; SPEC §2.4: NI interrupts
//! are delivered as a signal to the process, kernel dispatch + user signal
//! handler): this module schedules what a delivery returns, ends a compute
//! phase and applies the library's idle choice (leave the handler, poll,
//! compute or sleep). The interrupts-enabled flag lives in host memory
//! (`super::host::Host::irq_enabled`): the library keeps interrupts
//! disabled whenever it runs (polling, sending, in the handler) and enabled
//! while the program computes or sleeps outside it.

use super::{host_origin, workload, Cx, LibEv, Parts, Queue, To};
use crate::host::core::{Delivery, Exit};
use crate::time::Instant;

impl<P: Parts, Q: Queue> Cx<'_, P, Q> {
    /// An NI interrupt reaches host `h` as a signal (SPEC §2.4;
    /// `LibEv::Signal`).
    pub fn signal(&mut self, h: u32, now: Instant) {
        let host = self.hs[h as usize].lib();
        let cost = host.signal_cost();
        let until = match host.core.deliver(now, host.irq_enabled, host.spin_since.is_some(), cost) {
            Delivery::Merged => return,
            Delivery::Owed => {
                host.interrupts += 1;
                return;
            }
            Delivery::ReturnedWhileSpinning { until } => {
                host.end_spin(now);
                until
            }
            Delivery::Handled { until } => {
                host.irq_enabled = false;
                until
            }
        };
        host.interrupts += 1;
        host.busy = true;
        self.at(until, host_origin(h), To::Library(LibEv::Done), h, 0);
    }

    /// `LibEv::ComputeDone` of generation `gen`: the computation ends
    /// unless a signal preempted it since.
    pub fn compute_done(&mut self, h: u32, gen: u32, now: Instant) {
        if self.hs[h as usize].lib().core.end_compute(gen) {
            self.hs[h as usize].lib().irq_enabled = false;
            self.prog.job.compute_done(h);
            self.host_next(h, now);
        }
    }

    /// Host `h`'s library has nothing to do: leave the handler, or ask the
    /// program whether to keep polling, compute or sleep. Returns whether
    /// the host left the library (or was re-dispatched).
    pub(super) fn library_idle(&mut self, h: u32, now: Instant) -> bool {
        let i = h as usize;
        let control = match self.hs[i].lib().core.handler_exit() {
            Some(Exit::Compute(d)) => workload::Control::Compute(d),
            Some(Exit::Sleep) => workload::Control::Sleep,
            None => {
                let c = self.prog.job.control(h, now);
                if self.flush_sends(now) && !self.hs[i].lib().outbox.is_empty() {
                    self.host_next(h, now);
                    return true;
                }
                c
            }
        };
        match control {
            workload::Control::Wait => false,
            workload::Control::Compute(d) => {
                let seg = self.hs[i].lib().core.begin_compute(now, d);
                self.hs[i].lib().irq_enabled = true;
                self.at(seg.end, host_origin(h), To::Library(LibEv::ComputeDone), h, seg.gen);
                true
            }
            workload::Control::Sleep => {
                self.hs[i].lib().core.sleep();
                self.hs[i].lib().irq_enabled = true;
                true
            }
        }
    }
}
