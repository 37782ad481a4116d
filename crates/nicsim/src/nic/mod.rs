//! The NIC: receive firmware, DMA engines, receive queues with their
//! interrupt line and coalescing policy (`queue`), steering, and the
//! transmit path; and the other firmware an NI may run, the LANai
//! firmware of the \[LCI] stack's NIs (`lanai`), which shares the NIC's
//! firmware processor and step times, its bus (with the host's PIO,
//! `Nic::pio`), delivery plans (`delivery`), the one watchdog and clock
//! path of both firmwares (`Nic::watchdog_timer`, `Nic::fetch_host_words`;
//! `watchdog`, `timers`) and the multicast forwarding table (`multicast`).
//!
//! This module owns the device's timing: the firmware is a FIFO server
//! (per-frame time), DMA engines are FIFO servers (start-up + bytes /
//! bandwidth, in order per engine) or, with `nic.dma_shared_bus`,
//! transactions on the host's I/O bus (`crate::host::bus`), and the ring
//! space the receive queues' buffers give (`Nic::ring_full`). A receive
//! queue (`RxQueue`) keeps its ring of completed descriptors, an interrupt
//! line masked from a raise until the host re-arms it (or while a busy
//! poller holds it suspended, `suspend`), and a coalescing policy
//! (`coalesce`); its state is private and its methods decide and return
//! what to schedule. It does not run host code: raising an interrupt
//! yields an event for `crate::sim`.

pub mod coalesce;
pub mod delivery;
pub mod flow;
pub mod lanai;
pub mod multicast;
mod queue;
pub mod steering;
pub mod suspend;
pub mod timers;
pub mod watchdog;

pub use queue::{
    BusyPoll, BusyStep, Outcome, QueueNapi, RingEntry, RxQueue, BIG_BUFFER_BYTES, BUSY_POLL_BUDGET, MXGEFW_PAD,
};

use crate::config::{BusTimes, NicCfg, NicTimes, PciCfg};
use crate::host::bus::{Bus, BusOp};
use crate::time::{Duration, Instant, Rate};
use flow::{FlowControl, Held, Hold};
use multicast::ForwardTable;

/// NIC timing resources.
pub struct Nic {
    pub queues: Vec<RxQueue>,
    /// Frames that have fully arrived whose DMA has not completed (in the
    /// firmware or in DMA): the "other DMAs pending" of [OMX-COAL]
    /// Algorithm 2 (see [`Nic::other_pending`]).
    pub pending: u32,
    /// When the firmware processor is free (a FIFO server: the receive,
    /// echo and forward work, or the LANai firmware's steps, `lanai`).
    pub fw_free: Instant,
    pub dma_free: Vec<Instant>,
    pub tx_free: Instant,
    /// Firmware time per received frame, the policy's and the steering's
    /// own work included, and per transmitted frame (`nic.fw_rx_ns`,
    /// `nic.fw_tx_ns`). The LANai firmware's receive and send steps, each
    /// with its DMA's set-up (`config::lanai_derive`).
    fw_rx: Duration,
    fw_tx: Duration,
    /// Firmware time spent on received frames, and their number.
    pub fw_rx_busy: Duration,
    pub fw_rx_frames: u64,
    dma_startup: Duration,
    /// DMA transfer rate, one memo per direction (see `Rate`).
    rx_dma: Rate,
    tx_dma: Rate,
    tx_dma_startup: Duration,
    pub irq_delivery: Duration,
    pub ring_slots: usize,
    /// Frames of at most this many bytes use the small ring (0: none).
    pub small_bytes: u32,
    pub in_dma: u32,
    /// Of `in_dma`, the frames bound for small-ring buffers, and the
    /// big-ring buffers the others fill.
    pub in_dma_small: u32,
    pub in_dma_big: u32,
    /// `nic.dma_shared_bus`: the host's I/O bus both DMA directions use
    /// (`None`: each direction has its own engines). Its per-DMA overhead
    /// is `dma_startup`.
    bus: Option<Box<Bus>>,
    /// On the shared bus, the transmit DMA's set-up before its bus
    /// transaction: `tx_dma_startup` beyond the bus's per-DMA overhead
    /// (firmware work, \[LCI]'s `dma_setup_cycles`; zero on emo2004): the
    /// LANai firmware's time to program any of its DMAs.
    tx_dma_setup: Duration,
    /// The multicast forwarding table (set by the build for either
    /// firmware: a multicast workload's tree under `ni` forwarding, or the
    /// LCI stack's fan-out tree under `nic.forwarding = "ni"`), and the firmware's time per
    /// forward on top of its transmit work (`nic.mcast_fwd_ns`; the LANai
    /// firmware's forward is this lookup and its network DMA's set-up).
    pub forwarding: Option<ForwardTable>,
    fw_fwd: Duration,
    /// Copies the firmware forwarded.
    pub forwards: u64,
    /// Bytes each receive DMA writes besides the frame: 0 for myri10ge's
    /// ring (its completion entry is a write of its own, not priced),
    /// the status word with packet shifting (`nic.rx_delivery`, `delivery`).
    pub rx_extra_bytes: u32,
    /// Link-level back-pressure (`nic.flow_control`, `flow`): the frames
    /// waiting at the stopped link, and whether any does (the one check
    /// an arriving frame and a freed buffer make).
    pub flow: Option<Box<FlowControl>>,
    flow_waiting: bool,
    /// When this NIC last dropped a frame at a full receive ring (`None`:
    /// never): what a give-up reads to tell a ring too small for the load
    /// from a message lost some other way.
    pub ring_drop_at: Option<Instant>,
    /// The \[LCI] LANai firmware this NIC runs instead of the Open-MX
    /// NIC's receive path, when the host runs the LCI stack
    /// (`protocol.stack = "lci"`; `lanai`); its DMAs and its host's PIO
    /// share the NIC's bus ([`Nic::run_lanai`]).
    pub lanai: Option<Box<lanai::Ni>>,
    /// The origin of its events in the world's queue (`crate::engine`:
    /// the tie-break of events at one instant), which the world's build
    /// gives it: its host's, or, where the host runs the \[LCI] stack, its
    /// own beside its host's library's.
    pub origin: crate::engine::Origin,
}

impl Nic {
    /// A NIC whose receive firmware spends `fw_rx_extra` per frame on top of
    /// `t.fw_rx` (the coalescing policy's and the steering's own work); on
    /// a shared bus (`nic.dma_shared_bus`) the host's PIO crosses it as
    /// `pci` says (a LANai platform's `[pci]`; none: no PIO transactions).
    pub fn new(cfg: &NicCfg, t: &NicTimes, queues: Vec<RxQueue>, fw_rx_extra: Duration, pci: Option<&PciCfg>) -> Self {
        let bus = BusTimes::dma_only(t.dma_bytes_per_s, t.dma_startup);
        let bus = pci.map_or(bus, |c| bus.with_pio(c));
        Nic {
            queues,
            pending: 0,
            fw_free: Instant::ZERO,
            dma_free: vec![Instant::ZERO; cfg.rx_dma_engines as usize],
            tx_free: Instant::ZERO,
            fw_rx: t.fw_rx + fw_rx_extra,
            fw_tx: t.fw_tx,
            fw_rx_busy: Duration::ZERO,
            fw_rx_frames: 0,
            dma_startup: t.dma_startup,
            rx_dma: Rate::new(t.dma_bytes_per_s),
            tx_dma: Rate::new(t.dma_bytes_per_s),
            tx_dma_startup: t.tx_dma_startup,
            irq_delivery: t.irq_delivery,
            ring_slots: cfg.ring_slots as usize,
            small_bytes: cfg.small_bytes,
            in_dma: 0,
            in_dma_small: 0,
            in_dma_big: 0,
            bus: cfg.dma_shared_bus.then(|| Box::new(Bus::new(&bus))),
            tx_dma_setup: t.tx_dma_startup.saturating_sub(t.dma_startup),
            forwarding: None,
            fw_fwd: t.mcast_fwd,
            forwards: 0,
            rx_extra_bytes: 0,
            flow: None,
            flow_waiting: false,
            ring_drop_at: None,
            lanai: None,
            origin: 0,
        }
    }

    /// The host's shared I/O bus (`nic.dma_shared_bus`, or the LANai
    /// firmware's PCI bus), with its counters.
    pub fn bus(&self) -> Option<&Bus> {
        self.bus.as_deref()
    }

    /// The NIC runs the LANai firmware `ni` (its DMAs share the NIC's bus,
    /// the host's PCI bus, with the host's PIO; under `ni` forwarding it
    /// forwards along the NIC's `forwarding` table).
    pub fn run_lanai(&mut self, ni: lanai::Ni) {
        debug_assert!(self.bus.is_some(), "a LANai platform's NIC is on its host's PCI bus");
        self.lanai = Some(Box::new(ni));
    }

    /// The host's shared bus (`nic.dma_shared_bus`), mutable.
    fn shared_bus(&mut self) -> &mut Bus {
        self.bus.as_deref_mut().expect("a NIC on its host's shared bus (nic.dma_shared_bus)")
    }

    /// Its host's programmed I/O `op` across the NIC's shared bus at `now`
    /// (a read of a NIC word, a write into NIC memory; `[pci]`): returns
    /// when it ends (a read: when the word is back).
    pub fn pio(&mut self, now: Instant, op: BusOp) -> Instant {
        self.shared_bus().request(now, op).1
    }

    /// Frames wait at the stopped link (`flow`): an arriving frame queues
    /// behind them, and freed ring space must let them in.
    #[inline(always)]
    pub fn flow_waiting(&self) -> bool {
        self.flow_waiting
    }

    /// A frame waits at the stopped link (flow control is on). `None`
    /// without flow control: the frame is dropped.
    pub fn flow_hold(&mut self, h: Held) -> Option<Hold> {
        let f = self.flow.as_deref_mut()?;
        let r = f.hold(h);
        self.flow_waiting = f.waiting() > 0;
        Some(r)
    }

    /// After the stop gave up: the next waiting frame, to drop (`None`
    /// once none waits).
    pub fn flow_drop_waiting(&mut self) -> Option<Held> {
        let f = self.flow.as_deref_mut()?;
        let h = f.drop_waiting();
        self.flow_waiting = f.waiting() > 0;
        h
    }

    /// The frame at the head of the stopped link enters the NIC at `now`
    /// if its ring has room for it (its slab id and queue); `None` if
    /// nothing waits or it still does not fit (it stays at the head, and
    /// so do the frames behind it).
    pub fn flow_admit(&mut self, now: Instant) -> Option<(u32, usize)> {
        let head = *self.flow.as_deref()?.head()?;
        if self.ring_full(head.q as usize, head.small, head.bufs) {
            return None;
        }
        let f = self.flow.as_deref_mut()?;
        let h = f.admit(now)?;
        self.flow_waiting = f.waiting() > 0;
        Some((h.frame, h.q as usize))
    }

    /// A frame's last bit arrived at `now`: run the firmware, then book the
    /// earliest-free DMA engine. Returns the DMA completion time.
    ///
    /// An engine is busy for the transfer itself (bytes / bandwidth); the
    /// start-up latency (PCIe write posting) overlaps with the next transfer,
    /// as PCIe keeps several requests in flight. With `nic.dma_shared_bus`
    /// the transfer is a [`BusOp::Dma`] on the host's bus, which it holds
    /// from its start-up to its last byte, in turn with the transmit DMAs.
    pub fn receive(&mut self, now: Instant, frame_len: usize) -> Instant {
        let frame_len = frame_len + self.rx_extra_bytes as usize;
        let fw_done = now.max(self.fw_free) + self.fw_rx;
        self.fw_free = fw_done;
        self.fw_rx_busy += self.fw_rx;
        self.fw_rx_frames += 1;
        if let Some(bus) = self.bus.as_deref_mut() {
            return bus.request(fw_done, BusOp::Dma { bytes: frame_len as u32 }).1;
        }
        let (i, free) =
            self.dma_free.iter().copied().enumerate().min_by_key(|&(i, t)| (t, i)).unwrap_or((0, Instant::ZERO));
        let xfer_done = fw_done.max(free) + self.rx_dma.time(frame_len as u64);
        if let Some(slot) = self.dma_free.get_mut(i) {
            *slot = xfer_done;
        }
        xfer_done + self.dma_startup
    }

    /// The host rang the doorbell at `now` for a frame of `frame_len` bytes:
    /// DMA read + firmware. Returns when the frame is ready for the wire.
    /// Reads are pipelined like receive DMAs: the read latency overlaps with
    /// the next frame's transfer. On a shared bus the firmware sets the DMA
    /// up (`tx_dma_setup`), then the read is a [`BusOp::Dma`] holding the
    /// bus for the per-DMA overhead and the bytes.
    pub fn transmit(&mut self, now: Instant, frame_len: usize) -> Instant {
        if let Some(bus) = self.bus.as_deref_mut() {
            let (_, done) = bus.request(now + self.tx_dma_setup, BusOp::Dma { bytes: frame_len as u32 });
            return done + self.fw_tx;
        }
        let xfer_done = now.max(self.tx_free) + self.tx_dma.time(frame_len as u64);
        self.tx_free = xfer_done;
        xfer_done + self.tx_dma_startup + self.fw_tx
    }

    /// \[EMO] firmware echo: receive processing, a byte copy of `copy`
    /// between NIC buffers, transmit processing; returns when the reply is
    /// ready for the wire (the firmware is busy until then).
    pub fn firmware_echo(&mut self, now: Instant, copy: Duration) -> Instant {
        self.fw_run(now, self.fw_rx + copy + self.fw_tx)
    }

    /// \[LCI] NI-level multicast: the firmware forwards one copy of a
    /// frame that sits in its receive buffer (a table lookup and a header
    /// rewrite, then transmit processing; no DMA: the data never leave the
    /// NIC). Returns when the copy is ready for the wire (the firmware is
    /// busy until then). Called once per child, after the frame's own
    /// receive processing, so the copies leave in send order.
    pub fn firmware_forward(&mut self, now: Instant) -> Instant {
        self.forwards += 1;
        self.fw_run(now, self.fw_fwd + self.fw_tx)
    }

    /// Fetches host words at `now` (the polling watchdog's view of the
    /// host's progress, the NI clock's timer words) with one small host ->
    /// NIC DMA read, for either firmware; returns when they are in the NIC.
    /// On the host's shared bus (`nic.dma_shared_bus`, a LANai's PCI bus)
    /// the firmware programs the DMA (`tx_dma_setup`), which then holds the
    /// bus for its per-DMA overhead and one word; otherwise it takes the
    /// NIC's DMA read latency (`nic.tx_dma_startup_ns`).
    pub fn fetch_host_words(&mut self, now: Instant) -> Instant {
        if self.bus.is_none() {
            return now + self.tx_dma_startup;
        }
        let programmed = self.fw_run(now, self.tx_dma_setup);
        self.shared_bus().request(programmed, BusOp::Dma { bytes: delivery::FLAG_BYTES }).1
    }

    /// The polling watchdog's event of generation `gen` at `now`, for
    /// either firmware: receive queue `q`'s (the Open-MX NIC), or the LANai
    /// firmware's one. At its timer's expiry the NIC fetches the host's
    /// words ([`Nic::fetch_host_words`]), and the watchdog's next event is
    /// the fetch's return; at that return \[LCI] §5.1's rule runs on what
    /// the fetch read: the LANai firmware's host's `words` (its
    /// interrupts-enabled flag and the packets it consumed), or the frames
    /// the host took from queue `q`'s ring (its flag always reads enabled).
    /// The outcome: the interrupt raised (the queue's, through its line; the
    /// LANai's, a signal to its host), and the watchdog's next event (at
    /// this instant, this generation).
    pub fn watchdog_timer(
        &mut self,
        now: Instant,
        q: usize,
        gen: u32,
        words: (bool, u64),
    ) -> (Outcome, Option<(Instant, u32)>) {
        let expires = match self.lanai.as_deref() {
            Some(ni) => ni.watchdog.as_ref().is_some_and(|w| w.expires(gen)),
            None => self.queues[q].watchdog_expires(gen),
        };
        if expires {
            let back = self.fetch_host_words(now);
            let next = match self.lanai.as_deref_mut() {
                Some(ni) => ni.watchdog.as_mut().map(|w| w.fetch(back)),
                None => self.queues[q].watchdog_fetch(back),
            };
            return (Outcome::default(), next);
        }
        match self.lanai.as_deref_mut() {
            Some(ni) => ni.watchdog_fetched(now, gen, words),
            None => self.queues[q].watchdog_fetched(now, gen),
        }
    }

    /// Runs `d` of firmware on the NIC's processor (a FIFO server) from
    /// `now`; returns when it ends (the processor is busy until then).
    fn fw_run(&mut self, now: Instant, d: Duration) -> Instant {
        self.fw_free = now.max(self.fw_free) + d;
        self.fw_free
    }

    /// Frames other than the one whose DMA just completed that the NIC has
    /// received whole and not yet delivered (in the firmware or in DMA): the
    /// "other DMA pending" test of [OMX-COAL] Algorithm 2, whose firmware
    /// creates a descriptor and submits its DMA when "a packet arrives". A
    /// frame still coming in off the wire does not count: the NIC stores a
    /// frame whole (its FCS ends it) before the firmware sees it. So the
    /// deferral window of a marked frame is its own firmware + DMA time
    /// (about 1.6 us for a 1500 B frame on omx2009), and the next frame must
    /// have arrived whole within it: back to back on the wire (1.2 us at
    /// 10 Gb/s) it has; "as soon a small delay between packets appears"
    /// ([OMX-COAL] IV-C4) of more than the difference it has not.
    #[inline]
    pub fn other_pending(&self) -> u32 {
        self.pending
    }

    /// Whether a frame of `len` bytes takes a small-ring buffer: myri10ge's
    /// firmware fills a buffer of `rx_small` for a frame of at most
    /// `small_bytes`, of `rx_big` for a larger one (`myri10ge_clean_rx_done`).
    #[inline]
    pub fn is_small(&self, len: usize) -> bool {
        len <= self.small_bytes as usize
    }

    /// Big-ring buffers a frame of `len` bytes fills (one below a page).
    #[inline]
    pub fn big_bufs(len: usize) -> u32 {
        (len + MXGEFW_PAD).div_ceil(BIG_BUFFER_BYTES) as u32
    }

    /// Whether queue `q` has too few free buffers for a frame of this ring
    /// class that fills `bufs` of them (1 for the small ring): the buffers
    /// of that class in DMA and in the ring, and the frame's, exceed what
    /// is posted.
    pub fn ring_full(&self, q: usize, small: bool, bufs: u32) -> bool {
        let qu = &self.queues[q];
        let used = if small { qu.small_in_ring + self.in_dma_small } else { qu.big_in_ring + self.in_dma_big };
        used + bufs > qu.posted[small as usize]
    }
}

#[cfg(test)]
mod tests;
