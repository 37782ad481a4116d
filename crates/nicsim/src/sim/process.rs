//! The state of a simulated process: its scheduling state, the action of
//! the segment it runs, its requests, unexpected and early messages, medium
//! messages being reassembled, what its library will hand to the driver, and
//! its protocol state (`crate::proto::Endpoint`).
//!
//! This module owns these types and a process's own transitions, as methods
//! of [`Proc`] that decide and return what the world must schedule (as
//! `crate::proto::Endpoint` does for the protocol): its segments
//! (`start_segment`, `end_segment`, `preempt`), what it does when something
//! arrives (`notice`) or a blocking call ends (`sleep_if_waiting`), whether
//! the program or the ring goes next (`program_goes_first`, `waits`,
//! `take_next_op`), finalizing (`finalize`), its requests (`new_req`,
//! `request_done`), the sends and notifies that wait for a region or a
//! window (`queue_if_waiting`, `next_waiting_send`,
//! `submit_waiting_notifies`), its pulls (`queue_pull`, `pull_done`), its
//! protocol timer (`arm_timer`, `timer_fired`, `timers_quiet`) and its
//! marks. The fields those methods own are private; the ring, the outbox,
//! the protocol state and the indexed collections stay open to the stages.
//! It also owns the host's record of which processes poll which receive
//! queue (`HostState::start_polling`, `stop_polling`, `poller_of`, over its
//! `pollers`). The indexed collections live in `indexes`; the library that
//! prices segments and acts on their completion in `lib_path`, `lib_send`
//! and `lib_recv`.

use super::indexes::{BySource, Early, MediumRxs, Regions, TimerEvents};
use super::{HostState, LibEvent, World};
use crate::host::{Obj, ObjClass};
use crate::nic::RingEntry;
use crate::proto::{Endpoint, Kind};
use crate::time::{Duration, Instant};
use crate::wire::{self, MessageClass};
use crate::workload::{Op, Program};
use std::collections::VecDeque;

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

/// Something the library will hand to the driver (one system call each).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Out {
    /// A message frame (tiny/small/medium fragment/rndv/notify).
    /// `frag` is the fragment index; `tail` marks the message's last frame
    /// in send order (with injected mis-ordering it is not the last index).
    Msg {
        /// Destination rank.
        peer: u16,
        kind: Kind,
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

impl Out {
    /// A message of one frame (a shared-memory copy, a multicast, a
    /// notify): fragment 0 of 1, its own tail.
    pub(crate) fn one_frame(peer: u16, kind: Kind, seq: u32, tag: u64, size: u64, rdma: u32) -> Self {
        Out::Msg { peer, kind, seq, tag, size, frag: 0, frags: 1, tail: true, rdma }
    }
}

/// A posted send to a remote peer that waits for a region.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Queued {
    pub req: u32,
    /// Destination rank.
    pub peer: u16,
    pub size: u64,
    pub tag: u64,
}

/// A request (send or receive) of a process.
#[derive(Clone, Copy, Debug)]
struct Req {
    live: bool,
    is_send: bool,
    size: u64,
}

/// An unexpected message waiting for its receive (a medium one's further
/// fragments are counted in its [`MediumRx`](super::indexes::MediumRx) while they come in).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unexpected {
    pub ev: LibEvent,
}

/// A process: its program's progress, its library state and its protocol
/// state. Laid out in declaration order (`repr(C)`), the fields most events
/// read first: at hundreds of ranks a process's state is out of the
/// simulator's caches when its next event comes, and the fields an event
/// reads then share a few cache lines instead of being spread over the
/// struct's 18.
#[repr(C)]
pub(crate) struct Proc {
    state: PState,
    pub ep: u8,
    /// The program returned `Done` (the library still answers the network).
    finished: bool,
    pub core: u16,
    /// MPI rank.
    pub rank: u16,
    /// Ring events to consume before the program's next operation: like
    /// `omx_isend`, which progresses after each send (`omx__progress` at the
    /// end of `omx_isend`, libopen-mx/omx_send.c), a send takes in the
    /// events already in the ring (acks, for a stream sender).
    drain: u32,
    outstanding: u32,
    /// Pulls started and not finished.
    pulls_active: u32,
    wait: Option<u32>,
    action: Action,
    /// An operation held back by the send window.
    pending_op: Option<crate::workload::Op>,
    /// The protocol deadline the process wants its timer event at.
    timer_at: Option<Instant>,
    /// Since when the process spins in `Polling` (CPU-use accounting).
    poll_since: Option<Instant>,
    program: Program,
    pub ring: VecDeque<LibEvent>,
    pub outbox: VecDeque<Out>,
    reqs: Vec<Req>,
    free_reqs: Vec<u32>,
    pub ring_obj: Obj,
    pub ep_obj: Obj,
    /// The process's other cache-model objects (library state, application
    /// buffers, receive queue slots), beside the two above: a message's
    /// handler and library step touch them together.
    pub lines: crate::host::ProcLines,
    /// Times of the process's `ProcTimer` events still queued (earliest
    /// first; a few are tracked, see `World::arm_timer`).
    timer_events: TimerEvents,
    /// Early (out-of-order) events.
    pub early: Early,
    /// Receives posted and not matched yet (request ids).
    pub posted: BySource<u32>,
    /// The protocol towards every rank (sequence numbers, acks, resends).
    pub proto: Endpoint,
    /// Messages that found no posted receive.
    pub unexpected: BySource<Unexpected>,
    /// Medium messages being received, at most one per peer (a peer's
    /// messages are consumed in sequence order).
    pub medium: MediumRxs,
    /// Sender regions of large sends: rdma id -> request.
    pub regions: Regions,
    /// Sends posted while every region was in use, and the sends posted
    /// behind them (Open-MX's `need_resources_send_req_q`: a large send
    /// that finds no region is queued, and later sends queue behind it,
    /// libopen-mx `omx_send.c`, `omx_large.c`).
    need_region: VecDeque<Queued>,
    /// Notifies (peer, region id, size) waiting for the peer's send window
    /// (Open-MX queues a send to a throttled partner on its
    /// `throttling_sends` list and submits it when acks open the window,
    /// `omx__process_throttling_requests`, libopen-mx `omx_send.c`).
    need_window: VecDeque<(u16, u32, u64)>,
    /// Pulls waiting to start.
    pulls_waiting: VecDeque<u32>,
    marks: [Option<Instant>; 2],
    irq_at_mark: [u64; 2],
    irq_all_at_mark: [u64; 2],
    /// When the library last ran before the computation under way (the
    /// "last polled the clock" word the NI clock reads, `clock`).
    lib_at: Instant,
    /// The protocol deadline the OS timer found the process computing at
    /// (only with an NI clock: `clock` reports how late it ran).
    timer_missed: Option<Instant>,
}

/// What finalizing (`Op::Done`) found ([`Proc::finalize`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Finalize {
    /// Pending acks were queued: the library runs again (peer state changed).
    Flushed,
    /// Messages sent are still unacknowledged: the process polls until
    /// they are (resends go on meanwhile).
    Unacked,
    /// Everything sent was acknowledged: the program is done.
    Done,
}

/// What the process does about something to do ([`Proc::notice`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Notice {
    /// It polls (spinning since the instant given, when counted): the host
    /// stops its polling and it runs.
    Polling(Option<Instant>),
    /// It slept or was done: it is runnable again.
    Runnable,
    /// It runs, or is about to: it will see it.
    Busy,
}

/// What a `ProcTimer` event found ([`Proc::timer_fired`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerFired {
    /// The protocol deadline is due: the library must run.
    Due,
    /// An earlier event stood in for the deadline: its own event is to be
    /// queued at this instant.
    Requeue(Instant),
    /// Nothing to do.
    Stale,
}

impl Proc {
    /// A process of rank `rank` on `core`, endpoint `ep`, running `program`
    /// with protocol state `proto`: ready, with no request, message or
    /// timer yet.
    pub(crate) fn new(rank: u16, core: u16, ep: u8, program: Program, proto: Endpoint) -> Self {
        Proc {
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
            ring: VecDeque::new(),
            drain: 0,
            outbox: VecDeque::new(),
            proto,
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            outstanding: 0,
            posted: BySource::new(),
            unexpected: BySource::new(),
            early: Early::default(),
            medium: MediumRxs::default(),
            regions: Regions::default(),
            need_region: VecDeque::new(),
            need_window: VecDeque::new(),
            ring_obj: Obj::new(ObjClass::EventRing),
            ep_obj: Obj::new(ObjClass::Endpoint),
            lines: Default::default(),
            timer_at: None,
            timer_events: Default::default(),
            marks: [None; 2],
            poll_since: None,
            irq_at_mark: [0; 2],
            irq_all_at_mark: [0; 2],
            lib_at: Instant::ZERO,
            timer_missed: None,
        }
    }

    // Scheduling state.

    #[inline]
    pub(crate) fn state(&self) -> PState {
        self.state
    }

    /// The action of the segment it runs (or last ran).
    #[inline]
    pub(crate) fn action(&self) -> Action {
        self.action
    }

    /// The program returned `Done` (the library still answers the network).
    #[inline]
    pub(crate) fn finished(&self) -> bool {
        self.finished
    }

    #[inline]
    pub(crate) fn is_polling(&self) -> bool {
        self.state == PState::Polling
    }

    /// Whether it is outside its library: computing (running or preempted
    /// in a compute segment). Any other state is in the library (a segment
    /// of it, spinning on its ring) or asleep in the kernel, where the OS
    /// timer wakes it at its deadline.
    #[inline]
    pub(crate) fn computing(&self) -> bool {
        matches!(self.state, PState::Running | PState::Preempted(_)) && matches!(self.action, Action::None)
    }

    /// Kernel work took its core with `remaining` of its segment left.
    #[inline]
    pub(crate) fn preempt(&mut self, remaining: Duration) {
        self.state = PState::Preempted(remaining);
    }

    /// Its preempted segment runs again.
    #[inline]
    pub(crate) fn resume(&mut self) {
        self.state = PState::Running;
    }

    /// It runs a segment whose end applies `action`.
    #[inline]
    pub(crate) fn start_segment(&mut self, action: Action) {
        self.state = PState::Running;
        self.action = action;
    }

    /// Its segment ended: it is ready again, and the segment's action is
    /// to be applied.
    #[inline]
    pub(crate) fn end_segment(&mut self) -> Action {
        self.state = PState::Ready;
        self.action
    }

    /// The program is done and nothing is left to hand over: it rests
    /// until the network gives its library something to do.
    #[inline]
    pub(crate) fn rest(&mut self) {
        self.state = PState::Done;
    }

    /// Its spin (`Polling`) is counted from `now` (CPU-use accounting).
    #[inline]
    pub(crate) fn spin_from(&mut self, now: Instant) {
        self.poll_since = Some(now);
    }

    /// Something to do arrived (a ring event, a due timer): whether and
    /// how it wakes.
    #[inline]
    pub(crate) fn notice(&mut self) -> Notice {
        match self.state {
            PState::Polling => Notice::Polling(self.poll_since.take()),
            PState::Blocked => {
                self.state = PState::Waking;
                Notice::Runnable
            }
            PState::Done => {
                self.state = PState::Ready;
                Notice::Runnable
            }
            _ => Notice::Busy,
        }
    }

    /// A blocking call ended: it sleeps if it has nothing to consume or
    /// hand over and its program waits (for requests, or an operation held
    /// back).
    #[inline]
    pub(crate) fn sleep_if_waiting(&mut self) {
        let nothing = self.ring.is_empty() && self.outbox.is_empty();
        if nothing && (self.wait.is_some_and(|n| self.outstanding > n) || self.pending_op.is_some()) {
            self.state = PState::Blocked;
        }
    }

    // The program and its operations.

    /// Whether the program's next operation goes before the events in the
    /// ring: it waits for nothing (no request it waits for is outstanding,
    /// no operation is held back) and no send's progress call still drains
    /// the ring (`drain`). Otherwise its next segment consumes the ring's
    /// head event, if there is one ([`Proc::drain_one`]).
    #[inline]
    pub(crate) fn program_goes_first(&self) -> bool {
        // Like MPI_Wait, the progress loop returns as soon as what the
        // program waits for is complete: the program's next operation
        // goes before events still queued (a receiver that keeps pace
        // only by consuming would otherwise never post its receives).
        let program_ready =
            !self.finished && self.pending_op.is_none() && self.wait.is_none_or(|n| self.outstanding <= n);
        program_ready && self.drain == 0
    }

    /// Its next segment consumes the ring's head event: one fewer for a
    /// send's progress call to drain.
    #[inline]
    pub(crate) fn drain_one(&mut self) {
        self.drain = self.drain.saturating_sub(1);
    }

    /// Whether the program waits for requests to complete (a wait that is
    /// satisfied ends here).
    #[inline]
    pub(crate) fn waits(&mut self) -> bool {
        match self.wait {
            Some(n) if self.outstanding > n => true,
            Some(_) => {
                self.wait = None;
                false
            }
            None => false,
        }
    }

    /// The program's next operation: the one held back, or its program's.
    #[inline]
    pub(crate) fn take_next_op(&mut self) -> Op {
        self.pending_op.take().unwrap_or_else(|| self.program.next_op())
    }

    /// Holds `op` back (the send window is full): it comes next.
    #[inline]
    pub(crate) fn hold_op(&mut self, op: Op) {
        self.pending_op = Some(op);
    }

    /// The program waits until at most `n` requests are outstanding.
    #[inline]
    pub(crate) fn wait_for(&mut self, n: u32) {
        self.wait = Some(n);
    }

    /// It leaves its library at `now` to compute (its library has just
    /// polled the clock).
    #[inline]
    pub(crate) fn compute_from(&mut self, now: Instant) {
        self.lib_at = now;
    }

    /// When it last polled the clock: when it entered its computation, or
    /// `now` if it is in its library.
    #[inline]
    pub(crate) fn polled_clock_at(&self, now: Instant) -> Instant {
        if self.computing() {
            self.lib_at
        } else {
            now
        }
    }

    /// Mark `label` (0: start, 1: end) is at `now`.
    #[inline]
    pub(crate) fn mark(&mut self, label: usize, now: Instant) {
        self.marks[label] = Some(now);
    }

    /// At mark `label`, `own` interrupts were raised so far on its host and
    /// `all` on every host.
    #[inline]
    pub(crate) fn count_irqs_at_mark(&mut self, label: usize, own: u64, all: u64) {
        self.irq_at_mark[label] = own;
        self.irq_all_at_mark[label] = all;
    }

    /// The instants of its two marks.
    pub(crate) fn marks(&self) -> [Option<Instant>; 2] {
        self.marks
    }

    /// Interrupts raised on its host, and on every host, between its marks.
    pub(crate) fn irqs_between_marks(&self) -> (u64, u64) {
        (self.irq_at_mark[1] - self.irq_at_mark[0], self.irq_all_at_mark[1] - self.irq_all_at_mark[0])
    }

    /// Finalize (`Op::Done`): pending acks are queued, and until every
    /// message sent is acknowledged the operation is held back; then the
    /// program is done. Out of line: it runs once a process.
    #[cold]
    #[inline(never)]
    pub(crate) fn finalize(&mut self) -> Finalize {
        let outbox = &mut self.outbox;
        let flushed = self.proto.flush_acks(|peer| outbox.push_back(Out::Ack { peer }));
        if flushed || !self.proto.all_acked() {
            self.pending_op = Some(Op::Done);
            return if flushed { Finalize::Flushed } else { Finalize::Unacked };
        }
        self.finished = true;
        self.state = PState::Done;
        Finalize::Done
    }

    /// A clock signal's handler ran: a process preempted in a computation
    /// enters its library, the rest of the computation held as its next
    /// operation (true), or nothing changes (false).
    pub(crate) fn enter_library_on_signal(&mut self) -> bool {
        let PState::Preempted(rem) = self.state else { return false };
        if !self.computing() {
            return false;
        }
        debug_assert!(self.pending_op.is_none(), "a computing process holds no operation back");
        self.pending_op = Some(Op::Compute(rem));
        self.state = PState::Ready;
        true
    }

    /// What the run-end check reports about a process whose program did
    /// not finish.
    pub(crate) fn stuck_report(&self) -> String {
        format!(
            "{:?}, {} outstanding, waiting for <= {:?}, {} unexpected, {} early, medium {:?}",
            self.state,
            self.outstanding,
            self.wait,
            self.unexpected.len(),
            self.early.len(),
            self.medium
        )
    }

    // Requests.

    /// A new request (send or receive of `size` bytes): its id. Inlined: a
    /// few stores, run for every send and receive posted.
    #[inline(always)]
    pub(crate) fn new_req(&mut self, is_send: bool, size: u64) -> u32 {
        let r = Req { live: true, is_send, size };
        self.outstanding += 1;
        if let Some(i) = self.free_reqs.pop() {
            self.reqs[i as usize] = r;
            i
        } else {
            self.reqs.push(r);
            (self.reqs.len() - 1) as u32
        }
    }

    /// Request `req` completed (its id is free again). Inlined likewise:
    /// every message completes two requests.
    #[inline(always)]
    pub(crate) fn request_done(&mut self, req: u32) {
        let r = &mut self.reqs[req as usize];
        assert!(r.live, "request {req} completed twice");
        r.live = false;
        self.free_reqs.push(req);
        self.outstanding -= 1;
    }

    /// Whether request `req` is a send of `size` bytes still outstanding
    /// (a resent frame carries a request that completed).
    #[inline]
    pub(crate) fn send_pending(&self, req: u32, size: u64) -> bool {
        self.reqs.get(req as usize).is_some_and(|q| q.live && q.is_send && q.size == size)
    }

    /// A send was posted: like `omx_isend`'s progress call, the events now
    /// in the ring are consumed before the program's next operation.
    #[inline]
    pub(crate) fn drain_ring(&mut self) {
        self.drain = self.ring.len() as u32;
    }

    /// A message outside the sequence numbers (a shared-memory copy, a
    /// multicast) arrived: the posted receive it completes, or it is kept
    /// as unexpected.
    #[inline]
    pub(crate) fn match_unsequenced(&mut self, ev: LibEvent) -> Option<u32> {
        let r = self.posted.take(Some(ev.peer), ev.msg.tag);
        if r.is_none() {
            self.unexpected.push(Some(ev.peer), ev.msg.tag, Unexpected { ev });
        }
        r
    }

    // Sends waiting for resources.

    /// A send `s` to a remote peer was posted: it waits (true) if it is
    /// `large` and every region is in use, or if sends wait already (they
    /// keep their order).
    #[inline]
    pub(crate) fn queue_if_waiting(&mut self, s: Queued, large: bool) -> bool {
        if (large && self.regions.is_full()) || !self.need_region.is_empty() {
            self.need_region.push_back(s);
            return true;
        }
        false
    }

    /// The capacity of its queue of waiting sends (its peak, a bound metric).
    pub(crate) fn peak_sends_waiting(&self) -> usize {
        self.need_region.capacity()
    }

    /// Whether sends wait for a region (or behind one that does).
    #[inline]
    pub(crate) fn sends_waiting(&self) -> bool {
        !self.need_region.is_empty()
    }

    /// The first waiting send, taken if it can go now: a large one needs a
    /// free region, and any its peer's send window open for its frames
    /// (`thr`: rendezvous threshold).
    #[inline]
    pub(crate) fn next_waiting_send(&mut self, thr: u64, layout: wire::Layout) -> Option<Queued> {
        let s = *self.need_region.front()?;
        if wire::classify(s.size as usize, thr as usize) == MessageClass::Large && self.regions.is_full() {
            return None;
        }
        if self.proto.window_full(s.peer, World::frames_of(s.size, thr, layout)) {
            return None;
        }
        self.need_region.pop_front();
        Some(s)
    }

    /// An ack (`upto`) from `peer`: whether it released sent messages while
    /// sends or notifies wait (for a region or a window).
    #[inline]
    pub(crate) fn ack_opens_waiting(&mut self, peer: u16, upto: u16) -> bool {
        self.proto.process_ack(peer, upto) > 0 && !(self.need_region.is_empty() && self.need_window.is_empty())
    }

    /// Sends the notify of a completed pull of region `rdma` (`size` bytes)
    /// to `peer`: it takes a sequence number and is kept for resend.
    fn send_notify(&mut self, now: Instant, peer: u16, rdma: u32, size: u64) {
        let sent = self.proto.send(peer, now, rdma, size, 0, true, 1);
        self.outbox.push_back(Out::one_frame(peer, Kind::Notify, sent.seq, 0, size, rdma));
    }

    /// The notifies that waited for a send window go, in order, until one
    /// finds its peer's window still full.
    pub(crate) fn submit_waiting_notifies(&mut self, now: Instant) {
        while let Some(&(peer, rdma, size)) = self.need_window.front() {
            if self.proto.window_full(peer, 1) {
                break;
            }
            self.need_window.pop_front();
            self.send_notify(now, peer, rdma, size);
        }
    }

    // Pulls.

    /// Pull `handle` is set up: it starts (handed to the driver) if fewer
    /// than `max` pulls are under way, or waits for one to finish.
    #[inline]
    pub(crate) fn queue_pull(&mut self, handle: u32, max: u32) {
        if self.pulls_active < max {
            self.pulls_active += 1;
            self.outbox.push_back(Out::PullStart { handle });
        } else {
            self.pulls_waiting.push_back(handle);
        }
    }

    /// The pull of region `rdma` (`size` bytes) from `peer` finished: the
    /// sender is notified (once its send window has room, behind the
    /// notifies that wait for one), and the next waiting pull starts.
    pub(crate) fn pull_done(&mut self, now: Instant, peer: u16, rdma: u32, size: u64) {
        if self.need_window.is_empty() && !self.proto.window_full(peer, 1) {
            self.send_notify(now, peer, rdma, size);
        } else {
            self.need_window.push_back((peer, rdma, size));
        }
        self.pulls_active -= 1;
        if let Some(next) = self.pulls_waiting.pop_front() {
            self.pulls_active += 1;
            self.outbox.push_back(Out::PullStart { handle: next });
        }
    }

    // The protocol timer.

    /// Whether a protocol timer is armed.
    #[inline]
    pub(crate) fn timer_armed(&self) -> bool {
        self.timer_at.is_some()
    }

    /// Whether the protocol has nothing due at `now` that the armed timer
    /// does not cover: no deadline, or the earliest (`poll_at`) still ahead
    /// with the timer armed at or before it (an arm would change nothing).
    #[inline]
    pub(crate) fn timers_quiet(&self, now: Instant) -> bool {
        match self.proto.poll_at() {
            None => true,
            Some(first) => first > now && self.timer_at.is_some_and(|t| t <= first),
        }
    }

    /// Arms the protocol timer at `at` if earlier than the one armed; true
    /// if a `ProcTimer` event is to be queued at `at` (an event already
    /// queued at or before it stands in: it fires, finds the deadline
    /// later, and queues its event then, [`Proc::timer_fired`]).
    #[inline]
    pub(crate) fn arm_timer(&mut self, at: Instant) -> bool {
        if self.timer_at.is_none_or(|t| at < t) {
            self.timer_at = Some(at);
            if !self.timer_events.any_by(at) {
                self.timer_events.insert(at);
                return true;
            }
        }
        false
    }

    /// A `ProcTimer` event fired at `now` (`clock`: the NI clock is
    /// modelled, which notes a deadline a computing process misses).
    #[inline]
    pub(crate) fn timer_fired(&mut self, now: Instant, clock: bool) -> TimerFired {
        self.timer_events.fired(now);
        match self.timer_at {
            Some(t) if t <= now => {
                self.timer_at = None;
                if clock && self.computing() {
                    // Nothing wakes a computing process: its library runs
                    // the deadline when it next enters (`clock` reports when).
                    self.timer_missed.get_or_insert(t);
                }
                TimerFired::Due
            }
            Some(t) if !self.timer_events.any_by(t) => {
                self.timer_events.insert(t);
                TimerFired::Requeue(t)
            }
            _ => TimerFired::Stale,
        }
    }

    /// The deadline that passed while it computed, if any (taken).
    #[inline]
    pub(crate) fn take_missed_timer(&mut self) -> Option<Instant> {
        self.timer_missed.take()
    }
}

/// Processes of one host, as a set of their indices: a host has at most
/// 256 cores (topology validation) and a process per core at most, so four
/// words hold any host's. The lowest index comes out first, as a scan of
/// the host's processes in order would meet them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ProcSet([u64; 4]);

impl ProcSet {
    pub fn insert(&mut self, p: usize) {
        self.0[p / 64] |= 1 << (p % 64);
    }

    pub fn remove(&mut self, p: usize) {
        self.0[p / 64] &= !(1 << (p % 64));
    }

    /// The lowest index in the set.
    pub fn first(&self) -> Option<usize> {
        let w = self.0.iter().position(|&w| w != 0)?;
        Some(w * 64 + self.0[w].trailing_zeros() as usize)
    }
}

impl HostState {
    /// Process `p` spins on its event ring (or, busy polling, its queue).
    pub(crate) fn start_polling(&mut self, p: usize) {
        let pr = &mut self.procs[p];
        pr.state = PState::Polling;
        let q = self.steering.queue_for(Some(pr.ep), 0);
        self.pollers[q].insert(p);
    }

    /// Process `p`, polling, was notified: it is ready to run.
    pub(crate) fn stop_polling(&mut self, p: usize) {
        let pr = &mut self.procs[p];
        debug_assert_eq!(pr.state, PState::Polling);
        pr.state = PState::Ready;
        let q = self.steering.queue_for(Some(pr.ep), 0);
        self.pollers[q].remove(p);
    }

    /// The first process (lowest index) polling queue `q`, if any.
    pub(crate) fn poller_of(&self, q: usize) -> Option<usize> {
        let first = self.pollers[q].first();
        debug_assert_eq!(
            first,
            self.procs
                .iter()
                .position(|pr| pr.state == PState::Polling && self.steering.queue_for(Some(pr.ep), 0) == q),
            "the pollers of queue {q} are not the processes polling it"
        );
        first
    }
}

#[cfg(test)]
mod tests {
    use super::ProcSet;

    #[test]
    fn a_proc_set_gives_its_lowest_index_first() {
        let mut s = ProcSet::default();
        assert_eq!(s.first(), None);
        for p in [255, 130, 64, 63] {
            s.insert(p);
        }
        assert_eq!(s.first(), Some(63));
        s.remove(63);
        assert_eq!(s.first(), Some(64));
        s.remove(64);
        s.remove(64);
        assert_eq!(s.first(), Some(130));
        s.remove(130);
        assert_eq!(s.first(), Some(255));
        s.insert(0);
        assert_eq!(s.first(), Some(0));
        s.remove(0);
        s.remove(255);
        assert_eq!(s, ProcSet::default());
    }
}
