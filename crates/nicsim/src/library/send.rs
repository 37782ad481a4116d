//! The library's send side: putting a posted send on its way
//! (`submit_send`: its sequence number, its frames in the outbox, its
//! resend timer, and a one-frame send handed to the driver at once; the
//! sends that waited for a region or a window, `submit_waiting_sends`),
//! what handing the head of the outbox to the driver costs (`send_cost`)
//! and does (`send`: a message frame, an explicit ack, the start of a
//! pull, an intra-host copy, a multicast frame), queueing the frames of a
//! message (first send or resend), and the protocol timers (delayed acks,
//! resends) that refill the outbox.
//!
//! This file owns the outbox -> frame step, its price (which `step`
//! charges as the segment before it) and the timer event. Deciding what to
//! send lives in `step`; which acks and resends are due in
//! `crate::proto::Endpoint`; headers in `crate::proto::Msg`; the frame on
//! the wire in `crate::sim` (`Output::Transmit`).

use super::process::{LibEvent, Out, Proc, Queued, Writer};
use super::{Cx, LibEv, Output};
use crate::proto::{Due, Kind, Msg, SentMsg};
use crate::time::{Duration, Instant};
use crate::wire::{self, MessageClass};
use std::collections::VecDeque;

impl Proc {
    /// CPU cost of handing `out`, the head of the outbox, to the driver
    /// (`send` does it when the segment ends): the system call, the driver
    /// and the doorbell per frame, the send-path state (`Cx::tx_touch`) and
    /// the data copied into the frame; for native MX the doorbell and the
    /// data written by PIO; for an intra-host message the driver's copy
    /// into the peer's memory.
    #[inline(always)]
    pub(super) fn send_cost(&mut self, cx: &mut Cx<'_>, out: Out) -> Duration {
        let c = &cx.env.c;
        if let Out::Msg { kind: Kind::Shm, size, .. } = out {
            // Intra-host: the driver copies the message into the
            // peer's memory (one copy, from this core's cache).
            return c.host.syscall + cx.env.c.cc.copy_time(false, size);
        }
        if c.native {
            // OS-bypass send: descriptor (and small data) written to
            // the NIC by PIO, then the doorbell; no system call.
            let cost = match out {
                Out::Msg { kind: Kind::Tiny | Kind::Small, size, .. } => c.nic.doorbell + cx.env.c.cc.copy_hot(size),
                Out::Msg { kind: Kind::Mcast, size, frag, .. } => {
                    let per = c.layout.medium_frag as u64;
                    c.nic.doorbell + cx.env.c.cc.copy_hot((size - frag as u64 * per).min(per))
                }
                Out::PullStart { .. } => c.lib.pull_setup + c.nic.doorbell,
                _ => c.nic.doorbell,
            };
            return cost;
        }
        let per_frame = c.host.driver_tx + c.nic.doorbell;
        // A small message's data is copied into the skb behind its head
        // (`omx_ioctl_send_small`).
        let payload = match out {
            Out::Msg { kind: Kind::Small, size, .. } => cx.env.c.cc.lines(size) as u32,
            _ => 0,
        };
        let tx = cx.tx_touch(self.core, self.ep, c.host.syscall + per_frame, payload);
        match out {
            Out::Msg { kind, size, frag, .. } => {
                let bytes = match kind {
                    Kind::Tiny | Kind::Small => size,
                    // A one-frame multicast's fragment 0 is the whole message.
                    Kind::MediumFrag | Kind::Mcast => {
                        let per = c.layout.medium_frag as u64;
                        (size - frag as u64 * per).min(per)
                    }
                    _ => 0,
                };
                let dtor = if kind == Kind::MediumFrag && c.tx_softirq {
                    // omx_ioctl_send_mediumsq_frag: the deferred event
                    // kmalloc'd, the send-queue page's get_page, the
                    // endpoint reacquired (driver/linux/omx_send.c), lines
                    // the destructor wrote last wherever it ran.
                    let at = cx.env.topo.cpu(self.core);
                    let lines = c.cache.frag_dtor_lines;
                    cx.env.c.cc.access(
                        &cx.env.topo,
                        &mut cx.mem.cache,
                        &mut self.exp.dtor,
                        at,
                        crate::host::Side::Kernel,
                        lines,
                    )
                } else {
                    Duration::ZERO
                };
                if kind == Kind::MediumFrag && cx.mem.lines.footprints() {
                    self.sendq_copy(cx, bytes);
                }
                c.host.syscall + per_frame + tx + dtor + cx.env.c.cc.copy_hot(bytes)
            }
            Out::Ack { .. } => c.host.syscall + per_frame + tx,
            Out::PullStart { blocks, pages, .. } => {
                c.host.syscall
                    + c.lib.pull_setup
                    + c.lib.pin_page.times(pages as u64)
                    + per_frame.times(blocks as u64)
                    + tx
            }
        }
    }

    /// The lines of a medium fragment's copy into the send queue
    /// (`omx__post_isend_mediumsq`, libopen-mx/omx_send.c of 1.0.901:
    /// `memcpy` of the fragment into its send-queue slot, just before the
    /// fragment's system call), with the paths' footprints: `bytes` read
    /// from the application's buffer and written into the slot, counted
    /// (the copy's time is `copy_hot`). The NIC's transmit DMA read the
    /// slot's lines out of the cache at the slot's last use (the driver
    /// attaches the slot's page to the skb, `omx_send.c`): they are a miss
    /// if that read left them Invalid, a hit if it left them Shared, where
    /// the write is an upgrade that brings no line in
    /// (`cache.tx_dma_read_shares`, `footprint::PathLines::sharing_tx_reads`).
    /// The send queue's slots come from a LIFO free list
    /// (`omx__endpoint_sendq_map_get`, libopen-mx/omx_lib.h), so they are
    /// the same few slots send after send, in the cache but for that.
    #[inline(never)]
    fn sendq_copy(&mut self, cx: &mut Cx<'_>, bytes: u64) {
        let at = cx.env.topo.cpu(self.core);
        // Shared: the slot's lines are in this die's L2, as a DMA into it
        // would leave them; Invalid: in memory.
        let held =
            if cx.mem.lines.tx_read_shares() { crate::host::Owner::die(at.die) } else { crate::host::Owner::MEMORY };
        let mut slot = crate::host::Obj::dma_written(&cx.mem.cache, held);
        let _ = cx.env.c.cc.copy(
            &mut cx.mem.cache,
            &mut self.lines.app,
            Some(&mut slot),
            at,
            crate::host::Side::User,
            bytes,
        );
    }

    /// Queues explicit acks and resends that are due; true if it queued any.
    /// Inlined into its two callers: `step` runs it on every library
    /// step, and an outlined copy costs a call there (measured: +12
    /// instructions per ping-pong round trip).
    #[inline(always)]
    pub(super) fn protocol_timers(&mut self, cx: &mut Cx<'_>) -> bool {
        let now = cx.now;
        // No deadline is earlier than `poll_at`. When that is still ahead
        // and the timer event is armed at or before it, `dispatch` would run
        // nothing and return a deadline no earlier than the one armed (an
        // arm that changes nothing): the common case, decided here without
        // tidying the heap (the tidying waits until its first entry falls
        // due, which also spares a pop and a push per message sent).
        match self.proto.poll_at() {
            None => return false,
            Some(first) if first > now && self.timer_at.is_some_and(|t| t <= first) => return false,
            Some(_) => {}
        }
        let c = &cx.env.c;
        let mut queued = false;
        let mut gave_up = None;
        let mut resent_frags = 0;
        let outbox = &mut self.outbox;
        let next = self.proto.dispatch(now, |peer, due| match due {
            Due::Ack => {
                queued = true;
                outbox.push_back(Out::Ack { peer })
            }
            Due::Resend(m) => {
                queued = true;
                if !m.is_notify {
                    resent_frags += Self::medium_frags(c, m.size);
                }
                Self::queue_message(outbox, c.rndv_threshold, c.layout, peer, m)
            }
            Due::GiveUp(m) => gave_up = Some((peer, m)),
        });
        if resent_frags > 0 {
            self.exp_reserve(cx, resent_frags);
        }
        if let Some(t) = next {
            self.arm_timer(cx, t);
        }
        if let Some((peer, m)) = gave_up {
            // Message `m` unacknowledged for `RESENDS_MAX` resend delays:
            // the run fails, naming both ends (`sim`).
            cx.emit(Output::GiveUp { peer, seq: m.seq, size: m.size, last_sent: m.sent_at });
        }
        queued
    }

    /// Frames a message of `size` bytes puts on the wire (pull replies aside).
    pub(super) fn frames_of(size: u64, thr: u64, layout: wire::Layout) -> u32 {
        match wire::classify(size as usize, thr as usize) {
            MessageClass::Medium => layout.medium_frag_count(size as usize) as u32,
            _ => 1,
        }
    }

    /// Queues the frames of message `m` (first send or resend), in order.
    /// Inlined in `op` (every send; the resend copy is cold).
    #[inline(always)]
    pub(super) fn queue_message(outbox: &mut VecDeque<Out>, thr: u64, layout: wire::Layout, peer: u16, m: SentMsg) {
        let (kind, frags) = if m.is_notify {
            (Kind::Notify, 1)
        } else {
            match wire::classify(m.size as usize, thr as usize) {
                MessageClass::Tiny => (Kind::Tiny, 1),
                MessageClass::Small => (Kind::Small, 1),
                MessageClass::Medium => (Kind::MediumFrag, layout.medium_frag_count(m.size as usize) as u8),
                MessageClass::Large => (Kind::Rndv, 1),
            }
        };
        for frag in 0..frags {
            outbox.push_back(Out::Msg {
                peer,
                kind,
                seq: m.seq,
                tag: m.tag,
                size: m.size,
                frag,
                frags,
                tail: frag + 1 == frags,
                rdma: m.req,
            });
        }
    }

    /// Whether fragment `frag` of `frags` carries the latency-sensitive
    /// marker (the protocol's marked classes aside): the last one, or with
    /// injected mis-ordering of degree X (SPEC 3) the medium fragment N - X,
    /// as the study simulated it ([OMX-COAL] IV-C4: "We simulated packet
    /// mis-ordering by moving the packet mark from the last fragment to an
    /// earlier one. A mis-ordering degree X thus means that packet N-X was
    /// marked instead of N."). The fragments still leave in order.
    #[inline]
    fn carries_mark(kind: Kind, frag: u8, frags: u8, misorder: u8) -> bool {
        let early = if kind == Kind::MediumFrag { misorder.min(frags - 1) } else { 0 };
        frag + 1 + early == frags
    }

    /// Hands the head of the outbox to the driver (priced by `send_cost`).
    pub(super) fn send(&mut self, cx: &mut Cx<'_>) {
        let Some(out) = self.outbox.pop_front() else { return };
        match out {
            Out::Msg { kind: Kind::Shm, peer, tag, size, rdma, .. } => {
                // Deliver straight into the peer's event ring; the send is
                // complete once the copy is made.
                let (ph, pep) = cx.env.ranks[peer as usize];
                let die = cx.env.topo.die_of(self.core);
                let msg = Msg { tag, size, ..Msg::new(Kind::Shm) };
                let ev = LibEvent { msg, peer: self.rank, writer: Writer::die(die), irq_stamp: 0 };
                cx.emit(Output::Local { host: ph, ep: pep, ev });
                self.complete(cx, rdma);
            }
            Out::Msg { kind: Kind::Mcast, tag, size, frag, frags, tail, rdma, .. } => {
                cx.emit(Output::Mcast { ep: self.ep, rank: self.rank, tag, size, frag, frags });
                if tail {
                    self.complete(cx, rdma);
                }
            }
            Out::Msg { peer: rank, kind, seq, tag, size, frag, frags, tail, rdma, .. } => {
                let (peer, peer_ep) = cx.env.ranks[rank as usize];
                let piggy = self.proto.dispatch_ack(rank);
                let per = cx.env.c.layout.medium_frag as u64;
                let frag_len = if kind == Kind::MediumFrag { (size - frag as u64 * per).min(per) as u32 } else { 0 };
                let msg = Msg { kind, seq, piggy: Some(piggy.into()), tag, size, frag_len, frag_seq: frag, rdma };
                let body = msg.emit(peer_ep, self.ep);
                let mark = Self::carries_mark(kind, frag, frags, cx.env.c.misorder);
                let marked = cx.env.c.marked.marks(body.kind(), mark);
                cx.emit(Output::Transmit { dst: peer, marked, body });
                // Buffered sends complete once their last frame is handed over
                // (the first time only: resends carry a dead request).
                if tail && matches!(kind, Kind::Tiny | Kind::Small | Kind::MediumFrag) {
                    let r = rdma;
                    let first = |q: &super::process::Req| q.live && q.is_send && q.peer == rank && q.seq == seq;
                    if self.reqs.get(r as usize).is_some_and(first) {
                        self.complete(cx, r);
                    }
                }
            }
            Out::Ack { peer: rank, .. } => {
                let (peer, peer_ep) = cx.env.ranks[rank as usize];
                let upto = self.proto.dispatch_ack(rank);
                let body = Msg { piggy: Some(upto.into()), ..Msg::new(Kind::Ack) }.emit(peer_ep, self.ep);
                cx.emit(Output::Transmit { dst: peer, marked: false, body });
            }
            Out::PullStart { handle, .. } => cx.emit(Output::PullStart { handle }),
        }
    }

    /// Puts a posted send to a remote peer on its way: a region for a large
    /// one, a sequence number, its frames in the outbox, the resend timer.
    /// The caller checked that a large send finds a free region.
    pub(super) fn submit_send(&mut self, cx: &mut Cx<'_>, s: Queued) {
        let Queued { req, peer: dst, size, tag } = s;
        let (thr, layout) = (cx.env.c.rndv_threshold, cx.env.c.layout);
        let class = wire::classify(size as usize, thr as usize);
        let mut rdma = req;
        if class == MessageClass::Large {
            rdma = self.regions.take(req).expect("the caller found a free region");
        }
        let frames = Self::frames_of(size, thr, layout);
        let frags = Self::medium_frags(&cx.env.c, size);
        if frags > 0 {
            // A medium message's fragments hold expected-event slots.
            self.exp_reserve(cx, frags);
        }
        let m = self.proto.send(dst, cx.now, rdma, size, tag, false, frames);
        let r = &mut self.reqs[req as usize];
        (r.peer, r.seq) = (dst, m.seq);
        Self::queue_message(&mut self.outbox, thr, layout, dst, m);
        let t = cx.now + cx.env.c.proto.resend;
        self.arm_timer(cx, t);
        if matches!(class, MessageClass::Tiny | MessageClass::Small) {
            // Priced with the post in `step`: hand the frame over now.
            self.send(cx);
        }
    }

    /// A region was freed, or an ack opened a send window: the sends that
    /// waited for one go, in the order they were posted, until a large one
    /// finds no region free or one finds its peer's send window full
    /// (Open-MX retries its `need_resources_send_req_q` in order when
    /// resources come back, `omx__process_delayed_requests`, libopen-mx
    /// `omx_send.c`); then the notifies that waited for a window.
    pub(super) fn submit_waiting_sends(&mut self, cx: &mut Cx<'_>) {
        self.submit_waiting_notifies(cx);
        loop {
            let large = MessageClass::Large;
            let thr = cx.env.c.rndv_threshold;
            let Some(&s) = self.need_region.front() else { return };
            if wire::classify(s.size as usize, thr as usize) == large && self.regions.is_full() {
                return;
            }
            if self.proto.window_full(s.peer, Self::frames_of(s.size, thr, cx.env.c.layout)) {
                return;
            }
            if self.exp_short(cx, s.size) {
                return;
            }
            self.need_region.pop_front();
            self.submit_send(cx, s);
        }
    }

    /// Its protocol-timer event fired (`Ev::ProcTimer`); true if the
    /// process is to be notified (its deadline is due).
    pub(crate) fn timer_fired(&mut self, cx: &mut Cx<'_>) -> bool {
        let now = cx.now;
        self.timer_events.fired(now);
        match self.timer_at {
            Some(t) if t <= now => {
                self.timer_at = None;
                if cx.env.clock && self.computing() {
                    // Nothing wakes a computing process: its library runs
                    // the deadline when it next enters (`sim::clock` reports when).
                    self.timer_missed.get_or_insert(t);
                }
                true
            }
            // An earlier event standing in for this deadline (see
            // `arm_timer`): queue the deadline's own event now.
            Some(t) if !self.timer_events.any_by(t) => {
                self.timer_events.insert(t);
                cx.timer(t, LibEv::Protocol);
                false
            }
            _ => false,
        }
    }

    /// Arms the protocol timer (delayed ack / resend) at `at` if earlier
    /// than the one armed. An event already queued at or before `at` stands
    /// in for it (it fires, finds the deadline later, and queues its event
    /// then: `indexes::TimerEvents`).
    pub(super) fn arm_timer(&mut self, cx: &mut Cx<'_>, at: Instant) {
        if self.timer_at.is_none_or(|t| at < t) {
            self.timer_at = Some(at);
            if !self.timer_events.any_by(at) {
                self.timer_events.insert(at);
                cx.timer(at, LibEv::Protocol);
            }
        }
    }
}
