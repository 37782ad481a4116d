//! The user-space library (Open-MX-like) of each process: what it does next
//! when it has the CPU (`lib_step`, which prices a segment) and what that
//! segment changes when it completes (`lib_apply`, `lib_op`).
//!
//! Priorities, as in `omx_progress`: hand queued frames to the driver, then
//! consume ring events, then protocol timers, then the application's next
//! operation. Waiting polls the ring or blocks in the kernel.
//!
//! This file owns the library's decisions and the application's operations
//! and their price. Handing frames to the driver, its price (`send_cost`)
//! and the protocol timers live in `lib_send`; acting on ring events and its
//! price (`consume_cost`) in `lib_recv`.

use super::{Action, MediumTarget, Out, PState, Queued, Req, World};
use crate::config::WaitMode;
use crate::host::Side;
use crate::proto::Kind;
use crate::time::{Duration, Instant};
use crate::wire::{self, MessageClass};
use crate::workload::Op;

impl World {
    pub(super) fn class(&self, size: u64) -> MessageClass {
        wire::classify(size as usize, self.c.rndv_threshold as usize)
    }

    /// Prices the next segment of process `p`; `None` if it has nothing to
    /// run (it then polls, sleeps, or is done).
    /// `core` is the process's core (`Proc::core`), which the caller has.
    pub(crate) fn lib_step(&mut self, now: Instant, h: usize, p: usize, core: usize) -> Option<(Duration, Action)> {
        debug_assert_eq!(core, self.hosts[h].procs[p].core as usize);
        let at = self.topo.cpu(core as u16);
        // Operations that take no time (a zero compute, a mark, a wait that
        // is already satisfied) loop back here without touching the peers:
        // the timers checked once at `now` need no second look.
        let mut timers_checked = false;
        loop {
            let hs = &mut self.hosts[h];
            let pr = &mut hs.procs[p];
            if let Some(out) = pr.outbox.front().copied() {
                return Some((self.send_cost(now, h, core, out), Action::Send));
            }
            // Like MPI_Wait, the progress loop returns as soon as what the
            // program waits for is complete: the program's next operation
            // goes before events still queued (a receiver that keeps pace
            // only by consuming would otherwise never post its receives).
            let program_ready = !pr.finished && pr.pending_op.is_none() && pr.wait.is_none_or(|n| pr.outstanding <= n);
            if let (false, Some(ev)) = (program_ready && pr.drain == 0, pr.ring.front().copied()) {
                pr.drain = pr.drain.saturating_sub(1);
                let cost = pr.consume_cost(&self.c, &self.cc, &self.topo, &mut hs.cache, at, ev);
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
                        WaitMode::Block => Some((c.host.block, Action::Block)),
                    };
                }
            }
            let op = pr.pending_op.take().unwrap_or_else(|| pr.program.next_op());
            match op {
                Op::Send { peer, size, .. }
                    if pr.proto.window_full(peer as u16, Self::frames_of(size, c.rndv_threshold, c.layout)) =>
                {
                    // The send window is full: wait for acks.
                    pr.pending_op = Some(op);
                    return match c.wait {
                        WaitMode::Poll => self.wait_polling(now, h, p),
                        WaitMode::Block => Some((c.host.block, Action::Block)),
                    };
                }
                Op::Send { peer, .. } if self.ranks[peer as usize].0 as usize == h => {
                    // Shared-memory path: the copy is priced when it is made.
                    return Some((c.lib.mpi_send + c.lib.send, Action::Op(op)));
                }
                Op::Send { size, .. } | Op::Mcast { size, .. } => {
                    let mut cost = c.lib.mpi_send + c.lib.send;
                    // The library's state and the data read from the
                    // application's buffer (a large message's is pulled by
                    // the NIC): counted, their time is in `send` and the copy.
                    let hs = &mut self.hosts[h];
                    let lines = &mut hs.procs[p].lines;
                    self.cc.touch(&mut hs.cache, &mut lines.private, at, Side::User, c.cache.user_private_lines as u64);
                    if wire::classify(size as usize, c.rndv_threshold as usize) != MessageClass::Large {
                        self.cc.touch(&mut hs.cache, &mut lines.app, at, Side::User, self.cc.lines(size));
                    }
                    match self.class(size) {
                        MessageClass::Medium => cost += self.cc.copy_hot(size),
                        MessageClass::Large => cost += c.lib.pull_setup,
                        MessageClass::Tiny | MessageClass::Small if c.native => {
                            cost += c.nic.doorbell + self.cc.copy_hot(size)
                        }
                        class @ (MessageClass::Tiny | MessageClass::Small) => {
                            // One frame: its send system call follows in the
                            // same segment (see `lib_op`).
                            let hold = c.host.syscall + c.host.driver_tx + c.nic.doorbell;
                            if class == MessageClass::Small {
                                cost += c.lib.small_send;
                            }
                            let tx = self.tx_touch(now, h, core, hold);
                            cost += hold + tx + self.cc.copy_hot(size);
                        }
                    }
                    return Some((cost, Action::Op(op)));
                }
                Op::Recv { .. } => return Some((c.lib.post_recv, Action::Op(op))),
                Op::WaitOutstanding(n) => pr.wait = Some(n),
                Op::Compute(d) => {
                    if !d.is_zero() {
                        // The library has just polled the clock (its timers).
                        pr.lib_at = now;
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
                    let all = self.irq_raised_all;
                    let own = self.hosts[h].irq_raised;
                    self.hosts[h].procs[p].irq_at_mark[i] = own;
                    self.hosts[h].procs[p].irq_all_at_mark[i] = all;
                }
                Op::Count => {}
                Op::Done => {
                    // Finalize: flush pending acks, then wait until every
                    // message sent was acknowledged (resends go on meanwhile).
                    let outbox = &mut pr.outbox;
                    let flushed = pr.proto.flush_acks(|peer| outbox.push_back(Out::Ack { peer }));
                    if flushed || !pr.proto.all_acked() {
                        pr.pending_op = Some(op);
                        if !flushed {
                            self.hosts[h].start_polling(p);
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
    pub(super) fn wait_polling(&mut self, now: Instant, h: usize, p: usize) -> Option<(Duration, Action)> {
        if self.c.busy_poll {
            let core = self.hosts[h].procs[p].core as usize;
            let q = self.hosts[h].steering.queue_for(Some(self.hosts[h].procs[p].ep), 0);
            if let Some(poll) = self.hosts[h].nic.queues[q].busy_poll(now, self.c.irq_suspend) {
                // Each busy poll pushes the suspension's deadline on, and
                // starts its timer if none is pending (`suspend_timer`).
                if let Some(at) = poll.suspend_timer {
                    self.q.push(at, h as u32, super::Ev::SuspendTimer { host: h as u16, q: q as u8 });
                }
                self.flow_kick(now, h);
                if let Some(entry) = poll.entry {
                    let cost = self.c.host.napi_poll + self.entry_cost(now, h, core, entry);
                    self.hosts[h].kernel_time += cost;
                    return Some((cost, Action::BusyPoll(entry)));
                }
            }
        }
        self.hosts[h].start_polling(p);
        self.hosts[h].procs[p].poll_since = Some(now);
        None
    }

    /// Applies a completed segment.
    pub(crate) fn lib_apply(&mut self, now: Instant, h: usize, p: usize, action: Action) {
        match action {
            Action::None if self.clock.is_some() => self.computed(now, h, p),
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
                // A protocol timer that fired during the blocking call found
                // the process running and woke nothing: look at the timers
                // again before sleeping (queue what is due, re-arm the rest),
                // or a lost frame would never be resent.
                if self.hosts[h].procs[p].timer_at.is_none() {
                    self.protocol_timers(now, h, p);
                }
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
    pub(super) fn new_req(&mut self, h: usize, p: usize, is_send: bool, size: u64) -> u32 {
        let pr = &mut self.hosts[h].procs[p];
        let r = Req { live: true, is_send, size };
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
    pub(super) fn complete(&mut self, h: usize, p: usize, req: u32) {
        let pr = &mut self.hosts[h].procs[p];
        let r = &mut pr.reqs[req as usize];
        assert!(r.live, "request {req} completed twice");
        r.live = false;
        pr.free_reqs.push(req);
        pr.outstanding -= 1;
        self.completions += 1;
    }

    /// Puts a posted send to a remote peer on its way: a region for a large
    /// one, a sequence number, its frames in the outbox, the resend timer.
    /// The caller checked that a large send finds a free region.
    fn submit_send(&mut self, now: Instant, h: usize, p: usize, s: Queued) {
        let Queued { req, peer: dst, size, tag } = s;
        let class = self.class(size);
        let pr = &mut self.hosts[h].procs[p];
        let mut rdma = req;
        if class == MessageClass::Large {
            rdma = pr.regions.take(req).expect("the caller found a free region");
        }
        let frames = Self::frames_of(size, self.c.rndv_threshold, self.c.layout);
        let m = pr.proto.send(dst, now, rdma, size, tag, false, frames);
        Self::queue_message(&mut pr.outbox, self.c.rndv_threshold, self.c.layout, dst, m);
        let t = now + self.c.proto.resend;
        Self::arm_timer(pr, &mut self.q, h, p, t);
        if matches!(class, MessageClass::Tiny | MessageClass::Small) {
            // Priced with the post in `lib_step`: hand the frame over now.
            self.lib_send(now, h, p);
        }
    }

    /// A region was freed, or an ack opened a send window: the sends that
    /// waited for one go, in the order they were posted, until a large one
    /// finds no region free or one finds its peer's send window full
    /// (Open-MX retries its `need_resources_send_req_q` in order when
    /// resources come back, `omx__process_delayed_requests`, libopen-mx
    /// `omx_send.c`); then the notifies that waited for a window.
    pub(super) fn submit_waiting_sends(&mut self, now: Instant, h: usize, p: usize) {
        self.submit_waiting_notifies(now, h, p);
        loop {
            let large = MessageClass::Large;
            let thr = self.c.rndv_threshold as usize;
            let frames = |size| Self::frames_of(size, self.c.rndv_threshold, self.c.layout);
            let pr = &mut self.hosts[h].procs[p];
            let Some(&s) = pr.need_region.front() else { return };
            if wire::classify(s.size as usize, thr) == large && pr.regions.is_full() {
                return;
            }
            if pr.proto.window_full(s.peer, frames(s.size)) {
                return;
            }
            pr.need_region.pop_front();
            self.submit_send(now, h, p, s);
        }
    }

    pub(super) fn lib_op(&mut self, now: Instant, h: usize, p: usize, op: Op) {
        match op {
            Op::Send { peer, size, tag } => {
                let req = self.new_req(h, p, true, size);
                // omx_isend ends with a progress call (see `Proc::drain`).
                let pr = &mut self.hosts[h].procs[p];
                pr.drain = pr.ring.len() as u32;
                let class = self.class(size);
                let dst = peer as u16;
                if self.ranks[dst as usize].0 as usize == h {
                    let pr = &mut self.hosts[h].procs[p];
                    pr.outbox.push_back(Out::one_frame(dst, Kind::Shm, 0, tag, size, req));
                    return;
                }
                let pr = &mut self.hosts[h].procs[p];
                let no_region = class == MessageClass::Large && pr.regions.is_full();
                if no_region || !pr.need_region.is_empty() {
                    // Every region is in use: the send waits for one, and
                    // later sends wait behind it (they must keep their order).
                    pr.need_region.push_back(Queued { req, peer: dst, size, tag });
                    return;
                }
                self.submit_send(now, h, p, Queued { req, peer: dst, size, tag });
            }
            Op::Mcast { size, tag } => self.mcast_post(now, h, p, size, tag),
            Op::Recv { src, size, tag } => {
                let src = src.map(|s| s as u16);
                let req = self.new_req(h, p, false, size);
                let pr = &mut self.hosts[h].procs[p];
                match pr.unexpected.take(src, tag) {
                    Some(u) => match u.ev.msg.kind {
                        Kind::Rndv => self.start_pull(now, h, p, req, u.ev),
                        Kind::MediumFrag => {
                            // Its fragments still coming in now complete the receive.
                            let (peer, seq16) = (u.ev.peer, u.ev.msg.seq);
                            match pr.medium.get_mut(peer) {
                                Some(m) if m.seq & 0xFFFF == seq16 && m.target == MediumTarget::Unexpected => {
                                    m.target = MediumTarget::Req(req)
                                }
                                _ => self.complete(h, p, req),
                            }
                        }
                        Kind::Mcast => self.mcast_matched(h, p, req, u.ev),
                        _ => self.complete(h, p, req),
                    },
                    None => pr.posted.push(src, tag, req),
                }
            }
            _ => {}
        }
    }
}
