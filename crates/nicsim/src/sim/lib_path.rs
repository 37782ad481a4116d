//! The user-space library (Open-MX-like) of each process: what it does next
//! when it has the CPU (`lib_step`, which prices a segment) and what that
//! segment changes when it completes (`lib_apply`).
//!
//! Priorities, as in `omx_progress`: hand queued frames to the driver, then
//! consume ring events, then protocol timers, then the application's next
//! operation. Waiting polls the ring or blocks in the kernel.

use super::{Action, LKind, LibEvent, MediumRx, MediumTarget, Out, PState, Req, Unexpected, World};
use crate::config::WaitMode;
use crate::host::{Obj, ObjClass, Owner, Side};
use crate::proto::{Arrival, Peer, PullHandle, SentMsg};
use crate::time::{Duration, Instant};
use crate::wire::{self, FrameRepr, MessageClass, OmxBody, PacketKind};
use crate::workload::{Label, Op};
use std::collections::VecDeque;

/// Large receives pulled at once per process; later ones wait their turn so
/// that the pull replies in flight (4 blocks of 32 each) fit the receive
/// ring. [estimate: Open-MX serves pulls from a bounded set of handles]
const MAX_ACTIVE_PULLS: u32 = 1;

/// Rebuilds a 32-bit sequence number from its 16 low bits on the wire,
/// choosing the value closest to `near`.
/// Removes and returns the first element of `dq` that satisfies `pred`.
/// The front is tried first: it is the usual match (receives are posted,
/// and messages arrive, in order), and it spares setting up an iterator.
fn take_first<T>(dq: &mut VecDeque<T>, mut pred: impl FnMut(&T) -> bool) -> Option<T> {
    if pred(dq.front()?) {
        return dq.pop_front();
    }
    let i = dq.iter().position(pred)?;
    dq.remove(i)
}

fn widen(near: u32, low: u16) -> u32 {
    let base = near & !0xFFFF;
    let mut v = base | low as u32;
    if v > near.saturating_add(0x8000) && v >= 0x10000 {
        v -= 0x10000;
    } else if v.saturating_add(0x8000) < near {
        v += 0x10000;
    }
    v
}

impl World {
    fn class(&self, size: u64) -> MessageClass {
        wire::classify(size as usize, self.c.rndv_threshold as usize)
    }

    /// Prices the next segment of process `p`; `None` if it has nothing to
    /// run (it then polls, sleeps, or is done).
    /// `core` is the process's core (`Proc::core`), which the caller has.
    pub(crate) fn lib_step(&mut self, now: Instant, h: usize, p: usize, core: usize) -> Option<(Duration, Action)> {
        debug_assert_eq!(core, self.hosts[h].procs[p].core as usize);
        let die = self.topo.die_of(core as u16);
        // Operations that take no time (a zero compute, a mark, a wait that
        // is already satisfied) loop back here without touching the peers:
        // the timers checked once at `now` need no second look.
        let mut timers_checked = false;
        loop {
            let hs = &mut self.hosts[h];
            let pr = &mut hs.procs[p];
            if let Some(out) = pr.outbox.front().copied() {
                let c = &self.c;
                if let Out::Msg { kind: LKind::Shm, size, .. } = out {
                    // Intra-host: the driver copies the message into the
                    // peer's memory (one copy, from this core's cache).
                    return Some((
                        c.syscall + self.cc.copy(&mut hs.cache, Owner::Memory, die, Side::Kernel, size),
                        Action::Send,
                    ));
                }
                if c.native {
                    // OS-bypass send: descriptor (and small data) written to
                    // the NIC by PIO, then the doorbell; no system call.
                    let cost = match out {
                        Out::Msg { kind: LKind::Tiny | LKind::Small, size, .. } => c.doorbell + self.cc.copy_hot(size),
                        Out::PullStart { .. } => c.pull_setup + c.doorbell,
                        _ => c.doorbell,
                    };
                    return Some((cost, Action::Send));
                }
                let per_frame = c.driver_tx + c.doorbell;
                let tx = self.tx_touch(now, h, core, c.syscall + per_frame);
                let c = &self.c;
                let cost = match out {
                    Out::Msg { kind, size, frag, .. } => {
                        let bytes = match kind {
                            LKind::Tiny | LKind::Small => size,
                            LKind::MediumFrag => {
                                let per = wire::medium_frag_payload(c.mtu) as u64;
                                (size - frag as u64 * per).min(per)
                            }
                            _ => 0,
                        };
                        c.syscall + per_frame + tx + self.cc.copy_hot(bytes)
                    }
                    Out::Ack { .. } => c.syscall + per_frame + tx,
                    Out::PullStart { handle } => {
                        let blocks = self.handles[handle as usize].blocks.min(wire::PULL_BLOCKS_OUTSTANDING as u32);
                        c.syscall + c.pull_setup + per_frame.times(blocks as u64) + tx
                    }
                };
                return Some((cost, Action::Send));
            }
            // Like MPI_Wait, the progress loop returns as soon as what the
            // program waits for is complete: the program's next operation
            // goes before events still queued (a receiver that keeps pace
            // only by consuming would otherwise never post its receives).
            let program_ready = !pr.finished && pr.pending_op.is_none() && pr.wait.is_none_or(|n| pr.outstanding <= n);
            if let (false, Some(ev)) = (program_ready && pr.drain == 0, pr.ring.front().copied()) {
                pr.drain = pr.drain.saturating_sub(1);
                let c = &self.c;
                let mut cost = c.event
                    + self.cc.access(&self.topo, &mut hs.cache, &mut pr.ring_obj, die, Side::User, c.event_lines)
                    + self.cc.access(&self.topo, &mut hs.cache, &mut pr.ep_obj, die, Side::User, c.endpoint_lines);
                let src = if ev.writer_die == super::WRITER_MEMORY { Owner::Memory } else { Owner::Die(ev.writer_die) };
                match ev.kind {
                    LKind::Tiny | LKind::Small => {
                        cost += c.mpi_recv + self.cc.copy(&mut hs.cache, src, die, Side::User, ev.size);
                    }
                    LKind::MediumFrag => {
                        cost += self.cc.copy(&mut hs.cache, src, die, Side::User, ev.frag_len as u64);
                        let last = wire::medium_frag_count(ev.size as usize, c.mtu) as u32;
                        if ev.frag_seq as u32 + 1 == last {
                            cost += c.mpi_recv;
                        }
                    }
                    LKind::PullDone | LKind::Shm => cost += c.mpi_recv,
                    LKind::Rndv | LKind::Notify | LKind::Ack => {}
                }
                return Some((cost, Action::Consume));
            }
            // The process is looked up again only if the timers ran.
            let pr = if timers_checked {
                pr
            } else {
                if self.protocol_timers(now, h, p) {
                    continue;
                }
                timers_checked = true;
                &mut self.hosts[h].procs[p]
            };
            let c = &self.c;
            if pr.finished {
                // The library outlives the program: it keeps answering
                // (acks, resends) until the whole run ends.
                pr.state = PState::Done;
                return None;
            }
            if let Some(n) = pr.wait {
                if pr.outstanding <= n {
                    pr.wait = None;
                } else {
                    return match c.wait {
                        WaitMode::Poll => self.wait_polling(now, h, p),
                        WaitMode::Block => Some((c.block, Action::Block)),
                    };
                }
            }
            let op = pr.pending_op.take().unwrap_or_else(|| pr.program.next_op());
            match op {
                Op::Send { peer, size, .. }
                    if pr.peers[peer as usize].unacked_frames > 0
                        && pr.peers[peer as usize].unacked_frames + Self::frames_of(size, c.rndv_threshold, c.mtu)
                            > c.send_window_frames =>
                {
                    // The send window is full: wait for acks.
                    pr.pending_op = Some(op);
                    return match c.wait {
                        WaitMode::Poll => self.wait_polling(now, h, p),
                        WaitMode::Block => Some((c.block, Action::Block)),
                    };
                }
                Op::Send { peer, .. } if self.ranks[peer as usize].0 as usize == h => {
                    // Shared-memory path: the copy is priced when it is made.
                    return Some((c.mpi_send + c.send, Action::Op(op)));
                }
                Op::Send { size, .. } => {
                    let mut cost = c.mpi_send + c.send;
                    match self.class(size) {
                        MessageClass::Medium => cost += self.cc.copy_hot(size),
                        MessageClass::Large => cost += c.pull_setup,
                        MessageClass::Tiny | MessageClass::Small if c.native => {
                            cost += c.doorbell + self.cc.copy_hot(size)
                        }
                        class @ (MessageClass::Tiny | MessageClass::Small) => {
                            // One frame: its send system call follows in the
                            // same segment (see `lib_op`).
                            let hold = c.syscall + c.driver_tx + c.doorbell;
                            if class == MessageClass::Small {
                                cost += c.small_send;
                            }
                            let tx = self.tx_touch(now, h, core, hold);
                            cost += hold + tx + self.cc.copy_hot(size);
                        }
                    }
                    return Some((cost, Action::Op(op)));
                }
                Op::Recv { .. } => return Some((c.post_recv, Action::Op(op))),
                Op::WaitOutstanding(n) => pr.wait = Some(n),
                Op::Compute(d) => {
                    if !d.is_zero() {
                        return Some((d, Action::None));
                    }
                }
                Op::Mark(l) => {
                    let i = l as usize;
                    pr.marks[i] = Some(now);
                    for (hb, hs) in self.busy_at_mark[i].iter_mut().zip(&self.hosts) {
                        *hb = hs.kernel_time + hs.app_time + hs.spin_time;
                    }
                    // Interrupts raised so far on this host, and on every host.
                    let all: u64 = self.hosts.iter().map(|hs| hs.irq_raised).sum();
                    let own = self.hosts[h].irq_raised;
                    self.hosts[h].procs[p].irq_at_mark[i] = own;
                    self.hosts[h].procs[p].irq_all_at_mark[i] = all;
                    let _ = Label::Start;
                }
                Op::Count => {}
                Op::Done => {
                    // Finalize: flush pending acks, then wait until every
                    // message sent was acknowledged (resends go on meanwhile).
                    let mut flushed = false;
                    for (i, ps) in pr.peers.iter_mut().enumerate() {
                        if ps.unacked_recv > 0 {
                            ps.ack_sent();
                            pr.outbox.push_back(Out::Ack { peer: i as u16 });
                            flushed = true;
                        }
                    }
                    if flushed || pr.peers.iter().any(|ps| !ps.unacked_sends.is_empty()) {
                        pr.pending_op = Some(op);
                        if !flushed {
                            pr.state = PState::Polling;
                            return None;
                        }
                        timers_checked = false; // acks flushed: peer state changed
                        continue;
                    }
                    pr.finished = true;
                    pr.state = PState::Done;
                    self.programs_left -= 1;
                    return None;
                }
            }
        }
    }

    /// The process waits by polling: with busy polling it runs the NIC
    /// queue's receive path itself (and holds the interrupt suspended with
    /// irq_suspend_timeout); otherwise it spins on its event ring.
    fn wait_polling(&mut self, now: Instant, h: usize, p: usize) -> Option<(Duration, Action)> {
        if self.c.busy_poll {
            let core = self.hosts[h].procs[p].core as usize;
            let suspend = !self.c.irq_suspend.is_zero();
            let q = self.hosts[h].steering.queue_for(Some(self.hosts[h].procs[p].ep), 0);
            let qu = &mut self.hosts[h].nic.queues[q];
            if suspend && !qu.napi_sched {
                qu.irq_enabled = false;
                qu.suspended = true;
                qu.suspend_until = None;
            }
            if !qu.napi_sched {
                if let Some(entry) = qu.take() {
                    let cost = self.c.napi_poll + self.entry_cost(now, h, core, entry);
                    self.hosts[h].kernel_time += cost;
                    return Some((cost, Action::BusyPoll(entry)));
                }
            }
        }
        let pr = &mut self.hosts[h].procs[p];
        pr.state = PState::Polling;
        pr.poll_since = Some(now);
        None
    }

    /// Queues explicit acks and resends that are due; true if it queued any.
    fn protocol_timers(&mut self, now: Instant, h: usize, p: usize) -> bool {
        let c = &self.c;
        let (delayed, resend) = (c.delayed_ack, c.resend);
        let mut queued = false;
        let mut next: Option<Instant> = None;
        let pr = &mut self.hosts[h].procs[p];
        for (peer, ps) in pr.peers.iter_mut().enumerate() {
            if ps.unacked_recv > 0 {
                match ps.ack_deadline {
                    Some(t) if t <= now => {
                        pr.outbox.push_back(Out::Ack { peer: peer as u16 });
                        ps.ack_deadline = None;
                        queued = true;
                    }
                    Some(t) => next = Some(next.map_or(t, |n: Instant| n.min(t))),
                    None => {
                        let t = now + delayed;
                        ps.ack_deadline = Some(t);
                        next = Some(next.map_or(t, |n: Instant| n.min(t)));
                    }
                }
            }
            // Fast path: the oldest unacknowledged message is not due (the
            // resend loop would stop at it).
            let Some(m) = ps.unacked_sends.front() else { continue };
            let due = m.sent_at + resend;
            let t = if due > now {
                due
            } else {
                queued = true;
                Self::resend_due(&mut pr.outbox, ps, peer as u16, now, resend, (c.rndv_threshold, c.mtu, c.misorder))
            };
            next = Some(next.map_or(t, |n: Instant| n.min(t)));
        }
        if let Some(t) = next {
            Self::arm_timer(pr, &mut self.q, h, p, t);
        }
        queued
    }

    /// Queues the resends of `peer`'s messages that are due (at least the
    /// oldest one is: lost frames or acks, rare) and returns when the
    /// timer must look again.
    #[cold]
    #[inline(never)]
    fn resend_due(
        outbox: &mut VecDeque<Out>,
        ps: &mut Peer,
        peer: u16,
        now: Instant,
        resend: Duration,
        (thr, mtu, misorder): (u64, usize, u8),
    ) -> Instant {
        // The resent ones are due again one period from now.
        let mut next = now + resend;
        for m in ps.unacked_sends.iter_mut() {
            let due = m.sent_at + resend;
            if due > now {
                next = next.min(due);
                break;
            }
            m.sent_at = now;
            Self::queue_message(outbox, thr, mtu, misorder, peer, *m);
        }
        next
    }

    /// Frames a message of `size` bytes puts on the wire (pull replies aside).
    fn frames_of(size: u64, thr: u64, mtu: usize) -> u32 {
        match wire::classify(size as usize, thr as usize) {
            MessageClass::Medium => wire::medium_frag_count(size as usize, mtu) as u32,
            _ => 1,
        }
    }

    /// Queues the frames of message `m` (first send or resend).
    /// Inlined in `lib_op` (every send; the resend copy is cold).
    #[inline(always)]
    fn queue_message(
        outbox: &mut std::collections::VecDeque<Out>,
        thr: u64,
        mtu: usize,
        misorder: u8,
        peer: u16,
        m: SentMsg,
    ) {
        let (kind, frags) = if m.is_notify {
            (LKind::Notify, 1)
        } else {
            match wire::classify(m.size as usize, thr as usize) {
                MessageClass::Tiny => (LKind::Tiny, 1),
                MessageClass::Small => (LKind::Small, 1),
                MessageClass::Medium => (LKind::MediumFrag, wire::medium_frag_count(m.size as usize, mtu) as u8),
                MessageClass::Large => (LKind::Rndv, 1),
            }
        };
        // Injected mis-ordering (SPEC 3): the last (marked) fragment of a
        // medium message goes out `misorder` places early.
        let d = if kind == LKind::MediumFrag { misorder.min(frags - 1) } else { 0 };
        for i in 0..frags {
            let frag = if d == 0 || i < frags - 1 - d {
                i
            } else if i == frags - 1 - d {
                frags - 1
            } else {
                i - 1
            };
            outbox.push_back(Out::Msg {
                peer,
                kind,
                seq: m.seq,
                tag: m.tag,
                size: m.size,
                frag,
                frags,
                tail: i + 1 == frags,
                rdma: m.req,
            });
        }
    }

    /// Applies a completed segment.
    pub(crate) fn lib_apply(&mut self, now: Instant, h: usize, p: usize, action: Action) {
        match action {
            Action::None => {}
            Action::Send => self.lib_send(now, h, p),
            Action::Consume => {
                if let Some(ev) = self.hosts[h].procs[p].ring.pop_front() {
                    self.lib_consume(now, h, p, ev);
                }
            }
            Action::Op(op) => self.lib_op(now, h, p, op),
            Action::BusyPoll(entry) => {
                if let crate::nic::RingEntry::Rx(frame) = entry {
                    let core = self.hosts[h].procs[p].core as usize;
                    self.handle_frame(now, h, core, frame);
                }
            }
            Action::Block => {
                let pr = &mut self.hosts[h].procs[p];
                let nothing = pr.ring.is_empty() && pr.outbox.is_empty();
                if nothing && (pr.wait.is_some_and(|n| pr.outstanding > n) || pr.pending_op.is_some()) {
                    pr.state = PState::Blocked;
                }
            }
        }
    }

    /// Inlined: a few stores, run for every send and receive posted.
    #[inline(always)]
    fn new_req(&mut self, h: usize, p: usize, is_send: bool, src: Option<u16>, size: u64, tag: u64) -> u32 {
        let pr = &mut self.hosts[h].procs[p];
        let r = Req { live: true, is_send, src, size, tag, frags_left: 0 };
        pr.outstanding += 1;
        if let Some(i) = pr.free_reqs.pop() {
            pr.reqs[i as usize] = r;
            i
        } else {
            pr.reqs.push(r);
            (pr.reqs.len() - 1) as u32
        }
    }

    /// Inlined likewise: every message completes two requests.
    #[inline(always)]
    fn complete(&mut self, h: usize, p: usize, req: u32) {
        let pr = &mut self.hosts[h].procs[p];
        let r = &mut pr.reqs[req as usize];
        assert!(r.live, "request {req} completed twice");
        r.live = false;
        pr.free_reqs.push(req);
        pr.outstanding -= 1;
        self.completions += 1;
    }

    fn lib_op(&mut self, now: Instant, h: usize, p: usize, op: Op) {
        match op {
            Op::Send { peer, size, tag } => {
                let req = self.new_req(h, p, true, None, size, tag);
                // omx_isend ends with a progress call (see `Proc::drain`).
                let pr = &mut self.hosts[h].procs[p];
                pr.drain = pr.ring.len() as u32;
                let class = self.class(size);
                let dst = peer as u16;
                if self.ranks[dst as usize].0 as usize == h {
                    let pr = &mut self.hosts[h].procs[p];
                    pr.outbox.push_back(Out::Msg {
                        peer: dst,
                        kind: LKind::Shm,
                        seq: 0,
                        tag,
                        size,
                        frag: 0,
                        frags: 1,
                        tail: true,
                        rdma: req,
                    });
                    return;
                }
                let pr = &mut self.hosts[h].procs[p];
                let ps = &mut pr.peers[dst as usize];
                let seq = ps.next_send;
                ps.next_send += 1;
                let mut rdma = req;
                if class == MessageClass::Large {
                    let slot =
                        pr.regions.iter().position(|r| r.is_none()).expect("more than 256 large sends outstanding");
                    pr.regions[slot] = Some(req);
                    rdma = slot as u32;
                }
                let frames = Self::frames_of(size, self.c.rndv_threshold, self.c.mtu);
                let m = SentMsg { seq, req: rdma, sent_at: now, size, tag, is_notify: false, frames };
                pr.peers[dst as usize].unacked_sends.push_back(m);
                pr.peers[dst as usize].unacked_frames += frames;
                Self::queue_message(&mut pr.outbox, self.c.rndv_threshold, self.c.mtu, self.c.misorder, dst, m);
                let t = now + self.c.resend;
                Self::arm_timer(pr, &mut self.q, h, p, t);
                if matches!(class, MessageClass::Tiny | MessageClass::Small) {
                    // Priced with the post in `lib_step`: hand the frame over now.
                    self.lib_send(now, h, p);
                }
            }
            Op::Recv { src, size, tag } => {
                let src = src.map(|s| s as u16);
                let req = self.new_req(h, p, false, src, size, tag);
                let pr = &mut self.hosts[h].procs[p];
                if let Some(u) =
                    take_first(&mut pr.unexpected, |u| u.ev.tag == tag && src.is_none_or(|s| s == u.ev.peer))
                {
                    match u.ev.kind {
                        LKind::Rndv => self.start_pull(now, h, p, req, u.ev),
                        LKind::MediumFrag if u.frags_left > 0 => {
                            pr.reqs[req as usize].frags_left = u.frags_left;
                            let (peer, seq16) = (u.ev.peer, u.ev.seq);
                            if let Some(m) = pr.medium.iter_mut().find(|m| {
                                m.peer == peer && m.seq & 0xFFFF == seq16 && m.target == MediumTarget::Unexpected
                            }) {
                                m.target = MediumTarget::Req(req);
                            }
                        }
                        _ => self.complete(h, p, req),
                    }
                } else {
                    pr.posted.push_back(req);
                }
            }
            _ => {}
        }
    }

    fn start_pull(&mut self, now: Instant, h: usize, p: usize, req: u32, ev: LibEvent) {
        let mtu = self.c.mtu;
        let replies = wire::pull_reply_count(ev.size as usize, mtu) as u32;
        let ep = self.hosts[h].procs[p].ep;
        let (ph, pep) = self.ranks[ev.peer as usize];
        let mut hd = PullHandle::new(h as u16, ep, ph, pep, req, ev.size, replies, wire::PULL_BLOCK_REPLIES as u32);
        hd.rdma_id = ev.rdma as u8;
        hd.last_progress = now;
        let id = if let Some(i) = self.free_handles.pop() {
            self.handles[i as usize] = hd;
            self.handle_objs[i as usize] = Obj::new(ObjClass::PullHandle);
            i
        } else {
            self.handles.push(hd);
            self.handle_objs.push(Obj::new(ObjClass::PullHandle));
            (self.handles.len() - 1) as u32
        };
        let pr = &mut self.hosts[h].procs[p];
        if pr.pulls_active < MAX_ACTIVE_PULLS {
            pr.pulls_active += 1;
            pr.outbox.push_back(Out::PullStart { handle: id });
        } else {
            pr.pulls_waiting.push_back(id);
        }
    }

    fn lib_send(&mut self, now: Instant, h: usize, p: usize) {
        let Some(out) = self.hosts[h].procs[p].outbox.pop_front() else { return };
        match out {
            Out::Msg { kind: LKind::Shm, peer, tag, size, rdma, .. } => {
                // Deliver straight into the peer's event ring; the send is
                // complete once the copy is made.
                let (ph, pep) = self.ranks[peer as usize];
                let me = self.hosts[h].procs[p].rank;
                let die = self.topo.die_of(self.hosts[h].procs[p].core);
                let ev = LibEvent {
                    kind: LKind::Shm,
                    peer: me,
                    seq: 0,
                    piggy: None,
                    tag,
                    size,
                    frag_len: 0,
                    frag_seq: 0,
                    rdma: 0,
                    writer_die: die,
                    irq_stamp: 0,
                };
                if let Some(q) = self.hosts[ph as usize].eps[pep as usize] {
                    self.post_event(now, ph as usize, q as usize, ev);
                }
                self.complete(h, p, rdma);
            }
            Out::Msg { peer: rank, kind, seq, tag, size, frag, frags, tail, rdma, .. } => {
                let (peer, peer_ep) = self.ranks[rank as usize];
                let pr = &mut self.hosts[h].procs[p];
                let ps = &mut pr.peers[rank as usize];
                let piggy = ps.expected as u16;
                ps.ack_sent();
                let src_ep = pr.ep;
                let per = wire::medium_frag_payload(self.c.mtu) as u64;
                let last = frag + 1 == frags;
                let (body, pk) = match kind {
                    LKind::Tiny => (
                        OmxBody::Tiny {
                            dst_ep: peer_ep,
                            src_ep,
                            session: 0,
                            seq: seq as u16,
                            piggy_ack: piggy,
                            match_info: tag,
                            length: size as u8,
                        },
                        PacketKind::Tiny,
                    ),
                    LKind::Small => (
                        OmxBody::Small {
                            dst_ep: peer_ep,
                            src_ep,
                            session: 0,
                            seq: seq as u16,
                            piggy_ack: piggy,
                            match_info: tag,
                            length: size as u16,
                        },
                        PacketKind::Small,
                    ),
                    LKind::MediumFrag => (
                        OmxBody::Medium {
                            dst_ep: peer_ep,
                            src_ep,
                            session: 0,
                            seq: seq as u16,
                            piggy_ack: piggy,
                            match_info: tag,
                            msg_length: size as u32,
                            frag_seq: frag,
                            frag_pipeline: 0,
                            frag_length: (size - frag as u64 * per).min(per) as u16,
                        },
                        PacketKind::Medium,
                    ),
                    LKind::Rndv => (
                        OmxBody::Rndv {
                            dst_ep: peer_ep,
                            src_ep,
                            session: 0,
                            seq: seq as u16,
                            piggy_ack: piggy,
                            match_info: tag,
                            msg_length: size as u32,
                            rdma_id: rdma as u8,
                            rdma_seqnum: 0,
                            rdma_offset: 0,
                        },
                        PacketKind::Rndv,
                    ),
                    _ => (
                        OmxBody::Notify {
                            dst_ep: peer_ep,
                            src_ep,
                            session: 0,
                            seq: seq as u16,
                            piggy_ack: piggy,
                            total_length: size as u32,
                            puller_rdma_id: rdma as u8,
                            puller_rdma_seqnum: 0,
                        },
                        PacketKind::Notify,
                    ),
                };
                let marked = self.c.marked.marks(pk, last);
                let repr = FrameRepr {
                    dst_mac: wire::host_mac(peer),
                    src_mac: wire::host_mac(h as u16),
                    src_peer: h as u16,
                    marked,
                    body,
                };
                let f = self.new_frame(h as u16, peer, &repr);
                self.transmit(now, h, f);
                // Buffered sends complete once their last frame is handed over
                // (the first time only: resends carry a dead request).
                if tail && matches!(kind, LKind::Tiny | LKind::Small | LKind::MediumFrag) {
                    let r = rdma;
                    let pr = &self.hosts[h].procs[p];
                    if pr.reqs.get(r as usize).is_some_and(|q| q.live && q.is_send && q.size == size) {
                        self.complete(h, p, r);
                    }
                }
            }
            Out::Ack { peer: rank, .. } => {
                let (peer, peer_ep) = self.ranks[rank as usize];
                let pr = &mut self.hosts[h].procs[p];
                let ps = &mut pr.peers[rank as usize];
                let upto = ps.expected as u16;
                ps.ack_sent();
                let repr = FrameRepr {
                    dst_mac: wire::host_mac(peer),
                    src_mac: wire::host_mac(h as u16),
                    src_peer: h as u16,
                    marked: false,
                    body: OmxBody::Ack {
                        dst_ep: peer_ep,
                        src_ep: pr.ep,
                        session: 0,
                        lib_seqnum: upto,
                        lib_piggyack: upto,
                    },
                };
                let f = self.new_frame(h as u16, peer, &repr);
                self.transmit(now, h, f);
            }
            Out::PullStart { handle } => {
                let n = self.handles[handle as usize].blocks.min(wire::PULL_BLOCKS_OUTSTANDING as u32);
                let block = wire::PULL_BLOCK_REPLIES as u32;
                for b in 0..n {
                    let hd = &mut self.handles[handle as usize];
                    hd.missing[b as usize] = hd.block_len(b, block);
                    hd.next_block = b + 1;
                    let f = self.pull_frame(handle, b);
                    self.transmit(now, h, f);
                }
                let at = now + self.c.pull_timeout;
                self.q.push(at, h as u32, super::Ev::PullTimer { handle });
            }
        }
    }

    fn lib_consume(&mut self, now: Instant, h: usize, p: usize, ev: LibEvent) {
        let ack_after = self.c.ack_after;
        let pr = &mut self.hosts[h].procs[p];
        let peer = ev.peer as usize;
        if let Some(v) = ev.piggy {
            if ev.kind != LKind::PullDone {
                let ps = &mut pr.peers[peer];
                let upto = widen(ps.next_send, v as u16);
                ps.ack(upto);
            }
        }
        match ev.kind {
            LKind::Ack => return,
            LKind::Shm => {
                // Intra-host: no sequence numbers or acks (the copy is reliable).
                let reqs = &pr.reqs;
                let posted = take_first(&mut pr.posted, |&r| {
                    let q = &reqs[r as usize];
                    q.tag == ev.tag && q.src.is_none_or(|s| s == ev.peer)
                });
                match posted {
                    Some(r) => self.complete(h, p, r),
                    None => pr.unexpected.push_back(Unexpected { ev, frags_left: 0 }),
                }
                return;
            }
            LKind::PullDone => {
                // The pull finished: complete the receive, notify the sender.
                let req = ev.seq;
                let ps = &mut pr.peers[peer];
                let seq = ps.next_send;
                ps.next_send += 1;
                let m = SentMsg { seq, req: ev.rdma, sent_at: now, size: ev.size, tag: 0, is_notify: true, frames: 1 };
                ps.unacked_sends.push_back(m);
                ps.unacked_frames += 1;
                pr.outbox.push_back(Out::Msg {
                    peer: ev.peer,
                    kind: LKind::Notify,
                    seq,
                    tag: 0,
                    size: ev.size,
                    frag: 0,
                    frags: 1,
                    tail: true,
                    rdma: ev.rdma,
                });
                self.complete(h, p, req);
                let pr = &mut self.hosts[h].procs[p];
                pr.pulls_active -= 1;
                if let Some(next) = pr.pulls_waiting.pop_front() {
                    pr.pulls_active += 1;
                    pr.outbox.push_back(Out::PullStart { handle: next });
                }
                return;
            }
            _ => {}
        }
        let seq = widen(pr.peers[peer].expected, ev.seq as u16);
        // A fragment of the medium message being received.
        if ev.kind == LKind::MediumFrag {
            if let Some(i) = pr.medium.iter().position(|m| m.peer == ev.peer && m.seq == seq) {
                {
                    let m = &mut pr.medium[i];
                    let bit = 1u32 << (ev.frag_seq as u32 % 32);
                    if m.seen & bit != 0 {
                        self.drops.duplicate += 1;
                        return;
                    }
                    m.seen |= bit;
                    m.stamps = (m.stamps.0.min(ev.irq_stamp), m.stamps.1.max(ev.irq_stamp));
                    let target = m.target;
                    let left = match target {
                        MediumTarget::Req(r) => {
                            let q = &mut pr.reqs[r as usize];
                            q.frags_left -= 1;
                            q.frags_left
                        }
                        MediumTarget::Unexpected => {
                            let u = pr.unexpected.iter_mut().rev().find(|u| u.ev.peer == ev.peer && u.ev.seq == ev.seq);
                            match u {
                                Some(u) => {
                                    u.frags_left -= 1;
                                    u.frags_left
                                }
                                None => 0,
                            }
                        }
                    };
                    if left == 0 {
                        let (lo, hi) = pr.medium.swap_remove(i).stamps;
                        self.medium_msgs += 1;
                        self.medium_one_irq += (lo == hi) as u64;
                        if let MediumTarget::Req(r) = target {
                            self.complete(h, p, r);
                        }
                        self.message_done(now, h, p, peer, ack_after);
                    }
                    return;
                }
            }
        }
        match pr.peers[peer].classify(seq) {
            Arrival::Duplicate => {
                // Already seen: the ack was lost, re-ack at once.
                self.drops.duplicate += 1;
                pr.outbox.push_back(Out::Ack { peer: ev.peer });
            }
            Arrival::Early => pr.early.push(LibEvent { seq, ..ev }),
            // The peer's previous message is still being reassembled.
            Arrival::InOrder if pr.medium.iter().any(|m| m.peer == ev.peer) => pr.early.push(LibEvent { seq, ..ev }),
            Arrival::InOrder => self.deliver(now, h, p, LibEvent { seq, ..ev }, ack_after),
        }
    }

    /// An in-order message (or first fragment) is matched.
    fn deliver(&mut self, now: Instant, h: usize, p: usize, ev: LibEvent, ack_after: u32) {
        let peer = ev.peer as usize;
        let mtu = self.c.mtu;
        let pr = &mut self.hosts[h].procs[p];
        let reqs = &pr.reqs;
        let req = take_first(&mut pr.posted, |&r| {
            let q = &reqs[r as usize];
            q.tag == ev.tag && q.src.is_none_or(|s| s == ev.peer)
        });
        match ev.kind {
            LKind::Tiny | LKind::Small => {
                match req {
                    Some(r) => self.complete(h, p, r),
                    None => pr.unexpected.push_back(Unexpected { ev, frags_left: 0 }),
                }
                self.message_done(now, h, p, peer, ack_after);
            }
            LKind::MediumFrag => {
                let total = wire::medium_frag_count(ev.size as usize, mtu) as u32;
                let left = total - 1;
                let rx = |target| MediumRx {
                    peer: ev.peer,
                    seq: ev.seq,
                    target,
                    seen: 1u32 << (ev.frag_seq as u32 % 32),
                    stamps: (ev.irq_stamp, ev.irq_stamp),
                };
                if left == 0 {
                    self.medium_msgs += 1;
                    self.medium_one_irq += 1;
                }
                match req {
                    Some(r) if left == 0 => {
                        self.complete(h, p, r);
                        self.message_done(now, h, p, peer, ack_after);
                    }
                    Some(r) => {
                        pr.reqs[r as usize].frags_left = left;
                        pr.medium.push(rx(MediumTarget::Req(r)));
                    }
                    None => {
                        let seq16 = ev.seq as u16 as u32;
                        pr.unexpected.push_back(Unexpected { ev: LibEvent { seq: seq16, ..ev }, frags_left: left });
                        if left == 0 {
                            self.message_done(now, h, p, peer, ack_after);
                        } else {
                            pr.medium.push(rx(MediumTarget::Unexpected));
                        }
                    }
                }
            }
            LKind::Rndv => {
                match req {
                    Some(r) => self.start_pull(now, h, p, r, ev),
                    None => pr.unexpected.push_back(Unexpected { ev, frags_left: 0 }),
                }
                self.message_done(now, h, p, peer, ack_after);
            }
            LKind::Notify => {
                let slot = ev.rdma as usize;
                if let Some(r) = pr.regions.get_mut(slot).and_then(|r| r.take()) {
                    self.complete(h, p, r);
                }
                self.message_done(now, h, p, peer, ack_after);
            }
            LKind::Ack | LKind::PullDone | LKind::Shm => {}
        }
    }

    /// The in-order message from `peer` is fully received: advance the
    /// sequence, ack if due, and release early messages that are now next.
    fn message_done(&mut self, now: Instant, h: usize, p: usize, peer: usize, ack_after: u32) {
        let pr = &mut self.hosts[h].procs[p];
        if pr.peers[peer].consumed(ack_after) {
            pr.outbox.push_front(Out::Ack { peer: peer as u16 });
            pr.peers[peer].ack_deadline = None;
        } else if pr.peers[peer].ack_deadline.is_none() {
            let t = now + self.c.delayed_ack;
            pr.peers[peer].ack_deadline = Some(t);
            Self::arm_timer(pr, &mut self.q, h, p, t);
        }
        if !pr.early.is_empty() {
            let expected = pr.peers[peer].expected;
            // Stale copies (resent frames of messages now complete) are dropped.
            let before = pr.early.len();
            pr.early.retain(|e| e.peer as usize != peer || e.seq >= expected);
            self.drops.duplicate += (before - pr.early.len()) as u64;
            // Events of the now-expected message go back to the ring's head, in arrival order.
            let mut i = pr.early.len();
            while i > 0 {
                i -= 1;
                let e = pr.early[i];
                if e.peer as usize == peer && e.seq == expected {
                    pr.early.remove(i);
                    pr.ring.push_front(LibEvent { seq: e.seq & 0xFFFF, ..e });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::widen;

    #[test]
    fn sequence_numbers_widen_around_wrap() {
        assert_eq!(widen(5, 5), 5);
        assert_eq!(widen(0x1_0002, 0xFFFF), 0xFFFF);
        assert_eq!(widen(0xFFFE, 0x0001), 0x1_0001);
        assert_eq!(widen(0, 3), 3);
    }
}
