//! The Open-MX receive handler (bottom half, after its cost was paid) and
//! the event ring: a received frame becomes a library event ([`LibEvent`])
//! in its endpoint's ring, or goes to the pull protocol; and the process
//! that owns the ring is made to notice.
//!
//! This module owns the frame -> event step. It does not price it (`kernel`)
//! nor act on the event (`lib_recv`).

use super::{PState, World, ECHO_HOST, NO_RANK, WRITER_MEMORY};
use crate::time::Instant;
use crate::wire::OmxBody;

/// A library event in an endpoint's shared event ring.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LibEvent {
    pub kind: LKind,
    pub peer: u16,
    pub seq: u32,
    pub piggy: Option<u32>,
    pub tag: u64,
    pub size: u64,
    pub frag_len: u32,
    pub frag_seq: u8,
    /// For RNDV / NOTIFY: the sender's region id; for PullDone: the handle.
    pub rdma: u32,
    /// The die whose cache holds the event and its data (the handler's).
    pub writer_die: u16,
    /// The frame's interrupt stamp (see `Frame::irq_stamp`).
    pub irq_stamp: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LKind {
    Tiny,
    Small,
    MediumFrag,
    Rndv,
    Notify,
    Ack,
    PullDone,
    /// A whole message through the intra-host shared-memory path.
    Shm,
}

impl World {
    pub(super) fn handle_frame(&mut self, now: Instant, h: usize, core: usize, frame: u32) {
        let (src, irq_stamp) = (self.frames[frame as usize].src, self.frames[frame as usize].irq_stamp);
        let parsed = self.frames[frame as usize].parsed;
        self.free_frame(frame);
        self.frames_handled += 1;
        let hs = &mut self.hosts[h];
        hs.rx_frames += 1;
        let Some(repr) = parsed else {
            self.drops.malformed += 1;
            return;
        };
        if h == ECHO_HOST && self.echo == Some(crate::config::EchoAt::Kernel) {
            self.kernel_echo(now, &repr);
            return;
        }
        let ep = repr.body.dst_endpoint();
        let Some(p) = hs.eps[ep as usize] else {
            self.drops.no_endpoint += 1;
            return;
        };
        let p = p as usize;
        // The NIC itself (native MX) writes to memory: WRITER_MEMORY.
        let die = if core == usize::MAX { WRITER_MEMORY } else { self.topo.die_of(core as u16) };
        if core == usize::MAX {
            self.hosts[h].procs[p].ring_obj.owner = crate::host::Owner::Memory;
        }
        let src_ep = repr.body.src_endpoint().unwrap_or(0);
        let peer = self.rank_of[src as usize][src_ep as usize];
        if peer == NO_RANK && !matches!(repr.body, OmxBody::Pull { .. } | OmxBody::PullReply { .. }) {
            self.drops.no_endpoint += 1;
            return;
        }
        let mut ev = LibEvent {
            kind: LKind::Ack,
            peer,
            seq: 0,
            piggy: None,
            tag: 0,
            size: 0,
            frag_len: 0,
            frag_seq: 0,
            rdma: 0,
            writer_die: die,
            irq_stamp,
        };
        match repr.body {
            OmxBody::Tiny { seq, piggy_ack, match_info, length, .. } => {
                ev = LibEvent {
                    kind: LKind::Tiny,
                    seq: seq as u32,
                    piggy: Some(piggy_ack as u32),
                    tag: match_info,
                    size: length as u64,
                    ..ev
                };
            }
            OmxBody::Small { seq, piggy_ack, match_info, length, .. } => {
                ev = LibEvent {
                    kind: LKind::Small,
                    seq: seq as u32,
                    piggy: Some(piggy_ack as u32),
                    tag: match_info,
                    size: length as u64,
                    ..ev
                };
            }
            OmxBody::Medium { seq, piggy_ack, match_info, msg_length, frag_seq, frag_length, .. } => {
                ev = LibEvent {
                    kind: LKind::MediumFrag,
                    seq: seq as u32,
                    piggy: Some(piggy_ack as u32),
                    tag: match_info,
                    size: msg_length as u64,
                    frag_len: frag_length as u32,
                    frag_seq,
                    ..ev
                };
            }
            OmxBody::Rndv { seq, piggy_ack, match_info, msg_length, rdma_id, .. } => {
                ev = LibEvent {
                    kind: LKind::Rndv,
                    seq: seq as u32,
                    piggy: Some(piggy_ack as u32),
                    tag: match_info,
                    size: msg_length as u64,
                    rdma: rdma_id as u32,
                    ..ev
                };
            }
            OmxBody::Notify { seq, piggy_ack, total_length, puller_rdma_id, .. } => {
                ev = LibEvent {
                    kind: LKind::Notify,
                    seq: seq as u32,
                    piggy: Some(piggy_ack as u32),
                    size: total_length as u64,
                    rdma: puller_rdma_id as u32,
                    ..ev
                };
            }
            OmxBody::Ack { lib_seqnum, .. } => {
                ev = LibEvent { kind: LKind::Ack, piggy: Some(lib_seqnum as u32), ..ev };
            }
            OmxBody::Pull {
                src_ep,
                total_length,
                frame_index,
                first_frame_offset,
                src_pull_handle,
                src_magic,
                block_length,
                ..
            } => {
                let _ = (src_ep, block_length);
                let local_ep = repr.body.dst_endpoint();
                self.serve_pull(
                    now,
                    h,
                    core,
                    src,
                    local_ep,
                    total_length as u64,
                    first_frame_offset,
                    frame_index,
                    src_pull_handle,
                    src_magic,
                );
                return;
            }
            OmxBody::PullReply { msg_offset, dst_pull_handle, .. } => {
                self.pull_reply_arrived(now, h, core, dst_pull_handle, msg_offset);
                return;
            }
        }
        self.post_event(now, h, p, ev);
    }

    /// Writes an event into a process's ring and makes it notice.
    pub(crate) fn post_event(&mut self, now: Instant, h: usize, p: usize, ev: LibEvent) {
        let pr = &mut self.hosts[h].procs[p];
        pr.ring.push_back(ev);
        self.notify_proc(now, h, p);
    }

    /// The process has something to do: wake it if it polls or sleeps.
    pub(crate) fn notify_proc(&mut self, now: Instant, h: usize, p: usize) {
        let hs = &mut self.hosts[h];
        let pr = &mut hs.procs[p];
        let core = pr.core as usize;
        match pr.state {
            PState::Polling => {
                pr.state = PState::Ready;
                let ep = pr.ep;
                if let Some(t0) = pr.poll_since.take() {
                    hs.spin_time += now.since(t0);
                }
                let q = hs.steering.queue_for(Some(ep), 0);
                self.release_suspension(now, h, q);
                self.dispatch_at(now, h, core);
            }
            PState::Blocked => {
                pr.state = PState::Waking;
                self.dispatch_at(now, h, core);
            }
            PState::Done => {
                pr.state = PState::Ready;
                self.dispatch_at(now, h, core);
            }
            _ => {}
        }
    }
}
