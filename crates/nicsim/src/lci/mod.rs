//! The \[LCI] stack (SPEC §2.4): the user-level library of the study's
//! Pentium Pro hosts, their 32-bit/33 MHz PCI buses and the firmware of
//! their programmable LANai 4.1 NIs, on a 3D grid of Myrinet switches.
//!
//! Each host of the simulated world (`crate::sim::World`,
//! `protocol.stack = "lci"`) holds its parts ([`Parts`]): its library
//! ([`host`]: PIO sends, receive-buffer queue, polling, upcall, its
//! signalled core), in the host's state beside the Open-MX processes, and
//! its NI's LANai firmware (`crate::nic::lanai`, [`Packet`]: buffers, DMA
//! engines, delivery plans, the multicast firmware's forwards, the host's
//! PCI bus `crate::host::bus`, the polling watchdog), in the host's NIC.
//! [`Stack`] holds what spans the hosts and the rules that act across a
//! host and its NI or between NIs: the world's one event loop hands it the
//! events addressed to the hosts' parts, each to the method of its kind
//! with the world's hosts, and takes the events it schedules
//! ([`Stack::take_scheduled`]); it never runs a loop of its own and has no
//! event type or event store of its own. It also uses
//! `crate::nic::delivery` (the five arrival detection strategies,
//! shared with the Open-MX NIC), [`workload`] (what the hosts run;
//! [`process`]: one host's process running its `crate::workload::Program`)
//! and `crate::net::grid` (the switches); the world names the run's metrics
//! from the stack's counters (`crate::sim` `metrics`). It has no kernel
//! receive path and no NAPI: the NI delivers into user memory, and an
//! interrupt is a signal to the process.
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
//! ([`process`], `Drive::Idle`) programs; the stack wires them with the events after
//! [`FwEv::RefreshDone`].
//!
//! Its events are the world's, each addressed to one part ([`To`]): host
//! `h`'s library (`crate::sim::Ev::LciLibrary`, a [`LibEv`]), NI `h`'s
//! firmware (`Ev::Lanai`, a [`FwEv`]), NI `h`'s watchdog and clock (the
//! Open-MX NIC's `Ev::WatchdogTimer`, `Ev::ClockTick`, `Ev::ClockFetched`),
//! each with one `u32`, a packet's index in that NI's store
//! ([`lanai::Packets`], bounded) or a generation. The world routes each to
//! the method of its kind (`crate::sim` `lci_stack`), then asks
//! [`Stack::after_event`] whether the program is done or stopped
//! progressing, and queues the events the stack scheduled
//! ([`Stack::take_scheduled`], in their order).

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
use crate::nic::lanai::{self, FwCosts, Ni, RxNext};
use crate::nic::watchdog::{Expiry, Raises, Watchdog};
use crate::nic::{delivery as poll, timers};
use crate::time::{Duration, Instant};
use crate::SimError;
pub use host::LibEv;
use host::{Host, HostAction};
use workload::Job;

/// The component an event the stack scheduled is addressed to, and what
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

/// An event the stack scheduled, for the world to queue.
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
/// stack's rules reach them through this, in the slice of the world's
/// hosts (`crate::sim` implements it for its host state).
pub trait Parts {
    fn lib(&mut self) -> &mut Host;
    fn ni(&mut self) -> &mut Ni;
    fn lib_ref(&self) -> &Host;
    fn ni_ref(&self) -> &Ni;
    /// The library and the NI at once.
    fn both(&mut self) -> (&mut Host, &mut Ni);
}

/// What the LCI stack keeps beyond the hosts' parts ([`Parts`]): the grid
/// between the NIs, the program the hosts run, its multicast's trees, the
/// events it scheduled for the world to queue, its progress rule and the
/// run's counters.
pub struct Stack {
    /// Events scheduled since the world last took them.
    scheduled: Vec<Due>,
    /// An NI whose packet store was full when an event was to name one
    /// more (the run ends with an error, `after_event`).
    full: Option<u32>,
    /// Packets sent + delivered when they last changed, and the world's
    /// event count then (the no-progress rule, `NO_PROGRESS_EVENTS`).
    progress: u64,
    progress_event: u64,
    pub(crate) grid: Grid,
    pub(crate) header: u32,
    job: Job,
    /// The program's sends being moved to the outboxes (reused).
    sends: Vec<(u32, host::Outgoing)>,
    pub(crate) packets_sent: u64,
    pub(crate) packets_delivered: u64,
    mc: multicast::McState,
}

/// Why a program that could not go on (`stuck = 1`) has no execution time.
const STUCK: &str = "the program could not go on (stuck = 1): it never finished";

/// Events without a packet sent or delivered after which a run is
/// declared stuck (a spinning `pio` host generates events forever; the
/// world's own stall window, in simulated time, would take far longer).
const NO_PROGRESS_EVENTS: u64 = 10_000_000;

/// Event origins: host h = 2h, NI h = 2h + 1.
fn host_origin(h: u32) -> Origin {
    2 * h
}
fn ni_origin(h: u32) -> Origin {
    2 * h + 1
}

impl Stack {
    /// The stack of scenario `s` on `grid`, the world's network (the
    /// platform's `grid`, as `crate::net::Network` builds it), and each
    /// host's parts (its library, its NI's firmware), for the world to
    /// hold (`Parts`).
    pub fn new(s: &LciScenario, grid: Grid) -> (Self, Vec<(Host, Ni)>) {
        let (p, ni) = (&s.platform, &s.lanai);
        let costs = FwCosts::of(ni, s.nic_clock_mhz);
        let n = p.topology.hosts;
        let strategy = poll::Strategy::new(s.polling, s.split_bytes);
        let host = HostTimes::of(&p.host);
        let t = LciHostTimes::of(&s.lib, host.irq_entry, host.signal);
        let mut hosts: Vec<Host> =
            (0..n).map(|h| Host::new(h, &s.lib, &t, strategy.detect(), p.link.mtu, ni.send_buffers)).collect();
        if let Some(r) = s.protocol {
            for h in &mut hosts {
                h.rel = Some(reliable::Reliable::new(n, r.send_buffers, r.ack_delay));
            }
        }
        // The fetch is priced on the PCI bus (`Ni::fetch_host_words`), not a fixed latency.
        let watchdog = match s.watchdog {
            WatchdogDelay::After(d) => Some(Watchdog::new(d, Duration::ZERO, Raises::Own)),
            WatchdogDelay::Immediate | WatchdogDelay::Never => None,
        };
        let mut nis: Vec<Ni> = (0..n)
            .map(|_| {
                Ni::new(
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
                )
            })
            .collect();
        let w = Stack {
            scheduled: Vec::new(),
            full: None,
            progress: 0,
            progress_event: 0,
            grid,
            header: ni.header_bytes,
            job: Job::new(&s.workload, s.fanout, n),
            sends: Vec::with_capacity(n as usize),
            packets_sent: 0,
            packets_delivered: 0,
            mc: multicast::McState::new(s.forwarding, s.fanout, n, s.lib.descriptor_bytes, ni.send_buffers),
        };
        // Per child: the table lookup and header rewrite, then the network DMA's set-up.
        w.mc_init(
            &mut nis,
            Duration::from_ns_f64(lanai_ns(s.nic_clock_mhz, ni.fw_forward_cycles + ni.dma_setup_cycles)),
        );
        (w, hosts.into_iter().zip(nis).collect())
    }

    /// Time zero: every host of the program enters the library (and starts
    /// polling); the others stay out of it.
    pub fn start(&mut self, hs: &mut [impl Parts]) {
        self.mc_start(hs, Instant::ZERO);
        for h in 0..hs.len() as u32 {
            if !self.job.participates(h) {
                hs[h as usize].lib().core.sleep();
                continue;
            }
            // The library runs with interrupts disabled.
            hs[h as usize].lib().irq_enabled = false;
            if let Some(c) = hs[h as usize].ni().clock {
                self.at(Instant::ZERO + c.period, ni_origin(h), To::ClockTick, h, 0);
            }
            self.host_next(hs, h, Instant::ZERO);
        }
    }

    /// The program's measurements and its multicast's counters, as the
    /// programs name them; the grid's links bound how fast a stream can go.
    pub(crate) fn program_metrics(&self, hs: &[impl Parts], m: &mut crate::Metrics) {
        self.mc_metrics(hs, &mut |k, v| m.set(k, v));
        let spec = self.grid.spec();
        let link = crate::metrics::LinkBound {
            bytes_per_s: spec.bytes_per_s as f64,
            frame_extra_bytes: (self.header + spec.overhead_bytes) as u64,
            frame_payload: hs[0].lib_ref().packet_bytes() as u64,
        };
        self.job.metrics(m, &link);
    }

    /// Whether the program is done.
    pub fn done(&self) -> bool {
        self.job.done()
    }

    /// After the world handed the stack its `events`-th event, at `now`:
    /// whether the program is done, or the error of a run that sent and
    /// delivered no packet in the last `NO_PROGRESS_EVENTS` (10^7) events
    /// (idle `pio` hosts poll forever), or whose event would have named a
    /// packet past an NI's store.
    pub fn after_event(&mut self, hs: &mut [impl Parts], now: Instant, events: u64) -> Result<bool, SimError> {
        if let Some(h) = self.full {
            let cap = hs[h as usize].ni().packets.capacity();
            return Err(SimError(format!(
                "NI {h} holds more packets in flight than its buffers allow ({cap}: send_buffers + 1 + \
                 recv_buffers * (1 + fanout)) at {} us",
                now.as_us_f64()
            )));
        }
        if self.done() {
            return Ok(true);
        }
        let p = self.packets_sent + self.packets_delivered;
        if p != self.progress {
            (self.progress, self.progress_event) = (p, events);
        } else if events - self.progress_event > NO_PROGRESS_EVENTS {
            return Err(SimError(format!(
                "no progress: no packet sent or delivered in {NO_PROGRESS_EVENTS} events up to {} us",
                now.as_us_f64()
            )));
        }
        Ok(false)
    }

    /// The events scheduled since the last call, in the order they were;
    /// the world queues them.
    pub fn take_scheduled(&mut self) -> std::vec::Drain<'_, Due> {
        self.scheduled.drain(..)
    }

    /// The packet of a pending event of NI `h` (tests).
    #[cfg(test)]
    pub(crate) fn packet(&self, hs: &[impl Parts], h: u32, id: u32) -> Packet {
        hs[h as usize].ni_ref().packets.get(id)
    }

    /// Whether a run that cannot progress is a result of the program (DSM
    /// and FFT: `stuck = 1`, `exec_time_s = NaN`, e.g. no interrupts and a
    /// sleeping home node) rather than an error.
    pub fn stuck_is_a_result(&self) -> bool {
        self.job.stuck_is_a_result()
    }

    /// Schedules an event for host or NI `h`'s component `to` at `t`.
    fn at(&mut self, t: Instant, origin: Origin, to: To, h: u32, arg: u32) {
        self.scheduled.push(Due { at: t, origin, to, host: h as u16, arg });
    }

    /// Schedules an event for `to` naming `pkt`, held in NI `h`'s store
    /// until the event is handled; a full store ends the run instead.
    fn at_packet(&mut self, hs: &mut [impl Parts], t: Instant, origin: Origin, to: To, h: u32, pkt: Packet) {
        match hs[h as usize].ni().packets.put(pkt) {
            Some(id) => self.at(t, origin, to, h, id),
            None => {
                self.full.get_or_insert(h);
            }
        }
    }

    /// The packet an event of NI `h` named, given back to its store.
    fn take_packet(&mut self, hs: &mut [impl Parts], h: u32, id: u32) -> Packet {
        hs[h as usize].ni().packets.take(id)
    }

    /// Lets host `h` take its next action if it is free.
    fn host_next(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        let host = hs[h as usize].lib();
        if host.busy || host.spin_since.is_some() || !host.core.in_library() {
            return;
        }
        if self.mc_compute(hs, h, now) {
            return;
        }
        let host = hs[h as usize].lib();
        let o = host_origin(h);
        let stolen = host.core.take_owed();
        if !stolen.is_zero() {
            host.busy = true;
            self.at(now + stolen, o, To::Library(LibEv::Done), h, 0);
            return;
        }
        let action = host.next_action(now);
        if matches!(action, HostAction::Spin | HostAction::PollNi) && self.library_idle(hs, h, now) {
            return;
        }
        let host = hs[h as usize].lib();
        match action {
            HostAction::Consume { pkt, cost } => {
                host.busy = true;
                let done = now + cost;
                if pkt.last && !pkt.ack_only {
                    self.job.on_message(h, pkt.src, pkt.tag);
                    self.flush_sends(hs, now);
                }
                if self.mc_consumed(hs, h, pkt, done) {
                    return;
                }
                self.at(done, o, To::Library(LibEv::Done), h, 0);
            }
            HostAction::PollNi => {
                host.busy = true;
                let (_, end) = hs[h as usize].ni().bus.request(now, BusOp::PioRead);
                self.at(end, o, To::Library(LibEv::PollDone), h, 0);
            }
            HostAction::SendPath => {
                host.busy = true;
                let t = now + host.send_cost;
                self.at(t, o, To::Library(LibEv::Write), h, 0);
            }
            HostAction::Write(pkt) => {
                host.busy = true;
                self.write(hs, h, now, pkt);
            }
            HostAction::ReadSendCounter => {
                host.busy = true;
                let (_, end) = hs[h as usize].ni().bus.request(now, BusOp::PioRead);
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
    fn write(&mut self, hs: &mut [impl Parts], h: u32, now: Instant, pkt: Packet) {
        let host = hs[h as usize].lib();
        host.posted += 1;
        host.packets_sent += 1;
        self.packets_sent += 1;
        let bytes = self.header + pkt.payload + poll::FLAG_BYTES + self.mc_extra_pio_bytes(h, &pkt);
        let (_, end) = hs[h as usize].ni().bus.request(now, BusOp::PioWrite { bytes });
        self.at_packet(hs, end, host_origin(h), To::Firmware(FwEv::Posted), h, pkt);
    }

    /// `LibEv::Done`.
    pub fn host_done(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        hs[h as usize].lib().busy = false;
        self.host_next(hs, h, now);
    }

    /// `LibEv::Write`.
    pub fn host_write(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        let host = hs[h as usize].lib();
        let pkt = host.pending.take().expect("HostWrite without a packet");
        self.write(hs, h, now, pkt);
    }

    /// `LibEv::PollDone`.
    pub fn poll_done(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        let d = hs[h as usize].ni().delivered;
        let host = hs[h as usize].lib();
        if d == host.known_delivered {
            host.polls_failed += 1;
        }
        host.known_delivered = d;
        host.busy = false;
        self.host_next(hs, h, now);
    }

    /// `LibEv::SendCounterDone`.
    pub fn send_counter_done(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        let sent = hs[h as usize].ni().sent;
        let host = hs[h as usize].lib();
        host.known_sent = sent;
        host.busy = false;
        self.host_next(hs, h, now);
    }

    /// `FwEv::Posted`: packet `id` of NI `h`.
    pub fn posted(&mut self, hs: &mut [impl Parts], h: u32, id: u32, now: Instant) {
        let pkt = self.take_packet(hs, h, id);
        // The host is free once its PIO write is done.
        hs[h as usize].lib().busy = false;
        if let Some(t) = self.mc_post(hs, h, now, pkt) {
            self.at(t, ni_origin(h), To::Firmware(FwEv::TxReady), h, 0);
        }
        self.host_next(hs, h, now);
    }

    /// `FwEv::TxReady`.
    pub fn tx_ready(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        self.try_transmit(hs, h, now, false);
    }

    /// `FwEv::TxDone`.
    pub fn tx_done(&mut self, hs: &mut [impl Parts], h: u32) {
        hs[h as usize].ni().tx_done();
    }

    /// `FwEv::Arrive`: packet `id` of NI `h`.
    pub fn arrive(&mut self, hs: &mut [impl Parts], h: u32, id: u32, now: Instant) {
        let pkt = self.take_packet(hs, h, id);
        hs[h as usize].ni().received += 1;
        if let Some((t, gen)) = hs[h as usize].ni().watchdog.as_mut().and_then(|w| w.on_delivered(now)) {
            self.at(t, ni_origin(h), To::Watchdog, h, gen);
        }
        hs[h as usize].ni().rx_arrive(pkt);
        self.mc_arrive(hs, h, now, pkt);
        self.rx_kick(hs, h, now);
    }

    /// `FwEv::RxStep`.
    pub fn rx_step(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        match hs[h as usize].ni().rx_step(now) {
            RxNext::Step(t) => self.at(t, ni_origin(h), To::Firmware(FwEv::RxStep), h, 0),
            RxNext::Delivered(pkt) => {
                self.packets_delivered += 1;
                let host = hs[h as usize].lib();
                host.visible.push_back(pkt);
                if host.spin_since.is_some() {
                    host.end_spin(now);
                    self.host_next(hs, h, now);
                }
                self.buffer_freed(hs, h, now);
                self.rx_kick(hs, h, now);
                let ni = hs[h as usize].ni();
                if ni.irq_per_packet {
                    ni.packet_irqs += 1;
                    self.at(now, ni_origin(h), To::Library(LibEv::Signal), h, 0);
                }
            }
        }
    }

    /// `FwEv::RefreshDma`.
    pub fn refresh_dma(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        let t = hs[h as usize].ni().refresh_dma(now);
        self.at(t, ni_origin(h), To::Firmware(FwEv::RefreshDone), h, 0);
    }

    /// `FwEv::RefreshDone`.
    pub fn refresh_done(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        let consumed = hs[h as usize].lib().consumed;
        hs[h as usize].ni().refresh_done(consumed);
        self.rx_kick(hs, h, now);
    }

    /// NI `h`'s watchdog event of generation `gen` (`To::Watchdog`): the
    /// running timer's expiry starts the fetch of the host's flag and
    /// counter across the bus; the fetch's return applies \[LCI] §5.1's
    /// rule (re-arm, or raise a signal and re-arm); any other is stale.
    pub fn watchdog(&mut self, hs: &mut [impl Parts], h: u32, gen: u32, now: Instant) {
        let (host, ni) = hs[h as usize].both();
        let Some(wd) = ni.watchdog.as_mut() else { return };
        if wd.expires(gen) {
            let end = ni.fetch_host_words(now);
            let wd = ni.watchdog.as_mut().expect("the watchdog that expired");
            let (t, gen) = wd.fetch(end);
            self.at(t, ni_origin(h), To::Watchdog, h, gen);
            return;
        }
        match wd.on_fetched(now, gen, host.irq_enabled, ni.received, host.consumed) {
            Expiry::Arm(t, gen) => self.at(t, ni_origin(h), To::Watchdog, h, gen),
            Expiry::Raise(t, gen) => {
                self.at(t, ni_origin(h), To::Watchdog, h, gen);
                self.at(now, ni_origin(h), To::Library(LibEv::Signal), h, 0);
            }
            Expiry::Stale | Expiry::Drained { .. } => {}
        }
    }

    /// `To::ClockTick`.
    pub fn clock_tick(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        let ni = hs[h as usize].ni();
        if let Some(c) = ni.clock {
            self.at(now + c.period, ni_origin(h), To::ClockTick, h, 0);
            let end = ni.fetch_host_words(now);
            self.at(end, ni_origin(h), To::ClockFetched, h, 0);
        }
    }

    /// `To::ClockFetched`.
    pub fn clock_fetched(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        let (host, ni) = hs[h as usize].both();
        let Some(c) = ni.clock else { return };
        let running = host.rel.as_ref().is_some_and(|r| r.timers.running());
        // The library polls the cycle counter on every entry, so a host
        // in it has just polled; otherwise its last entry counts.
        let polled = if host.core.in_library() { now } else { host.last_poll };
        if c.on_fetch(now, running, polled) == timers::Tick::Interrupt {
            ni.clock_interrupts += 1;
            self.signal(hs, h, now);
        }
    }

    /// `LibEv::SoftTimer`.
    pub fn soft_timer(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        let host = hs[h as usize].lib();
        if host.spin_since.is_some() {
            host.end_spin(now);
            self.host_next(hs, h, now);
        }
    }

    /// Moves the program's new messages to the senders' outboxes, waking a
    /// sender that spins in the library. Returns whether there were any.
    fn flush_sends(&mut self, hs: &mut [impl Parts], now: Instant) -> bool {
        let mut sends = std::mem::take(&mut self.sends);
        self.job.drain_sends(&mut sends);
        let any = !sends.is_empty();
        for (from, o) in sends.drain(..) {
            let host = hs[from as usize].lib();
            host.outbox.push_back(o);
            if host.spin_since.is_some() {
                host.end_spin(now);
                self.host_next(hs, from, now);
            }
        }
        self.sends = sends;
        any
    }

    /// Starts NI `h`'s next delivery, or a fetch of the host counter if the
    /// host queue looks full.
    fn rx_kick(&mut self, hs: &mut [impl Parts], h: u32, now: Instant) {
        let ni = hs[h as usize].ni();
        if let Some(t) = ni.rx_kick(now) {
            self.at(t, ni_origin(h), To::Firmware(FwEv::RxStep), h, 0);
        } else if ni.needs_refresh() {
            let t = ni.refresh_start(now);
            self.at(t, ni_origin(h), To::Firmware(FwEv::RefreshDma), h, 0);
        }
    }

    /// NI `h` transmits its head descriptor (`forward`: its programmed head
    /// forward, `multicast`) if the destination NI has a free receive
    /// buffer; otherwise it waits for one (Myrinet back-pressure: it is
    /// queued once at that NI, [`Stack::waiting`], and retries when a
    /// buffer frees, `buffer_freed`), a forwarding NI still holding its own.
    fn try_transmit(&mut self, hs: &mut [impl Parts], h: u32, now: Instant, forward: bool) {
        let ni = hs[h as usize].ni();
        let head = if forward { ni.mc.fwd_queue.front().filter(|_| ni.mc.fwd_ready) } else { ni.tx_queue.front() };
        let Some(&Packet { dst, .. }) = head else { return };
        if hs[dst as usize].ni().rx_free == 0 {
            let waiting = hs[dst as usize].ni().waiting(forward);
            if !waiting.contains(&h) {
                waiting.push(h);
                if forward {
                    hs[h as usize].ni().mc.fwd_waits += 1;
                }
            }
            return;
        }
        hs[dst as usize].ni().rx_free -= 1;
        let ni = hs[h as usize].ni();
        let pkt = if forward { ni.fwd_started(now) } else { ni.tx_started() };
        let (left, arrive) = self.grid.send(h, dst, now, self.header + pkt.payload);
        if forward {
            self.packets_sent += 1;
            self.at_packet(hs, left, ni_origin(h), To::Firmware(FwEv::FwdDone), h, pkt);
        } else {
            self.at(left, ni_origin(h), To::Firmware(FwEv::TxDone), h, 0);
        }
        self.at_packet(hs, arrive, ni_origin(dst), To::Firmware(FwEv::Arrive), dst, pkt);
        let ni = hs[h as usize].ni();
        let (next, to) = if forward {
            (ni.fwd_kick(now), To::Firmware(FwEv::FwdReady))
        } else {
            (ni.tx_kick(now), To::Firmware(FwEv::TxReady))
        };
        if let Some(t) = next {
            self.at(t, ni_origin(h), to, h, 0);
        }
    }

    /// Packet conservation: every packet sent is delivered, or in an NI
    /// queue, or on the wire.
    pub fn check_invariants(&self, hs: &[impl Parts]) -> Result<(), SimError> {
        let delivered: u64 = hs.iter().map(|x| x.ni_ref()).map(|n| n.delivered).sum();
        if delivered != self.packets_delivered || delivered > self.packets_sent {
            return Err(SimError(format!("invariant: {} packets sent, {} delivered", self.packets_sent, delivered)));
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod mc_tests;
