//! The LANai 4.1 firmware of \[LCI]'s NIs (`protocol.stack = "lci"`), a
//! firmware of the NIC component beside the Open-MX NIC's (held in the
//! host's `super::Nic`, its `lanai`),
//! as a sans-I/O state machine: it takes `now` and one of its events
//! ([`FwEv`]: a descriptor posted by PIO, a packet in a receive buffer, a
//! finished DMA; [`Nic::lanai_event`]) and returns what it asks for as one
//! value ([`FwOutcome`], as a receive queue returns an [`Outcome`]: its
//! watchdog's start, a packet its host can see, a freed receive buffer,
//! its next events, a transmission, a signal), which the world schedules
//! or hands on (`crate::sim` `lci_stack`): a transmission across NIs leaves
//! once its destination NI reserved it a receive buffer (Myrinet
//! back-pressure, the NI's [`Credits`], `super::flow`; the firmware's step,
//! [`Nic::lanai_transmit`]).
//!
//! This module owns the packet the firmware carries ([`Packet`]) and the
//! NI's resources (its [`Ni`]; the firmware processor, one LANai, is the
//! NIC's, whose work is serialised through `super::Nic`'s `fw_free`, and
//! the firmware's steps are `Nic` methods): the NI send and receive buffers (1 KB
//! each), the NI's view of the host receive queue (how many host buffers it
//! filled, how many it knows the host freed), the delivered-packet counter
//! in NI SRAM that `pio` polling reads, its receive buffers' credits ([`Ni::credits`]:
//! the free ones and the NIs' heads waiting for one), its polling watchdog, and the multicast firmware's queue
//! of forwards (`Nic::lanai_fwd_kick`, `Ni::fwd_started`) and shared send
//! buffers (a multicast post, [`Ni::shared_posts`]) over the forwarding state of
//! `super::multicast` ([`NiMc`]). The three DMA
//! engines map to: the network engine (send buffer -> link, timed by
//! `crate::net::grid`), the NI -> host engine (the [`Plan`] of each packet,
//! priced on the host's PCI bus, a [`Bus`]: the bus of the NIC that runs
//! it, which the host's PIO shares, `Nic::pio`, [`Nic::lanai_pio_write`])
//! and the host -> NI engine (the small DMA that fetches the host's
//! processed-packet counter, `FwEv::RefreshDma`). Its steps take the NIC's
//! firmware times (`super::Nic`'s `fw_tx`, `fw_rx`, `tx_dma_setup`,
//! `fw_fwd`: the shared `nic.*` keys a LANai platform derives from its
//! cycles). Its polling watchdog runs on the NIC's one path for both
//! firmwares (`Nic::watchdog_timer`, `Nic::fetch_host_words`: the firmware
//! programs the DMA, then a word's DMA on the bus; `crate::sim` `nic_path`);
//! it keeps its state. Its NI clock is the world's one (`crate::sim`
//! `clock`, the same fetch). It does not
//! own the host's polling (`crate::library::lci`), who forwards what
//! (`crate::lci::multicast`), nor the wire.

use super::delivery::{Plan, Strategy, FLAG_BYTES};
use super::flow::Credits;
use super::multicast::{Forwarded, Kary, NiMc};
use super::watchdog::{Expiry, Raises, Watchdog};
use super::{Nic, Outcome};
use crate::config::{Forwarding, LanaiCfg, LciScenario, NiFeatures, Platform, WatchdogDelay};
use crate::engine::slab::Slab;
use crate::host::bus::{Bus, BusOp};
use crate::time::Instant;
use std::collections::VecDeque;

/// One LCI packet (header fields the model needs; no bytes are built).
/// The default is an empty point-to-point packet from and to host 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Packet {
    pub src: u32,
    pub dst: u32,
    /// Per-sender message number.
    pub msg: u32,
    /// Fragment index within the message.
    pub frag: u32,
    /// Last fragment of the message.
    pub last: bool,
    /// Payload bytes in this packet.
    pub payload: u32,
    /// Size of the whole message.
    pub msg_bytes: u64,
    /// Multicast tag: the root of the spanning tree this packet travels
    /// (`None`: point to point; `crate::lci::multicast`).
    pub bcast: Option<u32>,
    /// The program's message tag (`crate::workload::tag`), which the
    /// receiving process matches its receives on.
    pub tag: u64,
    /// Reliable protocol: cumulative count of data packets from `dst` that `src` consumed.
    pub ack: u64,
    /// Reliable protocol: an explicit ack (no payload, no program message).
    pub ack_only: bool,
}

impl Forwarded for Packet {
    fn root(&self) -> Option<u32> {
        self.bcast
    }
    fn to_child(&self, child: u32) -> Self {
        Packet { dst: child, ..*self }
    }
    fn hold_key(&self) -> (u32, u32, u32) {
        (self.src, self.msg, self.frag)
    }
}

/// Bytes of one host receive buffer: header + payload capacity (`mtu`,
/// one NI buffer) + FULL word (the layouts of `crate::nic::delivery`).
pub fn host_buffer_bytes(ni: &LanaiCfg, mtu: u32) -> u32 {
    ni.header_bytes + mtu + FLAG_BYTES
}

/// The packet the receive side is delivering and how far it got.
#[derive(Debug, Clone, Copy)]
struct RxJob {
    pkt: Packet,
    plan: Plan,
    /// Index of the next DMA of `plan` to start.
    next: usize,
    /// The firmware has programmed DMA `next` (the first is programmed with the packet).
    programmed: bool,
}

/// What an event addressed to NI `h`'s firmware is
/// (`crate::sim::Ev::Lanai { host, ev, arg }`); the world routes each to
/// the stack's method of that name (`crate::sim` `lci_stack`). `arg` is the
/// index of a packet in the NI's store ([`Ni::packets`]) for the kinds that
/// carry one, 0 otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FwEv {
    /// The descriptor its host wrote by PIO is in the NI's SRAM (a packet).
    Posted,
    /// The firmware has the network DMA of its head descriptor programmed.
    TxReady,
    /// The packet's tail left: its send buffer is free.
    TxDone,
    /// A packet is entirely in one of its receive buffers (a packet).
    Arrive,
    /// Its receive delivery continues.
    RxStep,
    /// It programmed the fetch of the host's processed counter.
    RefreshDma,
    /// That fetch completed.
    RefreshDone,
    /// The firmware has the network DMA of its head forward programmed (`ni` forwarding).
    FwdReady,
    /// A forward of this packet left the NI (a packet).
    FwdDone,
}

/// What the firmware asks for after one of its events (as [`Outcome`] is
/// a receive queue's): a value the world does in its fields' order, which
/// is the order the firmware's steps ask for them in (`crate::sim`
/// `lci_stack`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FwOutcome {
    /// Its watchdog's timer started: its expiry, of generation `.1`, at
    /// `.0` (the NIC's watchdog event, `Nic::watchdog_timer`).
    pub watchdog: Option<(Instant, u32)>,
    /// A packet is visible to its host now.
    pub delivered: Option<Packet>,
    /// One of its receive buffers may be free: the heads waiting for one
    /// leave as [`Credits::grant`] serves them.
    pub freed: bool,
    /// Its own next events (a forward's and a delivery's at most), in order.
    pub steps: [Option<(Instant, FwEv)>; 2],
    /// It took the packet its host wrote: the host goes on.
    pub taken: bool,
    /// Its head descriptor, or (`Some(true)`) its head forward, is
    /// programmed: it leaves once the destination NI reserved it a receive
    /// buffer (Myrinet back-pressure across NIs, [`Credits::reserve`];
    /// [`Nic::lanai_head`], [`Nic::lanai_transmit`]).
    pub transmit: Option<bool>,
    /// An interrupt to its host now, delivered as a signal to the process.
    pub signal: bool,
}

impl FwOutcome {
    /// Its next event `ev` at `t`, after those it asked for before.
    fn step(&mut self, t: Instant, ev: FwEv) {
        let free = self.steps.iter_mut().find(|s| s.is_none()).expect("at most two steps per event");
        *free = Some((t, ev));
    }
}

/// What one NI's events in the world's queue can name at once (the
/// bound of its [`Ni::packets`]): each of its receive buffers is reserved
/// by the one packet arriving in it (Myrinet back-pressure) and, held for
/// forwarding, by up to `fanout` forwards leaving it; its host writes into
/// one send buffer at a time, and forwards one consumed packet at a time.
/// The send buffers are counted whole, a margin for a write a signal
/// overlaps.
pub fn packets_bound(send_buffers: u32, recv_buffers: u32, fanout: u32) -> u32 {
    send_buffers + 1 + recv_buffers * (1 + fanout)
}

/// One LANai NI.
#[derive(Debug)]
pub struct Ni {
    strategy: Strategy,
    header: u32,
    host_buffer: u32,
    host_slots: u64,
    /// Free NI send buffers.
    pub send_free: u32,
    /// Send buffers released so far (a counter in SRAM the host may read by PIO).
    pub sent: u64,
    /// Descriptors posted by the host, not yet on the wire.
    pub tx_queue: VecDeque<Packet>,
    /// The firmware is handling the head of `tx_queue`.
    pub tx_busy: bool,
    /// Its receive buffers: the free ones, and the NIs whose head packet
    /// or (`ni` forwarding) head forward waits for one (Myrinet
    /// back-pressure: a sender holds one before transmitting).
    pub credits: Credits,
    /// Received packets waiting for a host buffer / the NI -> host engine.
    pub rx_queue: VecDeque<Packet>,
    job: Option<RxJob>,
    /// Packets delivered to the host (the counter `pio` polling reads).
    pub delivered: u64,
    /// Packets it sent: each its host wrote (one per child of a shared
    /// post) and each it forwarded.
    pub packets_sent: u64,
    /// The host's processed-packet count as last fetched.
    pub known_consumed: u64,
    /// A host -> NI fetch of that count is in flight.
    pub refreshing: bool,
    /// Counters.
    pub host_dmas: u64,
    pub refreshes: u64,
    /// Multicast: forwarding table, forwards, held buffers (`crate::nic::multicast::NiMc`).
    pub mc: NiMc<Packet>,
    /// The trees along which a multicast post shares one send buffer among
    /// one descriptor per child (`host-packet` and `ni` forwarding; its
    /// rank in them is `mc.rank`).
    pub shared_posts: Option<Kary>,
    /// The packets its events in the world's queue name (an event
    /// carries an index into it, so that it stays eight bytes): a packet
    /// arriving in one of its receive buffers, its host's PIO write into a
    /// send buffer, a forward leaving it, its host's forward of a packet it
    /// consumed; at most [`packets_bound`].
    pub packets: Slab<Packet>,
    /// The polling watchdog (`nic.watchdog_us` a delay; none otherwise).
    pub watchdog: Option<Watchdog>,
    /// Packets it took in (the watchdog's count of those delivered).
    pub received: u64,
    /// Whether it interrupts its host at once per delivered packet
    /// (`nic.watchdog_us = "none"`), and those interrupts.
    pub irq_per_packet: bool,
    pub packet_irqs: u64,
}

impl Ni {
    /// The NI of the LCI stack's part `s` of a scenario with NIC features
    /// `f` (its watchdog) on platform `p` (its links carry `link.mtu` bytes of payload per packet, one NI
    /// buffer): its arrival detection, buffers and watchdog (its
    /// firmware's step times and its host's PCI bus are the NIC's), and, as
    /// NI `rank` of the multicast trees, the trees its posts share a send
    /// buffer along (not under `host-message`).
    pub fn new(s: &LciScenario, f: &NiFeatures, p: &Platform, rank: u32) -> Self {
        let (ni, mtu, hosts) = (&s.lanai, p.link.mtu, p.topology.hosts);
        let (send_buffers, recv_buffers) = (ni.send_buffers, ni.recv_buffers);
        // Its fetch is the NIC's, on the PCI bus (`Nic::fetch_host_words`).
        let watchdog = f.watchdog.timer().map(|d| Watchdog::new(d, Raises::Own));
        Ni {
            strategy: Strategy::new(s.polling, s.split_bytes),
            header: ni.header_bytes,
            host_buffer: host_buffer_bytes(ni, mtu),
            host_slots: s.lib.recv_buffers as u64,
            send_free: send_buffers,
            sent: 0,
            tx_queue: VecDeque::with_capacity(send_buffers as usize),
            tx_busy: false,
            credits: Credits::new(recv_buffers, hosts),
            rx_queue: VecDeque::with_capacity(recv_buffers as usize),
            job: None,
            delivered: 0,
            packets_sent: 0,
            known_consumed: 0,
            refreshing: false,
            host_dmas: 0,
            refreshes: 0,
            mc: NiMc::new(rank),
            shared_posts: (s.forwarding != Forwarding::HostMessage).then_some(Kary { n: hosts, fanout: s.fanout }),
            packets: {
                let bound = packets_bound(send_buffers, recv_buffers, s.fanout);
                Slab::new(bound as usize, bound)
            },
            watchdog,
            received: 0,
            irq_per_packet: f.watchdog == WatchdogDelay::Immediate,
            packet_irqs: 0,
        }
    }

    /// Bytes of a packet's header on the wire and in a host PIO write.
    pub fn header(&self) -> u32 {
        self.header
    }

    /// The network DMA of the head descriptor started: it leaves the queue.
    fn tx_started(&mut self) -> Packet {
        self.tx_busy = false;
        let releases = self.mc.tx_rel.pop_front().unwrap_or(true);
        self.mc.inflight_rel.push_back(releases);
        self.tx_queue.pop_front().expect("tx_started without a descriptor")
    }

    /// A packet's tail left: its send buffer is free again.
    fn tx_done(&mut self) {
        // A send buffer shared by several descriptors is released by the last.
        if !self.mc.inflight_rel.pop_front().unwrap_or(true) {
            return;
        }
        self.send_free += 1;
        self.sent += 1;
    }

    /// Its watchdog's event of generation `gen` at `now`, the fetch's
    /// return (any other is stale): \[LCI] §5.1's rule on the host's words
    /// (`irq_enabled`, `consumed`) and the packets it took in; an expiry
    /// without progress raises its own interrupt, a signal to its host.
    pub(super) fn watchdog_fetched(
        &mut self,
        now: Instant,
        gen: u32,
        (irq_enabled, consumed): (bool, u64),
    ) -> (Outcome, Option<(Instant, u32)>) {
        let Some(w) = self.watchdog.as_mut() else { return (Outcome::default(), None) };
        match w.on_fetched(now, gen, irq_enabled, self.received, consumed) {
            Expiry::Arm(t, gen) => (Outcome::default(), Some((t, gen))),
            Expiry::Raise(t, gen) => (Outcome { raise: true, rx: true, timer: None }, Some((t, gen))),
            Expiry::Stale | Expiry::Drained { .. } => (Outcome::default(), None),
        }
    }

    /// The network DMA of the programmed head forward started at `now`: it
    /// leaves the queue, a packet it sent.
    fn fwd_started(&mut self, now: Instant) -> Packet {
        let pkt = self.mc.fwd_queue.pop_front().expect("fwd_started without a forward");
        self.mc.fwd_busy = false;
        self.mc.fwd_ready = false;
        self.mc.forwards += 1;
        self.mc.first_forward_at.get_or_insert(now);
        self.packets_sent += 1;
        pkt
    }

    /// `FwEv::FwdDone`: a forward of packet `id` of its store left; returns
    /// whether the receive buffer that held it is free (its last forward,
    /// and its host has it).
    fn forwarded(&mut self, id: u32) -> bool {
        let pkt = self.packets.take(id);
        let free = self.mc.release_on_forward(&pkt);
        if free {
            self.credits.release();
        }
        free
    }
}

/// A NIC that runs the LANai firmware (`Nic::run_lanai`): the firmware's
/// steps run on the NIC's one firmware processor (`Nic::fw_run`, a FIFO
/// server, as the Open-MX NIC's receive, echo and forward work) and its
/// DMAs and its host's PIO on the NIC's bus; its buffers and queues are
/// its [`Ni`].
const RUNS_LANAI: &str = "a NIC that runs the LANai firmware";

impl Nic {
    /// The LANai firmware's state (a NIC that runs it).
    pub(crate) fn fw_ni(&mut self) -> &mut Ni {
        self.lanai.as_deref_mut().expect(RUNS_LANAI)
    }
    pub(crate) fn fw_ni_ref(&self) -> &Ni {
        self.lanai.as_deref().expect(RUNS_LANAI)
    }

    /// Its host writes a packet of `payload` bytes (and its header) into a
    /// send buffer by PIO at `now`; returns when the write ends (the packet
    /// is then the firmware's, [`FwEv::Posted`]).
    pub fn lanai_pio_write(&mut self, now: Instant, payload: u32) -> Instant {
        let ni = self.fw_ni();
        ni.packets_sent += 1;
        let bytes = ni.header() + payload;
        self.pio(now, BusOp::PioWrite { bytes })
    }

    /// The firmware's event `ev` at `now` (`arg`: a packet of its store,
    /// [`FwEv`]; `host_consumed`: its host's processed counter, which a
    /// fetch of it reads): what it asks for.
    pub fn lanai_event(&mut self, now: Instant, (ev, arg): (FwEv, u32), host_consumed: u64) -> FwOutcome {
        let mut out = FwOutcome::default();
        match ev {
            FwEv::Posted => self.post(now, arg, &mut out),
            FwEv::TxReady => out.transmit = Some(false),
            FwEv::TxDone => self.fw_ni().tx_done(),
            FwEv::Arrive => self.arrive(now, arg, &mut out),
            FwEv::RxStep => self.rx_step(now, &mut out),
            FwEv::RefreshDma => out.step(refresh_dma(self.shared_bus(), now), FwEv::RefreshDone),
            FwEv::RefreshDone => self.refreshed(now, host_consumed, &mut out),
            FwEv::FwdReady => self.fwd_ready(&mut out),
            FwEv::FwdDone => out.freed = self.fw_ni().forwarded(arg),
        }
        out
    }

    /// `FwEv::Posted`: its host wrote packet `id` of its store into a send
    /// buffer: one descriptor, or, for a multicast post along
    /// [`Ni::shared_posts`], one per child sharing the buffer (released
    /// after the last one left). The firmware took it, and starts on it if
    /// idle.
    fn post(&mut self, now: Instant, id: u32, out: &mut FwOutcome) {
        let ni = self.fw_ni();
        let pkt = ni.packets.take(id);
        debug_assert!(ni.send_free > 0, "host wrote into a busy send buffer");
        ni.send_free -= 1;
        match (ni.shared_posts, pkt.bcast) {
            (Some(tree), Some(root)) => {
                let me = ni.mc.rank;
                ni.packets_sent += tree.child_count(root, me) as u64 - 1;
                for dst in tree.children(root, me) {
                    ni.tx_queue.push_back(Packet { dst, ..pkt });
                    ni.mc.tx_rel.push_back(false);
                }
                if let Some(last) = ni.mc.tx_rel.back_mut() {
                    *last = true;
                }
            }
            _ => {
                ni.tx_queue.push_back(pkt);
                ni.mc.tx_rel.push_back(true);
            }
        }
        if let Some(t) = self.lanai_tx_kick(now) {
            out.step(t, FwEv::TxReady);
        }
        out.taken = true;
    }

    // -- send side ------------------------------------------------------

    /// Starts the firmware on the next descriptor if idle; returns when
    /// its network DMA is programmed.
    fn lanai_tx_kick(&mut self, now: Instant) -> Option<Instant> {
        let ni = self.fw_ni();
        if ni.tx_busy || ni.tx_queue.is_empty() {
            return None;
        }
        ni.tx_busy = true;
        Some(self.fw_run(now, self.fw_tx))
    }

    /// The destination NI of its programmed head descriptor (`forward`:
    /// of its programmed head forward), if one is ready to leave.
    pub fn lanai_head(&self, forward: bool) -> Option<u32> {
        let ni = self.lanai.as_deref()?;
        let head = if forward { ni.mc.fwd_queue.front().filter(|_| ni.mc.fwd_ready) } else { ni.tx_queue.front() };
        head.map(|p| p.dst)
    }

    /// Its programmed head descriptor (`forward`: its head forward), which
    /// holds a receive buffer of its destination NI, starts leaving at
    /// `now`: the packet and its bytes on the wire, and when the firmware
    /// has the next one's network DMA programmed (`FwEv::TxReady`,
    /// `FwdReady`), if one waits.
    pub fn lanai_transmit(&mut self, now: Instant, forward: bool) -> (Packet, u32, Option<Instant>) {
        let ni = self.fw_ni();
        let pkt = if forward { ni.fwd_started(now) } else { ni.tx_started() };
        let bytes = ni.header() + pkt.payload;
        let next = if forward { self.lanai_fwd_kick(now) } else { self.lanai_tx_kick(now) };
        (pkt, bytes, next)
    }

    // -- receive side ---------------------------------------------------

    /// `FwEv::Arrive`: packet `id` of its store is entirely in one of its
    /// receive buffers. The watchdog counts it (and starts if idle); under
    /// `ni` forwarding the firmware queues one forward per child, ahead of
    /// the host DMA; then the next delivery (`rx_next`).
    fn arrive(&mut self, now: Instant, id: u32, out: &mut FwOutcome) {
        let table = self.forwarding;
        let ni = self.fw_ni();
        let pkt = ni.packets.take(id);
        ni.received += 1;
        out.watchdog = ni.watchdog.as_mut().and_then(|w| w.on_delivered(now));
        ni.rx_queue.push_back(pkt);
        if ni.mc.start_forward(pkt, table) > 0 {
            if let Some(t) = self.lanai_fwd_kick(now) {
                out.step(t, FwEv::FwdReady);
            }
        }
        self.rx_next(now, out);
    }

    /// `FwEv::RefreshDone`: the fetch of its host's processed counter
    /// (`host_consumed`) is back; the next delivery may start.
    fn refreshed(&mut self, now: Instant, host_consumed: u64, out: &mut FwOutcome) {
        let ni = self.fw_ni();
        ni.refreshing = false;
        ni.known_consumed = ni.known_consumed.max(host_consumed);
        self.rx_next(now, out);
    }

    /// Starts its next delivery ([`FwEv::RxStep`]) if its engine is idle and
    /// a host receive buffer is known free; if packets wait only because the
    /// host queue looks full, a fetch of the host's processed counter
    /// ([`FwEv::RefreshDma`]) unless one is in flight.
    fn rx_next(&mut self, now: Instant, out: &mut FwOutcome) {
        let (rx, setup) = (self.fw_rx, self.tx_dma_setup);
        let ni = self.fw_ni();
        if ni.job.is_some() || ni.rx_queue.is_empty() {
            return;
        }
        if ni.delivered - ni.known_consumed < ni.host_slots {
            let pkt = ni.rx_queue.pop_front().expect("a packet waits");
            let plan = ni.strategy.plan(ni.header, pkt.payload, ni.host_buffer);
            ni.job = Some(RxJob { pkt, plan, next: 0, programmed: false });
            out.step(self.fw_run(now, rx), FwEv::RxStep);
        } else if !ni.refreshing {
            ni.refreshing = true;
            ni.refreshes += 1;
            out.step(self.fw_run(now, setup), FwEv::RefreshDma);
        }
    }

    /// Advances the current delivery: programs its next DMA (the firmware
    /// sets up a second DMA only after the first completed), starts it on
    /// the bus, or finishes the packet: it is visible to the host, a
    /// receive buffer may be free, the next delivery starts, and the
    /// packet's interrupt is raised (`nic.watchdog_us = "none"`).
    fn rx_step(&mut self, now: Instant, out: &mut FwOutcome) {
        let setup = self.tx_dma_setup;
        let ni = self.fw_ni();
        let job = ni.job.as_mut().expect("rx_step without a job");
        if let Some(Some(dma)) = job.plan.dmas.get(job.next).copied() {
            let program = job.next > 0 && !job.programmed;
            job.programmed = program;
            if !program {
                job.next += 1;
                ni.host_dmas += 1;
            }
            let t = if program {
                self.fw_run(now, setup)
            } else {
                self.shared_bus().request(now, BusOp::Dma { bytes: dma.bytes }).1
            };
            return out.step(t, FwEv::RxStep);
        }
        let job = ni.job.take().expect("job");
        ni.delivered += 1;
        if ni.mc.release_on_delivery(&job.pkt) {
            ni.credits.release();
        }
        (out.delivered, out.freed) = (Some(job.pkt), true);
        self.rx_next(now, out);
        let ni = self.fw_ni();
        if ni.irq_per_packet {
            ni.packet_irqs += 1;
            out.signal = true;
        }
    }

    // -- multicast firmware ---------------------------------------------

    /// Starts the firmware on the next forward if idle; returns when the
    /// forward's network DMA is programmed.
    fn lanai_fwd_kick(&mut self, now: Instant) -> Option<Instant> {
        let ni = self.fw_ni();
        if ni.mc.fwd_busy || ni.mc.fwd_queue.is_empty() {
            return None;
        }
        ni.mc.fwd_busy = true;
        Some(self.fw_run(now, self.fw_fwd + self.tx_dma_setup))
    }

    /// `FwEv::FwdReady`: the network DMA of its head forward is programmed.
    fn fwd_ready(&mut self, out: &mut FwOutcome) {
        self.fw_ni().mc.fwd_ready = true;
        out.transmit = Some(true);
    }
}

/// The small DMA that fetches host words (`FwEv::RefreshDma`), started on
/// the host's `bus` at `now`; returns when it completes.
fn refresh_dma(bus: &mut Bus, now: Instant) -> Instant {
    bus.request(now, BusOp::Dma { bytes: FLAG_BYTES }).1
}

#[cfg(test)]
mod tests;
