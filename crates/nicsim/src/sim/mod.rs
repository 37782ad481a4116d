//! The simulated world: where NICs, the network, hosts, the Open-MX-like
//! protocol and the workloads meet, driven by one event queue.
//!
//! This module owns the *receive and send paths* that cross components:
//! frame transmission (library -> driver -> NIC -> wire), reception (wire ->
//! NIC firmware -> DMA -> coalescing -> interrupt -> NAPI bottom half ->
//! Open-MX receive handler -> event ring -> library), core scheduling with
//! preemption and sleep states, and metrics. Each component's own state and
//! rules live in its module (`nic`, `net`, `host`, `proto`, `workload`); the
//! costs come from the validated [`Scenario`].
//!
//! Event order is deterministic (see `crate::engine`); the only randomness
//! (loss, reordering) comes from the scenario's seed.

mod echo;
mod lib_path;
mod metrics;

pub use metrics::Metrics;

use crate::config::{Scenario, WaitMode, Workload};
use crate::engine::{EventQueue, SimRng};
use crate::host::{CacheCosts, CacheStats, Obj, ObjClass, Topology};
use crate::net::Network;
use crate::nic::steering::Steering;
use crate::nic::{Nic, Outcome, RingEntry, RxQueue};
use crate::proto::{Peer, PullHandle};
use crate::time::{Duration, Instant};
use crate::wire::{FrameRepr, MarkedClasses, OmxBody};
use crate::workload::Program;
use std::collections::VecDeque;

/// An error that ends a run early (never a panic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SimError {}

/// `LibEvent::writer_die` of events the NIC wrote straight to memory.
pub(crate) const WRITER_MEMORY: u16 = u16::MAX;

/// Maximum header bytes kept per frame (Ethernet + largest Open-MX header).
const HDR_CAP: usize = 96;

/// A frame in flight: its header plus the payload length (the payload's
/// contents are never interpreted, so they are not stored).
#[derive(Clone, Copy)]
pub(crate) struct Frame {
    /// The header, as parsing its bytes gives it back (`None`: malformed).
    /// Every hop (NIC firmware, bottom half, receive handler) reads this;
    /// the bytes themselves are encoded only for the few readers that want
    /// them (pcap, the kernel echo), by `header_bytes`. The header never
    /// changes in flight.
    parsed: Option<FrameRepr>,
    /// The receive descriptor's copy of the marker (set by the NIC firmware
    /// when the frame arrives: [OMX-COAL] Algorithm 1, line 2).
    marked: bool,
    /// Receive queue chosen by steering (set at arrival).
    q: u8,
    /// The sending endpoint (its queue gets the transmit completion).
    src_ep: u8,
    /// Interrupts the destination host had raised when this frame's DMA
    /// completed: the first interrupt after it is the one that reports it.
    irq_stamp: u32,
    len: u32,
    src: u16,
    dst: u16,
}

impl Frame {
    /// Encodes the header into `buf`; returns its length (0: malformed).
    fn header_bytes(&self, buf: &mut [u8; HDR_CAP]) -> usize {
        let Some(repr) = self.parsed else { return 0 };
        let hl = repr.header_len();
        repr.emit(&mut buf[..hl]);
        hl
    }
}

/// Events of the world. Small and `Copy`: frames travel by slab index.
/// Eight bytes in all (checked below), so that an event is passed to and
/// from the event queue in a register. Built in memory field by field and
/// then copied whole (as the 16-byte layout was), every push stalled
/// store-to-load forwarding. Core indices fit in a byte (at most 256
/// cores per host, checked by the topology validation), dies too (64).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    SwitchIn {
        frame: u32,
    },
    NicRx {
        frame: u32,
    },
    DmaDone {
        host: u16,
        frame: u32,
    },
    TxDone {
        host: u16,
        q: u8,
    },
    CoalTimer {
        host: u16,
        q: u8,
        gen: u32,
    },
    IrqArrive {
        host: u16,
        q: u8,
        /// The interrupt reports received frames (schedules NAPI).
        rx: bool,
    },
    CoreDone {
        host: u16,
        core: u8,
        gen: u32,
    },
    ProcTimer {
        host: u16,
        p: u16,
    },
    PullTimer {
        handle: u32,
    },
    /// The copy engine finished the last copy of a completed pull.
    PullCopied {
        handle: u32,
        host: u16,
        /// The writer's die, `u8::MAX` for memory (WRITER_MEMORY).
        die: u8,
    },
    FloodTick,
    /// gro_flush_timeout expired: re-poll the deferred NAPI on `core`.
    NapiTimer {
        host: u16,
        q: u8,
        core: u8,
    },
    /// irq_suspend_timeout expired: re-enable the suspended interrupt.
    SuspendTimer {
        host: u16,
        q: u8,
    },
}

const _: () = assert!(std::mem::size_of::<Ev>() == 8);

/// Kernel work queued on a core (runs before the application).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KWork {
    /// Hard-IRQ entry for queue `q`.
    Irq {
        q: u8,
    },
    /// Split claims (`tx_reap = "hard-irq"`): the hard handler alone, which
    /// reaps transmit completions, re-arms the interrupt claim and, if the
    /// interrupt reported received frames (`rx`), schedules NAPI.
    HardIrq {
        q: u8,
        rx: bool,
    },
    /// NAPI poll of queue `q` with `budget` packets left in this poll.
    Napi {
        q: u8,
        budget: u16,
    },
    /// One ring entry being handled by the bottom half (set when started):
    /// a received frame, or `n` transmit completions (`RingEntry` spelled
    /// out, which keeps this type in eight bytes: see `Ev`).
    EntryRx {
        q: u8,
        budget: u16,
        frame: u32,
    },
    EntryTxDone {
        q: u8,
        budget: u16,
        n: u32,
    },
    /// napi_complete + re-arm of the interrupt.
    Rearm {
        q: u8,
    },
    /// napi_complete with the interrupt kept masked: a gro_flush_timeout
    /// timer will re-poll (napi_defer_hard_irqs).
    Defer {
        q: u8,
    },
    /// The hrtimer interrupt of a deferred NAPI: entry, then a poll.
    TimerNapi {
        q: u8,
    },
    /// Sending the next pull reply of a pull request being served.
    PullReply {
        serve: u32,
    },
}

const _: () = assert!(std::mem::size_of::<KWork>() == 8);

/// What a core is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cur {
    Idle,
    Kernel(KWork),
    App,
}

pub(crate) struct Core {
    kq: VecDeque<KWork>,
    cur: Cur,
    gen: u32,
    /// Since when the core has been idle (None: busy, or spinning).
    idle_since: Option<Instant>,
    /// The process bound to this core.
    app: Option<u16>,
    end: Instant,
    kernel_time: Duration,
    /// Stall owed by this core for contention it suffered during a segment
    /// already scheduled: paid at the start of its next segment.
    stall: Duration,
}

impl Core {
    fn go_idle(&mut self, now: Instant) {
        if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    /// Exit latency paid by a core that has been idle long enough to sleep.
    fn wake_cost(&mut self, c: &Costs, now: Instant) -> Duration {
        let cost = match self.idle_since {
            Some(t0) if c.sleep && !c.soaker && now.since(t0) >= c.idle_before_sleep => c.sleep_exit,
            _ => Duration::ZERO,
        };
        self.idle_since = None;
        cost
    }

    /// Starts a segment of core `core` of host `h` that ends at `end`.
    fn begin(&mut self, q: &mut EventQueue<Ev>, end: Instant, h: usize, core: usize) {
        self.gen = self.gen.wrapping_add(1);
        self.end = end;
        q.push(end, h as u32, Ev::CoreDone { host: h as u16, core: core as u8, gen: self.gen });
    }
}

/// Process states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PState {
    /// Runnable: the library decides its next segment when it gets the core.
    Ready,
    /// Executing a segment on its core.
    Running,
    /// A segment was interrupted with this much left.
    Preempted(Duration),
    /// Spinning on its event ring.
    Polling,
    /// Asleep in the kernel until the handler wakes it.
    Blocked,
    /// Woken: pays the wake-up before running.
    Waking,
    Done,
}

/// What happens when an application segment completes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Action {
    None,
    /// Transmit the head of the outbox.
    Send,
    /// Apply the head event of the ring.
    Consume,
    /// Apply a workload operation.
    Op(crate::workload::Op),
    /// Go to sleep in the kernel.
    Block,
    /// Busy polling: the receive path of one ring entry ran in the
    /// application's context (SO_BUSY_POLL / prefer busy poll).
    BusyPoll(RingEntry),
}

/// A library event in an endpoint's shared event ring.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LibEvent {
    pub kind: LKind,
    pub peer: u16,
    pub seq: u32,
    pub piggy: Option<u32>,
    pub tag: u64,
    pub size: u64,
    pub frag_len: u32,
    pub frag_seq: u8,
    /// For RNDV / NOTIFY: the sender's region id; for PullDone: the handle.
    pub rdma: u32,
    /// The die whose cache holds the event and its data (the handler's).
    pub writer_die: u16,
    /// The frame's interrupt stamp (see `Frame::irq_stamp`).
    pub irq_stamp: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LKind {
    Tiny,
    Small,
    MediumFrag,
    Rndv,
    Notify,
    Ack,
    PullDone,
    /// A whole message through the intra-host shared-memory path.
    Shm,
}

/// Something the library will hand to the driver (one system call each).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Out {
    /// A message frame (tiny/small/medium fragment/rndv/notify).
    /// `frag` is the fragment index; `tail` marks the message's last frame
    /// in send order (with injected mis-ordering it is not the last index).
    Msg {
        /// Destination rank.
        peer: u16,
        kind: LKind,
        seq: u32,
        tag: u64,
        size: u64,
        frag: u8,
        frags: u8,
        tail: bool,
        rdma: u32,
    },
    /// An explicit ack to a peer.
    Ack { peer: u16 },
    /// Start pulling a large message into a posted receive.
    PullStart { handle: u32 },
}

/// A request (send or receive) of a process.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Req {
    pub live: bool,
    pub is_send: bool,
    /// Receives: the source rank it accepts (`None`: any).
    pub src: Option<u16>,
    pub size: u64,
    pub tag: u64,
    /// Medium receive in progress: fragments still missing.
    pub frags_left: u32,
}

/// An unexpected message waiting for its receive.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unexpected {
    pub ev: LibEvent,
    /// Medium: fragments already buffered / total.
    pub frags_left: u32,
}

pub(crate) struct Proc {
    /// MPI rank.
    pub rank: u16,
    pub core: u16,
    pub ep: u8,
    pub state: PState,
    pub action: Action,
    pub program: Program,
    pub wait: Option<u32>,
    /// An operation held back by the send window.
    pub pending_op: Option<crate::workload::Op>,
    /// The program returned `Done` (the library still answers the network).
    pub finished: bool,
    /// Pulls started and not finished; pulls waiting to start.
    pub pulls_active: u32,
    pub pulls_waiting: VecDeque<u32>,
    pub ring: VecDeque<LibEvent>,
    /// Ring events to consume before the program's next operation: like
    /// `omx_isend`, which progresses after each send (`omx__progress` at the
    /// end of `omx_isend`, libopen-mx/omx_send.c), a send takes in the
    /// events already in the ring (acks, for a stream sender).
    pub drain: u32,
    pub outbox: VecDeque<Out>,
    pub peers: Vec<Peer>,
    pub reqs: Vec<Req>,
    pub free_reqs: Vec<u32>,
    pub outstanding: u32,
    pub posted: VecDeque<u32>,
    pub unexpected: VecDeque<Unexpected>,
    /// Early (out-of-order) events per peer.
    pub early: Vec<LibEvent>,
    /// Medium message being received: (peer, seq, req or unexpected marker).
    /// Medium messages being received, at most one per peer (a peer's
    /// messages are consumed in sequence order).
    pub medium: Vec<MediumRx>,
    /// Sender regions of large sends: rdma id -> request.
    pub regions: Vec<Option<u32>>,
    pub ring_obj: Obj,
    pub ep_obj: Obj,
    pub timer_at: Option<Instant>,
    pub marks: [Option<Instant>; 2],
    /// Since when the process spins in `Polling` (CPU-use accounting).
    pub poll_since: Option<Instant>,
    pub irq_at_mark: [u64; 2],
    pub irq_all_at_mark: [u64; 2],
}

/// A medium message being reassembled from its fragments.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MediumRx {
    pub peer: u16,
    pub seq: u32,
    pub target: MediumTarget,
    /// Bitmap of the fragments seen (duplicates are dropped).
    pub seen: u32,
    /// Interrupt stamps (min, max) of its fragments.
    pub stamps: (u32, u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MediumTarget {
    Req(u32),
    Unexpected,
}

/// A pull request being served by the sender's driver.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Serve {
    pub live: bool,
    pub dst: u16,
    /// The local endpoint whose memory is pulled.
    pub ep: u8,
    pub handle: u32,
    pub magic: u32,
    pub next: u32,
    pub end: u32,
    pub size: u64,
}

pub(crate) struct HostState {
    pub cores: Vec<Core>,
    pub nic: Nic,
    pub steering: Steering,
    pub procs: Vec<Proc>,
    /// Endpoint -> process index.
    pub eps: Vec<Option<u16>>,
    /// NAPI/driver receive state, one per queue.
    pub napi_objs: Vec<Obj>,
    pub tx_obj: Obj,
    /// The core working on the send-path state, and until when.
    pub tx_hold: (u16, Instant),
    /// Touches of the send-path state that found another die working on it.
    pub tx_contended: u64,
    pub cache: CacheStats,
    pub irq_raised: u64,
    pub irq_handled: u64,
    pub rx_frames: u64,
    pub kernel_time: Duration,
    /// Application CPU time: library/compute segments and spinning.
    pub app_time: Duration,
    pub spin_time: Duration,
    /// When the host's copy engine is free again.
    pub ioat_free: Instant,
}

/// Drop reasons (packet conservation: sent = handled + dropped + in flight).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Drops {
    pub loss: u64,
    pub ring_full: u64,
    pub malformed: u64,
    pub no_endpoint: u64,
    pub duplicate: u64,
    pub stale_pull: u64,
}

/// Scenario costs converted to durations once.
pub(crate) struct Costs {
    pub irq_entry: Duration,
    pub napi_poll: Duration,
    pub rearm: Duration,
    pub driver_rx: Duration,
    pub handler_drop: Duration,
    pub handler: Duration,
    pub tx_done: Duration,
    pub syscall: Duration,
    pub driver_tx: Duration,
    pub doorbell: Duration,
    pub wakeup: Duration,
    pub block: Duration,
    pub sleep: bool,
    pub soaker: bool,
    pub idle_before_sleep: Duration,
    pub sleep_exit: Duration,
    pub send: Duration,
    pub event: Duration,
    pub post_recv: Duration,
    pub small_send: Duration,
    pub mpi_send: Duration,
    pub mpi_recv: Duration,
    pub pull_setup: Duration,
    pub ack_after: u32,
    pub send_window_frames: u32,
    pub delayed_ack: Duration,
    pub resend: Duration,
    pub pull_timeout: Duration,
    pub endpoint_lines: u32,
    pub event_lines: u32,
    pub napi_lines: u32,
    pub tx_lines: u32,
    pub tx_contention_lines: u32,
    pub pull_lines: u32,
    pub napi_budget: u16,
    pub tx_done_irq: bool,
    pub wait: WaitMode,
    pub mtu: usize,
    pub rndv_threshold: u64,
    pub marked: MarkedClasses,
    pub misorder: u8,
    pub defer_hard_irqs: u32,
    pub gro_flush: Duration,
    pub irq_suspend: Duration,
    pub busy_poll: bool,
    pub ioat: bool,
    pub dca: bool,
    /// Native MX (OS-bypass): the NIC delivers into user memory, serves
    /// pulls itself, and never interrupts a polling library.
    pub native: bool,
    pub ioat_bps: u64,
    pub ioat_submit: Duration,
    pub ioat_completion: Duration,
}

/// Linux NAPI weight: 64 packets per poll (net/core/dev.c, NAPI_POLL_WEIGHT).
pub const NAPI_BUDGET: u16 = 64;

/// The whole simulated system.
pub struct World {
    pub(crate) q: EventQueue<Ev>,
    pub(crate) rng: SimRng,
    pub(crate) net: Network,
    pub(crate) hosts: Vec<HostState>,
    pub(crate) topo: Topology,
    pub(crate) cc: CacheCosts,
    pub(crate) c: Costs,
    pub(crate) frames: Vec<Frame>,
    pub(crate) free_frames: Vec<u32>,
    pub(crate) live_frames: u64,
    pub(crate) frames_sent: u64,
    pub(crate) frames_handled: u64,
    pub(crate) drops: Drops,
    pub(crate) handles: Vec<PullHandle>,
    /// Cache state of each pull handle (same index).
    pub(crate) handle_objs: Vec<Obj>,
    pub(crate) free_handles: Vec<u32>,
    pub(crate) serves: Vec<Serve>,
    pub(crate) free_serves: Vec<u32>,
    pub(crate) pcap: Option<Vec<(Instant, Vec<u8>)>>,
    pub(crate) workload: Workload,
    pub(crate) flood_left: u64,
    pub(crate) flood_gap: Duration,
    pub(crate) flood_bytes: u32,
    pub(crate) loss: f64,
    pub(crate) reorder: f64,
    pub(crate) programs_left: u32,
    pub(crate) completions: u64,
    pub(crate) wire_bytes: u64,
    /// Medium messages received, and those whose fragments were all in host
    /// memory before any interrupt reported one of them.
    pub(crate) medium_msgs: u64,
    pub(crate) medium_one_irq: u64,
    pub(crate) jitter: Duration,
    /// Two hosts, no loss, reordering or jitter: each switch port has a single
    /// source, so a frame's switch traversal is known when it departs and
    /// needs no event of its own.
    direct_switch: bool,
    /// Rank -> (host, endpoint); (host, endpoint) -> rank (u16::MAX: none).
    pub(crate) ranks: Vec<(u16, u8)>,
    pub(crate) rank_of: Vec<Vec<u16>>,
    /// [EMO] echo server on host 1 (`echo-nic` / `echo-kernel` workloads).
    pub(crate) echo: Option<crate::config::EchoAt>,
    /// NIC firmware byte copy of the echo (EMO inputs: cycles/byte / clock).
    pub(crate) nic_copy_ns_per_byte: f64,
    /// CPU time used by hosts 0 and 1 at the Start and End marks.
    pub(crate) busy_at_mark: [[Duration; 2]; 2],
}

fn dur(ns: f64) -> Duration {
    Duration::from_ns_f64(ns)
}

impl World {
    /// Builds the world of a validated scenario.
    pub fn new(s: &Scenario) -> Self {
        Self::with_policy(s, None)
    }

    /// Builds the world of a validated scenario; `policy`, if given, makes
    /// the coalescing policy of every receive queue instead of the
    /// scenario's strategy (a user-defined policy, e.g. from Python).
    pub fn with_policy(s: &Scenario, mut policy: Option<PolicyFactory<'_>>) -> Self {
        let p = &s.platform;
        let topo = Topology::new(&p.topology);
        let hosts_n = p.topology.hosts as usize;
        let cores = topo.cores();
        let h = &p.host;
        let b = &p.library;
        let c = Costs {
            irq_entry: dur(h.irq_entry_ns),
            napi_poll: dur(h.napi_poll_ns),
            rearm: dur(h.irq_rearm_ns),
            driver_rx: dur(h.driver_rx_ns),
            handler_drop: dur(h.handler_drop_ns),
            handler: dur(h.handler_ns),
            tx_done: dur(h.tx_done_ns),
            syscall: dur(h.syscall_ns),
            driver_tx: dur(h.driver_tx_ns),
            doorbell: dur(p.nic.doorbell_ns),
            wakeup: dur(h.wakeup_ns),
            block: dur(h.block_ns),
            sleep: s.sleep,
            soaker: s.soaker,
            idle_before_sleep: dur(h.idle_before_sleep_ns),
            sleep_exit: dur(h.sleep_exit_ns),
            send: dur(b.send_ns),
            event: dur(b.event_ns),
            post_recv: dur(b.post_recv_ns),
            small_send: dur(b.small_send_ns),
            mpi_send: if s.mpi { dur(b.mpi_send_ns) } else { Duration::ZERO },
            mpi_recv: if s.mpi { dur(b.mpi_recv_ns) } else { Duration::ZERO },
            pull_setup: dur(b.pull_setup_ns),
            ack_after: b.ack_after,
            send_window_frames: b.send_window_frames,
            delayed_ack: dur(b.delayed_ack_us * 1e3),
            resend: dur(b.resend_us * 1e3),
            pull_timeout: dur(b.pull_timeout_us * 1e3),
            endpoint_lines: p.cache.endpoint_lines,
            event_lines: p.cache.event_lines,
            napi_lines: p.cache.napi_lines,
            tx_lines: p.cache.tx_lines,
            tx_contention_lines: p.cache.tx_contention_lines,
            pull_lines: p.cache.pull_lines,
            napi_budget: NAPI_BUDGET,
            tx_done_irq: p.nic.tx_done_interrupts,
            wait: s.wait,
            mtu: p.link.mtu as usize,
            rndv_threshold: s.rndv_threshold as u64,
            marked: s.marked,
            misorder: s.misorder_degree,
            defer_hard_irqs: s.napi.defer_hard_irqs,
            gro_flush: Duration::from_ns_f64(s.napi.gro_flush_timeout_us * 1e3),
            irq_suspend: Duration::from_ns_f64(s.napi.irq_suspend_timeout_us * 1e3),
            busy_poll: s.napi.busy_poll,
            ioat: s.ioat,
            dca: s.dca,
            native: s.native_mx,
            ioat_bps: (p.host.ioat_MBps * 1e6) as u64,
            ioat_submit: dur(p.host.ioat_submit_ns),
            ioat_completion: dur(p.host.ioat_completion_ns),
        };
        let mut hosts = Vec::with_capacity(hosts_n);
        for _ in 0..hosts_n {
            let steering = Steering::new(s.steering, cores);
            let steering_queues = steering.queues();
            let queues = (0..steering.queues())
                .map(|_| {
                    let policy = match policy.as_mut() {
                        Some(make) => make(),
                        None => s.coalesce.build(),
                    };
                    let mut q = RxQueue::new(policy, p.nic.ring_slots as usize);
                    q.split_claims = s.tx_reap == crate::config::TxReap::HardIrq;
                    q
                })
                .collect();
            hosts.push(HostState {
                cores: (0..cores)
                    .map(|_| Core {
                        kq: VecDeque::with_capacity(16),
                        cur: Cur::Idle,
                        gen: 0,
                        idle_since: Some(Instant::ZERO),
                        app: None,
                        end: Instant::ZERO,
                        kernel_time: Duration::ZERO,
                        stall: Duration::ZERO,
                    })
                    .collect(),
                nic: Nic::new(&p.nic, queues),
                steering,
                procs: Vec::new(),
                eps: vec![None; 256],
                napi_objs: vec![Obj::new(ObjClass::Napi); steering_queues],
                tx_obj: Obj::new(ObjClass::TxRing),
                tx_hold: (0, Instant::ZERO),
                tx_contended: 0,
                cache: CacheStats::default(),
                irq_raised: 0,
                irq_handled: 0,
                rx_frames: 0,
                kernel_time: Duration::ZERO,
                app_time: Duration::ZERO,
                spin_time: Duration::ZERO,
                ioat_free: Instant::ZERO,
            });
        }
        let mut w = World {
            q: EventQueue::new(),
            rng: SimRng::new(s.seed),
            net: Network::new(&p.link, hosts_n),
            hosts,
            topo,
            cc: CacheCosts::new(&p.cache),
            c,
            frames: Vec::with_capacity(1024),
            free_frames: Vec::new(),
            live_frames: 0,
            frames_sent: 0,
            frames_handled: 0,
            drops: Drops::default(),
            handles: Vec::new(),
            handle_objs: Vec::new(),
            free_handles: Vec::new(),
            serves: Vec::new(),
            free_serves: Vec::new(),
            pcap: s.pcap.as_ref().map(|_| Vec::new()),
            workload: s.workload,
            flood_left: 0,
            flood_gap: Duration::ZERO,
            flood_bytes: 0,
            loss: s.loss,
            reorder: s.reorder,
            programs_left: 0,
            completions: 0,
            wire_bytes: 0,
            medium_msgs: 0,
            medium_one_irq: 0,
            jitter: Duration::from_ns_f64(s.jitter_ns),
            direct_switch: hosts_n <= 2 && s.loss == 0.0 && s.reorder == 0.0 && s.jitter_ns == 0.0,
            ranks: Vec::new(),
            rank_of: vec![vec![u16::MAX; 256]; hosts_n],
            echo: None,
            nic_copy_ns_per_byte: {
                let e = p.emo_cfg();
                e.nic_copy_cycles_per_byte * 1e3 / e.nic_clock_mhz
            },
            busy_at_mark: [[Duration::ZERO; 2]; 2],
        };
        let core = s.binding.unwrap_or(0) as u16;
        match s.workload {
            Workload::PingPong { size, iterations, warmup } => {
                w.spawn(0, core, 0, Program::pingpong(0, size, iterations, warmup));
                w.spawn(1, core, 0, Program::pingpong(1, size, iterations, warmup));
            }
            Workload::Echo { at, size, iterations, warmup } => {
                // The client is rank 0 of a ping-pong; rank 1 is the echo
                // server on host 1, which has no process.
                w.spawn(0, core, 0, Program::pingpong(0, size, iterations, warmup));
                w.echo = Some(at);
                w.rank_of[1][0] = w.ranks.len() as u16;
                w.ranks.push((1, 0));
            }
            Workload::Stream { size, messages, warmup } => {
                w.spawn(0, core, 0, Program::stream_sender(size, messages, warmup));
                w.spawn(1, core, 0, Program::stream_receiver(size, messages, warmup));
            }
            Workload::Uniband { size, messages, warmup, window } => {
                w.spawn(0, core, 0, Program::uniband_sender(size, messages, warmup, window));
                w.spawn(1, core, 0, Program::uniband_receiver(size, messages, warmup, window));
            }
            Workload::NasIs { keys, iterations, per_host } => {
                let hosts = w.hosts.len() as u32;
                let n = hosts * per_host;
                let keys_per_proc = keys / n as u64;
                let nas = &s.platform.nas;
                let compute = dur(nas.is_iter_fixed_us * 1e3 + nas.is_ns_per_key * keys_per_proc as f64);
                // Block placement: ranks 0..per_host on host 0, one per core.
                for r in 0..n {
                    let body = crate::workload::nas_is_iteration(r, n, keys_per_proc, compute);
                    let prog = Program::Script { body, iters: iterations + 1, warm: 1, iter: 0, pc: 0, marked: 0 };
                    let local = (r % per_host) as u16;
                    w.spawn((r / per_host) as u16, local, local as u8, prog);
                }
            }
            Workload::NasKernel { kernel, class_c, per_host } => {
                let n = w.hosts.len() as u32 * per_host;
                let prob = crate::workload::NasProblem::new(kernel, class_c);
                // Compute per iteration and rank from NPB's operation count.
                let secs = prob.total_ops / prob.iterations as f64 / n as f64 / (s.platform.nas.mflops_per_core * 1e6);
                let compute = dur(secs * 1e9);
                for r in 0..n {
                    let body = crate::workload::nas_kernel_iteration(kernel, &prob, r, n, compute);
                    let prog = Program::Script { body, iters: prob.iterations + 1, warm: 1, iter: 0, pc: 0, marked: 0 };
                    let local = (r % per_host) as u16;
                    w.spawn((r / per_host) as u16, local, local as u8, prog);
                }
            }
            Workload::Alltoall { size, iterations, warmup, per_host } => {
                let n = w.hosts.len() as u32 * per_host;
                for r in 0..n {
                    let mut body = Vec::new();
                    crate::workload::alltoall_ops(&mut body, r, n, size, 400);
                    let prog =
                        Program::Script { body, iters: iterations + warmup, warm: warmup, iter: 0, pc: 0, marked: 0 };
                    let local = (r % per_host) as u16;
                    w.spawn((r / per_host) as u16, local, local as u8, prog);
                }
            }
            Workload::Flood { packets, gap, packet_bytes } => {
                w.flood_left = packets;
                w.flood_gap = gap;
                w.flood_bytes = packet_bytes;
                w.q.push(Instant::ZERO, 0, Ev::FloodTick);
            }
        }
        let n = w.ranks.len();
        for hs in &mut w.hosts {
            for pr in &mut hs.procs {
                pr.peers = vec![Peer::default(); n];
            }
        }
        for h in 0..w.hosts.len() {
            for core in 0..w.hosts[h].cores.len() {
                w.dispatch(h, core);
            }
        }
        w
    }

    fn spawn(&mut self, host: u16, core: u16, ep: u8, program: Program) {
        let hosts = self.hosts.len();
        let rank = self.ranks.len() as u16;
        self.ranks.push((host, ep));
        self.rank_of[host as usize][ep as usize] = rank;
        let hs = &mut self.hosts[host as usize];
        let idx = hs.procs.len() as u16;
        hs.procs.push(Proc {
            rank,
            core,
            ep,
            state: PState::Ready,
            action: Action::None,
            program,
            wait: None,
            pending_op: None,
            finished: false,
            pulls_active: 0,
            pulls_waiting: VecDeque::new(),
            ring: VecDeque::with_capacity(64),
            drain: 0,
            outbox: VecDeque::with_capacity(64),
            peers: vec![Peer::default(); hosts], // resized to the rank count by `new`
            reqs: Vec::with_capacity(128),
            free_reqs: Vec::new(),
            outstanding: 0,
            posted: VecDeque::with_capacity(128),
            unexpected: VecDeque::new(),
            early: Vec::new(),
            medium: Vec::new(),
            regions: vec![None; 256],
            ring_obj: Obj::new(ObjClass::EventRing),
            ep_obj: Obj::new(ObjClass::Endpoint),
            timer_at: None,
            marks: [None; 2],
            poll_since: None,
            irq_at_mark: [0; 2],
            irq_all_at_mark: [0; 2],
        });
        hs.eps[ep as usize] = Some(idx);
        hs.cores[core as usize].app = Some(idx);
        hs.cores[core as usize].idle_since = None;
        self.programs_left += 1;
    }

    /// Runs to completion (every program done, or the flood drained).
    pub fn run(&mut self) -> Result<(), SimError> {
        // A run that stops making progress ends with an error, never a hang.
        let limit = Instant::ZERO + Duration::from_ms(600_000);
        while let Some((now, ev)) = self.q.pop() {
            if now > limit {
                return Err(SimError(format!("no progress: simulated time passed {limit} with work left")));
            }
            self.handle(now, ev);
            if self.finished() {
                return Ok(());
            }
        }
        if self.finished() {
            Ok(())
        } else {
            let mut who = Vec::new();
            for (h, hs) in self.hosts.iter().enumerate() {
                for pr in &hs.procs {
                    if !pr.finished {
                        who.push(format!(
                            "host {h}: {:?}, {} outstanding, waiting for <= {:?}, {} unexpected, {} early, medium {:?}",
                            pr.state,
                            pr.outstanding,
                            pr.wait,
                            pr.unexpected.len(),
                            pr.early.len(),
                            pr.medium
                        ));
                    }
                }
            }
            Err(SimError(format!(
                "no progress possible: no events left at {} with {} program(s) unfinished ({})",
                self.q.now(),
                self.programs_left,
                who.join("; ")
            )))
        }
    }

    fn finished(&self) -> bool {
        match self.workload {
            Workload::Flood { packets, .. } => {
                self.flood_left == 0 && self.hosts[1].rx_frames + self.drops.loss >= packets && self.all_idle(1)
            }
            _ => self.programs_left == 0,
        }
    }

    fn all_idle(&self, h: usize) -> bool {
        self.hosts[h].cores.iter().all(|c| matches!(c.cur, Cur::Idle) && c.kq.is_empty())
            && self.hosts[h].nic.queues.iter().all(|q| q.pending() == 0)
            && self.hosts[h].nic.in_dma == 0
    }

    fn handle(&mut self, now: Instant, ev: Ev) {
        match ev {
            Ev::SwitchIn { frame } => self.switch_in(now, frame),
            Ev::NicRx { frame } => self.nic_rx(now, frame),
            Ev::DmaDone { host, frame } => self.dma_done(now, host as usize, frame),
            Ev::TxDone { host, q } => self.tx_done(now, host as usize, q as usize),
            Ev::CoalTimer { host, q, gen } => {
                let qu = &mut self.hosts[host as usize].nic.queues[q as usize];
                if qu.timer_gen == gen && qu.timer_at.is_some() {
                    qu.timer_at = None;
                    let d = qu.policy.on_timer(now);
                    let out = qu.apply(now, d);
                    self.nic_outcome(now, host as usize, q as usize, out);
                }
            }
            Ev::IrqArrive { host, q, rx } => {
                let h = host as usize;
                let hs = &mut self.hosts[h];
                let core = hs.steering.irq_core(q as usize) as usize;
                // A hard IRQ runs before any pending bottom-half work of the
                // core (softirqs run with interrupts enabled).
                let w =
                    if hs.nic.queues[q as usize].split_claims { KWork::HardIrq { q, rx } } else { KWork::Irq { q } };
                hs.cores[core].kq.push_front(w);
                self.kick(now, h, core);
            }
            Ev::CoreDone { host, core, gen } => self.core_done(now, host as usize, core as usize, gen),
            Ev::ProcTimer { host, p } => self.proc_timer(now, host as usize, p as usize),
            Ev::PullTimer { handle } => self.pull_timer(now, handle),
            Ev::FloodTick => self.flood_tick(now),
            Ev::PullCopied { host, handle, die } => {
                let die = if die == u8::MAX { WRITER_MEMORY } else { die as u16 };
                self.pull_done(now, host as usize, handle, die)
            }
            Ev::NapiTimer { host, q, core } => {
                let (h, c) = (host as usize, core as usize);
                self.hosts[h].cores[c].kq.push_back(KWork::TimerNapi { q });
                self.kick(now, h, c);
            }
            Ev::SuspendTimer { host, q } => {
                let h = host as usize;
                let qu = &mut self.hosts[h].nic.queues[q as usize];
                if qu.suspended && qu.suspend_until.is_some_and(|t| t <= now) && !qu.napi_sched {
                    qu.suspended = false;
                    qu.suspend_until = None;
                    let out = qu.rearm(now);
                    self.nic_outcome(now, h, q as usize, out);
                }
            }
        }
    }

    // ----------------------------------------------------------------------
    // Frames and the wire

    /// Encodes `repr` into a new frame slot.
    pub(crate) fn new_frame(&mut self, src: u16, dst: u16, repr: &FrameRepr) -> u32 {
        self.live_frames += 1;
        let id = match self.free_frames.pop() {
            Some(i) => i,
            None => {
                self.frames.push(Frame {
                    parsed: None,
                    marked: false,
                    q: 0,
                    src_ep: 0,
                    irq_stamp: 0,
                    len: 0,
                    src: 0,
                    dst: 0,
                });
                (self.frames.len() - 1) as u32
            }
        };
        let f = &mut self.frames[id as usize];
        // `repr` is what parsing its bytes gives back (the wire tests check
        // the round trip; the debug build checks it for every frame).
        f.parsed = Some(*repr);
        #[cfg(debug_assertions)]
        {
            let mut buf = [0; HDR_CAP];
            let hl = f.header_bytes(&mut buf);
            debug_assert!(hl <= HDR_CAP);
            debug_assert_eq!(FrameRepr::parse_header(&buf[..hl]).ok(), f.parsed);
        }
        f.marked = false;
        f.src_ep = repr.body.src_endpoint().unwrap_or(0); // pull replies: set by the pull server
        f.len = repr.frame_len() as u32;
        f.src = src;
        f.dst = dst;
        id
    }

    fn free_frame(&mut self, id: u32) {
        self.live_frames -= 1;
        self.free_frames.push(id);
    }

    /// The driver of `host` rang the doorbell for `frame` at `now`.
    pub(crate) fn transmit(&mut self, now: Instant, host: usize, frame: u32) {
        let len = self.frames[frame as usize].len as usize;
        let ready = self.hosts[host].nic.transmit(now, len);
        let d = self.wire_out(host, ready, frame);
        if self.c.tx_done_irq && !self.c.native {
            let ep = self.frames[frame as usize].src_ep;
            let q = self.hosts[host].steering.queue_for(Some(ep), 0) as u8;
            self.q.push(d.end, host as u32, Ev::TxDone { host: host as u16, q });
        }
    }

    /// The NIC of `host` has `frame` ready for the wire at `ready`.
    pub(crate) fn wire_out(&mut self, host: usize, ready: Instant, frame: u32) -> crate::net::Departure {
        let len = self.frames[frame as usize].len as usize;
        let d = self.net.depart(host, ready, len);
        self.frames_sent += 1;
        self.wire_bytes += len as u64;
        if let Some(p) = self.pcap.as_mut() {
            let mut hdr = [0; HDR_CAP];
            let hl = self.frames[frame as usize].header_bytes(&mut hdr);
            let mut bytes = vec![0u8; len];
            bytes[..hl].copy_from_slice(&hdr[..hl]);
            p.push((d.start, bytes));
        }
        if self.direct_switch {
            // Nothing can happen to the frame at the switch that depends on
            // what else happens meanwhile: book its output port now.
            self.forward(d.at_switch, frame, Duration::ZERO);
        } else {
            self.q.push(d.at_switch, host as u32, Ev::SwitchIn { frame });
        }
        d
    }

    fn switch_in(&mut self, now: Instant, frame: u32) {
        if self.rng.chance(self.loss) {
            self.drops.loss += 1;
            self.free_frame(frame);
            return;
        }
        let len = self.frames[frame as usize].len as usize;
        let mut extra = if self.rng.chance(self.reorder) {
            // Held back behind up to four later frames of this size.
            self.net.serialization(len).times(1 + self.rng.below(4))
        } else {
            Duration::ZERO
        };
        if !self.jitter.is_zero() {
            // Arrival jitter (seeded): the switch port keeps frames in order.
            extra += Duration::from_ps(self.rng.below(self.jitter.as_ps() + 1));
        }
        self.forward(now, frame, extra);
    }

    /// `frame` reached the switch at `now`: book the port towards its
    /// destination and schedule its arrival at the destination NIC.
    fn forward(&mut self, now: Instant, frame: u32, extra: Duration) {
        let (len, dst) = (self.frames[frame as usize].len as usize, self.frames[frame as usize].dst as usize);
        let (first_bit, at) = self.net.forward(dst, now, len, extra);
        self.hosts[dst].nic.incoming.push_back(first_bit);
        self.q.push(at, 1_000_000, Ev::NicRx { frame });
    }

    fn nic_rx(&mut self, now: Instant, frame: u32) {
        let f = &mut self.frames[frame as usize];
        let (h, len) = (f.dst as usize, f.len as usize);
        self.hosts[h].nic.incoming.pop_front();
        let repr = match f.parsed {
            Some(r) => r,
            None => {
                self.drops.malformed += 1;
                self.free_frame(frame);
                return;
            }
        };
        f.marked = repr.marked;
        if h == 1 && self.echo == Some(crate::config::EchoAt::Nic) {
            self.nic_echo(now, frame, &repr);
            return;
        }
        // The host is looked up once: the calls below (a coalescing policy
        // among them) would otherwise make the compiler look it up again.
        let hs = &mut self.hosts[h];
        let qi = hs.steering.queue_for(Some(repr.body.dst_endpoint()), f.src as u32);
        f.q = qi as u8;
        if hs.nic.ring_full(qi) {
            self.drops.ring_full += 1;
            self.free_frame(frame);
            return;
        }
        let nic = &mut hs.nic;
        nic.pending += 1;
        nic.in_dma += 1;
        let qu = &mut nic.queues[qi];
        let d = qu.policy.on_arrival(now, repr.marked);
        let out = qu.apply(now, d);
        let done = nic.receive(now, len);
        self.q.push(done, h as u32, Ev::DmaDone { host: h as u16, frame });
        self.nic_outcome(now, h, qi, out);
    }

    fn dma_done(&mut self, now: Instant, h: usize, frame: u32) {
        let (marked, bytes, qi) = {
            let f = &self.frames[frame as usize];
            (f.marked, f.len, f.q as usize)
        };
        self.frames[frame as usize].irq_stamp = self.hosts[h].irq_raised as u32;
        let nic = &mut self.hosts[h].nic;
        nic.pending -= 1;
        nic.in_dma -= 1;
        if self.c.native {
            // OS-bypass: the event (and small data) is already in user
            // memory; no ring, no coalescing, no interrupt.
            self.handle_frame(now, h, usize::MAX, frame);
            return;
        }
        let other_pending = nic.other_pending(now);
        let qu = &mut nic.queues[qi];
        qu.ring.push_back(frame);
        let d = qu.policy.on_dma_complete(now, crate::nic::coalesce::DmaCompletion { marked, bytes, other_pending });
        let out = qu.apply(now, d);
        self.nic_outcome(now, h, qi, out);
        if self.c.busy_poll {
            // A busy-polling application sees the new descriptor at once.
            if let Some(p) = self.hosts[h].procs.iter().position(|pr| pr.state == PState::Polling) {
                self.notify_proc(now, h, p);
            }
        }
    }

    /// A busy poller stopped polling: the suspended interrupt comes back
    /// after irq_suspend_timeout unless it polls again.
    fn release_suspension(&mut self, now: Instant, h: usize, q: usize) {
        if self.c.irq_suspend.is_zero() {
            return;
        }
        let qu = &mut self.hosts[h].nic.queues[q];
        if qu.suspended && qu.suspend_until.is_none() {
            let at = now + self.c.irq_suspend;
            qu.suspend_until = Some(at);
            self.q.push(at, h as u32, Ev::SuspendTimer { host: h as u16, q: q as u8 });
        }
    }

    fn tx_done(&mut self, now: Instant, h: usize, qi: usize) {
        let nic = &mut self.hosts[h].nic;
        let other_pending = nic.other_pending(now);
        let qu = &mut nic.queues[qi];
        qu.tx_done += 1;
        let d = qu
            .policy
            .on_dma_complete(now, crate::nic::coalesce::DmaCompletion { marked: false, bytes: 0, other_pending });
        let out = qu.apply(now, d);
        self.nic_outcome(now, h, qi, out);
    }

    /// Inlined: small, and run for most events (the outcome then stays in
    /// registers).
    #[inline(always)]
    fn nic_outcome(&mut self, now: Instant, h: usize, q: usize, out: Outcome) {
        if let Some((at, gen)) = out.timer {
            self.q.push(at.max(now), h as u32, Ev::CoalTimer { host: h as u16, q: q as u8, gen });
        }
        if out.raise {
            let hs = &mut self.hosts[h];
            if out.rx {
                hs.nic.queues[q].napi_sched = true;
            }
            hs.irq_raised += 1;
            let at = now + hs.nic.irq_delivery;
            self.q.push(at, h as u32, Ev::IrqArrive { host: h as u16, q: q as u8, rx: out.rx });
        }
    }

    fn flood_tick(&mut self, now: Instant) {
        if self.flood_left == 0 {
            return;
        }
        self.flood_left -= 1;
        // An Open-MX small frame to an endpoint nobody opened: the receive
        // handler drops it after parsing (SPEC 3: invalid-packet flood).
        let mut repr = FrameRepr {
            dst_mac: crate::wire::host_mac(1),
            src_mac: crate::wire::host_mac(0),
            src_peer: 0,
            marked: false,
            body: OmxBody::Small { dst_ep: 200, src_ep: 0, session: 0, seq: 0, piggy_ack: 0, match_info: 0, length: 0 },
        };
        let hl = repr.header_len();
        let payload = (self.flood_bytes as usize).saturating_sub(hl).min(crate::wire::SMALL_MAX) as u16;
        if let OmxBody::Small { length, .. } = &mut repr.body {
            *length = payload;
        }
        let id = self.new_frame(0, 1, &repr);
        self.transmit(now, 0, id);
        if self.flood_left > 0 {
            self.q.push(now + self.flood_gap, 0, Ev::FloodTick);
        }
    }

    // ----------------------------------------------------------------------
    // Cores

    /// New kernel work was queued on `core`: preempt the application if it
    /// is running a segment, then dispatch.
    pub(crate) fn kick(&mut self, now: Instant, h: usize, core: usize) {
        let cs = &mut self.hosts[h].cores[core];
        if matches!(cs.cur, Cur::App) {
            let remaining = cs.end.since(now);
            cs.gen = cs.gen.wrapping_add(1);
            cs.cur = Cur::Idle;
            if let Some(p) = cs.app {
                self.hosts[h].procs[p as usize].state = PState::Preempted(remaining);
            }
        }
        self.dispatch_at(now, h, core);
    }

    fn dispatch(&mut self, h: usize, core: usize) {
        let now = self.q.now();
        self.dispatch_at(now, h, core);
    }

    /// Starts the next work item on an idle core: kernel work first, then
    /// the application.
    pub(crate) fn dispatch_at(&mut self, now: Instant, h: usize, core: usize) {
        // Each pass looks the core up once: the checks and the application
        // part below share that lookup (this runs for most events).
        loop {
            let hs = &mut self.hosts[h];
            let cs = &mut hs.cores[core];
            if !matches!(cs.cur, Cur::Idle) {
                return;
            }
            if let Some(w) = cs.kq.pop_front() {
                if let Some((cost, w)) = self.start_kernel(now, h, core, w) {
                    let hs = &mut self.hosts[h];
                    let cs = &mut hs.cores[core];
                    let wake = cs.wake_cost(&self.c, now);
                    if (wake + cost).is_zero() {
                        // Takes no time (e.g. a re-arm that is a posted write):
                        // complete it now instead of scheduling an event (the
                        // core stays idle).
                        self.finish_kernel_out(now, h, core, w);
                        continue;
                    }
                    // Marked busy here rather than in `start_kernel`: the
                    // core is already looked up.
                    cs.cur = Cur::Kernel(w);
                    let cost = cost + std::mem::take(&mut cs.stall);
                    cs.kernel_time += cost;
                    cs.begin(&mut self.q, now + wake + cost, h, core);
                    hs.kernel_time += cost;
                    return;
                }
                continue; // the work vanished (e.g. empty ring): try the next
            }
            let Some(p) = cs.app else {
                cs.go_idle(now);
                return;
            };
            let p = p as usize;
            let pr = &mut hs.procs[p];
            match pr.state {
                PState::Preempted(rem) => {
                    pr.state = PState::Running;
                    cs.cur = Cur::App;
                    let rem = rem + std::mem::take(&mut cs.stall);
                    cs.begin(&mut self.q, now + rem, h, core);
                    return;
                }
                PState::Ready | PState::Waking => {
                    let extra = if pr.state == PState::Waking { self.c.wakeup } else { Duration::ZERO };
                    let step = self.lib_step(now, h, p, core);
                    let hs = &mut self.hosts[h];
                    let cs = &mut hs.cores[core];
                    match step {
                        Some((cost, action)) => {
                            let wake = cs.wake_cost(&self.c, now);
                            let cost = cost + std::mem::take(&mut cs.stall);
                            hs.app_time += extra + cost;
                            let pr = &mut hs.procs[p];
                            pr.state = PState::Running;
                            pr.action = action;
                            cs.cur = Cur::App;
                            cs.begin(&mut self.q, now + wake + extra + cost, h, core);
                        }
                        None => {
                            // Polling, blocked or done: nothing to run.
                            if hs.procs[p].state == PState::Polling {
                                cs.idle_since = None;
                            } else {
                                cs.go_idle(now);
                            }
                        }
                    }
                    return;
                }
                PState::Polling => {
                    cs.idle_since = None;
                    return;
                }
                PState::Running => unreachable!("running process on an idle core"),
                PState::Blocked | PState::Done => {
                    cs.go_idle(now);
                    return;
                }
            }
        }
    }

    /// The segment numbered `gen` of a core ended; stale if the core has
    /// since been preempted (checked here, where the core is looked up
    /// anyway).
    fn core_done(&mut self, now: Instant, h: usize, core: usize, gen: u32) {
        let hs = &mut self.hosts[h];
        let cs = &mut hs.cores[core];
        if cs.gen != gen {
            return;
        }
        let cur = std::mem::replace(&mut cs.cur, Cur::Idle);
        match cur {
            Cur::Kernel(w) => self.finish_kernel(now, h, core, w),
            Cur::App => {
                if let Some(p) = cs.app {
                    let p = p as usize;
                    let pr = &mut hs.procs[p];
                    let action = pr.action;
                    pr.state = PState::Ready;
                    self.lib_apply(now, h, p, action);
                }
            }
            Cur::Idle => {}
        }
        self.dispatch_at(now, h, core);
    }

    /// Send-path state shared by the send path and transmit-completion
    /// reaping (tx ring indices and slots, skbs, queue lock), touched at
    /// `now` by `core`, which then works on it for `hold`.
    ///
    /// Taken in turn, each touch moves `tx_lines` lines once. Taken while a
    /// core of another die is still working on the state, the lines bounce
    /// back and forth between the two for the overlap: both cores stall for
    /// `tx_contention_lines` more transfers (the other one at the start of
    /// its next segment, since its current one is already scheduled). This
    /// is what a stream pays when completions are reaped one at a time on
    /// other cores while the sender keeps sending, and what a ping-pong,
    /// whose reap is over long before the next send, does not.
    pub(crate) fn tx_touch(&mut self, now: Instant, h: usize, core: usize, hold: Duration) -> Duration {
        let die = self.topo.die_of(core as u16);
        let hs = &mut self.hosts[h];
        let mut cost =
            self.cc.access(&self.topo, &mut hs.cache, &mut hs.tx_obj, die, crate::host::Side::Kernel, self.c.tx_lines);
        let (other, until) = hs.tx_hold;
        let other_die = self.topo.die_of(other);
        if other_die != die && now < until && self.c.tx_contention_lines > 0 {
            let n = self.c.tx_contention_lines;
            let stall = self.cc.line(&self.topo, crate::host::Owner::Die(other_die), die).times(n as u64);
            cost += stall;
            hs.cores[other as usize].stall += stall;
            hs.cache.misses[crate::host::ObjClass::TxRing as usize][crate::host::Side::Kernel as usize] += 2 * n as u64;
            hs.tx_contended += 1;
        }
        let end = now + cost + hold;
        if other == core as u16 || end > until {
            hs.tx_hold = (core as u16, end);
        }
        cost
    }

    /// Computes the cost of a kernel work item and the item the core then
    /// works on (the caller marks the core busy with it); `None` if the item
    /// turned out to have nothing to do.
    fn start_kernel(&mut self, now: Instant, h: usize, core: usize, w: KWork) -> Option<(Duration, KWork)> {
        let die = self.topo.die_of(core as u16);
        let c = &self.c;
        let (cost, w) = match w {
            KWork::Irq { q } | KWork::Napi { q, .. } | KWork::TimerNapi { q } => {
                let hs = &mut self.hosts[h];
                // The hard IRQ schedules NAPI, which runs right after it on
                // this core: one work item covers both (one event fewer).
                let (mut cost, mut budget) = match w {
                    KWork::Napi { budget, .. } => (Duration::ZERO, budget),
                    KWork::TimerNapi { .. } => (c.irq_entry, c.napi_budget),
                    _ => {
                        hs.irq_handled += 1;
                        (c.irq_entry, c.napi_budget)
                    }
                };
                if budget == 0 {
                    // Budget exhausted: the poll yields and is rescheduled.
                    hs.cores[core].kq.push_back(KWork::Napi { q, budget: c.napi_budget });
                    return None;
                }
                if budget == c.napi_budget {
                    cost += c.napi_poll
                        + self.cc.access(
                            &self.topo,
                            &mut hs.cache,
                            &mut hs.napi_objs[q as usize],
                            die,
                            crate::host::Side::Kernel,
                            c.napi_lines,
                        );
                }
                let qu = &mut hs.nic.queues[q as usize];
                match qu.take() {
                    None => {
                        // napi_complete_done (net/core/dev.c): a poll that did
                        // work reloads napi_defer_hard_irqs; while that count
                        // lasts, the IRQ stays masked and gro_flush_timeout
                        // re-polls instead.
                        if budget < c.napi_budget {
                            qu.defer_left = c.defer_hard_irqs;
                        }
                        if qu.defer_left > 0 && !c.gro_flush.is_zero() {
                            qu.defer_left -= 1;
                            (cost, KWork::Defer { q })
                        } else {
                            (cost + c.rearm, KWork::Rearm { q })
                        }
                    }
                    Some(entry) => {
                        budget -= 1;
                        cost += self.entry_cost(now, h, core, entry);
                        let w = match entry {
                            RingEntry::Rx(frame) => KWork::EntryRx { q, budget, frame },
                            RingEntry::TxDone(n) => KWork::EntryTxDone { q, budget, n },
                        };
                        (cost, w)
                    }
                }
            }
            KWork::HardIrq { q, .. } => {
                // myri10ge_intr: reap every transmit completion reported so far.
                let hs = &mut self.hosts[h];
                hs.irq_handled += 1;
                let n = std::mem::take(&mut hs.nic.queues[q as usize].tx_done);
                let reap = if n > 0 { self.reap_cost(now, h, core, n) } else { Duration::ZERO };
                (self.c.irq_entry + reap, w)
            }
            KWork::EntryRx { .. } | KWork::EntryTxDone { .. } | KWork::Rearm { .. } | KWork::Defer { .. } => {
                unreachable!("queued only as Napi")
            }
            KWork::PullReply { serve } => {
                if !self.serves[serve as usize].live {
                    return None;
                }
                let send = self.c.driver_tx + self.c.doorbell;
                (send + self.tx_touch(now, h, core, send), w)
            }
        };
        Some((cost, w))
    }

    /// `finish_kernel` for the rare zero-cost items of `dispatch_at`: kept
    /// out of line there, inlined in `core_done` (every kernel segment).
    #[inline(never)]
    fn finish_kernel_out(&mut self, now: Instant, h: usize, core: usize, w: KWork) {
        self.finish_kernel(now, h, core, w);
    }

    #[inline(always)]
    fn finish_kernel(&mut self, now: Instant, h: usize, core: usize, w: KWork) {
        match w {
            KWork::EntryRx { q, budget, frame } => {
                self.hosts[h].cores[core].kq.push_front(KWork::Napi { q, budget });
                self.handle_frame(now, h, core, frame);
            }
            KWork::EntryTxDone { q, budget, .. } => {
                self.hosts[h].cores[core].kq.push_front(KWork::Napi { q, budget });
            }
            KWork::Rearm { q } => {
                let qu = &mut self.hosts[h].nic.queues[q as usize];
                qu.napi_sched = false;
                let out = if qu.suspended {
                    // A busy poller holds the interrupt: leave it masked.
                    crate::nic::Outcome::default()
                } else {
                    qu.rearm(now)
                };
                self.nic_outcome(now, h, q as usize, out);
            }
            KWork::Defer { q } => {
                let at = now + self.c.gro_flush;
                self.q.push(at, h as u32, Ev::NapiTimer { host: h as u16, q, core: core as u8 });
            }
            KWork::PullReply { serve } => self.send_pull_reply(now, h, core, serve),
            KWork::HardIrq { q, rx } => {
                // put_be32(htonl(3), ss->irq_claim + 1), then the softirq.
                let out = self.hosts[h].nic.queues[q as usize].rearm_claim(now);
                self.nic_outcome(now, h, q as usize, out);
                if rx {
                    let budget = self.c.napi_budget;
                    self.hosts[h].cores[core].kq.push_front(KWork::Napi { q, budget });
                }
            }
            KWork::Irq { .. } | KWork::Napi { .. } | KWork::TimerNapi { .. } => {
                unreachable!("converted to Entry/Rearm/Defer when started")
            }
        }
    }

    /// Reaping `n` transmit completions on a core of die `die`: freeing the
    /// skbs and touching the send-path state shared with the sender.
    fn reap_cost(&mut self, now: Instant, h: usize, core: usize, n: u32) -> Duration {
        let free = self.c.tx_done.times(n as u64);
        free + self.tx_touch(now, h, core, free)
    }

    /// CPU cost of handling one ring entry in the bottom half.
    fn entry_cost(&mut self, now: Instant, h: usize, core: usize, entry: RingEntry) -> Duration {
        let die = self.topo.die_of(core as u16);
        use crate::host::Side::Kernel;
        if let (RingEntry::Rx(frame), Some(crate::config::EchoAt::Kernel)) = (entry, self.echo) {
            if h == 1 {
                return self.kernel_echo_cost(now, h, core, frame);
            }
        }
        let c = &self.c;
        let hs = &mut self.hosts[h];
        match entry {
            RingEntry::TxDone(n) => self.reap_cost(now, h, core, n),
            RingEntry::Rx(frame) => {
                let Some(repr) = self.frames[frame as usize].parsed else {
                    return c.driver_rx + c.handler_drop;
                };

                let ep = repr.body.dst_endpoint();
                let Some(p) = hs.eps[ep as usize] else {
                    return c.driver_rx + c.handler_drop;
                };
                let pr = &mut hs.procs[p as usize];
                let mut cost = c.driver_rx
                    + c.handler
                    + self.cc.access(&self.topo, &mut hs.cache, &mut pr.ep_obj, die, Kernel, c.endpoint_lines);
                let payload = repr.body.payload_len() as u64;
                // Where the DMA put the frame: memory, or with DCA the cache of
                // the core that serves the queue.
                let dma_src = if c.dca {
                    crate::host::Owner::Die(
                        self.topo.die_of(hs.steering.nominal_core(self.frames[frame as usize].q as usize)),
                    )
                } else {
                    crate::host::Owner::Memory
                };
                match repr.body {
                    OmxBody::Pull { .. } => {}
                    OmxBody::PullReply { dst_pull_handle, .. } => {
                        // Copy from the DMA buffer (memory) into the pinned region
                        // (or hand it to the copy engine), and update the pull
                        // handle (wherever it was last touched).
                        cost += if c.ioat {
                            c.ioat_submit
                        } else {
                            self.cc.copy(&mut hs.cache, dma_src, die, Kernel, payload)
                        };
                        if let Some(obj) = self.handle_objs.get_mut(dst_pull_handle as usize) {
                            cost += self.cc.access(&self.topo, &mut hs.cache, obj, die, Kernel, c.pull_lines);
                        }
                    }
                    _ => {
                        cost += self.cc.access(&self.topo, &mut hs.cache, &mut pr.ring_obj, die, Kernel, c.event_lines);
                        if matches!(repr.body, OmxBody::Small { .. } | OmxBody::Medium { .. }) {
                            cost += self.cc.copy(&mut hs.cache, dma_src, die, Kernel, payload);
                        }
                    }
                }
                cost
            }
        }
    }

    // ----------------------------------------------------------------------
    // The Open-MX receive handler (bottom half), after its cost was paid.

    fn handle_frame(&mut self, now: Instant, h: usize, core: usize, frame: u32) {
        let (src, irq_stamp) = (self.frames[frame as usize].src, self.frames[frame as usize].irq_stamp);
        let parsed = self.frames[frame as usize].parsed;
        self.free_frame(frame);
        self.frames_handled += 1;
        let hs = &mut self.hosts[h];
        hs.rx_frames += 1;
        let Some(repr) = parsed else {
            self.drops.malformed += 1;
            return;
        };
        if h == 1 && self.echo == Some(crate::config::EchoAt::Kernel) {
            self.kernel_echo(now, &repr);
            return;
        }
        let ep = repr.body.dst_endpoint();
        let Some(p) = hs.eps[ep as usize] else {
            self.drops.no_endpoint += 1;
            return;
        };
        let p = p as usize;
        // The NIC itself (native MX) writes to memory: WRITER_MEMORY.
        let die = if core == usize::MAX { WRITER_MEMORY } else { self.topo.die_of(core as u16) };
        if core == usize::MAX {
            self.hosts[h].procs[p].ring_obj.owner = crate::host::Owner::Memory;
        }
        let src_ep = repr.body.src_endpoint().unwrap_or(0);
        let peer = self.rank_of[src as usize][src_ep as usize];
        if peer == u16::MAX && !matches!(repr.body, OmxBody::Pull { .. } | OmxBody::PullReply { .. }) {
            self.drops.no_endpoint += 1;
            return;
        }
        let mut ev = LibEvent {
            kind: LKind::Ack,
            peer,
            seq: 0,
            piggy: None,
            tag: 0,
            size: 0,
            frag_len: 0,
            frag_seq: 0,
            rdma: 0,
            writer_die: die,
            irq_stamp,
        };
        match repr.body {
            OmxBody::Tiny { seq, piggy_ack, match_info, length, .. } => {
                ev = LibEvent {
                    kind: LKind::Tiny,
                    seq: seq as u32,
                    piggy: Some(piggy_ack as u32),
                    tag: match_info,
                    size: length as u64,
                    ..ev
                };
            }
            OmxBody::Small { seq, piggy_ack, match_info, length, .. } => {
                ev = LibEvent {
                    kind: LKind::Small,
                    seq: seq as u32,
                    piggy: Some(piggy_ack as u32),
                    tag: match_info,
                    size: length as u64,
                    ..ev
                };
            }
            OmxBody::Medium { seq, piggy_ack, match_info, msg_length, frag_seq, frag_length, .. } => {
                ev = LibEvent {
                    kind: LKind::MediumFrag,
                    seq: seq as u32,
                    piggy: Some(piggy_ack as u32),
                    tag: match_info,
                    size: msg_length as u64,
                    frag_len: frag_length as u32,
                    frag_seq,
                    ..ev
                };
            }
            OmxBody::Rndv { seq, piggy_ack, match_info, msg_length, rdma_id, .. } => {
                ev = LibEvent {
                    kind: LKind::Rndv,
                    seq: seq as u32,
                    piggy: Some(piggy_ack as u32),
                    tag: match_info,
                    size: msg_length as u64,
                    rdma: rdma_id as u32,
                    ..ev
                };
            }
            OmxBody::Notify { seq, piggy_ack, total_length, puller_rdma_id, .. } => {
                ev = LibEvent {
                    kind: LKind::Notify,
                    seq: seq as u32,
                    piggy: Some(piggy_ack as u32),
                    size: total_length as u64,
                    rdma: puller_rdma_id as u32,
                    ..ev
                };
            }
            OmxBody::Ack { lib_seqnum, .. } => {
                ev = LibEvent { kind: LKind::Ack, piggy: Some(lib_seqnum as u32), ..ev };
            }
            OmxBody::Pull {
                src_ep,
                total_length,
                frame_index,
                first_frame_offset,
                src_pull_handle,
                src_magic,
                block_length,
                ..
            } => {
                let _ = (src_ep, block_length);
                let local_ep = repr.body.dst_endpoint();
                self.serve_pull(
                    now,
                    h,
                    core,
                    src,
                    local_ep,
                    total_length as u64,
                    first_frame_offset,
                    frame_index,
                    src_pull_handle,
                    src_magic,
                );
                return;
            }
            OmxBody::PullReply { msg_offset, dst_pull_handle, .. } => {
                self.pull_reply_arrived(now, h, core, dst_pull_handle, msg_offset);
                return;
            }
        }
        self.post_event(now, h, p, ev);
    }

    /// Writes an event into a process's ring and makes it notice.
    pub(crate) fn post_event(&mut self, now: Instant, h: usize, p: usize, ev: LibEvent) {
        let pr = &mut self.hosts[h].procs[p];
        pr.ring.push_back(ev);
        self.notify_proc(now, h, p);
    }

    /// The process has something to do: wake it if it polls or sleeps.
    pub(crate) fn notify_proc(&mut self, now: Instant, h: usize, p: usize) {
        let hs = &mut self.hosts[h];
        let pr = &mut hs.procs[p];
        let core = pr.core as usize;
        match pr.state {
            PState::Polling => {
                pr.state = PState::Ready;
                let ep = pr.ep;
                if let Some(t0) = pr.poll_since.take() {
                    hs.spin_time += now.since(t0);
                }
                let q = hs.steering.queue_for(Some(ep), 0);
                self.release_suspension(now, h, q);
                self.dispatch_at(now, h, core);
            }
            PState::Blocked => {
                pr.state = PState::Waking;
                self.dispatch_at(now, h, core);
            }
            PState::Done => {
                pr.state = PState::Ready;
                self.dispatch_at(now, h, core);
            }
            _ => {}
        }
    }

    fn proc_timer(&mut self, now: Instant, h: usize, p: usize) {
        let pr = &mut self.hosts[h].procs[p];
        if pr.timer_at.is_some_and(|t| t <= now) {
            pr.timer_at = None;
            self.notify_proc(now, h, p);
        }
    }

    /// Arms the protocol timer (delayed ack / resend) of process `p` (`pr`,
    /// of host `h`) at `at` if earlier than the one armed. Takes the process
    /// and the queue rather than the world: callers already hold the process.
    pub(crate) fn arm_timer(pr: &mut Proc, q: &mut EventQueue<Ev>, h: usize, p: usize, at: Instant) {
        if pr.timer_at.is_none_or(|t| at < t) {
            pr.timer_at = Some(at);
            q.push(at, h as u32, Ev::ProcTimer { host: h as u16, p: p as u16 });
        }
    }

    // ----------------------------------------------------------------------
    // Large messages: the driver's pull protocol.

    fn serve_pull(
        &mut self,
        now: Instant,
        h: usize,
        core: usize,
        dst: u16,
        ep: u8,
        size: u64,
        first: u32,
        block: u32,
        handle: u32,
        magic: u32,
    ) {
        let _ = block;
        let mtu = self.c.mtu;
        let replies = crate::wire::pull_reply_count(size as usize, mtu) as u32;
        let end = (first + crate::wire::PULL_BLOCK_REPLIES as u32).min(replies);
        let s = Serve { live: true, dst, ep, handle, magic, next: first, end, size };
        let id = if let Some(i) = self.free_serves.pop() {
            self.serves[i as usize] = s;
            i
        } else {
            self.serves.push(s);
            (self.serves.len() - 1) as u32
        };
        if self.c.native {
            // The NIC firmware serves the pull: every reply goes straight to
            // its transmit queue, no host CPU.
            while self.serves[id as usize].live {
                self.send_pull_reply(now, h, usize::MAX, id);
            }
            return;
        }
        // The handler sends the replies inline, before the poll goes on.
        self.hosts[h].cores[core].kq.push_front(KWork::PullReply { serve: id });
        let _ = now;
    }

    fn send_pull_reply(&mut self, now: Instant, h: usize, core: usize, serve: u32) {
        let s = self.serves[serve as usize];
        let mtu = self.c.mtu;
        let per = crate::wire::pull_reply_payload(mtu) as u64;
        let idx = s.next;
        let offset = idx as u64 * per;
        let len = (s.size - offset).min(per) as u16;
        let last_in_block = idx + 1 == s.end;
        let marked = self.c.marked.marks(crate::wire::PacketKind::PullReply, last_in_block);
        let repr = FrameRepr {
            dst_mac: crate::wire::host_mac(s.dst),
            src_mac: crate::wire::host_mac(h as u16),
            src_peer: h as u16,
            marked,
            body: OmxBody::PullReply {
                frame_seqnum: (idx % 256) as u8,
                frame_length: len,
                msg_offset: offset as u32,
                dst_pull_handle: s.handle,
                dst_magic: s.magic,
            },
        };
        let id = self.new_frame(h as u16, s.dst, &repr);
        self.frames[id as usize].src_ep = s.ep;
        self.transmit(now, h, id);
        let sv = &mut self.serves[serve as usize];
        sv.next += 1;
        if sv.next < sv.end {
            if core != usize::MAX {
                self.hosts[h].cores[core].kq.push_front(KWork::PullReply { serve });
            }
        } else {
            sv.live = false;
            self.free_serves.push(serve);
        }
    }

    fn pull_reply_arrived(&mut self, now: Instant, h: usize, core: usize, handle: u32, offset: u32) {
        let mtu = self.c.mtu;
        let per = crate::wire::pull_reply_payload(mtu) as u32;
        let block = crate::wire::PULL_BLOCK_REPLIES as u32;
        let Some(hd) = self.handles.get_mut(handle as usize).filter(|hd| hd.live && hd.host == h as u16) else {
            self.drops.stale_pull += 1;
            return;
        };
        let idx = offset / per;
        let (new, block_done) = hd.record(idx, block);
        if !new {
            self.drops.duplicate += 1;
            return;
        }
        hd.last_progress = now;
        if self.c.ioat && !self.c.native {
            // The copy engine works through its descriptors in order.
            let bytes = (hd.size - idx as u64 * per as u64).min(per as u64);
            let hs = &mut self.hosts[h];
            let done = now.max(hs.ioat_free) + Duration::for_bytes(bytes, self.c.ioat_bps);
            hs.ioat_free = done;
            hd.copies_done = hd.copies_done.max(done + self.c.ioat_completion);
        }
        if hd.complete() {
            hd.live = false;
            let die = if core == usize::MAX { WRITER_MEMORY } else { self.topo.die_of(core as u16) };
            if hd.copies_done > now {
                let at = hd.copies_done;
                self.q.push(
                    at,
                    h as u32,
                    Ev::PullCopied {
                        host: h as u16,
                        handle,
                        die: if die == WRITER_MEMORY { u8::MAX } else { die as u8 },
                    },
                );
            } else {
                self.pull_done(now, h, handle, die);
            }
        } else if block_done && hd.next_block < hd.blocks {
            // Request the next block (the driver, from the handler).
            let b = hd.next_block;
            hd.next_block += 1;
            hd.missing[b as usize] = hd.block_len(b, block);
            let f = self.pull_frame(handle, b);
            self.transmit(now, h, f);
        }
    }

    /// Every reply of a pull is in the receive buffer: tell the library.
    fn pull_done(&mut self, now: Instant, h: usize, handle: u32, die: u16) {
        let hd = &self.handles[handle as usize];
        {
            let (p, req, peer, peer_ep, rdma, size) =
                (self.hosts[h].eps[hd.ep as usize], hd.req, hd.peer_host, hd.peer_ep, hd.rdma_id, hd.size);
            self.free_handles.push(handle);
            if let Some(p) = p {
                let ev = LibEvent {
                    kind: LKind::PullDone,
                    peer: self.rank_of[peer as usize][peer_ep as usize],
                    seq: req,
                    piggy: None,
                    tag: 0,
                    size,
                    frag_len: 0,
                    frag_seq: 0,
                    rdma: rdma as u32,
                    writer_die: die,
                    irq_stamp: 0,
                };
                self.post_event(now, h, p as usize, ev);
            }
        }
    }

    /// Builds the PULL request frame for block `b` of a handle.
    pub(crate) fn pull_frame(&mut self, handle: u32, b: u32) -> u32 {
        let hd = &self.handles[handle as usize];
        let block = crate::wire::PULL_BLOCK_REPLIES as u32;
        let per = crate::wire::pull_reply_payload(self.c.mtu) as u64;
        let first = b * block;
        let block_bytes = (hd.size - (first as u64 * per)).min(per * block as u64);
        let repr = FrameRepr {
            dst_mac: crate::wire::host_mac(hd.peer_host),
            src_mac: crate::wire::host_mac(hd.host),
            src_peer: hd.host,
            marked: self.c.marked.marks(crate::wire::PacketKind::Pull, false),
            body: OmxBody::Pull {
                dst_ep: hd.peer_ep,
                src_ep: hd.ep,
                session: 0,
                total_length: hd.size as u32,
                block_length: block_bytes as u32,
                first_frame_offset: first,
                frame_index: b,
                pulled_rdma_id: hd.rdma_id,
                src_pull_handle: handle,
                src_magic: crate::wire::pull_magic(hd.ep),
            },
        };
        let (src, dst) = (hd.host, hd.peer_host);
        self.new_frame(src, dst, &repr)
    }

    fn pull_timer(&mut self, now: Instant, handle: u32) {
        let to = self.c.pull_timeout;
        let Some(hd) = self.handles.get(handle as usize).filter(|hd| hd.live) else { return };
        if now.since(hd.last_progress) < to {
            let at = hd.last_progress + to;
            self.q.push(at, hd.host as u32, Ev::PullTimer { handle });
            return;
        }
        // Re-request every requested block that is still incomplete.
        let host = hd.host as usize;
        let blocks: Vec<u32> = (0..hd.next_block).filter(|&b| hd.missing[b as usize] > 0).collect();
        for b in blocks {
            let f = self.pull_frame(handle, b);
            self.transmit(now, host, f);
        }
        if let Some(hd) = self.handles.get_mut(handle as usize) {
            hd.last_progress = now;
        }
        self.q.push(now + to, host as u32, Ev::PullTimer { handle });
    }
}

/// Makes the coalescing policy of one receive queue (see [`run_with_policy`]).
pub type PolicyFactory<'a> = &'a mut dyn FnMut() -> Box<dyn crate::nic::coalesce::Coalescer>;

/// Runs one scenario to completion and returns its metrics.
pub fn run(s: &Scenario) -> Result<Metrics, SimError> {
    run_with_policy(s, None)
}

/// Runs one scenario with a user-defined coalescing policy on every receive
/// queue (`None`: the scenario's strategy).
pub fn run_with_policy(s: &Scenario, policy: Option<PolicyFactory<'_>>) -> Result<Metrics, SimError> {
    let mut w = World::with_policy(s, policy);
    w.run()?;
    w.check_invariants()?;
    if let (Some(path), Some(frames)) = (&s.pcap, w.pcap.as_mut()) {
        frames.sort_by_key(|(t, _)| *t);
        let file = std::fs::File::create(path).map_err(|e| SimError(format!("pcap: cannot create {path:?}: {e}")))?;
        let mut pw =
            crate::wire::PcapWriter::new(std::io::BufWriter::new(file)).map_err(|e| SimError(format!("pcap: {e}")))?;
        for (t, b) in frames.iter() {
            pw.write_frame(*t, b).map_err(|e| SimError(format!("pcap: {e}")))?;
        }
    }
    Ok(w.metrics())
}
