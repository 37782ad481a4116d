//! The cache footprint of each path of the 2009 stack (Open-MX 1.0.901 on
//! Linux 2.6.26 with myri10ge 1.4.4): per path, the data lines it writes
//! that the next core to run the path needs (they follow the interrupt),
//! the lines a DMA wrote (a miss wherever the path runs), the per-CPU and
//! read-mostly lines that stay in the core's caches, and its code.
//!
//! This module owns the table ([`FOOTPRINT`], one row per path) and the
//! objects those written lines live in ([`PathLines`]: the myri10ge slice
//! state per receive queue, the Open-MX interface's counters per host, the
//! refcount line of each endpoint). It does not decide when a path runs:
//! the kernel's stages (`sim/kernel_start.rs`: hard IRQ, NAPI poll, reap, pull
//! replies; `kernel/handler.rs`: each received frame) and the library's send
//! system call (`library::Cx::tx_touch`) call [`super::HostLines::path`]
//! once per run of a path, or [`super::HostLines::paths`] for two paths
//! that run back to back on one core.
//! A new path adds a [`Path`], its row here and one such call.
//!
//! Under a single interrupt dispatched round-robin, each interrupt runs on
//! the next core and misses every line the last one wrote (another die's,
//! or modified in the sibling core's L1), paying a transfer from another
//! die; under a bound interrupt they stay. That is the "cache-line
//! bounces" of [OMX-MQ] §4.2, and Table II's kernel misses that depend on
//! the binding.
//!
//! The lines a path shares with a structure the cache model already has
//! are not repeated here: the endpoint (`cache.endpoint_lines`), the event
//! slot (`cache.event_lines`), the transmit ring's `req`/`done` lines, its
//! `info` entries and the skbs it frees (`cache.tx_lines`), the receive
//! completion entry and the frame's header (`cache.rx_dma_lines`), the
//! skbs of the receive path (`cache.kernel_private_lines`), the pull
//! handle (`cache.pull_lines`), the receive queue's slots and the copies.
//!
//! Sizes: docs/paths-2009.md, "Structure sizes" and "Footprint of each
//! path". Each path's code is `code::CODE`'s, fetched through the core's
//! L1I by `HostLines` beside these data lines (`code`).

pub use super::Step;
use super::{CacheCosts, CacheStats, Obj, ObjClass, ReadCopy, Side, Walk};
use crate::host::topology::{Cpu, Topology};
use crate::time::Duration;

/// A path of the 2009 stack with a row in [`FOOTPRINT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// `do_IRQ` → `myri10ge_intr`, per interrupt.
    HardIrq = 0,
    /// `myri10ge_tx_done`, per reap of transmit completions.
    TxDone = 1,
    /// `net_rx_action` → `myri10ge_poll` → `myri10ge_clean_rx_done`, per poll.
    NapiPoll = 2,
    /// `myri10ge_rx_done`, per received frame.
    RxFrame = 3,
    /// Open-MX `omx_recv`, per received frame (before its type's handler).
    OmxRecv = 4,
    /// Open-MX `omx_queue_xmit`, per send (the library's send ioctl, a
    /// pull reply the bottom half sends).
    OmxSend = 5,
    /// The library's send system call into the Open-MX driver, per call
    /// (`sys_ioctl` → `omx_miscdev_ioctl` → `omx_ioctl_send_*`), before
    /// `omx_queue_xmit`.
    SendIoctl = 6,
    /// `myri10ge_alloc_rx_pages`, per buffer the NAPI poll gives back to
    /// the NIC (one per received frame).
    Restock = 7,
}

/// Number of [`Path`] values (rows of [`FOOTPRINT`]).
pub const PATHS: usize = 8;

/// Which object holds a path's written lines: the receive queue's slice
/// state, split by the step that writes it, or the host's Open-MX
/// interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    /// `irq_desc` (lock, status).
    Irq = 0,
    /// The NAPI struct and the `rx_done` ring's header.
    Poll = 1,
    /// `rx_small`/`rx_big` counters, their `info` entries, the buffer's page.
    Rx = 2,
    /// The slice's `stats`, written by the poll (receive) and the hard IRQ
    /// (transmit completions).
    Stats = 3,
    /// What the restock writes: the refilled entry's `info` and `shadow`,
    /// the `struct page` of the page it carves buffers from.
    Fill = 4,
    /// The interface's `counters[]` (one line holds the hot ones).
    Iface = 5,
    /// The driver's endpoint's line 0, its `refcount` (`kref_get` and
    /// `kref_put` around each frame), per endpoint.
    EpRef = 6,
}

/// Objects per receive queue ([`Held`] values but `Iface` and `EpRef`).
const SLICE_OBJS: usize = 5;

/// One path's lines, per run of it.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// Written lines, in up to two objects.
    pub written: [(Held, u32); 2],
    /// Where each of `written`'s lines stands in the path's dependency
    /// chain ([`Step`]): the lines of one step are in flight together.
    pub steps: [Step; 2],
    /// Lines a DMA wrote that the path reads, or that a DMA read out of
    /// the core's cache and the path writes again (a miss wherever the
    /// path runs; counted in class `driver`).
    pub dma: u32,
    /// Per-CPU and read-mostly lines (the core's own; they stay).
    pub stay: u32,
}

/// The footprint of each path, indexed by [`Path`]; counts are 64 B lines.
pub const FOOTPRINT: [Row; PATHS] = [
    // HardIrq: irq_desc lock and status written, 2 [estimate]; mcp_irq_data (64 B) DMA-written, 1 [fact] myri10ge_mcp.h@1.4.4 L399-430, read by myri10ge_intr (myri10ge.c@1.4.4 L1524-1582); softnet_data and mgp, 2 stay [estimate]; code 25-40 [estimate]: code.rs
    // HardIrq steps: do_IRQ loads desc->handle_irq (line 0 of struct irq_desc, with status and irq_count) to call handle_edge_irq, whose spin_lock(&desc->lock) (line 1, offset 80 on x86_64: include/linux/irq.h of 2.6.26) is a locked instruction the load must complete before: a chain of 2 [estimate: the layout; the order, SDM Vol. 3A 8.2.2]
    Row { written: [(Held::Irq, 2), (Held::Irq, 0)], steps: [Step::chain(0), Step::at(0)], dma: 1, stay: 2 },
    // TxDone: ss->stats tx counters, 1 written [fact] myri10ge.c@1.4.4 L1341-1406 (tx.done, tx.info and the skbs: cache.tx_lines); per-CPU completion queue, 1 stay [fact] dev_kfree_skb_irq; code 8-12 [estimate]: code.rs
    Row { written: [(Held::Stats, 1), (Held::Irq, 0)], steps: [Step::at(0), Step::at(0)], dma: 0, stay: 1 },
    // NapiPoll: napi_struct 1 [estimate] 40 B, 72 B with CONFIG_NETPOLL, include/linux/netdevice.h@2.6.26, its poll_list and state written by net_rx_action and netif_rx_complete (in place of cache.napi_lines, 0 where this table is on); rx_done header 2 [estimate] myri10ge.c@1.4.4 L159-166; lro_flush_all reads 8 net_lro_desc, 12 stay [estimate] include/linux/inet_lro.h; code 15-25 [estimate]: code.rs
    // NapiPoll steps: net_rx_action reads the napi_struct (its address from this CPU's softnet_data, a staying line) and calls n->poll; myri10ge_poll finds the slice by container_of (no load) and myri10ge_clean_rx_done reads rx_done's idx and cnt: their addresses are known before the napi line arrives and no locked instruction stands between (netpoll_poll_lock locks only while netpoll runs), so the 3 lines are in flight together [estimate: net/core/dev.c of 2.6.26, the call predicted]
    Row { written: [(Held::Poll, 3), (Held::Irq, 0)], steps: [Step::at(0), Step::at(0)], dma: 0, stay: 12 },
    // RxFrame: rx_small/rx_big 1 [fact] 64 B myri10ge.c@1.4.4 L127-139, info 1/2 -> 1, the buffer's struct page 1 (get_page/put_page) [estimate], stats rx counters 1 [fact] L168-175; ptype lists 2 stay [estimate]; the slab's per-CPU lines of skbuff_head_cache and of the data's kmalloc cache, taken by netdev_alloc_skb and given back by the skb's free after the handler on this core, 2 stay [estimate, 2-4]; code 30-45 [estimate]: code.rs (mcp_slot and header: cache.rx_dma_lines; skb: cache.kernel_private_lines)
    // RxFrame steps: myri10ge_rx_done reads rx->cnt and rx->info (the rx_small/rx_big line), then rx->info[idx] at the index it gives, then the struct page that entry points to (get_page): a chain of 3; ss->stats' address is known from the start, in flight with the first [estimate: myri10ge.c of 2.6.26 myri10ge_rx_done]
    Row { written: [(Held::Rx, 3), (Held::Stats, 1)], steps: [Step::chain(0), Step::at(0)], dma: 0, stay: 4 },
    // OmxRecv: iface->counters[] hot counters in bytes 0-111, 1 written [fact] common/omx_io.h L869ff, omx_counter_inc omx_iface.h L115-118, on by default configure.ac L281-288; the endpoint's refcount (line 0 of the 2,296 B struct omx_endpoint, offset 48), 1 written [fact] omx_endpoint_acquire_by_iface_index, driver/linux/omx_dev.c L336-365 (kref_get; kref_put at the end of the handler); iface and endpoints[] (under RCU: read) 2 stay [fact] omx_recv.c L997-1087; code: code.rs (the endpoint's lines 1-2, queue offsets, event_lock, waiters: cache.endpoint_lines)
    // OmxRecv steps: the handler takes the endpoint first (kref_get, a locked increment of its refcount line) and counts the frame in iface->counters[] at its end (omx_recv_tiny and the others, driver/linux/omx_recv.c of 1.0.901): the counters' line after the locked instruction, step 1 [fact: the order; SDM Vol. 3A 8.2.2]
    Row { written: [(Held::Iface, 1), (Held::EpRef, 1)], steps: [Step::at(1), Step::at(0)], dma: 0, stay: 2 },
    // OmxSend: omx_queue_xmit increments iface->counters[SEND_<type>] for every frame it sends, the same line as omx_recv's, 1 written [fact] driver/linux/omx_misc.h L43-45; the frame's head (Ethernet and Open-MX headers) written into the skb's data, a kmalloc buffer the per-CPU slab hands out again send after send, whose line the NIC's transmit DMA read out of the cache last time: 1 DMA line, a miss if that read left the line Invalid, a hit with cache.tx_dma_read_shares (Shared: the write is an upgrade, not a line brought in; PathLines::sharing_tx_reads) [estimate]; myri10ge_xmit writes the descriptors into tx->req_list, the host's shadow of the send ring whose first entries every send rewrites (myri10ge.c of 2.6.26 L145, L2699 req = tx->req_list), 1 stay [fact]; the rest of the send path: cache.tx_lines, cache.kernel_private_lines, host.driver_tx
    Row { written: [(Held::Iface, 1), (Held::Irq, 0)], steps: [Step::at(0), Step::at(0)], dma: 1, stay: 1 },
    // SendIoctl: the endpoint's line 0, whose status omx_handle_ioctl_with_endpoint reads (offset 40, beside the refcount at 48 that omx_recv's kref writes), 1 read, not written [fact] driver/linux/omx_dev.c, omx_endpoint.h (0.9.2 and 1.0.901): PathLines::send_ioctl; per-CPU and read-mostly lines, 10 stay [estimate, range 7-14]: the system call's entry and fget_light (thread_info, files_struct's fd array, struct file: 3, fs/ioctl.c, fs/file_table.c of 2.6.26), the command copied in from the caller's stack (copy_from_user, 1: the library wrote it just before), the slab's per-CPU array_cache of skbuff_head_cache and of the kmalloc cache of the data (2, alloc_skb in omx_new_skb), the frame's head written (1: Ethernet and Open-MX headers), the peer table entry omx_set_target_peer reads (1), the iface and net_device lines (eth_ifp, dev_addr: 2); code 40-60 [estimate]: code.rs (the skb's struct: cache.kernel_private_lines; the send ring: cache.tx_lines)
    Row { written: [(Held::Irq, 0), (Held::Irq, 0)], steps: [Step::at(0), Step::at(0)], dma: 0, stay: 10 },
    // Restock: myri10ge_alloc_rx_pages gives the buffer just taken back to the NIC (myri10ge.c of 2.6.26 L1199-1256; nic.fill_thresh 0: at every poll): the refilled entry's rx->info (32 B, myri10ge_rx_buffer_state) and rx->shadow (8 B, mcp_kreq_ether_recv) written, 1 line [estimate: 1/2 + 1/8 line, rounded up]; the current page's struct page, get_page(rx->page) for every buffer carved from it (L1213), 1 written [fact]; a new page from alloc_pages (L1217) every 2 buffers at MTU 9000, the presets' (small_bytes 1518 + MXGEFW_PAD, SKB_DATA_ALIGN: 1,536 B), every 32 at 1500 (128 B): the per-CPU free list's line and the new page's struct page, which the put_page of the skb that held it freed onto this CPU's hot list, 1 stay a frame [estimate: 2 lines a page, range 1/16 to 1]; the descriptors copied to the NIC 8 at a time by PIO (myri10ge_submit_8rx): uncached, no L2 request; code 10-15 [estimate]: code.rs
    // Restock steps: get_page(rx->page) (L1213, a locked increment of the struct page's count) comes before the stores to rx->info[idx] and rx->shadow[idx], which cannot pass it: a chain of 2 [estimate: SDM Vol. 3A 8.2.2]
    Row { written: [(Held::Fill, 2), (Held::Irq, 0)], steps: [Step::chain(0), Step::at(0)], dma: 0, stay: 1 },
];

/// A path of the library (libopen-mx 1.0.901) with a row in
/// [`LIB_FOOTPRINT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LibPath {
    /// `omx_isend` → `omx__isend_req` → `omx__submit_isend_*`, per message
    /// sent (before its send system calls).
    Send = 0,
    /// `omx__progress` → `omx__process_event` → `omx__process_recv_*`, per
    /// event consumed.
    Recv = 1,
    /// `omx__process_event`, `OMX_EVT_SEND_MEDIUMSQ_FRAG_DONE`, per event
    /// consumed (with `host.tx_softirq`).
    FragDone = 2,
}

/// The library's own lines per run of each [`LibPath`]: process-private
/// state (a hit while the process keeps its core), touched with the
/// process's other private lines (`cache.user_private_lines`, which then
/// holds the MPI layer's alone). Sizes \[fact\] computed from the 1.0.901
/// headers on x86_64 (docs/paths-2009.md, "Structure sizes"); which lines
/// a run touches \[estimate\].
pub const LIB_FOOTPRINT: [u32; 3] = [
    // Send: the request (union omx_request, 360 B: 6 lines, written), the partner (struct omx__partner, 200 B: 4 lines, seqnums written), the library endpoint's queues and counters (struct omx_endpoint, 648 B: 2-3 of its 11 lines, 3 [estimate: the range's top, lines are whole]), the ioctl's parameter block built on the stack (1): 14; code 45-55 lines [estimate: omx__isend_req 1,274 B + omx__alloc_setup_isend_tiny 888 B + omx_isend 278 B, gcc 12 -O2]: code.rs
    6 + 4 + 3 + 1,
    // Recv: the partner (4: seqnums, the early and partial queues), the request it matches or allocates (6), the library endpoint (3 [estimate, 2-3]): 13 (the event slot: cache.event_lines; the endpoint's shared descriptor: cache.endpoint_lines; the data: the copies); code 45-70 lines [estimate: omx__progress 886 + omx__process_event 499 + omx__process_recv 1,487 + omx__process_recv_* 331-1,075 + omx__recv_complete 363 B, gcc 12]: code.rs
    4 + 6 + 3,
    // FragDone: the send queue's map entry released (omx__endpoint_sendq_map_user, 1) and the request's frags_pending_nr and queue (1-2 lines, 2 [estimate: the range's top, lines are whole]): 3 [fact: libopen-mx/omx_lib.c L90-112 of 1.0.901; lines estimate] (the event slot: cache.event_lines; the endpoint: cache.endpoint_lines); code: code.rs
    1 + 2,
];

/// The objects the paths' written lines live in, for one host.
#[derive(Clone, Debug)]
pub struct PathLines {
    /// Whether the paths' lines are touched (`cache.path_footprints`).
    on: bool,
    /// Whether the lines the NIC's transmit DMA read stay in the cache,
    /// Shared (`cache.tx_dma_read_shares`; [`PathLines::sharing_tx_reads`]).
    tx_read_shares: bool,
    /// Per receive queue: its slice's objects, indexed by [`Held`].
    slices: Vec<[Obj; SLICE_OBJS]>,
    /// The Open-MX interface's counters.
    iface: Obj,
    /// Per endpoint, the line of its refcount: as many as the highest
    /// endpoint a frame reached (at most `wire::ENDPOINTS`).
    ep_refs: Vec<Obj>,
    /// Per endpoint, the send system call's copy of that line (it reads
    /// it: [`PathLines::send_ioctl`]), as many as `ep_refs`.
    ep_reads: Vec<ReadCopy>,
}

impl PathLines {
    /// The objects of a host with `queues` receive queues; `on`: whether
    /// the paths touch them.
    pub fn new(queues: usize, on: bool) -> Self {
        PathLines {
            on,
            tx_read_shares: false,
            slices: vec![[Obj::new(ObjClass::Driver); SLICE_OBJS]; if on { queues.max(1) } else { 0 }],
            iface: Obj::new(ObjClass::Driver),
            ep_refs: Vec::new(),
            ep_reads: Vec::new(),
        }
    }

    /// One run of `path` for receive queue `q` (the driver's paths) or
    /// endpoint `q` (Open-MX's) on core `at`: its written lines accessed (a
    /// transfer from the die that wrote them last is charged); its
    /// DMA-written lines counted as misses that bring lines into the die's
    /// L2, and its per-CPU and read-mostly lines as hits (they stay in the
    /// core's caches, which hold them between runs: a few lines against a
    /// 4 MB L2 \[estimate]). Returns the stall. Always inlined: the path is
    /// a constant at each call, and its row folds into the accesses it
    /// makes.
    #[inline(always)]
    pub fn run(
        &mut self,
        cc: &CacheCosts,
        topo: &Topology,
        cache: &mut CacheStats,
        (path, q): (Path, usize),
        at: Cpu,
    ) -> Duration {
        if !self.on {
            return Duration::ZERO;
        }
        let mut walk = Walk::begin(cache, at, ObjClass::Driver, Side::Kernel);
        self.parts().walk(&mut walk, cc, topo, cache, path, q);
        walk.end(cache)
    }

    /// Runs of each `(path, q)` of `runs` in turn on core `at`, as
    /// [`PathLines::run`] runs each, in one [`Walk`]: the paths a stage
    /// runs back to back (the hard IRQ and the poll it schedules;
    /// `myri10ge_rx_done`, the restock of its buffer and `omx_recv`) update
    /// the die's fill clock and the counters once.
    #[inline(always)]
    pub fn run_all<const N: usize>(
        &mut self,
        cc: &CacheCosts,
        topo: &Topology,
        cache: &mut CacheStats,
        runs: [(Path, usize); N],
        at: Cpu,
    ) -> Duration {
        if !self.on {
            return Duration::ZERO;
        }
        let mut walk = Walk::begin(cache, at, ObjClass::Driver, Side::Kernel);
        let mut parts = self.parts();
        // The first four runs one by one, each at a constant index: LLVM
        // keeps a loop over the runs as a loop, which reads each path's
        // row at run time; written out, every row folds into its accesses.
        if let Some(&(path, q)) = runs.first() {
            parts.walk(&mut walk, cc, topo, cache, path, q);
        }
        if let Some(&(path, q)) = runs.get(1) {
            parts.walk(&mut walk, cc, topo, cache, path, q);
        }
        if let Some(&(path, q)) = runs.get(2) {
            parts.walk(&mut walk, cc, topo, cache, path, q);
        }
        if let Some(&(path, q)) = runs.get(3) {
            parts.walk(&mut walk, cc, topo, cache, path, q);
        }
        for &(path, q) in runs.iter().skip(4) {
            parts.walk(&mut walk, cc, topo, cache, path, q);
        }
        walk.end(cache)
    }

    /// One frame handed to the driver on core `at` ([`Path::OmxSend`], as
    /// [`PathLines::run`] runs it), with `payload` more lines the NIC's
    /// transmit DMA read out of the cache: the data a tiny or small send
    /// copies into the skb behind its head (`omx_ioctl_send_small`'s
    /// `copy_from_user`), rewritten by the next send into the same slab
    /// buffer, a miss as the head's line is (the row's DMA line).
    #[inline(always)]
    pub fn send(
        &mut self,
        cc: &CacheCosts,
        topo: &Topology,
        cache: &mut CacheStats,
        payload: u32,
        at: Cpu,
    ) -> Duration {
        if !self.on {
            return Duration::ZERO;
        }
        let mut walk = Walk::begin(cache, at, ObjClass::Driver, Side::Kernel);
        self.parts().walk(&mut walk, cc, topo, cache, Path::OmxSend, 0);
        self.payload(&mut walk, payload);
        walk.end(cache)
    }

    /// One send system call for endpoint `ep` and the frame it hands to
    /// the driver, on core `at`: [`PathLines::send_ioctl`] then
    /// [`PathLines::send`], in one [`Walk`] (the same counts, fill clock
    /// and stall as the two one after the other).
    #[inline(always)]
    pub fn send_call(
        &mut self,
        cc: &CacheCosts,
        topo: &Topology,
        cache: &mut CacheStats,
        ep: usize,
        payload: u32,
        at: Cpu,
    ) -> Duration {
        if !self.on {
            return Duration::ZERO;
        }
        let mut walk = Walk::begin(cache, at, ObjClass::Driver, Side::Kernel);
        let ioctl = &FOOTPRINT[Path::SendIoctl as usize];
        walk.count(ioctl.stay as u64, 0);
        let line = *self.parts().obj(Held::EpRef, ep);
        walk.read(cache, &line, self.ep_read(ep), 1);
        self.parts().walk(&mut walk, cc, topo, cache, Path::OmxSend, 0);
        self.payload(&mut walk, payload);
        walk.end(cache)
    }

    /// A tiny or small send's `payload` data lines in `walk`: read from the
    /// caller's buffer (`copy_from_user` in `omx_ioctl_send_tiny` and
    /// `omx_ioctl_send_small`, driver/linux/omx_send.c of 1.0.901: the
    /// caller wrote them just before, hits) and written into the skb
    /// behind its head, the lines the NIC's transmit DMA read at the last
    /// send: a miss if that read left them Invalid, a hit if it left them
    /// Shared ([`PathLines::sharing_tx_reads`]).
    #[inline(always)]
    fn payload(&self, walk: &mut Walk, payload: u32) {
        let n = payload as u64;
        walk.count(2 * n, if self.tx_read_shares { 0 } else { n });
    }

    /// These paths with the lines the NIC's transmit DMA read left Shared
    /// (`shares`) or Invalid in the cache that held them Modified: the
    /// head and a small send's data the driver writes again into the same
    /// slab buffer, a medium fragment's send-queue slot (`sendq_copy`).
    /// Shared, the next write is an upgrade, an L2 request that brings no
    /// line in (a hit to `PAPI_L2_TCM` = `L2_LINES_IN`); Invalid, a miss
    /// \[estimate: no source for the 5000P's snoop; Table II's S$ kernel
    /// rate, the send path's alone, falls from 0 B to 128 B, which asks
    /// for Shared: docs/paths-2009.md, "Table II, diagnosed"].
    pub fn sharing_tx_reads(mut self, shares: bool) -> Self {
        self.tx_read_shares = shares;
        self
    }

    /// Whether the lines the NIC's transmit DMA read stay Shared
    /// (`cache.tx_dma_read_shares`).
    #[inline(always)]
    pub fn tx_read_shares(&self) -> bool {
        self.tx_read_shares
    }

    /// Whether the paths touch their lines (`cache.path_footprints`).
    #[inline(always)]
    pub fn on(&self) -> bool {
        self.on
    }

    /// The library's own lines per run of `path` ([`LIB_FOOTPRINT`]), 0
    /// with the footprints off.
    #[inline(always)]
    pub fn lib_lines(&self, path: LibPath) -> u64 {
        if self.on {
            LIB_FOOTPRINT[path as usize] as u64
        } else {
            0
        }
    }

    /// The objects, borrowed apart for a walk ([`Parts`]).
    #[inline(always)]
    fn parts(&mut self) -> Parts<'_> {
        Parts {
            slices: &mut self.slices,
            iface: &mut self.iface,
            ep_refs: &mut self.ep_refs,
            tx_read_shares: self.tx_read_shares,
        }
    }

    /// The send system call's copy of endpoint `ep`'s line 0.
    #[inline(always)]
    fn ep_read(&mut self, ep: usize) -> &mut ReadCopy {
        if ep >= self.ep_reads.len() {
            self.ep_reads.resize(ep + 1, ReadCopy::new(ObjClass::Driver));
        }
        &mut self.ep_reads[ep]
    }

    /// One send system call for endpoint `ep` on core `at`
    /// ([`Path::SendIoctl`]): its per-CPU and read-mostly lines counted as
    /// hits, and its read of the endpoint's line 0
    /// (`omx_handle_ioctl_with_endpoint` checks its `status`, which shares
    /// the line with the `refcount` `omx_recv` writes): read, not taken,
    /// and counted only (`CacheCosts::read`: its time is in the send's
    /// fitted cost). The row has no written lines, so this does what
    /// [`PathLines::run`] would, without its accesses of none.
    #[inline]
    pub fn send_ioctl(&mut self, cc: &CacheCosts, cache: &mut CacheStats, ep: usize, at: Cpu) {
        if !self.on {
            return;
        }
        let row = &FOOTPRINT[Path::SendIoctl as usize];
        cache.count(at.core, ObjClass::Driver, Side::Kernel, row.stay as u64, 0);
        let line = *self.parts().obj(Held::EpRef, ep);
        cc.read(cache, &line, self.ep_read(ep), at, Side::Kernel, 1);
    }
}

/// [`PathLines`]' objects borrowed apart for the runs of one walk: the
/// slices as a slice, whose length stays in a register while the walk
/// writes objects (through the `Vec` it is reloaded after each write, and
/// each slice object's look-up made again).
struct Parts<'a> {
    slices: &'a mut [[Obj; SLICE_OBJS]],
    iface: &'a mut Obj,
    ep_refs: &'a mut Vec<Obj>,
    /// [`PathLines::tx_read_shares`].
    tx_read_shares: bool,
}

impl Parts<'_> {
    /// `path`'s row for receive queue or endpoint `q`, in `walk`: the
    /// written lines of its objects, then its DMA-written and staying lines.
    #[inline(always)]
    fn walk(&mut self, walk: &mut Walk, cc: &CacheCosts, topo: &Topology, cache: &CacheStats, path: Path, q: usize) {
        let row = &FOOTPRINT[path as usize];
        let ([(a, na), (b, nb)], [sa, sb]) = (row.written, row.steps);
        let la = if na > 0 { walk.take(cc, topo, cache, self.obj(a, q), na) } else { Duration::ZERO };
        let lb = if nb > 0 { walk.take(cc, topo, cache, self.obj(b, q), nb) } else { Duration::ZERO };
        walk.settle_two(cc, (la, na, sa), (lb, nb, sb));
        let (lines, mut dma) = (row.dma as u64 + row.stay as u64, row.dma as u64);
        if path == Path::OmxSend && self.tx_read_shares {
            // The head's line the NIC's transmit DMA read: Shared, a hit.
            dma = 0;
        }
        walk.count(lines, dma);
    }

    /// The object of `held` for receive queue or endpoint `q`.
    #[inline(always)]
    fn obj(&mut self, held: Held, q: usize) -> &mut Obj {
        match held {
            Held::Iface => &mut *self.iface,
            Held::EpRef => {
                if q >= self.ep_refs.len() {
                    self.ep_refs.resize(q + 1, Obj::new(ObjClass::Driver));
                }
                &mut self.ep_refs[q]
            }
            _ => {
                let slice = q.min(self.slices.len() - 1);
                &mut self.slices[slice][held as usize]
            }
        }
    }
}

/// Lines per run of `path` that another core's next run needs (what a
/// round-robin interrupt moves).
pub fn written_lines(path: Path) -> u32 {
    FOOTPRINT[path as usize].written.iter().map(|&(_, n)| n).sum()
}

#[cfg(test)]
#[path = "footprint_tests.rs"]
mod tests;
