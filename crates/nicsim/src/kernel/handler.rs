//! The Open-MX receive handler (`omx_recv`, run by the bottom half after
//! the driver's `myri10ge_rx_done`), the last part of the host's receive
//! path: what a received frame costs the driver and the handler
//! ([`price`]), and what the handler makes of it ([`RxPath::handle`]: a
//! [`Verdict`] the world routes: an event for a process's ring, a pull
//! request to serve, a pull reply, or a drop and its reason). Who wrote
//! what the handler produced is an enum ([`RxBy`]): a core's bottom half,
//! or the NIC itself (native MX).
//!
//! Like the rest of `crate::kernel` it takes what it reads as arguments
//! and never schedules, posts or frees: the world's `sim/kernel.rs`
//! charges the price on the core, and routes the verdict (the library's
//! ring, the drivers' pulls, the drop counters).

use super::RxPath;
use crate::costs::Costs;
use crate::host::cache::footprint::Path;
use crate::host::{CacheStats, HostLines, Obj, Owner, Side, Topology};
use crate::library::{Proc, Writer};
use crate::nic::steering::Steering;
use crate::proto::Msg;
use crate::time::Duration;
use crate::wire::{FrameRepr, OmxBody};

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
    pub(crate) fn writer(self, topo: &Topology) -> Writer {
        match self {
            RxBy::Core(core) => Writer::die(topo.die_of(core as u16)),
            RxBy::Nic => Writer::Memory,
        }
    }
}

/// What the handler reads to price a frame, made by the world: the
/// host's costs, topology, cache counters and kernel lines, its steering
/// (where DCA put the frame), its endpoint table and its processes (the
/// endpoint's and ring's objects the handler touches).
pub(crate) struct HandlerCx<'a> {
    pub c: &'a Costs,
    pub topo: &'a Topology,
    pub cache: &'a mut CacheStats,
    pub lines: &'a mut HostLines,
    pub steering: &'a Steering,
    /// Endpoint -> process index.
    pub eps: &'a [Option<u16>],
    pub procs: &'a mut [Proc],
}

/// CPU cost of the driver and the Open-MX handler on `core` for a
/// received frame (`repr`, `None` if malformed) of receive queue `q`,
/// charged by the bottom half before the handler's verdict is routed: the
/// driver's per-frame work, the endpoint, event-ring and pull-handle lines
/// the handler touches (`pull_obj`: for a pull reply's handle and byte
/// offset, the handle's object if this host holds it, and whether the
/// handle still wants the reply) and the payload it copies out of the DMA
/// buffer, or the drop of a frame that is malformed or finds no endpoint.
#[inline(always)]
pub(crate) fn price<'p>(
    cx: HandlerCx<'_>,
    core: usize,
    repr: Option<FrameRepr>,
    q: usize,
    pull_obj: impl FnOnce(u32, u32) -> (Option<&'p mut Obj>, bool),
) -> Duration {
    let HandlerCx { c, topo, cache, lines: klines, steering, eps, procs } = cx;
    let cc = &c.cc;
    let at = topo.cpu(core as u16);
    let Some(repr) = repr else {
        return c.host.driver_rx + c.host.handler_drop;
    };
    let ep = repr.body.dst_endpoint();
    let Some(p) = eps[ep as usize] else {
        return c.host.driver_rx + c.host.handler_drop;
    };
    // myri10ge_rx_done, the restock of its buffer (myri10ge_alloc_rx_pages,
    // at the poll's end), then omx_recv: their footprints' lines.
    let runs = [(Path::RxFrame, q), (Path::Restock, q), (Path::OmxRecv, ep as usize)];
    let mut cost = klines.paths(cc, topo, cache, runs, at);
    let (ep_obj, ring_obj, lines) = procs[p as usize].shared();
    cost +=
        c.host.driver_rx + c.host.handler + cc.access(topo, cache, ep_obj, at, Side::Kernel, c.cache.endpoint_lines);
    let payload = repr.body.payload_len() as u64;
    // Where the DMA put the frame: memory, or with DCA the cache of the
    // core that serves the queue.
    let dma_src = if c.dca { Owner::die(topo.die_of(steering.nominal_core(q))) } else { Owner::MEMORY };
    // The receive completion and the headers the NIC wrote, and this
    // die's skb and driver state: counted, their time is in `driver_rx`
    // (see `host/cache.rs`).
    let mut dma = Obj::dma_written(cache, dma_src);
    cc.touch(cache, &mut dma, at, Side::Kernel, (c.cache.rx_dma_lines - c.rx_lines_saved) as u64);
    if c.rx_lines_saved > 0 {
        // Packet shifting: the status word shares the headers' line, so
        // the completion entry's line (in `driver_rx`) is not read.
        cost = cost.saturating_sub(cc.line(topo, dma_src, at.die).times(c.rx_lines_saved as u64));
    }
    let mut dma = Obj::dma_written(cache, dma_src);
    cc.touch(cache, &mut klines.kernel[core], at, Side::Kernel, c.cache.kernel_private_lines as u64);
    match repr.body {
        OmxBody::Pull { .. } => {}
        OmxBody::PullReply { dst_pull_handle, msg_offset, .. } => {
            let (handle, wanted) = pull_obj(dst_pull_handle, msg_offset);
            // Copy from the DMA buffer (memory) into the pinned region (or
            // hand it to the copy engine). With `host.pull_dup_check`, as
            // Open-MX's `omx_recv_pull_reply` (driver/linux/omx_pull.c)
            // does, only a reply the handle still wants: a duplicate or a
            // reply for a closed handle is dropped at the handle's bitmap
            // test, before `omx_user_region_fill_pages`.
            if wanted || !c.pull_dup_check {
                cost += if c.ioat {
                    c.host.ioat_submit
                } else {
                    cc.copy(cache, &mut dma, Some(&mut lines.app), at, Side::Kernel, payload)
                };
            }
            // Update the pull handle (wherever it was last touched). A
            // stale reply (its handle since reused by another host) finds
            // no handle here: the handler drops it.
            if let Some(obj) = handle {
                cost += cc.access(topo, cache, obj, at, Side::Kernel, c.cache.pull_lines);
            }
        }
        _ => {
            cost += cc.access(topo, cache, ring_obj, at, Side::Kernel, c.cache.event_lines);
            if matches!(repr.body, OmxBody::Small { .. } | OmxBody::Medium { .. }) {
                // Into the next slot of the receive queue.
                let slot = lines.slot_to_write();
                cost += cc.copy(cache, &mut dma, Some(slot), at, Side::Kernel, payload);
            }
        }
    }
    cost
}

/// What the handler makes of a received frame ([`RxPath::handle`]), for
/// the world to route.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Verdict {
    /// Not an Open-MX frame (malformed; a replayed frame of other traffic
    /// is delivered).
    NotOmx,
    /// The host's kernel echo answers it.
    Echo(FrameRepr),
    /// No endpoint is open at its destination.
    NoEndpoint,
    /// A library message from an endpoint no rank holds, for process `p`.
    Unranked { p: usize },
    /// A library message for process `p` from rank `peer`.
    Event { p: usize, msg: Msg, peer: u16 },
    /// A pull request for process `p`'s endpoint `ep`.
    Pull { p: usize, ep: u8, body: OmxBody },
    /// A pull reply for pull handle `handle` at `offset`, to process `p`'s
    /// endpoint.
    PullReply { p: usize, handle: u32, offset: u32 },
}

impl RxPath {
    /// The handler takes a received frame (`repr`, `None` if malformed):
    /// it counts it and decides ([`Verdict`]). `echo`:
    /// the host runs the kernel echo; `eps`: endpoint -> process;
    /// `rank_of(ep)`: the rank at endpoint `ep` of the sending host, if
    /// any.
    #[inline(always)]
    pub(crate) fn handle(
        &mut self,
        repr: Option<FrameRepr>,
        echo: bool,
        eps: &[Option<u16>],
        rank_of: impl FnOnce(u8) -> Option<u16>,
    ) -> Verdict {
        self.rx_frames += 1;
        let Some(repr) = repr else { return Verdict::NotOmx };
        if echo {
            return Verdict::Echo(repr);
        }
        let ep = repr.body.dst_endpoint();
        let Some(p) = eps[ep as usize] else { return Verdict::NoEndpoint };
        let p = p as usize;
        let peer = rank_of(repr.body.src_endpoint().unwrap_or(0));
        match (Msg::parse(&repr.body), peer) {
            (Some(msg), Some(peer)) => Verdict::Event { p, msg, peer },
            (Some(_), None) => Verdict::Unranked { p },
            (None, _) => match repr.body {
                OmxBody::Pull { .. } => Verdict::Pull { p, ep, body: repr.body },
                OmxBody::PullReply { msg_offset, dst_pull_handle, .. } => {
                    Verdict::PullReply { p, handle: dst_pull_handle, offset: msg_offset }
                }
                _ => unreachable!("every other body is a library message"),
            },
        }
    }
}
