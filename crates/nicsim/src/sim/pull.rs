//! Large messages: the drivers' pull protocol. The receiver's library
//! starts a pull handle (`start_pull`); the receiver's driver requests blocks
//! of replies and re-requests them on a timeout; the sender's driver (or its
//! NIC, native MX) serves each request with a block of pull replies; the last
//! reply (or the copy engine's last copy) completes the pull.
//!
//! This module owns the pull handles' and serves' progress. The handle's
//! bookkeeping lives in `crate::proto::PullHandle`; pricing lives in
//! `kernel` and `lib_path`.

use super::{Ev, KWork, LKind, LibEvent, Out, World, WRITER_MEMORY};
use crate::host::{Obj, ObjClass};
use crate::proto::PullHandle;
use crate::time::{Duration, Instant};
use crate::wire::{self, FrameRepr, OmxBody};

/// Large receives pulled at once per process; later ones wait their turn so
/// that the pull replies in flight (4 blocks of 32 each) fit the receive
/// ring. [estimate: Open-MX serves pulls from a bounded set of handles]
const MAX_ACTIVE_PULLS: u32 = 1;

/// A pull request being served by the sender's driver.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Serve {
    pub live: bool,
    pub dst: u16,
    /// The local endpoint whose memory is pulled.
    pub ep: u8,
    pub handle: u32,
    pub magic: u32,
    pub next: u32,
    pub end: u32,
    pub size: u64,
}

impl World {
    pub(super) fn start_pull(&mut self, now: Instant, h: usize, p: usize, req: u32, ev: LibEvent) {
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

    pub(super) fn serve_pull(
        &mut self,
        now: Instant,
        h: usize,
        core: usize,
        dst: u16,
        ep: u8,
        size: u64,
        first: u32,
        block: u32,
        handle: u32,
        magic: u32,
    ) {
        let _ = block;
        let mtu = self.c.mtu;
        let replies = crate::wire::pull_reply_count(size as usize, mtu) as u32;
        let end = (first + crate::wire::PULL_BLOCK_REPLIES as u32).min(replies);
        let s = Serve { live: true, dst, ep, handle, magic, next: first, end, size };
        let id = if let Some(i) = self.free_serves.pop() {
            self.serves[i as usize] = s;
            i
        } else {
            self.serves.push(s);
            (self.serves.len() - 1) as u32
        };
        if self.c.native {
            // The NIC firmware serves the pull: every reply goes straight to
            // its transmit queue, no host CPU.
            while self.serves[id as usize].live {
                self.send_pull_reply(now, h, usize::MAX, id);
            }
            return;
        }
        // The handler sends the replies inline, before the poll goes on.
        self.hosts[h].cores[core].kq.push_front(KWork::PullReply { serve: id });
        let _ = now;
    }

    pub(super) fn send_pull_reply(&mut self, now: Instant, h: usize, core: usize, serve: u32) {
        let s = self.serves[serve as usize];
        let mtu = self.c.mtu;
        let per = crate::wire::pull_reply_payload(mtu) as u64;
        let idx = s.next;
        let offset = idx as u64 * per;
        let len = (s.size - offset).min(per) as u16;
        let last_in_block = idx + 1 == s.end;
        let marked = self.c.marked.marks(crate::wire::PacketKind::PullReply, last_in_block);
        let repr = FrameRepr {
            dst_mac: crate::wire::host_mac(s.dst),
            src_mac: crate::wire::host_mac(h as u16),
            src_peer: h as u16,
            marked,
            body: OmxBody::PullReply {
                frame_seqnum: (idx % 256) as u8,
                frame_length: len,
                msg_offset: offset as u32,
                dst_pull_handle: s.handle,
                dst_magic: s.magic,
            },
        };
        let id = self.new_frame(h as u16, s.dst, &repr);
        self.frames[id as usize].src_ep = s.ep;
        self.transmit(now, h, id);
        let sv = &mut self.serves[serve as usize];
        sv.next += 1;
        if sv.next < sv.end {
            if core != usize::MAX {
                self.hosts[h].cores[core].kq.push_front(KWork::PullReply { serve });
            }
        } else {
            sv.live = false;
            self.free_serves.push(serve);
        }
    }

    pub(super) fn pull_reply_arrived(&mut self, now: Instant, h: usize, core: usize, handle: u32, offset: u32) {
        let mtu = self.c.mtu;
        let per = crate::wire::pull_reply_payload(mtu) as u32;
        let block = crate::wire::PULL_BLOCK_REPLIES as u32;
        let Some(hd) = self.handles.get_mut(handle as usize).filter(|hd| hd.live && hd.host == h as u16) else {
            self.drops.stale_pull += 1;
            return;
        };
        let idx = offset / per;
        let (new, block_done) = hd.record(idx, block);
        if !new {
            self.drops.duplicate += 1;
            return;
        }
        hd.last_progress = now;
        if self.c.ioat && !self.c.native {
            // The copy engine works through its descriptors in order.
            let bytes = (hd.size - idx as u64 * per as u64).min(per as u64);
            let hs = &mut self.hosts[h];
            let done = now.max(hs.ioat_free) + Duration::for_bytes(bytes, self.c.ioat_bps);
            hs.ioat_free = done;
            hd.copies_done = hd.copies_done.max(done + self.c.ioat_completion);
        }
        if hd.complete() {
            hd.live = false;
            let die = if core == usize::MAX { WRITER_MEMORY } else { self.topo.die_of(core as u16) };
            if hd.copies_done > now {
                let at = hd.copies_done;
                self.q.push(
                    at,
                    h as u32,
                    Ev::PullCopied {
                        host: h as u16,
                        handle,
                        die: if die == WRITER_MEMORY { u8::MAX } else { die as u8 },
                    },
                );
            } else {
                self.pull_done(now, h, handle, die);
            }
        } else if block_done && hd.next_block < hd.blocks {
            // Request the next block (the driver, from the handler).
            let b = hd.next_block;
            hd.next_block += 1;
            hd.missing[b as usize] = hd.block_len(b, block);
            let f = self.pull_frame(handle, b);
            self.transmit(now, h, f);
        }
    }

    /// Every reply of a pull is in the receive buffer: tell the library.
    pub(super) fn pull_done(&mut self, now: Instant, h: usize, handle: u32, die: u16) {
        let hd = &self.handles[handle as usize];
        {
            let (p, req, peer, peer_ep, rdma, size) =
                (self.hosts[h].eps[hd.ep as usize], hd.req, hd.peer_host, hd.peer_ep, hd.rdma_id, hd.size);
            self.free_handles.push(handle);
            if let Some(p) = p {
                let ev = LibEvent {
                    kind: LKind::PullDone,
                    peer: self.rank_of[peer as usize][peer_ep as usize],
                    seq: req,
                    piggy: None,
                    tag: 0,
                    size,
                    frag_len: 0,
                    frag_seq: 0,
                    rdma: rdma as u32,
                    writer_die: die,
                    irq_stamp: 0,
                };
                self.post_event(now, h, p as usize, ev);
            }
        }
    }

    /// Builds the PULL request frame for block `b` of a handle.
    pub(crate) fn pull_frame(&mut self, handle: u32, b: u32) -> u32 {
        let hd = &self.handles[handle as usize];
        let block = crate::wire::PULL_BLOCK_REPLIES as u32;
        let per = crate::wire::pull_reply_payload(self.c.mtu) as u64;
        let first = b * block;
        let block_bytes = (hd.size - (first as u64 * per)).min(per * block as u64);
        let repr = FrameRepr {
            dst_mac: crate::wire::host_mac(hd.peer_host),
            src_mac: crate::wire::host_mac(hd.host),
            src_peer: hd.host,
            marked: self.c.marked.marks(crate::wire::PacketKind::Pull, false),
            body: OmxBody::Pull {
                dst_ep: hd.peer_ep,
                src_ep: hd.ep,
                session: 0,
                total_length: hd.size as u32,
                block_length: block_bytes as u32,
                first_frame_offset: first,
                frame_index: b,
                pulled_rdma_id: hd.rdma_id,
                src_pull_handle: handle,
                src_magic: crate::wire::pull_magic(hd.ep),
            },
        };
        let (src, dst) = (hd.host, hd.peer_host);
        self.new_frame(src, dst, &repr)
    }

    pub(super) fn pull_timer(&mut self, now: Instant, handle: u32) {
        let to = self.c.pull_timeout;
        let Some(hd) = self.handles.get(handle as usize).filter(|hd| hd.live) else { return };
        if now.since(hd.last_progress) < to {
            let at = hd.last_progress + to;
            self.q.push(at, hd.host as u32, Ev::PullTimer { handle });
            return;
        }
        // Re-request every requested block that is still incomplete.
        let host = hd.host as usize;
        let blocks: Vec<u32> = (0..hd.next_block).filter(|&b| hd.missing[b as usize] > 0).collect();
        for b in blocks {
            let f = self.pull_frame(handle, b);
            self.transmit(now, host, f);
        }
        if let Some(hd) = self.handles.get_mut(handle as usize) {
            hd.last_progress = now;
        }
        self.q.push(now + to, host as u32, Ev::PullTimer { handle });
    }
}
