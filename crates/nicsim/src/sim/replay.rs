//! The replay source: the frames of a capture, injected at their arrival
//! times into one receiving host's NIC; the generalisation of the
//! invalid-packet flood (`flood`).
//!
//! This module owns the replayed frames (given once, in arrival order, then
//! only indexed), the injection (`Ev::ReplayTick` -> the NIC's receive path)
//! and what the replay measures per frame: the delay from NIC arrival to the
//! handler finishing the frame, and the host's interrupts so far at each
//! arrival.
//!
//! The frames the receiving host itself sent (the capture's frames from its
//! MAC: a receiver's acks, a ping-pong's replies) are replayed as its NIC's
//! transmissions: each leaves at its captured time (taken as its first bit
//! on the wire, as nicsim's own captures stamp it) and its transmit
//! completion is reported on the queue of its sending endpoint when its last
//! bit has left (`Ev::TxDone`, with `nic.tx_done_interrupts`), so the
//! coalescing policy and the interrupts see the host's transmit completions
//! as in the run. The host's work to send them (library, driver) is not
//! replayed: no process runs on the replay host. It does not own reading capture files (the Python front reads
//! them with a packet library and passes each frame's time, length and
//! header bytes), nor what the NIC, the coalescing policy, the kernel or the
//! handler do with a frame (`nic_path`, `kernel`, `crate::kernel`).
//!
//! An Open-MX frame (EtherType 0x86DF) is decoded by `wire::FrameRepr::
//! parse_header`; the NIC firmware copies its marker bit into the descriptor
//! as for any simulated frame, steering reads its destination endpoint, and
//! the Open-MX handler takes it (no process opened an endpoint on the
//! replay host, so the handler drops it after parsing, at its drop cost, as
//! the flood's packets). One whose header does not decode is dropped by the
//! NIC as malformed. Any other frame is generic traffic: unmarked (or as
//! the caller marks it), steered on its flow hash, through the driver at its
//! per-frame cost plus the handler's drop cost (the simulator has no IP
//! stack: this is the cheapest handling a frame gets after the driver), and
//! delivered there.

use super::{Ev, World, NETWORK_ORIGIN};
use crate::config::Workload;
use crate::time::{Duration, Instant};
use crate::wire::{FrameRepr, ETHERTYPE_OMX, ETH_HEADER_LEN};
use crate::Metrics;

/// The most frames one replay takes (Python refuses a larger capture before
/// reading it whole): about 120 MB of frames and per-frame results.
pub const REPLAY_MAX_FRAMES: usize = 1_000_000;

/// The latest frame time a replay takes, in nanoseconds from the first
/// frame: the simulated clock's limit ([`Instant::LIMIT`], 100 days).
pub const MAX_TIME_NS: u64 = crate::time::MAX_TIME_NS;

/// Frame `index`'s time, `ns` nanoseconds, as simulated time; a time
/// beyond [`MAX_TIME_NS`] is refused with an error naming the frame, its
/// time and the latest allowed.
pub fn frame_time_ns(index: usize, ns: u64) -> Result<Instant, crate::SimError> {
    Instant::checked_from_ns(ns).ok_or_else(|| beyond_limit(index, ns.to_string()))
}

/// The error of frame `index` at `ns` (a number of nanoseconds) beyond the clock's limit.
#[cold]
fn beyond_limit(index: usize, ns: String) -> crate::SimError {
    crate::SimError(format!(
        "replay: frame {index} at {ns} ns is beyond the simulated clock's range (allowed: 0 ..= {MAX_TIME_NS} ns \
         from the first frame, 100 days)"
    ))
}

/// What a captured frame is to the receiving NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayKind {
    /// An Open-MX frame whose header decoded.
    Omx(FrameRepr),
    /// EtherType 0x86DF whose header did not decode: the NIC drops it.
    Malformed,
    /// Any other EtherType: generic traffic, steered on `flow`.
    Other { marked: bool, flow: u32 },
}

/// One captured frame: when its last bit reached the receiving NIC (or,
/// `sent`, when the host's NIC put its first bit on the wire), its length on
/// the wire and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayFrame {
    pub at: Instant,
    pub len: u32,
    pub kind: ReplayKind,
    /// The receiving host sent it.
    pub sent: bool,
}

impl ReplayFrame {
    /// A captured frame from its header bytes (at least the Ethernet
    /// header; an Open-MX frame's whole header). `mark` marks a frame that
    /// is not Open-MX (a user policy's choice); `flow` is its flow hash;
    /// `sent`: the receiving host sent it.
    pub fn from_capture(at: Instant, len: u32, head: &[u8], mark: bool, flow: u32, sent: bool) -> Self {
        let ethertype = head.get(12..ETH_HEADER_LEN).map(|b| u16::from_be_bytes([b[0], b[1]]));
        let kind = if ethertype == Some(ETHERTYPE_OMX) {
            match FrameRepr::parse_header(head) {
                Ok(repr) => ReplayKind::Omx(repr),
                Err(_) => ReplayKind::Malformed,
            }
        } else {
            ReplayKind::Other { marked: mark, flow }
        };
        ReplayFrame { at, len: len.max(crate::wire::MIN_FRAME_LEN as u32), kind, sent }
    }
}

/// Per-frame results of a replay, in arrival order (a stable sort of the
/// frames given by time).
#[derive(Clone, Debug, Default)]
pub struct ReplaySeries {
    /// Arrival at the NIC (the capture's times, from the first frame's).
    pub arrival: Vec<Instant>,
    /// From arrival to the handler finishing the frame; `None`: dropped.
    pub delay: Vec<Option<Duration>>,
    /// Interrupts the host had raised when the frame arrived.
    pub irq_before: Vec<u64>,
    /// Interrupts the host had raised when its handler took the frame: the
    /// number of the interrupt it rode on (the latest raised; with one
    /// receive queue, the one whose poll took it, as NAPI keeps the queue's
    /// interrupt masked until its poll ends); 0 for a dropped frame.
    pub irq: Vec<u64>,
    /// The receive queue steering chose; [`NO_QUEUE`] for a frame dropped
    /// before steering (a malformed Open-MX header).
    pub queue: Vec<u8>,
}

/// [`ReplaySeries::queue`] of a frame dropped before steering.
pub const NO_QUEUE: u8 = u8::MAX;

/// The replay source's state: the frames, the next one due, and what it
/// measures.
pub(crate) struct Replay {
    /// The frames to the host, and the next one due.
    frames: Vec<ReplayFrame>,
    next: usize,
    /// The frames the host sent, and the next one due.
    sent: Vec<ReplayFrame>,
    next_sent: usize,
    /// The receiving host.
    pub(crate) host: usize,
    /// Frame slab id -> index of the replayed frame it carries.
    slot: Vec<u32>,
    series: ReplaySeries,
    /// Frames that reached the handler, and how many were Open-MX, marked.
    handled: u64,
    omx: u64,
    marked: u64,
}

impl Replay {
    /// The replay of `frames` (sorted here by time, stably) into and out
    /// of `host`.
    pub(crate) fn new(all: Vec<ReplayFrame>, host: usize) -> Self {
        let (mut sent, mut frames): (Vec<_>, Vec<_>) = all.into_iter().partition(|f| f.sent);
        frames.sort_by_key(|f| f.at);
        sent.sort_by_key(|f| f.at);
        let n = frames.len();
        Replay {
            next: 0,
            sent,
            next_sent: 0,
            host,
            slot: Vec::new(),
            series: ReplaySeries {
                arrival: frames.iter().map(|f| f.at).collect(),
                delay: vec![None; n],
                irq_before: vec![0; n],
                irq: vec![0; n],
                queue: vec![NO_QUEUE; n],
            },
            frames,
            handled: 0,
            omx: 0,
            marked: 0,
        }
    }

    /// Frames to the host.
    pub(crate) fn len(&self) -> u64 {
        self.frames.len() as u64
    }

    /// The longest time between two frames of either direction (or before
    /// the first).
    pub(crate) fn longest_gap(&self) -> Duration {
        let mut at: Vec<Instant> = self.frames.iter().chain(&self.sent).map(|f| f.at).collect();
        at.sort_unstable();
        let mut last = Instant::ZERO;
        let mut gap = Duration::ZERO;
        for t in at {
            gap = gap.max(t.since(last));
            last = t;
        }
        gap
    }

    /// Every frame was injected or sent.
    pub(crate) fn exhausted(&self) -> bool {
        self.next == self.frames.len() && self.next_sent == self.sent.len()
    }

    /// When the next frame of either direction is due (a received one first
    /// at a tie), and whether it is a sent one.
    fn next_due(&self) -> Option<(Instant, bool)> {
        match (self.frames.get(self.next), self.sent.get(self.next_sent)) {
            (Some(r), Some(s)) if s.at < r.at => Some((s.at, true)),
            (Some(r), _) => Some((r.at, false)),
            (None, Some(s)) => Some((s.at, true)),
            (None, None) => None,
        }
    }
}

impl World {
    /// Starts the replay of `r` (called once, at build time).
    pub(crate) fn start_replay(&mut self, r: Replay) {
        if let Some((at, _)) = r.next_due() {
            self.q.push(at, NETWORK_ORIGIN, Ev::ReplayTick);
        }
        self.replay = Some(Box::new(r));
    }

    /// The next captured frame reaches the receiving NIC, or leaves it.
    pub(super) fn replay_tick(&mut self, now: Instant) {
        let Some(r) = self.replay.as_mut() else { return };
        let Some((_, sent)) = r.next_due() else { return };
        if sent {
            let f = r.sent[r.next_sent];
            r.next_sent += 1;
            if let Some((at, _)) = r.next_due() {
                self.q.push(at.max(now), NETWORK_ORIGIN, Ev::ReplayTick);
            }
            self.replay_sent(now, f);
            return;
        }
        let i = r.next;
        let f = r.frames[i];
        r.next += 1;
        let h = r.host;
        r.series.irq_before[i] = self.hosts[h].rx.irq_raised();
        if let Some((at, _)) = r.next_due() {
            self.q.push(at.max(now), NETWORK_ORIGIN, Ev::ReplayTick);
        }
        let id = self.alloc_frame();
        let r = self.replay.as_mut().expect("replaying");
        if r.slot.len() <= id as usize {
            r.slot.resize(id as usize + 1, 0);
        }
        r.slot[id as usize] = i as u32;
        self.frames.count_sent(f.len as usize);
        let fr = &mut self.frames[id as usize];
        (fr.len, fr.src, fr.dst, fr.src_ep, fr.marked) = (f.len, 0, h as u16, 0, false);
        match f.kind {
            ReplayKind::Omx(repr) => {
                fr.parsed = Some(repr);
                // The queue `nic_rx` steers it to (its source is host 0).
                let q = self.hosts[h].steering.queue_for(Some(repr.body.dst_endpoint()), 0);
                self.replay_queue(i, q);
                self.nic_rx(now, id);
            }
            ReplayKind::Malformed => {
                fr.parsed = None;
                self.nic_rx(now, id);
            }
            ReplayKind::Other { marked, flow } => {
                fr.parsed = None;
                fr.marked = marked;
                let q = self.hosts[h].steering.queue_for(None, flow);
                self.replay_queue(i, q);
                self.nic_ingress(now, h, id, q);
            }
        }
    }

    /// Frame `i` of the replay is steered to queue `q`.
    fn replay_queue(&mut self, i: usize, q: usize) {
        if let Some(r) = self.replay.as_mut() {
            r.series.queue[i] = q as u8;
        }
    }

    /// The host's NIC puts captured frame `f` on the wire at `now`: its
    /// transmit completion is reported when its last bit has left, on the
    /// queue its sending endpoint (or flow) steers to, as `transmit` does.
    fn replay_sent(&mut self, now: Instant, f: ReplayFrame) {
        let Some(r) = self.replay.as_mut() else { return };
        let h = r.host;
        if !self.env.c.tx_done_irq || self.env.c.native {
            return;
        }
        let steering = &self.hosts[h].steering;
        let q = match f.kind {
            ReplayKind::Omx(repr) => steering.queue_for(repr.body.src_endpoint(), 0),
            ReplayKind::Malformed => steering.queue_for(None, 0),
            ReplayKind::Other { flow, .. } => steering.queue_for(None, flow),
        };
        let end = now + self.wire.net.serialization(f.len as usize);
        let (dtor, ep, bytes) = (crate::kernel::TxDtor::None, 0, super::frame::wire_bytes(f.len));
        self.q.push(end, h as u32, Ev::TxDone { host: h as u16, q: q as u8, dtor, ep, bytes });
    }

    /// The handler finished frame `id` at `now` (replays only): its delay.
    pub(super) fn replay_handled(&mut self, now: Instant, id: u32) {
        let Some(r) = self.replay.as_mut() else { return };
        let i = r.slot[id as usize] as usize;
        r.series.delay[i] = Some(now.since(r.frames[i].at));
        r.series.irq[i] = self.hosts[r.host].rx.irq_raised();
        r.handled += 1;
        if let ReplayKind::Omx(repr) = r.frames[i].kind {
            r.omx += 1;
            r.marked += repr.marked as u64;
        } else if let ReplayKind::Other { marked: true, .. } = r.frames[i].kind {
            r.marked += 1;
        }
    }

    /// The replay's own metrics, on top of the world's.
    pub(super) fn replay_metrics(&self, m: &mut Metrics) {
        let Some(r) = self.replay.as_ref() else { return };
        let hs = &self.hosts[r.host];
        let n = r.len();
        let d = &self.frames.drops;
        m.set("replay_frames", n as f64);
        m.set("replay_sent_frames", r.sent.len() as f64);
        m.set("replay_handled_frames", r.handled as f64);
        m.set("replay_omx_frames", r.omx as f64);
        m.set("replay_other_frames", (r.handled - r.omx) as f64);
        m.set("replay_marked_frames", r.marked as f64);
        // Dropped before the handler (full ring, malformed Open-MX header).
        m.set("replay_dropped", (d.ring_full + d.malformed + d.loss) as f64);
        m.set("replay_dropped_ring_full", d.ring_full as f64);
        m.set("replay_dropped_malformed", d.malformed as f64);
        m.set("replay_interrupts", hs.rx.irq_raised() as f64);
        // An interrupt reports received frames (it schedules the poll) or
        // only transmit completions of the frames the host sent.
        m.set("replay_rx_interrupts", hs.rx.irq_rx() as f64);
        m.set("replay_tx_interrupts", (hs.rx.irq_raised() - hs.rx.irq_rx()) as f64);
        m.ratio("replay_interrupts_per_frame", hs.rx.irq_raised() as f64, n as f64, "the capture has no frame");
        let busy = hs.kernel_time + hs.app_time + hs.spin_time;
        // Per frame the wire carried to the host, as the interrupts per frame
        // (a dropped frame is one the host did not pay for).
        m.ratio("replay_cpu_ns_per_frame", busy.as_ns_f64(), n as f64, "the capture has no frame");
        let mut delays: Vec<u64> = r.series.delay.iter().flatten().map(|d| d.as_ps()).collect();
        delays.sort_unstable();
        for (k, q) in [("replay_delay_p50_us", 0.50), ("replay_delay_p99_us", 0.99), ("replay_delay_max_us", 1.0)] {
            if delays.is_empty() {
                m.unmeasured(k, "no frame reached the host's handler");
            } else {
                // Nearest rank: the smallest delay with at least q of them at or below it.
                let rank = ((q * delays.len() as f64).ceil() as usize).clamp(1, delays.len());
                m.set(k, delays[rank - 1] as f64 / 1e6);
            }
        }
        let span = r.frames.last().map_or(Duration::ZERO, |f| f.at.since(Instant::ZERO));
        m.set("replay_span_us", span.as_us_f64());
    }

    /// The per-frame results (the world keeps them until it is dropped).
    pub(crate) fn take_replay_series(&mut self) -> ReplaySeries {
        self.replay.as_mut().map(|r| std::mem::take(&mut r.series)).unwrap_or_default()
    }

    /// The replay is over: every frame injected and accounted for (handled
    /// or dropped before the handler), and the host idle.
    pub(super) fn replay_finished(&self) -> bool {
        let Some(r) = self.replay.as_ref() else { return true };
        let d = &self.frames.drops;
        r.exhausted()
            && self.hosts[r.host].rx.rx_frames() + d.loss + d.ring_full + d.malformed >= r.len()
            && self.all_idle(r.host)
    }
}

/// Runs `frames` into host `host` of scenario `s` (whose workload is
/// replaced by the replay), with a user coalescing policy if given;
/// returns the world's metrics with the replay's and the per-frame series.
pub fn run_replay(
    s: &crate::Scenario,
    frames: Vec<ReplayFrame>,
    host: usize,
    policy: Option<super::PolicyFactory<'_>>,
    check: crate::interrupt::Check<'_>,
) -> Result<(Metrics, ReplaySeries), crate::SimError> {
    run_replay_traced(s, frames, host, policy, check, None).map(|(m, series, _)| (m, series))
}

/// Runs a replay as [`run_replay`] does and, given a [`super::TraceCfg`],
/// records its timeline as `run_traced` records a run's (`sim::trace`).
pub fn run_replay_traced(
    s: &crate::Scenario,
    frames: Vec<ReplayFrame>,
    host: usize,
    policy: Option<super::PolicyFactory<'_>>,
    check: crate::interrupt::Check<'_>,
    trace: Option<super::TraceCfg>,
) -> Result<(Metrics, ReplaySeries, Option<Box<super::Tracer>>), crate::SimError> {
    if frames.is_empty() {
        return Err(crate::SimError("replay: no frames to replay".into()));
    }
    if frames.len() > REPLAY_MAX_FRAMES {
        return Err(crate::SimError(format!(
            "replay: {} frames, more than the {REPLAY_MAX_FRAMES} a replay takes",
            frames.len()
        )));
    }
    if let Some((i, f)) = frames.iter().enumerate().find(|(_, f)| f.at > Instant::LIMIT) {
        let ps = f.at.as_ps();
        return Err(beyond_limit(i, format!("{}.{:03}", ps / 1_000, ps % 1_000)));
    }
    let hosts = s.platform.topology.hosts as usize;
    if host >= hosts {
        return Err(crate::SimError(format!("replay: host {host} does not exist (the preset has {hosts})")));
    }
    let mut s = s.clone();
    s.workload = Workload::Replay;
    s.pcap = None;
    let mut w = World::build(&s, policy, trace)?;
    w.start_replay(Replay::new(frames, host));
    w.run_checked(check)?;
    w.check_invariants()?;
    let m = w.metrics();
    let series = w.take_replay_series();
    Ok((m, series, w.trace.take()))
}
