//! Large messages: the drivers' pull protocol. The receiver's library
//! asks for a pull handle (`open_pull`) and starts it (`pull_start`); the
//! receiver's driver requests blocks
//! of replies and re-requests them on a timeout; the sender's driver (or its
//! NIC, native MX) serves each request with a block of pull replies; the last
//! reply (or the copy engine's last copy) completes the pull.
//!
//! This file owns the pulls' addressing, frames, timer events and copies
//! (I/OAT). Which replies and blocks are wanted and due is decided by
//! `crate::proto::{PullHandle, PullServe}`; pricing lives in `kernel` and
//! `crate::library`.

use super::RxBy;
use super::{Ev, KWork, World};
use crate::host::{Obj, ObjClass};
use crate::library::{LibEvent, Writer};
use crate::proto::{Kind, Msg, OnReply, OnTimer, PullHandle, PullServe, RESENDS_MAX};
use crate::time::{Duration, Instant};
use crate::wire::{self, FrameRepr, OmxBody, PacketKind};

use super::trace::DropClass;

/// A pull of the receiver's driver: the protocol's handle, and what the pull
/// is of and for.
#[derive(Clone, Debug)]
pub(crate) struct Pull {
    pub proto: PullHandle,
    /// The pulling (host, endpoint) and the receive request it completes.
    pub host: u16,
    pub ep: u8,
    pub req: u32,
    /// The sender (host, endpoint) being pulled from, and its region id.
    pub peer_host: u16,
    pub peer_ep: u8,
    pub rdma_id: u8,
    pub size: u64,
    /// When the copy engine will have finished this pull's copies (I/OAT).
    pub copies_done: Instant,
    /// The time of the handle's queued `PullTimer` event (`None`: none). A
    /// handle has at most one: its timer is never cancelled when a pull
    /// completes, so a handle reused before its last pull's event fired
    /// keeps that event, which comes before the new pull's first deadline
    /// and is re-armed at it ([`PullHandle::on_timer`] waits until then).
    /// An event for every pull would leave one more per pull started while
    /// its handle stayed in use, and the queue would grow with the run.
    pub timer: Option<Instant>,
}

/// A pull request being served by the sender's driver.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Serve {
    pub live: bool,
    pub dst: u16,
    /// The local endpoint whose memory is pulled.
    pub ep: u8,
    pub handle: u32,
    pub magic: u32,
    pub proto: PullServe,
}

/// The drivers' pull handles (with their cache-model state, same index)
/// and the pull requests being served, each a slab whose slots are reused.
#[derive(Default)]
pub(crate) struct Pulls {
    pub handles: Vec<Pull>,
    pub objs: Vec<Obj>,
    free: Vec<u32>,
    pub serves: Vec<Serve>,
    free_serves: Vec<u32>,
    /// Pull timers that found no reply for a whole timeout and asked again.
    pub timeouts: u64,
}

impl Pulls {
    /// The object of pull handle `i` if host `h` holds it (a stale reply's
    /// handle may since have been reused by another host).
    #[inline(always)]
    pub(crate) fn obj_of(&mut self, i: u32, h: usize) -> Option<&mut Obj> {
        let i = i as usize;
        let mine = self.handles.get(i).is_some_and(|hd| hd.host as usize == h);
        self.objs.get_mut(i).filter(|_| mine)
    }

    /// What the handler finds for a pull reply at byte `offset` of handle
    /// `i` on host `h`: the handle's object if `h` holds it, and whether
    /// the handle still wants that reply (a duplicate, or a reply for a
    /// closed or reused handle, is not copied: `host.pull_dup_check`).
    #[inline(always)]
    pub(crate) fn reply_target(&mut self, i: u32, h: usize, offset: u32, per: u32) -> (Option<&mut Obj>, bool) {
        let wanted =
            self.handles.get(i as usize).is_some_and(|hd| hd.host as usize == h && hd.proto.wants(offset / per.max(1)));
        (self.obj_of(i, h), wanted)
    }

    /// A handle for `hd`. A reused handle keeps its queued timer event
    /// (see [`Pull::timer`]).
    fn open(&mut self, hd: Pull) -> u32 {
        if let Some(i) = self.free.pop() {
            let timer = self.handles[i as usize].timer;
            self.handles[i as usize] = Pull { timer, ..hd };
            self.objs[i as usize] = Obj::new(ObjClass::PullHandle);
            i
        } else {
            self.handles.push(hd);
            self.objs.push(Obj::new(ObjClass::PullHandle));
            (self.handles.len() - 1) as u32
        }
    }

    /// Handle `handle`'s pull completed: the handle is free again.
    fn close(&mut self, handle: u32) {
        self.free.push(handle);
    }

    /// A slot for serving request `s`.
    fn serve(&mut self, s: Serve) -> u32 {
        if let Some(i) = self.free_serves.pop() {
            self.serves[i as usize] = s;
            i
        } else {
            self.serves.push(s);
            (self.serves.len() - 1) as u32
        }
    }

    /// Request `serve` got its last reply.
    fn served(&mut self, serve: u32) {
        self.serves[serve as usize].live = false;
        self.free_serves.push(serve);
    }
}

impl World {
    /// Endpoint `ep` of host `h` asks for a pull handle for its receive
    /// `req` of the rendezvous `ev` (`crate::library::Output::OpenPull`):
    /// the handle, and its blocks.
    pub(super) fn open_pull(&mut self, now: Instant, h: usize, ep: u8, req: u32, ev: LibEvent) -> (u32, u32) {
        let size = ev.msg.size;
        let replies = self.env.c.layout.pull_reply_count(size as usize) as u32;
        let (peer_host, peer_ep) = self.env.ranks[ev.peer as usize];
        let hd = Pull {
            proto: PullHandle::new(now, replies, self.env.c.layout.block_replies as u32),
            host: h as u16,
            ep,
            req,
            peer_host,
            peer_ep,
            rdma_id: ev.msg.rdma as u8,
            size,
            copies_done: Instant::ZERO,
            timer: None,
        };
        let id = self.pulls.open(hd);
        (id, self.pulls.handles[id as usize].proto.blocks())
    }

    /// The library's pull start was handed to the driver: it requests the
    /// first blocks and starts the pull timer.
    pub(super) fn pull_start(&mut self, now: Instant, h: usize, handle: u32) {
        for b in self.pulls.handles[handle as usize].proto.start() {
            let f = self.pull_frame(handle, b);
            self.transmit(now, h, f);
        }
        let at = self.pull_due(h, now);
        let hd = &mut self.pulls.handles[handle as usize];
        match hd.timer {
            // The slot's timer, queued for its last pull, fires first and
            // re-arms for this one (`OnTimer::Wait`).
            Some(queued) if queued <= at => {}
            // None queued; or the slot's last pull was another host's, whose
            // jiffy grid (`sim/tick.rs`) put its timer up to a jiffy after
            // this one's: this pull's own is queued, and the other goes
            // stale (`pull_timer`).
            _ => {
                hd.timer = Some(at);
                self.q.push(at, h as u32, Ev::PullTimer { handle });
            }
        }
    }

    /// A PULL request for `block_length` bytes starting at reply `first` of
    /// a `size`-byte message arrived from host `dst` for local endpoint
    /// `ep`.
    pub(super) fn serve_pull(
        &mut self,
        now: Instant,
        h: usize,
        by: RxBy,
        dst: u16,
        ep: u8,
        size: u64,
        first: u32,
        block_length: u32,
        handle: u32,
        magic: u32,
    ) {
        let per = self.env.c.layout.pull_reply as u64;
        let count = (block_length as u64).div_ceil(per) as u32;
        let s = Serve {
            live: true,
            dst,
            ep,
            handle,
            magic,
            proto: PullServe::new(first, count, size, per, self.env.c.layout.block_replies as u32),
        };
        let id = self.pulls.serve(s);
        if self.env.c.native {
            // The NIC firmware serves the pull: every reply goes straight to
            // its transmit queue, no host CPU.
            while self.pulls.serves[id as usize].live {
                self.send_pull_reply(now, h, RxBy::Nic, id);
            }
            return;
        }
        // The handler sends the replies inline, before the poll goes on.
        if let RxBy::Core(core) = by {
            self.hosts[h].cores[core].kq.push_front(KWork::PullReply { serve: id });
        }
    }

    pub(super) fn send_pull_reply(&mut self, now: Instant, h: usize, by: RxBy, serve: u32) {
        let s = &mut self.pulls.serves[serve as usize];
        let r = s.proto.next_reply();
        let (dst, ep) = (s.dst, s.ep);
        let repr = FrameRepr {
            dst_mac: wire::host_mac(dst),
            src_mac: wire::host_mac(h as u16),
            src_peer: h as u16,
            marked: self.env.c.marked.marks(PacketKind::PullReply, r.last_in_block),
            body: OmxBody::PullReply {
                frame_seqnum: (r.idx % 256) as u8,
                frame_length: r.len as u16,
                msg_offset: r.offset as u32,
                dst_pull_handle: s.handle,
                dst_magic: s.magic,
            },
        };
        let id = self.new_frame(h as u16, dst, &repr);
        self.frames[id as usize].src_ep = ep;
        self.transmit(now, h, id);
        if !r.done {
            if let RxBy::Core(core) = by {
                self.hosts[h].cores[core].kq.push_front(KWork::PullReply { serve });
            }
        } else {
            self.pulls.served(serve);
        }
    }

    pub(super) fn pull_reply_arrived(&mut self, now: Instant, h: usize, by: RxBy, handle: u32, offset: u32) {
        let per = self.env.c.layout.pull_reply as u32;
        let Some(hd) = self.pulls.handles.get_mut(handle as usize).filter(|hd| hd.proto.live() && hd.host == h as u16)
        else {
            self.frames.drops.stale_pull += 1;
            return;
        };
        let idx = offset / per;
        let on = hd.proto.process(now, idx);
        if on == OnReply::Duplicate {
            self.frames.drops.duplicate += 1;
            return;
        }
        if self.env.c.ioat && !self.env.c.native {
            // The copy engine works through its descriptors in order.
            let bytes = (hd.size - idx as u64 * per as u64).min(per as u64);
            let hs = &mut self.hosts[h];
            let done = now.max(hs.ioat_free) + Duration::for_bytes(bytes, self.env.c.host.ioat_bytes_per_s);
            hs.ioat_free = done;
            hd.copies_done = hd.copies_done.max(done + self.env.c.host.ioat_completion);
        }
        match on {
            OnReply::Complete => {
                let writer = by.writer(&self.env.topo);
                if hd.copies_done > now {
                    let at = hd.copies_done;
                    let die = match writer {
                        Writer::Die(d) => d,
                        Writer::Memory => u8::MAX,
                    };
                    self.q.push(at, h as u32, Ev::PullCopied { host: h as u16, handle, die });
                } else {
                    self.pull_done(now, h, handle, writer, by);
                }
            }
            OnReply::Request(blocks) => {
                // The window moved: request the blocks that entered it (the
                // driver, from the handler).
                for b in blocks.iter() {
                    let f = self.pull_frame(handle, b);
                    self.transmit(now, h, f);
                }
            }
            OnReply::Rerequest(blocks) => self.rerequest(now, h, handle, blocks.start, blocks.end),
            OnReply::Progress | OnReply::Duplicate => {}
        }
    }

    /// The copy engine finished the last copy of a completed pull
    /// (`Ev::PullCopied`, whose `die` is the writer's die, `u8::MAX` for
    /// memory).
    pub(super) fn pull_copied(&mut self, now: Instant, h: usize, handle: u32, die: u8) {
        let writer = if die == u8::MAX { Writer::Memory } else { Writer::Die(die) };
        self.pull_done(now, h, handle, writer, RxBy::Nic)
    }

    /// Every reply of a pull is in the receive buffer: tell the library
    /// (`by`: the bottom half that posts the event, or the copy engine's
    /// completion, `RxBy::Nic`).
    pub(super) fn pull_done(&mut self, now: Instant, h: usize, handle: u32, writer: Writer, by: RxBy) {
        let hd = &self.pulls.handles[handle as usize];
        let p = self.hosts[h].eps[hd.ep as usize];
        let msg = Msg { seq: hd.req, size: hd.size, rdma: hd.rdma_id as u32, ..Msg::new(Kind::PullDone) };
        let peer = self.env.ranks.at(hd.peer_host as usize, hd.peer_ep as usize);
        self.pulls.close(handle);
        if let Some(p) = p {
            self.post_event(now, h, p as usize, LibEvent { msg, peer, writer, irq_stamp: 0 }, by);
        }
    }

    /// What frame `frame`, arriving at host `h`, is to its receiver: a pull
    /// reply its pull still misses, one it does not want, or another frame
    /// (the timeline's ring drops, `World::trace_ring_drop`).
    pub(super) fn drop_class(&self, h: usize, frame: u32) -> DropClass {
        let Some(OmxBody::PullReply { msg_offset, dst_pull_handle, .. }) =
            self.frames[frame as usize].parsed.map(|r| r.body)
        else {
            return DropClass::Other;
        };
        let per = self.env.c.layout.pull_reply as u32;
        let wanted = self
            .pulls
            .handles
            .get(dst_pull_handle as usize)
            .is_some_and(|hd| hd.host == h as u16 && hd.proto.wants(msg_offset / per));
        if wanted {
            DropClass::Wanted
        } else {
            DropClass::Unwanted
        }
    }

    /// Builds the PULL request frame for block `b` of a handle.
    pub(crate) fn pull_frame(&mut self, handle: u32, b: u32) -> u32 {
        let (first, replies) = self.pulls.handles[handle as usize].proto.block(b);
        self.pull_request(handle, b, first, replies)
    }

    /// Builds the PULL request frame for `replies` replies of block `b`
    /// starting at reply `first`.
    fn pull_request(&mut self, handle: u32, b: u32, first: u32, replies: u32) -> u32 {
        let hd = &self.pulls.handles[handle as usize];
        let per = self.env.c.layout.pull_reply as u64;
        let block_bytes = (hd.size - (first as u64 * per)).min(per * replies as u64);
        let repr = FrameRepr {
            dst_mac: wire::host_mac(hd.peer_host),
            src_mac: wire::host_mac(hd.host),
            src_peer: hd.host,
            marked: self.env.c.marked.marks(PacketKind::Pull, false),
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
                src_magic: wire::pull_magic(hd.ep),
            },
        };
        let (src, dst) = (hd.host, hd.peer_host);
        self.new_frame(src, dst, &repr)
    }

    /// Requests again the missing part of every requested, incomplete block
    /// of `from..end`.
    fn rerequest(&mut self, now: Instant, h: usize, handle: u32, from: u32, end: u32) {
        let mut from = from;
        while let Some(b) = self.pulls.handles[handle as usize].proto.incomplete_from(from).filter(|&b| b < end) {
            let (first, replies) =
                self.pulls.handles[handle as usize].proto.rerequest_span(b, self.env.c.pull_rerequest);
            let f = self.pull_request(handle, b, first, replies);
            self.transmit(now, h, f);
            from = b + 1;
        }
    }

    /// When a pull timer host `h` arms at `armed` expires: on the kernel's
    /// jiffies with `host.tick.jiffy_timers` (`Ticks::jiffy_expiry`), else
    /// `library.pull_timeout_us` later.
    pub(super) fn pull_due(&self, h: usize, armed: Instant) -> Instant {
        let to = self.env.c.lib.pull_timeout;
        match self.ticks.as_deref().filter(|t| t.jiffy_timers) {
            Some(t) => t.jiffy_expiry(h, armed, to),
            None => armed + to,
        }
    }

    pub(super) fn pull_timer(&mut self, now: Instant, handle: u32) {
        let to = self.env.c.lib.pull_timeout;
        let deadline = self.env.c.proto.resend.times(RESENDS_MAX);
        let jiffies = self.ticks.as_deref().filter(|t| t.jiffy_timers);
        let hd = &mut self.pulls.handles[handle as usize];
        if hd.timer != Some(now) {
            // A stale timer: a later pull of this slot queued its own.
            return;
        }
        hd.timer = None;
        if !hd.proto.live() {
            return;
        }
        let host = hd.host as usize;
        let on = match jiffies {
            Some(t) => hd.proto.on_timer_due(now, |armed| t.jiffy_expiry(host, armed, to), deadline),
            None => hd.proto.on_timer(now, to, deadline),
        };
        match on {
            OnTimer::Wait(at) => {
                hd.timer = Some(at);
                self.q.push(at, host as u32, Ev::PullTimer { handle })
            }
            OnTimer::Rerequest(at) => {
                self.pulls.timeouts += 1;
                self.rerequest(now, host, handle, 0, u32::MAX);
                self.pulls.handles[handle as usize].timer = Some(at);
                self.q.push(at, host as u32, Ev::PullTimer { handle });
            }
            OnTimer::GiveUp => {
                let (size, peer) = (hd.size, hd.peer_host);
                let secs = deadline.as_us_f64() / 1e6;
                self.fail(format!(
                    "pull timed out: host {host} pulled {size} bytes from host {peer} for over {secs} s \
                     (library.resend_us x {RESENDS_MAX}, Open-MX's pull deadline) without completing it{}",
                    self.ring_overflow_note()
                ));
            }
        }
    }
}
