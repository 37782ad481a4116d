//! The Open-MX receive handler (bottom half, after its cost was paid) and
//! the event ring: a received frame becomes a library event ([`LibEvent`])
//! in its endpoint's ring, or goes to the pull protocol; and the process
//! that owns the ring is made to notice.
//!
//! This module owns the frame -> event step and its price (`handler_cost`:
//! the driver's and the handler's work per frame, which the bottom half in
//! `kernel` charges before the handler runs). It does not schedule that
//! work on a core (`kernel`) nor act on the event (`crate::library`).

use super::{World, NO_RANK};
use crate::host::cache::footprint::Path;
use crate::library::{LibEvent, Notice, Writer};
use crate::proto::Msg;
use crate::time::{Duration, Instant};
use crate::wire::OmxBody;

/// What handles a received frame: the bottom half on a core, or the NIC
/// itself (native MX: its firmware writes the event and the data to user
/// memory and serves pulls, without the host's CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RxBy {
    Core(usize),
    Nic,
}

impl RxBy {
    /// Where what it writes is: the core's die, or memory.
    pub(crate) fn writer(self, topo: &crate::host::Topology) -> Writer {
        match self {
            RxBy::Core(core) => Writer::die(topo.die_of(core as u16)),
            RxBy::Nic => Writer::Memory,
        }
    }
}

impl World {
    /// CPU cost of the driver and the Open-MX handler for received frame
    /// `frame` on `core` (charged by the bottom half before
    /// [`World::handle_frame`] runs): the driver's per-frame work, the
    /// endpoint, event-ring and pull-handle lines the handler touches and
    /// the payload it copies out of the DMA buffer, or the drop of a frame
    /// that is malformed or finds no endpoint.
    #[inline(always)]
    pub(super) fn handler_cost(&mut self, h: usize, core: usize, frame: u32) -> Duration {
        use crate::host::Side::Kernel;
        let at = self.topo.cpu(core as u16);
        let c = &self.c;
        let hs = &mut self.hosts[h];
        let Some(repr) = self.frames[frame as usize].parsed else {
            return c.host.driver_rx + c.host.handler_drop;
        };

        let ep = repr.body.dst_endpoint();
        let Some(p) = hs.eps[ep as usize] else {
            return c.host.driver_rx + c.host.handler_drop;
        };
        // myri10ge_rx_done, then omx_recv: their footprints' lines.
        let q = self.frames[frame as usize].q as usize;
        let mut cost =
            hs.lines.paths(&self.cc, &self.topo, &mut hs.cache, (Path::RxFrame, q), (Path::OmxRecv, ep as usize), at);
        let (ep_obj, ring_obj, lines) = hs.procs[p as usize].shared();
        cost += c.host.driver_rx
            + c.host.handler
            + self.cc.access(&self.topo, &mut hs.cache, ep_obj, at, Kernel, c.cache.endpoint_lines);
        let payload = repr.body.payload_len() as u64;
        // Where the DMA put the frame: memory, or with DCA the cache of
        // the core that serves the queue.
        let dma_src = if c.dca {
            crate::host::Owner::Die(self.topo.die_of(hs.steering.nominal_core(self.frames[frame as usize].q as usize)))
        } else {
            crate::host::Owner::Memory
        };
        // The receive completion and the headers the NIC wrote, and
        // this die's skb and driver state: counted, their time is in
        // `driver_rx` (see `host/cache.rs`).
        let mut dma = crate::host::Obj::dma_written(&hs.cache, dma_src);
        self.cc.touch(&mut hs.cache, &mut dma, at, Kernel, (c.cache.rx_dma_lines - c.rx_lines_saved) as u64);
        if c.rx_lines_saved > 0 {
            // Packet shifting: the status word shares the headers' line, so
            // the completion entry's line (in `driver_rx`) is not read.
            cost = cost.saturating_sub(self.cc.line(&self.topo, dma_src, at.die).times(c.rx_lines_saved as u64));
        }
        let mut dma = crate::host::Obj::dma_written(&hs.cache, dma_src);
        self.cc.touch(&mut hs.cache, &mut hs.lines.kernel[core], at, Kernel, c.cache.kernel_private_lines as u64);
        match repr.body {
            OmxBody::Pull { .. } => {}
            OmxBody::PullReply { dst_pull_handle, .. } => {
                // Copy from the DMA buffer (memory) into the pinned region
                // (or hand it to the copy engine), and update the pull
                // handle (wherever it was last touched).
                cost += if c.ioat {
                    c.host.ioat_submit
                } else {
                    self.cc.copy(&mut hs.cache, &mut dma, Some(&mut lines.app), at, Kernel, payload)
                };
                // A stale reply (its handle since reused by another
                // host) finds no handle here: the handler drops it.
                let i = dst_pull_handle as usize;
                let mine = self.pulls.handles.get(i).is_some_and(|hd| hd.host as usize == h);
                if let Some(obj) = self.pulls.objs.get_mut(i).filter(|_| mine) {
                    cost += self.cc.access(&self.topo, &mut hs.cache, obj, at, Kernel, c.cache.pull_lines);
                }
            }
            _ => {
                cost += self.cc.access(&self.topo, &mut hs.cache, ring_obj, at, Kernel, c.cache.event_lines);
                if matches!(repr.body, OmxBody::Small { .. } | OmxBody::Medium { .. }) {
                    // Into the next slot of the receive queue.
                    let slot = lines.slot_to_write();
                    cost += self.cc.copy(&mut hs.cache, &mut dma, Some(slot), at, Kernel, payload);
                }
            }
        }
        cost
    }

    pub(super) fn handle_frame(&mut self, now: Instant, h: usize, by: RxBy, frame: u32) {
        let (src, irq_stamp) = (self.frames[frame as usize].src, self.frames[frame as usize].irq_stamp);
        let parsed = self.frames[frame as usize].parsed;
        if self.replay.is_some() {
            self.replay_handled(now, frame);
        }
        self.free_frame(frame);
        self.frames.handled += 1;
        let hs = &mut self.hosts[h];
        hs.rx.frame_handled();
        let Some(repr) = parsed else {
            // A replayed frame that is not Open-MX is generic traffic,
            // delivered here (`replay`); any other is malformed.
            if self.replay.is_none() {
                self.frames.drops.malformed += 1;
            }
            return;
        };
        if hs.echoes_at(crate::config::EchoAt::Kernel) {
            self.kernel_echo(now, h, &repr);
            return;
        }
        let ep = repr.body.dst_endpoint();
        let Some(p) = hs.eps[ep as usize] else {
            self.frames.drops.no_endpoint += 1;
            return;
        };
        let p = p as usize;
        let writer = by.writer(&self.topo);
        if by == RxBy::Nic {
            self.hosts[h].procs[p].nic_writes_ring();
        }
        let src_ep = repr.body.src_endpoint().unwrap_or(0);
        let peer = self.ranks.at(src as usize, src_ep as usize);
        if peer == NO_RANK && !matches!(repr.body, OmxBody::Pull { .. } | OmxBody::PullReply { .. }) {
            self.frames.drops.no_endpoint += 1;
            return;
        }
        match Msg::parse(&repr.body) {
            Some(msg) => {
                if self.hosts[h].procs[p].ring_full() {
                    // The library did not release slots fast enough: the
                    // frame is dropped and the sender resends it.
                    self.frames.drops.event_queue_full += 1;
                    return;
                }
                self.post_event(now, h, p, LibEvent { msg, peer, writer, irq_stamp }, by)
            }
            None => match repr.body {
                OmxBody::Pull {
                    total_length, block_length, first_frame_offset, src_pull_handle, src_magic, ..
                } => {
                    let local_ep = repr.body.dst_endpoint();
                    let size = total_length as u64;
                    let (first, len) = (first_frame_offset, block_length);
                    self.serve_pull(now, h, by, src, local_ep, size, first, len, src_pull_handle, src_magic);
                }
                OmxBody::PullReply { msg_offset, dst_pull_handle, .. } => {
                    self.pull_reply_arrived(now, h, by, dst_pull_handle, msg_offset);
                }
                _ => unreachable!("every other body is a library message"),
            },
        }
    }

    /// The process has something to do: wake it if it polls or sleeps.
    pub(crate) fn notify_proc(&mut self, now: Instant, h: usize, p: usize) {
        let hs = &mut self.hosts[h];
        let pr = &mut hs.procs[p];
        match pr.notice() {
            Notice::Poller(since) => {
                let (core, ep) = (pr.core() as usize, pr.ep());
                if let Some(t0) = since {
                    hs.spin_time += now.since(t0);
                    if let Some(t) = self.trace.as_deref_mut() {
                        t.spin(h, core, t0, now);
                    }
                }
                hs.stop_polling(p);
                // Only busy polling with irq_suspend_timeout suspends a
                // queue's interrupt (`wait_polling`).
                if !self.c.irq_suspend.is_zero() {
                    let q = hs.steering.queue_for(Some(ep), 0);
                    self.release_suspension(now, h, q);
                }
                self.dispatch_at(now, h, core);
            }
            Notice::Woken => {
                let core = pr.core() as usize;
                self.dispatch_at(now, h, core);
            }
            Notice::None => {}
        }
    }
}
