//! The LCI host (Pentium Pro running the LCI library) as a sans-I/O state
//! machine: given `now` it says what the library does next
//! ([`Host::next_action`]); the world executes it. Each host of a world
//! that runs the LCI stack holds one in its state, beside its Open-MX
//! processes (`crate::sim` `lci_stack`), with its core's CPU modes
//! (`crate::host::core::SignalledCore`).
//!
//! This module owns the host side of the host/NI interface: the queue of
//! pinned receive buffers the NI fills (packets become visible in slot
//! order), the processed-packet counter and the interrupts-enabled flag in
//! host memory (both readable by the NI with a small DMA), the upcall and
//! packet free, the host's knowledge of free NI send buffers, message
//! fragmentation into packets, the polling loop per [`Detect`]
//! (failed polls of a cached flag are cache hits, the successful one a
//! miss; `pio` polls read the NI counter across the bus), and the host's
//! side of the multicast schemes ([`HostMc`]: the scheme and tree it
//! forwards down, which also program its NI's table, the compute waiting
//! for its sends, its copy counters). It does not own
//! bus timing (`crate::host::bus`) nor the NI (`crate::nic::lanai`).
//!
//! Extension points: [`Host::irq_enabled`] (the flag the polling watchdog
//! fetches), [`Host::signal_cost`] (kernel dispatch + user signal handler,
//! for watchdog and NI-clock interrupts), [`Host::last_poll`] (when the
//! library last entered and polled: the fine-grain timers' "host has
//! polled recently" test).

use super::poll::Detect;
use super::Packet;
use crate::config::{Forwarding, LciHostCfg, LciHostTimes};
use crate::host::core::{Mode, SignalledCore};
use crate::nic::lanai::Ni;
use crate::nic::multicast::{ForwardTable, Kary, Tree};
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// What a host whose library has nothing to do goes on with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Stay in the library, polling with interrupts disabled.
    Wait,
    /// Leave the library and compute this long, interrupts enabled.
    Compute(Duration),
    /// Leave the library and sleep, interrupts enabled, until a signal.
    Sleep,
}

/// The message number of an ack-only control packet: none of the
/// sender's messages (those count up from 0), so it never matches one.
pub const ACK_ONLY_MSG: u32 = u32::MAX;

/// A message (or `count` equal messages) the program wants sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outgoing {
    pub dst: u32,
    pub size: u64,
    pub count: u64,
    /// Multicast tag of the packets (the tree's root), `None` for point to point.
    pub bcast: Option<u32>,
    /// The program's message tag (`crate::workload::tag`; 0 for the
    /// programs that match no receives).
    pub tag: u64,
}

/// What an event addressed to host `h`'s library is
/// (`crate::sim::Ev::LciLibrary { host, ev, arg }`); the world routes each
/// to the stack's method of that name (`crate::sim` `lci_stack`). `arg` is
/// the index of a packet in NI `h`'s store (`crate::nic::lanai::Packets`)
/// for the forwards, the generation for `ComputeDone`, 0 otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum LibEv {
    /// The host finished its current action.
    Done,
    /// The host finished the library send path: write the packet now.
    Write,
    /// The host's PIO read of its NI's delivered counter completed.
    PollDone,
    /// The host's PIO read of its NI's released-send-buffer counter completed.
    SendCounterDone,
    /// The host forwards a multicast packet after its upcall (`host-packet`; a packet).
    McForward,
    /// The host's read of the released-send-buffer counter for that forward completed (a packet).
    McSendCounterDone,
    /// The host finished the send path of that forward: write it now (a packet).
    McWrite,
    /// The host finished a compute phase of its multicast program.
    McComputeDone,
    /// The host's compute phase of generation `arg` ends (stale if preempted since).
    ComputeDone,
    /// An NI interrupt reaches the host's process as a signal.
    Signal,
    /// The host's earliest soft timer is due (wakes a spinning library).
    SoftTimer,
}

/// A host's side of the multicast schemes (each host's library holds
/// one: `super::host::Host::mc`): the scheme, the trees it forwards down,
/// the program's compute that waits for the host's sends, and its counters.
#[derive(Debug, Clone, Copy)]
pub struct HostMc {
    pub forwarding: Forwarding,
    pub tree: Kary,
    /// `host-packet`: PIO bytes of one extra descriptor per child.
    pub descriptor_bytes: u32,
    /// Program compute waiting to run once the host's sends are written.
    pub compute: Option<Duration>,
    /// Counters.
    pub host_forward_copies: u64,
    pub mc_packets_consumed: u64,
    pub mc_bytes_consumed: u64,
}

impl HostMc {
    pub fn new(forwarding: Forwarding, fanout: u32, hosts: u32, descriptor_bytes: u32) -> Self {
        HostMc {
            forwarding,
            tree: Kary { n: hosts, fanout },
            descriptor_bytes,
            compute: None,
            host_forward_copies: 0,
            mc_packets_consumed: 0,
            mc_bytes_consumed: 0,
        }
    }

    /// Extra PIO bytes of host `h`'s write of `pkt`: `host-packet` writes
    /// one more descriptor per extra child.
    pub fn extra_pio_bytes(&self, h: u32, pkt: &Packet) -> u32 {
        match (self.forwarding, pkt.bcast) {
            (Forwarding::HostPacket, Some(root)) => {
                self.tree.child_count(root, h).saturating_sub(1) * self.descriptor_bytes
            }
            _ => 0,
        }
    }

    /// Programs NI `rank`'s multicast firmware: its per-child forward cost
    /// and, under `ni` forwarding, its forwarding table (the tree this
    /// host's library forwards down) and its rank in it.
    pub fn program_ni(&self, ni: &mut Ni, rank: u32, fwd_cost: Duration) {
        ni.mc.fwd_cost = fwd_cost;
        if self.forwarding == Forwarding::Ni {
            ni.mc.table = Some(ForwardTable { tree: Tree::Kary(self.tree.fanout), ranks: self.tree.n });
            ni.mc.rank = rank;
        }
    }
}

/// What the library does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostAction {
    /// A packet is detected: successful poll (miss) + upcall + free, `cost` in all.
    Consume { pkt: Packet, cost: Duration },
    /// Read the NI's delivered counter across the bus (`pio` polling).
    PollNi,
    /// Run the library send path for the next packet (then [`HostAction::Write`]).
    SendPath,
    /// Write the packet and its descriptor into an NI send buffer by PIO.
    Write(Packet),
    /// No NI send buffer known free: read the NI's released counter by PIO.
    ReadSendCounter,
    /// Spin on the cached FULL flag of the next receive buffer.
    Spin,
}

/// One host.
#[derive(Debug)]
pub struct Host {
    pub id: u32,
    detect: Detect,
    packet_bytes: u32,
    poll_hit: Duration,
    poll_miss: Duration,
    upcall: Duration,
    pub send_cost: Duration,
    kernel_dispatch: Duration,
    signal_handler: Duration,
    /// Packets the NI has made visible (flag written), in receive-buffer order.
    pub visible: VecDeque<Packet>,
    /// `pio`: the NI counter as last read.
    pub known_delivered: u64,
    /// Processed-packet counter in host memory.
    pub consumed: u64,
    /// Interrupts-enabled flag in host memory (toggled without telling the
    /// NI; read by the NI's watchdog).
    pub irq_enabled: bool,
    /// When the library last polled (entered the library).
    pub last_poll: Instant,
    /// Messages to send, and the packet index within the head message.
    pub outbox: VecDeque<Outgoing>,
    next_frag: u32,
    next_msg: u32,
    /// Packet prepared by [`HostAction::SendPath`], to be written next.
    pub pending: Option<Packet>,
    /// Send buffers the host filled, and the NI's released count as last read.
    pub posted: u64,
    pub known_sent: u64,
    send_buffers: u64,
    /// Busy until an event wakes it.
    pub busy: bool,
    /// Spinning on the cached flag since then.
    pub spin_since: Option<Instant>,
    /// Counters.
    pub polls_failed: u64,
    pub polls_ok: u64,
    pub upcalls: u64,
    pub packets_sent: u64,
    pub interrupts: u64,
    /// The reliable protocol (timers study), if on.
    pub rel: Option<super::reliable::Reliable>,
    /// The host's core: where its process is, and the signals it took.
    pub(crate) core: SignalledCore,
    /// Its side of the multicast schemes.
    pub mc: HostMc,
}

impl Host {
    pub fn new(
        id: u32,
        cfg: &LciHostCfg,
        t: &LciHostTimes,
        detect: Detect,
        packet_bytes: u32,
        send_buffers: u32,
        mc: HostMc,
    ) -> Self {
        Host {
            id,
            detect,
            packet_bytes,
            poll_hit: t.poll_hit,
            poll_miss: t.poll_miss,
            upcall: t.upcall,
            send_cost: t.send,
            kernel_dispatch: t.kernel_dispatch,
            signal_handler: t.signal_handler,
            visible: VecDeque::with_capacity(cfg.recv_buffers as usize),
            known_delivered: 0,
            consumed: 0,
            irq_enabled: true,
            last_poll: Instant::ZERO,
            outbox: VecDeque::new(),
            next_frag: 0,
            next_msg: 0,
            pending: None,
            posted: 0,
            known_sent: 0,
            send_buffers: send_buffers as u64,
            busy: false,
            spin_since: None,
            polls_failed: 0,
            polls_ok: 0,
            upcalls: 0,
            packets_sent: 0,
            interrupts: 0,
            rel: None,
            core: SignalledCore::new(Mode::Library),
            mc,
        }
    }

    /// Cost of delivering an NI interrupt as a signal: kernel dispatch + user handler.
    pub fn signal_cost(&self) -> Duration {
        self.kernel_dispatch + self.signal_handler
    }

    /// NI send buffers it may fill before it reads the NI's released count.
    pub fn send_buffers(&self) -> u64 {
        self.send_buffers
    }

    /// Payload bytes of a full packet.
    pub fn packet_bytes(&self) -> u32 {
        self.packet_bytes
    }

    /// Packets a message of `size` bytes needs (at least one).
    pub fn packets_for(&self, size: u64) -> u32 {
        size.div_ceil(self.packet_bytes as u64).max(1) as u32
    }

    /// Ends a spin at `now` (a packet became visible): counts the failed
    /// polls (cache hits) it took.
    pub fn end_spin(&mut self, now: Instant) {
        if let Some(since) = self.spin_since.take() {
            self.polls_failed += now.since(since).as_ps() / self.poll_hit.as_ps().max(1);
        }
    }

    /// What the library does next (the host is not busy).
    pub fn next_action(&mut self, now: Instant) -> HostAction {
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
            if let Some(r) = self.rel.as_mut() {
                r.on_consume(now, pkt.src, pkt.ack, pkt.ack_only);
            }
            return HostAction::Consume { pkt, cost: self.poll_miss + self.upcall };
        }
        if let Some(p) = self.pending.take() {
            return HostAction::Write(p);
        }
        if let Some(r) = self.rel.as_mut() {
            // Library entry polls the cycle counter: fire a due ack timer
            // (first making sure an NI send buffer is known free for it).
            let due = r.timers.next().is_some_and(|t| t <= now);
            if due && self.posted - self.known_sent >= self.send_buffers {
                return HostAction::ReadSendCounter;
            }
            if let Some((peer, ack)) = r.due_ack(now) {
                let ctl = Packet {
                    src: self.id,
                    dst: peer,
                    msg: ACK_ONLY_MSG,
                    frag: 0,
                    last: true,
                    payload: 0,
                    msg_bytes: 0,
                    bcast: None,
                    tag: 0,
                    ack,
                    ack_only: true,
                };
                self.pending = Some(ctl);
                return HostAction::SendPath;
            }
        }
        let window_full = self.rel.as_ref().is_some_and(|r| !r.can_send());
        if window_full && !self.outbox.is_empty() {
            if let Some(r) = self.rel.as_mut() {
                r.stalls += 1;
            }
        }
        if let Some(o) = self.outbox.front().copied().filter(|_| !window_full) {
            if self.posted - self.known_sent >= self.send_buffers {
                return HostAction::ReadSendCounter;
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
                ack: 0,
                ack_only: false,
            });
            if let (Some(r), Some(p)) = (self.rel.as_mut(), self.pending.as_mut()) {
                p.ack = r.on_send_data(o.dst);
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
            return HostAction::SendPath;
        }
        match self.detect {
            Detect::NiCounter => HostAction::PollNi,
            Detect::HostFlag => HostAction::Spin,
        }
    }
}
