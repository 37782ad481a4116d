//! The library's send side: handing the head of the outbox to the driver
//! (a message frame, an explicit ack, the start of a pull), queueing the
//! frames of a message (first send or resend), and the protocol timers
//! (delayed acks, resends) that refill the outbox.
//!
//! This file owns the outbox -> frame step, its price (`send_cost`, which
//! `lib_path` charges as the segment before it) and the timer event.
//! Deciding what to send lives in `lib_path`; which acks and resends are due in
//! `crate::proto::Endpoint`; headers in `crate::proto::Msg`; the wire in
//! `wire_path`.

use super::{Ev, LibEvent, Out, Proc, World};
use crate::engine::EventQueue;
use crate::proto::{Due, Kind, Msg, SentMsg, RESENDS_MAX};
use crate::time::{Duration, Instant};
use crate::wire::{self, FrameRepr, MessageClass};
use std::collections::VecDeque;

impl World {
    /// CPU cost of handing `out`, the head of the outbox of a process on
    /// `core`, to the driver (`lib_send` does it when the segment ends):
    /// the system call, the driver and the doorbell per frame, the send-path
    /// state (`tx_touch`) and the data copied into the frame; for native MX
    /// the doorbell and the data written by PIO; for an intra-host message
    /// the driver's copy into the peer's memory.
    #[inline(always)]
    pub(super) fn send_cost(&mut self, now: Instant, h: usize, core: usize, out: Out) -> Duration {
        let c = &self.c;
        if let Out::Msg { kind: Kind::Shm, size, .. } = out {
            // Intra-host: the driver copies the message into the
            // peer's memory (one copy, from this core's cache).
            return c.host.syscall + self.cc.copy_time(false, size);
        }
        if c.native {
            // OS-bypass send: descriptor (and small data) written to
            // the NIC by PIO, then the doorbell; no system call.
            let cost = match out {
                Out::Msg { kind: Kind::Tiny | Kind::Small, size, .. } => c.nic.doorbell + self.cc.copy_hot(size),
                Out::Msg { kind: Kind::Mcast, size, frag, .. } => {
                    let per = c.layout.medium_frag as u64;
                    c.nic.doorbell + self.cc.copy_hot((size - frag as u64 * per).min(per))
                }
                Out::PullStart { .. } => c.lib.pull_setup + c.nic.doorbell,
                _ => c.nic.doorbell,
            };
            return cost;
        }
        let per_frame = c.host.driver_tx + c.nic.doorbell;
        let tx = self.tx_touch(now, h, core, c.host.syscall + per_frame);
        let c = &self.c;
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
                c.host.syscall + per_frame + tx + self.cc.copy_hot(bytes)
            }
            Out::Ack { .. } => c.host.syscall + per_frame + tx,
            Out::PullStart { handle } => {
                let blocks = self.handles[handle as usize].proto.blocks().min(wire::PULL_BLOCKS_OUTSTANDING as u32);
                c.host.syscall + c.lib.pull_setup + per_frame.times(blocks as u64) + tx
            }
        }
    }

    /// Queues explicit acks and resends that are due; true if it queued any.
    /// Inlined into its two callers: `lib_step` runs it on every library
    /// step, and an outlined copy costs a call there (measured: +12
    /// instructions per ping-pong round trip).
    #[inline(always)]
    pub(super) fn protocol_timers(&mut self, now: Instant, h: usize, p: usize) -> bool {
        let pr = &mut self.hosts[h].procs[p];
        // No deadline is earlier than `poll_at`. When that is still ahead
        // and the timer event is armed at or before it, `dispatch` would run
        // nothing and return a deadline no earlier than the one armed (an
        // arm that changes nothing): the common case, decided here without
        // tidying the heap (the tidying waits until its first entry falls
        // due, which also spares a pop and a push per message sent).
        match pr.proto.poll_at() {
            None => return false,
            Some(first) if first > now && pr.timer_at.is_some_and(|t| t <= first) => return false,
            Some(_) => {}
        }
        let c = &self.c;
        let mut queued = false;
        let mut gave_up = None;
        let outbox = &mut pr.outbox;
        let next = pr.proto.dispatch(now, |peer, due| match due {
            Due::Ack => {
                queued = true;
                outbox.push_back(Out::Ack { peer })
            }
            Due::Resend(m) => {
                queued = true;
                Self::queue_message(outbox, c.rndv_threshold, c.layout, peer, m)
            }
            Due::GiveUp(m) => gave_up = Some((peer, m)),
        });
        if let Some(t) = next {
            Self::arm_timer(pr, &mut self.q, h, p, t);
        }
        if let Some((peer, m)) = gave_up {
            self.give_up(h, p, peer, m);
        }
        queued
    }

    /// The library gave up on `peer` (message `m` unacknowledged for
    /// [`RESENDS_MAX`] resend delays): the run fails, naming both ends.
    #[cold]
    #[inline(never)]
    fn give_up(&mut self, h: usize, p: usize, peer: u16, m: SentMsg) {
        let me = self.hosts[h].procs[p].rank;
        let secs = self.c.proto.resend.times(RESENDS_MAX).as_us_f64() / 1e6;
        self.fail(format!(
            "peer unreachable: rank {me} (host {h}) gave up on rank {peer} (host {}): message {} of {} bytes \
             unacknowledged for {secs} s (library.resend_us x {RESENDS_MAX}, Open-MX's OMX_RESENDS_MAX){}",
            self.ranks[peer as usize].0,
            m.seq,
            m.size,
            self.ring_overflow_note()
        ));
    }

    /// Frames a message of `size` bytes puts on the wire (pull replies aside).
    pub(super) fn frames_of(size: u64, thr: u64, layout: wire::Layout) -> u32 {
        match wire::classify(size as usize, thr as usize) {
            MessageClass::Medium => layout.medium_frag_count(size as usize) as u32,
            _ => 1,
        }
    }

    /// Queues the frames of message `m` (first send or resend), in order.
    /// Inlined in `lib_op` (every send; the resend copy is cold).
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

    pub(super) fn lib_send(&mut self, now: Instant, h: usize, p: usize) {
        let Some(out) = self.hosts[h].procs[p].outbox.pop_front() else { return };
        match out {
            Out::Msg { kind: Kind::Shm, peer, tag, size, rdma, .. } => {
                // Deliver straight into the peer's event ring; the send is
                // complete once the copy is made.
                let (ph, pep) = self.ranks[peer as usize];
                let me = self.hosts[h].procs[p].rank;
                let die = self.topo.die_of(self.hosts[h].procs[p].core);
                let msg = Msg { tag, size, ..Msg::new(Kind::Shm) };
                let ev = LibEvent { msg, peer: me, writer_die: die, irq_stamp: 0 };
                if let Some(q) = self.hosts[ph as usize].eps[pep as usize] {
                    self.post_event(now, ph as usize, q as usize, ev);
                }
                self.complete(h, p, rdma);
            }
            Out::Msg { kind: Kind::Mcast, tag, size, frag, frags, tail, rdma, .. } => {
                self.mcast_send(now, h, p, tag, size, frag, frags);
                if tail {
                    self.complete(h, p, rdma);
                }
            }
            Out::Msg { peer: rank, kind, seq, tag, size, frag, frags, tail, rdma, .. } => {
                let (peer, peer_ep) = self.ranks[rank as usize];
                let pr = &mut self.hosts[h].procs[p];
                let piggy = pr.proto.dispatch_ack(rank);
                let per = self.c.layout.medium_frag as u64;
                let frag_len = if kind == Kind::MediumFrag { (size - frag as u64 * per).min(per) as u32 } else { 0 };
                let msg = Msg { kind, seq, piggy: Some(piggy.into()), tag, size, frag_len, frag_seq: frag, rdma };
                let body = msg.emit(peer_ep, pr.ep);
                let mark = Self::carries_mark(kind, frag, frags, self.c.misorder);
                let marked = self.c.marked.marks(body.kind(), mark);
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
                if tail && matches!(kind, Kind::Tiny | Kind::Small | Kind::MediumFrag) {
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
                let upto = pr.proto.dispatch_ack(rank);
                let repr = FrameRepr {
                    dst_mac: wire::host_mac(peer),
                    src_mac: wire::host_mac(h as u16),
                    src_peer: h as u16,
                    marked: false,
                    body: Msg { piggy: Some(upto.into()), ..Msg::new(Kind::Ack) }.emit(peer_ep, pr.ep),
                };
                let f = self.new_frame(h as u16, peer, &repr);
                self.transmit(now, h, f);
            }
            Out::PullStart { handle } => self.pull_start(now, h, handle),
        }
    }

    pub(super) fn proc_timer(&mut self, now: Instant, h: usize, p: usize) {
        let pr = &mut self.hosts[h].procs[p];
        pr.timer_events.fired(now);
        match pr.timer_at {
            Some(t) if t <= now => {
                pr.timer_at = None;
                if self.clock.is_some() && super::clock::computing(pr) {
                    // Nothing wakes a computing process: its library runs
                    // the deadline when it next enters (`clock` reports when).
                    pr.timer_missed.get_or_insert(t);
                }
                self.notify_proc(now, h, p);
            }
            // An earlier event standing in for this deadline (see
            // `arm_timer`): queue the deadline's own event now.
            Some(t) if !pr.timer_events.any_by(t) => {
                pr.timer_events.insert(t);
                self.q.push(t, h as u32, Ev::ProcTimer { host: h as u16, p: p as u16 });
            }
            _ => {}
        }
    }

    /// Arms the protocol timer (delayed ack / resend) of process `p` (`pr`,
    /// of host `h`) at `at` if earlier than the one armed. An event already
    /// queued at or before `at` stands in for it (it fires, finds the
    /// deadline later, and queues its event then: `indexes::TimerEvents`). Takes
    /// the process and the queue rather than the world: callers already
    /// hold the process.
    pub(crate) fn arm_timer(pr: &mut Proc, q: &mut EventQueue<Ev>, h: usize, p: usize, at: Instant) {
        if pr.timer_at.is_none_or(|t| at < t) {
            pr.timer_at = Some(at);
            if !pr.timer_events.any_by(at) {
                pr.timer_events.insert(at);
                q.push(at, h as u32, Ev::ProcTimer { host: h as u16, p: p as u16 });
            }
        }
    }
}
