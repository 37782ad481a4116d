//! A process's progress loop: what it does next when it has the CPU
//! (`Proc::step`, which prices a segment) and what that segment changes
//! when it completes (`Proc::segment_done`, `apply`, `op`).
//!
//! Priorities, as in `omx_progress`: hand queued frames to the driver, then
//! consume ring events, then protocol timers, then the application's next
//! operation. Waiting polls the ring or blocks in the kernel.
//!
//! This file owns the library's decisions and the application's operations
//! and their price (a one-frame send's with its hand-over to the driver,
//! which `send::submit_send` makes when the segment ends). Putting a send
//! on its way, handing frames to the driver, its price (`send_cost`) and
//! the protocol timers live in `send`; acting on ring events and its price
//! (`consume_cost`) in `recv`.

use super::process::{Action, Out, PState, Proc, Queued, Req, Step};
use super::{pin_cost, Cx, Output};
use crate::config::WaitMode;
use crate::host::cache::code::Seg;
use crate::host::cache::footprint::LibPath;
use crate::host::Side;
use crate::proto::Kind;
use crate::wire::{self, MessageClass};
use crate::workload::Op;

impl Proc {
    /// Prices the next segment of the process (which has its core):
    /// [`Step::Run`], which it then runs ([`PState::Running`]: the core
    /// begins the segment at once), or what it does having nothing to run.
    #[inline(always)]
    pub(crate) fn step(&mut self, cx: &mut Cx<'_>) -> Step {
        let s = self.next_step(cx);
        if let Step::Run(_, action) = s {
            self.state = PState::Running;
            self.action = action;
        }
        s
    }

    /// The next segment [`Proc::step`] prices.
    #[inline(always)]
    fn next_step(&mut self, cx: &mut Cx<'_>) -> Step {
        let now = cx.now;
        let at = cx.env.topo.cpu(self.core);
        // Operations that take no time (a zero compute, a mark, a wait that
        // is already satisfied) loop back here without touching the peers:
        // the timers checked once at `now` need no second look.
        let mut timers_checked = false;
        loop {
            if let Some(out) = self.outbox.front().copied() {
                return Step::Run(self.send_cost(cx, out), Action::Send);
            }
            if self.exp_pending() {
                // omx__progress consumes every expected event (FRAG_DONE).
                let (cost, k) = self.exp_cost(cx, at);
                return Step::Run(cost, Action::ExpEvents(k));
            }
            // ob1's headers and data go once their peer's send window has
            // room: ob1 sends them from the callback of what asked for them.
            if let Some(b) = self.ob1_ops.front().copied() {
                let op = b.as_send();
                let c = &cx.env.c;
                if let Op::Send { peer, size, .. } = op {
                    if !self.proto.window_full(peer as u16, Self::frames_of(size, c.rndv_threshold, c.layout)) {
                        self.ob1_ops.pop_front();
                        return Step::Run(self.send_price(cx, at, op), Action::Ob1(b));
                    }
                }
            }
            // Like MPI_Wait, the progress loop returns as soon as what the
            // program waits for is complete: the program's next operation
            // goes before events still queued (a receiver that keeps pace
            // only by consuming would otherwise never post its receives).
            let program_ready = self.cursor.ready(self.outstanding) && self.ob1_ops.is_empty();
            if let (false, Some(ev)) = (program_ready && self.drain == 0, self.ring.front().copied()) {
                self.drain = self.drain.saturating_sub(1);
                let cost = self.consume_cost(cx, at, ev);
                return Step::Run(cost, Action::Consume);
            }
            if !timers_checked {
                if self.protocol_timers(cx) {
                    continue;
                }
                timers_checked = true;
            }
            let eager = super::ob1::eager_data(&cx.env.c);
            let c = &cx.env.c;
            if self.cursor.finished() {
                // The library outlives the program: it keeps answering
                // (acks, resends) until the whole run ends.
                self.state = PState::Done;
                return Step::Idle;
            }
            let Some(posted) = self.cursor.next(now, self.outstanding) else {
                return match c.wait {
                    WaitMode::Poll => Step::Wait,
                    WaitMode::Block => Step::Run(c.host.block, Action::Block),
                };
            };
            let mut op = posted;
            if let (Op::Send { peer, size, tag }, Some(eager)) = (op, eager) {
                if cx.env.ranks[peer as usize].0 != cx.host {
                    // ob1 over the MX BTL: an eager message, or a
                    // rendezvous whose RNDV header goes first (`ob1.rs`).
                    match self.ob1_send(cx, peer, size, tag, eager) {
                        Some(o) => op = o,
                        None => continue,
                    }
                }
            }
            let c = &cx.env.c;
            match op {
                Op::Send { peer, size, .. }
                    if self.proto.window_full(peer as u16, Self::frames_of(size, c.rndv_threshold, c.layout)) =>
                {
                    // The send window is full: wait for acks (the program's
                    // send is held as it posted it).
                    self.cursor.hold(posted);
                    return match c.wait {
                        WaitMode::Poll => Step::Wait,
                        WaitMode::Block => Step::Run(c.host.block, Action::Block),
                    };
                }
                Op::Send { peer, .. } if cx.env.ranks[peer as usize].0 == cx.host => {
                    // Shared-memory path: the copy is priced when it is made.
                    return Step::Run(c.lib.mpi_send + c.lib.send, Action::Op(op));
                }
                Op::Send { .. } | Op::Mcast { .. } => return Step::Run(self.send_price(cx, at, op), Action::Op(op)),
                Op::Recv { .. } => return Step::Run(c.lib.post_recv, Action::Op(op)),
                // Recorded by the cursor: the loop looks at the ring again.
                Op::WaitOutstanding(_) => {}
                Op::Compute(d) => {
                    if !d.is_zero() {
                        // The library has just polled the clock (its timers).
                        self.lib_at = now;
                        return Step::Run(d, Action::None);
                    }
                }
                // Its time taken by the cursor.
                Op::Mark(l) => cx.emit(Output::Mark { label: l as u8 }),
                // No message tells a rank of this library when another has
                // a message: no program it runs waits on that (the
                // broadcast benchmark acks up its tree, `bcast_ops`).
                Op::Count | Op::WaitDelivered { .. } => {}
                Op::Done => {
                    // Finalize: flush pending acks, then wait until every
                    // message sent was acknowledged (resends go on meanwhile).
                    let outbox = &mut self.outbox;
                    let flushed = self.proto.flush_acks(|peer| outbox.push_back(Out::Ack { peer }));
                    if flushed || !self.proto.all_acked() {
                        self.cursor.hold(op);
                        if !flushed {
                            return Step::Spin;
                        }
                        timers_checked = false; // acks flushed: peer state changed
                        continue;
                    }
                    self.cursor.finish();
                    self.state = PState::Done;
                    cx.emit(Output::ProgramDone);
                    return Step::Idle;
                }
            }
        }
    }

    /// The price of posting send (or multicast) `op` to another host: the
    /// MPI layer's and the library's send, the lines they touch, and by
    /// the message's class its copy, its buffer's pinning or its one
    /// frame's system call.
    #[inline(always)]
    fn send_price(&mut self, cx: &mut Cx<'_>, at: crate::host::Cpu, op: Op) -> crate::time::Duration {
        let (Op::Send { size, .. } | Op::Mcast { size, .. }) = op else { unreachable!("a send") };
        let c = &cx.env.c;
        let mut cost = c.lib.mpi_send + c.lib.send;
        // The library's state and the data read from the
        // application's buffer (a large message's is pulled by
        // the NIC): counted, their time is in `send` and the copy.
        let cc = &cx.env.c.cc;
        let lines = &mut self.lines;
        // The library's own lines (`LibPath::Send`) with the MPI layer's.
        let own = cx.mem.lines.lib_lines(LibPath::Send);
        cc.touch(&mut cx.mem.cache, &mut lines.private, at, Side::User, c.cache.user_private_lines as u64 + own);
        // The MPI layer's and the library's send code (`host/cache/code.rs`).
        cx.mem.lines.code(&mut cx.mem.cache, Seg::MpiSend, at, Side::User);
        cx.mem.lines.code(&mut cx.mem.cache, Seg::LibSend, at, Side::User);
        let class = wire::classify(size as usize, c.rndv_threshold as usize);
        // With the paths' footprints an Open-MX medium send
        // reads its buffer fragment by fragment, as it copies
        // it into the send queue (`send_cost`).
        let by_frag =
            class == MessageClass::Medium && !c.native && matches!(op, Op::Send { .. }) && cx.mem.lines.footprints();
        if class != MessageClass::Large && !by_frag {
            cc.touch(&mut cx.mem.cache, &mut lines.app, at, Side::User, cc.lines(size));
        }
        match class {
            // Open-MX copies a medium message into its send
            // queue fragment by fragment, each copy just before
            // that fragment's system call
            // (`omx__post_isend_mediumsq`, libopen-mx/omx_send.c
            // L440-467): `send_cost` prices it per fragment, so
            // the post copies nothing.
            MessageClass::Medium if !c.native && matches!(op, Op::Send { .. }) => {}
            MessageClass::Medium => cost += cc.copy_hot(size),
            // Open-MX registers the send buffer before the
            // rendezvous, pinning it page by page (`pin_cost`).
            MessageClass::Large => cost += pin_cost(c, size),
            MessageClass::Tiny | MessageClass::Small if c.native => cost += c.nic.doorbell + cc.copy_hot(size),
            class @ (MessageClass::Tiny | MessageClass::Small) => {
                // One frame: its send system call follows in the
                // same segment (see `submit_send`).
                let hold = c.host.syscall + c.host.driver_tx + c.nic.doorbell;
                if class == MessageClass::Small {
                    cost += c.lib.small_send;
                }
                // A small message's data is copied into the
                // skb behind its head (`omx_ioctl_send_small`).
                let payload = if class == MessageClass::Small { cc.lines(size) as u32 } else { 0 };
                let tx = cx.tx_touch(self.core, self.ep, hold, payload);
                cost += hold + tx + cc.copy_hot(size);
            }
        }
        cost
    }

    /// Its segment ended: the segment's effect is applied (`apply`), or,
    /// for a computation's end and a busy poll's entry, handed back for the
    /// world to act on.
    #[inline(always)]
    pub(crate) fn segment_done(&mut self, cx: &mut Cx<'_>) -> Option<Action> {
        self.state = PState::Ready;
        match self.action {
            a @ (Action::None | Action::BusyPoll(_)) => Some(a),
            a => {
                self.apply(cx, a);
                None
            }
        }
    }

    /// Applies a completed segment (the world handles a busy poll's entry
    /// and a computation's end itself: `segment_done`).
    pub(super) fn apply(&mut self, cx: &mut Cx<'_>, action: Action) {
        match action {
            Action::None | Action::BusyPoll(_) | Action::BusyPollStop => {}
            Action::Send => self.send(cx),
            Action::Consume => {
                if let Some(ev) = self.ring.pop_front() {
                    self.consume(cx, ev);
                }
            }
            Action::Op(op) => self.op(cx, op),
            Action::Ob1(op) => self.ob1_apply(cx, op),
            Action::ExpEvents(k) => self.exp_consume(cx, k),
            Action::Block => {
                // A protocol timer that fired during the blocking call found
                // the process running and woke nothing: look at the timers
                // again before sleeping (queue what is due, re-arm the rest),
                // or a lost frame would never be resent.
                if self.timer_at.is_none() {
                    self.protocol_timers(cx);
                }
                let nothing = self.ring.is_empty() && self.outbox.is_empty() && !self.exp_pending();
                if nothing && self.cursor.blocked(self.outstanding) {
                    self.state = PState::Blocked;
                }
            }
        }
    }

    /// The driver opened pull `handle` (of `blocks` blocks, into a region
    /// of `pages` pages) that this process asked for (`Output::OpenPull`):
    /// it starts, or waits for one of the `max_pulls` pulls under way to
    /// finish.
    pub(crate) fn pull_opened(&mut self, handle: u32, blocks: u32, pages: u32, max_pulls: u32) {
        let blocks = blocks.min(wire::PULL_BLOCKS_OUTSTANDING as u32);
        if self.pulls_active < max_pulls {
            self.pulls_active += 1;
            self.outbox.push_back(Out::PullStart { handle, blocks, pages });
        } else {
            self.pulls_waiting.push_back((handle, blocks, pages));
        }
    }

    /// Inlined: a few stores, run for every send and receive posted.
    #[inline(always)]
    pub(super) fn new_req(&mut self, is_send: bool, size: u64) -> u32 {
        let r = Req { live: true, is_send, size, ob1: false, peer: u16::MAX, seq: u32::MAX };
        self.outstanding += 1;
        if let Some(i) = self.free_reqs.pop() {
            self.reqs[i as usize] = r;
            i
        } else {
            self.reqs.push(r);
            (self.reqs.len() - 1) as u32
        }
    }

    /// Applies an operation of the program (priced in `step`).
    fn op(&mut self, cx: &mut Cx<'_>, op: Op) {
        match op {
            Op::Send { peer, size, tag } => {
                let req = self.new_req(true, size);
                self.post_send(cx, Queued { req, peer: peer as u16, size, tag });
            }
            Op::Mcast { size, tag } => self.mcast_post(cx, size, tag),
            Op::Recv { src, size, tag } => {
                let req = self.new_req(false, size);
                self.post_recv(cx, src.map(|s| s as u16), tag, req);
            }
            _ => {}
        }
    }

    /// Posts send `s` (its request made): an intra-host copy, or a message
    /// on its way or waiting for a region or expected-event slots.
    pub(super) fn post_send(&mut self, cx: &mut Cx<'_>, s: Queued) {
        let Queued { req, peer: dst, size, tag } = s;
        // omx_isend ends with a progress call (see `Proc::drain`).
        self.drain = self.ring.len() as u32;
        let class = wire::classify(size as usize, cx.env.c.rndv_threshold as usize);
        if cx.env.ranks[dst as usize].0 == cx.host {
            self.outbox.push_back(Out::one_frame(dst, Kind::Shm, 0, tag, size, req));
            return;
        }
        let no_region = class == MessageClass::Large && self.regions.is_full();
        if no_region || self.exp_short(cx, size) || !self.need_region.is_empty() {
            // Every region is in use, or a medium send finds too few
            // expected-event slots: the send waits for them, and
            // later sends wait behind it (they must keep their order).
            self.need_region.push_back(s);
            return;
        }
        self.submit_send(cx, s);
    }

    /// Posts receive `req` of messages with `tag` from `src`: it takes the
    /// first such unexpected message, or waits in the posted queue.
    pub(super) fn post_recv(&mut self, cx: &mut Cx<'_>, src: Option<u16>, tag: u64, req: u32) {
        match self.unexpected.take(src, tag) {
            // ob1's RNDV header, kept under its MPI tag (`recv.rs`).
            Some(u) if u.ev.msg.tag & super::ob1::RNDV != 0 => self.ob1_matched(cx, req, u.ev.peer, u.ev.msg.tag),
            Some(u) => match u.ev.msg.kind {
                Kind::Rndv => self.start_pull(cx, req, u.ev),
                Kind::MediumFrag => {
                    // Its fragments still coming in now complete the receive.
                    let (peer, seq16) = (u.ev.peer, u.ev.msg.seq);
                    match self.medium.get_mut(peer) {
                        Some(m) if m.seq & 0xFFFF == seq16 && m.target == super::indexes::MediumTarget::Unexpected => {
                            m.target = super::indexes::MediumTarget::Req(req)
                        }
                        _ => self.complete(cx, req),
                    }
                }
                Kind::Mcast => self.mcast_matched(cx, req, u.ev),
                _ => self.complete(cx, req),
            },
            None => self.posted.push(src, tag, req),
        }
    }

    /// Receive `req` takes the rendezvous `ev`: the driver opens a pull
    /// handle for it (`Output::OpenPull`, answered by `pull_opened`).
    pub(super) fn start_pull(&mut self, cx: &mut Cx<'_>, req: u32, ev: crate::library::LibEvent) {
        cx.emit(Output::OpenPull { ep: self.ep, req, ev });
    }
}
