//! The user-space library (Open-MX-like) of each process: what it does next
//! when it has the CPU (`lib_step`, which prices a segment) and what that
//! segment changes when it completes (`lib_apply`, `lib_op`).
//!
//! Priorities, as in `omx_progress`: hand queued frames to the driver, then
//! consume ring events, then protocol timers, then the application's next
//! operation. Waiting polls the ring or blocks in the kernel.
//!
//! This file owns the library's decisions and the application's operations
//! and their price; the process's own state transitions they use (what
//! comes next, requests, waiting sends, finalizing) are `Proc` methods
//! (`process`). Handing frames to the driver, its price (`send_cost`)
//! and the protocol timers live in `lib_send`; acting on ring events and its
//! price (`consume_cost`) in `lib_recv`.

use super::{Action, Finalize, Out, Queued, World};
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
            if let (false, Some(ev)) = (pr.program_goes_first(), pr.ring.front().copied()) {
                pr.drain_one();
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
            if pr.finished() {
                // The library outlives the program: it keeps answering
                // (acks, resends) until the whole run ends.
                pr.rest();
                return None;
            }
            if pr.waits() {
                return match c.wait {
                    WaitMode::Poll => self.wait_polling(now, h, p),
                    WaitMode::Block => Some((c.host.block, Action::Block)),
                };
            }
            let op = pr.take_next_op();
            match op {
                Op::Send { peer, size, .. }
                    if pr.proto.window_full(peer as u16, Self::frames_of(size, c.rndv_threshold, c.layout)) =>
                {
                    // The send window is full: wait for acks.
                    pr.hold_op(op);
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
                Op::WaitOutstanding(n) => pr.wait_for(n),
                Op::Compute(d) => {
                    if !d.is_zero() {
                        // The library has just polled the clock (its timers).
                        pr.compute_from(now);
                        return Some((d, Action::None));
                    }
                }
                Op::Mark(l) => {
                    let i = l as usize;
                    pr.mark(i, now);
                    for (hb, hs) in self.busy_at_mark[i].iter_mut().zip(&self.hosts) {
                        *hb = hs.kernel_time + hs.app_time + hs.spin_time;
                    }
                    // Interrupts raised so far on this host, and on every host.
                    let (own, all) = (self.hosts[h].irq_raised, self.irq_raised_all);
                    self.hosts[h].procs[p].count_irqs_at_mark(i, own, all);
                }
                Op::Count => {}
                // Finalize: flush pending acks, then wait until every
                // message sent was acknowledged (resends go on meanwhile).
                Op::Done => match pr.finalize() {
                    Finalize::Flushed => {
                        timers_checked = false; // acks flushed: peer state changed
                        continue;
                    }
                    Finalize::Unacked => {
                        self.hosts[h].start_polling(p);
                        return None;
                    }
                    Finalize::Done => {
                        self.programs_left -= 1;
                        return None;
                    }
                },
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
        self.hosts[h].procs[p].spin_from(now);
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
                if !self.hosts[h].procs[p].timer_armed() {
                    self.protocol_timers(now, h, p);
                }
                self.hosts[h].procs[p].sleep_if_waiting();
            }
        }
    }

    /// A new request of process `p` (`Proc::new_req`). Inlined: run for
    /// every send and receive posted.
    #[inline(always)]
    pub(super) fn new_req(&mut self, h: usize, p: usize, is_send: bool, size: u64) -> u32 {
        self.hosts[h].procs[p].new_req(is_send, size)
    }

    /// Request `req` of process `p` completed (`Proc::request_done`),
    /// counted. Inlined likewise: every message completes two requests.
    #[inline(always)]
    pub(super) fn complete(&mut self, h: usize, p: usize, req: u32) {
        self.hosts[h].procs[p].request_done(req);
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
        self.hosts[h].procs[p].submit_waiting_notifies(now);
        let (thr, layout) = (self.c.rndv_threshold, self.c.layout);
        while let Some(s) = self.hosts[h].procs[p].next_waiting_send(thr, layout) {
            self.submit_send(now, h, p, s);
        }
    }

    pub(super) fn lib_op(&mut self, now: Instant, h: usize, p: usize, op: Op) {
        match op {
            Op::Send { peer, size, tag } => {
                let req = self.new_req(h, p, true, size);
                // omx_isend ends with a progress call (see `Proc::drain`).
                self.hosts[h].procs[p].drain_ring();
                let class = self.class(size);
                let dst = peer as u16;
                if self.ranks[dst as usize].0 as usize == h {
                    let pr = &mut self.hosts[h].procs[p];
                    pr.outbox.push_back(Out::one_frame(dst, Kind::Shm, 0, tag, size, req));
                    return;
                }
                // With every region in use the send waits for one, and
                // later sends wait behind it (they must keep their order).
                let s = Queued { req, peer: dst, size, tag };
                if self.hosts[h].procs[p].queue_if_waiting(s, class == MessageClass::Large) {
                    return;
                }
                self.submit_send(now, h, p, s);
            }
            Op::Mcast { size, tag } => {
                // One frame handed to the NIC, priced with the post in
                // `lib_step` as a TINY or SMALL send (`mcast`).
                let req = self.new_req(h, p, true, size);
                let pr = &mut self.hosts[h].procs[p];
                pr.drain_ring();
                let me = pr.rank;
                pr.outbox.push_back(Out::one_frame(me, Kind::Mcast, 0, tag, size, req));
                self.lib_send(now, h, p);
            }
            Op::Recv { src, size, tag } => {
                let src = src.map(|s| s as u16);
                let req = self.new_req(h, p, false, size);
                let pr = &mut self.hosts[h].procs[p];
                match pr.unexpected.take(src, tag) {
                    Some(u) => match u.ev.msg.kind {
                        Kind::Rndv => self.start_pull(now, h, p, req, u.ev),
                        // Its fragments still coming in now complete the receive.
                        Kind::MediumFrag if pr.medium.retarget(u.ev.peer, u.ev.msg.seq, req) => {}
                        _ => self.complete(h, p, req),
                    },
                    None => pr.posted.push(src, tag, req),
                }
            }
            _ => {}
        }
    }
}
