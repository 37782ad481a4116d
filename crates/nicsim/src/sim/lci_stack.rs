//! The \[LCI] stack in the world: when the hosts run it
//! (`Workload::LciStack`), each host holds its library (`HostState`'s
//! `lci`) and its NIC the LANai firmware (`Nic`'s `lanai`, with the host's
//! PCI bus), which makes `HostState` the stack's `crate::lci::Parts`; the
//! world's run (`Run`'s `lci`) holds one `crate::lci::Stack` (the grid,
//! the program, what spans the hosts). The world routes each event the
//! stack scheduled to the part it is addressed to, calling the stack's
//! method of its kind with the world's hosts: host
//! `h`'s library (`Ev::LciLibrary`, a `crate::lci::host::LibEv`), NI `h`'s
//! LANai firmware (`Ev::Lanai`, a `crate::nic::lanai::FwEv`), NI `h`'s
//! polling watchdog and clock (the events the Open-MX NIC's share:
//! `Ev::WatchdogTimer`, `Ev::ClockTick`, `Ev::ClockFetched`, routed here by
//! `nic_path` and `clock` when the world runs the stack). After each it asks
//! the stack whether the program is done or stopped progressing, and
//! queues the events the stack scheduled, in their order. This file owns
//! that routing and the wiring of the parts; their state and the stack's
//! rules are `crate::lci`'s and `crate::nic::lanai`'s.

use super::{Ev, HostState, World};
use crate::lci::host::{Host, LibEv};
use crate::lci::{Parts, Stack, To};
use crate::nic::lanai::{FwEv, Ni};
use crate::time::Instant;

impl World {
    /// Wires the stack onto the world: each host's library beside its
    /// processes, its NI's firmware in its NIC; queues the stack's events
    /// at time zero. Its program is the world's one program left until it
    /// is done.
    pub(super) fn start_lci(&mut self, mut stack: Stack, parts: Vec<(Host, Ni)>) {
        debug_assert_eq!(parts.len(), self.hosts.len());
        for (hs, (lib, ni)) in self.hosts.iter_mut().zip(parts) {
            hs.lci = Some(Box::new(lib));
            hs.nic.lanai = Some(Box::new(ni));
        }
        stack.start(&mut self.hosts);
        self.programs_left = u32::from(!stack.done());
        self.run.lci = Some(Box::new(stack));
        self.queue_lci();
    }

    /// Host `host`'s library event `ev` is due.
    pub(super) fn lci_library(&mut self, now: Instant, ev: LibEv, host: u16, arg: u32) {
        let events = self.q.popped();
        let Some(s) = self.run.lci.as_deref_mut() else { return };
        let hs = &mut self.hosts[..];
        let h = u32::from(host);
        match ev {
            LibEv::Done => s.host_done(hs, h, now),
            LibEv::Write => s.host_write(hs, h, now),
            LibEv::PollDone => s.poll_done(hs, h, now),
            LibEv::SendCounterDone => s.send_counter_done(hs, h, now),
            LibEv::McForward => s.mc_forward(hs, h, arg, now),
            LibEv::McSendCounterDone => s.mc_send_counter_done(hs, h, arg, now),
            LibEv::McWrite => s.mc_write(hs, h, arg, now),
            LibEv::McComputeDone => s.mc_compute_done(hs, h, now),
            LibEv::ComputeDone => s.compute_done(hs, h, arg, now),
            LibEv::Signal => s.signal(hs, h, now),
            LibEv::SoftTimer => s.soft_timer(hs, h, now),
        }
        self.lci_after(now, events);
    }

    /// NI `host`'s firmware event `ev` is due.
    pub(super) fn lanai(&mut self, now: Instant, ev: FwEv, host: u16, arg: u32) {
        let events = self.q.popped();
        let Some(s) = self.run.lci.as_deref_mut() else { return };
        let hs = &mut self.hosts[..];
        let h = u32::from(host);
        match ev {
            FwEv::Posted => s.posted(hs, h, arg, now),
            FwEv::TxReady => s.tx_ready(hs, h, now),
            FwEv::TxDone => s.tx_done(hs, h),
            FwEv::Arrive => s.arrive(hs, h, arg, now),
            FwEv::RxStep => s.rx_step(hs, h, now),
            FwEv::RefreshDma => s.refresh_dma(hs, h, now),
            FwEv::RefreshDone => s.refresh_done(hs, h, now),
            FwEv::FwdReady => s.fwd_ready(hs, h, now),
            FwEv::FwdDone => s.fwd_done(hs, h, arg, now),
        }
        self.lci_after(now, events);
    }

    /// NI `h`'s watchdog event of generation `gen` (`Ev::WatchdogTimer`
    /// of a world that runs the stack).
    #[cold]
    pub(super) fn lanai_watchdog(&mut self, now: Instant, h: usize, gen: u32) {
        let events = self.q.popped();
        let Some(s) = self.run.lci.as_deref_mut() else { return };
        s.watchdog(&mut self.hosts, h as u32, gen, now);
        self.lci_after(now, events);
    }

    /// NI `h`'s clock ticks (`Ev::ClockTick` of a world that runs the
    /// stack), or its fetch is back (`fetched`: `Ev::ClockFetched`).
    #[cold]
    pub(super) fn lanai_clock(&mut self, now: Instant, h: usize, fetched: bool) {
        let events = self.q.popped();
        let Some(s) = self.run.lci.as_deref_mut() else { return };
        if fetched {
            s.clock_fetched(&mut self.hosts, h as u32, now);
        } else {
            s.clock_tick(&mut self.hosts, h as u32, now);
        }
        self.lci_after(now, events);
    }

    /// After the stack handled the world's `events`-th event at `now`: a
    /// run in which the stack is done, or stops progressing
    /// (`Stack::after_event`: then with its error), has no program left;
    /// the events the stack scheduled are queued, in their order.
    fn lci_after(&mut self, now: Instant, events: u64) {
        let Some(s) = self.run.lci.as_deref_mut() else { return };
        let outcome = s.after_event(&mut self.hosts, now, events);
        if outcome != Ok(false) {
            self.programs_left = 0;
        }
        self.queue_lci();
        if let Err(e) = outcome {
            self.fail(e.0);
        }
    }

    /// Handles the next event, the stack's (tests); returns its time, the
    /// component it is addressed to, its host or NI, and the packet it
    /// named, if any.
    #[cfg(test)]
    pub(crate) fn step_lci(&mut self) -> Option<(Instant, To, u32, Option<crate::lci::Packet>)> {
        let (now, ev) = self.q.pop()?;
        let (to, host, arg) = match ev {
            Ev::LciLibrary { ev, host, arg } => (To::Library(ev), host, arg),
            Ev::Lanai { ev, host, arg } => (To::Firmware(ev), host, arg),
            Ev::WatchdogTimer { host, gen, .. } => (To::Watchdog, host, gen),
            Ev::ClockTick { host } => (To::ClockTick, host, 0),
            Ev::ClockFetched { host } => (To::ClockFetched, host, 0),
            _ => panic!("{ev:?} in a world that runs the LCI stack"),
        };
        let names_packet = matches!(
            to,
            To::Firmware(FwEv::Posted | FwEv::Arrive | FwEv::FwdDone)
                | To::Library(LibEv::McForward | LibEv::McSendCounterDone | LibEv::McWrite)
        );
        let pkt = names_packet
            .then(|| self.run.lci.as_deref().map(|s| s.packet(&self.hosts, u32::from(host), arg)))
            .flatten();
        self.handle(now, ev);
        Some((now, to, u32::from(host), pkt))
    }

    /// Queues the events the stack scheduled, each as the world's event
    /// for the component it is addressed to.
    fn queue_lci(&mut self) {
        if let Some(stack) = self.run.lci.as_deref_mut() {
            for d in stack.take_scheduled() {
                let host = d.host;
                let ev = match d.to {
                    To::Library(ev) => Ev::LciLibrary { ev, host, arg: d.arg },
                    To::Firmware(ev) => Ev::Lanai { ev, host, arg: d.arg },
                    To::Watchdog => Ev::WatchdogTimer { host, q: 0, gen: d.arg },
                    To::ClockTick => Ev::ClockTick { host },
                    To::ClockFetched => Ev::ClockFetched { host },
                };
                self.q.push(d.at, d.origin, ev);
            }
        }
    }
}

/// A host's \[LCI] parts, which a world that runs the stack holds in every
/// host (`start_lci`).
const PARTS: &str = "a host of a world that runs the LCI stack has its library and its NI's firmware";

impl Parts for HostState {
    fn lib(&mut self) -> &mut Host {
        self.lci.as_deref_mut().expect(PARTS)
    }
    fn ni(&mut self) -> &mut Ni {
        self.nic.lanai.as_deref_mut().expect(PARTS)
    }
    fn lib_ref(&self) -> &Host {
        self.lci.as_deref().expect(PARTS)
    }
    fn ni_ref(&self) -> &Ni {
        self.nic.lanai.as_deref().expect(PARTS)
    }
    fn both(&mut self) -> (&mut Host, &mut Ni) {
        (self.lci.as_deref_mut().expect(PARTS), self.nic.lanai.as_deref_mut().expect(PARTS))
    }
}
