//! The scenario's costs and switches as the hot path reads them
//! ([`Costs`]): the world's stages and the library ([`crate::library`])
//! read the same copy. This module owns the type only; `crate::sim`'s
//! build fills it from a validated [`crate::Scenario`].

use crate::config::{CacheTimes, HostTimes, LibraryTimes, NicTimes, WaitMode};
use crate::host::{CacheCosts, Sleep};
use crate::proto::Params;
use crate::time::Duration;
use crate::wire::MarkedClasses;

/// The scenario's costs and switches, gathered for the hot path: the
/// preset's tables as charged (converted once, at validation, each by the
/// unit its key declares: `crate::config::Times`), copied whole, and the
/// scenario's switches.
pub(crate) struct Costs {
    /// `[host]`: the kernel's, the driver's and the copy engine's costs.
    pub host: HostTimes,
    /// `[library]`: the library's and the MPI layer's costs (`mpi_send`
    /// and `mpi_recv` zero when the scenario runs no MPI layer).
    pub lib: LibraryTimes,
    /// `[nic]`, for the doorbell the send path rings (the NIC's own work is
    /// priced by `crate::nic::Nic`, built from the same table).
    pub nic: NicTimes,
    /// `[cache]`, for the lines each stage touches (the transfers are
    /// priced by `cc`, built from the same table).
    pub cache: CacheTimes,
    /// The cache model's prices of a line's transfer between two places
    /// of the topology (`crate::host::CacheCosts`, from `[cache]`).
    pub cc: CacheCosts,
    /// When idle dies sleep (never with a cycle soaker) and what waking
    /// one costs.
    pub sleep: Sleep,
    /// The library protocol's acks, resends and send window.
    pub proto: Params,
    pub napi_budget: u16,
    pub tx_done_irq: bool,
    /// A NET_TX softirq frees the reaped skbs and runs Open-MX's
    /// destructors (`host.tx_softirq`, `crate::kernel::net_tx`).
    pub tx_softirq: bool,
    /// A duplicate or stale pull reply is dropped before its copy
    /// (`host.pull_dup_check`, `crate::kernel::handler_price`).
    pub pull_dup_check: bool,
    pub wait: WaitMode,
    pub layout: crate::wire::Layout,
    pub rndv_threshold: u64,
    pub marked: MarkedClasses,
    pub misorder: u8,
    pub defer_hard_irqs: u32,
    pub gro_flush: Duration,
    pub irq_suspend: Duration,
    pub busy_poll: bool,
    /// The entries one busy poll takes (`host.busy_poll_budget`, the
    /// socket's `SO_BUSY_POLL_BUDGET`; `BUSY_POLL_BUDGET` when not set).
    pub busy_poll_budget: u16,
    /// Threaded NAPI host-wide (`host.napi_threaded`); a queue with NAPI
    /// settings of its own has its own (`crate::nic::RxQueue::threaded`).
    pub napi_threaded: bool,
    pub ioat: bool,
    pub dca: bool,
    /// Native MX (OS-bypass): the NIC delivers into user memory, serves
    /// pulls itself, and never interrupts a polling library.
    pub native: bool,
    /// Of `cache.rx_dma_lines`, the lines the poller does not read per
    /// frame with `nic.rx_delivery = "shifted"` (0 with the ring):
    /// `sim::build::rx_delivery_plan`.
    pub rx_lines_saved: u32,
    /// What a pull asks for again (`library.pull_rerequest`).
    pub pull_rerequest: crate::config::PullRerequest,
    /// Which of Open MPI's MX paths carries an MPI message
    /// (`library.mpi_path`; the "btl" path's eager limit is
    /// `lib.btl_eager_limit`).
    pub mpi_path: crate::config::MpiPath,
}
