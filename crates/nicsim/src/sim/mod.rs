//! The simulated world: where NICs, the network, hosts, the Open-MX-like
//! protocol and the workloads meet, driven by one event queue.
//!
//! This module owns the world ([`World`]: one `HostState` per host and the
//! components named below), its events (`Ev`) and the event loop (`run`,
//! `handle`), which hands each event to the stage it belongs to: one line
//! per event kind, no stage logic of its own. The stages are one `impl World` file each, in
//! the order a message crosses them:
//!
//! * `build`: turning a validated [`Scenario`] into a world (costs, hosts,
//!   processes);
//! * `wire_path`: the frames in flight (`Frames`), the wire (`Wire`), the
//!   driver's doorbell and the switch;
//! * `nic_path`: NIC receive, DMA, transmit completions, the receive
//!   queue's timers (coalescing, polling watchdog), and the interrupt a
//!   coalescing decision raises;
//! * `kernel`: the host's cores: what each runs next (kernel work before
//!   the application), the calls into the host's receive path
//!   (`crate::kernel::RxPath`: hard IRQ, NAPI, the Open-MX handler's
//!   verdict on a frame) and into a process's library (`crate::library`:
//!   its step, its segment's end, an event posted to its ring), each with
//!   its context, and their answers routed; `kernel_start`: a kernel work
//!   item's start and its price (the handler's, a reap's, the paths'
//!   cache footprints);
//! * `lib_io`: a process waiting without its core's dispatch: busy
//!   polling, the protocol timer's event, the library giving up;
//! * `pull`: the drivers' pull of large messages (`Pulls`: their handles);
//! * `run`: the run's state (`Run`); the rank map is the library's
//!   (`library::Ranks`, in the world's `library::Env`);
//! * `replay`: the frames of a capture injected into a receiving NIC;
//! * `echo`, `flood`: the \[EMO] echo server and the invalid-packet flood,
//!   components the build wires onto the host they run on (an `Echo` in
//!   its `HostState`, the `Flood` source in the world's `Run`), which answer the
//!   frames and ticks the world routes to them;
//! * `mcast`: \[LCI] NI-level multicast forwarding, the firmware's copies
//!   of a tagged frame down its tree (the table is the NIC's,
//!   `crate::nic::multicast`); the polling watchdog is the receive
//!   queue's (`crate::nic::watchdog`), its event routed to `nic_path`;
//! * `clock`: the \[LCI] NI clock of the library's fine-grain timers, one
//!   for both firmwares: its ticks and the interrupt that runs a computing
//!   process's library, or signals the LCI library;
//! * `metrics`: metrics and invariants.
//!
//! Each component's own state and rules live in its module (`nic`, `net`,
//! `host` with its cores, `library`, `workload`; the protocol's sequence numbers,
//! acks, resends and pull blocks in `proto`, whose transitions the library,
//! the handler and the drivers apply here); the costs come from the
//! validated [`Scenario`]. Event order is deterministic (see `crate::engine`); the only
//! randomness (loss, reordering) comes from the scenario's seed.

mod build;
mod clock;
mod echo;
mod flood;
#[cfg(test)]
mod flow_tests;
mod frame;
mod kernel;
mod kernel_start;
mod lci_stack;
mod lib_io;
mod mcast;
mod metrics;
#[cfg(test)]
mod napi_tests;
mod net_tx;
#[cfg(test)]
mod ni_tests;
mod nic_path;
mod pcap_sink;
mod pull;
mod replay;
mod run;
mod stall;
mod tick;
mod trace;
mod wire_path;

#[cfg(test)]
pub(crate) use build::lci_processes;
pub use build::NAPI_BUDGET;
pub use replay::{
    frame_time_ns, run_replay, run_replay_traced, ReplayFrame, ReplayKind, ReplaySeries, MAX_TIME_NS, NO_QUEUE,
    REPLAY_MAX_FRAMES,
};

pub(crate) use crate::costs::Costs;
pub(crate) use crate::host::HostMem;
pub(crate) use crate::kernel::RxBy;
pub(crate) use crate::library::{Env, Ranks, NO_RANK};
pub(crate) use echo::Echo;
pub(crate) use flood::Flood;
#[cfg(test)]
pub(crate) use frame::Frame;
pub(crate) use kernel::ProcSet;
pub(crate) use kernel::{Core, KWork};
pub(crate) use pull::Pulls;
pub(crate) use run::Run;
use stall::{StageCounts, Stall, MAX_EVENTS_PER_US_PER_HOST, QUIET_SAMPLE, STALL_SAMPLE, STALL_WINDOWS, WATCH_EVENTS};
pub use trace::{Record, TraceCfg, Tracer, What, TRACK_NIC_TX, TRACK_RX_QUEUE};
pub(crate) use wire_path::{Frames, Wire};

use crate::config::{Scenario, Workload};
use crate::engine::{EventQueue, Origin};
use crate::host::TxBacklog;
use crate::interrupt::{self, Check};
use crate::kernel::RxPath;
use crate::library::{Output, Proc};
use crate::nic::steering::Steering;
use crate::nic::Nic;
use crate::time::{Duration, Instant};
use crate::{Metrics, SimError};

/// The event origin of the network (frames arriving at a NIC). Hosts use
/// their index as origin (at most 1,024, `config::Platform::validate`);
/// this one is above every host and below the engine's 2^24 origins, so
/// at equal times host events come first (`crate::engine`).
pub(crate) const NETWORK_ORIGIN: Origin = 1_000_000;

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
    /// A transmitted frame's completion, with its skb's destructor and the
    /// process that sent it (`kernel::net_tx`).
    TxDone {
        host: u16,
        q: u8,
        /// The Open-MX destructor of the frame's skb, and the sending
        /// endpoint whose process it concerns.
        dtor: crate::kernel::TxDtor,
        ep: u8,
        /// The frame's length (at most an MTU of 9000 and its headers):
        /// what the transmit counters of TX DIM add.
        bytes: u16,
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
    /// A claim the host wrote reaches the NIC (`nic.claim_latency_ns`):
    /// the receive claim (`rx`) or the interrupt claim.
    ClaimLands {
        host: u16,
        q: u8,
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
        /// The writer's die, `u8::MAX` for memory (`Writer::Memory`).
        die: u8,
    },
    FloodTick,
    /// The next frame of a replayed capture reaches its NIC (`replay`).
    ReplayTick,
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
    /// The polling watchdog's timer or its fetch of the host's counter.
    WatchdogTimer {
        host: u16,
        q: u8,
        gen: u32,
    },
    /// The NI clock ticks (`clock`).
    ClockTick {
        host: u16,
    },
    /// The tick's fetch of the host's timer words is back.
    ClockFetched {
        host: u16,
    },
    /// A clock interrupt reaches process `p`'s core.
    ClockIrq {
        host: u16,
        p: u16,
    },
    /// Core `core` of `host` ticks (`tick`).
    KernelTick {
        host: u16,
        core: u8,
    },
    /// Ring space freed while frames wait at the stopped link
    /// (`nic.flow_control`): the NIC lets in those that fit.
    FlowResume {
        host: u16,
    },
    /// The hold limit of host `host`'s stopped link
    /// (`nic.flow_control_hold_us`): whether the stop gives up.
    FlowLimit {
        host: u16,
    },
    /// An event for host `host`'s \[LCI] library (`lci_stack`): what it
    /// is, and a packet of its NI's store or a generation
    /// (`crate::library::LibEv`).
    LciLibrary {
        ev: crate::library::LibEv,
        host: u16,
        arg: u32,
    },
    /// An event for NI `host`'s LANai firmware (`lci_stack`): what it is,
    /// and a packet of its store (`crate::nic::lanai::FwEv`).
    Lanai {
        ev: crate::nic::lanai::FwEv,
        host: u16,
        arg: u32,
    },
}

const _: () = assert!(std::mem::size_of::<Ev>() == 8);

/// What fills the event queue's unused sorted slots (`EventQueue::new`):
/// never popped.
impl Default for Ev {
    fn default() -> Self {
        Ev::FloodTick
    }
}

/// A host's state. `repr(C)`, in this order: what nearly every event of
/// the host reads first (its cores, processes, the cache model's fill
/// clocks and objects, its time counters), then the send path, then the
/// NIC. Rust's own layout spread these over most of the struct's lines,
/// each a miss when the host's turn comes in a large run.
#[repr(C, align(64))]
pub(crate) struct HostState {
    pub cores: Vec<Core>,
    pub procs: Vec<Proc>,
    /// The cache counters, the send path and the kernel's lines: what a
    /// library call touches, behind the one reference its context holds.
    pub mem: HostMem,
    pub kernel_time: Duration,
    /// Application CPU time: library/compute segments and spinning.
    pub app_time: Duration,
    /// The frames handed to the driver and not yet on the wire, and their
    /// bound (`nic.tx_queue_len`).
    pub txq: TxBacklog,
    /// Sleeping processes woken from another core's bottom half
    /// (`host.wake_remote_ns`).
    pub wakes_remote: u64,
    /// The kernel's receive path: hard IRQ, NAPI, their counters
    /// (`crate::kernel`).
    pub rx: RxPath,
    /// The NET_TX softirq's completion queues and the Open-MX destructors
    /// waiting in them (`crate::kernel::net_tx`; empty without
    /// `host.tx_softirq`).
    pub net_tx: crate::kernel::NetTx,
    pub spin_time: Duration,
    pub nic: Nic,
    pub steering: Steering,
    /// Endpoint -> process index.
    pub eps: Vec<Option<u16>>,
    /// When the host's copy engine is free again.
    pub ioat_free: Instant,
    /// The processes in `Polling`, by the receive queue they poll: a busy
    /// poller woken by a new descriptor is found without a scan of the
    /// host's processes.
    pub pollers: Vec<ProcSet>,
    /// The \[EMO] echo server this host runs (`echo-nic` / `echo-kernel`
    /// workloads: host 1), wired at build time.
    pub echo: Option<Echo>,
    /// The \[LCI] library this host runs instead of Open-MX processes,
    /// when it runs the LCI stack (`lci_stack`; its NI's firmware is
    /// `nic.lanai`).
    pub lci: Option<Box<crate::library::lci::Lib>>,
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
    /// Message frames the handler found no event-ring slot for.
    pub event_queue_full: u64,
    /// Frames the sender's transmit path had no room for (`TxBacklog`).
    pub tx_queue: u64,
    /// Frames a stopped sender's qdisc had no room for (`nic.pause_to_sender`):
    /// sent on the booked wire, dropped where they wait (`nic_path`), counted
    /// with `tx_queue` in `dropped_tx_queue`.
    pub tx_queue_paused: u64,
}

impl Drops {
    /// Frames the senders' queues dropped, stopped or not.
    pub(crate) fn at_sender(&self) -> u64 {
        self.tx_queue + self.tx_queue_paused
    }
}

/// The whole simulated system: the event queue, the hosts (each with its
/// NIC, cores and processes), the host model's costs, and the world's
/// components: the wire (network, faults, capture), the frames in flight,
/// the drivers' pulls, the rank map, the run's state, the optional sources
/// and recorders.
pub struct World {
    pub(crate) q: EventQueue<Ev>,
    pub(crate) hosts: Vec<HostState>,
    /// The costs, the topology, the rank map: what every library call
    /// reads, behind the one reference its context holds.
    pub(crate) env: Env,
    /// The network and what the wire does to frames (`wire_path`).
    pub(crate) wire: Wire,
    /// The frames in flight and their counts (`wire_path`).
    pub(crate) frames: Frames,
    /// The drivers' pull handles and the pulls they serve (`pull`).
    pub(crate) pulls: Pulls,
    pub(crate) run: Run,
    /// Programs not finished yet (the run ends at none).
    pub(crate) programs_left: u32,
    /// The replay source (`replay`), when the world replays a capture.
    pub(crate) replay: Option<Box<replay::Replay>>,
    /// The timeline, when one was asked for (`run_traced`).
    pub(crate) trace: Option<Box<Tracer>>,
    /// The \[LCI] NI clocks (`nic.clock_period_us` > 0), their counters.
    pub(crate) clock: Option<Box<clock::Clock>>,
    /// The kernel's periodic tick (`host.tick.hz` > 0), its count.
    pub(crate) ticks: Option<Box<tick::Ticks>>,
    /// The outputs of the library calls under way (`lib_io`), reused.
    pub(crate) lib_out: Vec<Output>,
}

impl World {
    /// Runs to completion (every program done, or the flood drained).
    pub fn run(&mut self) -> Result<(), SimError> {
        self.run_checked(&mut interrupt::never)
    }

    /// Runs to completion, calling `check` every [`interrupt::CHECK_EVERY`]
    /// events; stops with [`SimError::interrupted`] when it says so, and
    /// with an error when the simulated clock passes [`Instant::RUN_LIMIT`]
    /// (looked at with the check, and at the end: see `crate::time`).
    pub fn run_checked(&mut self, check: Check<'_>) -> Result<(), SimError> {
        let r = self.run_loop(check);
        match r {
            Err(e) if e.is_interrupted() => Err(e),
            _ if self.q.now() > Instant::RUN_LIMIT => Err(self.past_the_limit()),
            r => r,
        }
    }

    /// The error of a run whose clock passed [`Instant::RUN_LIMIT`].
    #[cold]
    fn past_the_limit(&self) -> SimError {
        SimError(format!(
            "the simulated clock passed its limit of 110 days ({} ps) at {:.0} s: this run is longer than the \
             simulator's clock holds (fewer iterations or messages, or shorter compute steps, make it fit)",
            Instant::RUN_LIMIT.as_ps(),
            self.q.now().as_s_f64()
        ))
    }

    /// The event loop of [`World::run_checked`].
    fn run_loop(&mut self, mut check: Check<'_>) -> Result<(), SimError> {
        // A run that stops making progress ends with an error, never a hang.
        let (window, window_events) = (self.stall_window(), self.stall_events());
        let (mut progress, mut progress_at, mut progress_event) = (self.progress(), Instant::ZERO, 0);
        let hosts = self.hosts.len() as f64;
        let (mut next_look, mut since, mut hot) = (WATCH_EVENTS, Instant::ZERO, 0u32);
        // Once a stall is seen: why, and the events per stage, sampled.
        let mut sample: Option<(Stall, u64, StageCounts)> = None;
        // The next event whose count the loop looks at beyond handling it
        // (every CHECK_EVERY-th, each WATCH_EVENTS-th, and every one while
        // a stall is sampled): one compare per event for the three.
        let mut look_at = self.q.popped() + 1;
        while let Some((now, ev)) = self.q.pop() {
            let events = self.q.popped();
            if events >= look_at {
                // Every CHECK_EVERY events, not every event: a stage that gave
                // up, the progress window and the caller's interrupt check.
                if interrupt::due(events) {
                    if let Some(e) = self.run.failed.take() {
                        return Err(e);
                    }
                    if now > Instant::RUN_LIMIT {
                        return Err(self.past_the_limit());
                    }
                    let p = self.progress();
                    if p != progress {
                        (progress, progress_at, progress_event) = (p, now, events);
                        self.run.ring_full_at_progress = self.frames.drops.ring_full;
                    } else if events - progress_event > window_events {
                        return Err(self.no_packets(now));
                    } else if now.since(progress_at) > window && sample.is_none() {
                        sample = Some((Stall::Quiet { since: progress_at, window }, 0, Vec::new()));
                    }
                    interrupt::ask(&mut check, interrupt::Progress { now, events })?;
                }
                if events >= next_look {
                    next_look += WATCH_EVENTS;
                    let span_us = now.since(since).as_us_f64();
                    since = now;
                    hot = if WATCH_EVENTS as f64 > MAX_EVENTS_PER_US_PER_HOST * hosts * span_us { hot + 1 } else { 0 };
                    if hot >= STALL_WINDOWS && sample.is_none() {
                        sample = Some((Stall::Rate { hot }, 0, Vec::new()));
                    }
                }
                if let Some((why, n, counts)) = sample.as_mut() {
                    match counts.iter_mut().find(|(k, _)| *k == ev.stage()) {
                        Some((_, c)) => *c += 1,
                        None => counts.push((ev.stage(), 1)),
                    }
                    *n += 1;
                    let limit = if matches!(why, Stall::Rate { .. }) { STALL_SAMPLE } else { QUIET_SAMPLE };
                    if *n == limit {
                        return Err(self.stalled(now, *why, *n, counts));
                    }
                }
                // The next CHECK_EVERY-th event (`due`'s mask test), or the
                // next look at the rate if that comes first.
                let next_due = (events | (interrupt::CHECK_EVERY as u64 - 1)) + 1;
                look_at = if sample.is_some() { events + 1 } else { next_due.min(next_look) };
            }
            self.handle(now, ev);
            // `finished` implies no program left (a flood runs none).
            if self.programs_left == 0 && self.finished() {
                return self.run.failed.take().map_or(Ok(()), Err);
            }
        }
        if let Some(e) = self.run.failed.take() {
            return Err(e);
        }
        if self.finished() {
            Ok(())
        } else if self.run.lci.is_some() {
            Err(SimError(format!(
                "no progress: nothing left to happen at {} us and the program is not done",
                self.q.now().as_us_f64()
            )))
        } else {
            let mut who = Vec::new();
            for (h, hs) in self.hosts.iter().enumerate() {
                for pr in &hs.procs {
                    if !pr.finished() {
                        who.push(format!("host {h}: {}", pr.describe()));
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

    /// What the stall window watches: requests completed, or for the flood
    /// the frames host 1's handler got.
    fn progress(&self) -> u64 {
        match self.run.workload {
            _ if self.run.lci.is_some() => {
                let (sent, delivered) = self.ni_packets();
                sent + delivered
            }
            Workload::Flood { .. } => self.hosts[Flood::TO].rx.rx_frames(),
            Workload::Replay => self.replay.as_ref().map_or(0, |r| self.hosts[r.host].rx.rx_frames()),
            _ => self.run.completions,
        }
    }

    /// Why a run without progress may be stuck, when frames were dropped at
    /// full receive rings since the last message completed: Open-MX
    /// resends a message whole, so when every resend round overflows a ring
    /// the same way the same fragments are lost every round. Empty
    /// otherwise.
    pub(crate) fn ring_overflow_note(&self) -> String {
        let dropped = self.frames.drops.ring_full - self.run.ring_full_at_progress;
        if dropped == 0 {
            return String::new();
        }
        let slots = self.hosts.iter().map(|h| h.nic.ring_slots).min().unwrap_or(0);
        format!(
            "; {dropped} frames were dropped at full receive rings since the last message completed{}",
            ring_advice(slots)
        )
    }

    /// A stage gave up: the run ends with `why` (the first one given).
    #[cold]
    pub(crate) fn fail(&mut self, why: String) {
        self.run.fail(why);
    }

    fn finished(&self) -> bool {
        match self.run.workload {
            Workload::Flood { .. } => {
                // Every flood frame reached host 1's handler or was dropped
                // on the way (the flood is the only traffic).
                let d = &self.frames.drops;
                let dropped = d.loss + d.ring_full + d.malformed;
                self.run.flood.is_none_or(|f| {
                    f.drained()
                        && self.hosts[Flood::TO].rx.rx_frames() + dropped >= f.packets()
                        && self.all_idle(Flood::TO)
                })
            }
            Workload::Replay => self.replay_finished(),
            _ => self.programs_left == 0,
        }
    }

    fn all_idle(&self, h: usize) -> bool {
        self.hosts[h].cores.iter().all(|c| c.is_quiet())
            && self.hosts[h].nic.queues.iter().all(|q| q.pending() == 0)
            && self.hosts[h].nic.in_dma == 0
    }

    /// Inlined into `run`, its only caller: the event loop is one function.
    #[inline(always)]
    fn handle(&mut self, now: Instant, ev: Ev) {
        match ev {
            Ev::SwitchIn { frame } => self.switch_in(now, frame),
            Ev::NicRx { frame } => self.nic_rx(now, frame),
            Ev::DmaDone { host, frame } => self.dma_done(now, host as usize, frame),
            Ev::TxDone { host, q, dtor, ep, bytes } => {
                self.tx_done(now, host as usize, q as usize, (dtor, ep), u32::from(bytes))
            }
            Ev::CoalTimer { host, q, gen } => self.coal_timer(now, host as usize, q as usize, gen),
            Ev::IrqArrive { host, q, rx } => self.irq_arrive(now, host as usize, q, rx),
            Ev::ClaimLands { host, q, rx } => self.claim_lands(now, host as usize, q as usize, rx),
            Ev::CoreDone { host, core, gen } => self.core_done(now, host as usize, core as usize, gen),
            Ev::ProcTimer { host, p } => self.proc_timer(now, host as usize, p as usize),
            Ev::PullTimer { handle } => self.pull_timer(now, handle),
            Ev::FloodTick => self.flood_tick(now),
            Ev::ReplayTick => self.replay_tick(now),
            Ev::PullCopied { host, handle, die } => self.pull_copied(now, host as usize, handle, die),
            Ev::NapiTimer { host, q, core } => self.napi_timer(now, host as usize, q, core as usize),
            Ev::SuspendTimer { host, q } => self.suspend_timer(now, host as usize, q as usize),
            Ev::WatchdogTimer { host, q, gen } => self.watchdog_timer(now, host as usize, q as usize, gen),
            Ev::ClockTick { host } => self.clock_tick(now, host as usize),
            Ev::ClockFetched { host } => self.clock_fetched(now, host as usize),
            Ev::ClockIrq { host, p } => self.clock_irq(now, host as usize, p as usize),
            Ev::FlowResume { host } => self.flow_resume(now, host as usize),
            Ev::FlowLimit { host } => self.flow_limit(now, host as usize),
            Ev::KernelTick { host, core } => self.kernel_tick(now, host as usize, core as usize),
            Ev::LciLibrary { .. } | Ev::Lanai { .. } => self.lci(now, ev),
        }
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
    run_checked(s, policy, &mut interrupt::never)
}

/// Runs one scenario as [`run_with_policy`] does, calling `check` every
/// [`interrupt::CHECK_EVERY`] events; the scenario's capture as
/// [`run_traced`] writes it.
pub fn run_checked(s: &Scenario, policy: Option<PolicyFactory<'_>>, check: Check<'_>) -> Result<Metrics, SimError> {
    run_traced(s, policy, check, None).map(|(m, _)| m)
}

/// Runs one scenario as [`run_checked`] does and, given a [`TraceCfg`],
/// records its timeline (`sim::trace`); the metrics are the same.
///
/// The scenario's capture (`pcap`), if it names one, is opened (created or
/// truncated) before the first event, an error naming the path if it
/// cannot be, and written as the run goes (`pcap_sink`): every frame on
/// the wire, in time order, its header bytes and its payload as zeros.
/// After a successful run the file is whole. A run that fails or is
/// stopped leaves at the path the frames written until then, the last
/// record possibly cut: nothing here removes, renames or replaces a file,
/// so a caller that wants the capture whole or not at all passes a
/// temporary path and renames it after success (a device or a FIFO is
/// given as it is: it is opened for writing, never replaced).
pub fn run_traced(
    s: &Scenario,
    policy: Option<PolicyFactory<'_>>,
    check: Check<'_>,
    trace: Option<TraceCfg>,
) -> Result<(Metrics, Option<Box<Tracer>>), SimError> {
    let mut w = World::build(s, policy, trace)?;
    if let Err(e) = w.run_checked(check) {
        // A stuck LCI program is a result (`lci::Running::stuck_is_a_result`).
        if e.is_interrupted() || !w.run.lci.as_ref().is_some_and(|s| s.stuck_is_a_result()) {
            return Err(e);
        }
        if let Some(p) = w.wire.pcap.as_deref_mut() {
            p.finish()?;
        }
        let mut m = w.metrics();
        m.set("stuck_at_us", w.q.now().as_us_f64());
        return Ok((m, None));
    }
    w.check_invariants()?;
    if let Some(p) = w.wire.pcap.as_deref_mut() {
        p.finish()?;
    }
    Ok((w.metrics(), w.trace.take()))
}

/// What a diagnosis of whole-message resends overflowing a ring of `slots`
/// entries tells the user, after its count of drops.
pub(crate) fn ring_advice(slots: usize) -> String {
    format!(
        ": each resend round overflows a ring the same way (Open-MX resends whole messages); `nic.ring_slots` = \
         {slots} is too small for this load (allowed: up to 1048576)"
    )
}
