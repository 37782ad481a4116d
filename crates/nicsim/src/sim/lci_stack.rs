//! The \[LCI] stack in the world: when the hosts run it
//! (`Scenario::lci`), each host holds its library (`HostState`'s
//! `lci`) and its NIC the LANai firmware (`Nic`'s `lanai`, with the host's
//! PCI bus); the NIs send on the world's network (`Wire`'s grid); the
//! world's run (`Run`'s `lci`) holds the program the hosts run
//! (`crate::lci::Running`). The world hands each event addressed to a
//! part to the rules (`crate::lci::Cx::event`, lent the hosts, the grid,
//! the program and the world's queue): host `h`'s library
//! (`Ev::LciLibrary`, a `crate::library::lci::LibEv`), NI `h`'s LANai firmware
//! (`Ev::Lanai`, a `crate::nic::lanai::FwEv`), NI `h`'s polling watchdog
//! and clock (the events the Open-MX NIC's share: `Ev::WatchdogTimer`,
//! `Ev::ClockTick`, `Ev::ClockFetched`, routed here by `nic_path` and
//! `clock` when the world runs the stack). The rules queue the world's
//! events as they schedule them. After each event a run whose NI store
//! overflowed ends with its error, and one whose program is done has no
//! program left; a run whose NIs stop sending and delivering is the stall
//! watch's (`stall`). This file owns that hand-over and the wiring of the
//! parts; their state and the rules are `crate::lci`'s and
//! `crate::nic::lanai`'s.

use super::{Ev, HostState, World};
use crate::lci::{Cx, Running};
use crate::library::lci::Lib;
use crate::nic::lanai::Ni;
use crate::time::Instant;

impl World {
    /// Wires the stack onto the world: each host's library beside its
    /// processes, its NI's firmware in its NIC, the program in the run;
    /// queues the parts' events at time zero. The program is the world's
    /// one program left until it is done.
    pub(super) fn start_lci(&mut self, prog: Running, parts: Vec<(Lib, Ni)>) {
        debug_assert_eq!(parts.len(), self.hosts.len());
        for (hs, (lib, ni)) in self.hosts.iter_mut().zip(parts) {
            hs.lci = Some(Box::new(lib));
            hs.nic.lanai = Some(Box::new(ni));
        }
        self.run.lci = Some(Box::new(prog));
        self.programs_left = 1;
        self.with_lci(Instant::ZERO, |cx| cx.start());
    }

    /// An event of the stack's parts is due: the rules' (out of the
    /// event loop's line).
    #[inline(never)]
    pub(super) fn lci(&mut self, now: Instant, ev: Ev) {
        self.with_lci(now, |cx| cx.event(now, ev));
    }

    /// Lends the rules the hosts, the grid, the program and the queue for
    /// the event at `now` (`f`); then a run in which an NI's store
    /// overflowed ends with that error, and one whose program is done has
    /// no program left.
    fn with_lci(&mut self, now: Instant, f: impl FnOnce(&mut Cx<'_>)) {
        let (Some(prog), Some(grid)) = (self.run.lci.as_deref_mut(), self.wire.net.grid.as_mut()) else { return };
        let mut cx = Cx::new(&mut self.hosts, grid, prog, &mut self.q);
        f(&mut cx);
        let full = cx.full(now);
        if full.is_some() || prog.done() {
            self.programs_left = 0;
        }
        if let Some(e) = full {
            self.fail(e.0);
        }
    }

    /// Packets the NIs sent and delivered so far: what the stall watch
    /// sees progress in, for a world that runs the stack.
    pub(super) fn lci_packets(&self) -> u64 {
        let (sent, delivered) = crate::lci::packets(&self.hosts);
        sent + delivered
    }

    /// Handles the next event, the stack's (tests); returns its time, the
    /// component it is addressed to, its host or NI, and the packet it
    /// named, if any.
    #[cfg(test)]
    pub(crate) fn step_lci(&mut self) -> Option<(Instant, crate::lci::testing::To, u32, Option<crate::lci::Packet>)> {
        use crate::lci::testing::To;
        use crate::lci::{FwEv, LibEv};
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
        let pkt = names_packet.then(|| self.hosts[host as usize].ni_ref().packets[arg as usize]);
        self.handle(now, ev);
        Some((now, to, u32::from(host), pkt))
    }
}

/// A host's \[LCI] parts, which a world that runs the stack holds in every
/// host (`start_lci`).
const PARTS: &str = "a host of a world that runs the LCI stack has its library and its NI's firmware";

/// A host's \[LCI] parts, for the rules (`crate::lci::Cx`) and the metrics.
impl HostState {
    pub(crate) fn lib(&mut self) -> &mut Lib {
        self.lci.as_deref_mut().expect(PARTS)
    }
    pub(crate) fn ni(&mut self) -> &mut Ni {
        self.nic.lanai.as_deref_mut().expect(PARTS)
    }
    pub(crate) fn lib_ref(&self) -> &Lib {
        self.lci.as_deref().expect(PARTS)
    }
    pub(crate) fn ni_ref(&self) -> &Ni {
        self.nic.lanai.as_deref().expect(PARTS)
    }
}
