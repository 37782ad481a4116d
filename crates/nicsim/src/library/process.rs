//! The state of a simulated process: its scheduling state, the action of
//! the segment it runs, its requests, unexpected and early messages, medium
//! messages being reassembled, what its library will hand to the driver, and
//! its protocol state (`crate::proto::Endpoint`).
//!
//! This module owns these types and the methods the
//! kernel, the handler, the NI clock and the metrics call on a process;
//! the indexed collections a process holds live in `indexes`, and the
//! library's steps in `step`, `send` and `recv`.

pub(crate) use super::event::{LibEvent, Writer, EVENT_RING_SLOTS};
use super::indexes::{BySource, Early, MediumRxs, Regions, TimerEvents};
use super::{Cx, Output};
use crate::host::{Obj, ObjClass, Owner, ProcLines};
use crate::nic::RingEntry;
use crate::proto::{Endpoint, Kind};
use crate::time::{Duration, Instant};
use crate::workload::{Cursor, Op, Program};
use std::collections::VecDeque;

/// What a process does when it gets the CPU ([`Proc::step`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Step {
    /// A segment of this cost, then this action ([`Proc::segment_done`]).
    Run(Duration, Action),
    /// Nothing to run: it is done, or asleep.
    Idle,
    /// It waits by polling: busy polling runs the NIC queue's receive path
    /// if it can, else it spins on its ring (`Proc::start_polling`, since
    /// now).
    Wait,
    /// It spins on its ring until what it waits for comes (its spin not
    /// counted as waiting: the program's end flushing its acks).
    Spin,
}

/// What a notified process needs ([`Proc::notice`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Notice {
    /// Nothing: it runs, or will look at its ring anyway.
    None,
    /// It was polling (since the instant, if counted): it stops, and its
    /// core dispatches.
    Poller(Option<Instant>),
    /// It was asleep or done: its core dispatches it.
    Woken,
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
    /// Busy polling: the end of `busy_poll_stop`'s extra driver poll (its
    /// re-arm of the interrupt), in the application's context.
    BusyPollStop,
    /// Apply this many FRAG_DONE events of the expected-event queue
    /// (`exp.rs`).
    ExpEvents(u32),
    /// Apply a send of the ob1 layer (`ob1.rs`).
    Ob1(super::ob1_ops::Ob1Op),
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
    /// `blocks`: the blocks its first requests ask for (the driver's
    /// window of them, `Proc::pull_opened`), and `pages`: the 4 KiB pages
    /// of the region it pins first; both price the start.
    PullStart { handle: u32, blocks: u32, pages: u32 },
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
pub(crate) struct Req {
    pub live: bool,
    pub is_send: bool,
    pub size: u64,
    /// A send of ob1's own (a RNDV, PUT or FIN header, `ob1.rs`): no
    /// program waits for it, so its completion is not reported.
    pub ob1: bool,
    /// The peer and sequence number of the message a send put on the wire
    /// (`submit_send`): a resent frame, which carries the request id it
    /// was first sent with, completes nothing once the id is reused.
    pub peer: u16,
    pub seq: u32,
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
    pub(super) state: PState,
    pub(super) ep: u8,
    pub(super) core: u16,
    /// MPI rank.
    pub(super) rank: u16,
    /// Ring events to consume before the program's next operation: like
    /// `omx_isend`, which progresses after each send (`omx__progress` at the
    /// end of `omx_isend`, libopen-mx/omx_send.c), a send takes in the
    /// events already in the ring (acks, for a stream sender).
    pub(super) drain: u32,
    pub(super) outstanding: u32,
    /// Pulls started and not finished.
    pub(super) pulls_active: u32,
    pub(super) action: Action,
    /// The protocol deadline the process wants its timer event at.
    pub(super) timer_at: Option<Instant>,
    /// Since when the process spins in `Polling` (CPU-use accounting).
    pub(super) poll_since: Option<Instant>,
    /// Its program and its place in it (the operation held back by the
    /// send window or the program's end, the wait, the marks, whether it
    /// returned `Done`: the library still answers the network after).
    pub(super) cursor: Cursor,
    pub(super) ring: VecDeque<LibEvent>,
    pub(super) outbox: VecDeque<Out>,
    pub(super) reqs: Vec<Req>,
    pub(super) free_reqs: Vec<u32>,
    pub(super) ring_obj: Obj,
    pub(super) ep_obj: Obj,
    /// The expected-event queue's FRAG_DONE events and slots, and what the
    /// core freeing its skbs shares with it (`exp.rs`).
    pub(super) exp: ExpEvents,
    /// The process's other cache-model objects (library state, application
    /// buffers, receive queue slots), beside the two above: a message's
    /// handler and library step touch them together.
    pub(super) lines: crate::host::ProcLines,
    /// Times of the process's `ProcTimer` events still queued (earliest
    /// first; a few are tracked, see `World::arm_timer`).
    pub(super) timer_events: TimerEvents,
    /// Early (out-of-order) events.
    pub(super) early: Early,
    /// Receives posted and not matched yet (request ids).
    pub(super) posted: BySource<u32>,
    /// The protocol towards every rank (sequence numbers, acks, resends).
    pub(super) proto: Endpoint,
    /// Messages that found no posted receive.
    pub(super) unexpected: BySource<Unexpected>,
    /// Medium messages being received, at most one per peer (a peer's
    /// messages are consumed in sequence order).
    pub(super) medium: MediumRxs,
    /// Sender regions of large sends: rdma id -> request.
    pub(super) regions: Regions,
    /// Sends posted while every region was in use, and the sends posted
    /// behind them (Open-MX's `need_resources_send_req_q`: a large send
    /// that finds no region is queued, and later sends queue behind it,
    /// libopen-mx `omx_send.c`, `omx_large.c`).
    pub(super) need_region: VecDeque<Queued>,
    /// Notifies (peer, region id, size) waiting for the peer's send window
    /// (Open-MX queues a send to a throttled partner on its
    /// `throttling_sends` list and submits it when acks open the window,
    /// `omx__process_throttling_requests`, libopen-mx `omx_send.c`).
    pub(super) need_window: VecDeque<(u16, u32, u64)>,
    /// Pulls waiting to start (handle, blocks of its first requests).
    pub(super) pulls_waiting: VecDeque<(u32, u32, u32)>,
    pub(super) irq_at_mark: [u64; 2],
    pub(super) irq_all_at_mark: [u64; 2],
    /// When the library last ran before the computation under way (the
    /// "last polled the clock" word the NI clock reads, `clock`).
    pub(super) lib_at: Instant,
    /// The protocol deadline the OS timer found the process computing at
    /// (only with an NI clock: `clock` reports how late it ran).
    pub(super) timer_missed: Option<Instant>,
    /// Since when an NI clock interrupt's signal is pending for it: Linux
    /// keeps it in the task (`send_signal`, `kernel/signal.c`) until the
    /// return to user mode delivers it (`do_notify_resume` -> `do_signal`,
    /// `arch/x86/kernel/signal_64.c`), after the kernel work under way on
    /// its core; more interrupts meanwhile merge into it.
    pub(super) signal_sent: Option<Instant>,
    /// Multicast messages of more than one frame being received, at most
    /// one per root (a root's fragments come down its tree in order),
    /// their `seq` a local id (`mcast_ids`) that their unexpected entry
    /// carries too (`sim::mcast`).
    pub(super) mcast_rx: MediumRxs,
    /// Ids given to multicast messages of more than one frame so far.
    pub(super) mcast_ids: u32,
    /// Sends of the ob1 layer to make before the program's next operation
    /// (`library.mpi_path = "btl"`, `ob1.rs`).
    pub(super) ob1_ops: VecDeque<super::ob1_ops::Ob1Op>,
    /// The rendezvous stage of each request (by id; empty on the MTL path).
    pub(super) ob1_stage: Vec<super::ob1_ops::Stage>,
}

/// The high-water marks of a process's queues (`Proc::peaks`), each its
/// allocation's capacity.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Peaks {
    pub ring: usize,
    pub outbox: usize,
    pub unexpected: usize,
    pub early: usize,
    pub need_region: usize,
}

impl Proc {
    /// The process of rank `rank` on `core`, endpoint `ep`, running
    /// `program`, its protocol `proto`.
    pub(crate) fn new(rank: u16, core: u16, ep: u8, program: Program, proto: Endpoint) -> Self {
        Proc {
            rank,
            core,
            ep,
            state: PState::Ready,
            action: Action::None,
            cursor: Cursor::new(program),
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
            exp: Default::default(),
            lines: Default::default(),
            timer_at: None,
            timer_events: Default::default(),
            poll_since: None,
            irq_at_mark: [0; 2],
            irq_all_at_mark: [0; 2],
            lib_at: Instant::ZERO,
            timer_missed: None,
            signal_sent: None,
            mcast_rx: MediumRxs::default(),
            mcast_ids: 0,
            ob1_ops: VecDeque::new(),
            ob1_stage: Vec::new(),
        }
    }

    /// Replaces the protocol state (the build's, once the ranks are known).
    pub(crate) fn set_protocol(&mut self, proto: Endpoint) {
        self.proto = proto;
    }

    pub(crate) fn state(&self) -> PState {
        self.state
    }

    pub(crate) fn core(&self) -> u16 {
        self.core
    }

    pub(crate) fn ep(&self) -> u8 {
        self.ep
    }

    pub(crate) fn rank(&self) -> u16 {
        self.rank
    }

    /// The action of the segment under way (or last run).
    pub(crate) fn action(&self) -> Action {
        self.action
    }

    /// The program returned `Done`.
    pub(crate) fn finished(&self) -> bool {
        self.cursor.finished()
    }

    /// Its segment was interrupted with `remaining` left.
    pub(crate) fn preempt(&mut self, remaining: Duration) {
        self.state = PState::Preempted(remaining);
    }

    /// Its interrupted segment goes on.
    pub(crate) fn resume(&mut self) {
        self.state = PState::Running;
    }

    /// It runs a segment that ends with `action` (a busy poll's entry: the
    /// library's own segments begin as `step` prices them).
    pub(crate) fn begin(&mut self, action: Action) {
        self.state = PState::Running;
        self.action = action;
    }

    /// It spins on its ring (since `since`, if its spin counts).
    pub(crate) fn start_polling(&mut self, since: Option<Instant>) {
        self.state = PState::Polling;
        if since.is_some() {
            self.poll_since = since;
        }
    }

    /// It has something to do (an event in its ring, a timer): a poller
    /// stops polling and a sleeper wakes, both to be dispatched.
    pub(crate) fn notice(&mut self) -> Notice {
        match self.state {
            PState::Polling => {
                let since = self.poll_since.take();
                self.state = PState::Ready;
                Notice::Poller(since)
            }
            PState::Blocked => {
                self.state = PState::Waking;
                Notice::Woken
            }
            PState::Done => {
                self.state = PState::Ready;
                Notice::Woken
            }
            _ => Notice::None,
        }
    }

    /// Request `req` completed (`Output::Completed`). Inlined: every
    /// message completes two requests.
    #[inline(always)]
    pub(super) fn complete(&mut self, cx: &mut Cx<'_>, req: u32) {
        // On ob1's rendezvous a request's MX messages complete it in
        // stages (`ob1.rs`).
        match self.stage(req) {
            super::ob1_ops::Stage::None => self.finish(cx, req),
            s => self.ob1_advance(cx, req, s),
        }
    }

    /// Request `req` is complete for the program.
    #[inline(always)]
    pub(super) fn finish(&mut self, cx: &mut Cx<'_>, req: u32) {
        let r = &mut self.reqs[req as usize];
        assert!(r.live, "request {req} completed twice");
        r.live = false;
        let ob1 = r.ob1;
        self.free_reqs.push(req);
        self.outstanding -= 1;
        if !ob1 {
            cx.emit(Output::Completed);
        }
    }

    /// Its event ring holds as many events as it has slots.
    pub(crate) fn ring_full(&self) -> bool {
        self.ring.len() >= EVENT_RING_SLOTS
    }

    /// The handler (or an intra-host copy) writes `ev` into its ring: whether
    /// the process was asleep in the wait ioctl ([`PState::Blocked`]), and
    /// what it does about the event ([`Proc::notice`]).
    #[inline(always)]
    pub(crate) fn post(&mut self, ev: LibEvent) -> (bool, Notice) {
        self.ring.push_back(ev);
        let blocked = self.state == PState::Blocked;
        (blocked, self.notice())
    }

    /// The NIC itself writes its ring (native MX): the ring is in memory.
    pub(crate) fn nic_writes_ring(&mut self) {
        self.ring_obj.owner = Owner::MEMORY;
    }

    /// What it shares with the driver: its endpoint, its event ring and its
    /// other objects (receive-queue slots, application buffers), which the
    /// handler touches.
    pub(crate) fn shared(&mut self) -> (&mut Obj, &mut Obj, &mut ProcLines) {
        (&mut self.ep_obj, &mut self.ring_obj, &mut self.lines)
    }

    /// It is outside its library: computing (running or preempted in a
    /// compute segment). Any other state is in the library (a segment of
    /// it, spinning on its ring) or asleep in the kernel, where the OS timer
    /// wakes it at its deadline.
    pub(crate) fn computing(&self) -> bool {
        matches!(self.state, PState::Running | PState::Preempted(_)) && matches!(self.action, Action::None)
    }

    /// A protocol deadline is pending ("a timer running", for the NI clock).
    pub(crate) fn timers_running(&self) -> bool {
        self.proto.timers_running()
    }

    /// When its library last ran before the computation under way.
    pub(crate) fn lib_at(&self) -> Instant {
        self.lib_at
    }

    /// A clock signal broke into its computation: the rest of the
    /// computation becomes its next operation and it is ready to run its
    /// library. False (nothing done) if it is not computing, preempted.
    pub(crate) fn signal(&mut self) -> bool {
        let PState::Preempted(rem) = self.state else { return false };
        if !self.computing() {
            return false;
        }
        debug_assert!(!self.cursor.holds(), "a computing process holds no operation back");
        self.cursor.hold(Op::Compute(rem));
        self.state = PState::Ready;
        true
    }

    /// An NI clock interrupt sent it a signal at `now` (one pending since
    /// earlier stays).
    pub(crate) fn signal_sent(&mut self, now: Instant) {
        self.signal_sent.get_or_insert(now);
    }

    /// Its pending signal's delivery begins: since when it was pending.
    pub(crate) fn take_signal_sent(&mut self) -> Option<Instant> {
        self.signal_sent.take()
    }

    /// The protocol deadline its timer found it computing at, once.
    pub(crate) fn take_timer_missed(&mut self) -> Option<Instant> {
        self.timer_missed.take()
    }

    /// When the program passed mark `i`.
    pub(crate) fn mark(&self, i: usize) -> Option<Instant> {
        self.cursor.mark(i)
    }

    /// Interrupts raised on its host and on every host when it passed mark
    /// `i` (the world's counters, `Output::Mark`).
    pub(crate) fn set_mark_irqs(&mut self, i: usize, own: u64, all: u64) {
        self.irq_at_mark[i] = own;
        self.irq_all_at_mark[i] = all;
    }

    /// Interrupts raised on its host between its marks.
    pub(crate) fn irqs_between_marks(&self) -> u64 {
        self.irq_at_mark[1] - self.irq_at_mark[0]
    }

    /// Interrupts raised on every host between its marks.
    pub(crate) fn irqs_all_between_marks(&self) -> u64 {
        self.irq_all_at_mark[1] - self.irq_all_at_mark[0]
    }

    /// Messages it sent beyond a full send window (an invariant: none).
    pub(crate) fn window_overruns(&self) -> u64 {
        self.proto.window_overruns
    }

    /// Messages it resent.
    pub(crate) fn resent(&self) -> u64 {
        self.proto.resent
    }

    pub(crate) fn peaks(&self) -> Peaks {
        Peaks {
            ring: self.ring.capacity(),
            outbox: self.outbox.capacity(),
            unexpected: self.unexpected.peak_capacity(),
            early: self.early.peak_capacity(),
            need_region: self.need_region.capacity(),
        }
    }

    /// Where an unfinished process stands (for a run that cannot go on).
    pub(crate) fn describe(&self) -> String {
        format!(
            "{:?}, {} outstanding, waiting for <= {:?}, {} unexpected, {} early, medium {:?}",
            self.state,
            self.outstanding,
            self.cursor.wait(),
            self.unexpected.len(),
            self.early.len(),
            self.medium
        )
    }

    /// Its protocol state, posted receives and objects (tests).
    #[cfg(test)]
    pub(crate) fn parts(&self) -> (&Endpoint, &BySource<u32>, &ProcLines) {
        (&self.proto, &self.posted, &self.lines)
    }

    /// Everything done: program finished, no request outstanding, no
    /// message unexpected or being reassembled (tests).
    #[cfg(test)]
    pub(crate) fn all_done(&self) -> bool {
        self.cursor.finished()
            && self.outstanding == 0
            && self.unexpected.len() == 0
            && self.mcast_rx.is_empty()
            && self.medium.is_empty()
    }
}

/// Expected events an endpoint's queue holds. [fact: `OMX_EXP_EVENTQ_ENTRY_NR`
/// = 1024, Open-MX 1.0.901 `common/omx_io.h`; the library's
/// `ep->avail_exp_events` starts at it, `libopen-mx/omx_endpoint.c`]
pub(crate) const EXP_EVENT_SLOTS: u32 = 1024;

/// A process's expected-event queue and the kernel objects its medium
/// sends and pulled regions share with the core that frees their skbs.
#[derive(Clone, Debug)]
pub(crate) struct ExpEvents {
    /// FRAG_DONE events posted and not yet consumed.
    pub(super) pending: u32,
    /// Slots held: fragments submitted (or resent) whose event is not yet
    /// consumed.
    pub(super) held: u32,
    /// FRAG_DONE events consumed.
    pub(super) consumed: u64,
    /// The queue's slots: written by the softirq, read and released by the
    /// library.
    pub(crate) ring: Obj,
    /// What a medium fragment's send writes and its destructor writes again
    /// (`cache.frag_dtor_lines`): the deferred event, the send-queue page's
    /// `struct page`, the endpoint's refcount.
    pub(crate) dtor: Obj,
    /// A pulled region's refcount line (`struct omx_user_region`'s `kref`):
    /// `kref_get` per reply by the core that builds it, `kref_put` by the
    /// one that frees it.
    pub(crate) region: Obj,
}

impl Default for ExpEvents {
    fn default() -> Self {
        ExpEvents {
            pending: 0,
            held: 0,
            consumed: 0,
            ring: Obj::new(ObjClass::EventRing),
            dtor: Obj::new(ObjClass::TxRing),
            region: Obj::new(ObjClass::TxRing),
        }
    }
}
