//! The \[LCI] stack (SPEC §2.4): the user-level library of the study's
//! Pentium Pro hosts, their 32-bit/33 MHz PCI buses and the firmware of
//! their programmable LANai 4.1 NIs, on a 3D grid of Myrinet switches.
//!
//! Its parts are components of the simulated world (`crate::sim::World`,
//! `protocol.stack = "lci"`), each with its own state: each host holds its
//! library ([`host`]: PIO sends, receive-buffer queue, polling, upcall, its
//! signalled core, its side of the multicast schemes
//! [`host::HostMc`]), beside the Open-MX processes; each host's NIC
//! holds the LANai firmware (`crate::nic::lanai`, [`Packet`]: buffers, DMA
//! engines, delivery plans, the multicast firmware's forwarding table and
//! forwards, the host's PCI bus `crate::host::bus`, the polling watchdog,
//! the NI clock, the NI's packet counters); the NIs send on the world's
//! network, the platform's grid (`crate::net::grid`, in the world's
//! `crate::net::Network`); the world's run holds the program the hosts run
//! ([`Running`]: [`workload`], [`process`]).
//!
//! This module owns the rules that act across a host and its NI or
//! between NIs ([`Cx`]): the world lends them its hosts' parts
//! ([`Parts`]), its grid, the program and its event queue ([`Queue`]) for
//! one event, calls the method of the event's kind, and the rules answer
//! with the events they schedule, each addressed to one part ([`Due`],
//! [`To`]), which the world queues as its own. They keep nothing between
//! events: no event type, event store or loop of their own. The world's
//! stall watch (`crate::sim` `stall`) ends a run whose NIs sent and
//! delivered no packet for too long; the world names the run's metrics
//! from the parts' counters (`crate::sim` `metrics`). It also uses
//! `crate::nic::delivery` (the five arrival detection strategies, shared
//! with the Open-MX NIC). It has no kernel receive path and no NAPI: the
//! NI delivers into user memory, and an interrupt is a signal to the
//! process.
//!
//! One packet's life: host `SendPath` (library CPU) -> `Write` (PIO of
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
//! delivery ([`cpu`]), the NI polling watchdog (`crate::nic::watchdog`,
//! shared with the Open-MX NIC), host soft timers and NI clock interrupts
//! (`crate::nic::timers`), the reliable
//! protocol ([`reliable`]), and the DSM ([`dsm`]) and FFT all-to-all
//! ([`process`], `Drive::Idle`) programs; the rules wire them with the
//! events after [`FwEv::RefreshDone`].
//!
//! Its events are the world's, each addressed to one part ([`To`]): host
//! `h`'s library (`crate::sim::Ev::LciLibrary`, a [`LibEv`]), NI `h`'s
//! firmware (`Ev::Lanai`, a [`FwEv`]), NI `h`'s watchdog and clock (the
//! Open-MX NIC's `Ev::WatchdogTimer`, `Ev::ClockTick`, `Ev::ClockFetched`),
//! each with one `u32`, a packet's index in that NI's store
//! ([`lanai::Packets`], bounded) or a generation. The world routes each to
//! the method of its kind (`crate::sim` `lci_stack`), queues what it
//! scheduled as it goes, in its order, and then asks whether an NI's store
//! overflowed ([`Cx::full`]) or the program is done ([`Running::done`]).

pub mod cpu;
pub mod dsm;
pub mod host;
pub mod multicast;
pub mod process;
pub mod reliable;
pub mod workload;

use crate::config::{lanai_ns, HostTimes, LciHostTimes, LciScenario, WatchdogDelay};
use crate::engine::Origin;
use crate::host::bus::{Bus, BusOp};
use crate::net::grid::Grid;
pub use crate::nic::lanai::FwEv;
pub use crate::nic::lanai::Packet;
use crate::nic::lanai::{self, FwCosts, FwOut, Ni, RxNext};
use crate::nic::watchdog::{Raises, Watchdog};
use crate::nic::{delivery as poll, timers};
use crate::time::{Duration, Instant};
use crate::SimError;
pub use host::LibEv;
use host::{Host, HostAction, HostMc};
use workload::Job;

/// The component an event the rules scheduled is addressed to, and what
/// it is: host `h`'s library ([`LibEv`]), NI `h`'s LANai firmware
/// ([`FwEv`]), NI `h`'s polling watchdog (its timer's expiry or its fetch
/// of the host's words, told apart by the generation in `Due::arg`, as the
/// Open-MX queue's), or NI `h`'s clock (a tick, the tick's fetch). The
/// world queues each as its own event for that component
/// (`crate::sim` `lci_stack`): `Ev::LciLibrary`, `Ev::Lanai`, and the
/// watchdog's and clock's events the Open-MX NIC's share
/// (`Ev::WatchdogTimer`, `Ev::ClockTick`, `Ev::ClockFetched`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum To {
    Library(LibEv),
    Firmware(FwEv),
    Watchdog,
    ClockTick,
    ClockFetched,
}

/// An event the rules scheduled, for the world to queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    pub at: Instant,
    pub origin: Origin,
    pub to: To,
    /// The host or NI (at most `config::MAX_HOSTS`, 1,024: a `u16`).
    pub host: u16,
    /// A packet of NI `host`'s store or a generation (see [`LibEv`],
    /// [`FwEv`], [`To::Watchdog`]), 0 otherwise.
    pub arg: u32,
}

/// Where the world keeps host `h`'s LCI parts: its library ([`Host`],
/// beside the host's Open-MX processes) and its NI's LANai firmware
/// ([`Ni`], a firmware of the host's NIC, with the host's PCI bus). The
/// rules reach them through this, in the slice of the world's hosts
/// (`crate::sim` implements it for its host state).
pub trait Parts {
    fn lib(&mut self) -> &mut Host;
    fn ni(&mut self) -> &mut Ni;
    fn lib_ref(&self) -> &Host;
    fn ni_ref(&self) -> &Ni;
    /// The library and the NI at once.
    fn both(&mut self) -> (&mut Host, &mut Ni);
}

/// The world's event queue, as the rules see it: each event they
/// schedule is queued at once, in their order, as the world's event for
/// the part it is addressed to.
pub trait Queue {
    fn schedule(&mut self, d: Due);
}

/// The program the hosts run, which the world's run holds: the job, and
/// the buffers its outputs are moved through (reused).
pub struct Running {
    job: Job,
    /// The program's sends being moved to the outboxes.
    sends: Vec<(u32, host::Outgoing)>,
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
    pub fn metrics(&self, hs: &[impl Parts], grid: &Grid, m: &mut crate::Metrics) {
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
/// for the world to hold ([`Parts`]), and the program they run.
pub fn build(s: &LciScenario) -> (Running, Vec<(Host, Ni)>) {
    let (p, ni) = (&s.platform, &s.lanai);
    let costs = FwCosts::of(ni, s.nic_clock_mhz);
    let n = p.topology.hosts;
    let strategy = poll::Strategy::new(s.polling, s.split_bytes);
    let host = HostTimes::of(&p.host);
    let t = LciHostTimes::of(&s.lib, host.irq_entry, host.signal);
    let mc = HostMc::new(s.forwarding, s.fanout, n, s.lib.descriptor_bytes);
    let hosts = (0..n).map(|h| {
        let mut lib = Host::new(h, &s.lib, &t, strategy.detect(), p.link.mtu, ni.send_buffers, mc);
        if let Some(r) = s.protocol {
            lib.rel = Some(reliable::Reliable::new(n, r.send_buffers, r.ack_delay));
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
            Bus::new(&s.bus),
            watchdog.clone(),
            s.watchdog == WatchdogDelay::Immediate,
            s.clock_period.map(|period| timers::ClockPolicy { period }),
        );
        mc.program_ni(&mut nic, h, fwd_cost);
        nic
    });
    let run = Running { job: Job::new(&s.workload, n, s.seed), sends: Vec::with_capacity(n as usize) };
    (run, hosts.zip(nis).collect())
}

/// Packet conservation over the world's NIs: no NI delivered more
/// packets than the NIs sent (every packet sent is delivered, or in an
/// NI queue, or on the wire).
pub fn check_invariants(hs: &[impl Parts]) -> Result<(), SimError> {
    let (sent, delivered) = packets(hs);
    if delivered > sent {
        return Err(SimError(format!("invariant: {sent} packets sent, {delivered} delivered")));
    }
    Ok(())
}

/// Packets the NIs sent and delivered so far (their counters summed).
pub fn packets(hs: &[impl Parts]) -> (u64, u64) {
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

/// Queues what NI `h`'s firmware asked for at `now` as the event of the
/// part it is addressed to (a signal is its host library's).
fn fw_due(q: &mut impl Queue, h: u32, now: Instant, o: FwOut) {
    let (at, to, arg) = match o {
        FwOut::Fw(t, ev) => (t, To::Firmware(ev), 0),
        FwOut::Watchdog(t, gen) => (t, To::Watchdog, gen),
        FwOut::ClockTick(t) => (t, To::ClockTick, 0),
        FwOut::ClockFetched(t) => (t, To::ClockFetched, 0),
        FwOut::Signal => (now, To::Library(LibEv::Signal), 0),
    };
    q.schedule(Due { at, origin: ni_origin(h), to, host: h as u16, arg });
}

/// What the world lends the rules for one event: its hosts' parts, its
/// grid, the program and its event queue; and an NI whose packet store was
/// full when an event was to name one more ([`Cx::full`]: the run ends
/// with an error).
pub struct Cx<'a, P, Q> {
    hs: &'a mut [P],
    grid: &'a mut Grid,
    prog: &'a mut Running,
    q: &'a mut Q,
    full: Option<u32>,
}

impl<'a, P: Parts, Q: Queue> Cx<'a, P, Q> {
    pub fn new(hs: &'a mut [P], grid: &'a mut Grid, prog: &'a mut Running, q: &'a mut Q) -> Self {
        Cx { hs, grid, prog, q, full: None }
    }

    /// Time zero: every host of the program enters the library (and starts
    /// polling); the others stay out of it.
    pub fn start(&mut self) {
        self.mc_start(Instant::ZERO);
        for h in 0..self.hs.len() as u32 {
            if !self.prog.job.participates(h) {
                self.hs[h as usize].lib().core.sleep();
                continue;
            }
            // The library runs with interrupts disabled.
            self.hs[h as usize].lib().irq_enabled = false;
            if let Some(c) = self.hs[h as usize].ni().clock {
                self.at(Instant::ZERO + c.period, ni_origin(h), To::ClockTick, h, 0);
            }
            self.host_next(h, Instant::ZERO);
        }
    }

    /// The error of an event that would have named a packet past an NI's
    /// store, at `now`, if one did.
    pub fn full(&self, now: Instant) -> Option<SimError> {
        let h = self.full?;
        let cap = self.hs[h as usize].ni_ref().packets.capacity();
        Some(SimError(format!(
            "NI {h} holds more packets in flight than its buffers allow ({cap}: send_buffers + 1 + \
             recv_buffers * (1 + fanout)) at {} us",
            now.as_us_f64()
        )))
    }

    /// Schedules an event for host or NI `h`'s component `to` at `t`.
    fn at(&mut self, t: Instant, origin: Origin, to: To, h: u32, arg: u32) {
        self.q.schedule(Due { at: t, origin, to, host: h as u16, arg });
    }

    /// Schedules an event for `to` naming `pkt`, held in NI `h`'s store
    /// until the event is handled; a full store ends the run instead.
    fn at_packet(&mut self, t: Instant, origin: Origin, to: To, h: u32, pkt: Packet) {
        match self.hs[h as usize].ni().packets.put(pkt) {
            Some(id) => self.at(t, origin, to, h, id),
            None => {
                self.full.get_or_insert(h);
            }
        }
    }

    /// The packet an event of NI `h` named, given back to its store.
    fn take_packet(&mut self, h: u32, id: u32) -> Packet {
        self.hs[h as usize].ni().packets.take(id)
    }

    /// Lets host `h` take its next action if it is free.
    fn host_next(&mut self, h: u32, now: Instant) {
        let host = self.hs[h as usize].lib();
        if host.busy || host.spin_since.is_some() || !host.core.in_library() {
            return;
        }
        if self.mc_compute(h, now) {
            return;
        }
        let host = self.hs[h as usize].lib();
        let o = host_origin(h);
        let stolen = host.core.take_owed();
        if !stolen.is_zero() {
            host.busy = true;
            self.at(now + stolen, o, To::Library(LibEv::Done), h, 0);
            return;
        }
        let action = host.next_action(now);
        if matches!(action, HostAction::Spin | HostAction::PollNi) && self.library_idle(h, now) {
            return;
        }
        let host = self.hs[h as usize].lib();
        match action {
            HostAction::Consume { pkt, cost } => {
                host.busy = true;
                let done = now + cost;
                if pkt.last && !pkt.ack_only {
                    self.prog.job.on_message(h, pkt.src, pkt.tag);
                    self.flush_sends(now);
                }
                if self.mc_consumed(h, pkt, done) {
                    return;
                }
                self.at(done, o, To::Library(LibEv::Done), h, 0);
            }
            HostAction::PollNi => {
                host.busy = true;
                let (_, end) = self.hs[h as usize].ni().bus.request(now, BusOp::PioRead);
                self.at(end, o, To::Library(LibEv::PollDone), h, 0);
            }
            HostAction::SendPath => {
                host.busy = true;
                let t = now + host.send_cost;
                self.at(t, o, To::Library(LibEv::Write), h, 0);
            }
            HostAction::Write(pkt) => {
                host.busy = true;
                self.write(h, now, pkt);
            }
            HostAction::ReadSendCounter => {
                host.busy = true;
                let (_, end) = self.hs[h as usize].ni().bus.request(now, BusOp::PioRead);
                self.at(end, o, To::Library(LibEv::SendCounterDone), h, 0);
            }
            HostAction::Spin => {
                host.spin_since = Some(now);
                if let Some(t) = host.rel.as_ref().and_then(|r| r.timers.next()) {
                    self.at(t.max(now), o, To::Library(LibEv::SoftTimer), h, 0);
                }
            }
        }
    }

    /// PIO write of header + payload, then the descriptor word.
    fn write(&mut self, h: u32, now: Instant, pkt: Packet) {
        let host = self.hs[h as usize].lib();
        host.posted += 1;
        host.packets_sent += 1;
        let bytes = pkt.payload + poll::FLAG_BYTES + host.mc.extra_pio_bytes(h, &pkt);
        let ni = self.hs[h as usize].ni();
        ni.packets_sent += 1;
        let (_, end) = ni.bus.request(now, BusOp::PioWrite { bytes: ni.header() + bytes });
        self.at_packet(end, host_origin(h), To::Firmware(FwEv::Posted), h, pkt);
    }

    /// `LibEv::Done`.
    pub fn host_done(&mut self, h: u32, now: Instant) {
        self.hs[h as usize].lib().busy = false;
        self.host_next(h, now);
    }

    /// `LibEv::Write`.
    pub fn host_write(&mut self, h: u32, now: Instant) {
        let host = self.hs[h as usize].lib();
        let pkt = host.pending.take().expect("HostWrite without a packet");
        self.write(h, now, pkt);
    }

    /// `LibEv::PollDone`.
    pub fn poll_done(&mut self, h: u32, now: Instant) {
        let d = self.hs[h as usize].ni().delivered;
        let host = self.hs[h as usize].lib();
        if d == host.known_delivered {
            host.polls_failed += 1;
        }
        host.known_delivered = d;
        host.busy = false;
        self.host_next(h, now);
    }

    /// `LibEv::SendCounterDone`.
    pub fn send_counter_done(&mut self, h: u32, now: Instant) {
        let sent = self.hs[h as usize].ni().sent;
        let host = self.hs[h as usize].lib();
        host.known_sent = sent;
        host.busy = false;
        self.host_next(h, now);
    }

    /// `FwEv::Posted`: packet `id` of NI `h`.
    pub fn posted(&mut self, h: u32, id: u32, now: Instant) {
        let pkt = self.take_packet(h, id);
        // The host is free once its PIO write is done.
        self.hs[h as usize].lib().busy = false;
        if let Some(t) = self.mc_post(h, now, pkt) {
            self.at(t, ni_origin(h), To::Firmware(FwEv::TxReady), h, 0);
        }
        self.host_next(h, now);
    }

    /// `FwEv::TxReady`.
    pub fn tx_ready(&mut self, h: u32, now: Instant) {
        self.try_transmit(h, now, false);
    }

    /// `FwEv::TxDone`.
    pub fn tx_done(&mut self, h: u32) {
        self.hs[h as usize].ni().tx_done();
    }

    /// `FwEv::Arrive`: packet `id` of NI `h` (the NI's, [`Ni::arrive`]).
    pub fn arrive(&mut self, h: u32, id: u32, now: Instant) {
        let q = &mut *self.q;
        self.hs[h as usize].ni().arrive(now, id, &mut |o| fw_due(q, h, now, o));
    }

    /// `FwEv::RxStep`.
    pub fn rx_step(&mut self, h: u32, now: Instant) {
        match self.hs[h as usize].ni().rx_step(now) {
            RxNext::Step(t) => self.at(t, ni_origin(h), To::Firmware(FwEv::RxStep), h, 0),
            RxNext::Delivered(pkt) => {
                let host = self.hs[h as usize].lib();
                host.visible.push_back(pkt);
                if host.spin_since.is_some() {
                    host.end_spin(now);
                    self.host_next(h, now);
                }
                self.buffer_freed(h, now);
                self.rx_kick(h, now);
                let ni = self.hs[h as usize].ni();
                if ni.irq_per_packet {
                    ni.packet_irqs += 1;
                    self.at(now, ni_origin(h), To::Library(LibEv::Signal), h, 0);
                }
            }
        }
    }

    /// `FwEv::RefreshDma`.
    pub fn refresh_dma(&mut self, h: u32, now: Instant) {
        let t = self.hs[h as usize].ni().refresh_dma(now);
        self.at(t, ni_origin(h), To::Firmware(FwEv::RefreshDone), h, 0);
    }

    /// `FwEv::RefreshDone`: NI `h` learns what its host consumed.
    pub fn refresh_done(&mut self, h: u32, now: Instant) {
        let (host, ni) = self.hs[h as usize].both();
        let q = &mut *self.q;
        ni.refresh_done(now, host.consumed, &mut |o| fw_due(q, h, now, o));
    }

    /// NI `h`'s watchdog event of generation `gen` (`To::Watchdog`; the
    /// NI's, [`Ni::watchdog_event`], reading its host's flag and counter).
    pub fn watchdog(&mut self, h: u32, gen: u32, now: Instant) {
        let (host, ni) = self.hs[h as usize].both();
        let q = &mut *self.q;
        ni.watchdog_event(now, gen, (host.irq_enabled, host.consumed), &mut |o| fw_due(q, h, now, o));
    }

    /// `To::ClockTick` (the NI's, [`Ni::clock_tick`]).
    pub fn clock_tick(&mut self, h: u32, now: Instant) {
        let q = &mut *self.q;
        self.hs[h as usize].ni().clock_tick(now, &mut |o| fw_due(q, h, now, o));
    }

    /// `To::ClockFetched`.
    pub fn clock_fetched(&mut self, h: u32, now: Instant) {
        let (host, ni) = self.hs[h as usize].both();
        let Some(c) = ni.clock else { return };
        let running = host.rel.as_ref().is_some_and(|r| r.timers.running());
        // The library polls the cycle counter on every entry, so a host
        // in it has just polled; otherwise its last entry counts.
        let polled = if host.core.in_library() { now } else { host.last_poll };
        if c.on_fetch(now, running, polled) == timers::Tick::Interrupt {
            ni.clock_interrupts += 1;
            self.signal(h, now);
        }
    }

    /// `LibEv::SoftTimer`.
    pub fn soft_timer(&mut self, h: u32, now: Instant) {
        let host = self.hs[h as usize].lib();
        if host.spin_since.is_some() {
            host.end_spin(now);
            self.host_next(h, now);
        }
    }

    /// Moves the program's new messages to the senders' outboxes, waking a
    /// sender that spins in the library. Returns whether there were any.
    fn flush_sends(&mut self, now: Instant) -> bool {
        let mut sends = std::mem::take(&mut self.prog.sends);
        self.prog.job.drain_sends(&mut sends);
        let any = !sends.is_empty();
        for (from, o) in sends.drain(..) {
            let host = self.hs[from as usize].lib();
            host.outbox.push_back(o);
            if host.spin_since.is_some() {
                host.end_spin(now);
                self.host_next(from, now);
            }
        }
        self.prog.sends = sends;
        any
    }

    /// Starts NI `h`'s next delivery, or a fetch of the host counter if the
    /// host queue looks full ([`Ni::rx_next`]).
    fn rx_kick(&mut self, h: u32, now: Instant) {
        let q = &mut *self.q;
        self.hs[h as usize].ni().rx_next(now, &mut |o| fw_due(q, h, now, o));
    }

    /// NI `h` transmits its head descriptor (`forward`: its programmed head
    /// forward, `multicast`) if the destination NI has a free receive
    /// buffer; otherwise it waits for one (Myrinet back-pressure: it is
    /// queued once at that NI, `Ni::waiting`, and retries when a
    /// buffer frees, `buffer_freed`), a forwarding NI still holding its own.
    fn try_transmit(&mut self, h: u32, now: Instant, forward: bool) {
        let ni = self.hs[h as usize].ni();
        let head = if forward { ni.mc.fwd_queue.front().filter(|_| ni.mc.fwd_ready) } else { ni.tx_queue.front() };
        let Some(&Packet { dst, .. }) = head else { return };
        if self.hs[dst as usize].ni().rx_free == 0 {
            let waiting = self.hs[dst as usize].ni().waiting(forward);
            if !waiting.contains(&h) {
                waiting.push(h);
                if forward {
                    self.hs[h as usize].ni().mc.fwd_waits += 1;
                }
            }
            return;
        }
        self.hs[dst as usize].ni().rx_free -= 1;
        let ni = self.hs[h as usize].ni();
        let pkt = if forward { ni.fwd_started(now) } else { ni.tx_started() };
        let (left, arrive) = self.grid.send(h, dst, now, ni.header() + pkt.payload);
        if forward {
            ni.packets_sent += 1;
            self.at_packet(left, ni_origin(h), To::Firmware(FwEv::FwdDone), h, pkt);
        } else {
            self.at(left, ni_origin(h), To::Firmware(FwEv::TxDone), h, 0);
        }
        self.at_packet(arrive, ni_origin(dst), To::Firmware(FwEv::Arrive), dst, pkt);
        let ni = self.hs[h as usize].ni();
        let (next, to) = if forward {
            (ni.fwd_kick(now), To::Firmware(FwEv::FwdReady))
        } else {
            (ni.tx_kick(now), To::Firmware(FwEv::TxReady))
        };
        if let Some(t) = next {
            self.at(t, ni_origin(h), to, h, 0);
        }
    }
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod mc_tests;
