//! The library's send side: handing the head of the outbox to the driver
//! (a message frame, an explicit ack, the start of a pull), queueing the
//! frames of a message (first send or resend), and the protocol timers
//! (delayed acks, resends) that refill the outbox.
//!
//! This file owns the outbox -> frame step and the timers. Deciding what to
//! send lives in `lib_path`; the wire in `wire_path`.

use super::{Ev, LKind, LibEvent, Out, Proc, World};
use crate::engine::EventQueue;
use crate::proto::{Peer, SentMsg};
use crate::time::{Duration, Instant};
use crate::wire::{self, FrameRepr, MessageClass, OmxBody, PacketKind};
use std::collections::VecDeque;

impl World {
    /// Queues explicit acks and resends that are due; true if it queued any.
    /// Inlined into its two callers: `lib_step` runs it on every library
    /// step, and an outlined copy costs a call there (measured: +12
    /// instructions per ping-pong round trip).
    #[inline(always)]
    pub(super) fn protocol_timers(&mut self, now: Instant, h: usize, p: usize) -> bool {
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
    pub(super) fn resend_due(
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
    pub(super) fn frames_of(size: u64, thr: u64, mtu: usize) -> u32 {
        match wire::classify(size as usize, thr as usize) {
            MessageClass::Medium => wire::medium_frag_count(size as usize, mtu) as u32,
            _ => 1,
        }
    }

    /// Queues the frames of message `m` (first send or resend).
    /// Inlined in `lib_op` (every send; the resend copy is cold).
    #[inline(always)]
    pub(super) fn queue_message(
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

    pub(super) fn lib_send(&mut self, now: Instant, h: usize, p: usize) {
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

    pub(super) fn proc_timer(&mut self, now: Instant, h: usize, p: usize) {
        let pr = &mut self.hosts[h].procs[p];
        if pr.timer_at.is_some_and(|t| t <= now) {
            pr.timer_at = None;
            self.notify_proc(now, h, p);
        }
    }

    /// Arms the protocol timer (delayed ack / resend) of process `p` (`pr`,
    /// of host `h`) at `at` if earlier than the one armed. Takes the process
    /// and the queue rather than the world: callers already hold the process.
    pub(crate) fn arm_timer(pr: &mut Proc, q: &mut EventQueue<Ev>, h: usize, p: usize, at: Instant) {
        if pr.timer_at.is_none_or(|t| at < t) {
            pr.timer_at = Some(at);
            q.push(at, h as u32, Ev::ProcTimer { host: h as u16, p: p as u16 });
        }
    }
}
