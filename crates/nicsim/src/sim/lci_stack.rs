//! The \[LCI] stack in the world: when the hosts run it
//! (`Workload::LciStack`), the world holds one `crate::lci::Stack` (its
//! libraries, PCI buses, LANai firmware, grid and program), routes each
//! of its events (`Ev::Lci`: a `crate::lci::Kind`, a host or NI, an
//! argument) to the stack's method of that kind, and queues the events
//! the stack scheduled, in their order. This file owns that routing only;
//! the stack's state and rules are `crate::lci`'s.

use super::{Ev, World};
use crate::lci::{Kind, Stack};
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

    /// The stack's event of `kind` for host or NI `host` is due. A run in
    /// which the stack stops progressing ends with its error
    /// (`Stack::after_event`).
    pub(super) fn lci_event(&mut self, now: Instant, kind: Kind, host: u16, arg: u32) {
        let events = self.q.popped();
        let Some(s) = self.lci.as_deref_mut() else { return };
        let h = u32::from(host);
        match kind {
            Kind::HostDone => s.host_done(h, now),
            Kind::HostWrite => s.host_write(h, now),
            Kind::PollDone => s.poll_done(h, now),
            Kind::SendCounterDone => s.send_counter_done(h, now),
            Kind::Posted => s.posted(h, arg, now),
            Kind::TxReady => s.tx_ready(h, now),
            Kind::TxDone => s.tx_done(h),
            Kind::Arrive => s.arrive(h, arg, now),
            Kind::RxStep => s.rx_step(h, now),
            Kind::RefreshDma => s.refresh_dma(h, now),
            Kind::RefreshDone => s.refresh_done(h, now),
            Kind::McForward => s.mc_forward(h, arg, now),
            Kind::McSendCounterDone => s.mc_send_counter_done(h, arg, now),
            Kind::McWrite => s.mc_write(h, arg, now),
            Kind::FwdReady => s.fwd_ready(h, now),
            Kind::FwdDone => s.fwd_done(h, arg, now),
            Kind::McComputeDone => s.mc_compute_done(h, now),
            Kind::ComputeDone => s.compute_done(h, arg, now),
            Kind::WatchdogExpiry => s.watchdog_expiry(h, arg, now),
            Kind::WatchdogFetched => s.watchdog_fetched(h, arg, now),
            Kind::Signal => s.signal(h, now),
            Kind::ClockTick => s.clock_tick(h, now),
            Kind::ClockFetched => s.clock_fetched(h, now),
            Kind::SoftTimer => s.soft_timer(h, now),
        }
        let outcome = s.after_event(now, events);
        if outcome != Ok(false) {
            self.programs_left = 0;
        }
        self.queue_lci();
        if let Err(e) = outcome {
            self.fail(e.0);
        }
    }

    /// Handles the next event, the stack's (tests); returns its time, its
    /// kind, its host or NI, and the packet it named, if any.
    #[cfg(test)]
    pub(crate) fn step_lci(&mut self) -> Option<(Instant, Kind, u32, Option<crate::lci::Packet>)> {
        let (now, ev) = self.q.pop()?;
        let Ev::Lci { kind, host, arg } = ev else { panic!("{ev:?} in a world that runs the LCI stack") };
        let names_packet = matches!(
            kind,
            Kind::Posted | Kind::Arrive | Kind::McForward | Kind::McSendCounterDone | Kind::McWrite | Kind::FwdDone
        );
        let pkt = names_packet.then(|| self.lci.as_deref().map(|s| s.packet(u32::from(host), arg))).flatten();
        self.lci_event(now, kind, host, arg);
        Some((now, kind, u32::from(host), pkt))
    }

    fn queue_lci(&mut self) {
        if let Some(stack) = self.lci.as_deref_mut() {
            for d in stack.take_scheduled() {
                self.q.push(d.at, d.origin, Ev::Lci { kind: d.kind, host: d.host, arg: d.arg });
            }
        }
    }
}
