//! The state of a simulated process: its scheduling state, the action of
//! the segment it runs, its requests, unexpected and early messages, medium
//! messages being reassembled, what its library will hand to the driver, and
//! its protocol state (`crate::proto::Endpoint`).
//!
//! This module owns these types, and the host's record of which processes
//! poll which receive queue (`HostState::start_polling`, `stop_polling`,
//! `poller_of`, over its `pollers`); the indexed collections they hold
//! live in `indexes`, and the library that changes them in `lib_path`,
//! `lib_send` and `lib_recv`.

use super::indexes::{BySource, Early, MediumRxs, Regions, TimerEvents};
use super::{HostState, LibEvent};
use crate::host::Obj;
use crate::nic::RingEntry;
use crate::proto::{Endpoint, Kind};
use crate::time::{Duration, Instant};
use crate::workload::Program;
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
pub(crate) struct Req {
    pub live: bool,
    pub is_send: bool,
    pub size: u64,
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
    pub state: PState,
    pub ep: u8,
    /// The program returned `Done` (the library still answers the network).
    pub finished: bool,
    pub core: u16,
    /// MPI rank.
    pub rank: u16,
    /// Ring events to consume before the program's next operation: like
    /// `omx_isend`, which progresses after each send (`omx__progress` at the
    /// end of `omx_isend`, libopen-mx/omx_send.c), a send takes in the
    /// events already in the ring (acks, for a stream sender).
    pub drain: u32,
    pub outstanding: u32,
    /// Pulls started and not finished.
    pub pulls_active: u32,
    pub wait: Option<u32>,
    pub action: Action,
    /// An operation held back by the send window.
    pub pending_op: Option<crate::workload::Op>,
    /// The protocol deadline the process wants its timer event at.
    pub timer_at: Option<Instant>,
    /// Since when the process spins in `Polling` (CPU-use accounting).
    pub poll_since: Option<Instant>,
    pub program: Program,
    pub ring: VecDeque<LibEvent>,
    pub outbox: VecDeque<Out>,
    pub reqs: Vec<Req>,
    pub free_reqs: Vec<u32>,
    pub ring_obj: Obj,
    pub ep_obj: Obj,
    /// The process's other cache-model objects (library state, application
    /// buffers, receive queue slots), beside the two above: a message's
    /// handler and library step touch them together.
    pub lines: crate::host::ProcLines,
    /// Times of the process's `ProcTimer` events still queued (earliest
    /// first; a few are tracked, see `World::arm_timer`).
    pub timer_events: TimerEvents,
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
    pub need_region: VecDeque<Queued>,
    /// Notifies (peer, region id, size) waiting for the peer's send window
    /// (Open-MX queues a send to a throttled partner on its
    /// `throttling_sends` list and submits it when acks open the window,
    /// `omx__process_throttling_requests`, libopen-mx `omx_send.c`).
    pub need_window: VecDeque<(u16, u32, u64)>,
    /// Pulls waiting to start.
    pub pulls_waiting: VecDeque<u32>,
    pub marks: [Option<Instant>; 2],
    pub irq_at_mark: [u64; 2],
    pub irq_all_at_mark: [u64; 2],
    /// When the library last ran before the computation under way (the
    /// "last polled the clock" word the NI clock reads, `clock`).
    pub lib_at: Instant,
    /// The protocol deadline the OS timer found the process computing at
    /// (only with an NI clock: `clock` reports how late it ran).
    pub timer_missed: Option<Instant>,
    /// Multicast messages of more than one frame being received, at most
    /// one per root (a root's fragments come down its tree in order),
    /// their `seq` a local id (`mcast_ids`) that their unexpected entry
    /// carries too (`sim::mcast`).
    pub mcast_rx: MediumRxs,
    /// Ids given to multicast messages of more than one frame so far.
    pub mcast_ids: u32,
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
