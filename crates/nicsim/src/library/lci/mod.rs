//! \[LCI]'s user-level library of each host (`protocol.stack = "lci"`),
//! the second library beside the Open-MX one, one component per host
//! ([`Lib`]), behind the same interface: the world calls it with the one
//! library context (`crate::library::Cx`) and it answers with the one
//! output vocabulary (`crate::library::Output`, in its order): one of its
//! events ([`LibEv`]: the end of an action, of a compute phase, a soft
//! timer) as a `Timer`, and its own: a PIO read of an NI counter or a PIO
//! write of a packet into an NI send buffer across its bus, a message
//! that reached a process of a run that counts its deliveries across
//! hosts (the broadcast benchmark: the world counts it, then runs it on),
//! its process finished (`ProgramDone`), and, for a whole-job program that is the
//! world's run's (the DSM), what the program learns (a message reached
//! the host, the library has nothing to do, a compute phase ended). The
//! one router routes them (`crate::sim` `kernel`'s `route`); the bus and
//! the NI are the NIC's (`crate::sim` `lci_stack`). When the program runs
//! one process per host, the library holds its host's ([`Hosted`], the
//! one driver `crate::library::driver::Driver`) and runs it itself: at its
//! idle turns and compute ends, or at its upcalls and compute ends.
//!
//! This module owns the library's state and decisions: the queue of
//! pinned receive buffers the NI fills (packets become visible in slot
//! order), the processed-packet counter and the interrupts-enabled flag in
//! host memory (both readable by the NI with a small DMA), the upcall and
//! packet free, the host's knowledge of free NI send buffers, message
//! fragmentation into packets, the polling loop per [`Detect`] (failed
//! polls of a cached flag are cache hits, the successful one a miss; `pio`
//! polls read the NI counter across the bus), the reliable protocol's host
//! side (below), what a signal does to the library (its
//! core's CPU modes are `crate::host::core::SignalledCore`'s), and its side
//! of the multicast schemes ([`mc`]), and its host's process, if it holds
//! one (`program`). It does not own bus timing (`crate::host::bus`), the
//! NI (`crate::nic::lanai`) nor the run's part of the program
//! (`crate::lci`: the cross-host broadcast wait, a whole-job DSM,
//! `crate::lci::dsm`; the ranks and measurements are the world's).
//!
//! The reliable protocol of the \[LCI] timers study (SPEC §2.4) is the one
//! library protocol, `crate::proto::Endpoint`, held as `library::Proc`
//! holds its own, each packet one message of it: per-peer sequence
//! numbers, cumulative acks piggy-backed on every data packet, and delayed
//! explicit acks (consuming a data packet arms the peer's ack
//! `protocol.ack_delay_us` ahead, unless armed). What the library asks of
//! it differently (its parameters, [`reliable_params`]): no ack after a
//! count, no resend (no packet is lost on Myrinet in this model, so the
//! window is what the protocol costs), and a window of NI send buffers
//! over all peers (`protocol.send_buffers`: a packet keeps its send
//! buffer, its retransmission copy, until acknowledged), not per peer;
//! each entry into the library polls the clock and sends the ack of the
//! lowest-ranked peer whose deadline passed, an ack-only packet (no ack
//! needed, no window slot: it uses the NI's control buffer), one per entry
//! (the endpoint's polled reads, `crate::proto::endpoint` `polled`).
//!
//! Extension points: [`Lib::irq_enabled`] (the flag the polling watchdog
//! fetches), [`Lib::signal`] (kernel dispatch + user signal handler, for
//! watchdog and NI-clock interrupts), [`Lib::timer_words`] (the words the
//! NI clock fetches: the fine-grain timers' "host has polled recently"
//! test).

mod mc;
mod program;

pub(crate) use mc::HostMc;

use super::{Cx, LibEv, Output};
use crate::config::{LciHostTimes, LciScenario};
use crate::host::core::{Delivery, Exit, Mode, SignalledCore};
use crate::nic::delivery::{Detect, Strategy, FLAG_BYTES};
use crate::nic::lanai::Packet;
use crate::proto::{Endpoint, Params};
use crate::time::{Duration, Instant};
pub(crate) use program::Hosted;
pub use program::{Control, Outgoing, ACK_ONLY_MSG};
use std::collections::VecDeque;

/// What the library does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// A packet is detected: successful poll (miss) + upcall + free, `cost` in all.
    Consume { pkt: Packet, cost: Duration },
    /// Read the NI's delivered counter across the bus (`pio` polling).
    PollNi,
    /// Run the library send path for the next packet (then [`Action::Write`]).
    SendPath,
    /// Write the packet and its descriptor into an NI send buffer by PIO.
    Write(Packet),
    /// No NI send buffer known free: read the NI's released counter by PIO.
    ReadSendCounter,
    /// Spin on the cached FULL flag of the next receive buffer.
    Spin,
}

/// One host's library.
#[derive(Debug)]
pub struct Lib {
    pub id: u32,
    detect: Detect,
    packet_bytes: u32,
    /// What its steps cost.
    t: LciHostTimes,
    /// What a signal costs its host: the kernel's interrupt dispatch and
    /// the user handler's delivery (`host.irq_entry_ns` + `host.signal_ns`,
    /// as an Open-MX host charges a clock interrupt's signal).
    signal: Duration,
    /// Packets the NI has made visible (flag written), in receive-buffer order.
    visible: VecDeque<Packet>,
    /// `pio`: the NI counter as last read.
    known_delivered: u64,
    /// Processed-packet counter in host memory.
    consumed: u64,
    /// When the library last polled (entered the library).
    last_poll: Instant,
    /// Messages to send, and the packet index within the head message.
    outbox: VecDeque<Outgoing>,
    next_frag: u32,
    next_msg: u32,
    /// Packet prepared by [`Action::SendPath`], to be written next.
    pending: Option<Packet>,
    /// Send buffers the host filled, and the NI's released count as last read.
    posted: u64,
    known_sent: u64,
    send_buffers: u64,
    /// The packets its outputs of the call being routed name
    /// ([`Output::PioWrite`]'s `pkt`, the `arg` of an event that
    /// [`LibEv::names_packet`]): the world takes each into its NI's store
    /// as it routes the output, and empties this past the call's first.
    held: Vec<Packet>,
    /// Busy until an event wakes it.
    busy: bool,
    /// Spinning on the cached flag since then.
    spin_since: Option<Instant>,
    /// Counters.
    pub polls_failed: u64,
    pub polls_ok: u64,
    pub upcalls: u64,
    pub packets_sent: u64,
    pub interrupts: u64,
    /// The reliable protocol (timers study), if on: its endpoint towards
    /// every host, and its window over all of them (`protocol.send_buffers`).
    rel: Option<Endpoint>,
    window: u32,
    /// Its counters: explicit acks sent, acks piggy-backed on data, and
    /// library entries that found the window full with data to send.
    pub explicit_acks: u64,
    pub piggybacked_acks: u64,
    pub window_full_polls: u64,
    /// The host's core: where its process is, and the signals it took.
    pub(crate) core: SignalledCore,
    /// Its side of the multicast schemes.
    pub mc: HostMc,
    /// Its host's process, when the program runs one per host; `None` for
    /// a whole-job program (the DSM).
    process: Option<Hosted>,
}

impl Lib {
    /// Host `id`'s library of the LCI stack's part `s` of a scenario, on
    /// `hosts` hosts whose packets carry `mtu` bytes of payload; a signal
    /// costs it `signal`. It holds no process until the world gives it its
    /// host's ([`Lib::host_process`]).
    pub(crate) fn new(id: u32, s: &LciScenario, signal: Duration, mtu: u32, hosts: u32) -> Self {
        let cfg = &s.lib;
        let rel = s.protocol.map(|r| Endpoint::new(reliable_params(r.ack_delay), hosts as usize));
        Lib {
            id,
            detect: Strategy::new(s.polling, s.split_bytes).detect(),
            packet_bytes: mtu,
            t: LciHostTimes::of(cfg),
            signal,
            visible: VecDeque::with_capacity(cfg.recv_buffers as usize),
            known_delivered: 0,
            consumed: 0,
            last_poll: Instant::ZERO,
            outbox: VecDeque::new(),
            next_frag: 0,
            next_msg: 0,
            pending: None,
            held: Vec::with_capacity(4),
            posted: 0,
            known_sent: 0,
            send_buffers: s.lanai.send_buffers as u64,
            busy: false,
            spin_since: None,
            polls_failed: 0,
            polls_ok: 0,
            upcalls: 0,
            packets_sent: 0,
            interrupts: 0,
            rel,
            window: s.protocol.map_or(0, |r| r.send_buffers),
            explicit_acks: 0,
            piggybacked_acks: 0,
            window_full_polls: 0,
            core: SignalledCore::new(Mode::Library),
            mc: HostMc::new(s.forwarding, s.fanout, hosts, cfg.descriptor_bytes),
            process: None,
        }
    }

    /// Payload bytes of a full packet.
    pub fn packet_bytes(&self) -> u32 {
        self.packet_bytes
    }

    /// Packets a message of `size` bytes needs (at least one).
    pub fn packets_for(&self, size: u64) -> u32 {
        size.div_ceil(self.packet_bytes as u64).max(1) as u32
    }

    /// The interrupts-enabled flag in host memory (read by the NI's
    /// watchdog, toggled without telling the NI): its core's
    /// (`SignalledCore::irq_enabled`, set while the process computes or
    /// sleeps outside the library).
    pub fn irq_enabled(&self) -> bool {
        self.core.irq_enabled()
    }

    /// The processed-packet counter in host memory.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Packet `i` of those its outputs name ([`Lib::hold`]).
    pub(crate) fn held(&self, i: u32) -> Packet {
        self.held[i as usize]
    }

    /// How many packets its outputs name so far: a call's first.
    pub(crate) fn held_mark(&self) -> usize {
        self.held.len()
    }

    /// Forgets the packets its outputs named from `mark` on (their call's
    /// outputs are routed).
    pub(crate) fn release_held(&mut self, mark: usize) {
        self.held.truncate(mark);
    }

    /// Holds `pkt` for an output that names it; its index.
    fn hold(&mut self, pkt: Packet) -> u32 {
        self.held.push(pkt);
        (self.held.len() - 1) as u32
    }

    /// Whether messages wait in its outbox.
    pub fn has_sends(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// The host words the NI clock fetches at `now`: whether a fine-grain
    /// timer runs, and when the library last polled the cycle counter (it
    /// does on every entry, so a host in it has just polled).
    pub fn timer_words(&self, now: Instant) -> (bool, Instant) {
        let running = self.rel.as_ref().is_some_and(|ep| ep.ack_deadline().is_some());
        (running, if self.core.in_library() { now } else { self.last_poll })
    }

    /// Time zero: the host is in the library (`runs`: its program runs on
    /// it) with interrupts disabled, or stays out of it, asleep.
    pub fn start(&mut self, runs: bool) {
        if !runs {
            self.core.sleep();
        }
    }

    /// The program hands it a message to send.
    pub fn submit(&mut self, o: Outgoing) {
        self.outbox.push_back(o);
    }

    /// Ends a spin at `now`, if it spins: counts the failed polls (cache
    /// hits) it took; whether it spun.
    fn end_spin(&mut self, now: Instant) -> bool {
        let Some(since) = self.spin_since.take() else { return false };
        self.polls_failed += now.since(since).as_ps() / self.t.poll_hit.as_ps().max(1);
        true
    }

    /// Something for it to do arrived (a packet visible, a message to send,
    /// a soft timer due): a library that spins on its flag goes on.
    pub(crate) fn wake(&mut self, cx: &mut Cx<'_>) {
        if self.end_spin(cx.now) {
            self.next(cx);
        }
    }

    /// The NI made `pkt` visible in the next receive buffer.
    pub(crate) fn deliver(&mut self, cx: &mut Cx<'_>, pkt: Packet) {
        self.visible.push_back(pkt);
        self.wake(cx);
    }

    /// Its event `ev` is due (`arg`: a generation, [`LibEv`]), naming
    /// `pkt` if the event names one; `ni`: its NI's delivered and released
    /// counters, which a PIO read that ends now finds.
    pub(crate) fn event(&mut self, cx: &mut Cx<'_>, ev: LibEv, arg: u32, pkt: Option<Packet>, ni: (u64, u64)) {
        let (delivered, sent) = ni;
        let pkt = || pkt.expect("the event names a packet");
        match ev {
            LibEv::Done => self.done(cx),
            LibEv::Write => self.write_pending(cx),
            LibEv::PollDone => self.poll_done(cx, delivered),
            LibEv::SendCounterDone => self.send_counter_done(cx, sent),
            LibEv::McForward => self.mc_forward(cx, pkt()),
            LibEv::McSendCounterDone => self.mc_send_counter_done(cx, pkt(), sent),
            LibEv::McWrite => self.mc_write(cx, pkt()),
            LibEv::ComputeDone => self.compute_done(cx, arg),
            LibEv::Signal => self.signal(cx),
            LibEv::SoftTimer => self.wake(cx),
            LibEv::Protocol => unreachable!("{ev:?} is not the LCI library's own to handle"),
        }
    }

    /// `LibEv::Done`, and the NI took the packet it wrote (`FwEv::Posted`).
    pub(crate) fn done(&mut self, cx: &mut Cx<'_>) {
        self.busy = false;
        self.next(cx);
    }

    /// `LibEv::Write`.
    pub(crate) fn write_pending(&mut self, cx: &mut Cx<'_>) {
        let pkt = self.pending.take().expect("HostWrite without a packet");
        self.write(cx, pkt);
    }

    /// `LibEv::PollDone`: the NI's delivered counter read `delivered`.
    pub(crate) fn poll_done(&mut self, cx: &mut Cx<'_>, delivered: u64) {
        if delivered == self.known_delivered {
            self.polls_failed += 1;
        }
        self.known_delivered = delivered;
        self.done(cx);
    }

    /// `LibEv::SendCounterDone`: the NI's released counter read `sent`.
    pub(crate) fn send_counter_done(&mut self, cx: &mut Cx<'_>, sent: u64) {
        self.known_sent = sent;
        self.done(cx);
    }

    /// PIO write of header + payload, then the descriptor word.
    fn write(&mut self, cx: &mut Cx<'_>, pkt: Packet) {
        self.posted += 1;
        self.packets_sent += 1;
        let bytes = pkt.payload + FLAG_BYTES + self.mc.extra_pio_bytes(self.id, &pkt);
        let pkt = self.hold(pkt);
        cx.emit(Output::PioWrite { pkt, bytes });
    }

    /// The library's next action if it is free.
    pub(crate) fn next(&mut self, cx: &mut Cx<'_>) {
        if self.busy || self.spin_since.is_some() || !self.core.in_library() {
            return;
        }
        if self.compute_after_sends(cx) {
            return;
        }
        let now = cx.now;
        let stolen = self.core.take_owed();
        if !stolen.is_zero() {
            self.busy = true;
            cx.timer(now + stolen, LibEv::Done);
            return;
        }
        let action = self.next_action(now);
        if matches!(action, Action::Spin | Action::PollNi) {
            match self.core.handler_exit() {
                Some(Exit::Compute(d)) => return self.control(cx, Control::Compute(d)),
                Some(Exit::Sleep) => return self.control(cx, Control::Sleep),
                None => return self.idle(cx),
            }
        }
        self.act(cx, action);
    }

    /// What the host goes on with, its library having nothing to do: keep
    /// polling, or leave the library (interrupts enabled) to compute or sleep.
    pub(crate) fn control(&mut self, cx: &mut Cx<'_>, c: Control) {
        match c {
            Control::Wait => self.act(cx, self.waiting()),
            Control::Compute(d) => self.compute(cx, d, true),
            Control::Sleep => self.core.sleep(),
        }
    }

    /// Its process computes `d` from now on its core
    /// (`SignalledCore::begin_compute`): outside the library, interrupts
    /// enabled (`irq`), or in it, interrupts disabled and the library busy
    /// until the segment ends (`LibEv::ComputeDone`, [`Lib::compute_done`]).
    fn compute(&mut self, cx: &mut Cx<'_>, d: Duration, irq: bool) {
        self.busy = !irq;
        let seg = self.core.begin_compute(cx.now, d, irq);
        cx.emit(Output::Timer { at: seg.end, ev: LibEv::ComputeDone, arg: seg.gen });
    }

    /// How it waits for a packet: polls the NI counter across the bus, or
    /// spins on the cached FULL flag (`Detect`).
    fn waiting(&self) -> Action {
        match self.detect {
            Detect::NiCounter => Action::PollNi,
            Detect::HostFlag => Action::Spin,
        }
    }

    fn act(&mut self, cx: &mut Cx<'_>, action: Action) {
        let now = cx.now;
        match action {
            Action::Consume { pkt, cost } => {
                self.busy = true;
                let done = now + cost;
                let took = self.mc_consumed(cx, pkt, done);
                if pkt.last && !pkt.ack_only {
                    self.message(cx, pkt.bcast.unwrap_or(pkt.src), pkt.tag, done);
                }
                if !took {
                    cx.timer(done, LibEv::Done);
                }
            }
            Action::PollNi => {
                self.busy = true;
                cx.emit(Output::PioRead { then: LibEv::PollDone, arg: 0 });
            }
            Action::SendPath => {
                self.busy = true;
                cx.timer(now + self.t.send, LibEv::Write);
            }
            Action::Write(pkt) => {
                self.busy = true;
                self.write(cx, pkt);
            }
            Action::ReadSendCounter => {
                self.busy = true;
                cx.emit(Output::PioRead { then: LibEv::SendCounterDone, arg: 0 });
            }
            Action::Spin => {
                self.spin_since = Some(now);
                if let Some(t) = self.rel.as_ref().and_then(Endpoint::ack_deadline) {
                    cx.timer(t.max(now), LibEv::SoftTimer);
                }
            }
        }
    }

    /// An NI interrupt reaches the host as a signal (SPEC §2.4;
    /// `LibEv::Signal`): kernel dispatch + user signal handler, per what
    /// its core's mode makes of it.
    pub(crate) fn signal(&mut self, cx: &mut Cx<'_>) {
        let now = cx.now;
        let cost = self.signal;
        let until = match self.core.deliver(now, self.spin_since.is_some(), cost) {
            Delivery::Merged => return,
            Delivery::Owed => {
                self.interrupts += 1;
                return;
            }
            Delivery::ReturnedWhileSpinning { until } => {
                self.end_spin(now);
                until
            }
            Delivery::Handled { until } => until,
        };
        self.interrupts += 1;
        self.busy = true;
        cx.timer(until, LibEv::Done);
    }

    /// What the library does next (the host is not busy).
    fn next_action(&mut self, now: Instant) -> Action {
        self.last_poll = now;
        let detected = match self.detect {
            Detect::HostFlag => !self.visible.is_empty(),
            Detect::NiCounter => self.consumed < self.known_delivered,
        };
        if detected {
            let pkt = self.visible.pop_front().expect("NI counter ahead of visible packets");
            self.consumed += 1;
            self.polls_ok += 1;
            self.upcalls += 1;
            // Its cumulative ack; a data packet is a message delivered.
            if let Some(ep) = self.rel.as_mut() {
                ep.process_ack(pkt.src as u16, pkt.ack as u16);
                if !pkt.ack_only {
                    ep.delivered(pkt.src as u16, now);
                }
            }
            return Action::Consume { pkt, cost: self.t.poll_miss + self.t.upcall };
        }
        if let Some(p) = self.pending.take() {
            return Action::Write(p);
        }
        if let Some(ep) = self.rel.as_mut() {
            // Library entry polls the cycle counter: fire a due ack timer
            // (first making sure an NI send buffer is known free for it).
            let due = ep.ack_deadline().is_some_and(|t| t <= now);
            if due && self.posted - self.known_sent >= self.send_buffers {
                return Action::ReadSendCounter;
            }
            if let Some(peer) = ep.first_ack_due(now) {
                self.explicit_acks += 1;
                let ctl = Packet {
                    src: self.id,
                    dst: peer as u32,
                    msg: ACK_ONLY_MSG,
                    last: true,
                    ack: ep.dispatch_ack(peer) as u64,
                    ack_only: true,
                    ..Default::default()
                };
                self.pending = Some(ctl);
                return Action::SendPath;
            }
        }
        let window_full = self.rel.as_ref().is_some_and(|ep| ep.unacked_messages() >= self.window);
        self.window_full_polls += u64::from(window_full && !self.outbox.is_empty());
        if let Some(o) = self.outbox.front().copied().filter(|_| !window_full) {
            if self.posted - self.known_sent >= self.send_buffers {
                return Action::ReadSendCounter;
            }
            let n = self.packets_for(o.size);
            let last = self.next_frag + 1 == n;
            let payload =
                if last { (o.size - (n as u64 - 1) * self.packet_bytes as u64) as u32 } else { self.packet_bytes };
            self.pending = Some(Packet {
                src: self.id,
                dst: o.dst,
                msg: self.next_msg,
                frag: self.next_frag,
                last,
                payload,
                msg_bytes: o.size,
                bcast: o.bcast,
                tag: o.tag,
                ..Default::default()
            });
            // A data packet is a one-frame message; it carries its peer's ack.
            if let (Some(ep), Some(p)) = (self.rel.as_mut(), self.pending.as_mut()) {
                let peer = o.dst as u16;
                ep.send(peer, now, 0, 0, 0, false, 1);
                self.piggybacked_acks += u64::from(ep.owes_ack(peer));
                p.ack = ep.dispatch_ack(peer) as u64;
            }
            if last {
                self.next_frag = 0;
                self.next_msg = self.next_msg.wrapping_add(1);
                let head = self.outbox.front_mut().expect("outbox head");
                head.count -= 1;
                if head.count == 0 {
                    self.outbox.pop_front();
                }
            } else {
                self.next_frag += 1;
            }
            return Action::SendPath;
        }
        self.waiting()
    }
}

/// The reliable protocol's parameters as the one endpoint takes them: the
/// delayed explicit ack `ack_delay` (`protocol.ack_delay_us`), no ack
/// after a count, no resend (`Duration::MAX`: its deadlines saturate at
/// "not set") and no window per peer (the library's is over all peers,
/// `Lib::window`).
pub fn reliable_params(ack_delay: Duration) -> Params {
    Params { ack_after: u32::MAX, delayed_ack: ack_delay, resend: Duration::MAX, send_window_frames: u32::MAX }
}

#[cfg(test)]
mod tests;
