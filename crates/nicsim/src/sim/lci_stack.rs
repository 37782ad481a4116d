//! The \[LCI] stack in the world: when the hosts run it
//! (`Scenario::lci`), each host holds its library (`HostState`'s
//! `lci`) and its NIC the LANai firmware (`Nic`'s `lanai`, on the NIC's
//! bus, the host's PCI bus: `Nic::run_lanai`); the NIs send on the world's network (`Wire`'s grid); the
//! world's run (`Run`'s `lci`) holds the program the hosts run
//! (`crate::lci::Running`). The world hands each event addressed to a
//! part to its rule (`World::lci`, one `World` method per event kind, on
//! the world's own hosts, grid, program and queue): host `h`'s library
//! (`Ev::LciLibrary`, a `crate::library::LibEv`), NI `h`'s LANai firmware
//! (`Ev::Lanai`, a `crate::nic::lanai::FwEv`; the NI's watchdog and clock
//! are the NIC's one path for both firmwares, `nic_path` and `clock`,
//! which signal the library through here). The rules queue the world's
//! events as they schedule them. After each event a run whose NI store
//! overflowed ends with its error, and one whose program is done has no
//! program left; a run whose NIs stop sending and delivering is the stall
//! watch's (`stall`). This file owns that hand-over, the wiring of the
//! parts and the rules: what acts across a host and its NI or
//! between NIs (a PIO write across the host's bus, a transmit once the
//! destination NI grants a receive buffer, the grid's timing), what the
//! one router of a library's outputs (`kernel`'s `route`, which routes the
//! Open-MX library's too) hands it of a host library's (its events with
//! the packets they name, its PIO, what its program learns) and the
//! routing of what its NI's firmware answers; the parts' state and decisions
//! are `crate::library::lci`'s and `crate::nic::lanai`'s, the program's
//! `crate::lci`'s.

use super::{Ev, HostState, World, NO_RANK};
use crate::engine::Origin;
use crate::host::bus::BusOp;
use crate::lci::Running;
use crate::library::lci::Lib;
use crate::library::LibEv;
use crate::nic::flow::Class;
use crate::nic::lanai::{FwEv, Packet};
use crate::time::Instant;
use crate::SimError;

/// The world's program of a world that runs the stack (`start_lci`).
const PROGRAM: &str = "a world that runs the LCI stack has its program";

/// Every host's library of a program of one process per host holds one
/// (`crate::lci::build`).
const PROCESS: &str = "a host of a program of one process per host holds its process";

/// Only a library without a process asks the world (a whole-job program's).
const WHOLE: &str = "a library that holds its process runs it itself";

impl World {
    /// Queues the parts' events at time zero ([`World::lci_start`]).
    pub(super) fn start_lci(&mut self) {
        self.lci_start();
        self.lci_settle(Instant::ZERO);
    }

    /// An event of the stack's parts is due (out of the event loop's
    /// line): the rule of its kind (a library's, a firmware's), then
    /// [`World::lci_settle`].
    #[inline(never)]
    pub(super) fn lci(&mut self, now: Instant, ev: Ev) {
        if self.run.lci.is_none() || self.wire.net.grid.is_none() {
            return;
        }
        match ev {
            Ev::LciLibrary { ev, host, arg } => self.lci_library(u32::from(host), ev, arg, now),
            Ev::Lanai { ev, host, arg } => self.lci_firmware(u32::from(host), ev, arg, now),
            _ => unreachable!("{ev:?} is not an event of the LCI stack"),
        }
        self.lci_settle(now);
    }

    /// After an event at `now`: a run in which an NI's store overflowed
    /// ends with that error, and one whose whole-job program is done has no
    /// program left (a process of one per host counts itself out as it
    /// finishes, `Output::ProgramDone`).
    fn lci_settle(&mut self, now: Instant) {
        let run = self.lci_prog();
        let full = run.full.take();
        if full.is_some() || run.whole.as_deref().is_some_and(crate::lci::Dsm::done) {
            self.programs_left = 0;
        }
        if let Some(h) = full {
            let e = self.lci_full(h, now);
            self.fail(e.0);
        }
    }

    /// What the run holds of the program the hosts run.
    fn lci_prog(&mut self) -> &mut Running {
        self.run.lci.as_deref_mut().expect(PROGRAM)
    }

    /// Handles the next event, the stack's (tests); returns its time, the
    /// component it is addressed to, its host or NI, and the packet it
    /// named, if any.
    #[cfg(test)]
    pub(crate) fn step_lci(&mut self) -> Option<(Instant, crate::lci::testing::To, u32, Option<crate::lci::Packet>)> {
        use crate::lci::testing::To;
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
        let pkt = names_packet.then(|| self.hosts[host as usize].nic.fw_ni_ref().packets[arg as usize]);
        self.handle(now, ev);
        Some((now, to, u32::from(host), pkt))
    }

    /// Time zero: the programs' sends and compute; every host of the
    /// program enters the library (and starts polling); the others stay
    /// out of it.
    fn lci_start(&mut self) {
        if self.lci_prog().upcall_driven() {
            for h in 0..self.hosts.len() as u32 {
                self.lci_proceed(h, Instant::ZERO);
            }
        }
        for h in 0..self.hosts.len() as u32 {
            let runs = self.env.ranks.at(h as usize, 0) != NO_RANK;
            self.hosts[h as usize].lib().start(runs);
            if !runs {
                continue;
            }
            self.lci_lib(h, Instant::ZERO, Lib::next);
        }
    }

    /// The error of an event that would have named a packet past NI `h`'s
    /// store, at `now`.
    fn lci_full(&self, h: u32, now: Instant) -> SimError {
        let cap = self.hosts[h as usize].nic.fw_ni_ref().packets.bound();
        SimError(format!(
            "NI {h} holds more packets in flight than its buffers allow ({cap}: send_buffers + 1 + \
             recv_buffers * (1 + fanout)) at {} us",
            now.as_us_f64()
        ))
    }

    /// Queues the event `ev` names `pkt` with, `pkt` held in NI `h`'s
    /// store until the event is handled; a full store ends the run instead
    /// ([`World::lci_settle`]).
    fn lci_at_packet(&mut self, t: Instant, origin: Origin, h: u32, pkt: Packet, ev: impl FnOnce(u32) -> Ev) {
        match self.hosts[h as usize].nic.fw_ni().packets.put(pkt) {
            Some(id) => self.q.push(t, origin, ev(id)),
            None => {
                self.lci_prog().full.get_or_insert(h);
            }
        }
    }

    /// Host `h`'s library's event `ev` at `at`, naming `arg` (a packet it
    /// holds, [`LibEv::names_packet`], then held in NI `h`'s store until
    /// the event is handled).
    pub(super) fn lci_timer(&mut self, h: u32, at: Instant, ev: LibEv, arg: u32) {
        if ev.names_packet() {
            let pkt = self.hosts[h as usize].lib_ref().held(arg);
            self.lci_at_packet(at, host_origin(h), h, pkt, lib_ev(h, ev));
        } else {
            self.q.push(at, host_origin(h), lib_ev(h, ev)(arg));
        }
    }

    /// Host `h`'s PIO read of an NI counter across its NIC's bus at `now`;
    /// then its library's event `then` (naming `arg`).
    pub(super) fn lci_pio_read(&mut self, h: u32, now: Instant, then: LibEv, arg: u32) {
        let end = self.hosts[h as usize].nic.pio(now, BusOp::PioRead);
        self.lci_timer(h, end, then, arg);
    }

    /// Host `h`'s PIO write of the packet its library holds as `pkt`
    /// (`bytes` after the header) into an NI send buffer across its NIC's
    /// bus at `now`; the firmware has it posted at the write's end.
    pub(super) fn lci_pio_write(&mut self, h: u32, now: Instant, pkt: u32, bytes: u32) {
        let end = self.hosts[h as usize].nic.lanai_pio_write(now, bytes);
        let pkt = self.hosts[h as usize].lib_ref().held(pkt);
        self.lci_at_packet(end, host_origin(h), h, pkt, fw_ev(h, FwEv::Posted));
    }

    /// The upcall of a message's last packet on host `h` at `now`, for a
    /// whole-job program (`Output::Message`): the program learns it, and
    /// its sends go to the senders' libraries.
    pub(super) fn lci_message(&mut self, h: u32, now: Instant, src: u32, tag: u64) {
        if let Some(j) = self.lci_prog().whole() {
            j.on_message(h, src, tag);
        }
        self.lci_flush_sends(now);
    }

    /// The message from host `from` with `tag` whose upcall on host `h`
    /// ends at `at`, in a run that counts its deliveries across hosts (the
    /// broadcast benchmark, `Output::Arrived`): the sender, if it waited
    /// for the message to reach every other host and `h` was the last,
    /// goes on, then `h`'s process if it waited for it.
    pub(super) fn lci_arrived(&mut self, h: u32, from: u32, tag: u64, at: Instant) {
        let (rank, ranks) = (u32::from(self.env.ranks.at(from as usize, 0)), self.env.ranks.len() as u32);
        let sender = self.hosts[from as usize].lib().process_mut().expect(PROCESS);
        let waits = self.run.lci.as_deref_mut().and_then(|r| r.deliveries.as_mut());
        let woken = waits.is_some_and(|d| d.delivered_to(rank, tag, ranks, sender));
        let go_on = self.hosts[h as usize].lib().process_mut().expect(PROCESS).arrived(rank, tag);
        if woken {
            self.lci_proceed(from, at);
        }
        if go_on {
            self.lci_proceed(h, at);
        }
    }

    /// Host `h`'s library has nothing to do at `now` and a whole-job
    /// program (`Output::Idle`; a library that holds its process runs
    /// it itself): its new sends if the program has any, else what the
    /// program says the host goes on with.
    pub(super) fn lci_idle(&mut self, h: u32, now: Instant) {
        let c = self.lci_prog().whole().expect(WHOLE).control(h, now);
        if self.lci_flush_sends(now) && self.hosts[h as usize].lib_ref().has_sends() {
            self.lci_lib(h, now, Lib::next);
        } else {
            self.lci_lib(h, now, |l, cx| l.control(cx, c));
        }
    }

    /// Host `h`'s compute phase a whole-job program asked for ended
    /// (`Output::ComputeDone`).
    pub(super) fn lci_compute_done(&mut self, h: u32) {
        self.lci_prog().whole().expect(WHOLE).compute_done(h);
    }

    /// Runs host `h`'s process (a program its upcalls drive) at `now`
    /// until it waits, counting its broadcasts until they reached every
    /// other host if the run waits for that ([`Lib::proceed`] with
    /// `crate::lci::Deliveries::next`), then its library goes on if it spun.
    fn lci_proceed(&mut self, h: u32, now: Instant) {
        let Some(run) = self.run.lci.as_deref_mut().filter(|r| r.upcall_driven()) else { return };
        let (ranks, rank) = (&self.env.ranks, u32::from(self.env.ranks.at(h as usize, 0)));
        let lib = self.hosts[h as usize].lci.as_deref_mut().expect(PARTS);
        let last = lib.proceed(now, ranks, |d, t| match run.deliveries.as_mut() {
            Some(waits) => waits.next(rank, d, t),
            None => d.next(t),
        });
        let finished = last == Some(crate::workload::Op::Done);
        self.programs_left -= u32::from(finished);
        self.lci_lib(h, now, Lib::wake);
    }

    /// Moves a whole-job program's new messages to the senders' libraries,
    /// waking a sender that spins in the library. Returns whether there
    /// were any.
    fn lci_flush_sends(&mut self, now: Instant) -> bool {
        let prog = self.lci_prog();
        let mut sends = std::mem::take(&mut prog.sends);
        if let Some(j) = prog.whole() {
            j.drain_sends(&mut sends);
        }
        let any = !sends.is_empty();
        for (from, o) in sends.drain(..) {
            self.hosts[from as usize].lib().submit(o);
            self.lci_lib(from, now, Lib::wake);
        }
        self.lci_prog().sends = sends;
        any
    }

    /// Host `h`'s library event `ev` (`arg`: a packet of NI `h`'s store or
    /// a generation, [`LibEv`]): the library's ([`Lib::event`], with the
    /// packet it names and its NI's delivered and released counters, as a
    /// PIO read finds them).
    fn lci_library(&mut self, h: u32, ev: LibEv, arg: u32, now: Instant) {
        let pkt = ev.names_packet().then(|| self.hosts[h as usize].nic.fw_ni().packets.take(arg));
        let ni = self.hosts[h as usize].nic.fw_ni_ref();
        let counters = (ni.delivered, ni.sent);
        self.lci_lib(h, now, |l, cx| l.event(cx, ev, arg, pkt, counters));
    }

    /// NI `h`'s firmware event `ev` (`arg`: a packet of its store, [`FwEv`]):
    /// the firmware's ([`crate::nic::Nic::lanai_event`], reading its host's processed
    /// counter), then what it asked for ([`crate::nic::lanai::FwOutcome`], in its fields'
    /// order): its own events queued, its host's library called, a
    /// transmission tried, a freed buffer granted.
    fn lci_firmware(&mut self, h: u32, ev: FwEv, arg: u32, now: Instant) {
        let consumed = self.hosts[h as usize].lib_ref().consumed();
        let o = self.hosts[h as usize].nic.lanai_event(now, (ev, arg), consumed);
        let (host, origin) = (h as u16, self.hosts[h as usize].nic.origin);
        if let Some((t, gen)) = o.watchdog {
            self.q.push(t, origin, Ev::WatchdogTimer { host, q: 0, gen });
        }
        if let Some(pkt) = o.delivered {
            self.lci_lib(h, now, |l, cx| l.deliver(cx, pkt));
        }
        if o.freed {
            self.lci_buffer_freed(h, now);
        }
        for (t, ev) in o.steps.into_iter().flatten() {
            self.q.push(t, origin, Ev::Lanai { ev, host, arg: 0 });
        }
        if o.taken {
            self.lci_lib(h, now, Lib::done);
        }
        if let Some(forward) = o.transmit {
            self.lci_try_transmit(h, now, forward);
        }
        if o.signal {
            self.lanai_signal(now, h as usize);
        }
    }

    /// A receive buffer of NI `h` may be free: the waiting heads it goes
    /// to leave, in the order its credits grant them (`crate::nic::flow::Credits::grant`).
    fn lci_buffer_freed(&mut self, h: u32, now: Instant) {
        while let Some((s, class)) = self.hosts[h as usize].nic.fw_ni().credits.grant() {
            self.lci_transmit(s, now, class == Class::Forward);
        }
    }

    /// NI `h` transmits its head descriptor (`forward`: its programmed head
    /// forward, `multicast`) if the destination NI reserves it a receive
    /// buffer; otherwise the head waits there (Myrinet back-pressure,
    /// `crate::nic::flow::Credits::reserve`) and leaves when granted one (`lci_buffer_freed`),
    /// a forwarding NI still holding its own.
    fn lci_try_transmit(&mut self, h: u32, now: Instant, forward: bool) {
        let Some(dst) = self.hosts[h as usize].nic.lanai_head(forward) else { return };
        let class = if forward { Class::Forward } else { Class::Send };
        if self.hosts[dst as usize].nic.fw_ni().credits.reserve(h, class) {
            self.lci_transmit(h, now, forward);
        }
    }

    /// NI `h`'s head (`forward`: its head forward), which holds a receive
    /// buffer of its destination NI, leaves on the world's grid
    /// ([`crate::nic::Nic::lanai_transmit`]): its tail's end, its arrival whole at the
    /// destination, and the firmware's next transmission programmed.
    fn lci_transmit(&mut self, h: u32, now: Instant, forward: bool) {
        let (pkt, bytes, next) = self.hosts[h as usize].nic.lanai_transmit(now, forward);
        let grid = self.wire.net.grid.as_mut().expect("a world that runs the LCI stack has a grid");
        let (left, arrive) = grid.send(h, pkt.dst, now, bytes);
        let (done, ready) = if forward { (FwEv::FwdDone, FwEv::FwdReady) } else { (FwEv::TxDone, FwEv::TxReady) };
        let (from, to) = (self.hosts[h as usize].nic.origin, self.hosts[pkt.dst as usize].nic.origin);
        if forward {
            self.lci_at_packet(left, from, h, pkt, fw_ev(h, done));
        } else {
            self.q.push(left, from, fw_ev(h, done)(0));
        }
        self.lci_at_packet(arrive, to, pkt.dst, pkt, fw_ev(pkt.dst, FwEv::Arrive));
        if let Some(t) = next {
            self.q.push(t, from, fw_ev(h, ready)(0));
        }
    }
}

/// A host's \[LCI] parts, which a world that runs the stack holds in every
/// host (`start_lci`).
const PARTS: &str = "a host of a world that runs the LCI stack has its library and its NI's firmware";

/// A host's \[LCI] parts, for the rules and the metrics.
impl HostState {
    pub(crate) fn lib(&mut self) -> &mut Lib {
        self.lci.as_deref_mut().expect(PARTS)
    }
    pub(crate) fn lib_ref(&self) -> &Lib {
        self.lci.as_deref().expect(PARTS)
    }
}

/// Event origins on the stack: host h's library 2h, its NI 2h + 1 (the NIC's
/// `origin`, which the world's build gives it).
fn host_origin(h: u32) -> Origin {
    2 * h
}
pub(super) fn ni_origin(h: u32) -> Origin {
    2 * h + 1
}

impl World {
    /// NI `h`'s firmware (its watchdog, a delivered packet) or its clock
    /// (`clock`) interrupts its host at `now`: a signal to its library.
    pub(super) fn lanai_signal(&mut self, now: Instant, h: usize) {
        let ev = Ev::LciLibrary { ev: LibEv::Signal, host: h as u16, arg: 0 };
        self.q.push(now, self.hosts[h].nic.origin, ev);
    }
}

/// The world's event for host `h`'s library, naming `arg` ([`LibEv`]).
fn lib_ev(h: u32, ev: LibEv) -> impl FnOnce(u32) -> Ev {
    move |arg| Ev::LciLibrary { ev, host: h as u16, arg }
}

/// The world's event for NI `h`'s firmware, naming `arg` ([`FwEv`]).
fn fw_ev(h: u32, ev: FwEv) -> impl FnOnce(u32) -> Ev {
    move |arg| Ev::Lanai { ev, host: h as u16, arg }
}
