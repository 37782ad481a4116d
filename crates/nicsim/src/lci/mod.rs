//! The \[LCI] stack (SPEC §2.4): the user-level library of the study's
//! Pentium Pro hosts, their 32-bit/33 MHz PCI buses and the firmware of
//! their programmable LANai 4.1 NIs, on a 3D grid of Myrinet switches.
//!
//! Its parts are components of the simulated world (`crate::sim::World`,
//! `protocol.stack = "lci"`), each with its own state: each host holds its
//! library (`crate::library::lci::Lib`, the second library beside the
//! Open-MX one: PIO sends, receive-buffer queue, polling, upcall, what a
//! signal does to its signalled core, its side of the multicast schemes),
//! beside the Open-MX processes; each host's NIC
//! holds the LANai firmware (`crate::nic::lanai`, [`Packet`]: buffers, DMA
//! engines, delivery plans, the multicast firmware's forwarding table and
//! forwards, the host's PCI bus `crate::host::bus`, the polling watchdog,
//! the NI clock, the NI's packet counters); the NIs send on the world's
//! network, the platform's grid (`crate::net::grid`, in the world's
//! `crate::net::Network`); the world's run holds the program the hosts run
//! ([`Running`]: [`workload`], [`process`]).
//!
//! This module owns the rules that act across a host and its NI or
//! between NIs ([`Cx`]), and the routing of what a host's library answers
//! (`Cx::lib`, `Cx::route`: its events queued, its PIO across its NI's
//! bus, what its program learns given to the program, the program's
//! sends and compute handed to the senders' libraries): the world lends
//! them its hosts (`crate::sim::HostState`, which hold the parts), its
//! grid, the program and its event queue for one event ([`Cx::event`]
//! calls the method of the event's kind), and the rules queue the world's
//! events (`crate::sim::Ev`) for the parts they address. They keep
//! nothing between events: no event type, event store or loop of their
//! own. The world's
//! stall watch (`crate::sim` `stall`) ends a run whose NIs sent and
//! delivered no packet for too long; the world names the run's metrics
//! from the parts' counters (`crate::sim` `metrics`). It also uses
//! `crate::nic::delivery` (the five arrival detection strategies, shared
//! with the Open-MX NIC). It has no kernel receive path and no NAPI: the
//! NI delivers into user memory, and an interrupt is a signal to the
//! process.
//!
//! One packet's life: the library's send path (CPU) -> `Write` (PIO of
//! header + payload + descriptor across the sender's bus) -> NI firmware
//! (`fw_tx_cycles` + one DMA set-up) -> the network DMA starts once the
//! receiving NI has a free receive buffer (Myrinet back-pressure) -> grid
//! (cut-through) -> receiving NI firmware (`fw_rx_cycles` + set-up) -> the
//! strategy's NI -> host DMA(s) on the receiver's bus -> visible to the
//! host -> poll + upcall + free.
//!
//! Multicast ([`multicast`]; the broadcast benchmark, a program of
//! `crate::workload` run by [`process`]): per-sender
//! spanning trees whose packets are forwarded by the host library or by
//! the NI firmware.
//!
//! Interrupts and timers (`docs/lci.md`): the host CPU modes and signal
//! delivery (`crate::host::core::SignalledCore`, acted on by the library),
//! the NI polling watchdog (`crate::nic::watchdog`,
//! shared with the Open-MX NIC), host soft timers and NI clock interrupts
//! (`crate::nic::timers`), the reliable
//! protocol (`crate::library::lci::reliable`), and the DSM ([`dsm`]) and FFT all-to-all
//! ([`process`], `Drive::Idle`) programs; the rules wire them with the
//! events after [`FwEv::RefreshDone`]; `crate::library::lci` holds what a program and
//! its library say to each other.
//!
//! Its events are the world's, each addressed to one part: host
//! `h`'s library (`crate::sim::Ev::LciLibrary`, a [`LibEv`]), NI `h`'s
//! firmware (`Ev::Lanai`, a [`FwEv`]), NI `h`'s watchdog and clock (the
//! Open-MX NIC's `Ev::WatchdogTimer`, `Ev::ClockTick`, `Ev::ClockFetched`),
//! each with one `u32`, a packet's index in that NI's store
//! (`crate::nic::lanai::Ni::packets`, bounded) or a generation. The world
//! hands each to [`Cx::event`] (`crate::sim` `lci_stack`), the rules queue
//! what they schedule as they go, in their order, and the world then asks
//! whether an NI's store
//! overflowed ([`Cx::full`]) or the program is done ([`Running::done`]).

pub mod dsm;
pub mod multicast;
pub mod process;
pub mod workload;

use crate::config::{lanai_ns, HostTimes, LciHostTimes, LciScenario, WatchdogDelay};
use crate::engine::{EventQueue, Origin};
use crate::host::bus::{Bus, BusOp};
pub use crate::library::lci::LibEv;
use crate::library::lci::Outgoing;
use crate::library::lci::{Cx as LibCx, HostMc, Lib, Output as LibOut};
use crate::net::grid::Grid;
use crate::nic::flow::Class;
pub use crate::nic::lanai::FwEv;
pub use crate::nic::lanai::Packet;
use crate::nic::lanai::{self, FwCosts, FwOut, Ni};
use crate::nic::watchdog::{Raises, Watchdog};
use crate::nic::{delivery as poll, timers};
use crate::sim::{Ev, HostState};
use crate::time::{Duration, Instant};
use crate::workload::Op;
use crate::SimError;
use process::Drive;
use workload::Job;

/// The program the hosts run, which the world's run holds: the job, and
/// the buffers its and the libraries' outputs are moved through (reused).
pub struct Running {
    job: Job,
    /// The program's sends being moved to the libraries.
    sends: Vec<(u32, Outgoing)>,
    /// The libraries' outputs being routed ([`Cx`]'s `lib`).
    outs: Vec<LibOut>,
    /// The firmware's outputs being routed ([`Cx::firmware`]).
    fw: Vec<FwOut>,
}

impl Running {
    /// Whether the program is done.
    pub fn done(&self) -> bool {
        self.job.done()
    }

    /// The running job (tests).
    #[cfg(test)]
    pub(crate) fn job(&self) -> &Job {
        &self.job
    }

    /// Whether a run that cannot progress is a result of the program (DSM
    /// and FFT: `stuck = 1`, `exec_time_s = NaN`, e.g. no interrupts and a
    /// sleeping home node) rather than an error.
    pub fn stuck_is_a_result(&self) -> bool {
        self.job.stuck_is_a_result()
    }

    /// The program's measurements and its multicast's counters, as the
    /// programs name them; `grid`'s links bound how fast a stream can go.
    pub(crate) fn metrics(&self, hs: &[HostState], grid: &Grid, m: &mut crate::Metrics) {
        if self.job.multicasts() {
            multicast::metrics(hs, &mut |k, v| m.set(k, v));
        }
        let spec = grid.spec();
        let link = crate::metrics::LinkBound {
            bytes_per_s: spec.bytes_per_s as f64,
            frame_extra_bytes: (hs[0].ni_ref().header() + spec.overhead_bytes) as u64,
            frame_payload: hs[0].lib_ref().packet_bytes() as u64,
        };
        self.job.metrics(m, &link);
    }
}

/// The parts of scenario `s` (each host's library, its NI's firmware),
/// for the world's hosts to hold, and the program they run.
pub fn build(s: &LciScenario) -> (Running, Vec<(Lib, Ni)>) {
    let (p, ni) = (&s.platform, &s.lanai);
    let costs = FwCosts::of(ni, s.nic_clock_mhz);
    let n = p.topology.hosts;
    let strategy = poll::Strategy::new(s.polling, s.split_bytes);
    let host = HostTimes::of(&p.host);
    let t = LciHostTimes::of(&s.lib, host.irq_entry, host.signal);
    let mc = HostMc::new(s.forwarding, s.fanout, n, s.lib.descriptor_bytes);
    let job = Job::new(&s.workload, n, s.seed);
    let upcall = job.upcall_driven();
    let hosts = (0..n).map(|h| {
        let mut lib = Lib::new(h, &s.lib, &t, strategy.detect(), p.link.mtu, ni.send_buffers, mc, upcall);
        if let Some(r) = s.protocol {
            lib.rel = Some(crate::library::lci::reliable::Reliable::new(n, r.send_buffers, r.ack_delay));
        }
        lib
    });
    // The fetch is priced on the PCI bus (`Ni::fetch_host_words`), not a fixed latency.
    let watchdog = match s.watchdog {
        WatchdogDelay::After(d) => Some(Watchdog::new(d, Duration::ZERO, Raises::Own)),
        WatchdogDelay::Immediate | WatchdogDelay::Never => None,
    };
    // Per child: the table lookup and header rewrite, then the network DMA's set-up.
    let fwd_cost = Duration::from_ns_f64(lanai_ns(s.nic_clock_mhz, ni.fw_forward_cycles + ni.dma_setup_cycles));
    let nis = (0..n).map(|h| {
        let mut nic = Ni::new(
            costs,
            strategy,
            ni.header_bytes,
            lanai::host_buffer_bytes(ni, p.link.mtu),
            s.lib.recv_buffers,
            ni.send_buffers,
            ni.recv_buffers,
            s.fanout,
            n,
            Bus::new(&s.bus),
            watchdog.clone(),
            s.watchdog == WatchdogDelay::Immediate,
            s.clock_period.map(|period| timers::ClockPolicy { period }),
        );
        mc.program_ni(&mut nic, h, fwd_cost);
        nic
    });
    let run = Running {
        job,
        sends: Vec::with_capacity(n as usize),
        outs: Vec::with_capacity(16),
        fw: Vec::with_capacity(16),
    };
    (run, hosts.zip(nis).collect())
}

/// Packet conservation over the world's NIs: no NI delivered more
/// packets than the NIs sent (every packet sent is delivered, or in an
/// NI queue, or on the wire).
pub(crate) fn check_invariants(hs: &[HostState]) -> Result<(), SimError> {
    let (sent, delivered) = packets(hs);
    if delivered > sent {
        return Err(SimError(format!("invariant: {sent} packets sent, {delivered} delivered")));
    }
    Ok(())
}

/// Packets the NIs sent and delivered so far (their counters summed).
pub(crate) fn packets(hs: &[HostState]) -> (u64, u64) {
    hs.iter().map(|x| x.ni_ref()).fold((0, 0), |(s, d), n| (s + n.packets_sent, d + n.delivered))
}

/// Why a program that could not go on (`stuck = 1`) has no execution time.
const STUCK: &str = "the program could not go on (stuck = 1): it never finished";

/// Event origins: host h = 2h, NI h = 2h + 1.
fn host_origin(h: u32) -> Origin {
    2 * h
}
fn ni_origin(h: u32) -> Origin {
    2 * h + 1
}

/// Queues what NI `h`'s firmware asked for at `now` as the world's event
/// for the part it is addressed to (a signal is its host library's; the
/// watchdog's and the clock's are the Open-MX NIC's events).
fn fw_due(q: &mut EventQueue<Ev>, h: u32, now: Instant, o: FwOut) {
    let host = h as u16;
    let (at, ev) = match o {
        FwOut::Fw(t, ev) => (t, Ev::Lanai { ev, host, arg: 0 }),
        FwOut::Watchdog(t, gen) => (t, Ev::WatchdogTimer { host, q: 0, gen }),
        FwOut::ClockTick(t) => (t, Ev::ClockTick { host }),
        FwOut::ClockFetched(t) => (t, Ev::ClockFetched { host }),
        FwOut::Signal => (now, Ev::LciLibrary { ev: LibEv::Signal, host, arg: 0 }),
        FwOut::Taken | FwOut::Transmit { .. } | FwOut::Delivered(_) | FwOut::BufferFreed => {
            unreachable!("{o:?} is done by the rules (Cx::firmware), not queued")
        }
    };
    q.push(at, ni_origin(h), ev);
}

/// The world's event for host `h`'s library, naming `arg` ([`LibEv`]).
fn lib_ev(h: u32, ev: LibEv) -> impl FnOnce(u32) -> Ev {
    move |arg| Ev::LciLibrary { ev, host: h as u16, arg }
}

/// The world's event for NI `h`'s firmware, naming `arg` ([`FwEv`]).
fn fw_ev(h: u32, ev: FwEv) -> impl FnOnce(u32) -> Ev {
    move |arg| Ev::Lanai { ev, host: h as u16, arg }
}

/// What the world lends the rules for one event: its hosts' parts, its
/// grid, the program and its event queue; and an NI whose packet store was
/// full when an event was to name one more ([`Cx::full`]: the run ends
/// with an error).
pub(crate) struct Cx<'a> {
    hs: &'a mut [HostState],
    grid: &'a mut Grid,
    prog: &'a mut Running,
    q: &'a mut EventQueue<Ev>,
    full: Option<u32>,
}

impl<'a> Cx<'a> {
    pub fn new(hs: &'a mut [HostState], grid: &'a mut Grid, prog: &'a mut Running, q: &'a mut EventQueue<Ev>) -> Self {
        Cx { hs, grid, prog, q, full: None }
    }

    /// Time zero: the programs' sends and compute; every host of the
    /// program enters the library (and starts polling); the others stay
    /// out of it.
    pub fn start(&mut self) {
        if let Job::Procs(p) = &self.prog.job {
            if p.drive == Drive::Upcall {
                for h in 0..p.procs.len() as u32 {
                    self.proceed(h, Instant::ZERO);
                }
            }
        }
        for h in 0..self.hs.len() as u32 {
            let runs = self.prog.job.participates(h);
            self.hs[h as usize].lib().start(runs);
            if !runs {
                continue;
            }
            if let Some(c) = self.hs[h as usize].ni().clock {
                self.q.push(Instant::ZERO + c.period, ni_origin(h), Ev::ClockTick { host: h as u16 });
            }
            self.lib(h, Instant::ZERO, Lib::next);
        }
    }

    /// The error of an event that would have named a packet past an NI's
    /// store, at `now`, if one did.
    pub fn full(&self, now: Instant) -> Option<SimError> {
        let h = self.full?;
        let cap = self.hs[h as usize].ni_ref().packets.bound();
        Some(SimError(format!(
            "NI {h} holds more packets in flight than its buffers allow ({cap}: send_buffers + 1 + \
             recv_buffers * (1 + fanout)) at {} us",
            now.as_us_f64()
        )))
    }

    /// Dispatches one event of the stack's parts to the method of its
    /// kind: a library's, a firmware's, and the watchdog's and clock's
    /// events the Open-MX NIC's share.
    pub fn event(&mut self, now: Instant, ev: Ev) {
        match ev {
            Ev::LciLibrary { ev, host, arg } => self.library(u32::from(host), ev, arg, now),
            Ev::Lanai { ev, host, arg } => self.firmware(u32::from(host), ev, arg, now),
            Ev::WatchdogTimer { host, gen, .. } => self.watchdog(u32::from(host), gen, now),
            Ev::ClockTick { host } => self.clock_tick(u32::from(host), now),
            Ev::ClockFetched { host } => self.clock_fetched(u32::from(host), now),
            _ => unreachable!("{ev:?} is not an event of the LCI stack"),
        }
    }

    /// Queues the event `ev` names `pkt` with, `pkt` held in NI `h`'s
    /// store until the event is handled; a full store ends the run instead.
    fn at_packet(&mut self, t: Instant, origin: Origin, h: u32, pkt: Packet, ev: impl FnOnce(u32) -> Ev) {
        match self.hs[h as usize].ni().packets.put(pkt) {
            Some(id) => self.q.push(t, origin, ev(id)),
            None => {
                self.full.get_or_insert(h);
            }
        }
    }

    /// The packet an event of NI `h` named, given back to its store.
    fn take_packet(&mut self, h: u32, id: u32) -> Packet {
        self.hs[h as usize].ni().packets.take(id)
    }

    /// Calls host `h`'s library at `now` (`f`), then routes what it asked
    /// for, in its order (a call made while routing appends its outputs
    /// past these and routes them before it returns).
    fn lib(&mut self, h: u32, now: Instant, f: impl FnOnce(&mut Lib, &mut LibCx<'_>)) {
        let mark = self.prog.outs.len();
        f(self.hs[h as usize].lib(), &mut LibCx { now, out: &mut self.prog.outs });
        let mut i = mark;
        while let Some(&o) = self.prog.outs.get(i) {
            self.route(h, now, o);
            i += 1;
        }
        self.prog.outs.truncate(mark);
    }

    /// Does what host `h`'s library asked for at `now`: its events are
    /// queued, its PIO goes across its NI's bus, what its program learns
    /// goes to the program.
    fn route(&mut self, h: u32, now: Instant, o: LibOut) {
        let o_h = host_origin(h);
        match o {
            LibOut::At { at, ev, arg } => self.q.push(at, o_h, lib_ev(h, ev)(arg)),
            LibOut::AtPacket { at, ev, pkt } => self.at_packet(at, o_h, h, pkt, lib_ev(h, ev)),
            LibOut::PioRead { then, pkt } => {
                let (_, end) = self.hs[h as usize].ni().bus.request(now, BusOp::PioRead);
                match pkt {
                    Some(pkt) => self.at_packet(end, o_h, h, pkt, lib_ev(h, then)),
                    None => self.q.push(end, o_h, lib_ev(h, then)(0)),
                }
            }
            LibOut::PioWrite { pkt, bytes } => {
                let ni = self.hs[h as usize].ni();
                ni.packets_sent += 1;
                let (_, end) = ni.bus.request(now, BusOp::PioWrite { bytes: ni.header() + bytes });
                self.at_packet(end, o_h, h, pkt, fw_ev(h, FwEv::Posted));
            }
            LibOut::Message { src, tag } => {
                self.prog.job.on_message(h, src, tag);
                self.flush_sends(now);
            }
            LibOut::Arrived { from, tag, at } => {
                let go_on = match &mut self.prog.job {
                    Job::Procs(p) => p.arrived(h, from, tag),
                    Job::Dsm(_) => false,
                };
                // A sender that waited for the message to reach every host.
                while let Some(s) = self.prog.job.take_woken() {
                    self.proceed(s, at);
                }
                if go_on {
                    self.proceed(h, at);
                }
            }
            LibOut::Idle => {
                let c = self.prog.job.control(h, now);
                if self.flush_sends(now) && self.hs[h as usize].lib_ref().has_sends() {
                    self.lib(h, now, Lib::next);
                } else {
                    self.lib(h, now, |l, cx| l.control(cx, c));
                }
            }
            LibOut::ComputeDone => self.prog.job.compute_done(h),
        }
    }

    /// Runs host `h`'s process (a program its upcalls drive) at `now`
    /// until it waits: its sends and broadcasts go to the host's library,
    /// its compute waits there for them to be written.
    fn proceed(&mut self, h: u32, now: Instant) {
        let Job::Procs(p) = &mut self.prog.job else { return };
        debug_assert_eq!(p.drive, Drive::Upcall);
        let lib = self.hs[h as usize].lib();
        loop {
            match p.next(h, now) {
                Some(Op::Send { peer, size, tag }) => {
                    lib.submit(Outgoing { dst: p.host(peer), size, count: 1, bcast: None, tag })
                }
                Some(Op::Mcast { size, tag }) => lib.bcast(size, tag),
                Some(Op::Compute(d)) => {
                    lib.compute_after_sends(d);
                    break;
                }
                _ => break,
            }
        }
        self.lib(h, now, Lib::wake);
    }

    /// Moves the program's new messages to the senders' libraries, waking
    /// a sender that spins in the library. Returns whether there were any.
    fn flush_sends(&mut self, now: Instant) -> bool {
        let mut sends = std::mem::take(&mut self.prog.sends);
        self.prog.job.drain_sends(&mut sends);
        let any = !sends.is_empty();
        for (from, o) in sends.drain(..) {
            self.hs[from as usize].lib().submit(o);
            self.lib(from, now, Lib::wake);
        }
        self.prog.sends = sends;
        any
    }

    /// Host `h`'s library event `ev` (`arg`: a packet of NI `h`'s store or
    /// a generation, [`LibEv`]).
    fn library(&mut self, h: u32, ev: LibEv, arg: u32, now: Instant) {
        match ev {
            LibEv::Done => self.lib(h, now, Lib::done),
            LibEv::Write => self.lib(h, now, Lib::write_pending),
            LibEv::PollDone => {
                let d = self.hs[h as usize].ni_ref().delivered;
                self.lib(h, now, |l, cx| l.poll_done(cx, d));
            }
            LibEv::SendCounterDone => {
                let sent = self.hs[h as usize].ni_ref().sent;
                self.lib(h, now, |l, cx| l.send_counter_done(cx, sent));
            }
            LibEv::McForward => {
                let pkt = self.take_packet(h, arg);
                self.lib(h, now, |l, cx| l.mc_forward(cx, pkt));
            }
            LibEv::McSendCounterDone => {
                let pkt = self.take_packet(h, arg);
                let sent = self.hs[h as usize].ni_ref().sent;
                self.lib(h, now, |l, cx| l.mc_send_counter_done(cx, pkt, sent));
            }
            LibEv::McWrite => {
                let pkt = self.take_packet(h, arg);
                self.lib(h, now, |l, cx| l.mc_write(cx, pkt));
            }
            LibEv::McComputeDone => {
                self.hs[h as usize].lib().mc_compute_done();
                if let Job::Procs(p) = &mut self.prog.job {
                    p.procs[h as usize].compute_done();
                }
                self.proceed(h, now);
                self.lib(h, now, Lib::next);
            }
            LibEv::ComputeDone => self.lib(h, now, |l, cx| l.compute_done(cx, arg)),
            LibEv::Signal => self.lib(h, now, Lib::signal),
            LibEv::SoftTimer => self.lib(h, now, Lib::wake),
        }
    }

    /// NI `h`'s firmware event `ev` (`arg`: a packet of its store, [`FwEv`]):
    /// the firmware's ([`Ni::event`], reading its host's processed
    /// counter); what it asks for is done in its order.
    fn firmware(&mut self, h: u32, ev: FwEv, arg: u32, now: Instant) {
        let consumed = self.hs[h as usize].lib_ref().consumed();
        let mark = self.prog.fw.len();
        let fw = &mut self.prog.fw;
        self.hs[h as usize].ni().event(now, ev, arg, consumed, &mut |o| fw.push(o));
        let mut i = mark;
        while let Some(&o) = self.prog.fw.get(i) {
            match o {
                FwOut::Taken => self.lib(h, now, Lib::done),
                FwOut::Transmit { forward } => self.try_transmit(h, now, forward),
                FwOut::Delivered(pkt) => self.lib(h, now, |l, cx| l.deliver(cx, pkt)),
                FwOut::BufferFreed => self.buffer_freed(h, now),
                o => fw_due(self.q, h, now, o),
            }
            i += 1;
        }
        self.prog.fw.truncate(mark);
    }

    /// NI `h`'s watchdog event of generation `gen` (the
    /// NI's, [`Ni::watchdog_event`], reading its host's flag and counter).
    fn watchdog(&mut self, h: u32, gen: u32, now: Instant) {
        let lib = self.hs[h as usize].lib_ref();
        let words = (lib.irq_enabled(), lib.consumed());
        let q = &mut *self.q;
        self.hs[h as usize].ni().watchdog_event(now, gen, words, &mut |o| fw_due(q, h, now, o));
    }

    /// NI `h`'s clock ticks (the NI's, [`Ni::clock_tick`]).
    fn clock_tick(&mut self, h: u32, now: Instant) {
        let q = &mut *self.q;
        self.hs[h as usize].ni().clock_tick(now, &mut |o| fw_due(q, h, now, o));
    }

    /// NI `h`'s clock read its host's timer words, and
    /// interrupts it if a timer is due that the host has not polled.
    fn clock_fetched(&mut self, h: u32, now: Instant) {
        let (running, polled) = self.hs[h as usize].lib_ref().timer_words(now);
        let ni = self.hs[h as usize].ni();
        let Some(c) = ni.clock else { return };
        if c.on_fetch(now, running, polled) == timers::Tick::Interrupt {
            ni.clock_interrupts += 1;
            self.lib(h, now, Lib::signal);
        }
    }

    /// A receive buffer of NI `h` may be free: the waiting heads it goes
    /// to leave, in the order its credits grant them (`crate::nic::flow::Credits::grant`).
    fn buffer_freed(&mut self, h: u32, now: Instant) {
        while let Some((s, class)) = self.hs[h as usize].ni().credits.grant() {
            self.transmit(s, now, class == Class::Forward);
        }
    }

    /// NI `h` transmits its head descriptor (`forward`: its programmed head
    /// forward, `multicast`) if the destination NI reserves it a receive
    /// buffer; otherwise the head waits there (Myrinet back-pressure,
    /// `crate::nic::flow::Credits::reserve`) and leaves when granted one (`buffer_freed`),
    /// a forwarding NI still holding its own.
    fn try_transmit(&mut self, h: u32, now: Instant, forward: bool) {
        let ni = self.hs[h as usize].ni();
        let head = if forward { ni.mc.fwd_queue.front().filter(|_| ni.mc.fwd_ready) } else { ni.tx_queue.front() };
        let Some(&Packet { dst, .. }) = head else { return };
        let class = if forward { Class::Forward } else { Class::Send };
        if self.hs[dst as usize].ni().credits.reserve(h, class) {
            self.transmit(h, now, forward);
        }
    }

    /// NI `h`'s head (`forward`: its head forward), which holds a receive
    /// buffer of its destination NI, leaves on the grid.
    fn transmit(&mut self, h: u32, now: Instant, forward: bool) {
        let ni = self.hs[h as usize].ni();
        let pkt = if forward { ni.fwd_started(now) } else { ni.tx_started() };
        let dst = pkt.dst;
        let (left, arrive) = self.grid.send(h, dst, now, ni.header() + pkt.payload);
        if forward {
            ni.packets_sent += 1;
            self.at_packet(left, ni_origin(h), h, pkt, fw_ev(h, FwEv::FwdDone));
        } else {
            self.q.push(left, ni_origin(h), fw_ev(h, FwEv::TxDone)(0));
        }
        self.at_packet(arrive, ni_origin(dst), dst, pkt, fw_ev(dst, FwEv::Arrive));
        let ni = self.hs[h as usize].ni();
        let (next, ev) = if forward { (ni.fwd_kick(now), FwEv::FwdReady) } else { (ni.tx_kick(now), FwEv::TxReady) };
        if let Some(t) = next {
            self.q.push(t, ni_origin(h), fw_ev(h, ev)(0));
        }
    }
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod mc_tests;
