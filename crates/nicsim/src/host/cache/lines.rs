//! The modelled objects of a process ([`ProcLines`]: its private state,
//! its buffers, its receive queue's slots) and of a host ([`HostLines`]:
//! each core's kernel state, and the paths' written lines of
//! `footprint`), with the calls the stages make on them.

use super::*;

/// Receive queue slots per endpoint: small messages and medium fragments
/// are copied into the next slot, in turn. [fact: `OMX_RECVQ_ENTRY_NR` =
/// 1024 slots of 4 KB, Open-MX `common/omx_io.h`]
pub const RECVQ_SLOTS: usize = 1024;

/// A process's own modelled objects.
#[derive(Clone, Debug)]
pub struct ProcLines {
    /// Library and MPI state (`cache.user_private_lines` a message).
    pub private: Obj,
    /// The application's buffers.
    pub app: Obj,
    /// The receive queue's slots, shared with the driver: as many as have
    /// been used, up to [`RECVQ_SLOTS`]. A slot not yet used is in memory,
    /// as every slot is at the start, so a process that receives few
    /// messages keeps few (16 KiB for all of them, at 8,192 ranks 128 MiB).
    pub recvq: Vec<Obj>,
    /// Slots the driver filled, and the library emptied, so far.
    pub recvq_written: u64,
    pub recvq_read: u64,
}

impl Default for ProcLines {
    fn default() -> Self {
        ProcLines {
            private: Obj::new(ObjClass::Private),
            app: Obj::new(ObjClass::AppBuf),
            recvq: Vec::new(),
            recvq_written: 0,
            recvq_read: 0,
        }
    }
}

impl ProcLines {
    /// The slot the driver fills next (and moves on).
    pub fn slot_to_write(&mut self) -> &mut Obj {
        let i = (self.recvq_written % RECVQ_SLOTS as u64) as usize;
        self.recvq_written += 1;
        slot(&mut self.recvq, i)
    }

    /// The slot the library empties next (and moves on), with the buffer
    /// it copies into.
    pub fn slot_to_read(&mut self) -> (&mut Obj, &mut Obj) {
        let i = (self.recvq_read % RECVQ_SLOTS as u64) as usize;
        self.recvq_read += 1;
        (slot(&mut self.recvq, i), &mut self.app)
    }
}

/// Slot `i` of a receive queue whose slots `0..i` have been used: the next
/// one is made, in memory, the first time either side reaches it (each
/// side moves one slot at a time, so `i` is at most the slots made).
#[inline(always)]
fn slot(recvq: &mut Vec<Obj>, i: usize) -> &mut Obj {
    if i == recvq.len() {
        recvq.push(Obj::new(ObjClass::Recvq));
    }
    &mut recvq[i]
}

/// A host's private objects per core (the kernel's skbs and driver state,
/// from the per-CPU slab), and the driver's and Open-MX's state its paths
/// write (`footprint`). A process's are in its own state (`ProcLines`,
/// kept by the simulator beside the process's other objects).
#[derive(Clone, Debug)]
pub struct HostLines {
    pub kernel: Vec<Obj>,
    pub(super) paths: footprint::PathLines,
    /// The paths' code in each core's L1I and each die's L2 (`code`).
    pub(super) code: code::CodeLines,
}

impl HostLines {
    /// The objects of a host of `cores` cores and `queues` receive queues;
    /// `footprints`: whether its paths touch their footprint's lines
    /// (`cache.path_footprints`).
    pub fn new(cores: usize, queues: usize, footprints: bool) -> Self {
        HostLines {
            kernel: vec![Obj::new(ObjClass::Private); cores],
            paths: footprint::PathLines::new(queues, footprints),
            code: code::CodeLines::off(),
        }
    }

    /// These objects with the paths' code fetched through `code` (each
    /// core's L1I: `code::CodeLines`).
    pub fn with_code(mut self, code: code::CodeLines) -> Self {
        self.code = code;
        self
    }

    /// One run of the code of `seg` on core `at` from `side`
    /// (`code::CodeLines::run`: counted, not charged).
    #[inline(always)]
    pub fn code(&mut self, cache: &mut CacheStats, seg: code::Seg, at: Cpu, side: Side) {
        let _ = self.code.run(cache, seg, at, side);
    }

    /// One run of `path` for receive queue (or endpoint) `q` on core `at`
    /// (`footprint::PathLines::run`); returns the stall.
    #[inline(always)]
    pub fn path(
        &mut self,
        cc: &CacheCosts,
        topo: &Topology,
        cache: &mut CacheStats,
        run: (footprint::Path, usize),
        at: Cpu,
    ) -> Duration {
        let _ = self.code.run(cache, code::OF_PATH[run.0 as usize], at, Side::Kernel);
        self.paths.run(cc, topo, cache, run, at)
    }

    /// Runs of each `(path, q)` of `runs`, back to back on core `at`
    /// (`footprint::PathLines::run_all`); returns the stall.
    #[inline(always)]
    pub fn paths<const N: usize>(
        &mut self,
        cc: &CacheCosts,
        topo: &Topology,
        cache: &mut CacheStats,
        runs: [(footprint::Path, usize); N],
        at: Cpu,
    ) -> Duration {
        if self.code.on() {
            for &(path, _) in &runs {
                let _ = self.code.run(cache, code::OF_PATH[path as usize], at, Side::Kernel);
            }
        }
        self.paths.run_all(cc, topo, cache, runs, at)
    }

    /// The library's send system call on core `at` for endpoint `ep` and
    /// the frame it hands to the driver with `payload` lines of data in
    /// its skb: `footprint::PathLines::send_ioctl` then `send`, made in
    /// one walk (`footprint::PathLines::send_call`); returns the stall.
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
        if self.code.on() {
            let _ = self.code.run(cache, code::Seg::SendIoctl, at, Side::Kernel);
            let _ = self.code.run(cache, code::Seg::OmxXmit, at, Side::Kernel);
        }
        self.paths.send_call(cc, topo, cache, ep, payload, at)
    }

    /// These objects with the lines the NIC's transmit DMA read left
    /// Shared (`shares`, `cache.tx_dma_read_shares`) or Invalid
    /// (`footprint::PathLines::sharing_tx_reads`).
    pub fn sharing_tx_reads(mut self, shares: bool) -> Self {
        self.paths = self.paths.sharing_tx_reads(shares);
        self
    }

    /// Whether the lines the NIC's transmit DMA read stay Shared in the
    /// cache (`cache.tx_dma_read_shares`).
    #[inline(always)]
    pub fn tx_read_shares(&self) -> bool {
        self.paths.tx_read_shares()
    }

    /// Whether the paths touch their footprints' lines
    /// (`cache.path_footprints`).
    #[inline(always)]
    pub fn footprints(&self) -> bool {
        self.paths.on()
    }

    /// The library's own lines per run of `path`
    /// (`footprint::LIB_FOOTPRINT`; 0 with the footprints off).
    #[inline(always)]
    pub fn lib_lines(&self, path: footprint::LibPath) -> u64 {
        self.paths.lib_lines(path)
    }
}
